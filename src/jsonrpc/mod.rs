//! JSON-RPC 2.0 messages as MCP uses them: decoding what a peer sent, encoding what we send.
//!
//! Decoding is strict about the envelope (`"jsonrpc":"2.0"`, exactly one of `result`/`error` in a
//! response, integer error codes, ids that are strings or integers) and lax about everything else
//! (unknown members are ignored). Batch arrays are accepted on receive (MCP 2025-03-26); each
//! element is classified on its own, so one bad element does not hide the good ones.
//!
//! Encoding writes compact, single-line JSON terminated by `\n`, as the stdio transport requires.
//! serde_json escapes control characters, so a raw newline can never appear inside a message.

#![forbid(unsafe_code)]

mod error;
mod raw;

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

pub use error::{DecodeError, ErrorObject, codes};
pub use raw::{Attachment, JsonRepr, RawDecoded, RawJson, RawMessage, RawResponse, decode_raw};

/// A JSON-RPC request id: a string or an integer (MCP forbids `null`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Id {
    /// An integer id (ringmcp's own requests always use these).
    Number(i64),
    /// A string id, echoed back exactly.
    String(String),
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Number(n) => write!(f, "{n}"),
            Id::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl Id {
    /// Parses a raw JSON token (as found by [`crate::frame::IdSniffer`]) into an id.
    pub fn from_token(token: &[u8]) -> Option<Id> {
        serde_json::from_slice(token).ok()
    }
}

/// A request: the peer expects an answer with the same id.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The id to echo in the response.
    pub id: Id,
    /// The method name, e.g. `ping` or `roots/list`.
    pub method: String,
    /// The parameters, if any (an object or array).
    pub params: Option<Value>,
}

/// A notification: no answer expected or allowed.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method name, e.g. `notifications/tools/list_changed`.
    pub method: String,
    /// The parameters, if any.
    pub params: Option<Value>,
}

/// A response to one of our requests. `R` is how its `result` is held: a parsed `Value`, or
/// [`RawJson`] straight from the frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Response<R = Value> {
    /// The request it answers; `None` only for an error response with a `null` id
    /// (the peer could not read the request's id).
    pub id: Option<Id>,
    /// The `result`, or the `error` object.
    pub outcome: Result<R, ErrorObject>,
}

/// Any JSON-RPC message (responses holding their result as `R`).
#[derive(Debug, Clone, PartialEq)]
pub enum Message<R = Value> {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A response (result or error).
    Response(Response<R>),
}

/// What one frame held: a single message or a batch array.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded<R = Value> {
    /// One message.
    Single(Message<R>),
    /// A batch: each element decoded on its own.
    Batch(Vec<Result<Message<R>, DecodeError>>),
}

/// Decodes one frame (one line without its newline).
///
/// # Errors
/// [`DecodeError::Json`] if the bytes are not JSON, [`DecodeError::Invalid`] if they are JSON but
/// not a JSON-RPC 2.0 message (or an empty batch).
pub fn decode(frame: &[u8]) -> Result<Decoded, DecodeError> {
    let value: Value =
        serde_json::from_slice(frame).map_err(|e| DecodeError::Json(e.to_string()))?;
    decode_value(value)
}

/// Whether `frame` is a JSON object shaped as an answer (`result` or `error`, no `method`),
/// valid or not: a peer never answers one, even to say it is malformed.
pub fn is_answer(frame: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Map<String, Value>>(frame).is_ok_and(|m| {
        !m.contains_key("method") && (m.contains_key("result") || m.contains_key("error"))
    })
}

/// Classifies an already parsed JSON value: one message, or a batch array.
///
/// # Errors
/// [`DecodeError::Invalid`] if the value is not a JSON-RPC 2.0 message (or an empty batch).
pub fn decode_value(value: Value) -> Result<Decoded, DecodeError> {
    match value {
        Value::Array(items) if items.is_empty() => Err(DecodeError::Invalid("empty batch")),
        Value::Array(items) => Ok(Decoded::Batch(items.into_iter().map(classify).collect())),
        other => classify(other).map(Decoded::Single),
    }
}

/// Classifies one JSON value as a JSON-RPC message.
///
/// # Errors
/// [`DecodeError::Invalid`] naming the rule the value breaks.
pub fn classify(value: Value) -> Result<Message, DecodeError> {
    let Value::Object(mut map) = value else {
        return Err(DecodeError::Invalid("message is not a JSON object"));
    };
    match map.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        _ => return Err(DecodeError::Invalid("missing or wrong \"jsonrpc\":\"2.0\"")),
    }
    let id = match map.remove("id") {
        None => None,
        Some(Value::Null) => Some(None),
        Some(v) => Some(Some(parse_id(v)?)),
    };
    let method = match map.remove("method") {
        None => None,
        Some(Value::String(m)) => Some(m),
        Some(_) => return Err(DecodeError::Invalid("\"method\" is not a string")),
    };
    let params = match map.remove("params") {
        None => None,
        Some(p @ (Value::Object(_) | Value::Array(_))) => Some(p),
        Some(_) => return Err(DecodeError::Invalid("\"params\" is not an object or array")),
    };
    assemble(id, method, params, map.remove("result"), map.remove("error"))
}

/// The JSON-RPC rules once a message's members are extracted (`id`: absent, `null` or an id),
/// shared by [`decode`] and [`decode_raw`] so both give the same verdicts.
fn assemble<R>(
    id: Option<Option<Id>>,
    method: Option<String>,
    params: Option<Value>,
    result: Option<R>,
    error: Option<Value>,
) -> Result<Message<R>, DecodeError> {
    if let Some(method) = method {
        return match id {
            None => Ok(Message::Notification(Notification { method, params })),
            Some(Some(id)) => Ok(Message::Request(Request { id, method, params })),
            Some(None) => Err(DecodeError::Invalid("request id is null")),
        };
    }
    let id = id.ok_or(DecodeError::Invalid("response without \"id\""))?;
    let outcome = match (result, error) {
        (Some(result), None) => Ok(result),
        (None, Some(error)) => Err(serde_json::from_value::<ErrorObject>(error)
            .map_err(|_| DecodeError::Invalid("malformed \"error\" object"))?),
        (Some(_), Some(_)) => return Err(DecodeError::Invalid("both \"result\" and \"error\"")),
        (None, None) => {
            return Err(DecodeError::Invalid("neither \"method\", \"result\" nor \"error\""));
        }
    };
    if id.is_none() && outcome.is_ok() {
        return Err(DecodeError::Invalid("result with a null id"));
    }
    Ok(Message::Response(Response { id, outcome }))
}

fn parse_id(v: Value) -> Result<Id, DecodeError> {
    match v {
        Value::String(s) => Ok(Id::String(s)),
        Value::Number(n) => {
            n.as_i64().map(Id::Number).ok_or(DecodeError::Invalid("id is not an integer"))
        }
        _ => Err(DecodeError::Invalid("id is not a string or integer")),
    }
}

#[derive(Serialize)]
struct OutRequest<'a> {
    jsonrpc: &'static str,
    id: &'a Id,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a RawValue>,
}

#[derive(Serialize)]
struct OutNotification<'a, P: Serialize> {
    jsonrpc: &'static str,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<P>,
}

#[derive(Serialize)]
struct OutResult<'a, R: Serialize> {
    jsonrpc: &'static str,
    id: &'a Id,
    result: R,
}

#[derive(Serialize)]
struct OutError<'a> {
    jsonrpc: &'static str,
    id: Option<&'a Id>,
    error: &'a ErrorObject,
}

fn finish_line(mut buf: Vec<u8>) -> Vec<u8> {
    buf.push(b'\n');
    buf
}

/// Encodes a request as one `\n`-terminated line. `params` is pre-serialised JSON, so callers
/// can do that work on their own thread.
pub fn encode_request(id: &Id, method: &str, params: Option<&RawValue>) -> Vec<u8> {
    let msg = OutRequest { jsonrpc: "2.0", id, method, params };
    // Serialising plain strings, integers and raw JSON cannot fail.
    finish_line(serde_json::to_vec(&msg).expect("request serialises"))
}

/// Encodes a notification as one `\n`-terminated line.
///
/// # Errors
/// If `params`' `Serialize` implementation fails.
pub fn encode_notification<P: Serialize>(
    method: &str,
    params: Option<P>,
) -> Result<Vec<u8>, serde_json::Error> {
    let msg = OutNotification { jsonrpc: "2.0", method, params };
    serde_json::to_vec(&msg).map(finish_line)
}

/// Encodes a success response as one `\n`-terminated line.
///
/// # Errors
/// If `result`'s `Serialize` implementation fails.
pub fn encode_result<R: Serialize>(id: &Id, result: R) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec(&OutResult { jsonrpc: "2.0", id, result }).map(finish_line)
}

/// Encodes a success response whose `result` is the JSON text `result`, written as it is (the
/// caller vouches that it is valid JSON): a large result built as text is neither parsed nor
/// escaped again, and the line is made in its buffer, the envelope spliced in around it. Line ends in it
/// (whitespace between tokens: valid JSON has none inside its strings) become spaces, so
/// the answer stays one line.
pub fn encode_raw_result(id: &Id, mut result: Vec<u8>) -> Vec<u8> {
    let ends: Vec<usize> = memchr::memchr2_iter(b'\n', b'\r', &result).collect();
    for at in ends {
        result[at] = b' ';
    }
    let mut head = b"{\"jsonrpc\":\"2.0\",\"id\":".to_vec();
    serde_json::to_writer(&mut head, id).expect("ids serialise");
    head.extend_from_slice(b",\"result\":");
    result.reserve_exact(head.len() + 2);
    result.splice(0..0, head);
    result.extend_from_slice(b"}\n");
    result
}

/// Encodes an error response as one `\n`-terminated line (`id` is `None` when the request's id
/// could not be read).
pub fn encode_error(id: Option<&Id>, error: &ErrorObject) -> Vec<u8> {
    let msg = OutError { jsonrpc: "2.0", id, error };
    finish_line(serde_json::to_vec(&msg).expect("error object serialises"))
}

#[cfg(test)]
mod tests;
