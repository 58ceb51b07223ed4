//! The direct write: a caller writes its request line to the server's stdin itself, on its
//! own thread, instead of handing it to the reactor and waking it (docs/host.md, "The direct
//! write"). A call at c = 1 then wakes the server, then the reactor (its answer), then the
//! caller: one wake-up fewer than through the queue.
//!
//! The lane is open only while the server is idle (no request in flight), the reactor has
//! nothing to write (no write in flight, none queued) and the session has lent it an id
//! ([`Loan`]). A caller takes the loan, hands the
//! request to the reactor *before* writing it ([`Handed::Sent`], on a queue the reactor
//! drains at every wake-up before it reads any completion, so no answer can arrive for a
//! request it does not know), then writes without blocking. What does not fit goes to the
//! reactor ([`Handed::Rest`], with a wake-up), which writes it before anything else. Every
//! other request takes the queue, as before: one in flight on the lane already, a progress
//! stream, a deadline earlier than the reactor's next wake-up, a method the session shapes.
//! Under load the queue is the better road: it batches many requests into one write.
//!
//! Writers never interleave: a caller marks the lane as its own under the lane's lock, then
//! writes without it (the write wakes the server, which may take this core at once; the
//! reactor must not wait on the lock for the caller to be scheduled again); the reactor claims
//! the lane ([`Lane::claim`]) before it submits a write, and waits for a caller's
//! [`Handed::Rest`] if one is writing.

use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use crossbeam_queue::SegQueue;
use serde_json::value::RawValue;

use crate::protocol::{Loan, RequestId};
use crate::uring::sys;

use super::request::{Reply, ServerId};

/// Requests written by callers and leftovers of their writes, for the reactor; drained at
/// every wake-up before any completion.
pub(crate) type Handoffs = SegQueue<Handoff>;

/// One hand-off from a caller to the reactor.
pub(crate) struct Handoff {
    pub(crate) server: ServerId,
    pub(crate) what: Handed,
}

pub(crate) enum Handed {
    /// A request the caller wrote (or is about to write) under a lent id.
    Sent {
        id: RequestId,
        method: Box<str>,
        line: Bytes,
        sent: Instant,
        timeout: Option<Duration>,
        reply: Reply,
    },
    /// What did not fit in the pipe of a caller's write, to be written before anything else;
    /// empty when the whole line went in but the reactor waited to write meanwhile.
    Rest(Bytes),
}

/// Who may write to stdin now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Writer {
    /// Nobody is writing and nothing is queued: a caller with the loan may.
    Idle,
    /// The reactor has a write in flight or queued.
    Reactor,
    /// A caller is writing (without the lock).
    Caller,
    /// A caller's write did not fit, or the reactor waited for it to end: the rest (maybe
    /// none) is on its way to the reactor, and goes first.
    Rest,
}

struct State {
    /// The write end of the server's stdin, until the reactor closes it (shutdown, EPIPE).
    stdin: Option<Arc<OwnedFd>>,
    /// The id the next direct request takes, and the instant the reactor wakes up by
    /// (every direct request's deadline must be at or after it, or nobody would time it out).
    loan: Option<(Loan, Instant)>,
    writer: Writer,
    /// The reactor has bytes to write and waits for a caller's write to end.
    reactor_waits: bool,
    /// Commands the client sent that the reactor has not carried out yet: no loan until then
    /// (a request sent after one must not overtake it).
    held: u32,
}

/// One stdio server's lane, shared by its client and its connection on the reactor.
pub(crate) struct Lane {
    server: ServerId,
    state: Mutex<State>,
    /// Whether a caller may find the lane open (a loan out, nobody writing): read without
    /// the lock, so that callers of a busy server do not contend for it; the lock decides.
    open: AtomicBool,
    handoffs: Arc<Handoffs>,
    wake: Arc<OwnedFd>,
}

impl std::fmt::Debug for Lane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lane").field("server", &self.server).finish_non_exhaustive()
    }
}

impl Lane {
    /// A closed lane, opened by the reactor once the server runs and its session is active.
    pub(crate) fn new(server: ServerId, handoffs: Arc<Handoffs>, wake: Arc<OwnedFd>) -> Lane {
        let state = State {
            stdin: None,
            loan: None,
            writer: Writer::Reactor,
            reactor_waits: false,
            held: 0,
        };
        Lane { server, state: Mutex::new(state), open: AtomicBool::new(false), handoffs, wake }
    }

    fn lock(&self) -> Guard<'_> {
        Guard { state: self.state.lock().unwrap_or_else(PoisonError::into_inner), open: &self.open }
    }

    /// Writes the request on the caller's thread when the lane is open; otherwise hands the
    /// reply back, for the queue.
    pub(crate) fn try_send(
        &self,
        method: &str,
        params: Option<&RawValue>,
        timeout: Option<Duration>,
        reply: Reply,
    ) -> Result<(), Reply> {
        // Relaxed: a stale answer only sends this request the other way.
        if !self.open.load(Ordering::Relaxed) {
            return Err(reply);
        }
        let mut state = self.lock();
        let State { stdin: Some(stdin), loan: Some((loan, wake_by)), writer: Writer::Idle, .. } =
            &*state
        else {
            return Err(reply);
        };
        let sent = Instant::now();
        if sent + timeout.unwrap_or(loan.default_timeout) < *wake_by {
            return Err(reply);
        }
        let Some(line) = loan.encode(method, params) else { return Err(reply) };
        let (id, stdin) = (loan.id, stdin.clone());
        state.loan = None;
        state.writer = Writer::Caller;
        // Before the write: the answer can come back as soon as the bytes are in the pipe.
        let handed =
            Handed::Sent { id, method: method.into(), line: line.clone(), sent, timeout, reply };
        self.handoffs.push(Handoff { server: self.server, what: handed });
        // Not under the lock: the write wakes the server, which may run on this core at once;
        // the reactor must not wait for this thread to be scheduled again.
        drop(state);
        let written = sys::write_nowait(&*stdin, &line);
        let mut state = self.lock();
        let written = match written {
            Ok(n) => n,
            Err(e) => {
                if e.raw_os_error() == Some(libc::EOPNOTSUPP) {
                    // This kernel cannot write to a pipe without blocking: no direct writes.
                    tracing::debug!("RWF_NOWAIT on a pipe is not supported: direct writes off");
                    state.stdin = None;
                    state.loan = None;
                }
                0
            }
        };
        if written == line.len() && !state.reactor_waits {
            state.writer = Writer::Idle;
            return Ok(());
        }
        // The rest of the line (none if the reactor only waits to write) goes first.
        state.writer = Writer::Rest;
        state.reactor_waits = false;
        let rest = Handed::Rest(line.slice(written..));
        self.handoffs.push(Handoff { server: self.server, what: rest });
        drop(state);
        sys::eventfd_signal(&*self.wake);
        Ok(())
    }

    /// The reactor is about to write: false while a caller writes or its rest is on its
    /// way (the reactor's bytes wait in its queue until [`Handed::Rest`] comes).
    pub(crate) fn claim(&self) -> bool {
        let mut state = self.lock();
        match state.writer {
            Writer::Caller => {
                state.reactor_waits = true;
                false
            }
            Writer::Rest => false,
            Writer::Idle | Writer::Reactor => {
                state.writer = Writer::Reactor;
                true
            }
        }
    }

    /// A caller's rest reached the reactor, which writes from now on.
    pub(crate) fn take_rest(&self) {
        self.lock().writer = Writer::Reactor;
    }

    /// The server's stdin, once it runs (before that, and after [`close`](Self::close), no
    /// caller writes).
    pub(crate) fn attach(&self, stdin: &Arc<OwnedFd>) {
        self.lock().stdin = Some(stdin.clone());
    }

    /// The reactor has nothing to write: callers may write again, under a new loan from
    /// `lend` if none is out. Returns the instant the reactor must wake up by.
    pub(crate) fn open(
        &self,
        lend: impl FnOnce() -> Option<Loan>,
        now: Instant,
    ) -> Option<Instant> {
        let mut state = self.lock();
        match state.writer {
            Writer::Rest => return None,
            // Its write ends with the lane open again: it finds the next loan there.
            Writer::Caller => {}
            Writer::Idle | Writer::Reactor => state.writer = Writer::Idle,
        }
        if state.loan.is_none() && state.stdin.is_some() && state.held == 0 {
            state.loan = lend().map(|loan| {
                let by = now + loan.default_timeout;
                (loan, by)
            });
        }
        state.loan.as_ref().map(|(_, by)| *by)
    }

    /// The instant the reactor must wake up by, while a loan is out.
    pub(crate) fn wake_by(&self) -> Option<Instant> {
        self.lock().loan.as_ref().map(|(_, by)| *by)
    }

    /// Takes back an unused loan: its deadline passed (an idle server then costs no
    /// wake-ups: the next request takes the queue, and the reactor lends again), or what it
    /// encodes changed (2026-07-28 `_meta`).
    pub(crate) fn withdraw(&self, now: Option<Instant>) {
        let mut state = self.lock();
        if state.loan.as_ref().is_some_and(|(_, by)| now.is_none_or(|now| *by <= now)) {
            state.loan = None;
        }
    }

    /// The client is sending a command that must reach the server before any later request:
    /// no loan until the reactor has carried it out ([`release`](Self::release)).
    pub(crate) fn hold(&self) {
        let mut state = self.lock();
        state.held += 1;
        state.loan = None;
    }

    /// The reactor carried out a command the client [`hold`](Self::hold)s the lane for.
    pub(crate) fn release(&self) {
        let mut state = self.lock();
        state.held = state.held.saturating_sub(1);
    }

    /// No direct write from now on: stdin is closing (or closed by the server).
    pub(crate) fn close(&self) {
        let mut state = self.lock();
        state.stdin = None;
        state.loan = None;
    }
}

/// The lane's lock; on release, the lock-free hint is brought up to date.
struct Guard<'a> {
    state: MutexGuard<'a, State>,
    open: &'a AtomicBool,
}

impl std::ops::Deref for Guard<'_> {
    type Target = State;
    fn deref(&self) -> &State {
        &self.state
    }
}

impl std::ops::DerefMut for Guard<'_> {
    fn deref_mut(&mut self) -> &mut State {
        &mut self.state
    }
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        let s = &*self.state;
        let open = s.writer == Writer::Idle && s.loan.is_some() && s.stdin.is_some();
        // Relaxed: the hint orders nothing; the lock does.
        self.open.store(open, Ordering::Relaxed);
    }
}
