//! One server as the reactor sees it: its process, pipes, framer, session and shutdown phase.

use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::process::Child;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use futures_channel::oneshot;
use serde_json::Value;

use crate::frame::{FrameEvent, LineFramer};
use crate::jsonrpc::{
    Attachment, DecodeError, ErrorObject, Id, RawDecoded, RawMessage, RawResponse,
};
use crate::parse::pool::{Job, ParsePool, Parsed};
use crate::protocol::{CloseReason, RequestError, ServerDetails, Session, SessionStats};
use crate::queue::RequestQueue;
use crate::sandbox::{Signal, signal_group};
use crate::uring::{Buffer, Completion, Ring};

use super::driver::{QueuedRequest, ServerId};
use super::error::Error;
use super::events::{EventSink, ServerEvent};
use super::pump::{Completer, Control, Delegate, Pump, ServerCommand};
use super::spilling::{SpillJob, SpillOutcome};
use super::stderr::StderrLog;

/// A server's share of the host's spill settings.
pub(crate) struct SpillContext {
    pub(crate) store: Arc<crate::spill::store::SpillStore>,
    pub(crate) line_threshold: usize,
    pub(crate) string_threshold: usize,
}

/// Grace after the process exits for its last stdout bytes to arrive before pending requests
/// fail (answers written just before exiting still reach their callers).
const EXIT_GRACE: Duration = Duration::from_millis(250);
/// Grace after stdout closes for the exit status to arrive, so errors can name it.
const EOF_GRACE: Duration = Duration::from_millis(100);
/// Shutdown: wait after closing stdin before SIGTERM, and after SIGTERM before SIGKILL.
pub(crate) const SHUTDOWN_STEP: Duration = Duration::from_secs(2);
/// Largest single write to a server's stdin (several queued messages are coalesced up to it).
const MAX_WRITE: usize = 1 << 20;

/// What one of a server's ring operations is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Op {
    /// A read of its stdout.
    Stdout = 0,
    /// A read of its stderr.
    Stderr = 1,
    /// A write to its stdin.
    Stdin = 2,
    /// The wait for its exit (its pidfd becoming readable).
    Exit = 3,
}

/// The `user_data` of one of a server's ring operations: the server's id and the operation,
/// encoded and decoded here only (the id in the high bits, the operation in the low
/// [`OpTag::OP_BITS`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OpTag {
    /// The server.
    pub(crate) server: ServerId,
    /// The operation.
    pub(crate) op: Op,
}

impl OpTag {
    const OP_BITS: u32 = 3;
    /// Indexed by discriminant.
    const OPS: [Op; 4] = [Op::Stdout, Op::Stderr, Op::Stdin, Op::Exit];

    /// The ring tag.
    pub(crate) fn encode(self) -> u64 {
        (self.server.get() << Self::OP_BITS) | u64::from(self.op as u8)
    }

    /// The operation a ring tag names; `None` for a tag no [`encode`](Self::encode) made.
    pub(crate) fn decode(tag: u64) -> Option<OpTag> {
        let op = *Self::OPS.get((tag & ((1 << Self::OP_BITS) - 1)) as usize)?;
        Some(OpTag { server: ServerId::new(tag >> Self::OP_BITS), op })
    }
}

/// Counters and tail of one server, for `Client::stats`.
#[derive(Debug, Clone, Default)]
pub struct ServerStats {
    /// The server's process id.
    pub pid: u32,
    /// Session counters (requests, frames, violations, timeouts, ...).
    pub session: SessionStats,
    /// Bytes read from stdout.
    pub stdout_bytes: u64,
    /// Bytes read from stderr.
    pub stderr_bytes: u64,
    /// The last bytes the server wrote to stderr.
    pub stderr_tail: Vec<u8>,
    /// Events dropped because the event stream was full.
    pub events_dropped: u64,
    /// Frames parsed on the worker pool rather than the reactor thread.
    pub frames_offloaded: u64,
    /// Answers streamed to the spill store.
    pub answers_spilled: u64,
    /// The sandbox's limits and counters (OOM kills, pid-limit hits, CPU throttling), when
    /// the server is sandboxed.
    pub sandbox: Option<SandboxStats>,
}

/// What a server's sandbox enforces and what it has stopped so far.
#[derive(Debug, Clone)]
pub struct SandboxStats {
    /// How each limit is enforced (or why not).
    pub limits: crate::sandbox::cgroup::LimitReport,
    /// The cgroup's counters, when the server has a cgroup.
    pub counters: Option<crate::sandbox::cgroup::CgroupStats>,
    /// The server's `RLIMIT_NOFILE` (soft = hard: the most fds it can hold open).
    pub nofile: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Running,
    /// stdin closed; SIGTERM at the deadline.
    StdinClosed(Instant),
    /// SIGTERM sent; SIGKILL at the deadline.
    Terminated(Instant),
    /// SIGKILL sent.
    Killed,
}

pub(crate) struct Conn {
    pub(crate) id: ServerId,
    /// The session, its callers and its events.
    pump: Pump,
    child: Child,
    /// The sandbox's cgroup and report; dropping it kills what is left and removes the cgroup.
    sandbox: Option<crate::sandbox::SandboxGuard>,
    pidfd: Arc<OwnedFd>,
    stdin: Option<Arc<OwnedFd>>,
    stdout: Arc<OwnedFd>,
    stderr: Arc<OwnedFd>,
    framer: LineFramer,
    outq: VecDeque<Bytes>,
    writing: bool,
    stderr_log: StderrLog,
    /// Read operations still armed.
    stdout_open: bool,
    stderr_open: bool,
    exit_watch: bool,
    /// How the process ended, once reaped.
    exit: Option<CloseReason>,
    /// When to give up waiting for the rest of stdout / the exit status, and with what reason.
    close_at: Option<(Instant, CloseReason)>,
    phase: Phase,
    stdout_bytes: u64,
    read_size: usize,
    /// Frames in arrival order while one of them is on the parse pool.
    in_order: VecDeque<Slot>,
    next_frame_seq: u64,
    /// Frames at least this long are parsed on the pool.
    offload_threshold: usize,
    /// A close that waits for `in_order` to drain.
    close_when_parsed: Option<CloseReason>,
    /// The deadline this server has registered in the reactor's timer heap.
    pub(crate) timer_at: Option<Instant>,
    /// Where oversized answers go, when the host spills.
    spill: Option<SpillContext>,
    /// The answer being spilled now, with its `in_order` sequence number.
    spilling: Option<(u64, SpillJob)>,
    answers_spilled: u64,
    frames_offloaded: u64,
}

/// A frame waiting for its turn.
enum Slot {
    /// Not parsed yet (small frames are parsed when delivered).
    Event(FrameEvent),
    /// On the parse pool, with this sequence number.
    Parsing(u64),
    /// Back from the pool (or from the spill store, with an empty frame).
    Parsed(Bytes, Result<RawDecoded, DecodeError>),
    /// An answer that could not be read, with its raw id token if one was found.
    Failed(Option<Vec<u8>>, RequestError),
}

pub(crate) struct ConnParts {
    pub(crate) id: ServerId,
    pub(crate) name: Arc<str>,
    pub(crate) spawned: crate::sandbox::Spawned,
    pub(crate) session: Session<Completer>,
    pub(crate) max_frame: usize,
    pub(crate) stderr_capacity: usize,
    pub(crate) read_size: usize,
    pub(crate) queue: Arc<RequestQueue<QueuedRequest>>,
    pub(crate) offload_threshold: usize,
    pub(crate) spill: Option<SpillContext>,
    pub(crate) events: EventSink,
    pub(crate) init_reply: oneshot::Sender<Result<ServerDetails, Error>>,
    pub(crate) handler: Option<super::handler::HandlerSlot>,
}

impl Conn {
    /// Takes a freshly spawned server, arms its reads and exit watch, sends `initialize`.
    pub(crate) fn start(parts: ConnParts, ring: &mut Ring, now: Instant) -> std::io::Result<Conn> {
        let s = parts.spawned;
        let id = parts.id;
        let delegate = parts.handler.map(|slot| -> Delegate {
            Box::new(move |name: Arc<str>, rid: Id, method: String, params: Option<Value>| {
                slot.dispatch(id, name, rid, method, params);
            })
        });
        let pump = Pump::new(
            parts.name,
            parts.session,
            parts.queue,
            parts.events,
            delegate,
            parts.init_reply,
        );
        let mut conn = Conn {
            id,
            pump,
            child: s.child,
            sandbox: s.sandbox,
            pidfd: Arc::new(s.pidfd),
            stdin: Some(Arc::new(s.stdin)),
            stdout: Arc::new(s.stdout),
            stderr: Arc::new(s.stderr),
            framer: match &parts.spill {
                Some(spill) => LineFramer::spilling(spill.line_threshold),
                None => LineFramer::new(parts.max_frame),
            },
            outq: VecDeque::new(),
            writing: false,
            stderr_log: StderrLog::new(parts.stderr_capacity),
            stdout_open: true,
            stderr_open: true,
            exit_watch: true,
            exit: None,
            close_at: None,
            phase: Phase::Running,
            stdout_bytes: 0,
            read_size: parts.read_size,
            in_order: VecDeque::new(),
            next_frame_seq: 0,
            offload_threshold: parts.offload_threshold,
            close_when_parsed: None,
            timer_at: None,
            spill: parts.spill,
            spilling: None,
            answers_spilled: 0,
            frames_offloaded: 0,
        };
        let armed = conn
            .arm(ring, Op::Stdout, false, None)
            .and_then(|()| conn.arm(ring, Op::Stderr, false, None))
            .and_then(|()| ring.poll_readable(&conn.pidfd, conn.tag(Op::Exit)));
        if let Err(e) = armed {
            // Without its reads and exit watch the server cannot be driven: end it now. Reads
            // already armed complete on their own once the process is gone.
            let _ = signal_group(conn.child.id(), Signal::Kill);
            let _ = conn.child.wait();
            return Err(e);
        }
        conn.pump.handshake(now);
        conn.flush(ring, now);
        Ok(conn)
    }

    /// The server's name.
    pub(crate) fn name(&self) -> &str {
        &self.pump.name
    }

    pub(crate) fn tag(&self, op: Op) -> u64 {
        OpTag { server: self.id, op }.encode()
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Hands a caller's request to the session; [`flush`](Self::flush) then sends it.
    pub(crate) fn request(&mut self, request: QueuedRequest, now: Instant) {
        self.pump.submit(request, now);
    }

    /// The application's answer to the server's request `id`.
    pub(crate) fn respond(
        &mut self,
        ring: &mut Ring,
        id: &Id,
        outcome: Result<Value, ErrorObject>,
        now: Instant,
    ) {
        self.pump.session.respond(id, outcome, now);
        self.flush(ring, now);
    }

    /// Carries out a client's command.
    pub(crate) fn command(&mut self, ring: &mut Ring, command: ServerCommand, now: Instant) {
        match self.pump.apply(command, now) {
            None => {}
            Some(Control::Stats(reply)) => {
                let _ = reply.send(self.stats());
            }
            Some(Control::Shutdown(reply)) => {
                if let Some(reply) = reply {
                    self.pump.on_finished(reply);
                }
                self.begin_shutdown(ring, now);
            }
        }
        self.flush(ring, now);
    }

    /// Moves the session's output to the pipe and its events to their receivers.
    pub(crate) fn flush(&mut self, ring: &mut Ring, now: Instant) {
        self.write_transmit(ring);
        if let Some(outcome) = self.pump.deliver(now) {
            self.on_handshake(ring, outcome, now);
        }
        // Answers queued while handling events (a refused server request).
        self.write_transmit(ring);
    }

    /// The handshake ended: `spawn` hears how, and a server nobody will use is stopped.
    fn on_handshake(
        &mut self,
        ring: &mut Ring,
        outcome: Result<ServerDetails, RequestError>,
        now: Instant,
    ) {
        let failed = outcome.is_err();
        let delivered = match outcome {
            // The server is going away: the answer waits for its exit status and the whole of
            // its stderr (sent by `close`).
            Err(RequestError::Closed(_)) => true,
            outcome => {
                let outcome = outcome.map_err(|source| self.handshake_error(source));
                self.pump.init_reply.take().is_some_and(|r| r.send(outcome).is_ok())
            }
        };
        if failed || !delivered {
            // Nobody will use this server: stop it.
            self.begin_shutdown(ring, now);
        }
    }

    /// Moves the session's output to the pipe.
    fn write_transmit(&mut self, ring: &mut Ring) {
        while let Some(transmit) = self.pump.session.poll_transmit() {
            if self.stdin.is_some() {
                self.outq.push_back(transmit.bytes);
            }
        }
        self.start_write(ring);
    }

    fn start_write(&mut self, ring: &mut Ring) {
        if self.writing {
            return;
        }
        let Some(stdin) = &self.stdin else { return };
        let data = match self.outq.len() {
            0 => return,
            1 => self.outq.pop_front().expect("one queued"),
            _ => {
                let mut merged = BytesMut::new();
                while let Some(front) = self.outq.front() {
                    if !merged.is_empty() && merged.len() + front.len() > MAX_WRITE {
                        break;
                    }
                    merged.extend_from_slice(&self.outq.pop_front().expect("front exists"));
                }
                merged.freeze()
            }
        };
        match ring.write(stdin, data, self.tag(Op::Stdin)) {
            Ok(()) => self.writing = true,
            Err(e) => tracing::error!(server = self.name(), "submitting a write: {e}"),
        }
    }

    /// Arms the next read on stdout or stderr: a multishot read into the shared buffers when
    /// the kernel has them, unless `own_buffer` asks for a plain read (the `ENOBUFS` fallback);
    /// a plain read reuses `buf` when given.
    fn arm(
        &self,
        ring: &mut Ring,
        kind: Op,
        own_buffer: bool,
        buf: Option<Vec<u8>>,
    ) -> std::io::Result<()> {
        let (file, size) = match kind {
            Op::Stdout => (&self.stdout, self.read_size),
            _ => (&self.stderr, 16 * 1024),
        };
        if ring.features().multishot_read && !own_buffer {
            ring.read_multishot(file, self.tag(kind))
        } else {
            ring.read(file, buf.unwrap_or_else(|| Vec::with_capacity(size)), self.tag(kind))
        }
    }

    /// Re-arms a read whose previous operation ended (logging a failure). After `ENOBUFS`
    /// (every shared buffer busy) it falls back to one plain read, so the pipe is drained
    /// regardless; a plain read's buffer is reused.
    fn rearm(&self, ring: &mut Ring, kind: Op, result: i32, buf: Option<Vec<u8>>) -> bool {
        self.arm(ring, kind, result == -libc::ENOBUFS, buf)
            .map_err(|e| tracing::error!(server = self.name(), "re-arming a read: {e}"))
            .is_ok()
    }

    /// A read on stdout completed (one chunk of a multishot read, or a plain read).
    pub(crate) fn on_stdout(
        &mut self,
        ring: &mut Ring,
        pool: Option<&ParsePool>,
        c: Completion,
        now: Instant,
    ) {
        match c.buffer {
            // Zero-copy: frames inside this chunk are slices of the shared buffer.
            Buffer::Provided { bid, len } => self.take_chunk(ring.lease(bid, len), pool, now),
            Buffer::Read(buf) if c.result > 0 => {
                self.stdout_bytes += buf.len() as u64;
                self.framer.push(&buf);
                while let Some(event) = self.framer.next_event() {
                    self.on_frame(event, pool, now);
                }
                if self.rearm(ring, Op::Stdout, 0, Some(buf)) {
                    self.flush(ring, now);
                    return;
                }
            }
            _ => {}
        }
        if c.more
            || ((c.result > 0 || c.result == -libc::ENOBUFS)
                && self.rearm(ring, Op::Stdout, c.result, None))
        {
            self.flush(ring, now);
            return;
        }
        // End of stream, an error, or a cancel: stdout is done.
        if c.result < 0 && c.result != -libc::ECANCELED {
            let err = std::io::Error::from_raw_os_error(-c.result);
            tracing::warn!(server = self.name(), "reading stdout: {err}");
        }
        self.stdout_open = false;
        if let Some(len) = self.framer.finish() {
            self.pump.session.handle_truncated(len);
        }
        self.abandon_spill();
        self.deliver_ready_slots(now);
        match &self.exit {
            Some(reason) => self.close_session(reason.clone()),
            None => self.close_at = Some((now + EOF_GRACE, CloseReason::StdoutClosed)),
        }
        self.flush(ring, now);
    }

    /// Frames what a read brought.
    fn take_chunk(&mut self, chunk: Bytes, pool: Option<&ParsePool>, now: Instant) {
        self.stdout_bytes += chunk.len() as u64;
        self.framer.push_bytes(chunk);
        while let Some(event) = self.framer.next_event() {
            self.on_frame(event, pool, now);
        }
    }

    /// One framer event, in arrival order: large frames go to the parse pool; everything
    /// behind a frame still being parsed waits its turn, so the session sees the server's
    /// messages in the order they were sent.
    fn on_frame(&mut self, event: FrameEvent, pool: Option<&ParsePool>, now: Instant) {
        let event = match self.on_spill_event(event, now) {
            Some(event) => event,
            None => return,
        };
        let event = match (event, pool) {
            (FrameEvent::Frame(frame), Some(pool)) if frame.len() >= self.offload_threshold => {
                let seq = self.next_frame_seq;
                match pool.submit(Job { conn: self.id.get(), seq, frame }) {
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
            self.deliver(Slot::Event(event), now);
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
    fn on_spill_event(&mut self, event: FrameEvent, now: Instant) -> Option<FrameEvent> {
        match event {
            FrameEvent::SpillStart(bytes) => {
                let Some(spill) = &self.spill else {
                    unreachable!("only a spilling framer starts spills")
                };
                let mut job = SpillJob::new(spill.store.clone(), spill.string_threshold);
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
                        SpillOutcome::Decoded(mut decoded, files) => {
                            // The files travel with the result: if its caller is gone, they
                            // are dropped (and removed) with it.
                            if let RawDecoded::Single(RawMessage::Response(RawResponse {
                                outcome: Ok(raw),
                                ..
                            })) = &mut decoded
                            {
                                raw.attach(files.into_iter().map(|f| Arc::new(f) as Attachment));
                            }
                            Slot::Parsed(Bytes::new(), Ok(decoded))
                        }
                        SpillOutcome::Failed { id, reason } => {
                            Slot::Failed(id, RequestError::SpillFailed { reason })
                        }
                    };
                    self.fill(seq, slot);
                    self.deliver_ready_slots(now);
                }
                None
            }
            other => Some(other),
        }
    }

    /// Stdout ended inside a spilled line: its request fails.
    fn abandon_spill(&mut self) {
        if let Some((seq, job)) = self.spilling.take() {
            let reason = "the server's stdout ended inside the answer".to_owned();
            self.fill(seq, Slot::Failed(job.id(), RequestError::SpillFailed { reason }));
        }
    }

    /// Puts a finished slot in place of `Parsing(seq)`.
    fn fill(&mut self, seq: u64, done: Slot) {
        if let Some(slot) =
            self.in_order.iter_mut().find(|s| matches!(s, Slot::Parsing(n) if *n == seq))
        {
            *slot = done;
        }
    }

    /// A frame came back from the parse pool.
    pub(crate) fn on_parsed(&mut self, ring: &mut Ring, parsed: Parsed, now: Instant) {
        let Parsed { seq, frame, decoded, .. } = parsed;
        self.fill(seq, Slot::Parsed(frame, decoded));
        self.deliver_ready(ring, now);
    }

    /// Delivers the slots at the front of `in_order` that are ready.
    fn deliver_ready(&mut self, ring: &mut Ring, now: Instant) {
        self.deliver_ready_slots(now);
        self.flush(ring, now);
    }

    /// Delivers the ready slots at the front of `in_order` to the session (no flush).
    fn deliver_ready_slots(&mut self, now: Instant) {
        while let Some(front) = self.in_order.front() {
            if matches!(front, Slot::Parsing(_)) {
                break;
            }
            let slot = self.in_order.pop_front().expect("front exists");
            self.deliver(slot, now);
        }
        if self.in_order.is_empty()
            && let Some(reason) = self.close_when_parsed.take()
        {
            self.pump.session.handle_closed(reason);
        }
    }

    fn deliver(&mut self, slot: Slot, now: Instant) {
        match slot {
            Slot::Event(FrameEvent::Frame(frame)) => self.pump.session.handle_frame(&frame, now),
            Slot::Event(FrameEvent::Oversized(o)) => self.pump.session.handle_oversized(&o),
            Slot::Parsed(frame, decoded) => self.pump.session.handle_decoded(&frame, decoded, now),
            Slot::Failed(id, error) => self.pump.session.handle_failed_answer(id.as_deref(), error),
            Slot::Parsing(_) => unreachable!("only delivered once parsed"),
            // Spill events are consumed by `on_spill_event` before any slot is made.
            Slot::Event(
                FrameEvent::SpillStart(_) | FrameEvent::SpillData(_) | FrameEvent::SpillEnd { .. },
            ) => unreachable!("spill events never become slots"),
        }
    }

    /// The server is gone: fail what is pending, but only after every frame it sent before
    /// going has been delivered (some may still be on the parse pool).
    fn close_session(&mut self, reason: CloseReason) {
        if self.in_order.is_empty() {
            self.pump.session.handle_closed(reason);
        } else {
            self.close_when_parsed.get_or_insert(reason);
        }
    }

    /// A read on stderr completed.
    pub(crate) fn on_stderr(&mut self, ring: &mut Ring, c: Completion) {
        match c.buffer {
            Buffer::Provided { bid, len } => {
                self.stderr_log.push(&self.pump.name, ring.view(bid, len));
                ring.recycle(bid);
            }
            Buffer::Read(buf) if c.result > 0 => {
                self.stderr_log.push(&self.pump.name, &buf);
                if self.rearm(ring, Op::Stderr, 0, Some(buf)) {
                    return;
                }
            }
            _ => {}
        }
        if c.more
            || ((c.result > 0 || c.result == -libc::ENOBUFS)
                && self.rearm(ring, Op::Stderr, c.result, None))
        {
            return;
        }
        self.stderr_log.finish(&self.pump.name);
        self.stderr_open = false;
    }

    /// A write to stdin completed.
    pub(crate) fn on_stdin(&mut self, ring: &mut Ring, result: i32, data: Bytes, now: Instant) {
        self.writing = false;
        match usize::try_from(result) {
            Ok(n) if n < data.len() && n > 0 => {
                // Partial write: put the rest back at the front.
                self.outq.push_front(data.slice(n..));
                self.start_write(ring);
            }
            Ok(n) if n > 0 || data.is_empty() => self.start_write(ring),
            _ if self.stdin.is_none() => {} // cancelled by shutdown
            _ if -result == libc::EPIPE => {
                // Nobody reads stdin any more: the server exited or closed it. Its exit status
                // (or its stdout's end) says why; wait for it briefly rather than report EPIPE.
                tracing::debug!(server = self.name(), "stdin closed by the server (EPIPE)");
                self.stdin = None;
                self.outq.clear();
                match &self.exit {
                    Some(reason) => {
                        let reason = reason.clone();
                        self.close_session(reason);
                    }
                    None if self.close_at.is_none() => {
                        let reason = CloseReason::Io("the server closed its stdin".into());
                        self.close_at = Some((now + EXIT_GRACE, reason));
                    }
                    None => {}
                }
                self.flush(ring, now);
            }
            _ => {
                let err = std::io::Error::from_raw_os_error(-result.min(-1));
                tracing::warn!(server = self.name(), "writing to stdin: {err}");
                self.pump
                    .session
                    .handle_closed(CloseReason::Io(format!("writing to stdin: {err}")));
                self.flush(ring, now);
                self.begin_shutdown(ring, now);
            }
        }
    }

    /// The pidfd became readable: the process exited.
    pub(crate) fn on_exit(&mut self, ring: &mut Ring, result: i32, now: Instant) {
        self.exit_watch = false;
        if result < 0 {
            tracing::warn!(
                server = self.name(),
                "watching the process exit failed: {}",
                std::io::Error::from_raw_os_error(-result)
            );
            return;
        }
        // The leader is a zombie now, so its pid (and group id) cannot be reused yet: kill any
        // stragglers left in its group before reaping it.
        let _ = signal_group(self.child.id(), Signal::Kill);
        let mut reason = match self.child.try_wait() {
            Ok(Some(status)) => match (status.code(), status.signal()) {
                // The sandbox's outer process mirrors a server killed by a signal as 128 + it.
                (Some(code), _) if self.sandbox.is_some() && (129..=192).contains(&code) => {
                    CloseReason::Signaled(code - 128)
                }
                (Some(code), _) => CloseReason::Exited(code),
                (None, Some(sig)) => CloseReason::Signaled(sig),
                (None, None) => CloseReason::Exited(-1),
            },
            Ok(None) | Err(_) => CloseReason::Exited(-1),
        };
        if let Some(guard) = &self.sandbox
            && let Some(stats) = guard.stats()
        {
            if stats.oom_kills.unwrap_or(0) > 0 && reason == CloseReason::Signaled(libc::SIGKILL) {
                let limit = match &guard.limits.memory {
                    crate::sandbox::cgroup::LimitStatus::Enforced { value, .. } => value.clone(),
                    other => other.to_string(),
                };
                reason = CloseReason::OutOfMemory(limit);
            }
            let oom_kills = stats.oom_kills.unwrap_or(0);
            let refused_forks = stats.pids_max_hits.unwrap_or(0);
            if oom_kills > 0 || refused_forks > 0 {
                self.pump.emit(ServerEvent::SandboxLimits { oom_kills, refused_forks });
            }
            if let Some(hits) = stats.pids_max_hits.filter(|&h| h > 0) {
                tracing::warn!(
                    server = self.name(),
                    "the sandbox refused {hits} forks at its pids limit"
                );
            }
        }
        tracing::debug!(server = self.name(), "{reason}");
        self.exit = Some(reason.clone());
        if self.stdout_open {
            self.close_at = Some((now + EXIT_GRACE, reason));
        } else {
            self.close_session(reason);
            self.flush(ring, now);
        }
    }

    /// Starts the shutdown sequence: close stdin, then SIGTERM and SIGKILL after
    /// [`SHUTDOWN_STEP`] each. Requests still pending fail with `Shutdown`.
    pub(crate) fn begin_shutdown(&mut self, ring: &mut Ring, now: Instant) {
        if self.phase != Phase::Running {
            return;
        }
        self.outq.clear();
        if self.stdin.take().is_some() && self.writing {
            // The write (blocked on a full pipe, perhaps) holds the fd open: cancel it.
            let _ = ring.cancel(self.tag(Op::Stdin));
        }
        self.pump.session.handle_closed(CloseReason::Shutdown);
        self.phase = Phase::StdinClosed(now + SHUTDOWN_STEP);
        self.flush(ring, now);
    }

    /// The next instant this connection needs [`on_timer`](Self::on_timer).
    pub(crate) fn next_deadline(&mut self) -> Option<Instant> {
        let phase = match self.phase {
            Phase::StdinClosed(t) | Phase::Terminated(t) if self.exit.is_none() => Some(t),
            _ => None,
        };
        [self.pump.session.poll_timeout(), self.close_at.as_ref().map(|c| c.0), phase]
            .into_iter()
            .flatten()
            .min()
    }

    pub(crate) fn on_timer(&mut self, ring: &mut Ring, now: Instant) {
        self.pump.session.handle_timeout(now);
        if let Some((at, reason)) = self.close_at.take_if(|(at, _)| *at <= now) {
            let _ = at;
            self.close_session(reason);
            if self.exit.is_none() && self.stdin.is_none() && self.phase == Phase::Running {
                // It closed its stdin but lives on: a server that cannot be talked to.
                self.begin_shutdown(ring, now);
            }
            if self.exit.is_some() {
                // Exited, but something still holds its pipes open: stop reading them.
                let _ = ring.cancel(self.tag(Op::Stdout));
                let _ = ring.cancel(self.tag(Op::Stderr));
            }
        }
        if self.exit.is_none() {
            match self.phase {
                Phase::StdinClosed(at) if at <= now => {
                    tracing::debug!(
                        server = self.name(),
                        "did not exit after stdin closed; sending SIGTERM"
                    );
                    let _ = signal_group(self.child.id(), Signal::Term);
                    self.phase = Phase::Terminated(now + SHUTDOWN_STEP);
                }
                Phase::Terminated(at) if at <= now => {
                    tracing::debug!(
                        server = self.name(),
                        "did not exit after SIGTERM; sending SIGKILL"
                    );
                    let _ = signal_group(self.child.id(), Signal::Kill);
                    self.phase = Phase::Killed;
                }
                _ => {}
            }
        }
        self.flush(ring, now);
    }

    /// True once the process is reaped and no operation of ours is in flight.
    pub(crate) fn finished(&self) -> bool {
        self.exit.is_some()
            && !self.stdout_open
            && !self.stderr_open
            && !self.writing
            && !self.exit_watch
            && self.in_order.is_empty()
    }

    /// Final bookkeeping when the connection is removed.
    pub(crate) fn close(mut self) {
        let reason = self.exit.clone().unwrap_or(CloseReason::Shutdown);
        let (name, stderr) = (self.pump.name.clone(), self.stderr_log.tail());
        let failed = |source| handshake_error(name, &stderr, source);
        self.pump.close_session(&reason, Instant::now(), failed);
        self.pump.closed(&reason);
    }

    /// The error of a start that failed with `source`: with the end of the server's stderr
    /// (the sandbox hint is the host's to add: it knows the command).
    fn handshake_error(&self, source: RequestError) -> Error {
        handshake_error(self.pump.name.clone(), &self.stderr_log.tail(), source)
    }

    pub(crate) fn stats(&self) -> ServerStats {
        ServerStats {
            pid: self.child.id(),
            session: self.pump.session.stats(),
            stdout_bytes: self.stdout_bytes,
            stderr_bytes: self.stderr_log.total(),
            stderr_tail: self.stderr_log.tail(),
            events_dropped: self.pump.events_dropped(),
            frames_offloaded: self.frames_offloaded,
            answers_spilled: self.answers_spilled,
            sandbox: self.sandbox.as_ref().map(|g| SandboxStats {
                limits: g.limits.clone(),
                counters: g.stats(),
                nofile: g.nofile,
            }),
        }
    }
}

/// The error of a start that failed with `source`: with the end of the server's stderr
/// (the sandbox hint is the host's to add: it knows the command).
fn handshake_error(server: Arc<str>, stderr_tail: &[u8], source: RequestError) -> Error {
    let stderr = super::error::last_lines(stderr_tail);
    Error::Handshake(Box::new(super::error::StartFailure { server, source, stderr, hint: None }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_tags_round_trip_and_nothing_else_decodes() {
        for server in [1, 2, 1 << 40] {
            for op in OpTag::OPS {
                let tag = OpTag { server: ServerId::new(server), op };
                assert_eq!(OpTag::decode(tag.encode()), Some(tag));
            }
        }
        for unused in 4..8 {
            assert_eq!(OpTag::decode((9 << OpTag::OP_BITS) | unused), None);
        }
    }
}
