//! Servers that misbehave: each fault gives a precise error, and everything else carries on.

use std::future::Future;
use std::time::{Duration, Instant};

use ringmcp::host::{Host, ServerEvent, ServerSpec};
use ringmcp::protocol::{CloseReason, RequestError, Root, Violation};
use serde_json::{Value, json};

use crate::util::{faulty, host, reference};

#[test]
fn exit_mid_call_fails_that_call_fast_and_names_the_server() {
    let host = host();
    let crashy = host.spawn_blocking(faulty("crashy")).unwrap();
    let healthy = host.spawn_blocking(reference("healthy", &[])).unwrap();
    let slow_other = healthy.call_tool("slow", json!({"ms": 300}));
    let hung = crashy.call_tool("hang", json!({}));

    let started = Instant::now();
    let err = crashy.blocking().call_tool("exit", json!({"code": 3})).unwrap_err();
    let elapsed = started.elapsed();
    // The exit is seen on the pidfd, not by the 30 s request timeout: a generous bound.
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    assert!(
        matches!(err.request_error(), Some(RequestError::Closed(CloseReason::Exited(3)))),
        "{err}"
    );
    let msg = err.to_string();
    assert!(msg.contains("crashy") && msg.contains("exited with status 3"), "{msg}");

    // The other in-flight request on the crashed server fails too, and later calls fail at once.
    let err = futures_executor::block_on(hung).unwrap_err();
    assert!(matches!(err.request_error(), Some(RequestError::Closed(_))), "{err}");
    assert!(crashy.blocking().call_tool("echo", json!({"text": "x"})).is_err());

    // The other server never noticed.
    assert_eq!(futures_executor::block_on(slow_other).unwrap().text(), "slept 300 ms");
    assert_eq!(healthy.blocking().call_tool("echo", json!({"text": "ok"})).unwrap().text(), "ok");

    let events: Vec<ServerEvent> = std::iter::from_fn(|| crashy.events().try_recv().ok()).collect();
    assert!(
        events.iter().any(|e| matches!(e, ServerEvent::Closed(CloseReason::Exited(3)))),
        "{events:?}"
    );
}

#[test]
fn non_json_stdout_line_is_counted_and_later_answers_arrive() {
    let host = host();
    let client = host.spawn_blocking(faulty("noisy")).unwrap();
    let r = client.blocking().call_tool("noise", json!({})).unwrap();
    assert_eq!(r.text(), "noise");
    assert_eq!(
        client.blocking().call_tool("echo", json!({"text": "after"})).unwrap().text(),
        "after"
    );
    let stats = client.blocking().stats().unwrap();
    assert_eq!(stats.session.violations, 1);
    let event = client.events().try_recv().unwrap();
    assert!(matches!(event, ServerEvent::Violation(Violation::NotJson { .. })), "{event:?}");
}

#[test]
fn a_server_that_never_answers_times_out_and_stays_usable() {
    let host = host();
    let client = host.spawn_blocking(faulty("hangs")).unwrap();
    let err = client
        .blocking()
        .call_tool_with_timeout("hang", json!({}), Some(Duration::from_millis(300)))
        .unwrap_err();
    assert!(
        matches!(err.request_error(), Some(RequestError::Timeout { method, .. }) if method == "tools/call"),
        "{err}"
    );
    assert!(err.to_string().contains("hangs"));
    assert_eq!(
        client.blocking().call_tool("echo", json!({"text": "still here"})).unwrap().text(),
        "still here"
    );
    assert_eq!(client.blocking().stats().unwrap().session.timeouts, 1);
}

#[test]
fn oversized_line_fails_its_request_precisely_and_the_stream_recovers() {
    let host = Host::builder()
        .max_frame(64 * 1024)
        .spill(None)
        .request_timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let client = host.spawn_blocking(reference("big", &[])).unwrap();
    let pending_echo = client.call_tool("slow", json!({"ms": 100}));
    let err = client.blocking().call_tool("blob", json!({"bytes": 1_000_000})).unwrap_err();
    let Some(RequestError::FrameTooLarge { len, max }) = err.request_error() else {
        panic!("{err}")
    };
    assert!(*len > 1_000_000 && *max == 64 * 1024, "{err}");
    assert_eq!(futures_executor::block_on(pending_echo).unwrap().text(), "slept 100 ms");
    assert_eq!(
        client.blocking().call_tool("echo", json!({"text": "next"})).unwrap().text(),
        "next"
    );
}

/// With spilling on (the default), the frame limit caps the spill threshold: a line longer
/// than `max_frame` is spilled, not refused and not held in memory.
#[test]
fn with_spilling_a_line_past_max_frame_is_spilled() {
    let host = Host::builder().max_frame(64 * 1024).build().unwrap();
    let client = host.spawn_blocking(reference("capped", &[])).unwrap();
    let r = client.blocking().call_tool("blob", json!({"bytes": 1_000_000})).unwrap();
    let ringmcp::protocol::Content::Other { kind, raw } = &r.content[0] else { panic!("{r:?}") };
    assert_eq!((kind.as_str(), raw["size"].as_u64()), ("resource_link", Some(1_000_000)));
    assert_eq!(client.blocking().stats().unwrap().answers_spilled, 1);
}

#[test]
fn a_megabyte_of_stderr_per_call_never_stalls() {
    let host = Host::builder().stderr_capacity(4096).build().unwrap();
    let client = host.spawn_blocking(faulty("chatty")).unwrap();
    for _ in 0..20 {
        let r = client.blocking().call_tool("stderr", json!({"bytes": 1 << 20})).unwrap();
        assert!(r.text().contains("1048576"), "{}", r.text());
    }
    // stderr is drained concurrently with stdout; give the last chunk a moment to be read.
    let deadline = Instant::now() + Duration::from_secs(10);
    let stats = loop {
        let stats = client.blocking().stats().unwrap();
        if stats.stderr_bytes >= 20 << 20 || Instant::now() > deadline {
            break stats;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(stats.stderr_bytes >= 20 << 20, "read {} stderr bytes", stats.stderr_bytes);
    assert_eq!(stats.stderr_tail.len(), 4096);
}

#[test]
fn a_server_that_dies_before_initialize_fails_spawn() {
    let host = host();
    let err = host
        .spawn_blocking(ServerSpec::new("dead", "sh").args(["-c", "echo bye >&2; exit 7"]))
        .unwrap_err();
    assert!(
        matches!(err.request_error(), Some(RequestError::Closed(CloseReason::Exited(7)))),
        "{err}"
    );
}

/// A server that dies before its handshake: the error carries its exit status and the end of
/// its stderr, and for a sandboxed server how to find out what it needs; the CLI prints it.
#[test]
fn a_server_that_dies_at_start_says_why() {
    let Some(python) = crate::util::python3() else { return };
    let script = "import sys\nprint('loading config', file=sys.stderr)\n\
                  print(\"PermissionError: [Errno 13] Permission denied: '/srv/trace'\", file=sys.stderr)\n\
                  sys.exit(1)";
    let host = host();
    for sandboxed in [true, false] {
        let spec = ServerSpec::new("dies", &python).args(["-c", script]);
        let spec = if sandboxed { spec } else { spec.sandbox(None) };
        let err = host.spawn_blocking(spec).unwrap_err();
        assert!(
            matches!(err.request_error(), Some(RequestError::Closed(CloseReason::Exited(1)))),
            "{err}"
        );
        let text = err.to_string();
        assert!(text.contains("\n    loading config\n    PermissionError"), "{text}");
        assert_eq!(text.contains("ringmcp sandbox run --"), sandboxed, "{text}");
    }
    let out = std::process::Command::new(crate::util::ringmcp_bin())
        .args(["call", "echo", "{}", "--"])
        .arg(&python)
        .args(["-c", script])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("Permission denied: '/srv/trace'") && stderr.ends_with('\n'),
        "{stderr}"
    );
}

#[test]
fn a_server_that_never_initializes_times_out() {
    let host = host();
    let spec =
        ServerSpec::new("mute", "sleep").arg("100").request_timeout(Duration::from_millis(200));
    let err = host.spawn_blocking(spec).unwrap_err();
    assert!(
        matches!(err.request_error(), Some(RequestError::Timeout { method, .. }) if method == "initialize"),
        "{err}"
    );
}

#[test]
fn notifications_are_events_and_server_requests_are_answered() {
    let host = Host::builder()
        .roots(vec![Root { uri: "file:///workspace".into(), name: Some("ws".into()) }])
        .build()
        .unwrap();
    let client = host.spawn_blocking(faulty("talker")).unwrap();
    client.blocking().call_tool("notify", json!({})).unwrap();
    let events = client.events();
    let methods: Vec<String> = std::iter::from_fn(|| events.try_recv().ok())
        .filter_map(|e| match e {
            ServerEvent::Notification(n) => Some(n.method),
            _ => None,
        })
        .collect();
    assert!(methods.contains(&"notifications/tools/list_changed".to_string()), "{methods:?}");
    assert!(methods.contains(&"notifications/message".to_string()), "{methods:?}");

    let r = client.blocking().call_tool("ask_roots", json!({})).unwrap();
    assert!(r.text().contains("file:///workspace"), "{}", r.text());
    // New roots are answered from then on (and announced with roots/list_changed).
    client.set_roots(vec![Root { uri: "file:///elsewhere".into(), name: None }]).unwrap();
    let r = client.blocking().call_tool("ask_roots", json!({})).unwrap();
    assert!(
        r.text().contains("file:///elsewhere") && !r.text().contains("workspace"),
        "{}",
        r.text()
    );

    // Without roots configured, roots/list gets "method not found".
    let plain = host_without_roots();
    let client = plain.spawn_blocking(faulty("talker2")).unwrap();
    let r = client.blocking().call_tool("ask_roots", json!({})).unwrap();
    assert!(r.text().contains("-32601"), "{}", r.text());
}

fn host_without_roots() -> Host {
    host()
}

#[test]
fn queue_full_is_refused_at_once_with_retry_after_and_loses_nothing() {
    use ringmcp::jsonrpc::ErrorObject;
    let host =
        Host::builder().max_pending(8).request_timeout(Duration::from_secs(30)).build().unwrap();
    let client = host.spawn_blocking(reference("busy", &[])).unwrap();
    // Learn a service rate first, so retryAfterSeconds is an estimate rather than the default.
    for _ in 0..50 {
        client.blocking().call_tool("echo", json!({"text": "warm"})).unwrap();
    }
    // Slow enough that no admitted call can end before the refusal, even on a loaded machine.
    let mut inflight: Vec<_> =
        (0..8).map(|i| Box::pin(client.call_tool("slow", json!({"ms": 8000 + i})))).collect();
    let err = client.blocking().call_tool("echo", json!({"text": "one too many"})).unwrap_err();
    // Refused without waiting for a slot: every admitted call is still under way.
    let waker = futures::task::noop_waker();
    let mut cx = std::task::Context::from_waker(&waker);
    for call in &mut inflight {
        assert!(call.as_mut().poll(&mut cx).is_pending(), "the refusal waited for a slot");
    }
    let Some(RequestError::QueueFull { limit: 8, retry_after }) = err.request_error() else {
        panic!("{err}")
    };
    assert!(*retry_after > Duration::ZERO);
    let obj = ErrorObject::from(&err);
    assert_eq!(obj.code, -32000);
    assert_eq!(obj.message, "Server queue limit reached. Backpressure applied.");
    let secs = obj.data.as_ref().and_then(|d| d["retryAfterSeconds"].as_f64()).unwrap();
    assert!(secs > 0.0, "{obj}");
    // Every admitted request still completes, and the slots come back.
    let done = futures_executor::block_on(futures::future::join_all(inflight));
    for (i, r) in done.into_iter().enumerate() {
        assert_eq!(r.unwrap().text(), format!("slept {} ms", 8000 + i));
    }
    assert_eq!(
        client.blocking().call_tool("echo", json!({"text": "again"})).unwrap().text(),
        "again"
    );
}

#[test]
fn an_oversized_request_fails_before_sending_and_the_server_lives_on() {
    let host = host();
    let spec = reference("small-requests", &[]).max_request_bytes(64 * 1024);
    let client = host.spawn_blocking(spec).unwrap();
    let err =
        client.blocking().call_tool("echo", json!({"text": "x".repeat(100_000)})).unwrap_err();
    let Some(RequestError::RequestTooLarge { len, max }) = err.request_error() else {
        panic!("{err}")
    };
    assert!(*len > 100_000 && *max == 64 * 1024, "{err}");
    // Only the handshake was sent: the `server/discover` probe, then `initialize`.
    assert_eq!(client.blocking().stats().unwrap().session.requests, 2);
    assert_eq!(
        client.blocking().call_tool("echo", json!({"text": "fits"})).unwrap().text(),
        "fits"
    );
}

/// Dropping a call's future cancels it: the server is sent `notifications/cancelled` (it says
/// so itself), its late answer is discarded and counted, never delivered, and the session
/// carries on.
#[test]
fn a_dropped_call_is_cancelled_and_its_late_answer_discarded() {
    let host = Host::builder().request_timeout(Duration::from_secs(30)).build().unwrap();
    let client = host.spawn_blocking(crate::util::faulty("dropper")).unwrap();
    // Long enough that the drop comes before the answer even when the machine is loaded.
    let slow = client.call_tool("slow", json!({"ms": 3000}));
    let kept = client.call_tool("slow", json!({"ms": 3500}));
    // Drop it once it was written (a call still queued is dropped without a notification).
    let sent = Instant::now() + Duration::from_secs(10);
    while client.blocking().stats().unwrap().session.requests < 4 && Instant::now() < sent {
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(slow);
    assert_eq!(futures_executor::block_on(kept).unwrap().text(), "slept 3500 ms");
    let deadline = Instant::now() + Duration::from_secs(10);
    let stats = loop {
        let stats = client.blocking().stats().unwrap().session;
        if stats.late_answers == 1 || Instant::now() > deadline {
            break stats;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!((stats.cancelled, stats.late_answers, stats.violations), (1, 1, 0), "{stats:?}");
    assert_eq!(client.blocking().call_tool("echo", json!({"text": "on"})).unwrap().text(), "on");
    let told: Vec<Value> =
        serde_json::from_str(&client.blocking().call_tool("cancelled", json!({})).unwrap().text())
            .unwrap();
    assert_eq!(told.len(), 1, "the server received one notifications/cancelled: {told:?}");
    assert!(told[0].is_number() || told[0].is_string(), "{told:?}");
}

/// Keep-alive: a server that stops answering (here: frozen for 5 s) is reported as
/// unresponsive by its unanswered ping; once it thaws, the connection carries on. (The host's
/// timeout, the pings' and the handshake's, is 2 s: a loaded machine's start-up fits.)
#[test]
fn keep_alive_reports_a_frozen_server() {
    use ringmcp::host::ServerEvent;
    let host = Host::builder()
        .keep_alive(Duration::from_millis(100))
        .request_timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    let client = host.spawn_blocking(crate::util::faulty("frozen")).unwrap();
    let events = client.events();
    let long = Some(Duration::from_secs(20));
    let call = client.call_tool_with_timeout("freeze", json!({"ms": 5000}), long);
    assert_eq!(futures_executor::block_on(call).unwrap().text(), "froze 5000 ms");
    let unresponsive = std::iter::from_fn(|| events.try_recv().ok())
        .filter(|e| matches!(e, ServerEvent::Unresponsive { .. }))
        .count();
    assert!(unresponsive >= 1, "no Unresponsive event");
    // Thawed: calls work (with a timeout of their own: the host's 2 s is the pings').
    let echo = client.blocking().call_tool_with_timeout("echo", json!({"text": "ok"}), long);
    assert_eq!(echo.unwrap().text(), "ok");
    let stats = client.blocking().stats().unwrap().session;
    assert!(stats.keepalive_pings >= 2 && stats.keepalive_timeouts >= 1, "{stats:?}");
    assert_eq!(stats.violations, 0, "{stats:?}");
}
