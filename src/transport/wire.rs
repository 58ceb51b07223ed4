//! What the transport needs to know about the JSON-RPC messages it carries, found without
//! building a JSON tree: the kind, method, id and `Mcp-Name` of an outgoing message, and which
//! response ids an incoming one holds. Also the header-value encoding of MCP 2026-07-28.

use std::borrow::Cow;

use base64::Engine as _;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use super::TransportError;
use crate::jsonrpc::Id;

/// The first protocol revision of the stateless era (`Mcp-Method`/`Mcp-Name`, no sessions).
pub(crate) const MODERN_VERSION: &str = "2026-07-28";

/// Whether `version` (a `YYYY-MM-DD` revision) is 2026-07-28 or later. Date strings of that
/// shape order like the dates they name.
pub(crate) fn is_modern(version: &str) -> bool {
    version.len() == MODERN_VERSION.len() && version >= MODERN_VERSION
}

/// An outgoing message, as the transport sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Outgoing {
    /// `method`, for requests and notifications.
    pub(crate) method: Option<String>,
    /// The id, for requests and responses.
    pub(crate) id: Option<Id>,
    /// `params.name` (tools/call, prompts/get) or `params.uri` (resources/read).
    pub(crate) name: Option<String>,
    /// A batch array (2025-03-26): posted as is, its responses are not tracked.
    pub(crate) batch: bool,
}

impl Outgoing {
    /// A request: the server owes a response with its id.
    pub(crate) fn request_id(&self) -> Option<&Id> {
        if self.method.is_some() { self.id.as_ref() } else { None }
    }

    /// `initialize` (it never carries `MCP-Protocol-Version`, and may trigger the fallback).
    pub(crate) fn is_initialize(&self) -> bool {
        self.method.as_deref() == Some("initialize")
    }
}

#[derive(Deserialize)]
struct PeekOut<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<String>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct PeekName {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    uri: Option<String>,
}

/// Reads what the transport needs from an outgoing message.
///
/// # Errors
/// [`TransportError::InvalidMessage`] if the bytes are not a JSON object or array.
pub(crate) fn peek_outgoing(body: &[u8]) -> Result<Outgoing, TransportError> {
    let invalid = |e: serde_json::Error| TransportError::InvalidMessage { reason: e.to_string() };
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        let _: Vec<IgnoredAny> = serde_json::from_slice(body).map_err(invalid)?;
        return Ok(Outgoing { method: None, id: None, name: None, batch: true });
    }
    let peek: PeekOut<'_> = serde_json::from_slice(body).map_err(invalid)?;
    let id = peek.id.and_then(|raw| Id::from_token(raw.get().as_bytes()));
    let name = match (peek.method.as_deref(), peek.params) {
        (Some(method), Some(params)) => name_in(method, params.get()),
        _ => None,
    };
    Ok(Outgoing { method: peek.method, id, name, batch: false })
}

/// `params.name` or `params.uri` of a `method` request, read from its whole `line`.
pub(crate) fn peek_name(method: &str, line: &[u8]) -> Option<String> {
    if !matches!(method, "tools/call" | "prompts/get" | "resources/read") {
        return None;
    }
    #[derive(Deserialize)]
    struct Line<'a> {
        #[serde(borrow, default)]
        params: Option<&'a RawValue>,
    }
    let line: Line<'_> = serde_json::from_slice(line).ok()?;
    name_in(method, line.params?.get())
}

fn name_in(method: &str, params: &str) -> Option<String> {
    if !matches!(method, "tools/call" | "prompts/get" | "resources/read") {
        return None;
    }
    let p = serde_json::from_str::<PeekName>(params).ok()?;
    if method == "resources/read" { p.uri } else { p.name }
}

#[derive(Deserialize)]
struct PeekIn<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<IgnoredAny>,
}

/// The ids of the responses in an incoming message (one object or a batch array). Anything
/// unreadable yields no ids: the bytes are still delivered, and the caller's decoder reports it.
pub(crate) fn response_ids(body: &[u8]) -> Vec<Id> {
    let id_of = |p: PeekIn<'_>| match (p.method, p.id) {
        (None, Some(raw)) => Id::from_token(raw.get().as_bytes()),
        _ => None,
    };
    match body.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'[') => serde_json::from_slice::<Vec<PeekIn<'_>>>(body)
            .map(|all| all.into_iter().filter_map(id_of).collect())
            .unwrap_or_default(),
        _ => serde_json::from_slice::<PeekIn<'_>>(body).ok().and_then(id_of).into_iter().collect(),
    }
}

/// Encodes a value for `Mcp-Name` / `Mcp-Param-*` (MCP 2026-07-28, "value encoding"): as is
/// when it is printable ASCII (0x20–0x7E) without leading or trailing whitespace, otherwise —
/// and also when the plain text would look like the sentinel — `=?base64?{standard base64 of
/// the UTF-8}?=`.
pub fn encode_header_value(value: &str) -> Cow<'_, str> {
    let printable = value.bytes().all(|b| (0x20..=0x7E).contains(&b));
    let trimmed = value.trim_matches(|c| c == ' ' || c == '\t') == value;
    let sentinel = value.starts_with("=?base64?") && value.ends_with("?=");
    if printable && trimmed && !sentinel {
        Cow::Borrowed(value)
    } else {
        let b64 = base64::engine::general_purpose::STANDARD.encode(value.as_bytes());
        Cow::Owned(format!("=?base64?{b64}?="))
    }
}

/// Decodes a header value [`encode_header_value`] made (`=?base64?…?=` or as is); `None` for
/// a sentinel whose base64 or UTF-8 is invalid.
pub fn decode_header_value(value: &str) -> Option<Cow<'_, str>> {
    match value.strip_prefix("=?base64?").and_then(|v| v.strip_suffix("?=")) {
        None => Some(Cow::Borrowed(value)),
        Some(b64) => {
            let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
            String::from_utf8(bytes).ok().map(Cow::Owned)
        }
    }
}

/// Whether a server-assigned session id is usable: visible ASCII (0x21–0x7E), non-empty.
pub(crate) fn valid_session_id(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|b| (0x21..=0x7E).contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_decode_what_was_encoded() {
        for v in ["plain", " padded ", "héllo", "=?base64?x?="] {
            assert_eq!(decode_header_value(&encode_header_value(v)).unwrap(), v);
        }
        assert_eq!(decode_header_value("=?base64?SGVs!!!bG8=?="), None);
    }

    #[test]
    fn outgoing_kinds_methods_and_names() {
        let r = peek_outgoing(
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{"name":"x"},"name":"echo"}}"#,
        )
        .unwrap();
        assert_eq!(
            (r.method.as_deref(), r.request_id(), r.name.as_deref()),
            (Some("tools/call"), Some(&Id::Number(7)), Some("echo"))
        );
        let read = br#"{"jsonrpc":"2.0","id":"a","method":"resources/read",
                        "params":{"uri":"file:///x","name":"n"}}"#;
        let r = peek_outgoing(read).unwrap();
        assert_eq!(r.name.as_deref(), Some("file:///x"));
        let r = peek_outgoing(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"no"}}"#,
        )
        .unwrap();
        assert_eq!(r.name, None);
        let n = peek_outgoing(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .unwrap();
        assert_eq!((n.request_id(), n.is_initialize()), (None, false));
        let resp = peek_outgoing(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#).unwrap();
        assert_eq!(
            (&resp.method, resp.request_id(), &resp.id),
            (&None, None, &Some(Id::Number(3)))
        );
        assert!(peek_outgoing(b"[{\"jsonrpc\":\"2.0\"}]").unwrap().batch);
        assert!(
            peek_outgoing(br#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#)
                .unwrap()
                .is_initialize()
        );
        assert!(matches!(peek_outgoing(b"not json"), Err(TransportError::InvalidMessage { .. })));
        assert!(matches!(peek_outgoing(b"42"), Err(TransportError::InvalidMessage { .. })));
    }

    #[test]
    fn incoming_response_ids() {
        assert_eq!(
            response_ids(br#"{"jsonrpc":"2.0","id":4,"result":{"x":[1,{"id":9}]}}"#),
            vec![Id::Number(4)]
        );
        assert_eq!(
            response_ids(br#"{"jsonrpc":"2.0","id":"s","error":{"code":1,"message":"m"}}"#),
            vec![Id::String("s".into())]
        );
        assert!(response_ids(br#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#).is_empty());
        assert!(response_ids(br#"{"jsonrpc":"2.0","method":"notifications/progress"}"#).is_empty());
        assert!(response_ids(b"garbage").is_empty());
        assert_eq!(
            response_ids(br#" [{"jsonrpc":"2.0","id":1,"result":1},{"jsonrpc":"2.0","method":"m"},{"id":2,"result":2}]"#),
            vec![Id::Number(1), Id::Number(2)]
        );
    }

    #[test]
    fn header_values() {
        assert_eq!(encode_header_value("get-weather"), "get-weather");
        assert_eq!(encode_header_value("file:///a b.txt"), "file:///a b.txt");
        assert_eq!(encode_header_value("héllo"), "=?base64?aMOpbGxv?=");
        assert_eq!(encode_header_value(" lead"), "=?base64?IGxlYWQ=?=");
        assert_eq!(
            encode_header_value("a\r\nX-Injected: 1"),
            "=?base64?YQ0KWC1JbmplY3RlZDogMQ==?="
        );
        // The spec's own example: a literal that looks like the sentinel is itself encoded.
        assert_eq!(
            encode_header_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
        assert!(is_modern("2026-07-28") && is_modern("2027-01-01"));
        assert!(!is_modern("2025-11-25") && !is_modern("DRAFT-2026-v1") && !is_modern(""));
        assert!(valid_session_id("abc-123") && !valid_session_id("a b") && !valid_session_id(""));
    }
}
