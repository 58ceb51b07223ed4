//! A streaming scan of one JSON-RPC response line that may be gigabytes long: it validates the
//! line, finds its `id`, streams every large string value inside `result` out to a
//! [`SpillSink`], and keeps a small **skeleton** of the message in which each spilled string is
//! replaced by the placeholder object `{"$ringmcp_spill":N}`.
//!
//! ```text
//!  line chunks ──▶ SpillScanner::feed ──┬──▶ SpillSink::begin/write/end   (large strings of
//!  (any sizes)        │                 │     `result`, unescaped; `data`/`blob` base64-decoded)
//!                     │                 └──▶ skeleton: the message with placeholders
//!                     ▼
//!           SpillScanner::finish ──▶ Scanned { id, is_error, skeleton, spills }
//! ```
//!
//! Sans-IO: no clock, no file system, no threads; the sink does the I/O.
//!
//! # Validation
//!
//! The scan checks the whole line as JSON ([RFC 8259]) the way `serde_json::from_slice` does:
//! grammar, escapes (surrogates must pair), UTF-8, control characters, numbers serde_json would
//! find out of range, nesting depth, trailing bytes. What it accepts, serde_json accepts, and the
//! skeleton parses with serde_json too. The one extra check is on spilled `data`/`blob` strings,
//! which must be canonical base64.
//!
//! [RFC 8259]: https://www.rfc-editor.org/rfc/rfc8259

#![forbid(unsafe_code)]

mod base64;
mod body;
mod number;
#[doc(hidden)]
pub mod oracle;
mod string;
mod structure;

use std::convert::Infallible;
use std::ops::Range;

use self::base64::Base64;
use self::number::{Number, Step};
use self::string::{Escape, Utf8Carry};

/// The placeholder's member name: a spilled string becomes `{"$ringmcp_spill":N}`.
pub const PLACEHOLDER_KEY: &str = "$ringmcp_spill";

/// Deepest nesting of objects and arrays accepted, counting the message object as 1. One below
/// what serde_json accepts (127), so that a placeholder object replacing a string at the deepest
/// level still parses.
pub const MAX_DEPTH: usize = 126;

/// Default bound on the skeleton (and on one member name): 16 MiB.
pub const DEFAULT_MAX_SKELETON: usize = 16 * 1024 * 1024;

/// Decoded bytes are gathered up to this size before a [`SpillSink::write`]; raw runs at least
/// [`DIRECT_WRITE`] long go to the sink without this copy.
const STAGING: usize = 16 * 1024;
/// See [`STAGING`].
const DIRECT_WRITE: usize = 1024;
/// Base64 text is decoded in slices of this many bytes, so staging stays under `2 * STAGING`.
const BASE64_SLICE: usize = STAGING / 3 * 4;

/// Bound on [`SpillScanner::held_bytes`] beyond the string buffer (staging, carries); for tests.
#[doc(hidden)]
pub const HELD_SLACK: usize = 2 * STAGING + 16;

/// Receives spilled strings. Calls come in this order for each spill, spills one after another
/// in order of appearance: `begin(i, ..)`, zero or more `write(i, ..)`, `end(i, ..)`, with `i`
/// counting from 0. A scan that fails leaves its last spill begun but never ended, possibly
/// with bytes of the bad input written to it (the input is checked a chunk at a time): discard
/// it.
pub trait SpillSink {
    /// The sink's failure (e.g. an I/O error); [`SpillScanner::feed`] returns it as
    /// [`FeedError::Sink`].
    type Error;

    /// A spilled string starts: its index, its path inside `result` (empty for `result` itself),
    /// and how its bytes are encoded.
    ///
    /// # Errors
    /// Any; the scan stops.
    fn begin(
        &mut self,
        index: usize,
        path: &[PathSegment],
        encoding: SpillEncoding,
    ) -> Result<(), Self::Error>;

    /// More bytes of spilled string `index` (already unescaped / base64-decoded); never empty.
    /// A UTF-8 character may be split between two writes.
    ///
    /// # Errors
    /// Any; the scan stops.
    fn write(&mut self, index: usize, bytes: &[u8]) -> Result<(), Self::Error>;

    /// Spilled string `index` is complete; `len` is its total length in bytes as written.
    ///
    /// # Errors
    /// Any; the scan stops.
    fn end(&mut self, index: usize, len: u64) -> Result<(), Self::Error>;
}

impl<S: SpillSink + ?Sized> SpillSink for &mut S {
    type Error = S::Error;

    fn begin(
        &mut self,
        index: usize,
        path: &[PathSegment],
        encoding: SpillEncoding,
    ) -> Result<(), Self::Error> {
        (**self).begin(index, path, encoding)
    }

    fn write(&mut self, index: usize, bytes: &[u8]) -> Result<(), Self::Error> {
        (**self).write(index, bytes)
    }

    fn end(&mut self, index: usize, len: u64) -> Result<(), Self::Error> {
        (**self).end(index, len)
    }
}

/// How a spilled string's bytes were produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpillEncoding {
    /// The string's text, unescaped, as UTF-8.
    Utf8Text,
    /// The string was base64 under a `data` or `blob` member (MCP image/audio content,
    /// embedded-resource blobs); the bytes are its decoding.
    Base64Decoded,
}

/// One step of a path from the `result` value down to a spilled string.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathSegment {
    /// A member of an object, by (unescaped) name.
    Key(String),
    /// An element of an array, by index.
    Index(usize),
}

/// What a completed scan found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scanned {
    /// The raw JSON token of the top-level `id` member (whitespace dropped), e.g. `7` or `"a"`;
    /// the last one if it is repeated.
    pub id: Option<Vec<u8>>,
    /// The message has a top-level `error` member.
    pub is_error: bool,
    /// The message has a top-level `result` member.
    pub has_result: bool,
    /// The message as JSON with whitespace outside strings dropped and each spilled string
    /// replaced by `{"$ringmcp_spill":N}`. Other strings are copied verbatim, except that a
    /// string of `result` or a member name that the scan decoded (top level, inside `result`)
    /// is re-escaped minimally if it held escapes: same value, maybe other bytes.
    pub skeleton: Vec<u8>,
    /// The spilled strings, in order of appearance (`spills[i].index == i`).
    pub spills: Vec<SpillInfo>,
}

/// One spilled string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillInfo {
    /// Its number, as in the placeholder and the sink calls.
    pub index: usize,
    /// Where it sits inside the `result` value. Locate spills by this path (or by
    /// [`placeholder`](Self::placeholder)), not by searching for the marker: a server may send
    /// an object that looks like a placeholder.
    pub path: Vec<PathSegment>,
    /// How its bytes are encoded.
    pub encoding: SpillEncoding,
    /// Its length in bytes, as written to the sink.
    pub len: u64,
    /// The placeholder's bytes in [`Scanned::skeleton`].
    pub placeholder: Range<usize>,
}

impl SpillInfo {
    /// The path as a JSON Pointer ([RFC 6901]) relative to the `result` value, e.g.
    /// `/content/0/data`.
    ///
    /// [RFC 6901]: https://www.rfc-editor.org/rfc/rfc6901
    pub fn pointer(&self) -> String {
        let mut out = String::new();
        for segment in &self.path {
            out.push('/');
            match segment {
                PathSegment::Key(k) => out.push_str(&k.replace('~', "~0").replace('/', "~1")),
                PathSegment::Index(i) => out.push_str(&i.to_string()),
            }
        }
        out
    }
}

/// Why a line was rejected. Offsets count bytes from the start of the line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScanError {
    /// The line is not valid JSON.
    #[error("invalid JSON at byte {offset}: {reason}")]
    Syntax {
        /// The first offending byte.
        offset: u64,
        /// What was wrong.
        reason: &'static str,
    },
    /// A spilled `data`/`blob` string is not canonical base64.
    #[error("invalid base64 at byte {offset}")]
    InvalidBase64 {
        /// The first byte at which the text stopped being canonical base64 (for a byte produced
        /// by an escape, the escape's `\`; for an incomplete last group, the closing quote).
        offset: u64,
    },
    /// The line is JSON but not an object.
    #[error("the message at byte {offset} is not a JSON object")]
    NotAnObject {
        /// Where the value starts.
        offset: u64,
    },
    /// Objects and arrays nest deeper than [`MAX_DEPTH`].
    #[error("nesting deeper than {MAX_DEPTH} at byte {offset}")]
    TooDeep {
        /// The bracket that went too deep.
        offset: u64,
    },
    /// The skeleton, or one member name, grew past the bound set with
    /// [`SpillScanner::max_skeleton`].
    #[error("skeleton larger than its bound at byte {offset}")]
    SkeletonTooLarge {
        /// Bytes fed when the bound was found exceeded.
        offset: u64,
    },
    /// The line ended before the message did.
    #[error("the line ended inside the message, after {offset} bytes")]
    Truncated {
        /// The line's length.
        offset: u64,
    },
    /// An earlier [`SpillScanner::feed`] failed because the sink did; the scan cannot go on.
    #[error("the scan was aborted by a sink error at byte {offset}")]
    Aborted {
        /// Bytes fed before the chunk during which the sink failed.
        offset: u64,
    },
}

impl ScanError {
    /// The byte offset in the line that the error names.
    pub fn offset(&self) -> u64 {
        match *self {
            ScanError::Syntax { offset, .. }
            | ScanError::InvalidBase64 { offset }
            | ScanError::NotAnObject { offset }
            | ScanError::TooDeep { offset }
            | ScanError::SkeletonTooLarge { offset }
            | ScanError::Truncated { offset }
            | ScanError::Aborted { offset } => offset,
        }
    }
}

/// Why [`SpillScanner::feed`] failed: the line (the server's fault) or the sink (ours).
#[derive(Debug, thiserror::Error)]
pub enum FeedError<E> {
    /// The line is malformed.
    #[error(transparent)]
    Scan(#[from] ScanError),
    /// The sink failed.
    #[error("spill sink failed")]
    Sink(#[source] E),
}

impl FeedError<Infallible> {
    /// The scan error, when the sink cannot fail.
    pub fn into_scan(self) -> ScanError {
        match self {
            FeedError::Scan(e) => e,
            FeedError::Sink(never) => match never {},
        }
    }
}

/// A streaming scan of one JSON-RPC response line; see the [module docs](self).
///
/// # Feeding order
///
/// ```text
///  new(threshold) ─▶ feed(chunk, sink)* ─▶ finish() ─▶ Scanned
///                        │  begin/write/end calls on `sink`, during `feed` only
///                        └─ Err ─▶ stop (later calls repeat the error)
/// ```
///
/// Feed the line's bytes from its first byte, in chunks of any size, without the final `\n`
/// (a trailing `\r` is fine). Each chunk's decoded bytes reach the sink before `feed` returns.
/// Call [`finish`](Self::finish) when the line ended.
///
/// # Memory
///
/// Besides the skeleton and the current path, the scanner holds at most one undecided string of
/// up to `threshold` bytes (or one member name), plus fixed buffers; see
/// [`held_bytes`](Self::held_bytes). Inside string bodies it jumps between quotes and
/// backslashes (`memchr2`) and hands contiguous runs of a spill to the sink in one `write`
/// (runs under 1 KiB and decoded bytes are gathered into writes of about 16 KiB).
#[derive(Debug)]
pub struct SpillScanner {
    /// Strings inside `result` longer than this (unescaped) are spilled.
    threshold: usize,
    max_skeleton: usize,
    /// Bytes fed so far: the stream offset of the next chunk.
    offset: u64,
    state: State,
    /// Open containers; `stack[0]` is the message object.
    stack: Vec<Frame>,
    /// One segment per open container inside `result` (`Frame::in_path`): the current key or
    /// index in it.
    path: Vec<PathSegment>,
    /// Inside the value of a top-level `result` member.
    in_result: bool,
    /// The current top-level member's name.
    top_key: TopKey,
    /// The member name just read is `data` or `blob`, inside `result`.
    pending_base64: bool,
    skeleton: Vec<u8>,
    /// Where the current top-level `id` value starts in the skeleton.
    id_start: Option<usize>,
    id: Option<Vec<u8>>,
    is_error: bool,
    has_result: bool,
    spills: Vec<SpillInfo>,
    /// The string in progress (meaningful in `State::Str`).
    string: Str,
    /// Unescaped text of a member name, or of a string of `result` not yet over the threshold.
    /// Invariant: for a value, `buf.len() <= threshold`.
    buf: Vec<u8>,
    /// Output for the sink, gathered (see [`STAGING`]).
    staging: Vec<u8>,
    /// The number in progress (meaningful in `State::Number`).
    number: Number,
    number_offset: u64,
    /// The first error, repeated by later calls.
    poison: Option<ScanError>,
}

/// What comes next outside strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Before the message's `{`.
    Start,
    /// After `{`: a member name or `}`.
    KeyOrEnd,
    /// After `,` in an object: a member name.
    Key,
    /// After a member name.
    Colon,
    /// After `[`: a value or `]`.
    ValueOrEnd,
    /// After `:` or `,` in an array: a value.
    Value,
    /// After a value in a container.
    CommaOrEnd,
    /// Inside a string (see `SpillScanner::string`).
    Str,
    /// Inside a number (see `SpillScanner::number`).
    Number,
    /// Inside `true`, `false` or `null`: the bytes still expected.
    Literal(&'static [u8]),
    /// After the message's `}`: only whitespace.
    Trailing,
}

/// An open object or array.
#[derive(Debug, Clone, Copy)]
struct Frame {
    array: bool,
    /// The container is inside `result` and owns the last segment of `SpillScanner::path`.
    in_path: bool,
}

/// The top-level member names that matter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TopKey {
    Id,
    Result,
    Error,
    Other,
}

/// Where a string's bytes go.
#[derive(Debug, Clone)]
enum Dest {
    /// Raw bytes straight into the skeleton (strings whose text is not needed).
    Skeleton,
    /// Unescaped text into `SpillScanner::buf` (member names we need; strings of `result`
    /// until they pass the threshold).
    Buffer,
    /// Unescaped (and possibly base64-decoded) bytes to the sink.
    Sink { index: usize, decoder: Option<Base64>, len: u64 },
}

/// The string in progress.
#[derive(Debug, Clone)]
struct Str {
    dest: Dest,
    key: bool,
    /// A value under `data`/`blob`: decoded if spilled.
    base64: bool,
    escape: Escape,
    /// Offset of the current escape's `\` (of the first one, for a surrogate pair).
    escape_offset: u64,
    utf8: Utf8Carry,
    /// `buf` differs from the raw body (so it must be re-escaped into the skeleton).
    had_escape: bool,
    /// Validates a buffered `base64` string so a spill can name the exact bad byte.
    shadow: Base64,
    shadow_error: Option<u64>,
}

impl Str {
    fn new(dest: Dest, key: bool, base64: bool) -> Self {
        Str {
            dest,
            key,
            base64,
            escape: Escape::None,
            escape_offset: 0,
            utf8: Utf8Carry::default(),
            had_escape: false,
            shadow: Base64::default(),
            shadow_error: None,
        }
    }
}

impl SpillScanner {
    /// A scanner at the start of a line that spills strings of `result` longer than `threshold`
    /// bytes (unescaped). With a threshold of 0 every non-empty string is spilled.
    pub fn new(threshold: usize) -> Self {
        SpillScanner {
            threshold,
            max_skeleton: DEFAULT_MAX_SKELETON,
            offset: 0,
            state: State::Start,
            stack: Vec::new(),
            path: Vec::new(),
            in_result: false,
            top_key: TopKey::Other,
            pending_base64: false,
            skeleton: Vec::new(),
            id_start: None,
            id: None,
            is_error: false,
            has_result: false,
            spills: Vec::new(),
            string: Str::new(Dest::Skeleton, false, false),
            buf: Vec::new(),
            staging: Vec::new(),
            number: Number::start(b'0'),
            number_offset: 0,
            poison: None,
        }
    }

    /// Bounds the skeleton (and any one member name) to `bytes`; past it the scan fails with
    /// [`ScanError::SkeletonTooLarge`] (checked once per chunk). Default
    /// [`DEFAULT_MAX_SKELETON`]. Strings outside `result` are never spilled, so this is what
    /// stops a huge `error.message`.
    #[must_use]
    pub fn max_skeleton(mut self, bytes: usize) -> Self {
        self.max_skeleton = bytes;
        self
    }

    /// The spill threshold.
    pub fn threshold(&self) -> usize {
        self.threshold
    }

    /// Bytes fed so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Bytes held besides the skeleton and the path: the undecided string or member name in
    /// progress (at most `threshold` for a value), staged sink output and carries. The path
    /// holds the names of the containers being inside, which are in the skeleton too.
    pub fn held_bytes(&self) -> usize {
        self.buf.len()
            + self.staging.len()
            + self.string.utf8.held()
            + self.string.shadow.held()
            + match &self.string.dest {
                Dest::Sink { decoder: Some(d), .. } => d.held(),
                _ => 0,
            }
    }

    /// Feeds the next chunk of the line (without the final `\n`). Spilled bytes reach `sink`
    /// before this returns.
    ///
    /// # Errors
    /// [`FeedError::Scan`] if the line is malformed, [`FeedError::Sink`] if the sink failed.
    /// Either way the scan is over: later calls return the error again (a sink error as
    /// [`ScanError::Aborted`]).
    pub fn feed<S: SpillSink>(
        &mut self,
        chunk: &[u8],
        sink: &mut S,
    ) -> Result<(), FeedError<S::Error>> {
        if let Some(e) = &self.poison {
            return Err(FeedError::Scan(e.clone()));
        }
        match self.feed_chunk(chunk, sink) {
            Ok(()) => {
                self.offset += chunk.len() as u64;
                Ok(())
            }
            Err(e) => {
                self.poison = Some(match &e {
                    FeedError::Scan(s) => s.clone(),
                    FeedError::Sink(_) => ScanError::Aborted { offset: self.offset },
                });
                Err(e)
            }
        }
    }

    /// The line ended: returns what was found.
    ///
    /// # Errors
    /// [`ScanError::Truncated`] if the message is incomplete, or the error an earlier
    /// [`feed`](Self::feed) returned.
    pub fn finish(self) -> Result<Scanned, ScanError> {
        if let Some(e) = self.poison {
            return Err(e);
        }
        if self.state != State::Trailing {
            return Err(ScanError::Truncated { offset: self.offset });
        }
        Ok(Scanned {
            id: self.id,
            is_error: self.is_error,
            has_result: self.has_result,
            skeleton: self.skeleton,
            spills: self.spills,
        })
    }

    fn feed_chunk<S: SpillSink>(
        &mut self,
        chunk: &[u8],
        sink: &mut S,
    ) -> Result<(), FeedError<S::Error>> {
        let base = self.offset;
        let mut i = 0;
        while i < chunk.len() {
            let b = chunk[i];
            match self.state {
                State::Str => i = self.string_bytes(chunk, i, base, sink)?,
                State::Number => match self.number.push(b) {
                    Ok(Step::Consumed) => {
                        self.skeleton.push(b);
                        i += 1;
                    }
                    // The byte is looked at again as structure.
                    Ok(Step::Ended) => self.value_done(),
                    Err(reason) => {
                        let offset = if reason == number::OUT_OF_RANGE {
                            self.number_offset
                        } else {
                            base + i as u64
                        };
                        return Err(syntax(offset, reason).into());
                    }
                },
                State::Literal(rest) => {
                    if b != rest[0] {
                        return Err(syntax(base + i as u64, "invalid literal").into());
                    }
                    self.skeleton.push(b);
                    i += 1;
                    if rest.len() == 1 {
                        self.value_done();
                    } else {
                        self.state = State::Literal(&rest[1..]);
                    }
                }
                _ => {
                    self.structural(b, base + i as u64)?;
                    i += 1;
                }
            }
        }
        if let (State::Str, Dest::Sink { index, .. }) = (self.state, &self.string.dest) {
            flush(&mut self.staging, *index, sink)?;
        }
        let key_len = if self.state == State::Str && self.string.key { self.buf.len() } else { 0 };
        if self.skeleton.len().max(key_len) > self.max_skeleton {
            return Err(ScanError::SkeletonTooLarge { offset: base + chunk.len() as u64 }.into());
        }
        Ok(())
    }
}

/// Hands staged bytes to the sink.
fn flush<S: SpillSink>(
    staging: &mut Vec<u8>,
    index: usize,
    sink: &mut S,
) -> Result<(), FeedError<S::Error>> {
    if !staging.is_empty() {
        sink.write(index, staging).map_err(FeedError::Sink)?;
        staging.clear();
    }
    Ok(())
}

fn syntax(offset: u64, reason: &'static str) -> ScanError {
    ScanError::Syntax { offset, reason }
}

#[cfg(test)]
mod tests;

/// Decodes a whole standard-base64 text (padding required, no whitespace, canonical), with the
/// same strict decoder the scanner uses on streamed blobs.
///
/// # Errors
/// The index of the first byte at which `text` stops being canonical base64 (`text.len()` when
/// it ends inside a group).
pub fn decode_base64(text: &[u8]) -> Result<Vec<u8>, usize> {
    let mut decoder = base64::Base64::default();
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    decoder.push::<true>(text, &mut out)?;
    decoder.finish().map_err(|()| text.len())?;
    Ok(out)
}
