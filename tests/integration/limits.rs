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

/// The audit trail's disk fills up: a call whose decision cannot be recorded is refused (the
/// audit fails closed) with an error that says so and what to do; once there is room again,
/// calls go through and are recorded.
#[test]
fn a_full_disk_under_the_audit_trail_fails_closed_and_says_so() {
    use ringmcp::host::{Host, PolicySettings};
    use serde_json::json;
    let dir = TempDir::new("audit-full");
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs"])
        .arg(&dir.0)
        .output();
    match mounted {
        Ok(out) if out.status.success() => {}
        other => {
            crate::util::skip_machine(format!("cannot mount a tmpfs (not root?): {other:?}"));
            return;
        }
    }
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _mount = Unmount(dir.0.clone());
    let log = dir.0.join("audit.jsonl");
    let audit = ringmcp::host::audit::AuditLog::open(
        serde_json::from_value(json!({"path": log, "fsync": "always"})).unwrap(),
    )
    .unwrap();
    let settings =
        PolicySettings { audit: Some(std::sync::Arc::new(audit)), ..PolicySettings::default() };
    let host = Host::builder().policy(settings).build().unwrap();
    let client = host.spawn_blocking(crate::util::reference("audited", &[]).sandbox(None)).unwrap();
    assert_eq!(client.blocking().call_tool("echo", json!({"text": "a"})).unwrap().text(), "a");
    // Fill the rest of the disk.
    let filler = dir.0.join("filler");
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&filler).unwrap();
        while f.write_all(&[b'x'; 4096]).is_ok() {}
        let _ = f.sync_all();
    }
    let err = client.blocking().call_tool("echo", json!({"text": "b"})).unwrap_err();
    let ringmcp::host::Error::Policy { denial, .. } = &err else { panic!("{err}") };
    assert_eq!(denial.kind, ringmcp::policy::DenialKind::Audit, "{err}");
    let message = err.to_string();
    assert!(message.contains("audit trail cannot be written"), "{message}");
    assert!(message.contains("No space left") || message.contains("no space"), "{message}");
    assert!(message.contains("free space"), "what to do: {message}");
    std::fs::remove_file(&filler).unwrap();
    assert_eq!(client.blocking().call_tool("echo", json!({"text": "c"})).unwrap().text(), "c");
    let trail = std::fs::read_to_string(&log).unwrap();
    assert!(trail.contains("\"c\"") || trail.lines().count() >= 2, "{trail}");
    drop((client, host));
}

/// Ten thousand servers configured, under an open-file limit that cannot hold them: the
/// gateway refuses at once, before starting any, saying how many files they need, the limit,
/// and what to do; nothing is left running.
#[test]
fn ten_thousand_servers_configured_are_refused_up_front_with_the_numbers() {
    let tmp = TempDir::new("ten-thousand");
    let config = tmp.0.join("huge.json");
    let servers: serde_json::Map<String, serde_json::Value> = (0..10_000)
        .map(|i| {
            let spec = serde_json::json!({"command": ringmcp_bin(), "args": ["serve"]});
            (format!("s{i:05}"), spec)
        })
        .collect();
    std::fs::write(
        &config,
        serde_json::to_vec(&serde_json::json!({"mcpServers": servers})).unwrap(),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -n 4096 && exec "$0" gateway --config "$1" </dev/null"#)
        .arg(ringmcp_bin())
        .arg(&config)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("10000 servers"), "{stderr}");
    assert!(stderr.contains("may open 4096"), "{stderr}");
    assert!(stderr.contains("ulimit -n 65536"), "what to do: {stderr}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "refused up front");
}

/// A memory cgroup of this test's own (v1's memory controller, or v2), removed on drop.
struct MemoryCgroup {
    dir: std::path::PathBuf,
    /// Its OOM-kill count file and the key in it.
    events: (std::path::PathBuf, &'static str),
}

impl MemoryCgroup {
    fn new(limit: u64) -> Result<MemoryCgroup, String> {
        let name = format!("ringmcp-test-mem-{}", std::process::id());
        let v1 = std::path::Path::new("/sys/fs/cgroup/memory");
        let (dir, limit_file, events) = if v1.join("memory.limit_in_bytes").exists() {
            let dir = v1.join(&name);
            let events = (dir.join("memory.oom_control"), "oom_kill");
            (dir, "memory.limit_in_bytes", events)
        } else {
            let root = std::path::Path::new("/sys/fs/cgroup");
            let controllers = std::fs::read_to_string(root.join("cgroup.subtree_control"));
            if !controllers.is_ok_and(|c| c.split_whitespace().any(|c| c == "memory")) {
                return Err("no memory controller delegated at /sys/fs/cgroup".into());
            }
            let dir = root.join(&name);
            let events = (dir.join("memory.events"), "oom_kill");
            (dir, "memory.max", events)
        };
        std::fs::create_dir(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let cgroup = MemoryCgroup { dir, events };
        std::fs::write(cgroup.dir.join(limit_file), limit.to_string())
            .map_err(|e| format!("setting its limit: {e}"))?;
        Ok(cgroup)
    }

    fn oom_kills(&self) -> u64 {
        let text = std::fs::read_to_string(&self.events.0).unwrap_or_default();
        text.lines().find_map(|l| l.strip_prefix(self.events.1)?.trim().parse().ok()).unwrap_or(0)
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        // Its processes are gone by now (the command was waited for).
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

/// The host's own memory cgroup nearly full: `ringmcp bench` in an 80 MiB cgroup with 64
/// answers of 3 MiB in flight at once (192 MiB if each were held; they are under the usual
/// 4 MiB spill threshold). Once over half of the limit, the reactor spills every answer past
/// 64 KiB instead of holding it: every call answers, nothing is OOM-killed. Before, the kernel
/// killed the bench within a second.
#[test]
fn the_hosts_own_memory_cgroup_nearly_full_spills_instead_of_dying() {
    let cgroup = match MemoryCgroup::new(80 << 20) {
        Ok(c) => c,
        Err(e) => {
            crate::util::skip_machine(format!("cannot make a memory cgroup (not root?): {e}"));
            return;
        }
    };
    let procs = cgroup.dir.join("cgroup.procs");
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#"echo $$ > "$0" && exec "$@""#)
        .arg(&procs)
        .arg(ringmcp_bin())
        .args(["bench", "--tool", "blob", "--payload", "3MiB", "--concurrency", "64"])
        .args(["--servers", "4", "--requests", "1500", "--warmup", "10", "--json"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(cgroup.oom_kills(), 0, "OOM-killed in its cgroup: {stderr}");
    assert!(out.status.success(), "{}: {stdout}\n{stderr}", out.status);
    let report: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(report["ok"], 1500, "{report}");
    assert!(stderr.contains("the host's memory is short"), "it said so: {stderr}");
}
