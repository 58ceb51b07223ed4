//! The 2026-07-28 (stateless) side of the session, simulated: the `server/discover` probe and
//! its fallback, `_meta` on every request, `resultType`, and `input_required` rounds.

use super::super::modern::META_PROTOCOL_VERSION;
use super::super::modern::{META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL};
use super::super::*;
use bytes::Bytes;
use serde_json::json;

use super::{TestSession, events, feed, sent};

fn reply(s: &mut TestSession, id: &Value, result: Value, now: Instant) {
    feed(s, json!({"jsonrpc": "2.0", "id": id, "result": result}), now);
}

fn discover_result() -> Value {
    json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
           "capabilities": {"tools": {}}, "serverInfo": {"name": "modern", "version": "1"}})
}

pub(super) fn config(features: ClientFeatures) -> SessionConfig {
    SessionConfig { features, ..SessionConfig::default() }
}

/// A session past the probe, speaking 2026-07-28.
pub(super) fn modern(config: SessionConfig, t0: Instant) -> TestSession {
    let mut s = TestSession::new(config);
    s.handshake(t0, 0);
    let out = sent(&mut s);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["method"], "server/discover");
    assert_eq!(out[0]["params"]["_meta"][META_PROTOCOL_VERSION], "2026-07-28");
    assert_eq!(s.wire_version(), Some(ProtocolVersion::V2026_07_28));
    reply(&mut s, &out[0]["id"], discover_result(), t0);
    let ev = events(&mut s);
    assert!(matches!(&ev[..], [Event::Completed { token: 0, outcome: Ok(_) }]), "{ev:?}");
    assert!(sent(&mut s).is_empty(), "no notifications/initialized in 2026-07-28");
    let server = s.server().unwrap();
    assert_eq!(server.version, ProtocolVersion::V2026_07_28);
    assert_eq!(server.init.server_info.name, "modern");
    assert!(server.has_capability("tools"));
    s
}

#[test]
fn a_modern_server_gets_meta_on_every_request() {
    let t0 = crate::fuzzing::epoch();
    let features = ClientFeatures { elicitation_form: true, ..ClientFeatures::default() };
    let mut s = modern(config(features), t0);
    let params = RawValue::from_string(r#"{"name":"echo","arguments":{"x":1}}"#.into()).unwrap();
    let id = s.request("tools/call", Some(&params), t0, None, 1).unwrap();
    s.request("tools/list", None, t0, None, 2).unwrap();
    let out = sent(&mut s);
    assert_eq!(out[0]["id"], id.get());
    assert_eq!(out[0]["params"]["arguments"], json!({"x": 1}));
    for request in &out {
        let meta = &request["params"]["_meta"];
        assert_eq!(meta[META_PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(meta[META_CLIENT_CAPABILITIES], json!({"elicitation": {"form": {}}}));
        assert_eq!(meta[META_CLIENT_INFO]["name"], "ringmcp");
        assert!(meta.get(META_LOG_LEVEL).is_none(), "no level: no log messages");
    }
    // A result without `resultType` is complete; an unknown one is an error.
    reply(&mut s, &json!(id), json!({"content": []}), t0);
    reply(&mut s, &out[1]["id"], json!({"resultType": "later", "tools": []}), t0);
    let ev = events(&mut s);
    assert!(matches!(ev[0], Event::Completed { token: 1, outcome: Ok(_) }));
    let Event::Completed { token: 2, outcome: Err(RequestError::MalformedResult { reason, .. }) } =
        &ev[1]
    else {
        panic!("{ev:?}")
    };
    assert!(reason.contains("later"), "{reason}");
    // Params that are not an object cannot carry `_meta`: refused before sending.
    let array = RawValue::from_string("[1]".into()).unwrap();
    let (token, e) = s.request("tools/call", Some(&array), t0, None, 3).unwrap_err();
    assert_eq!(token, 3);
    assert!(matches!(e, RequestError::InvalidRequest { .. }), "{e}");
    let uri = RawValue::from_string(r#"{"uri":"file:///x"}"#.into()).unwrap();
    let (_, e) = s.request("resources/subscribe", Some(&uri), t0, None, 4).unwrap_err();
    assert!(e.to_string().contains("subscriptions/listen"), "{e}");
    assert!(sent(&mut s).is_empty());
}

#[test]
fn ping_and_set_level_are_translated() {
    let t0 = crate::fuzzing::epoch();
    let mut s = modern(SessionConfig::default(), t0);
    s.request("ping", None, t0, None, 1).unwrap();
    let level = RawValue::from_string(r#"{"level":"warning"}"#.into()).unwrap();
    s.request("logging/setLevel", Some(&level), t0, None, 2).unwrap();
    s.request("tools/list", None, t0, None, 3).unwrap();
    let out = sent(&mut s);
    assert_eq!(out.len(), 2, "setLevel is not sent: {out:?}");
    assert_eq!(out[0]["method"], "server/discover");
    assert!(out[0]["params"]["_meta"].get(META_LOG_LEVEL).is_none());
    assert_eq!(out[1]["params"]["_meta"][META_LOG_LEVEL], "warning");
    let ev = events(&mut s);
    assert!(matches!(&ev[..], [Event::Completed { token: 2, outcome: Ok(_) }]), "{ev:?}");
}

/// Whatever a legacy server answers the probe with, the handshake goes on with `initialize`
/// and the same token completes once.
#[test]
fn any_other_answer_falls_back_to_initialize() {
    let t0 = crate::fuzzing::epoch();
    let answers = [
        json!({"error": {"code": -32601, "message": "Method not found"}}),
        json!({"error": {"code": -32600, "message": "Server not initialized"}}),
        json!({"error": {"code": -32000, "message": "Bad Request: no session"}}),
        json!({"error": {"code": -32602, "message": "Invalid request parameters"}}),
        json!({"result": {"tools": []}}),
        json!({"result": {"supportedVersions": ["2025-11-25"]}}),
    ];
    for answer in answers {
        let mut s = TestSession::new(SessionConfig::default());
        s.handshake(t0, 5);
        let probe = sent(&mut s).remove(0);
        let mut message = answer.clone();
        message["jsonrpc"] = json!("2.0");
        message["id"] = probe["id"].clone();
        feed(&mut s, message, t0);
        assert!(events(&mut s).is_empty(), "{answer}");
        let init = sent(&mut s);
        assert_eq!(init[0]["method"], "initialize", "{answer}");
        assert_eq!(s.wire_version(), None, "no version header during initialize");
        let result = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                            "serverInfo": {"name": "legacy", "version": "1"}});
        reply(&mut s, &init[0]["id"], result, t0);
        let ev = events(&mut s);
        assert!(matches!(&ev[..], [Event::Completed { token: 5, outcome: Ok(_) }]), "{ev:?}");
        assert_eq!(sent(&mut s)[0]["method"], "notifications/initialized");
        assert_eq!(s.server().unwrap().version, ProtocolVersion::V2025_11_25);
    }
}

#[test]
fn a_silent_server_falls_back_after_the_probe_timeout_without_a_cancel() {
    let t0 = crate::fuzzing::epoch();
    let probe = Duration::from_millis(300);
    let mut s = TestSession::new(SessionConfig { probe_timeout: probe, ..Default::default() });
    s.handshake(t0, 5);
    assert_eq!(sent(&mut s)[0]["method"], "server/discover");
    assert_eq!(s.poll_timeout(), Some(t0 + probe));
    s.handle_timeout(t0 + probe);
    let out = sent(&mut s);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0]["method"], "initialize");
    assert!(events(&mut s).is_empty());
    // A late answer to the probe is not a violation.
    feed(&mut s, json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "x"}}), t0);
    assert_eq!(s.stats().violations, 0);
    assert_eq!(s.stats().late_answers, 1);
}

#[test]
fn unsupported_version_retries_once_with_a_listed_one() {
    let t0 = crate::fuzzing::epoch();
    let unsupported = |id: &Value| {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32022,
               "message": "Unsupported protocol version",
               "data": {"supported": ["2025-11-25", "2026-07-28"], "requested": "2026-07-28"}}})
    };
    let mut s = TestSession::new(SessionConfig { era: Era::Modern, ..Default::default() });
    s.handshake(t0, 5);
    let first = sent(&mut s).remove(0);
    feed(&mut s, unsupported(&first["id"]), t0);
    let retry = sent(&mut s).remove(0);
    assert_eq!(retry["method"], "server/discover");
    assert_ne!(retry["id"], first["id"]);
    assert_eq!(retry["params"]["_meta"][META_PROTOCOL_VERSION], "2026-07-28");
    // A second refusal ends it: `Era::Modern` has no fallback.
    feed(&mut s, unsupported(&retry["id"]), t0);
    let ev = events(&mut s);
    assert!(
        matches!(&ev[..], [Event::Completed { token: 5, outcome: Err(RequestError::Rpc(e)) }] if e.code == -32022),
        "{ev:?}"
    );
    assert!(sent(&mut s).is_empty());
    assert!(matches!(s.close_reason(), Some(CloseReason::HandshakeFailed(_))));
}

#[test]
fn legacy_era_never_probes() {
    let t0 = crate::fuzzing::epoch();
    let mut s = TestSession::new(SessionConfig { era: Era::Legacy, ..Default::default() });
    s.handshake(t0, 0);
    assert_eq!(sent(&mut s)[0]["method"], "initialize");
}

/// MRTR (docs/protocol.md, "Server→client input"): the inputs go to the application, the retry has a new id, this
/// round's `inputResponses` and the `requestState` exactly as received; the caller's token
/// completes once, with the final result.
#[test]
fn input_required_rounds_are_fulfilled_and_retried() {
    let t0 = crate::fuzzing::epoch();
    let features = ClientFeatures { elicitation_form: true, ..ClientFeatures::default() };
    let roots = vec![Root { uri: "file:///w".into(), name: None }];
    let mut s = modern(SessionConfig { roots: Some(roots), ..config(features) }, t0);
    let params = RawValue::from_string(r#"{"name":"deploy","arguments":{"env":"prod"}}"#.into());
    let origin =
        s.request_with_progress("tools/call", Some(&params.unwrap()), t0, None, 9).unwrap();
    let first = sent(&mut s).remove(0);
    let state = r#""s\u00e9cret \"1\"""#;
    let result = format!(
        r#"{{"jsonrpc":"2.0","id":{origin},"result":{{"resultType":"input_required","requestState":{state},"inputRequests":{{"ok":{{"method":"elicitation/create","params":{{"message":"Sure?","requestedSchema":{{"type":"object"}}}}}},"where":{{"method":"roots/list"}}}}}}}}"#
    );
    s.handle_frame(&Bytes::from(result), t0);
    let ev = events(&mut s);
    let [Event::ServerRequest { id, method, params }] = &ev[..] else { panic!("{ev:?}") };
    assert_eq!(method, "elicitation/create");
    assert_eq!(params.as_ref().unwrap()["message"], "Sure?");
    assert!(sent(&mut s).is_empty(), "no retry before every input is in");
    // Progress still reaches the call by the id its caller knows.
    assert_eq!(s.pending(), 0);
    s.respond(id, Ok(json!({"action": "accept", "content": {}})), t0);
    let retry = sent(&mut s).remove(0);
    assert_eq!(retry["method"], "tools/call");
    assert_ne!(retry["id"], first["id"], "a retry has a new id");
    assert_eq!(retry["params"]["arguments"], json!({"env": "prod"}));
    assert_eq!(retry["params"]["_meta"]["progressToken"], origin.get());
    assert_eq!(
        retry["params"]["inputResponses"],
        json!({"ok": {"action": "accept", "content": {}}, "where": {"roots": [{"uri": "file:///w"}]}})
    );
    let raw_retry = serde_json::to_string(&retry).unwrap();
    assert!(raw_retry.contains(r#""requestState":"sécret \"1\"""#), "{raw_retry}");
    let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                          "params": {"progressToken": origin, "progress": 1}});
    feed(&mut s, progress, t0);
    reply(&mut s, &retry["id"], json!({"resultType": "complete", "content": []}), t0);
    let ev = events(&mut s);
    assert!(matches!(ev[0], Event::Progress { id, .. } if id == origin), "{ev:?}");
    assert!(matches!(ev[1], Event::Completed { token: 9, outcome: Ok(_) }), "{ev:?}");
    assert_eq!(ev.len(), 2);
}

#[test]
fn inputs_the_client_cannot_give_fail_the_request() {
    let t0 = crate::fuzzing::epoch();
    let mut s = modern(SessionConfig::default(), t0);
    let id = s.request("tools/call", None, t0, None, 1).unwrap();
    sent(&mut s);
    let asks = json!({"resultType": "input_required",
                      "inputRequests": {"m": {"method": "sampling/createMessage", "params": {}}}});
    reply(&mut s, &json!(id), asks, t0);
    let ev = events(&mut s);
    let [Event::Completed { token: 1, outcome: Err(RequestError::InputNotProvided { input, .. }) }] =
        &ev[..]
    else {
        panic!("{ev:?}")
    };
    assert_eq!(input, "sampling/createMessage");
    assert!(sent(&mut s).is_empty());

    // An application that refuses fails the call, with its reason.
    let features = ClientFeatures { sampling: true, ..ClientFeatures::default() };
    let mut s = modern(config(features), t0);
    let (_, input) = waiting_for_sampling(&mut s, 2, t0);
    s.respond(&input, Err(ErrorObject::new(-1, "User rejected sampling request")), t0);
    let ev = events(&mut s);
    let [Event::Completed { token: 2, outcome: Err(e @ RequestError::InputNotProvided { .. }) }] =
        &ev[..]
    else {
        panic!("{ev:?}")
    };
    assert!(e.to_string().contains("User rejected"), "{e}");
}

fn asks_for_sampling() -> Value {
    json!({"resultType": "input_required",
           "inputRequests": {"m": {"method": "sampling/createMessage", "params": {}}}})
}

/// Sends a `tools/call` (completing with `token`) that the server answers by asking for
/// sampling; returns the call's id and the id the input request was delivered under.
fn waiting_for_sampling(s: &mut TestSession, token: u32, t0: Instant) -> (RequestId, Id) {
    let id = s.request("tools/call", None, t0, None, token).unwrap();
    sent(s);
    reply(s, &json!(id), asks_for_sampling(), t0);
    let Some(Event::ServerRequest { id: input, .. }) = s.poll_event() else { panic!() };
    (id, input)
}

#[test]
fn a_server_that_keeps_asking_is_stopped() {
    let t0 = crate::fuzzing::epoch();
    let roots = Some(vec![]);
    let mut s = modern(SessionConfig { roots, ..SessionConfig::default() }, t0);
    s.request("tools/call", None, t0, None, 1).unwrap();
    let asks = json!({"resultType": "input_required",
                      "inputRequests": {"r": {"method": "roots/list"}}});
    for _ in 0..=MAX_INPUT_ROUNDS {
        let Some(out) = sent(&mut s).pop() else { break };
        reply(&mut s, &out["id"], asks.clone(), t0);
    }
    let ev = events(&mut s);
    let [Event::Completed { token: 1, outcome: Err(e) }] = &ev[..] else { panic!("{ev:?}") };
    assert!(e.to_string().contains("rounds"), "{e}");
}

#[test]
fn cancelling_a_call_between_rounds() {
    let t0 = crate::fuzzing::epoch();
    let features = ClientFeatures { sampling: true, ..ClientFeatures::default() };
    let mut s = modern(config(features), t0);
    // Waiting for the application: nothing to tell the server; a late input is dropped.
    let (id, input) = waiting_for_sampling(&mut s, 1, t0);
    assert_eq!(s.cancel(id, "gone"), Some(1));
    s.respond(&input, Ok(json!({"role": "assistant"})), t0);
    assert!(sent(&mut s).is_empty());
    assert!(events(&mut s).is_empty());
    // After the retry went out: the retry's id is cancelled, by the caller's id.
    let (id, input) = waiting_for_sampling(&mut s, 2, t0);
    s.respond(&input, Ok(json!({"role": "assistant"})), t0);
    let retry = sent(&mut s).remove(0);
    assert_eq!(s.cancel(id, "gone"), Some(2));
    let out = sent(&mut s);
    assert_eq!(out[0]["method"], "notifications/cancelled");
    assert_eq!(out[0]["params"]["requestId"], retry["id"]);
    reply(&mut s, &retry["id"], json!({"content": []}), t0);
    assert!(events(&mut s).is_empty());
    assert_eq!(s.stats().late_answers, 1);
}

#[test]
fn closing_fails_calls_waiting_for_input() {
    let t0 = crate::fuzzing::epoch();
    let features = ClientFeatures { sampling: true, ..ClientFeatures::default() };
    let mut s = modern(config(features), t0);
    let id = s.request("tools/call", None, t0, None, 1).unwrap();
    sent(&mut s);
    reply(&mut s, &json!(id), asks_for_sampling(), t0);
    let Some(Event::ServerRequest { .. }) = s.poll_event() else { panic!() };
    s.handle_closed(CloseReason::Shutdown);
    let ev = events(&mut s);
    assert!(
        matches!(&ev[..], [Event::Completed { token: 1, outcome: Err(RequestError::Closed(_)) }]),
        "{ev:?}"
    );
}

/// `subscriptions/listen` (docs/protocol.md, "Resources, prompts, completion, logging"): only the wanted types, its notifications demuxed by
/// subscription id, replaced by cancelling the old stream, the acknowledgement checked.
#[test]
fn listen_streams_are_demultiplexed_and_replaced() {
    let t0 = crate::fuzzing::epoch();
    let mut s = modern(SessionConfig::default(), t0);
    let filter = ListenFilter {
        resource_subscriptions: vec!["file:///a".into()],
        ..ListenFilter::default()
    };
    s.listen(filter.clone(), t0);
    let out = sent(&mut s);
    assert_eq!(out[0]["method"], "subscriptions/listen");
    assert_eq!(out[0]["params"]["notifications"], json!({"resourceSubscriptions": ["file:///a"]}));
    assert_eq!(out[0]["params"]["_meta"][META_PROTOCOL_VERSION], "2026-07-28");
    let first = out[0]["id"].clone();
    assert_eq!(s.listening(), Some(&filter));
    assert_eq!(s.poll_timeout(), None, "a listen stream has no deadline");
    let tagged = |method: &str, id: &Value, extra: Value| {
        let mut params = extra;
        params["_meta"] = json!({"io.modelcontextprotocol/subscriptionId": id});
        json!({"jsonrpc": "2.0", "method": method, "params": params})
    };
    feed(
        &mut s,
        tagged(
            "notifications/subscriptions/acknowledged",
            &first,
            json!({"notifications": {"resourceSubscriptions": ["file:///a"]}}),
        ),
        t0,
    );
    feed(
        &mut s,
        tagged("notifications/resources/updated", &first, json!({"uri": "file:///a"})),
        t0,
    );
    let ev = events(&mut s);
    assert_eq!(ev.len(), 2, "{ev:?}");
    assert!(
        matches!(&ev[1], Event::Notification(n) if n.method == "notifications/resources/updated")
    );

    // Replaced: the old stream is cancelled, its notifications and answer are dropped.
    s.listen(ListenFilter { tools_list_changed: true, ..ListenFilter::default() }, t0);
    let out = sent(&mut s);
    assert_eq!(out[0]["method"], "notifications/cancelled");
    assert_eq!(out[0]["params"]["requestId"], first);
    assert_eq!(out[1]["params"]["notifications"], json!({"toolsListChanged": true}));
    let second = out[1]["id"].clone();
    feed(
        &mut s,
        tagged("notifications/resources/updated", &first, json!({"uri": "file:///a"})),
        t0,
    );
    reply(&mut s, &first, json!({}), t0);
    assert!(events(&mut s).is_empty());
    assert_eq!(s.stats().late_answers, 1);
    assert_eq!(s.stats().violations, 0);

    // An acknowledgement granting more than asked is a violation.
    feed(
        &mut s,
        tagged(
            "notifications/subscriptions/acknowledged",
            &second,
            json!({"notifications": {"toolsListChanged": true, "promptsListChanged": true}}),
        ),
        t0,
    );
    assert!(events(&mut s).iter().any(|e| matches!(e, Event::Violation(_))));

    // The server ends it (stdio: notifications/cancelled naming it): nothing open any more.
    let end = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": second}});
    feed(&mut s, end, t0);
    assert_eq!(s.listening(), None);
    // An empty filter opens nothing.
    s.listen(ListenFilter::default(), t0);
    assert!(sent(&mut s).is_empty());
}

#[test]
fn listen_is_a_no_op_in_the_legacy_era() {
    let t0 = crate::fuzzing::epoch();
    let mut s = TestSession::new(SessionConfig { era: Era::Legacy, ..Default::default() });
    s.handshake(t0, 0);
    sent(&mut s);
    s.listen(ListenFilter { tools_list_changed: true, ..ListenFilter::default() }, t0);
    assert!(sent(&mut s).is_empty());
}

#[test]
fn keep_alive_pings_a_silent_server_and_reports_no_answer() {
    let t0 = crate::fuzzing::epoch();
    let second = Duration::from_secs(1);
    let config = SessionConfig {
        era: Era::Legacy,
        keep_alive: Some(10 * second),
        request_timeout: 5 * second,
        ..SessionConfig::default()
    };
    let mut s = TestSession::new(config);
    s.handshake(t0, 0);
    let init = sent(&mut s).remove(0);
    let result = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                        "serverInfo": {"name": "x", "version": "1"}});
    reply(&mut s, &init["id"], result, t0);
    events(&mut s);
    sent(&mut s);
    assert_eq!(s.poll_timeout(), Some(t0 + 10 * second));
    s.handle_timeout(t0 + 10 * second);
    let ping = sent(&mut s).remove(0);
    assert_eq!(ping["method"], "ping");
    // Answered: nothing to report; the next one is due ten seconds after that answer.
    let t1 = t0 + 11 * second;
    reply(&mut s, &ping["id"], json!({}), t1);
    assert!(events(&mut s).is_empty());
    assert_eq!(s.poll_timeout(), Some(t1 + 10 * second));
    // Unanswered: reported once, and the late answer is counted, not a violation.
    s.handle_timeout(t1 + 10 * second);
    let ping = sent(&mut s).remove(0);
    s.handle_timeout(t1 + 15 * second);
    let ev = events(&mut s);
    assert!(
        matches!(&ev[..], [Event::Unresponsive { silent_for }] if *silent_for == 15 * second),
        "{ev:?}"
    );
    reply(&mut s, &ping["id"], json!({}), t1 + 16 * second);
    assert_eq!((s.stats().keepalive_pings, s.stats().keepalive_timeouts), (2, 1));
    assert_eq!((s.stats().late_answers, s.stats().violations), (1, 0));
    // In 2026-07-28 the keep-alive is a `server/discover`.
    let config = SessionConfig { keep_alive: Some(second), ..SessionConfig::default() };
    let mut s = modern(config, t0);
    s.handle_timeout(t0 + second);
    assert_eq!(sent(&mut s)[0]["method"], "server/discover");
}

/// 2025-11-25 -32042 (docs/protocol.md, "Server→client input"): the URL elicitations go to the application, and the
/// request is retried unchanged once accepted; a decline gives the caller the original error.
#[test]
fn url_elicitation_required_is_offered_then_retried() {
    let t0 = crate::fuzzing::epoch();
    let features = ClientFeatures { elicitation_url: true, ..ClientFeatures::default() };
    for (answer, retried) in [("accept", true), ("decline", false)] {
        let mut s = TestSession::new(SessionConfig { era: Era::Legacy, ..config(features) });
        s.handshake(t0, 0);
        let init = sent(&mut s).remove(0);
        let result = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                            "serverInfo": {"name": "x", "version": "1"}});
        reply(&mut s, &init["id"], result, t0);
        events(&mut s);
        sent(&mut s);
        let params = RawValue::from_string(r#"{"name":"pay","arguments":{"n":1}}"#.into());
        let id = s.request("tools/call", Some(&params.unwrap()), t0, None, 7).unwrap();
        sent(&mut s);
        let required = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32042,
            "message": "URL elicitation required", "data": {"elicitations": [
                {"mode": "url", "elicitationId": "e1", "url": "https://pay.example/1",
                 "message": "Pay"}]}}});
        feed(&mut s, required, t0);
        let ev = events(&mut s);
        let [Event::ServerRequest { id: input, method, params }] = &ev[..] else {
            panic!("{ev:?}")
        };
        assert_eq!(method, "elicitation/create");
        assert_eq!(params.as_ref().unwrap()["url"], "https://pay.example/1");
        s.respond(input, Ok(json!({"action": answer})), t0);
        let out = sent(&mut s);
        if retried {
            assert_eq!(out[0]["method"], "tools/call");
            assert_eq!(out[0]["params"], json!({"name": "pay", "arguments": {"n": 1}}));
            assert_ne!(out[0]["id"], json!(id));
            reply(&mut s, &out[0]["id"], json!({"content": []}), t0);
            let ev = events(&mut s);
            assert!(matches!(&ev[..], [Event::Completed { token: 7, outcome: Ok(_) }]), "{ev:?}");
        } else {
            assert!(out.is_empty(), "{out:?}");
            let ev = events(&mut s);
            assert!(
                matches!(&ev[..], [Event::Completed { token: 7, outcome: Err(RequestError::Rpc(e)) }] if e.code == -32042),
                "{ev:?}"
            );
        }
    }
}

#[test]
fn sampling_with_tools_is_refused_without_the_capability() {
    let t0 = crate::fuzzing::epoch();
    let features = ClientFeatures { sampling: true, ..ClientFeatures::default() };
    let mut s = TestSession::new(SessionConfig { era: Era::Legacy, ..config(features) });
    s.handshake(t0, 0);
    let init = sent(&mut s).remove(0);
    assert_eq!(init["params"]["capabilities"]["sampling"], json!({}), "no sampling.tools");
    let result = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                        "serverInfo": {"name": "x", "version": "1"}});
    reply(&mut s, &init["id"], result, t0);
    events(&mut s);
    sent(&mut s);
    let with_tools = json!({"jsonrpc": "2.0", "id": 9, "method": "sampling/createMessage",
        "params": {"messages": [], "maxTokens": 5, "tools": [{"name": "t", "inputSchema": {}}]}});
    feed(&mut s, with_tools, t0);
    let out = sent(&mut s);
    assert_eq!(out[0]["error"]["code"], -32602);
    assert!(events(&mut s).is_empty(), "not delegated");
    let plain = json!({"jsonrpc": "2.0", "id": 10, "method": "sampling/createMessage",
        "params": {"messages": [], "maxTokens": 5}});
    feed(&mut s, plain, t0);
    assert!(matches!(&events(&mut s)[..], [Event::ServerRequest { .. }]));
}

/// The probe timed out (a slow start), `initialize` followed, and the server, which took the
/// probe as its first request, serves 2026-07-28 and refuses `initialize` with -32022: the
/// session goes modern instead of failing.
#[test]
fn a_late_modern_server_refusing_initialize_is_spoken_to_in_its_era() {
    let t0 = crate::fuzzing::epoch();
    let probe = Duration::from_millis(100);
    let mut s = TestSession::new(SessionConfig { probe_timeout: probe, ..Default::default() });
    s.handshake(t0, 5);
    let first = sent(&mut s).remove(0);
    s.handle_timeout(t0 + probe);
    let init = sent(&mut s).remove(0);
    assert_eq!(init["method"], "initialize");
    reply(&mut s, &first["id"], discover_result(), t0 + probe);
    let refused = json!({"jsonrpc": "2.0", "id": init["id"], "error": {"code": -32022,
        "message": "connection is serving the 2026-07-28 protocol",
        "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"}}});
    feed(&mut s, refused, t0 + probe);
    let again = sent(&mut s).remove(0);
    assert_eq!(again["method"], "server/discover");
    reply(&mut s, &again["id"], discover_result(), t0 + probe);
    let ev = events(&mut s);
    assert!(matches!(&ev[..], [Event::Completed { token: 5, outcome: Ok(_) }]), "{ev:?}");
    assert_eq!(s.server().unwrap().version, ProtocolVersion::V2026_07_28);
    assert_eq!(s.stats().violations, 0);
}

/// A listen stream that ends is reopened with the same filter after a back-off that doubles;
/// a broken one (its POST or stream failed) is no violation.
#[test]
fn an_ended_listen_stream_is_reopened() {
    let t0 = crate::fuzzing::epoch();
    let mut s = modern(SessionConfig::default(), t0);
    let filter = ListenFilter { tools_list_changed: true, ..ListenFilter::default() };
    s.listen(filter.clone(), t0);
    let first = sent(&mut s).remove(0);
    // The server ends it gracefully.
    reply(&mut s, &first["id"], json!({}), t0);
    assert_eq!(s.listening(), None);
    assert_eq!(s.poll_timeout(), Some(t0 + Duration::from_secs(1)));
    s.handle_timeout(t0 + Duration::from_secs(1));
    let second = sent(&mut s).remove(0);
    assert_eq!(second["method"], "subscriptions/listen");
    assert_eq!(second["params"]["notifications"], json!({"toolsListChanged": true}));
    assert_eq!(s.listening(), Some(&filter));
    // Its stream breaks (HTTP): reopened after 2 s this time, without a violation.
    let token = second["id"].to_string();
    let lost = RequestError::Closed(CloseReason::Io("stream broke".into()));
    s.handle_failed_answer(Some(token.as_bytes()), lost);
    assert_eq!(s.stats().violations, 0);
    let t1 = t0 + Duration::from_secs(1);
    assert_eq!(s.poll_timeout(), Some(t1 + Duration::from_secs(2)));
    s.handle_timeout(t1 + Duration::from_secs(2));
    assert_eq!(sent(&mut s)[0]["method"], "subscriptions/listen");
    // Asking for nothing stops it for good.
    s.listen(ListenFilter::default(), t1);
    assert_eq!(sent(&mut s)[0]["method"], "notifications/cancelled");
    assert_eq!(s.poll_timeout(), None);
}

/// An input answered late: the retry's deadline counts from the answer, not from the
/// `input_required` result.
#[test]
fn a_retry_after_a_slow_answer_gets_a_full_deadline() {
    let t0 = crate::fuzzing::epoch();
    let features = ClientFeatures { sampling: true, ..ClientFeatures::default() };
    let mut s = modern(config(features), t0);
    let (_, input) = waiting_for_sampling(&mut s, 1, t0);
    let later = t0 + Duration::from_secs(70);
    s.respond(&input, Ok(json!({"role": "assistant"})), later);
    assert_eq!(sent(&mut s)[0]["method"], "tools/call");
    assert_eq!(s.poll_timeout(), Some(later + DEFAULT_REQUEST_TIMEOUT));
}
