//! The server session, simulated: a scripted client's lines in, the server's lines out.

use super::*;

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

fn sent(s: &mut S) -> Vec<Value> {
    std::iter::from_fn(|| s.poll_transmit()).map(|b| serde_json::from_slice(&b).unwrap()).collect()
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
