//! Zero-copy decoding of what a server sends: the envelope is checked and routed, the `result`
//! stays raw JSON, a slice of the frame it arrived in.
//!
//! The reactor only needs a response's id to route it, so it does not build a
//! `serde_json::Value` tree for every answer (allocation dominated its profile). It validates the
//! whole frame as JSON with serde_json's allocation-free `RawValue` scan, slices out `result`,
//! and the caller's thread parses that slice straight into the type it wants
//! ([`RawJson::parse`]). Requests and notifications from the server are small and rare; their
//! params become `Value`s as before.

use std::borrow::Cow;
use std::fmt;

use bytes::Bytes;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;

use super::{DecodeError, Id};

/// A JSON `result` on its way to the caller: normally the raw bytes it arrived as (a slice of
/// its frame, no copy, parsed by the caller into its own type); for frames that were parsed
/// whole on the worker pool, the parsed tree (so the caller does not scan it a second time).
///
/// It can carry attachments that must live exactly as long as the result is wanted (the spill
/// files its links point to): if the caller has gone, dropping the result drops them too.
#[derive(Clone)]
pub struct RawJson(JsonRepr, Vec<Attachment>);

/// Something kept alive together with a result (e.g. a spill file handle).
pub type Attachment = std::sync::Arc<dyn std::any::Any + Send + Sync>;

impl PartialEq for RawJson {
    /// Compares the JSON only.
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}

/// The two forms of a [`RawJson`].
#[derive(Debug, Clone, PartialEq)]
pub enum JsonRepr {
    /// A valid JSON text.
    Raw(Bytes),
    /// An already parsed value.
    Parsed(Value),
}

impl JsonRepr {
    /// The JSON text, in a buffer of its own: the one it arrived in when nothing else holds
    /// it (no copy), serialised when parsed.
    pub fn into_text(self) -> Vec<u8> {
        match self {
            JsonRepr::Raw(bytes) => bytes.try_into_mut().map_or_else(|b| b.to_vec(), Vec::from),
            JsonRepr::Parsed(value) => serde_json::to_vec(&value).expect("a Value serialises"),
        }
    }
}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 200;
        match &self.0 {
            JsonRepr::Raw(bytes) => {
                let text = String::from_utf8_lossy(&bytes[..bytes.len().min(SHOWN)]);
                let more = if bytes.len() > SHOWN { "…" } else { "" };
                write!(f, "RawJson({text}{more})")
            }
            JsonRepr::Parsed(value) => write!(f, "RawJson(parsed {value:.200})"),
        }
    }
}

impl RawJson {
    /// A raw JSON text (the caller vouches that it is valid JSON).
    pub fn raw(bytes: Bytes) -> RawJson {
        RawJson(JsonRepr::Raw(bytes), Vec::new())
    }

    /// An already parsed value.
    pub fn from_value(value: Value) -> RawJson {
        RawJson(JsonRepr::Parsed(value), Vec::new())
    }

    /// Adds attachments that live as long as this result.
    pub fn attach(&mut self, attachments: impl IntoIterator<Item = Attachment>) {
        self.1.extend(attachments);
    }

    /// Takes the attachments out (the caller keeps them alive from now on).
    pub fn take_attachments(&mut self) -> Vec<Attachment> {
        std::mem::take(&mut self.1)
    }

    /// Its form.
    pub fn repr(&self) -> &JsonRepr {
        &self.0
    }

    /// Its form, by value.
    pub fn into_repr(self) -> JsonRepr {
        self.0
    }

    /// Parses (or converts) into `T` with serde_json.
    ///
    /// # Errors
    /// When the JSON does not have `T`'s shape.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        match &self.0 {
            JsonRepr::Raw(bytes) => serde_json::from_slice(bytes),
            JsonRepr::Parsed(value) => T::deserialize(value),
        }
    }

    /// The value as a `serde_json::Value` (`Null` if the raw text holds a number beyond the
    /// range `Value` can represent).
    pub fn to_value(&self) -> Value {
        match &self.0 {
            JsonRepr::Raw(_) => self.parse().unwrap_or(Value::Null),
            JsonRepr::Parsed(value) => value.clone(),
        }
    }
}

/// A message whose `result` (if it is a response) is still raw.
pub type RawMessage = super::Message<RawJson>;

/// A response with its `result` kept raw.
pub type RawResponse = super::Response<RawJson>;

/// What one frame held, results kept raw.
pub type RawDecoded = super::Decoded<RawJson>;

impl From<super::Message> for RawMessage {
    fn from(m: super::Message) -> Self {
        match m {
            super::Message::Request(r) => RawMessage::Request(r),
            super::Message::Notification(n) => RawMessage::Notification(n),
            super::Message::Response(r) => RawMessage::Response(RawResponse {
                id: r.id,
                outcome: r.outcome.map(RawJson::from_value),
            }),
        }
    }
}

impl From<super::Decoded> for RawDecoded {
    /// A frame decoded whole (results already parsed into `Value`s).
    fn from(d: super::Decoded) -> Self {
        match d {
            super::Decoded::Single(m) => RawDecoded::Single(m.into()),
            super::Decoded::Batch(items) => {
                RawDecoded::Batch(items.into_iter().map(|i| i.map(RawMessage::from)).collect())
            }
        }
    }
}

/// Every member a JSON-RPC message may have, as raw slices. `Some(raw)` even for an explicit
/// `null` (the derive's `Option` would fold `null` into "absent"; `present` keeps them apart).
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// Decodes one frame without building a tree for `result`.
///
/// # Errors
/// [`DecodeError::Json`] for bad JSON, [`DecodeError::Invalid`] for JSON that is not a JSON-RPC
/// 2.0 message (same verdicts as [`super::decode`]).
pub fn decode_raw(frame: &Bytes) -> Result<RawDecoded, DecodeError> {
    let first = frame.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        let items: Vec<&RawValue> = serde_json::from_slice(frame).map_err(json_error)?;
        if items.is_empty() {
            return Err(DecodeError::Invalid("empty batch"));
        }
        let items = items.into_iter().map(|raw| {
            let element = frame.slice_ref(raw.get().as_bytes());
            envelope(&element)
        });
        return Ok(RawDecoded::Batch(items.collect()));
    }
    envelope(frame).map(RawDecoded::Single)
}

fn json_error(e: serde_json::Error) -> DecodeError {
    DecodeError::Json(e.to_string())
}

fn envelope(frame: &Bytes) -> Result<RawMessage, DecodeError> {
    let env: Envelope<'_> = match serde_json::from_slice(frame) {
        Ok(env) => env,
        // Valid JSON the envelope cannot take: not an object, or an object with a duplicate
        // member (where JSON leaves the meaning open; the `Value` decoder keeps the last one).
        // Rare, so defer to the `Value` decoder for exactly the same verdict.
        Err(e) if e.classify() == serde_json::error::Category::Data => {
            let value: Value = serde_json::from_slice(frame).map_err(json_error)?;
            return super::classify(value).map(RawMessage::from);
        }
        Err(e) => return Err(json_error(e)),
    };
    match env.jsonrpc.map(|v| serde_json::from_str::<Cow<'_, str>>(v.get())) {
        Some(Ok(v)) if v == "2.0" => {}
        _ => return Err(DecodeError::Invalid("missing or wrong \"jsonrpc\":\"2.0\"")),
    }
    let id = match env.id {
        None => None,
        Some(raw) if raw.get() == "null" => Some(None),
        Some(raw) => Some(Some(parse_id(raw)?)),
    };
    let method = match env.method {
        None => None,
        Some(raw) => Some(
            serde_json::from_str::<String>(raw.get())
                .map_err(|_| DecodeError::Invalid("\"method\" is not a string"))?,
        ),
    };
    let params = match env.params {
        None => None,
        Some(raw) if raw.get().starts_with(['{', '[']) => {
            Some(serde_json::from_str::<Value>(raw.get()).map_err(json_error)?)
        }
        Some(_) => return Err(DecodeError::Invalid("\"params\" is not an object or array")),
    };
    let result = env.result.map(|r| RawJson::raw(frame.slice_ref(r.get().as_bytes())));
    // Through `Value`, like the `Value` decoder: duplicate members resolve the same way.
    let error = match env.error.map(|e| serde_json::from_str::<Value>(e.get())) {
        None => None,
        Some(Ok(error)) => Some(error),
        Some(Err(_)) => return Err(DecodeError::Invalid("malformed \"error\" object")),
    };
    super::assemble(id, method, params, result, error)
}

fn parse_id(raw: &RawValue) -> Result<Id, DecodeError> {
    match serde_json::from_str::<Value>(raw.get()) {
        Ok(Value::String(s)) => Ok(Id::String(s)),
        Ok(Value::Number(n)) => {
            n.as_i64().map(Id::Number).ok_or(DecodeError::Invalid("id is not an integer"))
        }
        _ => Err(DecodeError::Invalid("id is not a string or integer")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::{Decoded, Message, decode};

    /// The raw decoder agrees with the `Value` decoder on every verdict and every field.
    fn agree(frame: &[u8]) {
        let bytes = Bytes::copy_from_slice(frame);
        let (raw, full) = (decode_raw(&bytes), decode(frame));
        let text = String::from_utf8_lossy(frame);
        match (raw, full) {
            (Ok(RawDecoded::Single(r)), Ok(Decoded::Single(m))) => same(&r, &m, &text),
            (Ok(RawDecoded::Batch(rs)), Ok(Decoded::Batch(ms))) => {
                assert_eq!(rs.len(), ms.len(), "{text}");
                for (r, m) in rs.iter().zip(&ms) {
                    match (r, m) {
                        (Ok(r), Ok(m)) => same(r, m, &text),
                        (Err(a), Err(b)) => assert_eq!(a, b, "{text}"),
                        _ => panic!("verdicts differ on an element of {text}: {r:?} vs {m:?}"),
                    }
                }
            }
            (Err(DecodeError::Json(_)), Err(DecodeError::Json(_))) => {}
            (Err(a), Err(b)) => assert_eq!(a, b, "{text}"),
            (a, b) => panic!("verdicts differ on {text}: {a:?} vs {b:?}"),
        }
    }

    fn same(r: &RawMessage, m: &Message, text: &str) {
        match (r, m) {
            (RawMessage::Request(a), Message::Request(b)) => assert_eq!(a, b, "{text}"),
            (RawMessage::Notification(a), Message::Notification(b)) => assert_eq!(a, b, "{text}"),
            (RawMessage::Response(a), Message::Response(b)) => {
                assert_eq!(a.id, b.id, "{text}");
                match (&a.outcome, &b.outcome) {
                    (Ok(raw), Ok(value)) => assert_eq!(&raw.to_value(), value, "{text}"),
                    (Err(x), Err(y)) => assert_eq!(x, y, "{text}"),
                    _ => panic!("outcomes differ on {text}"),
                }
            }
            _ => panic!("kinds differ on {text}"),
        }
    }

    #[test]
    fn agrees_with_the_value_decoder() {
        let valid_or_odd = [
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a\"b"}]}}"#,
            r#"{"result":null,"jsonrpc":"2.0","id":"s"}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"roots/list"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"result":{}},{"bogus":1},{"jsonrpc":"2.0","method":"m"}]"#,
            r#"{"jsonrpc":"2\u002e0","id":1,"result":[]}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":"abc","error":{"code":1,"code":-651204,"message":"m","data":{"x":[0,2.5e10]}}}"#,
            "\"x\"",
            "{not json",
        ];
        for frame in valid_or_odd.iter().chain(crate::jsonrpc::tests::BROKEN_ENVELOPES) {
            agree(frame.as_bytes());
        }
    }

    #[test]
    fn numbers_beyond_f64_stay_raw_until_the_caller_parses() {
        // The Value decoder rejects the whole frame; the raw one routes it, so the caller gets
        // a precise error for its own request when it parses the result.
        let frame = Bytes::from_static(br#"{"jsonrpc":"2.0","id":1,"result":{"n":1e400}}"#);
        let Ok(RawDecoded::Single(RawMessage::Response(r))) = decode_raw(&frame) else { panic!() };
        assert!(r.outcome.unwrap().parse::<Value>().is_err());
    }

    #[test]
    fn results_are_slices_of_the_frame() {
        let frame = Bytes::from_static(br#"{"jsonrpc":"2.0","id":3,"result":{"big":"payload"}}"#);
        let Ok(RawDecoded::Single(RawMessage::Response(r))) = decode_raw(&frame) else { panic!() };
        let JsonRepr::Raw(raw) = r.outcome.unwrap().into_repr() else { panic!("not raw") };
        assert_eq!(&raw[..], br#"{"big":"payload"}"#);
        let start = raw.as_ptr() as usize - frame.as_ptr() as usize;
        assert_eq!(start, 33, "no copy: the result points into the frame");
    }
}
