use super::*;
use serde_json::json;

fn single(s: &str) -> Message {
    match decode(s.as_bytes()).unwrap() {
        Decoded::Single(m) => m,
        Decoded::Batch(_) => panic!("batch"),
    }
}

#[test]
fn classifies_each_kind() {
    assert_eq!(
        single(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
        Message::Request(Request { id: Id::Number(1), method: "ping".into(), params: None })
    );
    assert_eq!(
        single(r#"{"jsonrpc":"2.0","method":"notifications/x","params":{"a":1}}"#),
        Message::Notification(Notification {
            method: "notifications/x".into(),
            params: Some(json!({"a":1}))
        })
    );
    assert_eq!(
        single(r#"{"result":null,"jsonrpc":"2.0","id":"s"}"#),
        Message::Response(Response { id: Some(Id::String("s".into())), outcome: Ok(Value::Null) })
    );
    assert_eq!(
        single(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#),
        Message::Response(Response {
            id: None,
            outcome: Err(ErrorObject::new(codes::PARSE_ERROR, "bad"))
        })
    );
}

/// Valid JSON that breaks a JSON-RPC rule: every decoder must call these `Invalid`.
pub(super) const BROKEN_ENVELOPES: &[&str] = &[
    r#"{"id":1,"result":{}}"#,
    r#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
    r#"{"jsonrpc":"2.0","id":1}"#,
    r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}"#,
    r#"{"jsonrpc":"2.0","id":1.5,"result":1}"#,
    r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
    r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#,
    r#"{"jsonrpc":"2.0","method":"x","params":3}"#,
    r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
    r#"{"jsonrpc":"2.0","method":7}"#,
    r#"[]"#,
    r#"7"#,
];

#[test]
fn rejects_broken_envelopes() {
    for bad in BROKEN_ENVELOPES {
        assert!(matches!(decode(bad.as_bytes()), Err(DecodeError::Invalid(_))), "accepted {bad}");
    }
    assert!(matches!(decode(b"{not json"), Err(DecodeError::Json(_))));
}

#[test]
fn batch_elements_are_classified_independently() {
    let Decoded::Batch(items) = decode(
        br#"[{"jsonrpc":"2.0","id":1,"result":{}},{"bogus":1},{"jsonrpc":"2.0","method":"m"}]"#,
    )
    .unwrap() else {
        panic!("not a batch")
    };
    assert!(items[0].is_ok() && items[1].is_err() && items[2].is_ok());
}

#[test]
fn encodes_single_compact_lines() {
    let params = RawValue::from_string(r#"{"text":"a\nb"}"#.into()).unwrap();
    let line = encode_request(&Id::Number(3), "tools/call", Some(&params));
    assert_eq!(line, b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"text\":\"a\\nb\"}}\n");
    let line = encode_result(&Id::String("x".into()), json!({})).unwrap();
    assert_eq!(line, b"{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{}}\n");
    let line = encode_error(None, &ErrorObject::new(-32600, "no"));
    assert_eq!(
        line,
        b"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"no\"}}\n"
    );
    let line = encode_notification::<Value>("notifications/initialized", None).unwrap();
    assert_eq!(line, b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    // A result given as text, pretty-printed: still one line, and the same JSON.
    let pretty = serde_json::to_vec_pretty(&json!({"a": [1, "x\ny"], "b": {}})).unwrap();
    let line = encode_raw_result(&Id::Number(4), pretty);
    assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
    assert!(line.ends_with(b"}\n"));
    let v: Value = serde_json::from_slice(&line).unwrap();
    assert_eq!(v, json!({"jsonrpc": "2.0", "id": 4, "result": {"a": [1, "x\ny"], "b": {}}}));
}

#[test]
fn ids_round_trip_from_sniffed_tokens() {
    assert_eq!(Id::from_token(b"42"), Some(Id::Number(42)));
    assert_eq!(Id::from_token(br#""a\"b""#), Some(Id::String("a\"b".into())));
    assert_eq!(Id::from_token(b"null"), None);
}
