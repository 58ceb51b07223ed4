//! No process, zombie or fd outlives its server. Runs in a child test process of its own, so
//! the other tests' servers do not disturb the counts.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::util::{child_pids, host, open_fds, reference};

const CHILD_ENV: &str = "RINGMCP_LEAK_TEST_CHILD";

#[test]
fn two_hundred_spawn_shutdown_cycles_leak_nothing() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "leaks::cycles_in_isolation",
            "--include-ignored",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(CHILD_ENV, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "leak test failed:\n{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "leak test did not run:\n{stdout}");
}

#[test]
#[ignore = "run by two_hundred_spawn_shutdown_cycles_leak_nothing in a process of its own"]
fn cycles_in_isolation() {
    assert!(std::env::var_os(CHILD_ENV).is_some(), "run through the wrapper test");
    let fds_before = open_fds();
    {
        let host = host();
        let fds_with_host = open_fds();
        for i in 0..200 {
            let client = host.spawn_blocking(reference(&format!("cycle{i}"), &[])).unwrap();
            client.call_tool_blocking("echo", json!({"text": "x"})).unwrap();
            if i % 2 == 0 {
                client.shutdown_blocking();
            } else {
                drop(client); // shutdown through Drop, without waiting
            }
        }
        // Dropped clients shut down asynchronously; wait for the reactor to reap them.
        let deadline = Instant::now() + Duration::from_secs(20);
        while (!child_pids().is_empty() || open_fds() != fds_with_host) && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(child_pids(), Vec::<u32>::new(), "children left while the host lives");
        assert_eq!(open_fds(), fds_with_host, "fds left while the host lives");
        // A server still running when the host is dropped is shut down by the drop.
        let _running = host.spawn_blocking(reference("at-drop", &[])).unwrap();
    }
    assert_eq!(child_pids(), Vec::<u32>::new(), "children (or zombies) left after the host");
    assert_eq!(open_fds(), fds_before, "fds left after the host");
}
