//! One server as the reactor sees it: its process, pipes, framer, session and shutdown phase.

use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::process::Child;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_channel::oneshot;
use serde_json::Value;

use crate::jsonrpc::{ErrorObject, Id};
use crate::parse::pool::{ParsePool, Parsed};
use crate::protocol::{CloseReason, RequestError, ServerDetails, Session};
use crate::queue::RequestQueue;
use crate::sandbox::{Signal, signal_group};
use crate::uring::{Buffer, Completion, Ring};

use super::error::Error;
use super::events::{EventSink, ServerEvent};
use super::inbound::{Inbound, SpillContext};
use super::lane::Lane;
use super::pump::{Completer, Control, Delegate, Pump, ServerCommand};
use super::request::{QueuedRequest, ServerId};
use super::stats::{SandboxStats, ServerStats};
use super::stderr::StderrLog;

mod stdin;

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

/// Where the server's process is in its life.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Lifecycle {
    /// Running, not asked to stop.
    Running,
    /// Asked to stop: stdin closed; SIGTERM at the deadline.
    StdinClosed(Instant),
    /// SIGTERM sent; SIGKILL at the deadline.
    Terminated(Instant),
    /// SIGKILL sent.
    Killed,
    /// Reaped, and how it ended.
    Exited(CloseReason),
}

/// The ring operations of a server still in flight (a server is removed only once none is).
#[derive(Debug, Clone, Copy)]
struct Armed {
    stdout: bool,
    stderr: bool,
    /// A write to stdin.
    stdin: bool,
    /// The poll of the pidfd.
    exit: bool,
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
    /// Stdout on its way to the session.
    inbound: Inbound,
    outq: VecDeque<Bytes>,
    stderr_log: StderrLog,
    /// Ring operations in flight.
    armed: Armed,
    life: Lifecycle,
    /// When to give up waiting for the rest of stdout / the exit status, and with what reason.
    close_at: Option<(Instant, CloseReason)>,
    read_size: usize,
    /// The deadline this server has registered in the reactor's timer heap.
    pub(crate) timer_at: Option<Instant>,
    /// Where callers write requests themselves (lane.rs).
    lane: Option<Arc<Lane>>,
    /// Whether the lane may be lent a new id: not after its loan expired unused, until the
    /// next request (an idle server costs no wake-ups).
    lending: bool,
    /// When the lane's loan expires, if one is out.
    lane_by: Option<Instant>,
    /// Requests written by their callers (adopted from the lane).
    direct_writes: u64,
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
    /// Where callers write their requests themselves, when the host lets them.
    pub(crate) lane: Option<Arc<Lane>>,
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
            inbound: Inbound::new(id.get(), parts.max_frame, parts.offload_threshold, parts.spill),
            outq: VecDeque::new(),
            stderr_log: StderrLog::new(parts.stderr_capacity),
            armed: Armed { stdout: true, stderr: true, stdin: false, exit: true },
            life: Lifecycle::Running,
            close_at: None,
            read_size: parts.read_size,
            timer_at: None,
            lane: parts.lane,
            lending: true,
            lane_by: None,
            direct_writes: 0,
        };
        if let (Some(lane), Some(stdin)) = (&conn.lane, &conn.stdin) {
            lane.attach(stdin);
        }
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

    /// How the process ended, once reaped.
    fn exited(&self) -> Option<&CloseReason> {
        match &self.life {
            Lifecycle::Exited(reason) => Some(reason),
            _ => None,
        }
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
        if self.lane_by.is_some() {
            // The server is busy from now on (the lane is for an idle one), and a 2026-07-28
            // `logging/setLevel` changes what every later request's `_meta` says.
            self.withdraw_loan(None);
        }
        self.lending = true;
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
        if command.ordered()
            && let Some(lane) = &self.lane
        {
            // The client held the lane for this command (Client::in_order; the new roots of a
            // 2026-07-28 session's `_meta` among them): requests after it may go directly
            // again once its bytes are written.
            lane.release();
        }
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
        if self.lane_by.is_none() {
            // Lent before the answers go out: a caller woken by one finds the loan at once.
            self.open_lane(now);
        }
        if let Some(outcome) = self.pump.deliver(now) {
            self.on_handshake(ring, outcome, now);
        }
        // Answers queued while handling events (a refused server request).
        self.write_transmit(ring);
        self.open_lane(now);
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
            Buffer::Provided { bid, len } => {
                let chunk = ring.lease(bid, len);
                self.inbound.push_chunk(&mut self.pump.session, chunk, pool, now);
            }
            Buffer::Read(buf) if c.result > 0 => {
                self.inbound.push_read(&mut self.pump.session, &buf, pool, now);
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
        self.armed.stdout = false;
        self.inbound.ended(&mut self.pump.session, now);
        match self.exited() {
            Some(reason) => self.close_session(reason.clone()),
            None => self.close_at = Some((now + EOF_GRACE, CloseReason::StdoutClosed)),
        }
        self.flush(ring, now);
    }

    /// The host's memory became short (or no longer is): see memory.rs.
    pub(crate) fn memory_pressed(&mut self, pressed: bool) {
        self.inbound.set_spill_threshold(pressed);
    }

    /// A frame came back from the parse pool.
    pub(crate) fn on_parsed(&mut self, ring: &mut Ring, parsed: Parsed, now: Instant) {
        self.inbound.on_parsed(parsed);
        self.inbound.deliver_ready(&mut self.pump.session, now);
        self.flush(ring, now);
    }

    /// The server is gone: fail what is pending, but only after every frame it sent before
    /// going has been delivered (some may still be on the parse pool).
    fn close_session(&mut self, reason: CloseReason) {
        self.close_lane();
        self.pump.refuse_new(&reason);
        self.inbound.close_session(&mut self.pump.session, reason);
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
        self.armed.stderr = false;
    }

    /// The pidfd became readable: the process exited.
    pub(crate) fn on_exit(&mut self, ring: &mut Ring, result: i32, now: Instant) {
        self.armed.exit = false;
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
        self.life = Lifecycle::Exited(reason.clone());
        if self.armed.stdout {
            self.close_at = Some((now + EXIT_GRACE, reason));
        } else {
            self.close_session(reason);
            self.flush(ring, now);
        }
    }

    /// Starts the shutdown sequence: close stdin, then SIGTERM and SIGKILL after
    /// [`SHUTDOWN_STEP`] each. Requests still pending fail with `Shutdown`.
    pub(crate) fn begin_shutdown(&mut self, ring: &mut Ring, now: Instant) {
        if let Lifecycle::StdinClosed(_) | Lifecycle::Terminated(_) | Lifecycle::Killed = self.life
        {
            return;
        }
        self.outq.clear();
        self.close_lane();
        if self.stdin.take().is_some() && self.armed.stdin {
            // The write (blocked on a full pipe, perhaps) holds the fd open: cancel it.
            let _ = ring.cancel(self.tag(Op::Stdin));
        }
        self.pump.session.handle_closed(CloseReason::Shutdown);
        if self.life == Lifecycle::Running {
            self.life = Lifecycle::StdinClosed(now + SHUTDOWN_STEP);
        }
        self.flush(ring, now);
    }

    /// The next instant this connection needs [`on_timer`](Self::on_timer).
    pub(crate) fn next_deadline(&mut self) -> Option<Instant> {
        let phase = match self.life {
            Lifecycle::StdinClosed(t) | Lifecycle::Terminated(t) => Some(t),
            _ => None,
        };
        let session = self.pump.session.poll_timeout();
        [session, self.close_at.as_ref().map(|c| c.0), phase, self.lane_by]
            .into_iter()
            .flatten()
            .min()
    }

    pub(crate) fn on_timer(&mut self, ring: &mut Ring, now: Instant) {
        if self.lane_by.is_some_and(|by| by <= now) {
            // Unused until it expired: the server is idle; lend again at its next request.
            self.withdraw_loan(Some(now));
            self.lending = false;
        }
        self.pump.session.handle_timeout(now);
        if let Some((at, reason)) = self.close_at.take_if(|(at, _)| *at <= now) {
            let _ = at;
            self.close_session(reason);
            if self.life == Lifecycle::Running && self.stdin.is_none() {
                // It closed its stdin but lives on: a server that cannot be talked to.
                self.begin_shutdown(ring, now);
            }
            if self.exited().is_some() {
                // Exited, but something still holds its pipes open: stop reading them.
                let _ = ring.cancel(self.tag(Op::Stdout));
                let _ = ring.cancel(self.tag(Op::Stderr));
            }
        }
        match self.life {
            Lifecycle::StdinClosed(at) if at <= now => {
                tracing::debug!(
                    server = self.name(),
                    "did not exit after stdin closed; sending SIGTERM"
                );
                let _ = signal_group(self.child.id(), Signal::Term);
                self.life = Lifecycle::Terminated(now + SHUTDOWN_STEP);
            }
            Lifecycle::Terminated(at) if at <= now => {
                tracing::debug!(
                    server = self.name(),
                    "did not exit after SIGTERM; sending SIGKILL"
                );
                let _ = signal_group(self.child.id(), Signal::Kill);
                self.life = Lifecycle::Killed;
            }
            _ => {}
        }
        self.flush(ring, now);
    }

    /// True once the process is reaped and no operation of ours is in flight.
    pub(crate) fn finished(&self) -> bool {
        self.exited().is_some()
            && !self.armed.stdout
            && !self.armed.stderr
            && !self.armed.stdin
            && !self.armed.exit
            && self.inbound.is_drained()
    }

    /// Final bookkeeping when the connection is removed.
    pub(crate) fn close(mut self) {
        let reason = self.exited().cloned().unwrap_or(CloseReason::Shutdown);
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
            stdout_bytes: self.inbound.stdout_bytes,
            stderr_bytes: self.stderr_log.total(),
            stderr_tail: self.stderr_log.tail(),
            events_dropped: self.pump.events_dropped(),
            frames_offloaded: self.inbound.frames_offloaded,
            answers_spilled: self.inbound.answers_spilled,
            direct_writes: self.direct_writes,
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
