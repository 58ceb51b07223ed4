//! The event pump over one connection's [`Session`], shared by stdio connections (the
//! reactor's [`Conn`](super::conn::Conn)) and HTTP ones ([`remote`](super::remote)): callers'
//! requests in, completions, progress, notifications and alerts out, the commands every
//! connection handles the same way, and the end of the connection. What differs between the
//! two (moving bytes, answering the handshake, stopping) stays with each.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use futures_channel::oneshot;
use serde_json::Value;

use crate::jsonrpc::{ErrorObject, Id, codes};
use crate::protocol::{CloseReason, Event, RequestError, RequestId, ServerDetails, Session};
use crate::queue::{RateMeter, RequestQueue};

use super::error::Error;
use super::events::{Alert, EventSink, ServerEvent, alert_event, notification_event};
use super::request::{QueuedRequest, Reply};
use super::stats::ServerStats;

/// Who waits for a request's outcome.
#[derive(Debug)]
pub(crate) enum Completer {
    /// The handshake (`initialize` or `server/discover`): completes the spawn.
    Init,
    /// A caller's request.
    Caller(Reply),
}

/// A command from a client to its server's connection (requests go through the queues).
pub(crate) enum ServerCommand {
    /// Send a notification.
    Notify { method: Box<str>, params: Option<Value> },
    /// The caller of request `seq` stopped waiting (dropped its future).
    Cancel { seq: u64 },
    /// New roots (sent on with `notifications/roots/list_changed`).
    SetRoots { roots: Vec<crate::protocol::Root> },
    /// 2026-07-28: (re)open `subscriptions/listen` with this filter.
    Listen { filter: crate::protocol::ListenFilter },
    /// The connection's counters.
    Stats { reply: oneshot::Sender<ServerStats> },
    /// Stop the server; `reply` hears how it ended.
    Shutdown { reply: Option<oneshot::Sender<CloseReason>> },
}

impl ServerCommand {
    /// Whether the server must see this command's effect before any request sent after it
    /// (a notification, roots, a listen filter, the shutdown): the client holds its lane until
    /// the reactor has carried it out (lane.rs). Stats and cancels need no order.
    pub(crate) fn ordered(&self) -> bool {
        !matches!(self, ServerCommand::Stats { .. } | ServerCommand::Cancel { .. })
    }
}

/// The commands only the connection itself can carry out.
pub(crate) enum Control {
    Stats(oneshot::Sender<ServerStats>),
    Shutdown(Option<oneshot::Sender<CloseReason>>),
}

/// Hands a server→client request the session delegates to the application's handler (each
/// connection gets the answer back its own way); `None`: no handler, the request gets -32601.
pub(crate) type Delegate = Box<dyn FnMut(Arc<str>, Id, String, Option<Value>) + Send>;

/// Callers' requests in flight in one session: for cancelling by the client's sequence number
/// and routing progress by session id.
#[derive(Default)]
struct CallTable {
    /// The session id of each request, by the client's sequence number.
    in_flight: HashMap<u64, RequestId>,
    /// Progress streams, by session id.
    progress: HashMap<RequestId, async_channel::Sender<crate::protocol::Progress>>,
}

/// One connection's session and everything around it that does not depend on the transport.
pub(crate) struct Pump {
    pub(crate) name: Arc<str>,
    pub(crate) session: Session<Completer>,
    calls: CallTable,
    queue: Arc<RequestQueue<QueuedRequest>>,
    meter: RateMeter,
    events: EventSink,
    events_dropped: u64,
    /// Updates seen per resource URI (for [`ServerEvent::ResourceUpdated`]'s `seq`).
    updates: HashMap<String, u64>,
    delegate: Option<Delegate>,
    /// `spawn`'s answer, until the handshake ends.
    pub(crate) init_reply: Option<oneshot::Sender<Result<ServerDetails, Error>>>,
    shutdown_waiters: Vec<oneshot::Sender<CloseReason>>,
}

impl Pump {
    pub(crate) fn new(
        name: Arc<str>,
        session: Session<Completer>,
        queue: Arc<RequestQueue<QueuedRequest>>,
        events: EventSink,
        delegate: Option<Delegate>,
        init_reply: oneshot::Sender<Result<ServerDetails, Error>>,
    ) -> Pump {
        Pump {
            name,
            session,
            calls: CallTable::default(),
            queue,
            meter: RateMeter::new(),
            events,
            events_dropped: 0,
            updates: HashMap::new(),
            delegate,
            init_reply: Some(init_reply),
            shutdown_waiters: Vec::new(),
        }
    }

    /// Starts the handshake.
    pub(crate) fn handshake(&mut self, now: Instant) {
        self.session.handshake(now, Completer::Init);
    }

    /// Hands a caller's request to the session (never sent if its caller already left).
    pub(crate) fn submit(&mut self, request: QueuedRequest, now: Instant) {
        let QueuedRequest { method, params, timeout, reply, progress } = request;
        if reply.tx.is_canceled() {
            return; // Its caller stopped waiting while it was queued: never sent.
        }
        let seq = reply.seq;
        let (params, token) = (params.as_deref(), Completer::Caller(reply));
        let sent = match &progress {
            Some(_) => self.session.request_with_progress(&method, params, now, timeout, token),
            None => self.session.request(&method, params, now, timeout, token),
        };
        match sent {
            Ok(id) => {
                self.calls.in_flight.insert(seq, id);
                if let Some(sink) = progress {
                    self.calls.progress.insert(id, sink);
                }
            }
            Err((Completer::Caller(reply), error)) => reply.send(Err(error)),
            Err((Completer::Init, _)) => unreachable!("only callers' requests are queued"),
        }
    }

    /// Enters a request its caller wrote itself under a lent id (see lane.rs).
    pub(crate) fn adopt(
        &mut self,
        id: RequestId,
        method: &str,
        line: bytes::Bytes,
        sent: Instant,
        timeout: Option<std::time::Duration>,
        reply: Reply,
    ) {
        let seq = reply.seq;
        match self.session.adopt(id, method, line, sent, timeout, Completer::Caller(reply)) {
            Ok(()) => {
                self.calls.in_flight.insert(seq, id);
            }
            Err((Completer::Caller(reply), error)) => reply.send(Err(error)),
            Err((Completer::Init, _)) => unreachable!("only callers' requests are lent ids"),
        }
    }

    /// Hands every request waiting in the queue to the session.
    pub(crate) fn drain_queue(&mut self, now: Instant) {
        let queue = self.queue.clone();
        for request in queue.drain() {
            self.submit(request, now);
        }
    }

    /// Carries out a command; hands back what only the connection can do.
    pub(crate) fn apply(&mut self, command: ServerCommand, now: Instant) -> Option<Control> {
        match command {
            ServerCommand::Notify { method, params } => self.session.notify(&method, params),
            ServerCommand::Cancel { seq } => self.cancel(seq),
            ServerCommand::SetRoots { roots } => self.session.set_roots(roots),
            ServerCommand::Listen { filter } => self.session.listen(filter, now),
            ServerCommand::Stats { reply } => return Some(Control::Stats(reply)),
            ServerCommand::Shutdown { reply } => return Some(Control::Shutdown(reply)),
        }
        None
    }

    /// The caller of request `seq` dropped its future: the server is told to stop
    /// (`notifications/cancelled`) and a late answer is discarded and counted.
    fn cancel(&mut self, seq: u64) {
        if let Some(id) = self.calls.in_flight.remove(&seq) {
            self.calls.progress.remove(&id);
            drop(self.session.cancel(id, "the caller stopped waiting"));
        }
    }

    /// Delivers the session's events: completions to their callers, progress to its streams,
    /// notifications and alerts to the event stream, delegated server requests to the
    /// handler. Returns the handshake's outcome when it ended (`Ok`: the session is active).
    pub(crate) fn deliver(&mut self, now: Instant) -> Option<Result<ServerDetails, RequestError>> {
        let mut handshake = None;
        while let Some(event) = self.session.poll_event() {
            match event {
                Event::Completed { token: Completer::Caller(reply), outcome } => {
                    if let Some(id) = self.calls.in_flight.remove(&reply.seq) {
                        self.calls.progress.remove(&id);
                    }
                    self.queue.record_completion(&mut self.meter, now);
                    reply.send(outcome);
                }
                Event::Completed { token: Completer::Init, outcome } => {
                    handshake = Some(match (outcome, self.session.server()) {
                        (Ok(_), Some(details)) => Ok(details.clone()),
                        (Ok(_), None) => Err(RequestError::NotInitialized),
                        (Err(e), _) => Err(e),
                    });
                }
                // Only what the session delegates (a declared feature) comes here.
                Event::ServerRequest { id, method, params } => match &mut self.delegate {
                    Some(delegate) => delegate(self.name.clone(), id, method, params),
                    None => {
                        let msg = format!("Method not found: {method}");
                        let error = ErrorObject::new(codes::METHOD_NOT_FOUND, msg);
                        self.session.respond(&id, Err(error), now);
                    }
                },
                // A full stream drops the update: progress is advisory, never a reason to
                // stall a connection.
                Event::Progress { id, progress } => {
                    if let Some(sink) = self.calls.progress.get(&id) {
                        let _ = sink.try_send(progress);
                    }
                }
                Event::Notification(n) => {
                    let event = notification_event(&self.name, &mut self.updates, n);
                    self.emit(event);
                }
                Event::Violation(v) => self.emit(alert_event(&self.name, Alert::Violation(v))),
                Event::Unresponsive { silent_for } => {
                    self.emit(alert_event(&self.name, Alert::Unresponsive(silent_for)));
                }
            }
        }
        handshake
    }

    /// Sends an event to the application; a full stream drops it and counts the loss.
    pub(crate) fn emit(&mut self, event: ServerEvent) {
        if self.events.try_send(event).is_err() && !self.events.is_closed() {
            self.events_dropped += 1;
            if self.events_dropped.is_power_of_two() {
                tracing::warn!(
                    server = &*self.name,
                    dropped = self.events_dropped,
                    "event stream full; dropping events"
                );
            }
        }
    }

    /// Events dropped because the event stream was full.
    pub(crate) fn events_dropped(&self) -> u64 {
        self.events_dropped
    }

    /// Registers a waiter for the end of the connection.
    pub(crate) fn on_finished(&mut self, reply: oneshot::Sender<CloseReason>) {
        self.shutdown_waiters.push(reply);
    }

    /// The connection is ending: no request is admitted from now on (those in flight fail
    /// next), so that a caller told that its request failed finds the server closed (and, if
    /// it is supervised, being restarted), never a connection that takes requests only to
    /// fail them.
    pub(crate) fn refuse_new(&self, reason: &CloseReason) {
        self.queue.close(reason.clone());
    }

    /// The connection is over: queued and pending requests fail with `reason`, and a
    /// handshake still under way fails with the error `failed` makes of it.
    pub(crate) fn close_session(
        &mut self,
        reason: &CloseReason,
        now: Instant,
        failed: impl FnOnce(RequestError) -> Error,
    ) {
        self.queue.close(reason.clone());
        self.session.handle_closed(reason.clone());
        let handshake = self.deliver(now);
        if let Some(reply) = self.init_reply.take() {
            let error = match handshake {
                Some(Err(e)) => e,
                _ => RequestError::Closed(reason.clone()),
            };
            let _ = reply.send(Err(failed(error)));
        }
    }

    /// The connection's last act: the event stream ends with [`ServerEvent::Closed`], and
    /// every waiter hears the reason.
    pub(crate) fn closed(&mut self, reason: &CloseReason) {
        self.emit(ServerEvent::Closed(reason.clone()));
        for waiter in self.shutdown_waiters.drain(..) {
            let _ = waiter.send(reason.clone());
        }
    }
}
