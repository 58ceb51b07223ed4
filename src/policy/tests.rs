//! The policy's decisions: precedence, argument checks, rate limits; and a property test that
//! no arguments, however built, get a path outside the roots allowed.

use std::path::PathBuf;

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;

fn tool(v: Value) -> Tool {
    serde_json::from_value(v).unwrap()
}

fn fs_tools() -> ToolTable {
    ToolTable::new(&[
        tool(json!({"name": "read_file", "annotations": {"readOnlyHint": true},
            "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}})),
        tool(json!({"name": "write_file", "inputSchema": {"type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}}, "required": ["path", "content"]}})),
        tool(
            json!({"name": "delete_file", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}}),
        ),
        tool(
            json!({"name": "rm_rf", "annotations": {"destructiveHint": true}, "inputSchema": {"type": "object"}}),
        ),
        tool(
            json!({"name": "fetch", "annotations": {"openWorldHint": true, "readOnlyHint": true}, "inputSchema": {"type": "object"}}),
        ),
        tool(
            json!({"name": "plain", "annotations": {"destructiveHint": false}, "inputSchema": {"type": "object"}}),
        ),
        tool(
            json!({"name": "run", "inputSchema": {"type": "object", "properties": {"command": {"type": "string"}}}}),
        ),
    ])
}

fn config() -> PolicyConfig {
    serde_json::from_value(json!({
        "default": "ask",
        "tools": {"read_*": "allow", "delete_*": "deny", "write_file": "ask"},
        "roots": ["/srv/project"],
        "pathArgs": ["target"], "commandArgs": ["command"]
    }))
    .unwrap()
}

fn decide(p: &Policy, t: &ToolTable, name: &str, args: Value) -> Verdict {
    p.check_call(name, &args, t.get(name), &paths::Lexical)
}

#[test]
fn precedence_rules_then_annotations_then_defaults() {
    let t = fs_tools();
    let p = Policy::new("fs", &config(), &GlobalPolicy::default(), &[], &paths::Lexical);
    let read = decide(&p, &t, "read_file", json!({"path": "/srv/project/a"}));
    assert_eq!(read, Verdict::Allow { rule: "tools[\"read_*\"]".into() });
    let del = decide(&p, &t, "delete_file", json!({"path": "/srv/project/a"}));
    assert!(
        matches!(&del, Verdict::Deny(d) if d.rule == "tools[\"delete_*\"]" && d.kind == DenialKind::Rule),
        "{del:?}"
    );
    let write = decide(&p, &t, "write_file", json!({"path": "/srv/project/a", "content": "x"}));
    assert_eq!(write, Verdict::Ask { rule: "tools[\"write_file\"]".into() });
    assert_eq!(
        decide(&p, &t, "rm_rf", json!({})),
        Verdict::Ask { rule: "annotations.destructiveHint".into() }
    );
    assert_eq!(
        decide(&p, &t, "fetch", json!({})),
        Verdict::Ask { rule: "annotations.openWorldHint".into() }
    );
    assert_eq!(decide(&p, &t, "plain", json!({})), Verdict::Ask { rule: "default".into() });
    let g = GlobalPolicy { default: Some(Action::Deny), ..GlobalPolicy::default() };
    let top = Policy::new("fs", &PolicyConfig::default(), &g, &[], &paths::Lexical);
    assert!(
        matches!(decide(&top, &t, "plain", json!({})), Verdict::Deny(d) if d.rule == "policy.default")
    );
    let none = Policy::builtin("fs");
    assert_eq!(decide(&none, &t, "plain", json!({})), Verdict::Allow { rule: "builtin".into() });
    assert_eq!(
        decide(&none, &t, "rm_rf", json!({})),
        Verdict::Ask { rule: "annotations.destructiveHint".into() }
    );
    assert_eq!(
        decide(&none, &t, "read_file", json!({"path": "/x"})),
        Verdict::Allow { rule: "annotations.readOnlyHint".into() }
    );
}

#[test]
fn unlisted_invalid_outside_and_metacharacters_are_denied() {
    let t = fs_tools();
    let p = Policy::new("fs", &config(), &GlobalPolicy::default(), &[], &paths::Lexical);
    let kind = |v: Verdict| match v {
        Verdict::Deny(d) => Some(d.kind),
        _ => None,
    };
    assert_eq!(kind(decide(&p, &t, "nope", json!({}))), Some(DenialKind::Unlisted));
    assert_eq!(kind(decide(&p, &t, "read_file", json!({}))), Some(DenialKind::InvalidArguments));
    assert_eq!(
        kind(decide(&p, &t, "read_file", json!({"path": "../../etc/passwd"}))),
        Some(DenialKind::Path)
    );
    assert_eq!(
        kind(decide(&p, &t, "read_file", json!({"path": "file:///etc/passwd"}))),
        Some(DenialKind::Path)
    );
    assert_eq!(
        kind(decide(&p, &t, "run", json!({"command": "ls; rm -rf ~"}))),
        Some(DenialKind::Metacharacters)
    );
    assert_eq!(kind(decide(&p, &t, "run", json!({"command": "ls -la"}))), None);
    // A file URI in an argument not named as a path, its scheme in capitals: still a path.
    assert_eq!(
        kind(decide(&p, &t, "fetch", json!({"note": "FILE:///etc/passwd"}))),
        Some(DenialKind::Path)
    );
    // Metacharacters in other clothes: a variable without braces, a fullwidth semicolon.
    for command in ["echo $HOME", "ls；rm -rf ~", "cat $1"] {
        assert_eq!(
            kind(decide(&p, &t, "run", json!({"command": command}))),
            Some(DenialKind::Metacharacters),
            "{command}"
        );
    }
    assert_eq!(kind(decide(&p, &t, "run", json!({"command": "ls\t-la"}))), None, "a tab");
    let v = decide(&p, &t, "read_file", json!({"path": "/etc/shadow"}));
    let Verdict::Deny(d) = v else { panic!() };
    assert_eq!(d.code(), crate::jsonrpc::codes::INVALID_PARAMS);
    assert!(d.reason.contains("/path") && d.reason.contains("/srv/project"), "{}", d.reason);
    assert!(d.to_string().starts_with("denied by policy (roots): "), "{d}");
}

#[test]
fn the_roots_offered_to_the_server_confine_paths_by_default() {
    let t = fs_tools();
    let p = Policy::new(
        "fs",
        &PolicyConfig::default(),
        &GlobalPolicy::default(),
        &[PathBuf::from("/data")],
        &paths::Lexical,
    );
    assert!(matches!(
        decide(&p, &t, "read_file", json!({"path": "/data/x"})),
        Verdict::Allow { .. }
    ));
    assert!(matches!(decide(&p, &t, "read_file", json!({"path": "/etc/x"})), Verdict::Deny(_)));
}

#[test]
fn rate_limits_count_per_rule_over_a_minute() {
    let config: PolicyConfig =
        serde_json::from_value(json!({"rateLimits": {"read_*": 2}})).unwrap();
    let p = Policy::new("fs", &config, &GlobalPolicy::default(), &[], &paths::Lexical);
    let mut w = RateWindow::default();
    assert!(w.admit(&p, "read_file", 0).is_ok());
    assert!(w.admit(&p, "read_dir", 1_000).is_ok());
    let e = w.admit(&p, "read_file", 2_000).unwrap_err();
    assert_eq!(e.kind, DenialKind::RateLimited);
    assert!(e.reason.contains("retry in 58.0 s"), "{}", e.reason);
    assert!(w.admit(&p, "read_file", 60_000).is_ok(), "the first call left the window");
    assert!(w.admit(&p, "write_file", 60_001).is_ok(), "no limit on other tools");
}

#[test]
fn the_policy_digest_changes_with_the_policy() {
    let a = Policy::new("fs", &config(), &GlobalPolicy::default(), &[], &paths::Lexical);
    let b =
        Policy::new("fs", &PolicyConfig::default(), &GlobalPolicy::default(), &[], &paths::Lexical);
    assert_ne!(a.digest(), b.digest());
    assert_eq!(a.digest().len(), 64);
}

fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("..".to_owned()),
        Just(".".to_owned()),
        Just("".to_owned()),
        Just("srv".to_owned()),
        Just("project".to_owned()),
        Just("etc".to_owned()),
        Just("%2e%2e".to_owned()),
        Just("\u{FF0E}\u{FF0E}".to_owned()),
        Just("..\u{2215}..".to_owned()),
        Just("..\\..".to_owned()),
        Just("%252e%252e".to_owned()),
        Just("\u{FE52}\u{FE52}".to_owned()),
        Just("\u{FF3C}".to_owned()),
        "[a-z%.\u{FF0F}\\\\]{0,4}",
    ]
}

fn path_text() -> impl Strategy<Value = String> {
    (any::<bool>(), any::<bool>(), any::<bool>(), prop::collection::vec(segment(), 0..8)).prop_map(
        |(abs, uri, upper, segs)| {
            let body = segs.join("/");
            match (uri, abs) {
                (true, _) if upper => format!("FILE:///{body}"),
                (true, _) => format!("file:///{body}"),
                (false, true) => format!("/{body}"),
                (false, false) => body,
            }
        },
    )
}

proptest! {
    /// Whatever the arguments, an allowed call never carries a path that leaves the root in any
    /// reading of it, and the check never panics.
    #[test]
    fn no_allowed_path_leaves_the_roots(text in path_text(), name in "[a-z_]{1,8}") {
        let t = fs_tools();
        let p = Policy::new("fs", &config(), &GlobalPolicy::default(), &[], &paths::Lexical);
        let args = json!({"path": text.clone(), name: text.clone()});
        if let Verdict::Allow { .. } = decide(&p, &t, "read_file", args) {
            // Checked by an oracle written apart from `policy::paths` (the code under test).
            prop_assert!(!crate::testkit::path_escapes("/srv/project", &text), "{text:?} allowed");
        }
    }
}

#[test]
fn duplicates_zero_limits_and_untrusted_annotations() {
    let twice = ToolTable::new(&[
        tool(
            json!({"name": "search", "description": "x", "annotations": {"destructiveHint": true}, "inputSchema": {"type": "object"}}),
        ),
        tool(
            json!({"name": "search", "annotations": {"readOnlyHint": true}, "inputSchema": {"type": "object"}}),
        ),
    ]);
    assert!(twice.is_duplicated("search") && twice.get("search").is_none());
    let zero: PolicyConfig = serde_json::from_value(json!({"rateLimits": {"x": 0}})).unwrap();
    let p = Policy::new("s", &zero, &GlobalPolicy::default(), &[], &paths::Lexical);
    assert_eq!(RateWindow::default().admit(&p, "x", 0).unwrap_err().kind, DenialKind::RateLimited);
    let t = fs_tools();
    let distrust: PolicyConfig =
        serde_json::from_value(json!({"default": "deny", "trustAnnotations": false})).unwrap();
    let p = Policy::new("fs", &distrust, &GlobalPolicy::default(), &[], &paths::Lexical);
    assert!(
        matches!(decide(&p, &t, "read_file", json!({"path": "/a"})), Verdict::Deny(d) if d.rule == "default")
    );
    let none: PolicyConfig = serde_json::from_value(json!({"roots": []})).unwrap();
    let p = Policy::new("fs", &none, &GlobalPolicy::default(), &[], &paths::Lexical);
    assert!(
        matches!(decide(&p, &t, "read_file", json!({"path": "/a"})), Verdict::Deny(d) if d.kind == DenialKind::Path)
    );
}
