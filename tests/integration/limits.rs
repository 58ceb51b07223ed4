//! The host at its own limits (docs/sandbox.md, "Layers"): each is a clear error that
//! says what to do, never a crash, a hang or a server refused for the wrong reason.

use std::process::Command;

use crate::util::{TempDir, ringmcp_bin};

/// A host started under a low `ulimit -n` (soft and hard 48): the servers that fit start,
/// sandboxed (the sandbox holds their `RLIMIT_NOFILE` to the host's hard limit instead of
/// failing every spawn with `EPERM` asking for 4096), and each one past the limit is left out
/// with an error naming the limit and what to do; the command still answers.
#[test]
fn the_fd_limit_reached_is_a_clear_error_and_the_others_run() {
    let tmp = TempDir::new("fd-limit");
    let config = tmp.0.join("many.json");
    let servers: serde_json::Map<String, serde_json::Value> = (0..30)
        .map(|i| {
            let spec = serde_json::json!({"command": ringmcp_bin(), "args": ["serve"]});
            (format!("s{i:02}"), spec)
        })
        .collect();
    std::fs::write(&config, serde_json::json!({"mcpServers": servers}).to_string()).unwrap();
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -n 48 && exec "$0" route --json --k 1000 --config "$1" echo"#)
        .arg(ringmcp_bin())
        .arg(&config)
        .output()
        .expect("sh runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON out");
    let routed: std::collections::BTreeSet<&str> = (v["tools"].as_array().unwrap().iter())
        .filter_map(|t| t["name"].as_str()?.split_once("__").map(|(server, _)| server))
        .collect();
    let routed = routed.len();
    assert!(routed >= 2, "some servers fit under 48 fds: {v}\n{stderr}");
    assert!(
        !stderr.contains("setrlimit"),
        "the sandbox asked for more than the host has:\n{stderr}"
    );
    let left_out: Vec<&str> = stderr.lines().filter(|l| l.contains("left out")).collect();
    assert!(!left_out.is_empty(), "30 servers cannot fit in 48 fds:\n{stderr}");
    for line in &left_out {
        assert!(
            line.contains("open-file limit of 48") && line.contains("ulimit -n"),
            "the error names the limit and what to do: {line}"
        );
    }
    assert_eq!(routed + left_out.len(), 30, "each server is routed or left out, once:\n{stderr}");
}
