//! A deterministic simulation of the session: virtual time, a scripted server.

use super::*;
use bytes::Bytes;
use serde_json::json;

mod loan;
mod modern;

type TestSession = Session<u32>;

fn raw(v: Value) -> Box<RawValue> {
    RawValue::from_string(v.to_string()).unwrap()
}

/// The lines the session wants written, each checked against what its [`Transmit`] says it
/// is (so every test of the session also tests the typed transmits).
fn sent(s: &mut TestSession) -> Vec<Value> {
    std::iter::from_fn(|| s.poll_transmit()).map(checked).collect()
}

fn checked(t: Transmit) -> Value {
    let b = &t.bytes;
    assert_eq!(b.last(), Some(&b'\n'));
    assert!(!b[..b.len() - 1].contains(&b'\n'));
    let v: Value = serde_json::from_slice(b).unwrap();
    match &t.kind {
        TransmitKind::Request { method, id } => {
            assert_eq!(
                (v["method"].as_str(), v["id"].as_i64()),
                (Some(&**method), Some(id.get())),
                "{v}"
            );
        }
        TransmitKind::Notification { method, cancels } => {
            assert_eq!(v["method"].as_str(), Some(&**method), "{v}");
            assert!(v.get("id").is_none(), "{v}");
            let names = (v["method"] == "notifications/cancelled")
                .then(|| v["params"]["requestId"].as_i64())
                .flatten();
            assert_eq!(cancels.map(RequestId::get), names, "{v}");
        }
        TransmitKind::Response => {
            assert!(v.get("method").is_none() && v.get("id").is_some(), "{v}");
        }
    }
    assert_eq!(t.method(), v["method"].as_str());
    v
}

fn events(s: &mut TestSession) -> Vec<Event<u32>> {
    std::iter::from_fn(|| s.poll_event()).collect()
}

fn feed(s: &mut TestSession, v: Value, now: Instant) {
    raw_frame(s, v.to_string().as_bytes(), now);
}

fn raw_frame(s: &mut TestSession, frame: &[u8], now: Instant) {
    s.handle_frame(&Bytes::copy_from_slice(frame), now);
}

fn init_result(version: &str) -> Value {
    json!({"protocolVersion": version, "capabilities": {"tools": {}},
           "serverInfo": {"name": "sim", "version": "1"}})
}

/// A session past the handshake, at the negotiated `version`.
fn active(version: &str, t0: Instant) -> TestSession {
    active_with(SessionConfig::default(), version, t0)
}

/// [`active`] with `config`.
fn active_with(config: SessionConfig, version: &str, t0: Instant) -> TestSession {
    let mut s = TestSession::new(config);
    s.initialize(t0, 0);
    let out = sent(&mut s);
    assert_eq!(out[0]["method"], "initialize");
    assert_eq!(out[0]["params"]["protocolVersion"], "2025-11-25");
    assert_eq!(out[0]["params"]["clientInfo"]["name"], "ringmcp");
    feed(&mut s, json!({"jsonrpc":"2.0","id":out[0]["id"],"result":init_result(version)}), t0);
    let ev = events(&mut s);
    assert!(matches!(&ev[..], [Event::Completed { token: 0, outcome: Ok(_) }]), "{ev:?}");
    assert_eq!(sent(&mut s), vec![json!({"jsonrpc":"2.0","method":"notifications/initialized"})]);
    s
}

#[test]
fn handshake_accepts_every_released_version() {
    let t0 = crate::fuzzing::epoch();
    for v in ProtocolVersion::LEGACY {
        let s = active(v.as_str(), t0);
        assert_eq!(s.server().unwrap().version, v);
        assert!(s.server().unwrap().has_capability("tools"));
        assert!(!s.server().unwrap().has_capability("prompts"));
    }
}

#[test]
fn a_stateless_revision_in_an_initialize_answer_is_refused() {
    let t0 = crate::fuzzing::epoch();
    let mut s = TestSession::new(SessionConfig::default());
    s.initialize(t0, 7);
    let id = sent(&mut s)[0]["id"].clone();
    feed(&mut s, json!({"jsonrpc":"2.0","id":id,"result":init_result("2026-07-28")}), t0);
    let ev = events(&mut s);
    assert!(
        matches!(
            &ev[..],
            [Event::Completed { token: 7, outcome: Err(RequestError::UnsupportedVersion { .. }) }]
        ),
        "{ev:?}"
    );
}

#[test]
fn unsupported_counter_offer_closes_with_clear_error() {
    let t0 = crate::fuzzing::epoch();
    let mut s = TestSession::new(SessionConfig::default());
    s.initialize(t0, 7);
    let id = sent(&mut s)[0]["id"].clone();
    feed(&mut s, json!({"jsonrpc":"2.0","id":id,"result":init_result("2023-01-01")}), t0);
    let ev = events(&mut s);
    let [
        Event::Completed {
            token: 7,
            outcome: Err(RequestError::UnsupportedVersion { answered, .. }),
        },
    ] = &ev[..]
    else {
        panic!("{ev:?}")
    };
    assert_eq!(answered, "2023-01-01");
    assert!(sent(&mut s).is_empty(), "no initialized notification after a failed handshake");
    assert!(matches!(s.close_reason(), Some(CloseReason::HandshakeFailed(_))));
    let (token, err) = s.request("tools/list", None, t0, None, 9).unwrap_err();
    assert_eq!(token, 9);
    assert!(matches!(err, RequestError::Closed(_)));
}

#[test]
fn initialize_error_is_reported() {
    let t0 = crate::fuzzing::epoch();
    let mut s = TestSession::new(SessionConfig::default());
    s.initialize(t0, 1);
    let id = sent(&mut s)[0]["id"].clone();
    feed(
        &mut s,
        json!({"jsonrpc":"2.0","id":id,"error":{"code":-32602,"message":"Unsupported protocol version",
        "data":{"supported":["2024-11-05"],"requested":"2025-11-25"}}}),
        t0,
    );
    assert!(
        matches!(&events(&mut s)[..], [Event::Completed { outcome: Err(RequestError::Rpc(e)), .. }] if e.code == -32602)
    );
    assert!(s.close_reason().is_some());
}

#[test]
fn only_ping_before_initialized() {
    let t0 = crate::fuzzing::epoch();
    let mut s = TestSession::new(SessionConfig::default());
    assert!(matches!(
        s.request("tools/list", None, t0, None, 1),
        Err((1, RequestError::NotInitialized))
    ));
    s.initialize(t0, 0);
    assert!(matches!(
        s.request("tools/call", None, t0, None, 2),
        Err((2, RequestError::NotInitialized))
    ));
    assert!(s.request("ping", None, t0, None, 3).is_ok());
}

#[test]
fn out_of_order_answers_reach_their_callers() {
    let t0 = crate::fuzzing::epoch();
    let mut s = active("2025-11-25", t0);
    let ids: Vec<RequestId> = (0..100)
        .map(|t| s.request("tools/call", Some(&raw(json!({"n": t}))), t0, None, t).unwrap())
        .collect();
    let out = sent(&mut s);
    assert_eq!(out.len(), 100);
    for (i, id) in ids.iter().enumerate().rev() {
        assert_eq!(out[i]["id"], json!(id));
        feed(&mut s, json!({"jsonrpc":"2.0","id":id,"result":{"n":i}}), t0);
    }
    for (k, ev) in events(&mut s).into_iter().enumerate() {
        let Event::Completed { token, outcome: Ok(v) } = ev else { panic!() };
        assert_eq!(token, 99 - k as u32);
        assert_eq!(v.to_value()["n"], json!(token));
    }
    assert_eq!(s.pending(), 0);
}

#[test]
fn timeout_fails_request_and_sends_cancelled_then_late_answer_is_counted() {
    let t0 = crate::fuzzing::epoch();
    let mut s = active("2025-06-18", t0);
    let id = s.request("tools/call", None, t0, Some(Duration::from_secs(5)), 1).unwrap();
    let long = s.request("tools/call", None, t0, Some(Duration::from_secs(50)), 2).unwrap();
    sent(&mut s);
    assert_eq!(s.poll_timeout(), Some(t0 + Duration::from_secs(5)));
    s.handle_timeout(t0 + Duration::from_secs(4));
    assert!(events(&mut s).is_empty());
    s.handle_timeout(t0 + Duration::from_secs(5));
    assert!(matches!(
        &events(&mut s)[..],
        [Event::Completed { token: 1, outcome: Err(RequestError::Timeout { .. }) }]
    ));
    let cancel = sent(&mut s);
    assert_eq!(cancel[0]["method"], "notifications/cancelled");
    assert_eq!(cancel[0]["params"]["requestId"], json!(id));
    assert_eq!(s.poll_timeout(), Some(t0 + Duration::from_secs(50)));
    feed(&mut s, json!({"jsonrpc":"2.0","id":id,"result":{}}), t0 + Duration::from_secs(6));
    assert!(events(&mut s).is_empty(), "a late answer is discarded, not delivered");
    assert_eq!((s.stats().timeouts, s.stats().late_answers, s.stats().violations), (1, 1, 0));
    // An answer to an id never used is still a violation.
    feed(&mut s, json!({"jsonrpc":"2.0","id":999,"result":{}}), t0 + Duration::from_secs(6));
    assert!(matches!(
        &events(&mut s)[..],
        [Event::Violation(Violation::UnknownResponse(Id::Number(999)))]
    ));
    feed(&mut s, json!({"jsonrpc":"2.0","id":long,"result":{}}), t0);
    assert!(matches!(&events(&mut s)[..], [Event::Completed { token: 2, outcome: Ok(_) }]));
    assert_eq!(s.poll_timeout(), None);
}

#[test]
fn initialize_timeout_is_never_cancelled() {
    let t0 = crate::fuzzing::epoch();
    let mut s = TestSession::new(SessionConfig::default());
    s.initialize(t0, 0);
    sent(&mut s);
    s.handle_timeout(t0 + DEFAULT_REQUEST_TIMEOUT);
    assert!(matches!(
        &events(&mut s)[..],
        [Event::Completed { outcome: Err(RequestError::Timeout { .. }), .. }]
    ));
    assert!(sent(&mut s).is_empty());
    assert!(s.close_reason().is_some());
}

#[test]
fn server_requests_are_answered() {
    let t0 = crate::fuzzing::epoch();
    let mut s = active("2025-11-25", t0);
    feed(&mut s, json!({"jsonrpc":"2.0","id":"p1","method":"ping"}), t0);
    feed(&mut s, json!({"jsonrpc":"2.0","id":5,"method":"sampling/createMessage","params":{}}), t0);
    feed(&mut s, json!({"jsonrpc":"2.0","id":6,"method":"roots/list"}), t0);
    let out = sent(&mut s);
    assert_eq!(out[0], json!({"jsonrpc":"2.0","id":"p1","result":{}}));
    assert_eq!(out[1]["error"]["code"], -32601);
    assert_eq!(out[1]["id"], 5);
    assert_eq!(out[2]["error"]["code"], -32601, "roots capability not declared by default");

    let config = SessionConfig {
        roots: Some(vec![Root { uri: "file:///w".into(), name: None }]),
        ..Default::default()
    };
    let mut s = TestSession::new(config);
    s.initialize(t0, 0);
    let init = sent(&mut s);
    assert_eq!(init[0]["params"]["capabilities"]["roots"], json!({"listChanged": true}));
    feed(&mut s, json!({"jsonrpc":"2.0","id":"r","method":"roots/list"}), t0);
    assert_eq!(sent(&mut s)[0]["result"], json!({"roots":[{"uri":"file:///w"}]}));
}

#[test]
fn garbage_is_counted_and_later_answers_still_arrive() {
    let t0 = crate::fuzzing::epoch();
    let mut s = active("2025-11-25", t0);
    let id = s.request("ping", None, t0, None, 1).unwrap();
    raw_frame(&mut s, b"Starting server on stdio...", t0);
    raw_frame(&mut s, br#"{"jsonrpc":"2.0"}"#, t0);
    raw_frame(&mut s, br#"[{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}},{"jsonrpc":"2.0","id":12345,"result":{}}]"#, t0);
    feed(&mut s, json!({"jsonrpc":"2.0","id":id,"result":{}}), t0);
    let ev = events(&mut s);
    assert!(matches!(ev[0], Event::Violation(Violation::NotJson { len: 27, .. })));
    assert!(matches!(ev[1], Event::Violation(Violation::InvalidMessage(_))));
    assert!(matches!(&ev[2], Event::Notification(n) if n.method == "notifications/message"));
    assert!(matches!(ev[3], Event::Violation(Violation::UnknownResponse(_))));
    assert!(matches!(ev[4], Event::Completed { token: 1, outcome: Ok(_) }));
    assert_eq!(s.stats().violations, 3);
}

#[test]
fn oversized_answer_fails_exactly_its_request() {
    let t0 = crate::fuzzing::epoch();
    let mut s = active("2025-11-25", t0);
    let a = s.request("tools/call", None, t0, None, 1).unwrap();
    let _b = s.request("tools/call", None, t0, None, 2).unwrap();
    s.handle_oversized(&Oversized { len: 99, id: Some(a.to_string().into_bytes()) });
    s.handle_oversized(&Oversized { len: 98, id: None });
    let ev = events(&mut s);
    assert!(matches!(
        ev[0],
        Event::Completed { token: 1, outcome: Err(RequestError::FrameTooLarge { len: 99, .. }) }
    ));
    assert!(matches!(ev[1], Event::Violation(Violation::OversizedWithoutId { len: 98, .. })));
    assert_eq!(s.pending(), 1);
}

#[test]
fn close_fails_everything_pending_once() {
    let t0 = crate::fuzzing::epoch();
    let mut s = active("2025-11-25", t0);
    for t in 1..=3 {
        s.request("tools/call", None, t0, None, t).unwrap();
    }
    s.handle_closed(CloseReason::Exited(3));
    let ev = events(&mut s);
    assert_eq!(ev.len(), 3);
    assert!(ev.iter().all(|e| matches!(
        e,
        Event::Completed { outcome: Err(RequestError::Closed(CloseReason::Exited(3))), .. }
    )));
    s.handle_closed(CloseReason::Shutdown);
    assert_eq!(s.close_reason(), Some(&CloseReason::Exited(3)));
    assert!(s.poll_timeout().is_none());
}

#[test]
fn pending_table_is_bounded() {
    let t0 = crate::fuzzing::epoch();
    let mut s = TestSession::new(SessionConfig { max_pending: 2, ..Default::default() });
    s.initialize(t0, 0);
    let id = sent(&mut s)[0]["id"].clone();
    feed(&mut s, json!({"jsonrpc":"2.0","id":id,"result":init_result("2025-11-25")}), t0);
    s.request("a", None, t0, None, 1).unwrap();
    s.request("b", None, t0, None, 2).unwrap();
    assert!(matches!(s.request("c", None, t0, None, 3), Err((3, RequestError::TooManyPending(2)))));
}

#[test]
fn an_unparsable_answer_fails_its_request_at_once() {
    let t0 = crate::fuzzing::epoch();
    let mut s = active("2025-11-25", t0);
    let id = s.request("tools/call", None, t0, None, 1).unwrap();
    let other = s.request("tools/call", None, t0, None, 2).unwrap();
    let third = s.request("tools/call", None, t0, None, 3).unwrap();
    // Valid JSON grammar, a number beyond f64: routed; the caller's parse reports it.
    raw_frame(
        &mut s,
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"n":1e400}}}}"#).as_bytes(),
        t0,
    );
    // Not JSON-RPC, but its id is readable: that request fails now, not at its timeout.
    raw_frame(&mut s, format!(r#"{{"jsonrpc":"1.0","id":{other},"result":{{}}}}"#).as_bytes(), t0);
    // Not even JSON, truncated mid-string: the sniffer still finds a leading id.
    raw_frame(
        &mut s,
        format!(r#"{{"jsonrpc":"2.0","id":{third},"result":{{"t":"unterminated}}"#).as_bytes(),
        t0,
    );
    let ev = events(&mut s);
    assert!(
        matches!(&ev[0], Event::Completed { token: 1, outcome: Ok(raw) } if raw.parse::<Value>().is_err()),
        "{ev:?}"
    );
    assert!(matches!(ev[1], Event::Violation(Violation::InvalidMessage(_))));
    assert!(matches!(
        &ev[2],
        Event::Completed { token: 2, outcome: Err(RequestError::MalformedResult { method, .. }) } if method == "tools/call"
    ));
    assert!(matches!(ev[3], Event::Violation(Violation::NotJson { .. })));
    assert!(matches!(
        ev[4],
        Event::Completed { token: 3, outcome: Err(RequestError::MalformedResult { .. }) }
    ));
    assert_eq!(s.pending(), 0);
}

#[test]
fn deadline_heap_stays_proportional_to_pending_requests() {
    let t0 = crate::fuzzing::epoch();
    let mut s = active("2025-11-25", t0);
    // One request that never ends keeps its deadline at the top of the heap...
    s.request("tools/call", None, t0, None, 0).unwrap();
    for i in 1..10_000u32 {
        let id = s.request("tools/call", None, t0, None, i).unwrap();
        feed(&mut s, json!({"jsonrpc":"2.0","id":id,"result":{}}), t0);
        assert!(
            s.inflight.heap_len() <= 2 * (s.pending() + 1) + 64,
            "heap grew to {}",
            s.inflight.heap_len()
        );
    }
    // ...and the long-lived request still times out at the right moment.
    events(&mut s);
    s.handle_timeout(t0 + DEFAULT_REQUEST_TIMEOUT);
    assert!(matches!(
        &events(&mut s)[..],
        [Event::Completed { token: 0, outcome: Err(RequestError::Timeout { .. }) }]
    ));
}

#[test]
fn a_cancelled_request_tells_the_server_and_its_late_answer_reaches_nobody() {
    let t0 = crate::fuzzing::epoch();
    let mut s = active("2025-11-25", t0);
    let a = s.request("tools/call", None, t0, None, 1).unwrap();
    let b = s.request("tools/call", None, t0, None, 2).unwrap();
    sent(&mut s);
    assert_eq!(s.cancel(a, "the caller stopped waiting"), Some(1));
    let out = sent(&mut s);
    assert_eq!(out[0]["method"], "notifications/cancelled");
    assert_eq!(out[0]["params"], json!({"requestId": a, "reason": "the caller stopped waiting"}));
    assert_eq!(s.pending(), 1);
    assert_eq!(s.cancel(a, "again"), None, "cancelling twice does nothing");
    assert!(sent(&mut s).is_empty());
    feed(&mut s, json!({"jsonrpc":"2.0","id":a,"result":{}}), t0);
    feed(&mut s, json!({"jsonrpc":"2.0","id":b,"result":{}}), t0);
    assert!(matches!(&events(&mut s)[..], [Event::Completed { token: 2, outcome: Ok(_) }]));
    let stats = s.stats();
    assert_eq!((stats.cancelled, stats.late_answers, stats.violations), (1, 1, 0));
}

#[test]
fn initialize_is_never_cancelled_by_a_caller() {
    let t0 = crate::fuzzing::epoch();
    let mut s = TestSession::new(SessionConfig::default());
    s.initialize(t0, 7);
    sent(&mut s);
    assert_eq!(s.cancel(RequestId::new(1), "no"), None);
    assert!(sent(&mut s).is_empty());
}

#[test]
fn the_progress_token_is_spliced_into_any_params() {
    let t0 = crate::fuzzing::epoch();
    let mut s = active("2025-11-25", t0);
    let cases = [
        (None, json!({})),
        (Some(raw(json!({}))), json!({})),
        (
            Some(raw(json!({"name": "x", "arguments": {"a": [1, {"b": "}"}]}}))),
            json!({"name": "x", "arguments": {"a": [1, {"b": "}"}]}}),
        ),
        (
            Some(raw(json!({"name": "has \"_meta\" in a value"}))),
            json!({"name": "has \"_meta\" in a value"}),
        ),
    ];
    for (params, mut want) in cases {
        let id = s.request_with_progress("tools/call", params.as_deref(), t0, None, 1).unwrap();
        want["_meta"] = json!({"progressToken": id});
        assert_eq!(sent(&mut s)[0]["params"], want);
    }
    let not_object = raw(json!([1]));
    assert!(s.request_with_progress("tools/call", Some(&not_object), t0, None, 1).is_err());
}

#[test]
fn progress_reaches_its_request_and_pushes_the_deadline_back_up_to_the_cap() {
    let t0 = crate::fuzzing::epoch();
    let mut s = active("2025-11-25", t0);
    let params = raw(json!({"name": "long", "arguments": {}, "_meta": {"other": 1}}));
    let id = s
        .request_with_progress("tools/call", Some(&params), t0, Some(Duration::from_secs(5)), 1)
        .unwrap();
    let out = sent(&mut s);
    assert_eq!(out[0]["params"]["_meta"], json!({"other": 1, "progressToken": id}));
    let progress = |p: f64| {
        json!({"jsonrpc":"2.0","method":"notifications/progress",
        "params":{"progressToken": id, "progress": p, "total": 10, "message": "step"}})
    };
    feed(&mut s, progress(1.5), t0 + Duration::from_secs(4));
    assert!(matches!(&events(&mut s)[..],
        [Event::Progress { id: i, progress: Progress { progress, total: Some(t), message: Some(m) } }]
            if *i == id && *progress == 1.5 && *t == 10.0 && m == "step"));
    s.handle_timeout(t0 + Duration::from_secs(6));
    assert!(events(&mut s).is_empty(), "the deadline moved to 4 s + 5 s");
    // Unknown tokens, and requests without progress, are ignored.
    feed(
        &mut s,
        json!({"jsonrpc":"2.0","method":"notifications/progress",
        "params":{"progressToken": 424242, "progress": 1}}),
        t0,
    );
    assert!(events(&mut s).is_empty());
    // Progress never extends a request past max_request_total (600 s by default).
    for k in 1..200u64 {
        feed(&mut s, progress(k as f64 + 2.0), t0 + Duration::from_secs(4 * k));
    }
    events(&mut s);
    s.handle_timeout(t0 + Duration::from_secs(600));
    assert!(matches!(
        &events(&mut s)[..],
        [Event::Completed { token: 1, outcome: Err(RequestError::Timeout { .. }) }]
    ));
}

#[test]
fn declared_client_features_are_delegated_and_answered_once() {
    let t0 = crate::fuzzing::epoch();
    let features =
        ClientFeatures { sampling: true, elicitation_form: true, elicitation_url: false };
    let mut s = TestSession::new(SessionConfig { features, ..SessionConfig::default() });
    s.initialize(t0, 0);
    let init = sent(&mut s);
    assert_eq!(init[0]["params"]["capabilities"], json!({"sampling": {}, "elicitation": {}}));
    feed(&mut s, json!({"jsonrpc":"2.0","id":1,"result": init_result("2025-11-25")}), t0);
    events(&mut s);
    sent(&mut s);
    let ask = |id: &str, method: &str, params: Value| json!({"jsonrpc":"2.0","id":id,"method":method,"params":params});
    feed(&mut s, ask("s1", "sampling/createMessage", json!({"messages": [], "maxTokens": 5})), t0);
    let ev = events(&mut s);
    let [Event::ServerRequest { id, method, .. }] = &ev[..] else { panic!("{ev:?}") };
    assert_eq!((id, method.as_str()), (&Id::String("s1".into()), "sampling/createMessage"));
    assert!(sent(&mut s).is_empty(), "nothing is answered until the application does");
    s.respond(&Id::String("s1".into()), Ok(json!({"role": "assistant"})), t0);
    s.respond(&Id::String("s1".into()), Ok(json!({"twice": true})), t0);
    let out = sent(&mut s);
    assert_eq!(out.len(), 1, "answered once");
    assert_eq!(out[0]["id"], "s1");
    // A URL-mode elicitation was not declared: -32602 at once.
    feed(&mut s, ask("e1", "elicitation/create", json!({"mode": "url", "url": "https://x"})), t0);
    assert_eq!(sent(&mut s)[0]["error"]["code"], -32602);
    // Cancelled by the server before the answer: no response may follow.
    feed(&mut s, ask("e2", "elicitation/create", json!({"message": "?"})), t0);
    events(&mut s);
    feed(
        &mut s,
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"e2"}}),
        t0,
    );
    s.respond(&Id::String("e2".into()), Ok(json!({"action": "accept"})), t0);
    assert!(sent(&mut s).is_empty());
}

#[test]
fn new_roots_are_announced_only_when_roots_were_declared() {
    let t0 = crate::fuzzing::epoch();
    let roots = vec![Root { uri: "file:///a".into(), name: None }];
    let mut s = TestSession::new(SessionConfig { roots: Some(roots), ..SessionConfig::default() });
    s.initialize(t0, 0);
    assert_eq!(sent(&mut s)[0]["params"]["capabilities"]["roots"], json!({"listChanged": true}));
    feed(&mut s, json!({"jsonrpc":"2.0","id":1,"result": init_result("2025-11-25")}), t0);
    events(&mut s);
    sent(&mut s);
    s.set_roots(vec![Root { uri: "file:///b".into(), name: None }]);
    assert_eq!(sent(&mut s)[0]["method"], "notifications/roots/list_changed");
    feed(&mut s, json!({"jsonrpc":"2.0","id":"r","method":"roots/list"}), t0);
    assert_eq!(sent(&mut s)[0]["result"]["roots"][0]["uri"], "file:///b");
    let mut plain = active("2025-11-25", t0);
    plain.set_roots(vec![]);
    assert!(sent(&mut plain).is_empty(), "roots were not declared: nothing to announce");
}
