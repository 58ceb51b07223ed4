//! The gate on requests other than `tools/call`: what a resource read, a prompt or a completion
//! may carry, each refusal recorded under its method.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::*;
use crate::policy::DenialKind;
use crate::policy::config::AuditConfig;

fn gate(audit: Option<Arc<AuditLog>>) -> Gate {
    let settings = PolicySettings { audit, ..PolicySettings::default() };
    let trust = SessionTrust {
        taint: Arc::new(Mutex::default()),
        own_secrets: Vec::new(),
        instructions: None,
    };
    let roots = [PathBuf::from("/srv/project")];
    Gate::new("fs".into(), "fs".into(), None, &roots, None, settings, trust)
}

/// The denial's kind, or `None` when the request is permitted.
fn decided(gate: &Gate, method: &str, params: Value) -> Option<DenialKind> {
    match gate.check(Request::Method { method, params: Some(&params) }) {
        Check::Permit(_) => None,
        Check::Deny(d) => Some(d.kind),
        Check::Ask(_) => panic!("{method} asked"),
    }
}

#[test]
fn resource_reads_are_confined_to_the_roots_and_never_name_a_spilled_payload() {
    let g = gate(None);
    let store = crate::spill::store::SpillStore::open(
        crate::spill::store::StoreConfig::new()
            .base_dir(std::env::temp_dir().join("ringmcp-gate-test")),
    )
    .unwrap();
    let mut w = store.create("t").unwrap();
    w.write_all(b"x").unwrap();
    let own = w.finish().unwrap().uri().to_owned();
    for method in ["resources/read", "resources/subscribe"] {
        let read = |uri: &str| decided(&g, method, json!({"uri": uri}));
        assert_eq!(read("file:///srv/project/notes.md"), None);
        assert_eq!(read("file:///etc/passwd"), Some(DenialKind::Path), "{method}");
        assert_eq!(read("FILE:///etc/passwd"), Some(DenialKind::Path), "{method}: any case");
        assert_eq!(read("file:///srv/project/%2e%2e/%2e%2e/etc/passwd"), Some(DenialKind::Path));
        // Encoded twice: a server that decodes once more reads `..` (refused, as a guess).
        let twice = "file:///srv/project/%252e%252e/%252e%252e/etc/passwd";
        assert_eq!(read(twice), Some(DenialKind::Path), "{method}");
        assert_eq!(read(&own), Some(DenialKind::Rule), "{method}: this host's payload");
        // Another process's store (a gateway's large result): the server's own resource.
        assert_eq!(read("ringmcp-spill://1-2/1?offset=0&length=64"), None, "{method}");
        assert_eq!(read("https://example.com/x"), None, "not a file: the server's business");
    }
}

#[test]
fn prompt_and_completion_arguments_get_the_path_and_metacharacter_checks() {
    let g = gate(None);
    let prompt = |args: Value| decided(&g, "prompts/get", json!({"name": "p", "arguments": args}));
    assert_eq!(prompt(json!({"path": "/srv/project/a"})), None);
    assert_eq!(prompt(json!({"path": "/etc/shadow"})), Some(DenialKind::Path));
    assert_eq!(prompt(json!({"note": "file:///etc/shadow"})), Some(DenialKind::Path));
    assert_eq!(prompt(json!({"command": "ls; rm -rf ~"})), Some(DenialKind::Metacharacters));
    assert_eq!(decided(&g, "prompts/get", json!({"name": "p"})), None, "no arguments");
    let complete = |name: &str, value: &str| {
        let params = json!({"ref": {"type": "ref/prompt", "name": "p"},
                            "argument": {"name": name, "value": value}});
        decided(&g, "completion/complete", params)
    };
    assert_eq!(complete("path", "/srv/project/sr"), None);
    assert_eq!(complete("path", "../../etc/pa"), Some(DenialKind::Path));
    assert_eq!(complete("cmd", "ls `id`"), Some(DenialKind::Metacharacters));
    assert_eq!(complete("language", "py"), None);
}

#[test]
fn a_refused_request_is_recorded_under_its_method() {
    let dir = std::env::temp_dir().join(format!("ringmcp-gate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let config = AuditConfig { path: dir.join("audit.jsonl"), ..AuditConfig::default() };
    let log = Arc::new(AuditLog::open(config).unwrap());
    let g = gate(Some(log));
    assert!(decided(&g, "resources/read", json!({"uri": "file:///etc/passwd"})).is_some());
    let trail = std::fs::read_to_string(dir.join("audit.jsonl")).unwrap();
    let record: Value = serde_json::from_str(trail.lines().last().unwrap()).unwrap();
    assert_eq!(record["tool"], "resources/read", "{record}");
    assert_eq!(record["server"], "fs", "{record}");
    assert!(record.to_string().contains("/etc/passwd"), "{record}");
    std::fs::remove_dir_all(&dir).unwrap();
}
