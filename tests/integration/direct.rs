//! The direct write (docs/host.md): requests to an idle server written on the caller's
//! thread, against the real reference server. Each test checks the requests really went
//! that way (`ServerStats::direct_writes`), then that they fare as queued ones do.

use std::time::{Duration, Instant};

use ringmcp::host::Host;
use ringmcp::protocol::{CloseReason, RequestError};
use serde_json::json;

use crate::util::{faulty, host, reference};

#[test]
fn calls_to_an_idle_server_are_written_by_their_callers_and_off_means_none_are() {
    for on in [true, false] {
        let host = Host::builder()
            .request_timeout(Duration::from_secs(30))
            .direct_write(on)
            .build()
            .unwrap();
        let client = host.spawn_blocking(reference("direct", &[])).unwrap();
        for i in 0..50 {
            let text = format!("call {i}");
            let r = client.blocking().call_tool("echo", json!({ "text": text })).unwrap();
            assert_eq!(r.text(), text);
        }
        let stats = client.blocking().stats().unwrap();
        if on {
            // The first call after the handshake may find the loan not made yet.
            assert!(stats.direct_writes >= 49, "{} of 50 written directly", stats.direct_writes);
        } else {
            assert_eq!(stats.direct_writes, 0);
        }
        // Every request is counted once, whichever way it went (stats is one more, queued).
        assert!(stats.session.requests >= 50, "{:?}", stats.session);
    }
}

#[test]
fn a_request_larger_than_the_pipe_is_finished_by_the_reactor() {
    let host = host();
    let client = host.spawn_blocking(reference("big-request", &[])).unwrap();
    client.blocking().call_tool("echo", json!({"text": "warm"})).unwrap();
    // 3 MiB of arguments: more than the stdin pipe holds (1 MiB at most), so the caller's
    // write takes what fits and the reactor writes the rest, before anything else.
    let text = "x".repeat(3 << 20);
    let before = client.blocking().stats().unwrap().direct_writes;
    let r = client.blocking().call_tool("echo", json!({ "text": text })).unwrap();
    assert_eq!(r.text().len(), text.len());
    assert_eq!(client.blocking().stats().unwrap().direct_writes, before + 1);
    // Many at once, small and large mixed: lines never interleave.
    let calls: Vec<_> = (0..24)
        .map(|i| {
            let text = if i % 4 == 0 { "y".repeat(1 << 20) } else { format!("small {i}") };
            (text.clone(), client.call_tool("echo", json!({ "text": text })))
        })
        .collect();
    for (text, call) in calls {
        assert_eq!(futures_executor::block_on(call).unwrap().text(), text);
    }
    assert_eq!(client.blocking().stats().unwrap().session.violations, 0);
}

#[test]
fn a_direct_request_that_is_never_answered_times_out() {
    let host = host();
    // The server's own timeout is the request's: a loan's deadline is no later, so the call
    // is written directly, and only the reactor's timer can end it.
    let spec = faulty("hangs-direct").request_timeout(Duration::from_millis(400));
    let client = host.spawn_blocking(spec).unwrap();
    client.blocking().call_tool("echo", json!({"text": "warm"})).unwrap();
    let before = client.blocking().stats().unwrap().direct_writes;
    let started = Instant::now();
    let err = client.blocking().call_tool("hang", json!({})).unwrap_err();
    let took = started.elapsed();
    assert!(matches!(err.request_error(), Some(RequestError::Timeout { .. })), "{err}");
    assert!(took >= Duration::from_millis(390) && took < Duration::from_secs(10), "{took:?}");
    let stats = client.blocking().stats().unwrap();
    assert_eq!(stats.direct_writes, before + 1, "the hung call went directly");
    assert_eq!(stats.session.timeouts, 1);
    assert_eq!(client.blocking().call_tool("echo", json!({"text": "on"})).unwrap().text(), "on");
}

#[test]
fn a_direct_request_to_a_server_that_went_away_fails_with_its_exit() {
    let host = host();
    let client = host.spawn_blocking(faulty("exits")).unwrap();
    client.blocking().call_tool("echo", json!({"text": "warm"})).unwrap();
    let err = client.blocking().call_tool("exit", json!({"code": 4})).unwrap_err();
    assert!(
        matches!(err.request_error(), Some(RequestError::Closed(CloseReason::Exited(4)))),
        "{err}"
    );
    // Whatever the lane held then, the next call fails at once and names the exit.
    let started = Instant::now();
    let err = client.blocking().call_tool("echo", json!({"text": "late"})).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(matches!(err.request_error(), Some(RequestError::Closed(_))), "{err}");
}

#[test]
fn dropping_a_direct_call_cancels_it_on_the_server() {
    let host = host();
    let client = host.spawn_blocking(reference("cancel-direct", &[])).unwrap();
    client.blocking().call_tool("echo", json!({"text": "warm"})).unwrap();
    let before = client.blocking().stats().unwrap();
    let slow = client.call_tool("slow", json!({"ms": 5000}));
    std::thread::sleep(Duration::from_millis(100));
    let during = client.blocking().stats().unwrap();
    assert_eq!(during.direct_writes, before.direct_writes + 1, "the slow call went directly");
    drop(slow);
    // The server is told (notifications/cancelled) and stays usable; the late answer, if
    // any, is discarded and counted, never delivered.
    assert_eq!(client.blocking().call_tool("echo", json!({"text": "x"})).unwrap().text(), "x");
    let after = client.blocking().stats().unwrap();
    assert_eq!(after.session.cancelled, before.session.cancelled + 1, "{:?}", after.session);
}
