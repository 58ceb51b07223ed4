//! Supervision in the library (`ServerSpec::restart`): a real server process that exits is
//! restarted behind the same `Client`; calls in flight fail with a typed error and are never
//! re-sent; calls while it is down fail at once; subscriptions and the log level are given
//! again; a crash loop stops with a clear error; a shutdown is not restarted.

use std::time::{Duration, Instant};

use ringmcp::host::{Error, RestartPolicy, ServerEvent, ServerHealth};
use ringmcp::protocol::CloseReason;
use serde_json::json;

use crate::util::{TempDir, faulty, host, recv_until};

fn policy(initial_ms: u64, max_restarts: Option<u32>) -> RestartPolicy {
    RestartPolicy { initial_delay_ms: initial_ms, max_delay_ms: 2_000, max_restarts }
}

/// Events until `want` matches one (the others are returned too), or a panic at `deadline`.
fn until(
    events: &ringmcp::host::EventStream,
    want: impl Fn(&ServerEvent) -> bool,
    what: &str,
) -> Vec<ServerEvent> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    loop {
        let Some(event) = recv_until(events, deadline) else {
            panic!("no {what} within 30 s; events: {seen:?}")
        };
        let done = want(&event);
        seen.push(event);
        if done {
            return seen;
        }
    }
}

#[test]
fn a_server_that_exits_is_restarted_behind_the_same_client() {
    let host = host();
    let client = host.spawn_blocking(faulty("sup").restart(policy(400, None))).unwrap();
    let events = client.events();
    let readme = client.blocking().list_resources().unwrap()[0].uri.clone();
    client.blocking().subscribe_resource(&readme).unwrap();
    client.blocking().set_log_level("info").unwrap();
    let pid = client.blocking().stats().unwrap().pid;

    // A call in flight when the server exits: a typed error, not re-sent.
    let slow = client.call_tool("slow", json!({"ms": 20_000}));
    let err = client.blocking().call_tool("exit", json!({"code": 7})).unwrap_err();
    assert!(matches!(err, Error::Restarted { .. }), "{err}");
    assert!(err.to_string().contains("not re-sent"), "{err}");
    let err = futures::executor::block_on(slow).unwrap_err();
    assert!(matches!(err, Error::Restarted { .. }), "{err}");

    // While it is down: refused at once, saying when it is tried again.
    let err = client.blocking().call_tool("echo", json!({"text": "x"})).unwrap_err();
    let Error::Unavailable { retry_after, .. } = &err else { panic!("{err}") };
    assert!(retry_after.is_some(), "{err}");
    assert!(err.to_string().contains("being restarted"), "{err}");

    let seen = until(&events, |e| matches!(e, ServerEvent::Restarted { .. }), "Restarted");
    assert!(
        seen.iter().any(|e| matches!(e, ServerEvent::Restarting { attempt: 1, reason, .. }
            if reason.contains("status 7"))),
        "{seen:?}"
    );
    assert!(!seen.iter().any(|e| matches!(e, ServerEvent::Closed(_))), "{seen:?}");
    // Its lists are announced as changed.
    until(
        &events,
        |e| matches!(e, ServerEvent::Notification(n) if n.method == "notifications/tools/list_changed"),
        "tools/list_changed",
    );

    let status = client.supervision_status().unwrap();
    assert_eq!((&status.health, status.restarts), (&ServerHealth::Up, 1), "{status:?}");
    assert!(status.last_error.unwrap().contains("status 7"));
    let echo = client.blocking().call_tool("echo", json!({"text": "back"})).unwrap();
    assert_eq!(echo.text(), "back");
    assert_ne!(client.blocking().stats().unwrap().pid, pid, "a new process");
    // The subscription was given again: the new process notifies it.
    client.blocking().call_tool("touch", json!({"times": 1})).unwrap();
    until(
        &events,
        |e| matches!(e, ServerEvent::ResourceUpdated { uri, .. } if *uri == readme),
        "the update",
    );

    // A shutdown is not a crash: no restart, the stream ends.
    let reason = client.blocking().shutdown();
    assert!(matches!(reason, CloseReason::Exited(0) | CloseReason::Shutdown), "{reason}");
    let seen = until(&events, |e| matches!(e, ServerEvent::Closed(_)), "Closed");
    assert!(!seen.iter().any(|e| matches!(e, ServerEvent::Restarting { .. })), "{seen:?}");
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(client.supervision_status().unwrap().restarts, 1);
}

/// A server that starts once and then fails at every start: restarted `maxRestarts` times,
/// then given up on with a clear error, and nothing left running.
#[test]
fn a_crash_loop_stops_after_max_restarts() {
    let dir = TempDir::new("sup-loop");
    let marker = dir.0.join("started");
    let script = format!(
        "if [ -e '{m}' ]; then echo 'config broken' >&2; exit 3; fi; touch '{m}'; exec '{bin}' serve --fault-tools",
        m = marker.display(),
        bin = crate::util::ringmcp_bin().display()
    );
    let spec = ringmcp::host::ServerSpec::new("loop", "sh")
        .args(["-c", &script])
        .sandbox(None)
        .restart(policy(50, Some(3)));
    let host = host();
    let client = host.spawn_blocking(spec).unwrap();
    let events = client.events();
    let _ = client.blocking().call_tool("exit", json!({"code": 1}));
    let seen = until(&events, |e| matches!(e, ServerEvent::Closed(_)), "Closed");
    let restarting = seen.iter().filter(|e| matches!(e, ServerEvent::Restarting { .. })).count();
    assert_eq!(restarting, 3, "{seen:?}");
    let Some(ServerEvent::Closed(CloseReason::GaveUp { failures, last })) = seen.last() else {
        panic!("{seen:?}")
    };
    assert_eq!(*failures, 4);
    assert!(last.contains("config broken"), "the stderr of the last try: {last}");
    let status = client.supervision_status().unwrap();
    assert_eq!(status.health, ServerHealth::Stopped);
    let err = client.blocking().call_tool("echo", json!({"text": "x"})).unwrap_err();
    let Error::Unavailable { retry_after: None, .. } = &err else { panic!("{err}") };
    assert!(err.to_string().contains("not restarted again"), "{err}");
}

/// Dropping the client of a supervised server stops it for good: no restart, no process left.
#[test]
fn dropping_a_supervised_client_is_not_a_crash() {
    let host = host();
    let client = host.spawn_blocking(faulty("sup-drop").restart(policy(50, None))).unwrap();
    let pid = client.blocking().stats().unwrap().pid;
    drop(client);
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        assert!(Instant::now() < deadline, "server {pid} still running");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    // Restart threads are counted process-wide, and other supervise tests running beside this
    // one have theirs while their servers restart: wait for a moment with none. One that
    // outlived this client would keep the count above zero for good.
    let restarters = || {
        let threads = std::fs::read_dir("/proc/self/task").unwrap().flatten();
        threads
            .filter(|t| {
                std::fs::read_to_string(t.path().join("comm"))
                    .is_ok_and(|c| c.trim() == "ringmcp-restart")
            })
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while restarters() > 0 {
        assert!(Instant::now() < deadline, "a restart thread outlived the client");
        std::thread::sleep(Duration::from_millis(20));
    }
}
