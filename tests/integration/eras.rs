//! Both eras behind one API, over stdio, against the reference server in each of its modes
//! (`ringmcp serve --era legacy|silent|modern|dual`): the `server/discover` probe and its
//! fallback, the per-server era cache, 2026-07-28 `input_required` rounds, and the era the
//! gateway speaks to its backends for a legacy client.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ringmcp::host::{ClientHandler, Host, ServerSpec};
use ringmcp::jsonrpc::ErrorObject;
use ringmcp::protocol::{ClientFeatures, Era, ProtocolVersion, RequestError};
use serde_json::{Value, json};

use crate::util::{host, reference};

fn era(mode: &str) -> ServerSpec {
    reference(&format!("ref-{mode}"), &["--era", mode, "--page-size", "2"])
}

/// The same calls give the same answers whichever revision the server speaks.
#[test]
fn modern_and_legacy_servers_behind_the_same_api() {
    let host = host();
    let cases = [
        (era("legacy"), ProtocolVersion::V2025_11_25),
        (era("modern"), ProtocolVersion::V2026_07_28),
        // A dual-era server: the probe finds the stateless revision...
        (era("dual"), ProtocolVersion::V2026_07_28),
        // ...unless the host is told to skip it.
        (era("dual").era(Era::Legacy), ProtocolVersion::V2025_11_25),
    ];
    let mut answers: Vec<Value> = Vec::new();
    for (spec, version) in cases {
        let client = host.spawn_blocking(spec).unwrap();
        assert_eq!(client.protocol_version(), version);
        // Every page is followed (--page-size 2: three pages of tools).
        let tools = client.blocking().list_tools().unwrap();
        assert!(tools.len() >= 5, "{version}: {tools:?}");
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names.contains(&"confirm"), version.is_modern(), "{names:?}");
        let echo = client.blocking().call_tool("echo", json!({"text": "héllo"})).unwrap();
        let add = client.blocking().call_tool("add", json!({"a": 2, "b": 40})).unwrap();
        let resources = client.blocking().list_resources().unwrap();
        let read = client.blocking().read_resource(&resources[0].uri).unwrap();
        let prompt = client.blocking().get_prompt("greet", json!({"name": "Ada"})).unwrap();
        let completion = client
            .blocking()
            .complete(json!({"type": "ref/prompt", "name": "greet"}), "name", "a", None)
            .unwrap();
        client.blocking().ping().unwrap();
        client.blocking().set_log_level("info").unwrap();
        let unknown = client.blocking().call_tool("nope", json!({})).unwrap_err();
        assert!(unknown.to_string().contains("Unknown tool"), "{unknown}");
        answers.push(json!({
            "echo": echo.text(),
            "add": [add.text(), add.structured_content],
            "read": format!("{:?}", read.contents),
            "prompt": format!("{:?}", prompt.messages),
            "completion": completion,
        }));
        let stats = client.blocking().stats().unwrap().session;
        assert_eq!(stats.violations, 0, "{version}");
        client.blocking().shutdown();
    }
    assert!(answers.windows(2).all(|w| w[0] == w[1]), "{answers:#?}");
}

/// A legacy server that ignores unknown requests: the probe times out and `initialize`
/// follows; the host remembers the era, so the next start of the same server skips the probe.
#[test]
fn a_silent_legacy_server_is_found_by_the_probe_timeout_once() {
    let host = Host::builder()
        .request_timeout(Duration::from_secs(30))
        .probe_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let started = Instant::now();
    let client = host.spawn_blocking(era("silent")).unwrap();
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    let stats = client.blocking().stats().unwrap().session;
    assert_eq!((stats.requests, stats.timeouts), (2, 1), "{stats:?}");
    assert_eq!(client.blocking().call_tool("echo", json!({"text": "x"})).unwrap().text(), "x");
    client.blocking().shutdown();
    // Cached: no probe this time.
    let client = host.spawn_blocking(era("silent")).unwrap();
    assert_eq!(client.blocking().stats().unwrap().session.requests, 1);
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
}

/// With the default probe timeout (5 s, counted from spawn), a silent legacy server is found
/// too: the handshake waits for the probe's deadline, no longer than the request timeout.
#[test]
fn the_default_probe_timeout_is_five_seconds() {
    let host = Host::builder().request_timeout(Duration::from_secs(60)).build().unwrap();
    let started = Instant::now();
    let client = host.spawn_blocking(era("silent")).unwrap();
    let took = started.elapsed();
    assert!(took >= Duration::from_secs(5), "gave up on the probe after {took:?}");
    assert!(took < Duration::from_secs(60), "waited for the request timeout: {took:?}");
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    let stats = client.blocking().stats().unwrap().session;
    assert_eq!((stats.requests, stats.timeouts), (2, 1), "{stats:?}");
}

#[test]
fn a_modern_only_server_refuses_a_legacy_only_host_clearly() {
    let host = Host::builder().era(Era::Legacy).build().unwrap();
    let err = host.spawn_blocking(era("modern")).unwrap_err();
    assert!(err.to_string().contains("speaks only 2026-07-28"), "{err}");
    // And a legacy-only server refuses a modern-only host.
    let host = Host::builder().era(Era::Modern).build().unwrap();
    let err = host.spawn_blocking(era("legacy")).unwrap_err();
    assert!(err.to_string().contains("not initialized"), "{err}");
}

/// Answers every elicitation with the given action (and the schema's defaults).
struct Answers(&'static str);

impl ClientHandler for Answers {
    fn features(&self) -> ClientFeatures {
        ClientFeatures { elicitation_form: true, ..ClientFeatures::default() }
    }

    fn elicit(&self, server: &str, params: Value) -> Result<Value, ErrorObject> {
        assert!(server.starts_with("ref-"), "{server}");
        assert!(params["message"].as_str().unwrap().starts_with("Confirm"), "{params}");
        Ok(json!({"action": self.0, "content": {"sure": true}}))
    }
}

/// 2026-07-28 MRTR over stdio: the server's `input_required` result reaches the host's
/// handler, the retry carries the answer and the `requestState` intact, and the caller gets
/// the final result only.
#[test]
fn input_required_rounds_go_through_the_handler() {
    let host = Host::builder().handler(Arc::new(Answers("accept"))).build().unwrap();
    let client = host.spawn_blocking(era("modern")).unwrap();
    let r = client.blocking().call_tool("confirm", json!({"action": "deploy"})).unwrap();
    assert_eq!(r.text(), "deploy: accept (requestState intact)");
    assert!(!r.is_error);
    // Concurrent rounds keep their own state.
    let calls: Vec<_> =
        (0..8).map(|i| client.call_tool("confirm", json!({"action": format!("a{i}")}))).collect();
    for (i, call) in calls.into_iter().enumerate() {
        let r = futures::executor::block_on(call).unwrap();
        assert_eq!(r.text(), format!("a{i}: accept (requestState intact)"));
    }
    let stats = client.blocking().stats().unwrap().session;
    assert_eq!(stats.server_requests, 9, "{stats:?}");

    // Without a handler the client declares no elicitation: the call fails clearly, nothing
    // is retried, and the server carries on.
    let host = Host::builder().build().unwrap();
    let client = host.spawn_blocking(era("modern")).unwrap();
    let err = client.blocking().call_tool("confirm", json!({"action": "deploy"})).unwrap_err();
    let Some(RequestError::InputNotProvided { input, .. }) = err.request_error() else {
        panic!("{err}")
    };
    assert_eq!(input, "elicitation/create");
    assert_eq!(client.blocking().call_tool("echo", json!({"text": "on"})).unwrap().text(), "on");
}

/// 2026-07-28 has no `resources/subscribe` and no GET stream: resource updates and list
/// changes come on the `subscriptions/listen` stream, which `subscribe_resource` and the list
/// caches open (and reopen with a new filter) by themselves.
#[test]
fn subscriptions_go_through_the_listen_stream() {
    use ringmcp::host::ServerEvent;
    let host = host();
    let spec = reference("ref-listen", &["--era", "modern", "--fault-tools"]);
    let client = host.spawn_blocking(spec).unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    let events = client.events();
    let uri = "ringmcp://reference/readme";
    client.blocking().subscribe_resource(uri).unwrap();
    assert_eq!(
        client.blocking().call_tool("touch", json!({"times": 3})).unwrap().text(),
        "touched 1 resources 3 times"
    );
    let updates: Vec<u64> = std::iter::from_fn(|| events.try_recv().ok())
        .filter_map(|e| match e {
            ServerEvent::ResourceUpdated { uri: u, seq } if u == uri => Some(seq),
            _ => None,
        })
        .collect();
    assert_eq!(updates, [1, 2, 3]);
    client.blocking().unsubscribe_resource(uri).unwrap();
    assert_eq!(
        client.blocking().call_tool("touch", json!({"times": 1})).unwrap().text(),
        "touched 0 resources 1 times"
    );

    // The tool list cache asks for `toolsListChanged` and is refreshed by it.
    let first = futures::executor::block_on(client.tools()).unwrap();
    let again = futures::executor::block_on(client.tools()).unwrap();
    assert!(!std::sync::Arc::ptr_eq(&first, &again), "ttlMs 0: not cached");
    client.blocking().call_tool("notify", json!({})).unwrap();
    let changed = std::iter::from_fn(|| events.try_recv().ok()).any(|e| {
        matches!(&e, ServerEvent::Notification(n) if n.method == "notifications/tools/list_changed")
    });
    assert!(changed, "list_changed arrived on the listen stream");
    let stats = client.blocking().stats().unwrap().session;
    assert_eq!(stats.violations, 0, "{stats:?}");
}

/// A legacy client behind the gateway keeps what a backend asks of it: a backend written for
/// both eras on the Python SDK, whose tools elicit and sample through server requests, gets
/// the `initialize` handshake (in 2026-07-28 it would have no back-channel and its calls would
/// fail), and its requests reach the client; a backend that speaks only 2026-07-28 still comes
/// up, on the probe.
#[test]
fn the_gateway_speaks_a_legacy_clients_era_to_its_backends() {
    use crate::upstream::Upstream;
    use crate::util::{TempDir, deps_dir, require, ringmcp_bin};
    let Some(python) = require(deps_dir().join("venv/bin/python"), "Python venv with the mcp SDK")
    else {
        return;
    };
    let dir = TempDir::new("gw-eras");
    let py_server = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/servers/py_echo_server.py");
    let config = json!({"mcpServers": {
        "py": {"command": python, "args": [py_server]},
        "modern": {"command": ringmcp_bin(), "args": ["serve", "--era", "modern"]},
    }});
    let path = dir.0.join("gateway.json");
    std::fs::write(&path, serde_json::to_vec(&config).unwrap()).unwrap();
    let answerer: crate::upstream::Answerer =
        Box::new(|request| match request["method"].as_str() {
            Some("elicitation/create") => json!({"action": "accept", "content": {"ok": true}}),
            Some("sampling/createMessage") => json!({"role": "assistant", "model": "test",
            "content": {"type": "text", "text": "a short summary"}}),
            other => panic!("the gateway asked {other:?}"),
        });
    let capabilities = json!({"elicitation": {}, "sampling": {}});
    let mut up = Upstream::start_with(&path, &[], &[], capabilities, Some(answerer));
    let confirmed = up.call("py__confirm", json!({"question": "Deploy now?"}));
    assert_eq!(confirmed["result"]["content"][0]["text"], "accept: True", "{confirmed}");
    let summary = up.call("py__summarize", json!({"text": "a long text"}));
    assert_eq!(summary["result"]["content"][0]["text"], "a short summary", "{summary}");
    let methods: Vec<&str> = up.asked.iter().map(|r| r["method"].as_str().unwrap()).collect();
    assert_eq!(methods, ["elicitation/create", "sampling/createMessage"]);
    assert_eq!(up.status("py")["protocolVersion"], "2025-11-25");
    assert_eq!(up.status("modern")["protocolVersion"], "2026-07-28");
    let sum = up.call("modern__add", json!({"a": 2, "b": 40}));
    assert_eq!(sum["result"]["content"][0]["text"], "42", "{sum}");
}
