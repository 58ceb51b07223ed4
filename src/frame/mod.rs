//! Newline-delimited framing of the bytes a server writes to its stdout.
//!
//! MCP's stdio transport sends one JSON-RPC message per line, `\n`-terminated, with no raw newline
//! inside a message ([spec: transports/stdio]). [`LineFramer`] turns an arbitrary sequence of byte
//! chunks (as the reactor receives them from a pipe) into those lines:
//!
//! * it scans with `memchr` and never rescans a byte it already looked at;
//! * it tolerates `\r\n` line ends and skips blank lines;
//! * it is **bounded**: a line longer than [`LineFramer::max_frame`] is not buffered. The framer
//!   switches to a discard mode that only counts the line's bytes and sniffs its top-level `"id"`
//!   (see [`IdSniffer`]), then reports [`FrameEvent::Oversized`] when the line ends, so the session
//!   can fail exactly the request that the line answered instead of letting it hang.
//!
//! Frames are handed out as [`Bytes`] split off the internal buffer: no copy after the one that
//! brought the chunk in.
//!
//! [spec: transports/stdio]: https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio

#![forbid(unsafe_code)]

mod sniff;

use bytes::{Buf, Bytes, BytesMut};

pub use sniff::IdSniffer;

/// Default bound on one frame: 16 MiB. Large answers beyond it are the spill store's business.
pub const DEFAULT_MAX_FRAME: usize = 16 * 1024 * 1024;

/// What the framer produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameEvent {
    /// One complete line, without its `\n` (and without a trailing `\r`). Never empty.
    Frame(Bytes),
    /// A line longer than the bound was seen and discarded.
    Oversized(Oversized),
    /// (Spilling framers only.) A line grew past the spill threshold: its first bytes. The
    /// rest follows as [`SpillData`](Self::SpillData) events, then [`SpillEnd`](Self::SpillEnd).
    SpillStart(Bytes),
    /// More bytes of the line being spilled (never including its `\n`).
    SpillData(Bytes),
    /// The spilled line ended; `len` is its raw length (without the `\n`).
    SpillEnd {
        /// Bytes in the line.
        len: u64,
    },
}

/// Facts about a discarded, oversized line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oversized {
    /// Length of the raw line in bytes, excluding the `\n`.
    pub len: u64,
    /// The raw JSON token of the line's top-level `"id"` member, if one was found
    /// (e.g. `7` or `"abc"`), so the answer's request can be failed precisely.
    pub id: Option<Vec<u8>>,
}

/// A bounded newline framer over caller-supplied chunks.
///
/// Call [`push`](Self::push) with every chunk read, then [`next_event`](Self::next_event) until it
/// returns `None` ("need more bytes"). At end of stream, [`finish`](Self::finish) reports a
/// trailing partial line.
#[derive(Debug)]
pub struct LineFramer {
    /// The latest chunk, not yet scanned, when nothing older is buffered: complete lines are
    /// sliced out of it without a copy. Invariant: if `head` is non-empty, `buf` is empty.
    head: Bytes,
    /// The start of a line that spans chunks (copied here). Invariant: `buf[..scanned]` holds
    /// no `\n`.
    buf: BytesMut,
    /// How far `buf` is known to be free of newlines.
    scanned: usize,
    /// Largest accepted line, in bytes before the `\n`.
    max_frame: usize,
    /// `Some` while discarding an oversized line: bytes counted so far and the id sniffer.
    discard: Option<(u64, IdSniffer)>,
    /// Lines over `max_frame` are streamed out (spilled) instead of discarded.
    spill: bool,
    /// `Some(bytes so far)` while streaming a long line out.
    spilling: Option<u64>,
    /// A `SpillEnd` owed for a long line that arrived whole.
    spill_end: Option<u64>,
}

impl LineFramer {
    /// A framer that accepts lines of at most `max_frame` bytes (before the `\n`).
    ///
    /// # Panics
    /// If `max_frame` is zero.
    pub fn new(max_frame: usize) -> Self {
        assert!(max_frame > 0, "max_frame must be positive");
        LineFramer {
            head: Bytes::new(),
            buf: BytesMut::new(),
            scanned: 0,
            max_frame,
            discard: None,
            spill: false,
            spilling: None,
            spill_end: None,
        }
    }

    /// A framer that buffers lines of up to `threshold` bytes and streams longer ones out as
    /// [`FrameEvent::SpillStart`], [`FrameEvent::SpillData`]… [`FrameEvent::SpillEnd`], holding
    /// at most `threshold` bytes plus one chunk of any line.
    ///
    /// # Panics
    /// If `threshold` is zero.
    pub fn spilling(threshold: usize) -> Self {
        LineFramer { spill: true, ..LineFramer::new(threshold) }
    }

    /// The bound on one line.
    pub fn max_frame(&self) -> usize {
        self.max_frame
    }

    /// (Spilling framers only.) Moves the spill threshold for the lines still to come: a line
    /// already held past the new one is streamed out at its next bytes, one already streaming
    /// goes on. The host lowers it when its own memory runs short.
    ///
    /// # Panics
    /// If `threshold` is zero, or the framer does not spill.
    pub fn set_spill_threshold(&mut self, threshold: usize) {
        assert!(self.spill && threshold > 0, "only a spilling framer has a spill threshold");
        self.max_frame = threshold;
    }

    /// Bytes buffered and not yet returned (a partial line, or lines not yet pulled).
    pub fn buffered(&self) -> usize {
        self.head.len() + self.buf.len()
    }

    /// Appends a chunk of received bytes (copying it).
    pub fn push(&mut self, chunk: &[u8]) {
        if self.head.is_empty() && self.buf.is_empty() {
            self.head = Bytes::copy_from_slice(chunk);
        } else {
            self.append(chunk);
        }
    }

    /// Appends a chunk of received bytes without copying it: lines that lie wholly inside it
    /// are returned as slices of it (a line continuing from an earlier chunk is copied).
    pub fn push_bytes(&mut self, chunk: Bytes) {
        if self.head.is_empty() && self.buf.is_empty() {
            self.head = chunk;
        } else {
            self.append(&chunk);
        }
    }

    /// Keeps byte order when older bytes are still held: everything goes to `buf`.
    fn append(&mut self, chunk: &[u8]) {
        if !self.head.is_empty() {
            debug_assert!(self.buf.is_empty());
            self.buf.extend_from_slice(&self.head);
            self.head = Bytes::new();
        }
        self.buf.extend_from_slice(chunk);
    }

    /// A complete raw line (without its `\n`): the event it makes, or `None` to skip it.
    fn line_event(&mut self, mut line: Bytes) -> Option<FrameEvent> {
        if line.len() > self.max_frame && self.spill {
            self.spill_end = Some(line.len() as u64);
            return Some(FrameEvent::SpillStart(line));
        }
        if line.len() > self.max_frame {
            let mut sniffer = IdSniffer::new();
            sniffer.feed(&line);
            let id = sniffer.id().map(<[u8]>::to_vec);
            return Some(FrameEvent::Oversized(Oversized { len: line.len() as u64, id }));
        }
        if line.last() == Some(&b'\r') {
            line.truncate(line.len() - 1);
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        Some(FrameEvent::Frame(line))
    }

    /// Returns the next complete event, or `None` when more bytes are needed.
    pub fn next_event(&mut self) -> Option<FrameEvent> {
        if let Some(len) = self.spill_end.take() {
            return Some(FrameEvent::SpillEnd { len });
        }
        if self.spilling.is_some() {
            return self.next_spill_data();
        }
        loop {
            if self.discard.is_some() {
                return self.skip_discarded();
            }
            if !self.head.is_empty() {
                match memchr::memchr(b'\n', &self.head) {
                    Some(nl) => {
                        let mut line = self.head.split_to(nl + 1);
                        line.truncate(nl);
                        match self.line_event(line) {
                            Some(event) => return Some(event),
                            None => continue,
                        }
                    }
                    None => {
                        // The rest of this chunk starts a line that continues later: copy it.
                        self.buf.extend_from_slice(&self.head);
                        self.head = Bytes::new();
                        self.scanned = 0;
                    }
                }
            }
            match memchr::memchr(b'\n', &self.buf[self.scanned..]) {
                Some(offset) => {
                    let nl = self.scanned + offset;
                    self.scanned = 0;
                    let mut line = self.buf.split_to(nl + 1);
                    line.truncate(nl);
                    if let Some(event) = self.line_event(line.freeze()) {
                        return Some(event);
                    }
                }
                None if self.buf.len() > self.max_frame && self.spill => {
                    // Too long to hold: hand out what we have and stream the rest.
                    self.spilling = Some(self.buf.len() as u64);
                    self.scanned = 0;
                    return Some(FrameEvent::SpillStart(self.buf.split().freeze()));
                }
                None if self.buf.len() > self.max_frame => {
                    // Too long already and no end in sight: stop buffering, keep counting.
                    let mut sniffer = IdSniffer::new();
                    sniffer.feed(&self.buf);
                    self.discard = Some((self.buf.len() as u64, sniffer));
                    self.buf.clear();
                    self.scanned = 0;
                }
                None => {
                    self.scanned = self.buf.len();
                    return None;
                }
            }
        }
    }

    /// While a line is being spilled: its next piece, up to its newline (then the line ends
    /// with [`FrameEvent::SpillEnd`]).
    fn next_spill_data(&mut self) -> Option<FrameEvent> {
        let count = self.spilling.as_mut().expect("called while spilling");
        let from_head = !self.head.is_empty();
        let data: &[u8] = if from_head { &self.head } else { &self.buf };
        if data.is_empty() {
            return None;
        }
        let (take, ends) = match memchr::memchr(b'\n', data) {
            Some(nl) => (nl, true),
            None => (data.len(), false),
        };
        *count += take as u64;
        let count = *count;
        let chunk = if from_head {
            let chunk = self.head.split_to(take);
            if ends {
                self.head.advance(1);
            }
            chunk
        } else {
            let chunk = self.buf.split_to(take).freeze();
            if ends {
                self.buf.advance(1);
            }
            chunk
        };
        if ends {
            self.spill_end = Some(count);
            self.spilling = None;
            self.scanned = 0;
        }
        if chunk.is_empty() {
            return self.next_event();
        }
        Some(FrameEvent::SpillData(chunk))
    }

    /// While an oversized line is being discarded: counts it (sniffing its id) up to its
    /// newline, then reports it as [`FrameEvent::Oversized`].
    fn skip_discarded(&mut self) -> Option<FrameEvent> {
        let (count, sniffer) = self.discard.as_mut().expect("called while discarding");
        let data: &[u8] = if self.head.is_empty() { &self.buf } else { &self.head };
        match memchr::memchr(b'\n', data) {
            None => {
                sniffer.feed(data);
                *count += data.len() as u64;
                self.head = Bytes::new();
                self.buf.clear();
                None
            }
            Some(nl) => {
                sniffer.feed(&data[..nl]);
                let len = *count + nl as u64;
                let id = sniffer.id().map(<[u8]>::to_vec);
                if self.head.is_empty() {
                    self.buf.advance(nl + 1);
                } else {
                    self.head.advance(nl + 1);
                }
                self.scanned = 0;
                self.discard = None;
                Some(FrameEvent::Oversized(Oversized { len, id }))
            }
        }
    }

    /// Ends the stream: returns the length of an unterminated trailing line, if there was one
    /// (ignoring whitespace-only tails), and resets the framer.
    pub fn finish(&mut self) -> Option<u64> {
        let held = (self.head.len() + self.buf.len()) as u64;
        let blank = self.head.iter().chain(self.buf.iter()).all(u8::is_ascii_whitespace);
        self.spill_end = None;
        let pending = match (self.discard.take(), self.spilling.take()) {
            (Some((count, _)), _) | (None, Some(count)) => Some(count + held),
            (None, None) if blank => None,
            (None, None) => Some(held),
        };
        self.head = Bytes::new();
        self.buf.clear();
        self.scanned = 0;
        pending
    }
}

/// The reference semantics of [`LineFramer`], on a whole input at once. Used by property tests
/// and the fuzz target to check the framer under every chunking.
#[doc(hidden)]
pub fn oracle(input: &[u8], max_frame: usize) -> Vec<FrameEvent> {
    let mut events = Vec::new();
    let mut parts: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    parts.pop(); // the tail after the last '\n' is not a complete line
    for line in parts {
        if line.len() > max_frame {
            let mut sniffer = IdSniffer::new();
            sniffer.feed(line);
            let id = sniffer.id().map(<[u8]>::to_vec);
            events.push(FrameEvent::Oversized(Oversized { len: line.len() as u64, id }));
            continue;
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        events.push(FrameEvent::Frame(Bytes::copy_from_slice(line)));
    }
    events
}

/// The reference semantics of a spilling framer ([`LineFramer::spilling`]): a line longer than
/// `threshold` is one `SpillStart` with the whole raw line, then `SpillEnd`. Compare with
/// [`merge_spills`] applied to the framer's events (which may split a line across several
/// `SpillData` events).
#[doc(hidden)]
pub fn oracle_spilling(input: &[u8], threshold: usize) -> Vec<FrameEvent> {
    let mut events = Vec::new();
    let mut parts: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    let tail = parts.pop().unwrap_or_default();
    for line in parts {
        if line.len() > threshold {
            events.push(FrameEvent::SpillStart(Bytes::copy_from_slice(line)));
            events.push(FrameEvent::SpillEnd { len: line.len() as u64 });
            continue;
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if !line.iter().all(u8::is_ascii_whitespace) {
            events.push(FrameEvent::Frame(Bytes::copy_from_slice(line)));
        }
    }
    // An unterminated tail is streamed out as soon as it outgrows the threshold (the framer
    // cannot know it will never end); it then has no `SpillEnd`.
    if tail.len() > threshold {
        events.push(FrameEvent::SpillStart(Bytes::copy_from_slice(tail)));
    }
    events
}

/// Folds every `SpillStart` + `SpillData`… into one `SpillStart` holding the whole line.
#[doc(hidden)]
pub fn merge_spills(events: Vec<FrameEvent>) -> Vec<FrameEvent> {
    let mut out: Vec<FrameEvent> = Vec::new();
    for event in events {
        match (out.last_mut(), event) {
            (Some(FrameEvent::SpillStart(acc)), FrameEvent::SpillData(more)) => {
                let mut joined = BytesMut::from(&acc[..]);
                joined.extend_from_slice(&more);
                *acc = joined.freeze();
            }
            (_, event) => out.push(event),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Feeds `input` cut at `cuts`, alternating `push` and `push_bytes`, and sometimes pushing
    /// twice before pulling events, so every path through the framer is compared to the oracle.
    fn run_chunked(input: &[u8], cuts: &[usize], max: usize) -> Vec<FrameEvent> {
        run_with(LineFramer::new(max), input, cuts)
    }

    fn run_with(mut framer: LineFramer, input: &[u8], cuts: &[usize]) -> Vec<FrameEvent> {
        let mut out = Vec::new();
        let mut start = 0;
        let mut points: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
        points.sort_unstable();
        points.push(input.len());
        for (i, end) in points.into_iter().enumerate() {
            if end < start {
                continue;
            }
            if i.is_multiple_of(2) {
                framer.push(&input[start..end]);
            } else {
                framer.push_bytes(Bytes::copy_from_slice(&input[start..end]));
            }
            start = end;
            if i % 3 != 1 {
                while let Some(ev) = framer.next_event() {
                    out.push(ev);
                }
            }
        }
        while let Some(ev) = framer.next_event() {
            out.push(ev);
        }
        out
    }

    #[test]
    fn lines_inside_one_chunk_are_not_copied() {
        let mut f = LineFramer::new(64);
        let chunk = Bytes::from_static(b"{\"a\":1}\n{\"b\":2}\n{\"c\"");
        let base = chunk.as_ptr();
        f.push_bytes(chunk);
        let Some(FrameEvent::Frame(a)) = f.next_event() else { panic!() };
        let Some(FrameEvent::Frame(b)) = f.next_event() else { panic!() };
        assert_eq!((a.as_ptr(), b.as_ptr()), (base, base.wrapping_add(8)), "slices of the chunk");
        assert_eq!(f.next_event(), None);
        f.push_bytes(Bytes::from_static(b":3}\n"));
        assert_eq!(f.next_event(), Some(FrameEvent::Frame(Bytes::from_static(b"{\"c\":3}"))));
    }

    #[test]
    fn splits_lines_and_strips_cr() {
        let mut f = LineFramer::new(64);
        f.push(b"{\"a\":1}\r\n\n  \r\n{\"b\":2}\n{\"c\"");
        assert_eq!(f.next_event(), Some(FrameEvent::Frame(Bytes::from_static(b"{\"a\":1}"))));
        assert_eq!(f.next_event(), Some(FrameEvent::Frame(Bytes::from_static(b"{\"b\":2}"))));
        assert_eq!(f.next_event(), None);
        f.push(b":3}\n");
        assert_eq!(f.next_event(), Some(FrameEvent::Frame(Bytes::from_static(b"{\"c\":3}"))));
        assert_eq!(f.finish(), None);
    }

    #[test]
    fn oversized_line_reports_len_and_id_then_recovers() {
        let mut f = LineFramer::new(16);
        let big = format!("{{\"result\":\"{}\",\"jsonrpc\":\"2.0\",\"id\":42}}\n", "x".repeat(100));
        for chunk in big.as_bytes().chunks(7) {
            f.push(chunk);
            if let Some(ev) = f.next_event() {
                let FrameEvent::Oversized(o) = ev else { panic!("unexpected {ev:?}") };
                assert_eq!(o.len, big.len() as u64 - 1);
                assert_eq!(o.id.as_deref(), Some(&b"42"[..]));
            }
            assert!(f.buffered() <= 16 + 7);
        }
        f.push(b"{\"id\":1}\n");
        assert_eq!(f.next_event(), Some(FrameEvent::Frame(Bytes::from_static(b"{\"id\":1}"))));
    }

    #[test]
    fn finish_reports_partial_line() {
        let mut f = LineFramer::new(8);
        f.push(b"abc");
        assert_eq!(f.next_event(), None);
        assert_eq!(f.finish(), Some(3));
        f.push(b"0123456789abc");
        assert_eq!(f.next_event(), None);
        assert_eq!(f.finish(), Some(13));
    }

    fn line_strategy() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            Just(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}".to_vec()),
            Just(b"{\"id\":\"a\\\"b\",\"x\":[1,{\"id\":2}]}".to_vec()),
            Just(b"".to_vec()),
            Just(b"\r".to_vec()),
            proptest::collection::vec(
                prop_oneof![Just(b'a'), Just(b'"'), Just(b'\r'), any::<u8>()],
                0..80
            )
            .prop_map(|v| v.into_iter().filter(|&b| b != b'\n').collect()),
        ]
    }

    proptest! {
        #[test]
        fn matches_oracle_under_every_chunking(
            lines in proptest::collection::vec(line_strategy(), 0..12),
            tail in proptest::collection::vec(any::<u8>(), 0..10),
            cuts in proptest::collection::vec(any::<usize>(), 0..20),
            max in 1usize..64,
        ) {
            let mut input = Vec::new();
            for l in &lines {
                input.extend_from_slice(l);
                input.push(b'\n');
            }
            input.extend(tail.iter().filter(|&&b| b != b'\n'));
            prop_assert_eq!(run_chunked(&input, &cuts, max), oracle(&input, max));
        }
    }

    proptest! {
        #[test]
        fn spilling_matches_oracle_under_every_chunking(
            lines in proptest::collection::vec(line_strategy(), 0..12),
            tail in proptest::collection::vec(any::<u8>(), 0..10),
            cuts in proptest::collection::vec(any::<usize>(), 0..20),
            threshold in 1usize..64,
        ) {
            let mut input = Vec::new();
            for l in &lines {
                input.extend_from_slice(l);
                input.push(b'\n');
            }
            input.extend(tail.iter().filter(|&&b| b != b'\n'));
            let got = merge_spills(run_with(LineFramer::spilling(threshold), &input, &cuts));
            prop_assert_eq!(got, oracle_spilling(&input, threshold));
        }
    }

    proptest! {
        /// Whatever the threshold does between reads, every byte comes out once, in order:
        /// each line whole or spilled whole.
        #[test]
        fn a_moving_spill_threshold_loses_and_reorders_nothing(
            lines in proptest::collection::vec(line_strategy(), 0..12),
            cuts in proptest::collection::vec(any::<usize>(), 0..20),
            thresholds in proptest::collection::vec(1usize..64, 1..20),
        ) {
            let mut input = Vec::new();
            for l in &lines {
                // (no \r: a frame loses its trailing one, a spilled line keeps it)
                input.extend(l.iter().filter(|&&b| b != b'\r'));
                input.push(b'\n');
            }
            let mut f = LineFramer::spilling(thresholds[0]);
            let mut out = Vec::new();
            let mut points: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
            points.sort_unstable();
            points.push(input.len());
            let mut start = 0;
            for (i, end) in points.into_iter().enumerate() {
                f.set_spill_threshold(thresholds[i % thresholds.len()]);
                f.push(&input[start..end]);
                start = end;
                while let Some(ev) = f.next_event() {
                    out.push(ev);
                }
            }
            let mut got = Vec::new();
            for ev in merge_spills(out) {
                match ev {
                    FrameEvent::Frame(b) => { got.extend_from_slice(&b); got.push(b'\n'); }
                    FrameEvent::SpillStart(b) => { got.extend_from_slice(&b); got.push(b'\n'); }
                    FrameEvent::SpillEnd { .. } => {}
                    other => prop_assert!(false, "{other:?}"),
                }
            }
            // Blank lines are skipped: compare the lines that carry something.
            let keep = |b: &[u8]| -> Vec<Vec<u8>> {
                b.split(|&c| c == b'\n')
                    .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
                    .map(<[u8]>::to_vec)
                    .collect()
            };
            prop_assert_eq!(keep(&got), keep(&input));
        }
    }

    #[test]
    fn spilled_lines_are_streamed_not_held() {
        let mut f = LineFramer::spilling(16);
        let line = format!("{{\"id\":1,\"result\":\"{}\"}}", "x".repeat(1000));
        let mut streamed = Vec::new();
        let mut ended = None;
        for chunk in line.as_bytes().chunks(10) {
            f.push(chunk);
            while let Some(ev) = f.next_event() {
                match ev {
                    FrameEvent::SpillStart(b) | FrameEvent::SpillData(b) => {
                        streamed.extend_from_slice(&b)
                    }
                    FrameEvent::SpillEnd { len } => ended = Some(len),
                    other => panic!("{other:?}"),
                }
            }
            assert!(f.buffered() <= 16 + 10, "held {} bytes", f.buffered());
        }
        f.push(b"\n{\"id\":2}\n");
        while let Some(ev) = f.next_event() {
            match ev {
                FrameEvent::SpillData(b) => streamed.extend_from_slice(&b),
                FrameEvent::SpillEnd { len } => ended = Some(len),
                FrameEvent::Frame(b) => assert_eq!(&b[..], b"{\"id\":2}"),
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(streamed, line.as_bytes());
        assert_eq!(ended, Some(line.len() as u64));
    }

    #[test]
    fn every_single_cut_point_matches_oracle() {
        let input = b"{\"id\":7,\"r\":\"0123456789\"}\r\n\n{\"a\":1}\n{\"id\":\"s\",\"zzzzzzzzzzzzzz\":1}\nrest";
        for max in [4, 10, 24, 100] {
            for cut in 0..=input.len() {
                for cut2 in cut..=input.len() {
                    assert_eq!(run_chunked(input, &[cut, cut2], max), oracle(input, max));
                }
            }
        }
    }
}
