//! ringmcp against the official `@modelcontextprotocol/server-everything` (npm, pinned in
//! tests/servers/npm).

use std::time::{Duration, Instant};

use ringmcp::host::{Host, ServerEvent, ServerSpec};
use ringmcp::protocol::{CloseReason, ProtocolVersion, Root};
use serde_json::json;

use crate::util::{deps_dir, require};

fn everything() -> Option<ServerSpec> {
    let entry =
        deps_dir().join("npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let entry = require(entry, "@modelcontextprotocol/server-everything")?;
    Some(ServerSpec::new("everything", "node").arg(entry).arg("stdio"))
}

#[test]
fn handshake_tools_echo_roots_and_notifications() {
    let Some(spec) = everything() else { return };
    let host = Host::builder()
        .roots(vec![Root { uri: "file:///tmp".into(), name: Some("tmp".into()) }])
        .request_timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let client = host.spawn_blocking(spec).unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    assert_eq!(client.server_info().server_info.name, "mcp-servers/everything");

    let tools = client.blocking().list_tools().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for want in ["echo", "get-sum", "get-roots-list"] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    // Schemas are kept exactly as sent (draft-07 $schema included).
    let echo = tools.iter().find(|t| t.name == "echo").unwrap();
    assert_eq!(echo.input_schema["$schema"], "http://json-schema.org/draft-07/schema#");

    let r = client.blocking().call_tool("echo", json!({"message": "hello from ringmcp"})).unwrap();
    assert_eq!(r.text(), "Echo: hello from ringmcp");
    let r = client.blocking().call_tool("get-sum", json!({"a": 2, "b": 40})).unwrap();
    assert!(r.text().contains("42"), "{}", r.text());

    // After `initialized` it sends tools/list_changed, then asks roots/list; answering it
    // makes it log "Roots updated" through notifications/message.
    let events = client.events();
    let deadline = Instant::now() + Duration::from_secs(15);
    let (mut list_changed, mut roots_logged) = (false, false);
    while !(list_changed && roots_logged) && Instant::now() < deadline {
        match events.try_recv() {
            Ok(ServerEvent::Notification(n)) => {
                list_changed |= n.method == "notifications/tools/list_changed";
                roots_logged |= n.method == "notifications/message"
                    && n.params
                        .as_ref()
                        .is_some_and(|p| p.to_string().contains("Roots updated: 1 root"));
            }
            Ok(other) => panic!("unexpected event {other:?}"),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    assert!(list_changed, "no notifications/tools/list_changed");
    assert!(roots_logged, "the server never confirmed our roots/list answer");
    let stats = client.blocking().stats().unwrap();
    assert!(stats.session.server_requests >= 1, "{stats:?}");
    assert_eq!(stats.session.violations, 0, "{stats:?}");
    assert_eq!(client.blocking().shutdown(), CloseReason::Exited(0));
}

/// `trigger-long-running-operation` with a progress token: every step's progress arrives on the
/// call's stream in order, and each pushes the deadline back — the 6 s operation (a step every
/// second) completes under a 4 s timeout, which the same call without progress does not
/// survive (a slower machine only makes it longer). The margins are wide: a step may come 3 s
/// late, and the server runs under the sandbox's 50 % CPU quota.
#[test]
fn progress_is_routed_to_its_call_and_resets_its_timeout() {
    let Some(spec) = everything() else { return };
    let host = Host::builder().request_timeout(Duration::from_secs(30)).build().unwrap();
    let client = host.spawn_blocking(spec).unwrap();
    let args = json!({"duration": 6.0, "steps": 6});
    let timeout = Some(Duration::from_secs(4));
    let (call, progress) =
        client.call_tool_with_progress("trigger-long-running-operation", args.clone(), timeout);
    let result = futures_executor::block_on(call).unwrap();
    assert!(result.text().contains("Long running operation completed"), "{}", result.text());
    let updates: Vec<_> = std::iter::from_fn(|| progress.try_recv().ok()).collect();
    let steps: Vec<f64> = updates.iter().map(|p| p.progress).collect();
    assert_eq!(steps, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "{updates:?}");
    assert!(updates.iter().all(|p| p.total == Some(6.0)));
    let plain = client.call_tool_with_timeout("trigger-long-running-operation", args, timeout);
    let err = futures_executor::block_on(plain);
    assert!(err.is_err_and(|e| e.to_string().contains("timed out")), "no progress: it times out");
}

/// A host handler answers the server's sampling and elicitation requests (each on its own
/// thread); without one, neither capability is declared and the server does not offer the
/// tools that need them.
#[test]
fn sampling_and_elicitation_go_to_the_host_handler() {
    use ringmcp::host::ClientHandler;
    use ringmcp::jsonrpc::ErrorObject;
    use ringmcp::protocol::ClientFeatures;
    struct Canned;
    impl ClientHandler for Canned {
        fn features(&self) -> ClientFeatures {
            ClientFeatures { sampling: true, elicitation_form: true, elicitation_url: false }
        }
        fn create_message(
            &self,
            _: &str,
            params: serde_json::Value,
        ) -> Result<serde_json::Value, ErrorObject> {
            let asked = params["messages"][0]["content"]["text"].as_str().unwrap_or("").to_owned();
            Ok(json!({"role": "assistant", "model": "canned-1", "stopReason": "endTurn",
                      "content": {"type": "text", "text": format!("canned answer to: {asked}")}}))
        }
        fn elicit(
            &self,
            _: &str,
            params: serde_json::Value,
        ) -> Result<serde_json::Value, ErrorObject> {
            assert!(params["requestedSchema"].is_object());
            Ok(json!({"action": "decline"}))
        }
    }
    let Some(spec) = everything() else { return };
    let plain = Host::builder().build().unwrap();
    let c = plain.spawn_blocking(spec.clone()).unwrap();
    let names: Vec<String> =
        c.blocking().list_tools().unwrap().into_iter().map(|t| t.name).collect();
    assert!(!names.iter().any(|n| n == "trigger-sampling-request"), "{names:?}");

    let host = Host::builder().handler(std::sync::Arc::new(Canned)).build().unwrap();
    let client = host.spawn_blocking(spec).unwrap();
    let r = client
        .blocking()
        .call_tool("trigger-sampling-request", json!({"prompt": "2+2?", "maxTokens": 10}))
        .unwrap();
    assert!(r.text().contains("canned answer to:") && r.text().contains("2+2?"), "{}", r.text());
    let r = client.blocking().call_tool("trigger-elicitation-request", json!({})).unwrap();
    assert!(r.text().to_lowercase().contains("decline"), "{}", r.text());
}

/// With a policy, a server's sampling request passes its gate before the handler: `ask` puts
/// it to the approver (a refusal never reaches the handler), `deny` refuses it, `allow` lets
/// it through with `maxTokens` lowered to `samplingMaxTokens`; each decision is recorded.
#[test]
fn sampling_requests_pass_the_servers_policy_first() {
    use ringmcp::host::{Approval, ApprovalRequest, Approver, ClientHandler, PolicySettings};
    use ringmcp::jsonrpc::ErrorObject;
    use ringmcp::protocol::ClientFeatures;
    use std::sync::{Arc, Mutex};
    #[derive(Default)]
    struct Recording(Mutex<Vec<u64>>);
    impl ClientHandler for Recording {
        fn features(&self) -> ClientFeatures {
            ClientFeatures { sampling: true, ..ClientFeatures::default() }
        }
        fn create_message(
            &self,
            _: &str,
            params: serde_json::Value,
        ) -> Result<serde_json::Value, ErrorObject> {
            self.0.lock().unwrap().push(params["maxTokens"].as_u64().unwrap_or(0));
            Ok(json!({"role": "assistant", "model": "canned-1", "stopReason": "endTurn",
                      "content": {"type": "text", "text": "canned"}}))
        }
    }
    #[derive(Default)]
    struct Refusing(Mutex<Vec<(String, String)>>);
    impl Approver for Refusing {
        fn approve(&self, request: &ApprovalRequest) -> Approval {
            self.0.lock().unwrap().push((request.tool.clone(), request.rule.clone()));
            if request.tool == "sampling/createMessage" { Approval::Deny } else { Approval::Once }
        }
    }
    let Some(spec) = everything() else { return };
    let sample = |rule: serde_json::Value| {
        let handler = Arc::new(Recording::default());
        let approver = Arc::new(Refusing::default());
        let settings =
            PolicySettings { approver: Some(approver.clone()), ..PolicySettings::default() };
        let host = Host::builder().handler(handler.clone()).policy(settings).build().unwrap();
        let mut rule = rule;
        rule["tools"] = json!({"trigger-sampling-request": "allow"});
        let spec = spec.clone().policy(serde_json::from_value(rule).unwrap());
        let client = host.spawn_blocking(spec).unwrap();
        let args = json!({"prompt": "2+2?", "maxTokens": 10});
        let text = match client.blocking().call_tool("trigger-sampling-request", args) {
            Ok(r) => r.text(),
            Err(e) => e.to_string(),
        };
        let handled = handler.0.lock().unwrap().clone();
        let asked = approver.0.lock().unwrap().clone();
        assert!(
            asked.iter().all(|(tool, rule)| tool == "sampling/createMessage" && rule == "sampling")
        );
        (text, handled, asked.len())
    };
    let (_, handled, asked) = sample(json!({}));
    assert_eq!((handled.len(), asked), (0, 1), "by default a sampling request is asked about");
    let (_, handled, asked) = sample(json!({"sampling": "deny"}));
    assert_eq!((handled.len(), asked), (0, 0), "denied without asking, never handled");
    let (text, handled, asked) = sample(json!({"sampling": "allow", "samplingMaxTokens": 5}));
    assert_eq!((handled, asked), (vec![5], 0), "allowed, its maxTokens lowered to the cap");
    assert!(text.contains("canned"), "{text}");
}

/// Tasks (2025-11-25; docs/protocol.md, "Tools"): `simulate-research-query` says
/// `taskSupport: "required"`, so `call_tool` makes it a task: created, polled with `tasks/get`,
/// its result fetched with `tasks/result`; an ambiguous query pauses the task for an
/// elicitation, which reaches the handler through `tasks/result`; a caller that stops waiting
/// cancels the task with `tasks/cancel`.
#[test]
fn task_tools_are_polled_to_completion_and_cancelled_with_tasks_cancel() {
    use ringmcp::host::ClientHandler;
    use ringmcp::jsonrpc::ErrorObject;
    use ringmcp::protocol::ClientFeatures;
    struct Clarify;
    impl ClientHandler for Clarify {
        fn features(&self) -> ClientFeatures {
            ClientFeatures { elicitation_form: true, ..ClientFeatures::default() }
        }
        fn elicit(
            &self,
            _: &str,
            params: serde_json::Value,
        ) -> Result<serde_json::Value, ErrorObject> {
            let options = &params["requestedSchema"]["properties"]["interpretation"]["oneOf"];
            let first = options[0]["const"].clone();
            Ok(json!({"action": "accept", "content": {"interpretation": first}}))
        }
    }
    let Some(spec) = everything() else { return };
    let host = Host::builder().handler(std::sync::Arc::new(Clarify)).build().unwrap();
    let client = host.spawn_blocking(spec).unwrap();
    assert!(client.supports_tool_tasks());
    let tools = futures::executor::block_on(client.tools()).unwrap();
    let tool = tools.iter().find(|t| t.name == "simulate-research-query").unwrap();
    assert_eq!(tool.extra["execution"]["taskSupport"], "required");

    let started = Instant::now();
    let r = client
        .blocking()
        .call_tool("simulate-research-query", json!({"topic": "io_uring"}))
        .unwrap();
    assert!(r.text().contains("Research Report: io_uring"), "{}", r.text());
    assert!(started.elapsed() >= Duration::from_secs(3), "four 1 s stages were waited for");

    let r = client
        .blocking()
        .call_tool("simulate-research-query", json!({"topic": "python", "ambiguous": true}))
        .unwrap();
    assert!(r.text().contains("Clarification"), "{}", r.text());

    // Dropped after a second: the task is cancelled on the server.
    let call = client.call_tool("simulate-research-query", json!({"topic": "cancel me"}));
    let timer = futures_timer::Delay::new(Duration::from_millis(1200));
    futures::executor::block_on(async {
        futures::pin_mut!(call);
        futures::future::select(call, timer).await;
    });
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let listed = client.blocking().request("tasks/list", None, None).unwrap();
        let tasks = listed["tasks"].as_array().cloned().unwrap_or_default();
        if tasks.iter().any(|t| t["status"] == "cancelled") {
            break;
        }
        assert!(Instant::now() < deadline, "no cancelled task: {tasks:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    // A task's timeout covers its whole life: it fails as a timeout and the task is
    // cancelled on the server (the research takes four 1 s stages).
    let before = cancelled_tasks(&client);
    let err = client
        .call("simulate-research-query", json!({"topic": "too slow"}))
        .timeout(Duration::from_millis(1500))
        .blocking()
        .unwrap_err();
    assert!(
        matches!(err.request_error(), Some(ringmcp::protocol::RequestError::Timeout { .. })),
        "{err}"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while cancelled_tasks(&client) == before {
        assert!(Instant::now() < deadline, "the timed-out task was not cancelled");
        std::thread::sleep(Duration::from_millis(100));
    }
    // TaskMode::Never sends a plain call, which a task-only tool refuses.
    let plain = client
        .call("simulate-research-query", json!({"topic": "plain"}))
        .task(ringmcp::host::TaskMode::Never)
        .blocking();
    let plain = plain.unwrap();
    assert!(plain.is_error && plain.text().contains("requires task augmentation"), "{plain:?}");
}

fn cancelled_tasks(client: &ringmcp::host::Client) -> usize {
    let listed = client.blocking().request("tasks/list", None, None).unwrap();
    let tasks = listed["tasks"].as_array().cloned().unwrap_or_default();
    tasks.iter().filter(|t| t["status"] == "cancelled").count()
}

/// Subscriptions and log messages with server-everything (stdio or Streamable HTTP): a
/// subscribed resource's update arrives as a numbered `ResourceUpdated`, a log message at the
/// level set as a notification; both simulations are stopped again.
pub(crate) fn subscriptions_and_logs(client: &ringmcp::host::Client) {
    let events = client.events();
    let uri = "demo://resource/dynamic/text/1";
    client.blocking().subscribe_resource(uri).unwrap();
    client.blocking().set_log_level("debug").unwrap();
    client.blocking().call_tool("toggle-subscriber-updates", json!({})).unwrap();
    client.blocking().call_tool("toggle-simulated-logging", json!({})).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let (mut updated, mut logged) = (false, false);
    while !(updated && logged) {
        match crate::util::recv_until(&events, deadline) {
            Some(ServerEvent::ResourceUpdated { uri: u, seq }) if u == uri => {
                assert!(seq >= 1);
                updated = true;
            }
            Some(ServerEvent::Notification(n)) if n.method == "notifications/message" => {
                logged = true;
            }
            Some(_) => {}
            None => break,
        }
    }
    assert!(updated && logged, "resource update {updated}, log message {logged}");
    client.blocking().call_tool("toggle-subscriber-updates", json!({})).unwrap();
    client.blocking().call_tool("toggle-simulated-logging", json!({})).unwrap();
    client.blocking().unsubscribe_resource(uri).unwrap();
}

#[test]
fn subscriptions_and_log_messages_over_stdio() {
    let Some(spec) = everything() else { return };
    let host = Host::builder().request_timeout(Duration::from_secs(30)).build().unwrap();
    let client = host.spawn_blocking(spec).unwrap();
    subscriptions_and_logs(&client);
}
