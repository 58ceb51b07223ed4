//! The reactor loop: one thread, one io_uring, every server.
//!
//! Callers never touch the ring. They send a [`ReactorCommand`] over a channel and signal an eventfd
//! on which the reactor always keeps a read armed; the reactor then drains the channel. Every
//! server's stdout and stderr always have a read armed and its pidfd a poll, whatever callers
//! do, so a server never blocks on a full pipe. The only wait is `io_uring_enter`, bounded by
//! the earliest deadline of any server: idle servers cost nothing.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::Instant;

use futures_channel::oneshot;

use crate::parse::pool::{ParsePool, Parsed};
use crate::protocol::{CloseReason, RequestError, ServerDetails, Session, SessionConfig};
use crate::queue::{ReadyList, RequestQueue};
use crate::uring::{Buffer, Completion, Ring, sys};

use super::request::{QueuedRequest, ServerId};

use super::config::ServerSpec;
use super::conn::{Conn, ConnParts, Op, OpTag};
use super::error::Error;
use super::events::EventSink;
use super::lane::{Handed, Handoff, Handoffs};
use super::pump::ServerCommand;

/// The tag of the eventfd read: its low bits (7) name no [`Op`], so no server operation's
/// [`OpTag`] is ever equal to it.
const WAKE: u64 = 7;

/// A control message from a caller thread to the reactor (requests go through the queues).
pub(crate) enum ReactorCommand {
    /// A process the spawner thread started (or failed to), to connect.
    Spawn {
        id: ServerId,
        spec: Box<ServerSpec>,
        spawned: Box<Result<crate::sandbox::Spawned, crate::sandbox::SpawnError>>,
        queue: Arc<RequestQueue<QueuedRequest>>,
        events: EventSink,
        reply: oneshot::Sender<Result<ServerDetails, Error>>,
        /// The handler of this server's requests, when it is not the host's own (the host's
        /// behind the server's gate).
        handler: Option<Arc<dyn super::handler::ClientHandler>>,
        lane: Option<Arc<super::lane::Lane>>,
    },
    /// A command for server `id`.
    Server { id: ServerId, command: ServerCommand },
    /// Shut every server down, then end the thread.
    Stop,
}

/// Settings the reactor applies to every server.
#[derive(Debug, Clone)]
pub(crate) struct DriverConfig {
    pub(crate) session: SessionConfig,
    pub(crate) stderr_capacity: usize,
    pub(crate) read_size: usize,
    pub(crate) pipe_size: usize,
    pub(crate) offload_threshold: usize,
    pub(crate) spill: Option<(super::SpillConfig, Arc<crate::spill::store::SpillStore>)>,
    /// Whether spilled text is scanned for injections and credentials as it streams (the
    /// host has a policy).
    pub(crate) scan_content: bool,
    /// The application's answers to server→client requests.
    pub(crate) handler: Option<super::handler::HandlerSlot>,
}

/// Frames parsed off the reactor thread, waiting to be delivered in order.
pub(crate) type ParsedQueue = crossbeam_queue::SegQueue<Parsed>;

pub(crate) struct Driver {
    ring: Ring,
    conns: HashMap<ServerId, Conn>,
    commands: Receiver<ReactorCommand>,
    ready: Arc<ReadyList<QueuedRequest>>,
    parsed: Arc<ParsedQueue>,
    pool: Option<ParsePool>,
    wake: Arc<OwnedFd>,
    /// Callers' direct writes (lane.rs), drained before any completion is read.
    handoffs: Arc<Handoffs>,
    /// Servers finished this turn, removed at its end, after a last drain of the hand-offs
    /// (a request a caller wrote just before the lane closed still hears why it failed).
    finished: Vec<ServerId>,
    /// Min-heap of (deadline, server id); stale entries are skipped when popped.
    timers: BinaryHeap<Reverse<(Instant, ServerId)>>,
    config: DriverConfig,
    stopping: bool,
    completions: Vec<Completion>,
    /// The host's own memory limit, when it has one and answers can be spilled.
    memory: Option<super::memory::MemoryWatch>,
}

impl Driver {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        ring: Ring,
        commands: Receiver<ReactorCommand>,
        ready: Arc<ReadyList<QueuedRequest>>,
        parsed: Arc<ParsedQueue>,
        pool: Option<ParsePool>,
        wake: Arc<OwnedFd>,
        handoffs: Arc<Handoffs>,
        config: DriverConfig,
    ) -> Driver {
        Driver {
            ring,
            conns: HashMap::new(),
            commands,
            ready,
            parsed,
            pool,
            wake,
            handoffs,
            finished: Vec::new(),
            timers: BinaryHeap::new(),
            memory: config
                .spill
                .as_ref()
                .and_then(|_| super::memory::MemoryWatch::of_this_process()),
            config,
            stopping: false,
            completions: Vec::new(),
        }
    }

    /// Runs until [`ReactorCommand::Stop`] (or every sender is gone) and every server has ended.
    pub(crate) fn run(mut self) {
        sys::block_sigpipe_on_this_thread();
        if !self.arm_wake() {
            return;
        }
        let mut now = Instant::now();
        self.drain_commands(now);
        while !self.done() {
            let timeout = self.next_deadline().map(|d| d.saturating_duration_since(now));
            if let Err(e) = self.ring.submit_and_wait(timeout) {
                tracing::error!("io_uring_enter failed; stopping the reactor: {e}");
                break;
            }
            now = Instant::now();
            self.turn(now);
        }
        self.close_all();
    }

    /// [`run`](Self::run) as a task of the current thread's tokio runtime, on a ring built
    /// [`pollable`](Ring::pollable) on this thread: it waits for the ring's fd to be readable
    /// (or the next deadline) with the runtime's other tasks, so the answers it delivers wake
    /// tasks of this same thread (docs/host.md, "A reactor hosted on the caller's thread").
    pub(crate) async fn run_hosted(mut self) {
        sys::block_sigpipe_on_this_thread();
        if !self.arm_wake() {
            return;
        }
        let readiness = match self.ring.readiness() {
            Ok(readiness) => readiness,
            Err(e) => {
                tracing::error!("watching the reactor's ring: {e}");
                self.close_all();
                return;
            }
        };
        let mut now = Instant::now();
        self.drain_commands(now);
        let reap = |ring: &mut Ring| {
            let reaped = ring.submit_and_wait(Some(std::time::Duration::ZERO));
            if let Err(e) = &reaped {
                tracing::error!("io_uring_enter failed; stopping the reactor: {e}");
            }
            reaped.is_ok()
        };
        while !self.done() {
            if !reap(&mut self.ring) {
                break;
            }
            now = Instant::now();
            self.turn(now);
            if self.done() {
                break;
            }
            // What the turn queued goes out now; what completed meanwhile is handled at once.
            if !reap(&mut self.ring) {
                break;
            }
            if self.ring.has_ready() {
                // Handled at once, but after the runtime's other tasks had their turn: a
                // server that keeps writing must not hold the thread's session back.
                tokio::task::yield_now().await;
                continue;
            }
            // Cleared before the next reap (at the top), so a completion after it is not lost.
            let deadline = self.next_deadline().map(tokio::time::Instant::from_std);
            tokio::select! {
                ready = readiness.wait() => if let Err(e) = ready {
                    tracing::error!("waiting on the reactor's ring: {e}");
                    break;
                },
                () = async {
                    match deadline {
                        Some(at) => tokio::time::sleep_until(at).await,
                        None => std::future::pending().await,
                    }
                } => {}
            }
        }
        self.close_all();
    }

    /// Arms the read of the wake-up eventfd; `false` when it cannot be.
    fn arm_wake(&mut self) -> bool {
        if let Err(e) = self.ring.read(&self.wake.clone(), Vec::with_capacity(8), WAKE) {
            tracing::error!("arming the reactor's wake-up read: {e}");
            return false;
        }
        true
    }

    /// Stopping, and every server gone.
    fn done(&self) -> bool {
        self.stopping && self.conns.is_empty()
    }

    /// What one wake-up does, after the ring reaped its completions.
    fn turn(&mut self, now: Instant) {
        // Before the completions: a request a caller wrote is known before its answer.
        self.drain_handoffs(now);
        let mut completions = std::mem::take(&mut self.completions);
        completions.extend(self.ring.drain());
        for c in completions.drain(..) {
            self.on_completion(c, now);
        }
        self.completions = completions;
        self.fire_timers(now);
        // A loan the timers found taken: its request was handed off since the drain above.
        self.drain_handoffs(now);
        self.reap_finished();
        self.watch_memory(now);
    }

    /// Whatever is left (the reactor failed): make sure no caller waits forever.
    fn close_all(&mut self) {
        for (_, conn) in self.conns.drain() {
            conn.close();
        }
    }

    /// Short of memory (its cgroup's limit nearly reached), or no longer: every server's
    /// answers past [`PRESSED_THRESHOLD`](super::memory::PRESSED_THRESHOLD) are spilled
    /// meanwhile instead of held.
    fn watch_memory(&mut self, now: Instant) {
        let Some(pressed) = self.memory.as_mut().and_then(|m| m.poll(now)) else { return };
        let limit = self.memory.as_ref().map_or(0, |m| m.limit() >> 20);
        if pressed {
            tracing::warn!(
                "the host's memory is short (over half of its cgroup's {limit} MiB): answers over 64 KiB are spilled until it recovers"
            );
        } else {
            tracing::info!(
                "the host's memory recovered: answers are spilled past the usual threshold again"
            );
        }
        for conn in self.conns.values_mut() {
            conn.memory_pressed(pressed);
        }
    }

    /// The earliest live timer. Each server has at most one live entry (its `timer_at`);
    /// entries it superseded with an earlier one are stale and dropped here.
    fn next_deadline(&mut self) -> Option<Instant> {
        while let Some(&Reverse((at, id))) = self.timers.peek() {
            if self.conns.get(&id).is_some_and(|c| c.timer_at == Some(at)) {
                return Some(at);
            }
            self.timers.pop();
        }
        None
    }

    fn fire_timers(&mut self, now: Instant) {
        while let Some(&Reverse((at, id))) = self.timers.peek() {
            if at > now {
                break;
            }
            self.timers.pop();
            let Some(conn) = self.conns.get_mut(&id) else { continue };
            if conn.timer_at != Some(at) {
                continue; // superseded
            }
            conn.timer_at = None;
            if conn.next_deadline().is_some_and(|d| d <= now) {
                conn.on_timer(&mut self.ring, now);
            }
            self.after(id);
        }
    }

    /// Book-keeping after a connection was touched: re-arm its timer; once it is finished,
    /// close its lane and remove it at the end of this turn.
    fn after(&mut self, id: ServerId) {
        let Some(conn) = self.conns.get_mut(&id) else { return };
        if conn.finished() {
            conn.close_lane();
            if !self.finished.contains(&id) {
                self.finished.push(id);
            }
            return;
        }
        // Register the next deadline only if it is earlier than the live entry: a later one is
        // picked up when that entry fires. So the heap holds about one entry per server, not
        // one per request.
        if let Some(at) = conn.next_deadline()
            && conn.timer_at.is_none_or(|live| at < live)
        {
            conn.timer_at = Some(at);
            self.timers.push(Reverse((at, id)));
        }
    }

    fn on_completion(&mut self, c: Completion, now: Instant) {
        if c.tag == WAKE {
            self.drain_commands(now);
            self.drain_ready(now);
            self.drain_parsed(now);
            self.drain_answers(now);
            let buf = match c.buffer {
                Buffer::Read(buf) => buf,
                _ => Vec::with_capacity(8),
            };
            if let Err(e) = self.ring.read(&self.wake.clone(), buf, WAKE) {
                tracing::error!("re-arming the reactor's wake-up read: {e}");
            }
            return;
        }
        let Some(OpTag { server: id, op }) = OpTag::decode(c.tag) else {
            tracing::error!(tag = c.tag, "a completion with a tag no server operation has");
            return;
        };
        let Some(conn) = self.conns.get_mut(&id) else {
            // Cannot happen (a server is removed only once its operations are done), but a
            // shared buffer must never be lost: give it back.
            if let Buffer::Provided { bid, .. } = c.buffer {
                self.ring.recycle(bid);
            }
            tracing::error!(tag = c.tag, "completion for an unknown server");
            return;
        };
        let ring = &mut self.ring;
        match op {
            Op::Stdout => conn.on_stdout(ring, self.pool.as_ref(), c, now),
            Op::Stderr => conn.on_stderr(ring, c),
            Op::Stdin => match c.buffer {
                Buffer::Write(data) => conn.on_stdin(ring, c.result, data, now),
                _ => tracing::error!("stdin completion without its data"),
            },
            Op::Exit => conn.on_exit(ring, c.result, now),
        }
        self.after(id);
    }

    fn drain_commands(&mut self, now: Instant) {
        loop {
            match self.commands.try_recv() {
                Ok(command) => self.on_command(command, now),
                Err(TryRecvError::Empty) => return,
                Err(TryRecvError::Disconnected) => {
                    self.stop(now);
                    return;
                }
            }
        }
    }

    /// Removes the servers that finished this turn. Their lanes closed first, so no hand-off
    /// can be for them after the drain that precedes this.
    fn reap_finished(&mut self) {
        for id in std::mem::take(&mut self.finished) {
            if let Some(conn) = self.conns.remove(&id) {
                tracing::debug!(server = conn.name(), "server finished");
                conn.close();
            }
        }
    }

    /// Takes in the requests callers wrote themselves, and the rests of their writes.
    fn drain_handoffs(&mut self, now: Instant) {
        while let Some(Handoff { server, what }) = self.handoffs.pop() {
            match self.conns.get_mut(&server) {
                Some(conn) => {
                    conn.handed(&mut self.ring, what, now);
                    self.after(server);
                }
                None => {
                    if let Handed::Sent { reply, .. } = what {
                        reply.send(Err(RequestError::Closed(CloseReason::Shutdown)));
                    }
                }
            }
        }
    }

    /// Sends the application's answers to server requests.
    fn drain_answers(&mut self, now: Instant) {
        let Some(slot) = &self.config.handler else { return };
        let answers = slot.answers.clone();
        while let Some(a) = answers.pop() {
            let id = a.conn;
            if let Some(conn) = self.conns.get_mut(&id) {
                conn.respond(&mut self.ring, &a.id, a.outcome, now);
                self.after(id);
            }
        }
    }

    /// Delivers frames that came back from the parse pool.
    fn drain_parsed(&mut self, now: Instant) {
        while let Some(parsed) = self.parsed.pop() {
            let id = ServerId::new(parsed.conn);
            if let Some(conn) = self.conns.get_mut(&id) {
                conn.on_parsed(&mut self.ring, parsed, now);
                self.after(id);
            }
        }
    }

    /// Moves requests from every scheduled queue into their sessions.
    fn drain_ready(&mut self, now: Instant) {
        while let Some(queue) = self.ready.pop() {
            let id = ServerId::new(queue.id());
            match self.conns.get_mut(&id) {
                Some(conn) => {
                    for request in queue.drain() {
                        conn.request(request, now);
                    }
                    conn.flush(&mut self.ring, now);
                    self.after(id);
                }
                None => {
                    let reason = queue.closed().cloned().unwrap_or(CloseReason::Shutdown);
                    for request in queue.drain() {
                        request.reply.send(Err(RequestError::Closed(reason.clone())));
                    }
                }
            }
        }
    }

    fn stop(&mut self, now: Instant) {
        if self.stopping {
            return;
        }
        self.stopping = true;
        let ids: Vec<ServerId> = self.conns.keys().copied().collect();
        for id in ids {
            if let Some(conn) = self.conns.get_mut(&id) {
                conn.begin_shutdown(&mut self.ring, now);
            }
            self.after(id);
        }
    }

    fn on_command(&mut self, command: ReactorCommand, now: Instant) {
        match command {
            ReactorCommand::Spawn { id, spec, spawned, queue, events, reply, handler, lane } => {
                self.spawn(id, *spec, *spawned, queue, events, reply, handler, lane, now);
            }
            ReactorCommand::Server { id, command } => match self.conns.get_mut(&id) {
                Some(conn) => {
                    conn.command(&mut self.ring, command, now);
                    self.after(id);
                }
                // Gone already: a waiter for its end hears at once.
                None => {
                    if let ServerCommand::Shutdown { reply: Some(reply) } = command {
                        let _ = reply.send(CloseReason::Shutdown);
                    }
                }
            },
            ReactorCommand::Stop => self.stop(now),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn spawn(
        &mut self,
        id: ServerId,
        spec: ServerSpec,
        spawned: Result<crate::sandbox::Spawned, crate::sandbox::SpawnError>,
        queue: Arc<RequestQueue<QueuedRequest>>,
        events: EventSink,
        reply: oneshot::Sender<Result<ServerDetails, Error>>,
        handler: Option<Arc<dyn super::handler::ClientHandler>>,
        lane: Option<Arc<super::lane::Lane>>,
        now: Instant,
    ) {
        let name: Arc<str> = spec.name.as_str().into();
        if self.stopping {
            if let Ok(mut s) = spawned {
                let _ = crate::sandbox::signal_group(s.child.id(), crate::sandbox::Signal::Kill);
                let _ = s.child.wait();
            }
            queue.close(CloseReason::Shutdown);
            let source = RequestError::Closed(CloseReason::Shutdown);
            let _ = reply.send(Err(Error::Server { server: name, source }));
            return;
        }
        let spawned = match spawned {
            Ok(s) => s,
            Err(source) => {
                queue.close(CloseReason::io(source.to_string()));
                let _ = reply.send(Err(Error::Spawn { server: name, source }));
                return;
            }
        };
        for (fd, what) in
            [(&spawned.stdout, "stdout"), (&spawned.stderr, "stderr"), (&spawned.stdin, "stdin")]
        {
            if let Err(e) = sys::set_pipe_size(fd, self.config.pipe_size) {
                tracing::debug!(
                    server = &*name,
                    "F_SETPIPE_SZ({}) on {what}: {e}",
                    self.config.pipe_size
                );
            }
        }
        let mut session_config = self.config.session.clone();
        if let Some(t) = spec.request_timeout {
            session_config.request_timeout = t;
        }
        if let Some(era) = spec.era {
            session_config.era = era;
        }
        super::gate::scope_roots(&mut session_config, &spec);
        let parts = ConnParts {
            id,
            name: name.clone(),
            spawned,
            session: Session::new(session_config),
            max_frame: self.config.session.max_frame,
            stderr_capacity: self.config.stderr_capacity,
            read_size: self.config.read_size,
            offload_threshold: self.config.offload_threshold,
            spill: self.config.spill.as_ref().map(|(config, store)| super::inbound::SpillContext {
                store: store.clone(),
                // No line is held in memory past the frame limit: it is spilled instead.
                line_threshold: config.line_threshold.min(self.config.session.max_frame),
                string_threshold: config.string_threshold,
                scan_content: self.config.scan_content,
            }),
            queue,
            lane,
            events,
            init_reply: reply,
            handler: self.config.handler.clone().map(|mut slot| {
                if let Some(handler) = handler {
                    slot.handler = handler;
                }
                slot
            }),
        };
        match Conn::start(parts, &mut self.ring, now) {
            Ok(mut conn) => {
                if self.memory.as_ref().is_some_and(super::memory::MemoryWatch::pressed) {
                    conn.memory_pressed(true);
                }
                tracing::debug!(server = &*name, pid = conn.pid(), "server started");
                self.conns.insert(id, conn);
                self.after(id);
            }
            Err(e) => tracing::error!(server = &*name, "arming reads for a new server: {e}"),
        }
    }
}
