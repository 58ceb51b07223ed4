//! Lent ids (loan.rs): a request the caller writes itself is the same line, and fares the
//! same, as one the session writes.

use super::super::*;
use serde_json::json;

use super::modern::{config, modern};
use super::{TestSession, active, active_with, events, feed, raw, sent};

/// The line `request` writes for (`method`, `params`) as the request after the current one,
/// from a twin session (same state, same next id).
fn written_by_session(s: &mut TestSession, method: &str, params: &RawValue, now: Instant) -> Value {
    s.request(method, Some(params), now, None, 99).unwrap();
    sent(s).pop().unwrap()
}

#[test]
fn a_lent_request_is_the_line_the_session_writes_and_completes_the_same() {
    let t0 = crate::fuzzing::epoch();
    let mut fresh = TestSession::new(SessionConfig::default());
    assert!(fresh.lend().is_none(), "nothing is lent before the handshake");
    let mut s = active("2025-11-25", t0);
    let mut twin = active("2025-11-25", t0);
    let params = raw(json!({"name": "echo", "arguments": {"text": "hi"}}));
    let requests = s.stats().requests;
    let loan = s.lend().unwrap();
    let line = loan.encode("tools/call", Some(&params)).unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&line).unwrap(),
        written_by_session(&mut twin, "tools/call", &params, t0)
    );
    assert_eq!(line.last(), Some(&b'\n'));
    s.adopt(loan.id, "tools/call", line, t0, None, 5).unwrap();
    assert!(sent(&mut s).is_empty(), "the caller wrote it: the session writes nothing");
    assert_eq!(s.pending(), 1);
    feed(&mut s, json!({"jsonrpc": "2.0", "id": loan.id.get(), "result": {"content": []}}), t0);
    let ev = events(&mut s);
    assert!(matches!(&ev[..], [Event::Completed { token: 5, outcome: Ok(_) }]), "{ev:?}");
    assert_eq!(s.stats().requests, requests + 1);
}

#[test]
fn an_unused_loan_leaves_a_gap_and_adopted_requests_time_out_and_cancel() {
    let t0 = crate::fuzzing::epoch();
    let mut s = active("2025-06-18", t0);
    let unused = s.lend().unwrap();
    let id = s.request("tools/list", None, t0, None, 1).unwrap();
    assert_eq!(id.get(), unused.id.get() + 1, "the session never reuses a lent id");
    let _ = sent(&mut s);
    // Adopted with a short timeout: it expires as any request does, from when it was sent.
    let loan = s.lend().unwrap();
    let line = loan.encode("tools/call", Some(&raw(json!({"name": "slow"})))).unwrap();
    let timeout = Duration::from_millis(300);
    s.adopt(loan.id, "tools/call", line, t0, Some(timeout), 2).unwrap();
    assert_eq!(s.poll_timeout(), Some(t0 + timeout));
    s.handle_timeout(t0 + timeout);
    let ev = events(&mut s);
    assert!(
        ev.iter().any(|e| matches!(
            e,
            Event::Completed { token: 2, outcome: Err(RequestError::Timeout { .. }) }
        )),
        "{ev:?}"
    );
    let cancelled = sent(&mut s);
    assert_eq!(cancelled[0]["method"], "notifications/cancelled");
    assert_eq!(cancelled[0]["params"]["requestId"], loan.id.get());
    // Cancelled by its caller.
    let loan = s.lend().unwrap();
    let line = loan.encode("tools/call", Some(&raw(json!({"name": "x"})))).unwrap();
    s.adopt(loan.id, "tools/call", line, t0, None, 3).unwrap();
    assert_eq!(s.cancel(loan.id, "the caller stopped waiting"), Some(3));
    assert_eq!(sent(&mut s)[0]["params"]["requestId"], loan.id.get());
}

#[test]
fn nothing_is_lent_past_max_pending_and_a_closed_session_refuses_the_adoption() {
    let t0 = crate::fuzzing::epoch();
    let config = SessionConfig { max_pending: 3, ..SessionConfig::default() };
    let mut s = active_with(config, "2025-11-25", t0);
    s.request("tools/list", None, t0, None, 1).unwrap();
    assert!(s.lend().is_some(), "1 pending + the loan's 1 < 3");
    s.request("tools/list", None, t0, None, 2).unwrap();
    assert!(s.lend().is_none(), "2 pending + the loan's 1 would reach the limit");

    let mut s = active("2025-11-25", t0);
    let loan = s.lend().unwrap();
    s.handle_closed(CloseReason::Shutdown);
    let line = loan.encode("tools/call", None).unwrap();
    let (token, e) = s.adopt(loan.id, "tools/call", line, t0, None, 7).unwrap_err();
    assert_eq!(token, 7);
    assert!(matches!(e, RequestError::Closed(CloseReason::Shutdown)), "{e}");
    assert!(s.lend().is_none());
}

#[test]
fn a_modern_loan_carries_meta_and_leaves_what_the_session_shapes_to_it() {
    let t0 = crate::fuzzing::epoch();
    let features = ClientFeatures { elicitation_form: true, ..ClientFeatures::default() };
    let mut s = modern(config(features), t0);
    let mut twin = modern(config(features), t0);
    let params = raw(json!({"name": "echo", "arguments": {"x": 1}}));
    let loan = s.lend().unwrap();
    let line = loan.encode("tools/call", Some(&params)).unwrap();
    let mine: Value = serde_json::from_slice(&line).unwrap();
    assert_eq!(mine, written_by_session(&mut twin, "tools/call", &params, t0));
    assert_eq!(mine["params"]["_meta"][modern::META_PROTOCOL_VERSION], "2026-07-28");
    for shaped in ["ping", "logging/setLevel", "resources/subscribe", "notifications/progress"] {
        assert!(loan.encode(shaped, None).is_none(), "{shaped}");
    }
    assert!(loan.encode("tools/call", Some(&raw(json!([1])))).is_none(), "params not an object");
    // An adopted modern request is kept for an `input_required` retry, like a written one.
    s.adopt(loan.id, "tools/call", line, t0, None, 1).unwrap();
    feed(
        &mut s,
        json!({"jsonrpc": "2.0", "id": loan.id.get(),
                        "result": {"resultType": "complete", "content": []}}),
        t0,
    );
    assert!(matches!(&events(&mut s)[..], [Event::Completed { token: 1, outcome: Ok(_) }]));
}
