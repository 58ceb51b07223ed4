//! A server's stdout on its way to the session: framed, large frames parsed on the worker
//! pool and oversized answers streamed to the spill store, and every message delivered in
//! the order the server wrote it (a frame behind one still being parsed or spilled waits its
//! turn). Free of the ring: the reactor's connection feeds it what its reads bring.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;

use crate::frame::{FrameEvent, LineFramer};
use crate::jsonrpc::{Attachment, DecodeError, RawDecoded, RawMessage, RawResponse};
use crate::parse::pool::{Job, ParsePool, Parsed};
use crate::protocol::{CloseReason, RequestError, Session};

use super::pump::Completer;
use super::spilling::{SpillJob, SpillOutcome};

/// A server's share of the host's spill settings.
pub(crate) struct SpillContext {
    pub(crate) store: Arc<crate::spill::store::SpillStore>,
    pub(crate) line_threshold: usize,
    pub(crate) string_threshold: usize,
    pub(crate) scan_content: bool,
}

/// A frame waiting for its turn.
pub(crate) enum Slot {
    /// Not parsed yet (small frames are parsed when delivered).
    Event(FrameEvent),
    /// On the parse pool, with this sequence number.
    Parsing(u64),
    /// Back from the pool (or from the spill store, with an empty frame).
    Parsed(Bytes, Result<RawDecoded, DecodeError>),
    /// An answer that could not be read, with its raw id token if one was found.
    Failed(Option<Vec<u8>>, RequestError),
}

/// One server's inbound frames.
pub(crate) struct Inbound {
    /// The connection's number (it names the connection's jobs on the parse pool).
    conn: u64,
    framer: LineFramer,
    /// Frames in arrival order while one of them is on the parse pool.
    in_order: VecDeque<Slot>,
    next_frame_seq: u64,
    /// Frames at least this long are parsed on the pool.
    offload_threshold: usize,
    /// A close that waits for `in_order` to drain.
    close_when_parsed: Option<CloseReason>,
    /// Where oversized answers go, when the host spills.
    spill: Option<SpillContext>,
    /// The answer being spilled now, with its `in_order` sequence number.
    spilling: Option<(u64, SpillJob)>,
    pub(crate) stdout_bytes: u64,
    pub(crate) answers_spilled: u64,
    pub(crate) frames_offloaded: u64,
}

impl Inbound {
    pub(crate) fn new(
        conn: u64,
        max_frame: usize,
        offload_threshold: usize,
        spill: Option<SpillContext>,
    ) -> Inbound {
        Inbound {
            conn,
            framer: match &spill {
                Some(spill) => LineFramer::spilling(spill.line_threshold),
                None => LineFramer::new(max_frame),
            },
            in_order: VecDeque::new(),
            next_frame_seq: 0,
            offload_threshold,
            close_when_parsed: None,
            spill,
            spilling: None,
            stdout_bytes: 0,
            answers_spilled: 0,
            frames_offloaded: 0,
        }
    }

    /// Moves the spill threshold (when answers are spilled at all): lowered while the host's
    /// memory is short, given back after (memory.rs).
    pub(crate) fn set_spill_threshold(&mut self, pressed: bool) {
        if let Some(spill) = &self.spill {
            let normal = spill.line_threshold;
            let threshold =
                if pressed { normal.min(super::memory::PRESSED_THRESHOLD) } else { normal };
            self.framer.set_spill_threshold(threshold);
        }
    }

    /// Frames what a plain read brought (copied into the framer).
    pub(crate) fn push_read(
        &mut self,
        session: &mut Session<Completer>,
        buf: &[u8],
        pool: Option<&ParsePool>,
        now: Instant,
    ) {
        self.stdout_bytes += buf.len() as u64;
        self.framer.push(buf);
        while let Some(event) = self.framer.next_event() {
            self.on_frame(session, event, pool, now);
        }
    }

    /// Frames what a read brought.
    pub(crate) fn push_chunk(
        &mut self,
        session: &mut Session<Completer>,
        chunk: Bytes,
        pool: Option<&ParsePool>,
        now: Instant,
    ) {
        self.stdout_bytes += chunk.len() as u64;
        self.framer.push_bytes(chunk);
        while let Some(event) = self.framer.next_event() {
            self.on_frame(session, event, pool, now);
        }
    }

    /// One framer event, in arrival order: large frames go to the parse pool; everything
    /// behind a frame still being parsed waits its turn, so the session sees the server's
    /// messages in the order they were sent.
    fn on_frame(
        &mut self,
        session: &mut Session<Completer>,
        event: FrameEvent,
        pool: Option<&ParsePool>,
        now: Instant,
    ) {
        let event = match self.on_spill_event(session, event, now) {
            Some(event) => event,
            None => return,
        };
        let event = match (event, pool) {
            (FrameEvent::Frame(frame), Some(pool)) if frame.len() >= self.offload_threshold => {
                let seq = self.next_frame_seq;
                match pool.submit(Job { conn: self.conn, seq, frame }) {
                    Ok(()) => {
                        self.next_frame_seq += 1;
                        self.frames_offloaded += 1;
                        self.in_order.push_back(Slot::Parsing(seq));
                        return;
                    }
                    Err(job) => FrameEvent::Frame(job.frame),
                }
            }
            (event, _) => event,
        };
        if self.in_order.is_empty() {
            self.deliver(session, Slot::Event(event), now);
        } else {
            // Waiting behind a frame on the pool: copy it, so it does not hold a shared
            // receive buffer out of the kernel's hands meanwhile.
            let event = match event {
                FrameEvent::Frame(f) => FrameEvent::Frame(Bytes::copy_from_slice(&f)),
                other => other,
            };
            self.in_order.push_back(Slot::Event(event));
        }
    }

    /// Streams the events of an oversized line into the spill store; hands other events back.
    /// A spilled answer takes its place in `in_order` like a frame on the parse pool.
    fn on_spill_event(
        &mut self,
        session: &mut Session<Completer>,
        event: FrameEvent,
        now: Instant,
    ) -> Option<FrameEvent> {
        match event {
            FrameEvent::SpillStart(bytes) => {
                let Some(spill) = &self.spill else {
                    unreachable!("only a spilling framer starts spills")
                };
                let mut job =
                    SpillJob::new(spill.store.clone(), spill.string_threshold, spill.scan_content);
                job.feed(&bytes);
                let seq = self.next_frame_seq;
                self.next_frame_seq += 1;
                self.in_order.push_back(Slot::Parsing(seq));
                self.spilling = Some((seq, job));
                self.answers_spilled += 1;
                None
            }
            FrameEvent::SpillData(bytes) => {
                if let Some((_, job)) = &mut self.spilling {
                    job.feed(&bytes);
                }
                None
            }
            FrameEvent::SpillEnd { .. } => {
                if let Some((seq, job)) = self.spilling.take() {
                    let slot = match job.finish() {
                        SpillOutcome::Decoded(mut decoded, files, scans) => {
                            // The files travel with the result: if its caller is gone, they
                            // are dropped (and removed) with it.
                            if let RawDecoded::Single(RawMessage::Response(RawResponse {
                                outcome: Ok(raw),
                                ..
                            })) = &mut decoded
                            {
                                raw.attach(files.into_iter().map(|f| Arc::new(f) as Attachment));
                                raw.attach(scans.into_iter().map(|s| Arc::new(s) as Attachment));
                            }
                            Slot::Parsed(Bytes::new(), Ok(decoded))
                        }
                        SpillOutcome::Failed { id, reason } => {
                            Slot::Failed(id, RequestError::SpillFailed { reason })
                        }
                    };
                    self.fill(seq, slot);
                    self.deliver_ready(session, now);
                }
                None
            }
            other => Some(other),
        }
    }

    /// Stdout ended inside a spilled line: its request fails.
    pub(crate) fn abandon_spill(&mut self) {
        if let Some((seq, job)) = self.spilling.take() {
            let reason = "the server's stdout ended inside the answer".to_owned();
            self.fill(seq, Slot::Failed(job.id(), RequestError::SpillFailed { reason }));
        }
    }

    /// Puts a finished slot in place of `Parsing(seq)`.
    pub(crate) fn fill(&mut self, seq: u64, done: Slot) {
        if let Some(slot) =
            self.in_order.iter_mut().find(|s| matches!(s, Slot::Parsing(n) if *n == seq))
        {
            *slot = done;
        }
    }

    /// Delivers the ready slots at the front of `in_order` to the session (no flush).
    pub(crate) fn deliver_ready(&mut self, session: &mut Session<Completer>, now: Instant) {
        while let Some(front) = self.in_order.front() {
            if matches!(front, Slot::Parsing(_)) {
                break;
            }
            let slot = self.in_order.pop_front().expect("front exists");
            self.deliver(session, slot, now);
        }
        if self.in_order.is_empty()
            && let Some(reason) = self.close_when_parsed.take()
        {
            session.handle_closed(reason);
        }
    }

    fn deliver(&mut self, session: &mut Session<Completer>, slot: Slot, now: Instant) {
        match slot {
            Slot::Event(FrameEvent::Frame(frame)) => session.handle_frame(&frame, now),
            Slot::Event(FrameEvent::Oversized(o)) => session.handle_oversized(&o),
            Slot::Parsed(frame, decoded) => session.handle_decoded(&frame, decoded, now),
            Slot::Failed(id, error) => session.handle_failed_answer(id.as_deref(), error),
            Slot::Parsing(_) => unreachable!("only delivered once parsed"),
            // Spill events are consumed by `on_spill_event` before any slot is made.
            Slot::Event(
                FrameEvent::SpillStart(_) | FrameEvent::SpillData(_) | FrameEvent::SpillEnd { .. },
            ) => unreachable!("spill events never become slots"),
        }
    }

    /// The server is gone: fail what is pending, but only after every frame it sent before
    /// going has been delivered (some may still be on the parse pool).
    pub(crate) fn close_session(&mut self, session: &mut Session<Completer>, reason: CloseReason) {
        if self.in_order.is_empty() {
            session.handle_closed(reason);
        } else {
            self.close_when_parsed.get_or_insert(reason);
        }
    }

    /// A frame came back from the parse pool (deliver what is ready next).
    pub(crate) fn on_parsed(&mut self, parsed: Parsed) {
        let Parsed { seq, frame, decoded, .. } = parsed;
        self.fill(seq, Slot::Parsed(frame, decoded));
    }

    /// Stdout ended: a line cut short is reported, a spill under way fails its request, and
    /// what is ready is delivered.
    pub(crate) fn ended(&mut self, session: &mut Session<Completer>, now: Instant) {
        if let Some(len) = self.framer.finish() {
            session.handle_truncated(len);
        }
        self.abandon_spill();
        self.deliver_ready(session, now);
    }

    /// Whether every frame received has reached the session.
    pub(crate) fn is_drained(&self) -> bool {
        self.in_order.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::JsonParser;
    use crate::protocol::{Event, SessionConfig, Violation};

    /// The lengths of the non-JSON lines the session reported, in order.
    fn reported(session: &mut Session<Completer>) -> Vec<usize> {
        let mut lens = Vec::new();
        while let Some(event) = session.poll_event() {
            if let Event::Violation(Violation::NotJson { len, .. }) = event {
                lens.push(len);
            }
        }
        lens
    }

    /// A large frame goes to the parse pool; the frames behind it wait for it, so the session
    /// sees them in the order the server wrote them; a close waits for the pool too.
    #[test]
    fn frames_reach_the_session_in_order_around_the_pool() {
        let (tx, rx) = std::sync::mpsc::channel();
        let tx = std::sync::Mutex::new(tx);
        let deliver = Arc::new(move |p: Parsed| tx.lock().unwrap().send(p).unwrap());
        let pool = ParsePool::new(1, JsonParser::Auto, deliver).unwrap();
        let mut session = Session::new(SessionConfig::default());
        let mut inbound = Inbound::new(7, 1 << 20, 1000, None);
        let now = Instant::now();
        let big = format!("{}\n", "x".repeat(5000));
        inbound.push_read(&mut session, b"short-1\n", Some(&pool), now);
        inbound.push_read(&mut session, big.as_bytes(), Some(&pool), now);
        inbound.push_read(&mut session, b"short-22\nshort-333\n", Some(&pool), now);
        assert_eq!(reported(&mut session), [7], "only what came before the big frame");
        assert!(!inbound.is_drained());
        inbound.close_session(&mut session, CloseReason::StdoutClosed);
        assert!(session.close_reason().is_none(), "the close waits for the pool");
        let parsed = rx.recv().unwrap();
        assert_eq!((parsed.conn, parsed.seq), (7, 0));
        inbound.on_parsed(parsed);
        inbound.deliver_ready(&mut session, now);
        assert_eq!(reported(&mut session), [5000, 8, 9]);
        assert!(inbound.is_drained());
        assert_eq!(session.close_reason(), Some(&CloseReason::StdoutClosed));
        assert_eq!((inbound.frames_offloaded, inbound.stdout_bytes), (1, 8 + 5001 + 19));
    }

    /// Stdout ending inside a line reports the cut-short line.
    #[test]
    fn a_line_cut_short_is_reported() {
        let mut session = Session::new(SessionConfig::default());
        let mut inbound = Inbound::new(1, 1 << 20, usize::MAX, None);
        let now = Instant::now();
        inbound.push_read(&mut session, b"{\"jsonrpc\":", None, now);
        inbound.ended(&mut session, now);
        let violations: Vec<_> = std::iter::from_fn(|| session.poll_event()).collect();
        assert!(
            matches!(violations[..], [Event::Violation(Violation::TruncatedLine(11))]),
            "{violations:?}"
        );
    }
}
