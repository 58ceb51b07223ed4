//! The server session, simulated: a scripted client's lines in, the server's lines out.

use super::*;
use crate::jsonrpc::RawJson;
use crate::protocol::modern::META_SUBSCRIPTION_ID;
use serde_json::Map;
use std::time::Duration;

type S = ServerSession<u32>;

fn session() -> S {
    let config = ServerConfig {
        capabilities: json!({"tools": {"listChanged": true}}),
        instructions: Some("be kind".into()),
        ..ServerConfig::default()
    };
    ServerSession::new(config)
}

fn feed(s: &mut S, v: Value) {
    s.handle_frame(v.to_string().as_bytes(), crate::fuzzing::epoch());
}

/// The lines the session wants written, each checked against what its [`ServerTransmit`]
/// says it is.
fn sent(s: &mut S) -> Vec<Value> {
    transmits(s).into_iter().map(|(v, _)| v).collect()
}

/// The lines, with what the session says of each: the stream, and whether it ends it.
fn transmits(s: &mut S) -> Vec<(Value, (Option<u64>, bool))> {
    std::iter::from_fn(|| s.poll_transmit()).map(checked).collect()
}

fn checked(t: ServerTransmit) -> (Value, (Option<u64>, bool)) {
    if t.kind == ServerTransmitKind::StreamEnd {
        assert!(t.bytes.is_empty(), "a stream's end is no line");
        return (Value::Null, (t.stream, true));
    }
    let v: Value = serde_json::from_slice(&t.bytes).unwrap();
    assert!(t.bytes.ends_with(b"\n"), "one line");
    let mut ends = false;
    match &t.kind {
        ServerTransmitKind::Response { error, ends_stream } => {
            assert!(v.get("method").is_none(), "{v}");
            assert_eq!(*error, v.pointer("/error/code").and_then(Value::as_i64), "{v}");
            ends = *ends_stream;
        }
        ServerTransmitKind::Notification { method } => {
            assert!(v.get("id").is_none(), "{v}");
            assert_eq!(v["method"], **method, "{v}");
        }
        ServerTransmitKind::Request { method } => {
            assert!(v["id"].is_number(), "{v}");
            assert_eq!(v["method"], **method, "{v}");
        }
        ServerTransmitKind::StreamEnd => unreachable!("handled above"),
    }
    (v, (t.stream, ends))
}

fn events(s: &mut S) -> Vec<Incoming<u32>> {
    std::iter::from_fn(|| s.poll_event()).collect()
}

fn initialize(s: &mut S, version: &str, caps: Value) -> Value {
    feed(
        s,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": caps, "clientInfo": {"name": "c", "version": "1"}}}),
    );
    let answer = sent(s).remove(0);
    feed(s, json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    answer
}

#[test]
fn every_legacy_revision_is_accepted_and_an_unknown_one_gets_the_latest() {
    for v in ProtocolVersion::LEGACY {
        let mut s = session();
        let answer = initialize(&mut s, v.as_str(), json!({}));
        assert_eq!(answer["result"]["protocolVersion"], v.as_str());
        assert_eq!(answer["result"]["instructions"], "be kind");
        assert_eq!(s.version(), Some(v));
        assert!(
            matches!(events(&mut s)[..], [Incoming::Initialized { version, .. }] if version == v)
        );
    }
    let mut s = session();
    let answer = initialize(&mut s, "1999-01-01", json!({}));
    assert_eq!(answer["result"]["protocolVersion"], ProtocolVersion::LATEST.as_str());
    feed(
        &mut s,
        json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}),
    );
    assert_eq!(sent(&mut s)[0]["error"]["code"], codes::INVALID_REQUEST, "initialize twice");
}

#[test]
fn only_ping_and_the_handshake_come_before_initialize() {
    let mut s = session();
    feed(&mut s, json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
    feed(&mut s, json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let out = sent(&mut s);
    assert_eq!(out[0]["result"], json!({}));
    assert_eq!(out[1]["error"]["code"], codes::INVALID_REQUEST);
    assert!(events(&mut s).is_empty());
}

#[test]
fn one_answer_per_request_and_none_after_a_cancel() {
    let mut s = session();
    initialize(&mut s, "2025-11-25", json!({}));
    events(&mut s);
    feed(
        &mut s,
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "x"}}),
    );
    feed(
        &mut s,
        json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "y"}}),
    );
    feed(&mut s, json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call"}));
    assert_eq!(sent(&mut s)[0]["error"]["code"], codes::INVALID_REQUEST, "a duplicate open id");
    let got = events(&mut s);
    assert!(
        matches!(&got[..], [Incoming::Request { method, .. }, Incoming::Request { .. }] if method == "tools/call")
    );
    assert!(s.respond(&Id::Number(7), Ok(json!({"content": []}))));
    assert!(!s.respond(&Id::Number(7), Ok(json!({}))), "answered once");
    feed(
        &mut s,
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 8, "reason": "bored"}}),
    );
    assert_eq!(
        events(&mut s),
        [Incoming::Cancelled { id: Id::Number(8), reason: Some("bored".into()) }]
    );
    assert!(!s.respond(&Id::Number(8), Ok(json!({}))), "no answer after the cancel");
    let out = sent(&mut s);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0]["id"], 7);
}

#[test]
fn the_servers_requests_need_the_capability_and_time_out() {
    let mut s = session();
    initialize(&mut s, "2025-11-25", json!({"sampling": {}}));
    events(&mut s);
    let t0 = crate::fuzzing::epoch();
    assert_eq!(s.request("elicitation/create", Some(json!({})), 1, t0), Err(1), "not declared");
    assert!(s.request("sampling/createMessage", Some(json!({"messages": []})), 2, t0).is_ok());
    assert!(s.request("sampling/createMessage", None, 3, t0).is_ok());
    let out = sent(&mut s);
    assert_eq!(
        (out[0]["method"].as_str(), out[0]["id"].as_i64()),
        (Some("sampling/createMessage"), Some(1))
    );
    feed(&mut s, json!({"jsonrpc": "2.0", "id": 1, "result": {"role": "assistant"}}));
    assert_eq!(
        events(&mut s),
        [Incoming::Answer { token: 2, outcome: Ok(json!({"role": "assistant"})) }]
    );
    assert_eq!(s.poll_timeout(), Some(t0 + Duration::from_secs(60)));
    s.handle_timeout(t0 + Duration::from_secs(61));
    assert!(
        matches!(&events(&mut s)[..], [Incoming::Answer { token: 3, outcome: Err(e) }] if e.code == codes::REQUEST_TIMEOUT)
    );
    assert_eq!(sent(&mut s)[0]["method"], "notifications/cancelled");
    feed(&mut s, json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    assert!(events(&mut s).is_empty(), "a late answer is dropped");
}

#[test]
fn the_stateless_revision_discovers_and_takes_requests_without_initialize() {
    let mut s = session();
    // server/discover needs the _meta every stateless request carries.
    feed(&mut s, json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}));
    assert_eq!(sent(&mut s)[0]["error"]["code"], codes::INVALID_PARAMS);
    let meta = json!({META_PROTOCOL_VERSION: "2026-07-28",
        super::super::modern::META_CLIENT_CAPABILITIES: {}});
    feed(
        &mut s,
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}),
    );
    let d = sent(&mut s).remove(0);
    assert_eq!(d["result"]["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(d["result"]["capabilities"]["tools"]["listChanged"], true);
    assert_eq!(d["result"]["_meta"][super::super::modern::META_SERVER_INFO]["name"], "ringmcp");
    assert_eq!(
        (&d["result"]["resultType"], &d["result"]["ttlMs"]),
        (&json!("complete"), &json!(0))
    );
    let meta = json!({META_PROTOCOL_VERSION: "2026-07-28",
        super::super::modern::META_CLIENT_CAPABILITIES: {"elicitation": {}}});
    feed(
        &mut s,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta}}),
    );
    assert!(
        matches!(&events(&mut s)[..], [Incoming::Request { version, .. }] if version.is_modern())
    );
    assert_eq!(s.client_capabilities(), &json!({"elicitation": {}}));
    // Its answers are stamped as 2026-07-28 wants them.
    assert!(s.respond(&Id::Number(2), Ok(json!({"tools": []}))));
    let answer = sent(&mut s).remove(0);
    assert_eq!(answer["result"]["resultType"], "complete");
    assert_eq!(answer["result"]["cacheScope"], "private");
    // A revision it does not speak: -32022 with the ones it does; no capabilities: -32602.
    feed(
        &mut s,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list",
               "params": {"_meta": {META_PROTOCOL_VERSION: "2099-01-01"}}}),
    );
    feed(
        &mut s,
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list",
               "params": {"_meta": {META_PROTOCOL_VERSION: "2026-07-28"}}}),
    );
    let out = sent(&mut s);
    assert_eq!(out[0]["error"]["code"], codes::UNSUPPORTED_PROTOCOL_VERSION);
    assert_eq!(out[0]["error"]["data"]["supported"], json!(["2026-07-28"]));
    assert_eq!(out[1]["error"]["code"], codes::INVALID_PARAMS);
    // A server that speaks only 2026-07-28 refuses requests without `_meta`.
    let modern_only =
        ServerConfig { versions: vec![ProtocolVersion::V2026_07_28], ..ServerConfig::default() };
    let mut m: S = ServerSession::new(modern_only);
    feed(&mut m, json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    assert_eq!(sent(&mut m)[0]["error"]["code"], codes::INVALID_PARAMS);
    let legacy_only =
        ServerConfig { versions: ProtocolVersion::LEGACY.to_vec(), ..ServerConfig::default() };
    let mut s: S = ServerSession::new(legacy_only);
    feed(&mut s, json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover"}));
    assert_eq!(
        sent(&mut s)[0]["error"]["code"],
        codes::INVALID_REQUEST,
        "no modern revision: not initialized"
    );
}

#[test]
fn garbage_gets_precise_errors() {
    let mut s = session();
    s.handle_frame(b"not json", crate::fuzzing::epoch());
    s.handle_frame(br#"{"jsonrpc":"1.0","id":5,"method":"x"}"#, crate::fuzzing::epoch());
    feed(&mut s, json!([{"jsonrpc": "2.0", "id": 9, "method": "ping"}, 3]));
    let out = sent(&mut s);
    assert_eq!(out[0]["error"]["code"], codes::PARSE_ERROR);
    assert_eq!(
        (out[1]["error"]["code"].as_i64(), out[1]["id"].as_i64()),
        (Some(codes::INVALID_REQUEST), Some(5))
    );
    assert_eq!(out[2]["result"], json!({}));
    assert_eq!(out[3]["error"]["code"], codes::INVALID_REQUEST);
    assert_eq!(events(&mut s).len(), 2, "two violations reported");
}

fn modern_meta() -> Value {
    json!({META_PROTOCOL_VERSION: "2026-07-28",
           super::super::modern::META_CLIENT_CAPABILITIES: {"elicitation": {}}})
}

fn from(s: &mut S, stream: u64, scoped: bool, v: Value) {
    let origin = Some(Origin { stream, scoped });
    s.handle_frame_from(v.to_string().as_bytes(), origin, crate::fuzzing::epoch());
}

/// A stream whose requests were all cancelled ends without an answer (a client that
/// cancelled does not wait on it); one with a request still open goes on.
#[test]
fn a_stream_whose_requests_were_all_cancelled_ends() {
    let mut s = session();
    initialize(&mut s, "2025-11-25", json!({}));
    events(&mut s);
    let call =
        |id| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "x"}});
    from(&mut s, 5, false, call(1));
    from(&mut s, 6, false, json!([call(2), call(3)]));
    assert_eq!(events(&mut s).len(), 3);
    let cancel = |id| {
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                             "params": {"requestId": id}})
    };
    from(&mut s, 7, false, cancel(1));
    from(&mut s, 8, false, cancel(2));
    assert_eq!(transmits(&mut s), [(Value::Null, (Some(5), true))], "stream 6 still owes 3");
    s.respond(&Id::Number(3), Ok(json!({})));
    assert_eq!(transmits(&mut s)[0].1, (Some(6), true));
    // Cancelling what is already answered, or was never asked, ends nothing.
    from(&mut s, 9, false, cancel(3));
    from(&mut s, 9, false, cancel(42));
    assert!(transmits(&mut s).is_empty());
}

/// Each answer carries its stream back, and the last one a stream waits for says so (an
/// immediate error of a batch included), so that a driver routes without reading a line.
#[test]
fn answers_carry_their_stream_and_the_last_one_ends_it() {
    let mut s = session();
    initialize(&mut s, "2025-11-25", json!({}));
    events(&mut s);
    from(
        &mut s,
        3,
        false,
        json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"},
               {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "x", "_meta": {"progressToken": "p"}}},
               {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}]),
    );
    from(&mut s, 4, false, json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}));
    assert_eq!(
        transmits(&mut s),
        [(json!({"jsonrpc": "2.0", "id": 1, "result": {}}), (Some(3), false))]
    );
    assert_eq!(events(&mut s).len(), 3);
    s.notify("notifications/progress", Some(json!({"progressToken": "p", "progress": 1})));
    s.respond(&Id::Number(9), Ok(json!({"tools": []})));
    s.respond(&Id::Number(3), Ok(json!({"tools": []})));
    s.respond(&Id::Number(2), Err(ErrorObject::new(codes::INVALID_PARAMS, "no")));
    let out = transmits(&mut s);
    let routes: Vec<_> = out.iter().map(|(_, r)| *r).collect();
    assert_eq!(routes, [(Some(3), false), (Some(4), true), (Some(3), false), (Some(3), true)]);
    assert_eq!(out[0].0["method"], "notifications/progress", "progress goes with its request");
    // Unrouted frames (stdio) have no stream.
    feed(&mut s, json!({"jsonrpc": "2.0", "id": 20, "method": "ping"}));
    assert_eq!(transmits(&mut s)[0].1, (None, false));
}

/// Stateless clients share one session and may use the same ids and progress tokens: scoped
/// frames are keyed by ids of the session's own, and each client gets its own back, on typed
/// values before encoding (an answer whose text holds `data: ` included).
#[test]
fn scoped_requests_get_the_clients_ids_and_tokens_back() {
    let mut s = session();
    for stream in [1, 2] {
        from(
            &mut s,
            stream,
            true,
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                   "params": {"name": "echo", "_meta": {
                       META_PROTOCOL_VERSION: "2026-07-28",
                       super::super::modern::META_CLIENT_CAPABILITIES: {},
                       "progressToken": 1}}}),
        );
    }
    assert!(sent(&mut s).is_empty(), "no duplicate-id error across streams");
    let keys: Vec<(Id, Value)> = events(&mut s)
        .into_iter()
        .map(|e| match e {
            Incoming::Request { id, params, .. } => {
                (id, params.unwrap()["_meta"]["progressToken"].clone())
            }
            other => panic!("{other:?}"),
        })
        .collect();
    assert_ne!(keys[0].0, keys[1].0, "keys of the session's own");
    assert_ne!(keys[0].1, keys[1].1, "and tokens");
    s.notify("notifications/progress", Some(json!({"progressToken": keys[1].1, "progress": 5})));
    let text = json!({"content": [{"type": "text", "text": "metadata: 1"}]});
    s.respond(&keys[1].0, Ok(text.clone()));
    s.respond(&keys[0].0, Ok(text));
    let out = transmits(&mut s);
    assert_eq!(out[0].0["params"]["progressToken"], 1, "the client's token");
    assert_eq!(out[0].1, (Some(2), false));
    assert_eq!((&out[1].0["id"], out[1].1), (&json!(7), (Some(2), true)));
    assert_eq!(out[1].0["result"]["content"][0]["text"], "metadata: 1");
    assert_eq!((&out[2].0["id"], out[2].1), (&json!(7), (Some(1), true)));
}

/// `subscriptions/listen` is served by the session: acknowledged with what was both asked and
/// granted, kept open, and the notifications go to each stream that asked, tagged; until the
/// client cancels it.
#[test]
fn listen_streams_get_what_they_asked_for_tagged() {
    let config = ServerConfig {
        listen: Some(Listenable { tools: true, resource_updates: true, ..Listenable::default() }),
        ..ServerConfig::default()
    };
    let mut s: S = ServerSession::new(config);
    let listen = |filter: Value| {
        json!({"jsonrpc": "2.0", "id": "l", "method": "subscriptions/listen",
               "params": {"notifications": filter, "_meta": modern_meta()}})
    };
    from(&mut s, 1, true, listen(json!({"toolsListChanged": true, "promptsListChanged": true})));
    from(&mut s, 2, true, listen(json!({"resourceSubscriptions": ["file:///a"]})));
    let acks = transmits(&mut s);
    assert_eq!(acks.len(), 2);
    assert_eq!(acks[0].0["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(acks[0].0["params"]["notifications"], json!({"toolsListChanged": true}));
    assert_eq!(acks[0].0["params"]["_meta"][META_SUBSCRIPTION_ID], "l", "the client's id");
    assert_eq!(acks[0].1, (Some(1), false));
    assert!(events(&mut s).is_empty(), "nothing for the application to answer");
    assert!(s.listening());
    assert_eq!(s.listened_uris(), ["file:///a"]);
    s.notify("notifications/tools/list_changed", None);
    s.notify("notifications/prompts/list_changed", None);
    s.notify("notifications/resources/updated", Some(json!({"uri": "file:///b"})));
    s.notify("notifications/resources/updated", Some(json!({"uri": "file:///a"})));
    let out = transmits(&mut s);
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(
        (&out[0].0["method"], out[0].1),
        (&json!("notifications/tools/list_changed"), (Some(1), false))
    );
    assert_eq!(out[0].0["params"]["_meta"][META_SUBSCRIPTION_ID], "l");
    assert_eq!((&out[1].0["params"]["uri"], out[1].1), (&json!("file:///a"), (Some(2), false)));
    // No filter: refused.
    from(
        &mut s,
        3,
        false,
        json!({"jsonrpc": "2.0", "id": "m", "method": "subscriptions/listen",
                                   "params": {"_meta": modern_meta()}}),
    );
    let refused = transmits(&mut s);
    assert_eq!(refused[0].0["error"]["code"], codes::INVALID_PARAMS);
    assert_eq!(refused[0].1, (Some(3), true));
}

#[test]
fn a_legacy_client_gets_notifications_plain_and_none_before_its_first_request() {
    let config = ServerConfig { listen: Some(Listenable::ALL), ..ServerConfig::default() };
    let mut s: S = ServerSession::new(config);
    s.notify("notifications/tools/list_changed", None);
    assert!(sent(&mut s).is_empty());
    initialize(&mut s, "2025-06-18", json!({}));
    s.notify("notifications/tools/list_changed", None);
    let out = sent(&mut s);
    assert_eq!(out[0]["method"], "notifications/tools/list_changed");
    assert!(out[0].get("params").is_none());
}

/// A round handed out with `input_required` comes back as a retry with its answers (a
/// missing one as an error); a state not handed out is an ordinary request; an unretried
/// round expires.
#[test]
fn rounds_are_retried_with_their_answers_or_expire() {
    let mut s = session();
    let t0 = crate::fuzzing::epoch();
    let call = |id: u64, extra: Value| {
        let mut params = json!({"name": "deploy", "_meta": modern_meta()});
        params.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
    };
    feed(&mut s, call(1, json!({})));
    events(&mut s);
    let mut asks = Map::new();
    asks.insert("ok".into(), json!({"method": "elicitation/create", "params": {}}));
    asks.insert("where".into(), json!({"method": "roots/list"}));
    let state = s.input_required(&Id::Number(1), asks.clone(), t0).unwrap();
    assert_eq!(state.len(), 32, "128 random bits");
    let out = sent(&mut s).remove(0);
    assert_eq!(out["result"]["resultType"], "input_required");
    assert_eq!(out["result"]["requestState"], json!(state));
    assert_eq!(out["result"]["inputRequests"]["ok"]["method"], "elicitation/create");
    feed(&mut s, call(2, json!({"requestState": "forged", "inputResponses": {}})));
    assert!(matches!(&events(&mut s)[..], [Incoming::Request { .. }]), "not a round of ours");
    feed(
        &mut s,
        call(3, json!({"requestState": state, "inputResponses": {"ok": {"action": "accept"}}})),
    );
    match &events(&mut s)[..] {
        [Incoming::Retry { id, state: st, responses, .. }] => {
            assert_eq!((id, st), (&Id::Number(3), &state));
            assert_eq!(responses.len(), 2);
            let ok = responses.iter().find(|(k, _)| k == "ok").unwrap();
            assert_eq!(ok.1.as_ref().unwrap(), &json!({"action": "accept"}));
            let missing = responses.iter().find(|(k, _)| k == "where").unwrap();
            assert_eq!(missing.1.as_ref().unwrap_err().code, codes::INVALID_PARAMS);
        }
        other => panic!("{other:?}"),
    }
    feed(&mut s, call(4, json!({"requestState": state})));
    assert!(matches!(&events(&mut s)[..], [Incoming::Request { .. }]), "a round retries once");
    // One that is never retried expires.
    let expiring = s.input_required(&Id::Number(4), asks, t0).unwrap();
    assert_eq!(s.poll_timeout(), Some(t0 + ROUND_WAIT));
    s.handle_timeout(t0 + ROUND_WAIT);
    assert_eq!(events(&mut s), [Incoming::RoundExpired { state: expiring.clone() }]);
    feed(&mut s, call(5, json!({"requestState": expiring})));
    assert!(matches!(&events(&mut s)[..], [Incoming::Request { .. }]));
    assert!(s.input_required(&Id::Number(99), Map::new(), t0).is_none(), "not open");
}

/// A malformed answer from the client is a violation, and is not answered (two peers that
/// answered each other's bad answers would never stop); a malformed request still is.
#[test]
fn a_malformed_answer_is_reported_not_answered() {
    let mut s = session();
    initialize(&mut s, "2025-11-25", json!({}));
    events(&mut s);
    feed(&mut s, json!({"jsonrpc": "1.0", "id": "a", "result": {}}));
    feed(&mut s, json!({"jsonrpc": "2.0", "id": 7, "error": "not an object"}));
    assert!(transmits(&mut s).is_empty());
    assert_eq!(events(&mut s).len(), 2, "two violations");
    feed(&mut s, json!({"jsonrpc": "1.0", "id": 8, "method": "ping"}));
    assert_eq!(transmits(&mut s)[0].0["id"], 8);
}

#[test]
fn an_answer_given_as_json_text_reads_as_the_value_it_stands_for() {
    let meta = json!({META_PROTOCOL_VERSION: "2026-07-28",
        super::super::modern::META_CLIENT_CAPABILITIES: {}});
    let text = |t: &str| Ok(RawJson::raw(bytes::Bytes::copy_from_slice(t.as_bytes())));
    // Stateless: the members 2026-07-28 wants are spliced in, ahead of the text's own, where
    // the text lacks them; what it has is kept.
    let mut s = session();
    for (id, method) in [(1, "tools/list"), (2, "tools/list"), (3, "prompts/get"), (4, "x")] {
        let params = json!({"_meta": meta});
        feed(&mut s, json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    }
    events(&mut s);
    assert!(s.respond_json(&Id::Number(1), text(r#" {"tools":[{"name":"a\"b"}]}"#)));
    assert!(s.respond_json(&Id::Number(2), text(r#"{"tools":[],"resultType":"input_required"}"#)));
    assert!(s.respond_json(&Id::Number(3), text("{}")));
    assert!(s.respond_json(&Id::Number(4), text("[1]")));
    assert!(!s.respond_json(&Id::Number(4), text("{}")), "answered once");
    let out = sent(&mut s);
    let want = json!({"tools": [{"name": "a\"b"}], "resultType": "complete",
                      "ttlMs": 0, "cacheScope": "private"});
    assert_eq!(out[0]["result"], want);
    assert_eq!(out[1]["result"]["resultType"], "input_required", "the text's own is kept");
    assert_eq!(out[1]["result"]["ttlMs"], 0);
    assert_eq!(out[2]["result"], json!({"resultType": "complete"}), "an empty object");
    assert_eq!(out[3]["result"], json!([1]), "not an object: written as it is");
    // A legacy session writes the text as it is, under the request's id.
    let mut s = session();
    initialize(&mut s, "2025-11-25", json!({}));
    feed(&mut s, json!({"jsonrpc": "2.0", "id": "q", "method": "tools/list"}));
    events(&mut s);
    assert!(s.respond_json(&Id::String("q".into()), text(r#"{"tools":[]}"#)));
    let line = s.poll_transmit().unwrap();
    assert_eq!(
        &line.bytes[..],
        &b"{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"result\":{\"tools\":[]}}\n"[..]
    );
}
