//! The security gateway's decision per `tools/call` (PERFORMANCE.md, "The policy check"): a
//! typical file tool's schema (a path, an optional encoding, a line range), a policy with glob
//! rules and a root, the arguments validated, the path confined (lexically, and resolved on the
//! host's file system), the command check. Target: well under 5 µs per call.
//!
//! Run with `cargo bench --bench policy`.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use ringmcp::host::resolve::HostFs;
use ringmcp::policy::paths::Lexical;
use ringmcp::policy::{GlobalPolicy, Policy, PolicyConfig, ToolTable, Verdict};
use ringmcp::protocol::Tool;
use serde_json::json;

fn bench(c: &mut Criterion) {
    let tool: Tool = serde_json::from_value(json!({
        "name": "read_text_file",
        "description": "Read a file's contents as text.",
        "annotations": {"readOnlyHint": true},
        "inputSchema": {"type": "object", "additionalProperties": false, "required": ["path"],
            "properties": {
                "path": {"type": "string", "minLength": 1},
                "encoding": {"type": "string", "enum": ["utf-8", "latin1"]},
                "head": {"type": "integer", "minimum": 0},
                "tail": {"type": "integer", "minimum": 0}}}
    }))
    .unwrap();
    let table = ToolTable::new(&[tool]);
    let root = std::env::temp_dir();
    let config: PolicyConfig = serde_json::from_value(json!({
        "default": "ask",
        "tools": {"read_*": "allow", "delete_*": "deny", "write_file": "ask"},
        "roots": [root],
        "commandArgs": ["command"]
    }))
    .unwrap();
    let args = json!({"path": PathBuf::from(&root).join("project/notes.txt"), "head": 20});
    let mut group = c.benchmark_group("policy_check");
    for (label, resolver) in
        [("lexical", &Lexical as &dyn ringmcp::policy::paths::Resolve), ("host_fs", &HostFs)]
    {
        let policy = Policy::new("fs", &config, &GlobalPolicy::default(), &[], resolver);
        assert!(matches!(
            policy.check_call("read_text_file", &args, table.get("read_text_file"), resolver),
            Verdict::Allow { .. }
        ));
        group.bench_function(label, |b| {
            b.iter(|| {
                black_box(policy.check_call(
                    "read_text_file",
                    black_box(&args),
                    table.get("read_text_file"),
                    resolver,
                ))
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
