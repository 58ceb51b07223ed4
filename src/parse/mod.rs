//! JSON parsing of what servers send, in two stages:
//!
//! 1. **Envelope** (reactor thread, or the worker [`pool`] for large frames):
//!    [`decode_raw`](crate::jsonrpc::decode_raw) validates the frame and routes it by id; a
//!    result stays a raw slice of the frame.
//! 2. **Result** (the caller's thread): [`Parser::typed`] parses that slice straight into the
//!    type the caller asked for, with serde_json or simd-json.
//!
//! Both parsers deserialise through serde. Measured on this
//! project's 2-core machines (`benches/parse.rs`, PERFORMANCE.md), into `serde_json::Value`:
//! simd-json is about 1.6x faster on escape-heavy text (file contents, embedded JSON: 1.0 vs
//! 0.63 GB/s), on par for small messages and object-heavy lists, and about 20 % slower on
//! long unescaped prose (2.8 vs 3.5 GB/s at 10 MB), where serde_json's string scan is very
//! fast. So the default, [`JsonParser::Auto`], takes simd-json exactly when a frame is large
//! and escape-dense, which a `memchr` count of backslashes over its first 64 KiB tells at
//! 10+ GB/s.
//!
//! simd-json parses in place and clobbers its input, so [`Parser`] copies the bytes into a
//! scratch buffer first (the frame is shared and stays intact) at the cost of one memcpy, an
//! order of magnitude cheaper than parsing.

#![forbid(unsafe_code)]

pub mod pool;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::jsonrpc::{self, DecodeError, Decoded, JsonRepr, RawJson};

/// Which JSON parser reads server bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum JsonParser {
    /// serde_json for small or escape-sparse frames, simd-json for large escape-dense ones.
    #[default]
    Auto,
    /// simd-json (SIMD structural indexing; in-place string unescaping on a scratch copy).
    Simd,
    /// serde_json (scalar, zero-copy over the frame).
    Serde,
}

/// A reusable parser: its scratch buffers grow to the largest frame seen and are reused.
pub struct Parser {
    kind: JsonParser,
    scratch: Vec<u8>,
    buffers: Option<simd_json::Buffers>,
}

impl std::fmt::Debug for Parser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Parser").field("kind", &self.kind).finish_non_exhaustive()
    }
}

impl Parser {
    /// A parser of the given kind.
    pub fn new(kind: JsonParser) -> Self {
        Parser { kind, scratch: Vec::new(), buffers: None }
    }

    /// The parser's kind.
    pub fn kind(&self) -> JsonParser {
        self.kind
    }

    /// Parses one JSON text.
    ///
    /// # Errors
    /// [`DecodeError::Json`] with the parser's message when `bytes` is not one valid JSON text
    /// (including invalid UTF-8).
    pub fn value(&mut self, bytes: &[u8]) -> Result<Value, DecodeError> {
        self.typed(bytes)
    }

    /// Parses one JSON text straight into `T` (no intermediate tree).
    ///
    /// # Errors
    /// [`DecodeError::Json`] with the parser's message when `bytes` is not valid JSON or does
    /// not have `T`'s shape.
    pub fn typed<T: DeserializeOwned>(&mut self, bytes: &[u8]) -> Result<T, DecodeError> {
        let kind = match self.kind {
            JsonParser::Auto if escape_dense(bytes) => JsonParser::Simd,
            JsonParser::Auto => JsonParser::Serde,
            kind => kind,
        };
        match kind {
            JsonParser::Auto | JsonParser::Serde => {
                serde_json::from_slice(bytes).map_err(|e| DecodeError::Json(e.to_string()))
            }
            JsonParser::Simd => {
                self.scratch.clear();
                self.scratch.extend_from_slice(bytes);
                let buffers =
                    self.buffers.get_or_insert_with(|| simd_json::Buffers::new(bytes.len()));
                let value =
                    simd_json::serde::from_slice_with_buffers::<T>(&mut self.scratch, buffers)
                        .map_err(|e| DecodeError::Json(e.to_string()));
                // Do not keep a huge scratch buffer around after a one-off giant frame.
                if self.scratch.capacity() > SCRATCH_KEEP {
                    self.scratch = Vec::new();
                    self.buffers = None;
                }
                value
            }
        }
    }

    /// Turns a result into `T`: parses raw bytes with this parser, or converts an already
    /// parsed value (moving its strings, no copy).
    ///
    /// # Errors
    /// As [`typed`](Self::typed).
    pub fn result<T: DeserializeOwned>(&mut self, result: RawJson) -> Result<T, DecodeError> {
        match result.into_repr() {
            JsonRepr::Raw(bytes) => self.typed(&bytes),
            JsonRepr::Parsed(value) => {
                serde_json::from_value(value).map_err(|e| DecodeError::Json(e.to_string()))
            }
        }
    }

    /// Parses and classifies one frame as JSON-RPC (a message or a batch).
    ///
    /// # Errors
    /// [`DecodeError::Json`] for bad JSON, [`DecodeError::Invalid`] for JSON that is not
    /// JSON-RPC 2.0.
    pub fn decode(&mut self, frame: &[u8]) -> Result<Decoded, DecodeError> {
        jsonrpc::decode_value(self.value(frame)?)
    }
}

/// Scratch capacity kept between frames (larger buffers are freed after use).
const SCRATCH_KEEP: usize = 4 << 20;

/// Frames below this size go to serde_json under [`JsonParser::Auto`] (no copy, same speed).
const AUTO_MIN: usize = 16 * 1024;
/// How much of a frame [`escape_dense`] samples.
const AUTO_SAMPLE: usize = 64 * 1024;

/// Whether a frame is big enough and escape-dense enough (more than one backslash per 64
/// bytes in its first 64 KiB) for simd-json to beat serde_json.
fn escape_dense(bytes: &[u8]) -> bool {
    if bytes.len() < AUTO_MIN {
        return false;
    }
    let sample = &bytes[..bytes.len().min(AUTO_SAMPLE)];
    memchr::memchr_iter(b'\\', sample).count() * 64 > sample.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_parsers_agree() {
        let docs: [&[u8]; 6] = [
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a\"b\\n\u00e9"}]}}"#,
            br#"[1, 2.5, -3e10, true, null, "x"]"#,
            b"  {\"a\" : {}}  ",
            b"{\"a\":1,}",
            b"\"\xff\"",
            b"1e400",
        ];
        let (mut simd, mut serde) = (Parser::new(JsonParser::Simd), Parser::new(JsonParser::Serde));
        for doc in docs {
            let (a, b) = (simd.value(doc), serde.value(doc));
            assert_eq!(
                a.is_ok(),
                b.is_ok(),
                "{:?}: simd {a:?} serde {b:?}",
                String::from_utf8_lossy(doc)
            );
            if let (Ok(a), Ok(b)) = (a, b) {
                assert_eq!(a, b);
            }
        }
    }

    #[test]
    fn input_is_left_intact_and_scratch_is_bounded() {
        let mut p = Parser::new(JsonParser::Simd);
        let frame = br#"{"s":"x\ny"}"#.to_vec();
        let copy = frame.clone();
        p.value(&frame).unwrap();
        assert_eq!(frame, copy);
        let big = format!("{{\"s\":\"{}\"}}", "x".repeat(SCRATCH_KEEP + 10));
        p.value(big.as_bytes()).unwrap();
        assert!(p.scratch.capacity() <= SCRATCH_KEEP);
    }

    #[test]
    fn auto_picks_simd_only_for_large_escape_dense_frames() {
        assert!(!escape_dense(br#"{"a":"\n\n\n"}"#), "small frames: serde_json");
        let prose =
            serde_json::to_vec(&serde_json::json!({ "t": "word ".repeat(10_000) })).unwrap();
        assert!(!escape_dense(&prose));
        let code =
            serde_json::to_vec(&serde_json::json!({ "t": "{\"k\": \"v\"}\n".repeat(2_000) }))
                .unwrap();
        assert!(escape_dense(&code));
        let mut auto = Parser::new(JsonParser::Auto);
        assert_eq!(auto.value(&code).unwrap(), serde_json::from_slice::<Value>(&code).unwrap());
        assert_eq!(auto.value(&prose).unwrap(), serde_json::from_slice::<Value>(&prose).unwrap());
    }
}
