//! The security gateway against real servers: what it refuses never reaches the server (the
//! reference server's own `calls` trace, the file system server's effects on disk), and the
//! caller gets a policy error naming the rule.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ringmcp::host::pins::{PinMode, PinStore};
use ringmcp::host::{
    Approval, ApprovalRequest, Approver, Client, Error, Fault, Host, PolicySettings, ServerSpec,
};
use ringmcp::policy::{DenialKind, PolicyConfig};
use serde_json::{Value, json};

use crate::util::{TempDir, deps_dir, faulty, python3, require, ringmcp_bin};

/// Records what it was asked and answers as told.
struct Scripted {
    answer: Approval,
    asked: Mutex<Vec<(String, String)>>,
}

impl Approver for Scripted {
    fn approve(&self, request: &ApprovalRequest) -> Approval {
        self.asked.lock().unwrap().push((request.tool.clone(), request.rule.clone()));
        self.answer
    }
}

fn host_with(settings: PolicySettings) -> Host {
    Host::builder().request_timeout(Duration::from_secs(30)).policy(settings).build().unwrap()
}

fn policy(v: Value) -> PolicyConfig {
    serde_json::from_value(v).unwrap()
}

/// The refusal inside a policy error.
fn denial(e: Error) -> ringmcp::policy::Denial {
    assert_eq!(e.fault(), Fault::Policy, "{e}");
    match e {
        Error::Policy { denial, .. } => denial,
        other => panic!("not a policy error: {other}"),
    }
}

/// The tool calls the reference server received.
fn trace(client: &Client) -> Vec<String> {
    let text = client.blocking().call_tool("calls", json!({})).unwrap().text();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn refused_calls_never_reach_the_server() {
    let approver = Arc::new(Scripted { answer: Approval::Deny, asked: Mutex::default() });
    let settings = PolicySettings { approver: Some(approver.clone()), ..PolicySettings::default() };
    let host = host_with(settings);
    let spec = faulty("ref").sandbox(None).policy(policy(json!({
        "tools": {"fail": "deny", "add": "ask", "calls": "allow"},
        "commandArgs": ["text"]
    })));
    let client = host.spawn_blocking(spec).unwrap();
    let b = client.blocking();
    assert_eq!(b.call_tool("echo", json!({"text": "hello"})).unwrap().text(), "hello");
    let d = denial(b.call_tool("fail", json!({})).unwrap_err());
    assert_eq!((d.rule.as_str(), d.kind), ("tools[\"fail\"]", DenialKind::Rule));
    let d = denial(b.call_tool("no_such_tool", json!({})).unwrap_err());
    assert_eq!(d.kind, DenialKind::Unlisted);
    let d = denial(b.call_tool("echo", json!({"text": 5})).unwrap_err());
    assert_eq!((d.kind, d.code()), (DenialKind::InvalidArguments, -32602));
    let d = denial(b.call_tool("echo", json!({"text": "hi; rm -rf ~"})).unwrap_err());
    assert_eq!((d.rule.as_str(), d.kind), ("commandArgs", DenialKind::Metacharacters));
    let d = denial(b.call_tool("add", json!({"a": 1, "b": 2})).unwrap_err());
    assert_eq!(d.kind, DenialKind::NotApproved);
    assert_eq!(
        approver.asked.lock().unwrap().as_slice(),
        [("add".to_owned(), "tools[\"add\"]".to_owned())]
    );
    // A raw request is gated too.
    let raw = b.request("tools/call", Some(json!({"name": "fail", "arguments": {}})), None);
    assert_eq!(denial(raw.unwrap_err()).kind, DenialKind::Rule);
    assert_eq!(trace(&client), ["echo", "calls"], "only the allowed calls reached the server");
    let object = ringmcp::jsonrpc::ErrorObject::from(&b.call_tool("fail", json!({})).unwrap_err());
    assert_eq!(
        (object.code, object.data.unwrap()["rule"].clone()),
        (-32001, json!("tools[\"fail\"]"))
    );
}

#[test]
fn approvals_once_always_and_timeouts() {
    struct Counting(AtomicUsize, Approval);
    impl Approver for Counting {
        fn approve(&self, _: &ApprovalRequest) -> Approval {
            self.0.fetch_add(1, Ordering::SeqCst);
            self.1
        }
    }
    // Three calls of a tool that asks, answered by `answer` each time asked: how many asks.
    let asked = |answer: Approval| {
        let approver = Arc::new(Counting(AtomicUsize::new(0), answer));
        let host = host_with(PolicySettings {
            approver: Some(approver.clone()),
            ..PolicySettings::default()
        });
        let spec = faulty("ref").sandbox(None).policy(policy(json!({"tools": {"add": "ask"}})));
        let client = host.spawn_blocking(spec).unwrap();
        for _ in 0..3 {
            assert_eq!(
                client.blocking().call_tool("add", json!({"a": 1, "b": 2})).unwrap().text(),
                "3"
            );
        }
        approver.0.load(Ordering::SeqCst)
    };
    assert_eq!(asked(Approval::Always), 1, "always: asked once for the session");
    // `Once` allows that call only: the next one asks again.
    assert_eq!(asked(Approval::Once), 3, "once: asked for every call");
    struct Slow;
    impl Approver for Slow {
        fn approve(&self, _: &ApprovalRequest) -> Approval {
            std::thread::sleep(Duration::from_secs(5));
            Approval::Once
        }
    }
    let settings = PolicySettings {
        approver: Some(Arc::new(Slow)),
        approval_timeout: Duration::from_millis(200),
        ..PolicySettings::default()
    };
    let host = host_with(settings);
    let spec = faulty("ref").sandbox(None).policy(policy(json!({"tools": {"add": "ask"}})));
    let client = host.spawn_blocking(spec).unwrap();
    let d = denial(client.blocking().call_tool("add", json!({"a": 1, "b": 2})).unwrap_err());
    assert!(d.reason.contains("no approval within"), "{}", d.reason);
    assert_eq!(trace(&client), ["calls"], "the call waiting for approval was never sent");
}

#[test]
fn paths_are_confined_to_the_roots_of_the_file_system_server() {
    let Some(entry) = require(
        deps_dir().join("npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"),
        "@modelcontextprotocol/server-filesystem",
    ) else {
        return;
    };
    let root = TempDir::new("fsroot");
    let outside = TempDir::new("fsoutside");
    std::fs::write(root.0.join("inside.txt"), "inside").unwrap();
    std::fs::write(outside.0.join("secret.txt"), "secret").unwrap();
    std::os::unix::fs::symlink(&outside.0, root.0.join("link")).unwrap();
    let approver = Arc::new(Scripted { answer: Approval::Once, asked: Mutex::default() });
    let host = host_with(PolicySettings { approver: Some(approver), ..PolicySettings::default() });
    // The server itself is allowed both folders: only the policy keeps the calls inside one.
    let r = root.0.to_str().unwrap().to_owned();
    let o = outside.0.to_str().unwrap().to_owned();
    let spec = ServerSpec::new("fs", "node").arg(&entry).arg(&r).arg(&o).sandbox(None).policy(
        policy(json!({
            "roots": [r.clone()]
        })),
    );
    let client = host.spawn_blocking(spec).unwrap();
    let b = client.blocking();
    let read = b.call_tool("read_text_file", json!({"path": format!("{r}/inside.txt")})).unwrap();
    assert_eq!(read.text(), "inside");
    let escapes = [
        format!("{r}/../{}/secret.txt", outside.0.file_name().unwrap().to_str().unwrap()),
        format!("{o}/secret.txt"),
        format!("{r}/link/secret.txt"),
        format!("file://{o}/secret.txt"),
        format!("{r}/%2e%2e/%2e%2e{o}/secret.txt"),
        format!("{r}/\u{FF0E}\u{FF0E}/\u{FF0E}\u{FF0E}{o}/secret.txt"),
        format!("{r}/inside.txt\0"),
    ];
    for path in &escapes {
        let d = denial(b.call_tool("read_text_file", json!({"path": path})).unwrap_err());
        assert_eq!(d.kind, DenialKind::Path, "{path:?}: {d}");
    }
    let d = denial(
        b.call_tool(
            "read_multiple_files",
            json!({"paths": [format!("{r}/inside.txt"), format!("{o}/secret.txt")]}),
        )
        .unwrap_err(),
    );
    assert!(d.reason.contains("/paths/1"), "{}", d.reason);
    // A write outside is refused, so the file is never created.
    let target = outside.0.join("planted.txt");
    let write =
        b.call_tool("write_file", json!({"path": target.to_str().unwrap(), "content": "x"}));
    assert_eq!(denial(write.unwrap_err()).kind, DenialKind::Path);
    assert!(!target.exists(), "the server never received the write");
    let moved = b.call_tool(
        "move_file",
        json!({"source": format!("{r}/inside.txt"), "destination": format!("{o}/moved.txt")}),
    );
    assert_eq!(denial(moved.unwrap_err()).kind, DenialKind::Path);
    assert!(root.0.join("inside.txt").exists() && !outside.0.join("moved.txt").exists());
    // Inside, writes go through.
    b.call_tool("write_file", json!({"path": format!("{r}/new.txt"), "content": "ok"})).unwrap();
    assert_eq!(std::fs::read_to_string(root.0.join("new.txt")).unwrap(), "ok");
}

fn rugpull() -> Option<ServerSpec> {
    let python = python3()?;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers/scripted.py");
    Some(ServerSpec::new("rugpull", python).arg(script).arg("rugpull").sandbox(None))
}

#[test]
fn a_changed_tool_definition_is_blocked_until_accepted() {
    let Some(spec) = rugpull() else { return };
    let dir = TempDir::new("pins");
    let pins =
        Arc::new(PinStore::open(&dir.0.join("pins.json"), PinMode::TrustOnFirstUse).unwrap());
    let settings = PolicySettings { pins: Some(pins.clone()), ..PolicySettings::default() };
    let host = host_with(settings);
    let client = host.spawn_blocking(spec.clone()).unwrap();
    let b = client.blocking();
    assert_eq!(b.call_tool("read", json!({})).unwrap().text(), "read ran");
    assert_eq!(b.call_tool("mutate", json!({})).unwrap().text(), "mutated");
    // After list_changed the listing is fetched again: `read` changed, `exfil` is new.
    let mut ran = 0;
    let d = eventually("the changed tool is blocked", || match b.call_tool("read", json!({})) {
        Err(e) => Some(denial(e)),
        Ok(_) => {
            ran += 1;
            None
        }
    });
    assert_eq!(d.kind, DenialKind::Pinned);
    assert!(d.reason.contains("description"), "{}", d.reason);
    assert_eq!(denial(b.call_tool("exfil", json!({})).unwrap_err()).kind, DenialKind::Pinned);
    let seen = b.call_tool("calls", json!({})).unwrap().text();
    let seen: Vec<String> = serde_json::from_str(&seen).unwrap();
    let reads = seen.iter().filter(|n| *n == "read").count();
    assert_eq!(reads, 1 + ran, "no refused read reached the server: {seen:?}");
    assert!(!seen.contains(&"exfil".to_owned()), "{seen:?}");
    // The user accepts: the pins are rewritten, and a new client trusts the new listing; a
    // policy that blocks poisoned tools still refuses the rewritten `read`.
    let tools = b.list_tools().unwrap();
    let current = ringmcp::policy::pins::ServerPins::of(&tools, None);
    pins.accept(&spec.identity(), current).unwrap();
    drop(client);
    let host = host_with(PolicySettings { pins: Some(pins), ..PolicySettings::default() });
    let client = host.spawn_blocking(spec.clone()).unwrap();
    client.blocking().call_tool("mutate", json!({})).unwrap();
    // Once the listing is fetched again, the accepted `exfil` runs.
    let exfil = eventually("the accepted exfil runs", || {
        client.blocking().call_tool("exfil", json!({})).ok()
    });
    assert_eq!(exfil.text(), "exfil ran");
    // The model's own `confirm: true` is not consent: without an approver, still refused.
    let asking = spec.clone().policy(policy(json!({"tools": {"read": "ask"}})));
    let host = host_with(PolicySettings::default());
    let client = host.spawn_blocking(asking).unwrap();
    let d = denial(client.blocking().call_tool("read", json!({"confirm": true})).unwrap_err());
    assert_eq!(d.kind, DenialKind::NotApproved);
    let strict = spec.policy(policy(json!({"blockPoisoned": true})));
    let host = host_with(PolicySettings::default());
    let client = host.spawn_blocking(strict).unwrap();
    client.blocking().call_tool("mutate", json!({})).unwrap();
    let poisoned = eventually("the poisoned read is blocked", || {
        client.blocking().call_tool("read", json!({})).err().map(denial)
    });
    assert_eq!(poisoned.kind, DenialKind::Poisoned);
}

/// What `f` gives once it gives something, asked every 20 ms for up to 20 s (a listing fetched
/// again after `list_changed` takes its time on a loaded machine).
fn eventually<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(std::time::Instant::now() < deadline, "{what}: not within 20 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `ringmcp call` applies the config's policy: exit 4 and the rule for a refusal (in the
/// `--json` output too); `--audit` keeps a trail `ringmcp audit verify` accepts, and any edit
/// or truncation makes it exit 1 with the line.
#[test]
fn the_cli_refuses_with_exit_4_and_keeps_a_verifiable_trail() {
    let dir = TempDir::new("cli");
    let config = dir.0.join("mcp.json");
    let bin = ringmcp_bin();
    std::fs::write(
        &config,
        json!({"policy": {"default": "allow"}, "mcpServers": {"ref": {
            "command": bin, "args": ["serve", "--fault-tools"], "sandbox": {"profile": "off"},
            "policy": {"tools": {"fail": "deny", "add": "ask"}}}}})
        .to_string(),
    )
    .unwrap();
    let audit = dir.0.join("audit.jsonl");
    let call = |args: &[&str]| {
        std::process::Command::new(&bin)
            .args([
                "call",
                "--config",
                config.to_str().unwrap(),
                "--server",
                "ref",
                "--audit",
                audit.to_str().unwrap(),
            ])
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    };
    assert_eq!(call(&["echo", r#"{"text":"hi"}"#]).status.code(), Some(0));
    assert_eq!(call(&["echo"]).status.code(), Some(4), "no text: refused by the inputSchema");
    let out = call(&["--json", "fail"]);
    assert_eq!(out.status.code(), Some(4));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["error"]["data"]["rule"], "tools[\"fail\"]");
    assert!(String::from_utf8_lossy(&out.stderr).contains("denied by policy (tools[\"fail\"])"));
    let add = r#"{"a":1,"b":2}"#;
    let out = call(&["add", add]);
    assert_eq!(out.status.code(), Some(4), "no terminal, no --approve");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--approve \"add\""),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(call(&["--approve", "ad*", "add", add]).status.code(), Some(0));
    let verify = || {
        std::process::Command::new(&bin)
            .args(["audit", "verify", audit.to_str().unwrap()])
            .output()
            .unwrap()
    };
    assert_eq!(verify().status.code(), Some(0), "{}", String::from_utf8_lossy(&verify().stderr));
    let text = std::fs::read_to_string(&audit).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 6, "{text}");
    let edited = text.replacen("\"deny\"", "\"allow\"", 1);
    std::fs::write(&audit, &edited).unwrap();
    let out = verify();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("line "),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let truncated: String = lines[..lines.len() - 1].iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&audit, truncated).unwrap();
    let out = verify();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("removed from the end"));
    let show = std::process::Command::new(&bin)
        .args(["audit", "show", audit.to_str().unwrap(), "--tool", "fail"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&show.stdout).contains("ref/fail  deny"));
}

/// A signed trail from the command line: `audit keygen`, `"signingKey"` in the config, and
/// `audit verify --key` (hex or the .pub file); a head taken away fails only with the key.
#[test]
fn the_cli_signs_a_trail_and_verifies_it_with_the_public_key() {
    let dir = TempDir::new("cli-signed");
    let bin = ringmcp_bin();
    let run = |args: &[&str]| std::process::Command::new(&bin).args(args).output().unwrap();
    let key = dir.0.join("audit.key");
    let out = run(&["audit", "keygen", key.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let public = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    assert_eq!(public.len(), 64, "{public}");
    let audit = dir.0.join("audit.jsonl");
    let config = dir.0.join("mcp.json");
    std::fs::write(
        &config,
        json!({"audit": {"path": audit, "signingKey": key, "checkpointEvery": 1},
               "mcpServers": {"ref": {"command": bin, "args": ["serve"],
                                      "sandbox": {"profile": "off"}}}})
        .to_string(),
    )
    .unwrap();
    let args = ["call", "--config", config.to_str().unwrap(), "--server", "ref", "echo"];
    let out = run(&[&args[..], &[r#"{"text":"hi"}"#]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let log = audit.to_str().unwrap();
    let pub_file = format!("{}.pub", key.display());
    for k in [public.as_str(), pub_file.as_str()] {
        let out = run(&["audit", "verify", log, "--key", k]);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        assert!(String::from_utf8_lossy(&out.stdout).contains("intact and signed"));
    }
    std::fs::remove_file(format!("{log}.head")).unwrap();
    assert_eq!(run(&["audit", "verify", log]).status.code(), Some(0), "unsigned: a warning");
    let out = run(&["audit", "verify", log, "--key", &public]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no head file"));
}

/// No confused deputy: one server's spilled payload is not readable through another's client
/// (nor sent to that server to read), and a server whose policy names roots is offered only
/// those in `roots/list`, not the host's.
#[test]
fn each_server_sees_only_its_own_world() {
    use ringmcp::host::SpillConfig;
    use ringmcp::protocol::{Content, Root};
    use ringmcp::spill::store::StoreConfig;
    let dir = TempDir::new("scope");
    let spill = SpillConfig {
        line_threshold: 256 << 10,
        string_threshold: 64 << 10,
        store: StoreConfig::new().base_dir(dir.0.join("spill")),
    };
    let host = Host::builder()
        .spill(Some(spill))
        .roots(vec![Root { uri: "file:///host/shared".into(), name: None }])
        .request_timeout(Duration::from_secs(30))
        .policy(PolicySettings::default())
        .build()
        .unwrap();
    let a = host.spawn_blocking(faulty("a").sandbox(None)).unwrap();
    let b = host
        .spawn_blocking(faulty("b").sandbox(None).policy(policy(json!({"roots": ["/srv/b-only"]}))))
        .unwrap();
    let big = a.blocking().call_tool("blob", json!({"bytes": 1 << 20})).unwrap();
    let uri = big
        .content
        .iter()
        .find_map(|c| match c {
            Content::Other { raw, .. } => raw.get("uri").and_then(Value::as_str).map(str::to_owned),
            _ => None,
        })
        .expect("the blob was spilled");
    assert!(uri.starts_with("ringmcp-spill://"), "{uri}");
    assert!(a.read_spilled(&uri, 0, 16).is_ok());
    assert!(b.read_spilled(&uri, 0, 16).is_err(), "not readable through another server's client");
    let fetched = futures::executor::block_on(b.fetch_resource(&uri));
    assert!(matches!(fetched, Err(Error::Spill(_))), "{fetched:?}");
    let read = b.blocking().read_resource(&uri);
    assert_eq!(denial(read.unwrap_err()).rule, "scope", "never sent to b");
    let roots_of = |c: &Client| c.blocking().call_tool("ask_roots", json!({})).unwrap().text();
    assert!(roots_of(&a).contains("/host/shared"));
    let b_roots = roots_of(&b);
    assert!(b_roots.contains("/srv/b-only") && !b_roots.contains("/host/shared"), "{b_roots}");
    // Roots announced later pass the same gate: none outside the server's own.
    let outside = b.set_roots(vec![Root { uri: "file:///host/shared".into(), name: None }]);
    assert_eq!(denial(outside.unwrap_err()).kind, DenialKind::Path);
    assert!(roots_of(&b).contains("/srv/b-only"), "the refused roots were never announced");
    b.set_roots(vec![Root { uri: "file:///srv/b-only/sub".into(), name: None }]).unwrap();
}

/// One gate for every way of sending, in the documented order: the rate limit before the
/// approval (a call over the limit is not put to a person), credentials screened on a raw
/// `tools/call` as on `Client::call`, and each refusal recorded.
#[test]
fn every_request_passes_one_gate_in_the_documented_order() {
    let dir = TempDir::new("one-gate");
    let approver = Arc::new(Scripted { answer: Approval::Once, asked: Mutex::default() });
    let log = dir.0.join("audit.jsonl");
    let audit = ringmcp::host::audit::AuditLog::open(
        serde_json::from_value(json!({"path": log, "fsync": "never"})).unwrap(),
    )
    .unwrap();
    let settings = PolicySettings {
        approver: Some(approver.clone()),
        audit: Some(Arc::new(audit)),
        ..PolicySettings::default()
    };
    let host = host_with(settings);
    let spec = faulty("ref")
        .sandbox(None)
        .policy(policy(json!({"tools": {"add": "ask", "blob": "ask"}, "rateLimits": {"add": 1}})));
    let client = host.spawn_blocking(spec).unwrap();
    assert_eq!(client.blocking().call_tool("add", json!({"a": 1, "b": 2})).unwrap().text(), "3");
    let over = denial(client.blocking().call_tool("add", json!({"a": 1, "b": 2})).unwrap_err());
    assert_eq!(over.kind, DenialKind::RateLimited, "{over}");
    assert_eq!(
        approver.asked.lock().unwrap().len(),
        1,
        "a call over the limit is not put to anyone"
    );
    // A raw tools/call is screened for credentials as Client::call is.
    client.blocking().tools().unwrap();
    let key = "ghp_".to_owned() + &"a1B2c3D4e5".repeat(4)[..36];
    let raw = client.blocking().request(
        "tools/call",
        Some(json!({"name": "echo", "arguments": {"text": key}})),
        None,
    );
    assert_eq!(denial(raw.unwrap_err()).kind, DenialKind::Secrets);
    // A raw call that needs approval cannot wait for it: refused, never asked.
    let raw = client.blocking().request(
        "tools/call",
        Some(json!({"name": "blob", "arguments": {"bytes": 1}})),
        None,
    );
    assert_eq!(denial(raw.unwrap_err()).kind, DenialKind::NotApproved);
    assert_eq!(approver.asked.lock().unwrap().len(), 1);
    assert_eq!(trace(&client), ["add", "calls"], "only the approved call reached the server");
    let text = std::fs::read_to_string(&log).unwrap();
    let verdicts: Vec<(String, String)> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["type"] == "decision")
        .map(|r| {
            (r["tool"].as_str().unwrap().to_owned(), r["verdict"].as_str().unwrap().to_owned())
        })
        .collect();
    let want =
        [("add", "ask"), ("add", "deny"), ("echo", "deny"), ("blob", "deny"), ("calls", "allow")];
    let want: Vec<(String, String)> =
        want.iter().map(|(t, v)| ((*t).to_owned(), (*v).to_owned())).collect();
    assert_eq!(verdicts, want, "every decision recorded, in order");
}

/// `ringmcp inspect --config F` without `--server` shows every server of the file: one line
/// each (a server that cannot start is reported, the others still shown), or with `--json` one
/// object per server with its tools and the policy's view of them.
#[test]
fn inspect_shows_every_server_of_a_config() {
    let dir = TempDir::new("inspect-all");
    let config = dir.0.join("mcp.json");
    let bin = ringmcp_bin();
    std::fs::write(
        &config,
        json!({"mcpServers": {
            "ref": {"command": bin, "args": ["serve"], "sandbox": {"profile": "off"},
                    "policy": {"tools": {"fail": "deny"}}},
            "broken": {"command": "/nonexistent/server", "sandbox": {"profile": "off"}}}})
        .to_string(),
    )
    .unwrap();
    let run = |json: bool| {
        let mut cmd = std::process::Command::new(&bin);
        cmd.args(["inspect", "--config", config.to_str().unwrap()])
            .stdin(std::process::Stdio::null());
        if json {
            cmd.arg("--json");
        }
        cmd.output().unwrap()
    };
    let out = run(false);
    // Every server is shown; the run says a server failed in its exit code (3) and last line.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("1 of 2 servers failed to start: broken"), "{stderr}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("ref: ringmcp") && text.contains("tools"), "{text}");
    assert!(text.contains("broken: failed"), "{text}");
    let out = run(true);
    assert_eq!(out.status.code(), Some(3));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["servers"]["ref"]["policy"]["fail"]["action"], "deny");
    assert!(v["servers"]["broken"]["error"].as_str().unwrap().contains("nonexistent"));
}
