//! A sans-IO, bounded parser for `text/event-stream` (Server-Sent Events).
//!
//! It follows the WHATWG HTML "Parsing an event stream" algorithm
//! (<https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation>):
//! lines end with CRLF, LF or a lone CR; a line starting with `:` is a comment; `data` lines are
//! joined with LF; an empty line dispatches the event; `id` sets the last event id (kept across
//! events, ignored when it contains NUL); `retry` (ASCII digits only) sets the reconnection time
//! at once; a leading byte-order mark is skipped; an event cut off by the end of the stream is
//! discarded.
//!
//! Use: [`push`](SseParser::push) each chunk as it arrives, then call
//! [`next_event`](SseParser::next_event) until it returns `Ok(None)` ("need more bytes").
//! Lines are parsed lazily, one event per call, so after each call
//! [`last_event_id`](SseParser::last_event_id) and [`retry`](SseParser::retry) describe exactly
//! the input consumed so far: after a drop, a client resumes from the last event it was handed.
//!
//! Bounds: one event's data may not exceed `max_event` bytes, nor may one line (plus a little
//! slack for the field name); past that [`next_event`](SseParser::next_event) returns
//! [`SseError::TooLarge`] and the stream should be abandoned.
//!
//! The parser works on bytes: data is handed out as [`Bytes`] without UTF-8 validation (the
//! JSON decoder downstream rejects what is not UTF-8); event types and ids are decoded lossily.

use std::time::Duration;

use bytes::Bytes;

/// Bytes a line may carry beyond `max_event` (field name, `: `, slack).
const LINE_SLACK: usize = 64;

/// The UTF-8 byte-order mark, skipped once at the start of a stream.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The event type: the last `event` field, or `message` when there was none.
    pub event: String,
    /// The `data` lines joined with LF (no trailing LF). May be empty (`data:` alone, as in an
    /// MCP 2025-11-25 priming event).
    pub data: Bytes,
    /// The last event id in force when this event was dispatched, if non-empty.
    pub id: Option<String>,
}

/// Why the parser gave up on a stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    /// An event's data, or one line, grew past the bound.
    #[error("SSE event larger than {limit} bytes")]
    TooLarge {
        /// The bound that was hit (`max_event`).
        limit: usize,
    },
}

/// Incremental SSE parser; see the [module docs](self).
#[derive(Debug)]
pub struct SseParser {
    /// Received bytes; `buf[pos..]` is not yet consumed. Compacted on `push`.
    buf: Vec<u8>,
    /// Start of the unconsumed bytes in `buf`.
    pos: usize,
    /// `buf[pos..pos + scanned]` is known to hold no CR or LF (saves rescanning a long line).
    scanned: usize,
    /// The previous line ended with a CR that was the last byte received: an LF that follows
    /// it belongs to the same line break.
    skip_lf: bool,
    /// A leading BOM is still possible (nothing consumed yet in this stream).
    at_start: bool,
    /// The data buffer, each `data` line followed by LF (WHATWG "data buffer").
    data: Vec<u8>,
    /// The event type buffer.
    event: String,
    /// The last event ID buffer (set by `id` fields).
    id_buffer: String,
    /// The last event ID string (set from the buffer on dispatch).
    last_id: String,
    /// The reconnection time the stream asked for.
    retry: Option<Duration>,
    /// Bound on one event's data.
    max_event: usize,
}

impl SseParser {
    /// A parser whose events may carry at most `max_event` bytes of data.
    pub fn new(max_event: usize) -> SseParser {
        SseParser {
            buf: Vec::new(),
            pos: 0,
            scanned: 0,
            skip_lf: false,
            at_start: true,
            data: Vec::new(),
            event: String::new(),
            id_buffer: String::new(),
            last_id: String::new(),
            retry: None,
            max_event,
        }
    }

    /// Appends received bytes.
    pub fn push(&mut self, chunk: &[u8]) {
        if self.pos > 0 && (self.pos == self.buf.len() || self.pos >= self.buf.len() / 2) {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(chunk);
    }

    /// Starts a new connection's stream (a reconnection): unconsumed bytes and the half-built
    /// event are dropped; the last event id and the reconnection time are kept, as the
    /// `EventSource` "reestablish the connection" steps do.
    pub fn new_stream(&mut self) {
        self.buf.clear();
        self.pos = 0;
        self.scanned = 0;
        self.skip_lf = false;
        self.at_start = true;
        self.data.clear();
        self.event.clear();
        self.id_buffer.clone_from(&self.last_id);
    }

    /// The last event id of the stream (the id in force at the last dispatch), if non-empty:
    /// what a reconnection sends as `Last-Event-ID`.
    pub fn last_event_id(&self) -> Option<&str> {
        (!self.last_id.is_empty()).then_some(self.last_id.as_str())
    }

    /// The reconnection time set by the last valid `retry` field, if any.
    pub fn retry(&self) -> Option<Duration> {
        self.retry
    }

    /// Bytes received but not yet consumed.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// Parses lines until an event is dispatched (`Ok(Some)`) or the received bytes run out
    /// (`Ok(None)`: push more).
    ///
    /// # Errors
    /// [`SseError::TooLarge`] when the event's data or a single line exceeds the bound; the
    /// half-built event is dropped and the stream should be abandoned.
    pub fn next_event(&mut self) -> Result<Option<SseEvent>, SseError> {
        loop {
            if self.at_start {
                let rest = &self.buf[self.pos..];
                if rest.len() < BOM.len() && BOM.starts_with(rest) && !rest.is_empty() {
                    return Ok(None);
                }
                if rest.starts_with(BOM) {
                    self.pos += BOM.len();
                }
                if !rest.is_empty() {
                    self.at_start = false;
                }
            }
            if self.skip_lf && self.pos < self.buf.len() {
                if self.buf[self.pos] == b'\n' {
                    self.pos += 1;
                }
                self.skip_lf = false;
            }
            let rest = &self.buf[self.pos..];
            let Some(off) = memchr::memchr2(b'\r', b'\n', &rest[self.scanned..]) else {
                self.scanned = rest.len();
                if rest.len() > self.max_event.saturating_add(LINE_SLACK) {
                    self.abandon();
                    return Err(SseError::TooLarge { limit: self.max_event });
                }
                return Ok(None);
            };
            let end = self.scanned + off;
            let cr = rest[end] == b'\r';
            let mut next = self.pos + end + 1;
            if cr {
                match self.buf.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
            let (start, stop) = (self.pos, self.pos + end);
            self.pos = next;
            self.scanned = 0;
            if stop - start > self.max_event.saturating_add(LINE_SLACK) {
                self.abandon();
                return Err(SseError::TooLarge { limit: self.max_event });
            }
            if let Some(event) = self.line(start, stop)? {
                return Ok(Some(event));
            }
        }
    }

    /// Processes the line `buf[start..stop]`; returns an event when it dispatches one.
    fn line(&mut self, start: usize, stop: usize) -> Result<Option<SseEvent>, SseError> {
        let line = &self.buf[start..stop];
        if line.is_empty() {
            return Ok(self.dispatch());
        }
        if line[0] == b':' {
            return Ok(None);
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match field {
            b"data" => {
                if self.data.len() + value.len() + 1 > self.max_event.saturating_add(1) {
                    self.abandon();
                    return Err(SseError::TooLarge { limit: self.max_event });
                }
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
            }
            b"event" => self.event = String::from_utf8_lossy(value).into_owned(),
            b"id" if !value.contains(&0) => {
                self.id_buffer = String::from_utf8_lossy(value).into_owned();
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                // All digits: only overflow can fail, and then the field is ignored.
                if let Ok(ms) = std::str::from_utf8(value).unwrap_or("x").parse::<u64>() {
                    self.retry = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
        Ok(None)
    }

    /// The blank-line step: update the last event id, then hand out the event unless its data
    /// buffer is empty.
    fn dispatch(&mut self) -> Option<SseEvent> {
        self.last_id.clone_from(&self.id_buffer);
        let event = std::mem::take(&mut self.event);
        if self.data.is_empty() {
            return None;
        }
        let mut data = std::mem::take(&mut self.data);
        data.pop(); // the LF after the last data line
        Some(SseEvent {
            event: if event.is_empty() { "message".to_owned() } else { event },
            data: Bytes::from(data),
            id: self.last_event_id().map(str::to_owned),
        })
    }

    /// Drops the half-built event after an overflow.
    fn abandon(&mut self) {
        self.data.clear();
        self.event.clear();
        self.pos = self.buf.len();
        self.scanned = 0;
    }
}

/// What [`oracle`] and [`parse_chunked`] return: the events, each with the retry in force once
/// it was dispatched, and the final last event id.
#[doc(hidden)]
pub type Parsed = (Vec<(SseEvent, Option<Duration>)>, Option<String>);

/// A straightforward reading of the WHATWG algorithm over a complete input, for tests and
/// fuzzing.
#[doc(hidden)]
pub fn oracle(input: &[u8]) -> Parsed {
    let input = input.strip_prefix(BOM).unwrap_or(input);
    // Split into lines; the text after the last line break is an incomplete line, dropped.
    let mut lines = Vec::new();
    let mut cur = Vec::new();
    let mut i = 0;
    while i < input.len() {
        match input[i] {
            b'\r' => {
                lines.push(std::mem::take(&mut cur));
                if input.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
            }
            b'\n' => lines.push(std::mem::take(&mut cur)),
            b => cur.push(b),
        }
        i += 1;
    }
    let (mut out, mut data, mut event) = (Vec::new(), Vec::<u8>::new(), String::new());
    let (mut id_buf, mut last_id, mut retry) = (String::new(), String::new(), None);
    for line in lines {
        if line.is_empty() {
            last_id = id_buf.clone();
            if !data.is_empty() {
                data.pop();
                let ev = SseEvent {
                    event: if event.is_empty() { "message".into() } else { event.clone() },
                    data: Bytes::from(std::mem::take(&mut data)),
                    id: (!last_id.is_empty()).then(|| last_id.clone()),
                };
                out.push((ev, retry));
            }
            event.clear();
            continue;
        }
        let text = line.clone();
        let (field, value): (Vec<u8>, Vec<u8>) = match text.iter().position(|&b| b == b':') {
            Some(0) => continue,
            Some(c) => {
                let v = &text[c + 1..];
                (
                    text[..c].to_vec(),
                    if v.first() == Some(&b' ') { v[1..].to_vec() } else { v.to_vec() },
                )
            }
            None => (text.clone(), Vec::new()),
        };
        match &field[..] {
            b"data" => {
                data.extend_from_slice(&value);
                data.push(b'\n');
            }
            b"event" => event = String::from_utf8_lossy(&value).into_owned(),
            b"id" if !value.contains(&0) => id_buf = String::from_utf8_lossy(&value).into_owned(),
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                if let Ok(ms) = String::from_utf8_lossy(&value).parse::<u64>() {
                    retry = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
    }
    (out, (!last_id.is_empty()).then_some(last_id))
}

/// Feeds `input` to a parser cut at `cuts` (ascending offsets) and collects what the oracle
/// returns, for comparison.
#[doc(hidden)]
pub fn parse_chunked(input: &[u8], cuts: &[usize], max_event: usize) -> Result<Parsed, SseError> {
    let mut parser = SseParser::new(max_event);
    let mut out = Vec::new();
    let mut at = 0;
    for &cut in cuts.iter().chain(std::iter::once(&input.len())) {
        let cut = cut.clamp(at, input.len());
        parser.push(&input[at..cut]);
        at = cut;
        while let Some(ev) = parser.next_event()? {
            out.push((ev, parser.retry()));
        }
    }
    Ok((out, parser.last_event_id().map(str::to_owned)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn events(input: &[u8]) -> Vec<SseEvent> {
        parse_chunked(input, &[], 1 << 20).unwrap().0.into_iter().map(|(e, _)| e).collect()
    }

    fn ev(event: &str, data: &str, id: Option<&str>) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: Bytes::copy_from_slice(data.as_bytes()),
            id: id.map(Into::into),
        }
    }

    #[test]
    fn basic_fields_comments_and_multiline_data() {
        let input = b": keep-alive\nid: 1\nevent: message\ndata: {\"a\":\ndata:1}\n\n\
                      data:no-space\nevent:endpoint\n\n: bye\n";
        assert_eq!(
            events(input),
            vec![ev("message", "{\"a\":\n1}", Some("1")), ev("endpoint", "no-space", Some("1"))]
        );
    }

    #[test]
    fn crlf_and_lone_cr_line_endings() {
        assert_eq!(
            events(b"data: a\r\n\r\ndata: b\r\rdata: c\n\n"),
            vec![ev("message", "a", None), ev("message", "b", None), ev("message", "c", None)]
        );
    }

    #[test]
    fn crlf_split_between_chunks_is_one_line_break() {
        let input = b"data: a\r\ndata: b\r\n\r\nid: 1\r\ndata: c\r\n\r\n";
        let want =
            vec![(Bytes::from_static(b"a\nb"), None), (Bytes::from_static(b"c"), Some("1".into()))];
        for cut in 0..input.len() {
            let (got, _) = parse_chunked(input, &[cut], 1024).unwrap();
            let got: Vec<_> = got.into_iter().map(|(e, _)| (e.data, e.id)).collect();
            assert_eq!(got, want, "cut {cut}");
        }
        let every: Vec<usize> = (0..input.len()).collect();
        let (got, _) = parse_chunked(input, &every, 1024).unwrap();
        assert_eq!(got.into_iter().map(|(e, _)| (e.data, e.id)).collect::<Vec<_>>(), want);
    }

    #[test]
    fn priming_event_updates_the_id_and_has_empty_data() {
        let mut p = SseParser::new(1024);
        p.push(b"id: prime-1\ndata: \nretry: 250\n\n");
        assert_eq!(p.next_event().unwrap(), Some(ev("message", "", Some("prime-1"))));
        assert_eq!(p.last_event_id(), Some("prime-1"));
        assert_eq!(p.retry(), Some(Duration::from_millis(250)));
        // An id with no data at all is not dispatched but still becomes the last id.
        p.push(b"id: 2\n\n");
        assert_eq!(p.next_event().unwrap(), None);
        assert_eq!(p.last_event_id(), Some("2"));
    }

    #[test]
    fn id_and_retry_edge_cases() {
        let mut p = SseParser::new(1024);
        p.push(b"id: a\0b\nretry: 12x\nretry:\ndata: x\n\n");
        let e = p.next_event().unwrap().unwrap();
        assert_eq!(e.id, None, "an id containing NUL is ignored");
        assert_eq!(p.retry(), None, "non-digit retry values are ignored");
        // The id persists for later events; an empty id clears it.
        p.push(b"id: 7\ndata: y\n\ndata: z\n\nid\ndata: w\n\n");
        assert_eq!(p.next_event().unwrap().unwrap().id.as_deref(), Some("7"));
        assert_eq!(p.next_event().unwrap().unwrap().id.as_deref(), Some("7"));
        assert_eq!(p.next_event().unwrap().unwrap().id, None);
    }

    #[test]
    fn incomplete_event_at_end_is_not_dispatched_and_new_stream_keeps_the_id() {
        let mut p = SseParser::new(1024);
        p.push(b"id: 5\ndata: done\n\nid: 6\ndata: half");
        assert_eq!(p.next_event().unwrap().unwrap().data, "done");
        assert_eq!(p.next_event().unwrap(), None);
        assert_eq!(p.last_event_id(), Some("5"));
        p.new_stream();
        p.push(b"data: fresh\n\n");
        let e = p.next_event().unwrap().unwrap();
        assert_eq!((e.data, e.id.as_deref()), (Bytes::from_static(b"fresh"), Some("5")));
    }

    #[test]
    fn bom_is_skipped_once_even_when_split() {
        let input = b"\xEF\xBB\xBFdata: x\n\n";
        for cut in 0..4 {
            let (got, _) = parse_chunked(input, &[cut], 64).unwrap();
            assert_eq!(got[0].0.data, "x", "cut {cut}");
        }
        assert_eq!(
            events(b"data: a\n\n\xEF\xBB\xBFdata: b\n\n").len(),
            1,
            "a BOM mid-stream is a field name"
        );
    }

    #[test]
    fn bounded_data_and_lines() {
        let mut p = SseParser::new(8);
        p.push(b"data: 12345678\n\n");
        assert_eq!(p.next_event().unwrap().unwrap().data, "12345678");
        p.push(b"data: 1234\ndata: 5678\n\n");
        assert_eq!(p.next_event(), Err(SseError::TooLarge { limit: 8 }));
        let mut p = SseParser::new(8);
        p.push(&[b'x'; 200]);
        assert_eq!(p.next_event(), Err(SseError::TooLarge { limit: 8 }));
        assert!(p.buffered() == 0);
    }

    /// Inputs built from the bytes that matter to the grammar.
    fn sse_input() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            Just(b"data".to_vec()),
            Just(b"data: ".to_vec()),
            Just(b"id: ".to_vec()),
            Just(b"id".to_vec()),
            Just(b"event: ".to_vec()),
            Just(b"retry: ".to_vec()),
            Just(b"retry:1".to_vec()),
            Just(b":".to_vec()),
            Just(b" ".to_vec()),
            Just(b"\r".to_vec()),
            Just(b"\n".to_vec()),
            Just(b"\r\n".to_vec()),
            Just(b"\n\n".to_vec()),
            Just(b"\0".to_vec()),
            Just(b"\xEF\xBB\xBF".to_vec()),
            proptest::collection::vec(
                prop_oneof![Just(b'a'), Just(b'9'), Just(b'{'), any::<u8>()],
                0..6
            ),
        ];
        proptest::collection::vec(piece, 0..40).prop_map(|p| p.concat())
    }

    proptest! {
        #[test]
        fn parser_matches_oracle_under_any_chunking(
            input in sse_input(),
            steps in proptest::collection::vec(1usize..12, 0..64),
        ) {
            // Small chunks, so cuts land inside CRLFs, field names and the BOM.
            let cuts: Vec<usize> = steps
                .iter()
                .scan(0, |at, step| {
                    *at += step;
                    Some(*at)
                })
                .collect();
            let got = parse_chunked(&input, &cuts, 1 << 20).unwrap();
            prop_assert_eq!(got, oracle(&input));
        }
    }
}
