//! JSON parsing of what servers send: simd-json (default) or serde_json, inline on the reactor
//! for small frames and on a worker [`pool`] for large ones.
//!
//! Both parsers produce `serde_json::Value`, the type of the public API. Measured on this
//! project's 2-core machines (PERFORMANCE.md): simd-json parses escape-heavy tool results
//! (file contents, embedded JSON) about 35 % faster than serde_json (0.85 vs 0.63 GB/s on a
//! 10 MB result), is on par for small messages, and is slower on long unescaped prose (2.2 vs
//! 4.1 GB/s), where both are far above the pipe's bandwidth. [`JsonParser::Serde`] remains
//! selectable.
//!
//! simd-json parses in place and clobbers its input, so [`Parser`] copies each frame into a
//! reused scratch buffer first: the frame itself stays intact for diagnostics (id sniffing of
//! an unreadable answer) at the cost of one memcpy, an order of magnitude cheaper than parsing.

#![forbid(unsafe_code)]

pub mod pool;

use serde_json::Value;

use crate::jsonrpc::{self, DecodeError, Decoded};

/// Which JSON parser reads server bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum JsonParser {
    /// simd-json (SIMD structural indexing; in-place string unescaping on a scratch copy).
    #[default]
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
        match self.kind {
            JsonParser::Serde => {
                serde_json::from_slice(bytes).map_err(|e| DecodeError::Json(e.to_string()))
            }
            JsonParser::Simd => {
                self.scratch.clear();
                self.scratch.extend_from_slice(bytes);
                let buffers =
                    self.buffers.get_or_insert_with(|| simd_json::Buffers::new(bytes.len()));
                let value = simd_json::serde::from_slice_with_buffers(&mut self.scratch, buffers)
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
}
