//! The pieces of the stateless 2026-07-28 revision ("modern") that are pure data: the `_meta`
//! every request carries, the `server/discover` answer, the `resultType` of a result and its
//! `input_required` rounds, and the `x-mcp-header` annotations of tool schemas
//! (docs/protocol.md, "Revisions and era detection").
//!
//! The session ([`super::Session`]) decides when each applies; nothing here keeps state.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::jsonrpc::{JsonRepr, RawJson};

use super::types::{Implementation, InitializeResult};
use super::version::ProtocolVersion;
use super::{ClientFeatures, Root};

/// `_meta` key: the revision of this request (required on every request).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for this request (required).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's name and version (SHOULD).
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the log level wanted for this request (no level: no log messages).
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key of results: the server's name and version.
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key of notifications delivered on a `subscriptions/listen` stream.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// How a session finds out which revision the server speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Era {
    /// Probe with `server/discover` (2026-07-28); on a `DiscoverResult` speak the stateless
    /// revision, on any other error or a timeout fall back to the `initialize` handshake
    /// (never keyed to one error code). The default.
    #[default]
    Auto,
    /// Only the `initialize` handshake (2024-11-05 … 2025-11-25).
    Legacy,
    /// Only the stateless revision: a server that does not answer `server/discover` fails.
    Modern,
}

/// The client capabilities of a 2026-07-28 request (`roots` has no `listChanged` there).
pub(crate) fn client_capabilities(features: ClientFeatures, roots: Option<&[Root]>) -> Value {
    let mut caps = json!({});
    if roots.is_some() {
        caps["roots"] = json!({});
    }
    if features.sampling {
        caps["sampling"] = json!({});
    }
    let mut modes = Map::new();
    if features.elicitation_form {
        modes.insert("form".into(), json!({}));
    }
    if features.elicitation_url {
        modes.insert("url".into(), json!({}));
    }
    if !modes.is_empty() {
        caps["elicitation"] = Value::Object(modes);
    }
    caps
}

/// The `_meta` members every request of `version` carries.
pub(crate) fn request_meta(
    version: ProtocolVersion,
    capabilities: &Value,
    client_info: &Implementation,
    log_level: Option<&str>,
) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert(META_PROTOCOL_VERSION.into(), json!(version.as_str()));
    meta.insert(META_CLIENT_CAPABILITIES.into(), capabilities.clone());
    meta.insert(META_CLIENT_INFO.into(), json!(client_info));
    if let Some(level) = log_level {
        meta.insert(META_LOG_LEVEL.into(), json!(level));
    }
    meta
}

/// `params` with `meta_json`'s members added to its `_meta` (what [`encode_with_meta`] writes
/// after `"params":`), on its own, for tests.
#[cfg(test)]
fn with_meta(params: Option<&RawValue>, meta_json: &str) -> Result<Box<RawValue>, String> {
    let mut out = Vec::new();
    write_params(&mut out, params, meta_json)?;
    let text = String::from_utf8(out).expect("built from UTF-8 pieces");
    RawValue::from_string(text).map_err(|e| e.to_string())
}

/// The request line `{"jsonrpc":"2.0","id":…,"method":…,"params":{"_meta":…,…}}\n`, built
/// in one buffer from pieces that are valid JSON already (so nothing is scanned again).
/// `meta_json`'s members are added to the params' `_meta` (members already there are kept,
/// e.g. `progressToken`); params without any `_meta` (the common case) are spliced, not parsed:
/// a large argument is copied once, never re-serialised.
///
/// # Errors
/// When `params` is not a JSON object.
pub(crate) fn encode_with_meta(
    id: super::RequestId,
    method: &str,
    params: Option<&RawValue>,
    meta_json: &str,
) -> Result<Vec<u8>, String> {
    use std::io::Write;
    let method = serde_json::to_string(method).expect("a string serialises");
    let size = 48 + method.len() + meta_json.len() + params.map_or(0, |p| p.get().len());
    let mut out = Vec::with_capacity(size);
    write!(out, r#"{{"jsonrpc":"2.0","id":{id},"method":{method},"params":"#)
        .expect("writing to a Vec");
    write_params(&mut out, params, meta_json)?;
    out.extend_from_slice(b"}\n");
    Ok(out)
}

/// Writes `params` with the `_meta` members into `out`.
fn write_params(
    out: &mut Vec<u8>,
    params: Option<&RawValue>,
    meta_json: &str,
) -> Result<(), String> {
    let Some(params) = params else {
        out.extend_from_slice(b"{\"_meta\":");
        out.extend_from_slice(meta_json.as_bytes());
        out.push(b'}');
        return Ok(());
    };
    let text = params.get().trim();
    let Some(body) = text.strip_prefix('{') else {
        return Err("params must be a JSON object (every 2026-07-28 request carries _meta)".into());
    };
    if memchr::memmem::find(text.as_bytes(), b"\"_meta\"").is_none() {
        // No `_meta` anywhere, so none at the top level: insert it first.
        let rest = body.trim_start();
        out.extend_from_slice(b"{\"_meta\":");
        out.extend_from_slice(meta_json.as_bytes());
        if !rest.starts_with('}') {
            out.push(b',');
        }
        out.extend_from_slice(rest.as_bytes());
        return Ok(());
    }
    let mut value: Map<String, Value> =
        serde_json::from_str(text).map_err(|e| format!("params: {e}"))?;
    let entry = value.entry("_meta").or_insert_with(|| json!({}));
    let Value::Object(existing) = entry else {
        return Err("params._meta must be an object".into());
    };
    let meta: Map<String, Value> = serde_json::from_str(meta_json).expect("built as an object");
    for (k, v) in meta {
        existing.entry(k).or_insert(v);
    }
    serde_json::to_writer(out, &value).expect("a map of values serialises");
    Ok(())
}

fn raw(text: String) -> Box<RawValue> {
    RawValue::from_string(text).expect("built from valid JSON")
}

/// A `DiscoverResult`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DiscoverResult {
    supported_versions: Vec<String>,
    #[serde(default)]
    capabilities: Value,
    /// Not in the 2026-07-28 schema (there it is `_meta` serverInfo), but sent by some servers.
    #[serde(default)]
    server_info: Option<Implementation>,
    #[serde(default)]
    instructions: Option<String>,
    #[serde(default, rename = "_meta")]
    meta: Option<Map<String, Value>>,
}

/// What `server/discover` told us, as the legacy handshake's result (so the rest of the host
/// reads one shape), and the revision chosen from `supportedVersions`. `Ok(None)`: the server
/// lists no modern revision we speak.
///
/// # Errors
/// When the result is not a `DiscoverResult`.
pub(crate) fn parse_discover(
    result: &RawJson,
) -> Result<Option<(ProtocolVersion, InitializeResult)>, String> {
    let discover: DiscoverResult = result.parse().map_err(|e| e.to_string())?;
    let chosen = choose(&discover.supported_versions);
    let Some(version) = chosen else { return Ok(None) };
    let server_info = discover
        .meta
        .as_ref()
        .and_then(|m| m.get(META_SERVER_INFO))
        .and_then(|v| serde_json::from_value::<Implementation>(v.clone()).ok())
        .or(discover.server_info)
        .unwrap_or_else(|| Implementation::new("(unnamed server)", ""));
    Ok(Some((
        version,
        InitializeResult {
            protocol_version: version.as_str().to_owned(),
            capabilities: discover.capabilities,
            server_info,
            instructions: discover.instructions,
        },
    )))
}

/// The newest modern revision we speak among `offered`.
pub(crate) fn choose(offered: &[String]) -> Option<ProtocolVersion> {
    offered.iter().filter_map(|v| v.parse::<ProtocolVersion>().ok()).filter(|v| v.is_modern()).max()
}

/// The revisions an `UnsupportedProtocolVersion` (-32022) error lists in `data.supported`.
pub(crate) fn supported_in_error(data: Option<&Value>) -> Vec<String> {
    let list = data.and_then(|d| d.get("supported")).and_then(Value::as_array);
    list.into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect()
}

/// What a 2026-07-28 result is, by its `resultType`.
#[derive(Debug)]
pub(crate) enum ResultKind {
    /// `"complete"`, or no `resultType` (which MUST be read as complete).
    Complete,
    /// `"input_required"`: fulfil `inputRequests`, retry with `inputResponses` and the
    /// `requestState` echoed exactly.
    InputRequired {
        /// Key → `{method, params}`.
        requests: Map<String, Value>,
        /// Opaque; echoed as received (the raw JSON text, so byte for byte).
        state: Option<Box<RawValue>>,
    },
}

/// The top-level members that decide a result's kind (everything else is skipped unparsed).
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(default, rename = "resultType", borrow)]
    result_type: Option<Cow<'a, str>>,
    #[serde(default, rename = "inputRequests")]
    input_requests: Option<Map<String, Value>>,
    #[serde(default, rename = "requestState")]
    request_state: Option<Box<RawValue>>,
}

/// Reads a result's `resultType`. A result without the member (the common case of a large
/// answer) is recognised by a byte search, without parsing it.
///
/// # Errors
/// An unknown `resultType`, or an `input_required` result with neither `inputRequests` nor
/// `requestState`.
pub(crate) fn classify(result: &RawJson) -> Result<ResultKind, String> {
    let head = match result.repr() {
        JsonRepr::Raw(bytes) => {
            if memchr::memmem::find(bytes, b"\"resultType\"").is_none() {
                return Ok(ResultKind::Complete);
            }
            serde_json::from_slice::<Head>(bytes).map_err(|e| e.to_string())?
        }
        JsonRepr::Parsed(value) => {
            let Some(kind) = value.get("resultType") else { return Ok(ResultKind::Complete) };
            Head {
                result_type: kind.as_str().map(|s| Cow::Owned(s.to_owned())),
                input_requests: value.get("inputRequests").and_then(Value::as_object).cloned(),
                request_state: value
                    .get("requestState")
                    .map(|s| RawValue::from_string(s.to_string()).expect("a Value is JSON")),
            }
        }
    };
    match head.result_type.as_deref() {
        None | Some("complete") => Ok(ResultKind::Complete),
        Some("input_required") => {
            if head.input_requests.is_none() && head.request_state.is_none() {
                return Err("input_required with neither inputRequests nor requestState".into());
            }
            Ok(ResultKind::InputRequired {
                requests: head.input_requests.unwrap_or_default(),
                state: head.request_state,
            })
        }
        Some(other) => Err(format!("unknown resultType {other:?}")),
    }
}

/// The params of the retry of a request whose result was `input_required`: the original
/// params (from the request line sent), with this round's `inputResponses` and `requestState`
/// replacing any earlier round's (each round's data applies to that retry only).
///
/// # Errors
/// When `line` is not a request with object params.
pub(crate) fn retry_params(
    line: &[u8],
    responses: Map<String, Value>,
    state: Option<&RawValue>,
) -> Result<Box<RawValue>, String> {
    #[derive(Deserialize)]
    struct Line {
        params: Option<Map<String, Value>>,
    }
    let sent: Line = serde_json::from_slice(line).map_err(|e| e.to_string())?;
    let mut params = sent.params.unwrap_or_default();
    params.remove("requestState");
    params.insert("inputResponses".into(), Value::Object(responses));
    let mut text = Value::Object(params).to_string();
    if let Some(state) = state {
        // Spliced as the raw text received, so that the echo is exact.
        text.truncate(text.len() - 1);
        text.push_str(",\"requestState\":");
        text.push_str(state.get());
        text.push('}');
    }
    RawValue::from_string(text).map_err(|e| e.to_string())
}

/// The params of a request line, as sent (an object, `{}` when it had none).
///
/// # Errors
/// When `line` is not a request.
pub(crate) fn params_of(line: &[u8]) -> Result<Box<RawValue>, String> {
    #[derive(Deserialize)]
    struct Line {
        params: Option<Box<RawValue>>,
    }
    let sent: Line = serde_json::from_slice(line).map_err(|e| e.to_string())?;
    Ok(sent.params.unwrap_or_else(|| raw("{}".to_owned())))
}

/// One `x-mcp-header` annotation of a tool's input schema: argument `property` is mirrored
/// into the HTTP header `Mcp-Param-{header}` (2026-07-28 Streamable HTTP).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    /// The top-level argument's name.
    pub property: String,
    /// The header name's suffix, as annotated.
    pub header: String,
}

/// The `x-mcp-header` annotations of a tool's `inputSchema`, checked against the rules: a
/// non-empty name of HTTP token characters (visible ASCII, no space, colon or other
/// separator), on a property of primitive type (string, integer or boolean; not number,
/// object, array or null), each name once (case-insensitively).
///
/// # Errors
/// The first broken rule, for the warning: such a tool must be left out of the host's list.
pub fn param_headers(input_schema: &Value) -> Result<Vec<ParamHeader>, String> {
    let mut headers: Vec<ParamHeader> = Vec::new();
    let Some(properties) = input_schema.get("properties").and_then(Value::as_object) else {
        return Ok(headers);
    };
    for (property, schema) in properties {
        let Some(annotation) = schema.get("x-mcp-header") else { continue };
        let Some(header) = annotation.as_str() else {
            return Err(format!("x-mcp-header of {property:?} is not a string"));
        };
        if header.is_empty() {
            return Err(format!("x-mcp-header of {property:?} is empty"));
        }
        if let Some(bad) = header.chars().find(|&c| !is_token_char(c)) {
            return Err(format!(
                "x-mcp-header {header:?} of {property:?} has the character {bad:?}, not allowed in a header name"
            ));
        }
        if !primitive(schema.get("type")) {
            return Err(format!(
                "x-mcp-header {header:?} is on {property:?}, whose type is not string, integer or boolean"
            ));
        }
        if headers.iter().any(|h| h.header.eq_ignore_ascii_case(header)) {
            return Err(format!("x-mcp-header {header:?} is used twice"));
        }
        headers.push(ParamHeader { property: property.clone(), header: header.to_owned() });
    }
    Ok(headers)
}

/// RFC 9110 `tchar`.
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Whether a property's `type` is one an `x-mcp-header` may annotate.
fn primitive(kind: Option<&Value>) -> bool {
    let ok = |t: &str| matches!(t, "string" | "integer" | "boolean");
    match kind {
        Some(Value::String(t)) => ok(t),
        // `["string", "null"]`: the value may be null (then the header is omitted).
        Some(Value::Array(types)) => {
            let names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
            names.len() == types.len()
                && names.iter().any(|t| *t != "null")
                && names.iter().all(|t| ok(t) || *t == "null")
        }
        _ => false,
    }
}

/// The value of `Mcp-Param-*` for one argument, before header encoding: strings as they
/// are, integers in decimal, booleans as `true`/`false`; `None` (no header) for null, an
/// absent argument, or a value of another type.
pub fn param_header_value(argument: Option<&Value>) -> Option<String> {
    match argument? {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::RequestId;
    use bytes::Bytes;

    fn meta() -> String {
        let caps = client_capabilities(ClientFeatures::default(), None);
        let meta =
            request_meta(ProtocolVersion::V2026_07_28, &caps, &Implementation::new("c", "1"), None);
        Value::Object(meta).to_string()
    }

    fn spliced(params: Option<&str>) -> Value {
        let params = params.map(|p| RawValue::from_string(p.to_owned()).unwrap());
        serde_json::from_str(with_meta(params.as_deref(), &meta()).unwrap().get()).unwrap()
    }

    #[test]
    fn meta_is_added_to_any_object() {
        let v = spliced(None);
        assert_eq!(v["_meta"][META_PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(v["_meta"][META_CLIENT_CAPABILITIES], json!({}));
        assert_eq!(v["_meta"][META_CLIENT_INFO]["name"], "c");
        assert_eq!(spliced(Some("{}"))["_meta"][META_PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(spliced(Some(" { } "))["_meta"][META_PROTOCOL_VERSION], "2026-07-28");
        let v = spliced(Some(r#"{"name":"echo","arguments":{"text":"_meta"}}"#));
        assert_eq!(v["name"], "echo");
        assert_eq!(v["arguments"]["text"], "_meta");
        // An existing `_meta` keeps its members and gains ours.
        let v = spliced(Some(r#"{"_meta":{"progressToken":7},"cursor":"c"}"#));
        assert_eq!(v["_meta"]["progressToken"], 7);
        assert_eq!(v["_meta"][META_PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(v["cursor"], "c");
        let bad = RawValue::from_string("[1]".into()).unwrap();
        assert!(with_meta(Some(&bad), &meta()).is_err());
        let bad = RawValue::from_string(r#"{"_meta":3}"#.into()).unwrap();
        assert!(with_meta(Some(&bad), &meta()).is_err());
    }

    #[test]
    fn request_lines_are_encoded_with_meta_in_one_piece() {
        let params = RawValue::from_string(r#"{"name":"t\"x","arguments":{}}"#.into()).unwrap();
        let line =
            encode_with_meta(RequestId::new(7), "tools/call", Some(&params), &meta()).unwrap();
        assert!(line.ends_with(b"}\n") && !line[..line.len() - 1].contains(&b'\n'));
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!((v["id"].as_i64(), v["method"].as_str()), (Some(7), Some("tools/call")));
        assert_eq!(v["params"]["name"], "t\"x");
        assert_eq!(v["params"]["_meta"][META_PROTOCOL_VERSION], "2026-07-28");
        let line = encode_with_meta(RequestId::new(8), "tools/list", None, &meta()).unwrap();
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["params"]["_meta"][META_CLIENT_INFO]["name"], "c");
        let merged = RawValue::from_string(r#"{"_meta":{"progressToken":3}}"#.into()).unwrap();
        let line =
            encode_with_meta(RequestId::new(9), "tools/call", Some(&merged), &meta()).unwrap();
        let v: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["params"]["_meta"]["progressToken"], 3);
        assert_eq!(v["params"]["_meta"][META_PROTOCOL_VERSION], "2026-07-28");
    }

    #[test]
    fn capabilities_follow_the_features() {
        let all = ClientFeatures { sampling: true, elicitation_form: true, elicitation_url: true };
        let caps = client_capabilities(all, Some(&[]));
        assert_eq!(
            caps,
            json!({"roots": {}, "sampling": {}, "elicitation": {"form": {}, "url": {}}})
        );
        let form = ClientFeatures { elicitation_form: true, ..ClientFeatures::default() };
        assert_eq!(client_capabilities(form, None), json!({"elicitation": {"form": {}}}));
    }

    #[test]
    fn discover_results() {
        let r = RawJson::from_value(json!({"resultType": "complete",
            "supportedVersions": ["2025-11-25", "2026-07-28", "2099-01-01"],
            "capabilities": {"tools": {}},
            "_meta": {META_SERVER_INFO: {"name": "py", "version": "2"}}}));
        let (v, init) = parse_discover(&r).unwrap().unwrap();
        assert_eq!(v, ProtocolVersion::V2026_07_28);
        assert_eq!(init.protocol_version, "2026-07-28");
        assert_eq!(init.server_info.name, "py");
        assert_eq!(init.capabilities, json!({"tools": {}}));
        let r = RawJson::from_value(json!({"supportedVersions": ["2026-07-28"],
            "serverInfo": {"name": "mock", "version": "1"}, "capabilities": {}}));
        assert_eq!(parse_discover(&r).unwrap().unwrap().1.server_info.name, "mock");
        let legacy_only = RawJson::from_value(json!({"supportedVersions": ["2025-11-25"]}));
        assert!(parse_discover(&legacy_only).unwrap().is_none());
        assert!(parse_discover(&RawJson::from_value(json!({"tools": []}))).is_err());
    }

    fn kind(text: &str) -> Result<ResultKind, String> {
        classify(&RawJson::raw(Bytes::copy_from_slice(text.as_bytes())))
    }

    #[test]
    fn result_types() {
        assert!(matches!(kind(r#"{"content":[]}"#), Ok(ResultKind::Complete)));
        assert!(matches!(kind(r#"{"resultType":"complete"}"#), Ok(ResultKind::Complete)));
        // A nested member of that name does not count.
        let nested = r#"{"content":[{"type":"text","text":"x","resultType":"odd"}]}"#;
        assert!(matches!(kind(nested), Ok(ResultKind::Complete)));
        assert!(kind(r#"{"resultType":"later"}"#).unwrap_err().contains("later"));
        assert!(kind(r#"{"resultType":"input_required"}"#).is_err());
        let text = r#"{"resultType":"input_required","requestState":"a\u00e9\"b",
            "inputRequests":{"k":{"method":"roots/list"}}}"#;
        let Ok(ResultKind::InputRequired { requests, state }) = kind(text) else { panic!() };
        assert_eq!(requests["k"]["method"], "roots/list");
        assert_eq!(state.unwrap().get(), r#""a\u00e9\"b""#);
        let parsed = RawJson::from_value(json!({"resultType": "input_required",
            "requestState": "s"}));
        assert!(matches!(classify(&parsed), Ok(ResultKind::InputRequired { .. })));
    }

    #[test]
    fn retries_carry_this_rounds_data_only() {
        let line = br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"t","arguments":{},"inputResponses":{"old":1},"requestState":"old","_meta":{"x":1}}}"#;
        let mut responses = Map::new();
        responses.insert("k".into(), json!({"action": "accept"}));
        let state = RawValue::from_string(r#""a\u00e9""#.into()).unwrap();
        let p = retry_params(line, responses.clone(), Some(&state)).unwrap();
        assert!(p.get().ends_with(r#","requestState":"a\u00e9"}"#), "{}", p.get());
        let v: Value = serde_json::from_str(p.get()).unwrap();
        assert_eq!(v["inputResponses"], json!({"k": {"action": "accept"}}));
        assert_eq!(v["_meta"]["x"], 1);
        let p = retry_params(line, responses, None).unwrap();
        let v: Value = serde_json::from_str(p.get()).unwrap();
        assert!(v.get("requestState").is_none());
    }

    #[test]
    fn header_annotations() {
        let schema = |props: Value| json!({"type": "object", "properties": props});
        let ok = param_headers(&schema(json!({
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "Priority"},
            "b": {"type": ["boolean", "null"], "x-mcp-header": "Verbose"},
            "q": {"type": "string"}})))
        .unwrap();
        assert_eq!(ok.len(), 3);
        assert!(ok.contains(&ParamHeader { property: "region".into(), header: "Region".into() }));
        for bad in [
            json!({"v": {"type": "string", "x-mcp-header": ""}}),
            json!({"v": {"type": "object", "x-mcp-header": "Data"}}),
            json!({"v": {"type": "array", "x-mcp-header": "Items"}}),
            json!({"v": {"type": "null", "x-mcp-header": "Nil"}}),
            json!({"v": {"type": "number", "x-mcp-header": "Score"}}),
            json!({"v": {"x-mcp-header": "Untyped"}}),
            json!({"a": {"type": "string", "x-mcp-header": "R"},
                   "b": {"type": "string", "x-mcp-header": "r"}}),
            json!({"v": {"type": "string", "x-mcp-header": "My Region"}}),
            json!({"v": {"type": "string", "x-mcp-header": "Region:Primary"}}),
            json!({"v": {"type": "string", "x-mcp-header": "Région"}}),
            json!({"v": {"type": "string", "x-mcp-header": "Region\t1"}}),
            json!({"v": {"type": "string", "x-mcp-header": 5}}),
        ] {
            assert!(param_headers(&schema(bad.clone())).is_err(), "{bad}");
        }
        assert_eq!(param_header_value(Some(&json!("x y"))).as_deref(), Some("x y"));
        assert_eq!(param_header_value(Some(&json!(42))).as_deref(), Some("42"));
        assert_eq!(param_header_value(Some(&json!(false))).as_deref(), Some("false"));
        assert_eq!(param_header_value(Some(&Value::Null)), None);
        assert_eq!(param_header_value(None), None);
        assert_eq!(param_header_value(Some(&json!(1.5))), None);
    }
}
