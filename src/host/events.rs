//! What a server tells the host outside of answers: notifications, protocol violations, and
//! the end of the connection.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use crate::jsonrpc::Notification;
use crate::protocol::{CloseReason, Violation};

/// An event from one server, delivered on [`Client::events`](super::Client::events).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ServerEvent {
    /// A notification (`notifications/tools/list_changed`, `notifications/message`, ...).
    Notification(Notification),
    /// `notifications/resources/updated` for a subscribed resource. `seq` counts the updates
    /// of this URI from 1, in the order the server sent them (events of one server are
    /// delivered in order, so a gap in `seq` means events were dropped for a slow reader).
    ResourceUpdated {
        /// The resource.
        uri: String,
        /// 1 for the first update of this URI, then 2, 3, ...
        seq: u64,
    },
    /// The server's sandbox stopped something at its limits during its life (reported when it
    /// exits, before [`Closed`](Self::Closed); [`Client::stats`](super::Client::stats) has the
    /// live counters): processes OOM-killed at the memory limit, forks refused at the pids
    /// limit.
    SandboxLimits {
        /// Processes killed by the OOM killer (the server itself, or one of its children).
        oom_kills: u64,
        /// `fork`/`clone` calls refused by `pids.max`.
        refused_forks: u64,
    },
    /// The server broke the protocol (e.g. a non-JSON line on stdout); the session carries on.
    Violation(Violation),
    /// A keep-alive ping ([`HostBuilder::keep_alive`](super::HostBuilder::keep_alive)) went
    /// unanswered: the server has sent nothing for `silent_for`. The connection stays up; the
    /// application decides whether to restart the server.
    Unresponsive {
        /// Time since the server's last message.
        silent_for: std::time::Duration,
    },
    /// A server started with [`ServerSpec::restart`](super::ServerSpec::restart) went away
    /// and is restarted after `delay` (docs/host.md, "Supervision"). Requests in flight failed
    /// with [`Error::Restarted`](super::Error::Restarted); until it is back, new ones fail with
    /// [`Error::Unavailable`](super::Error::Unavailable).
    Restarting {
        /// Why it went away (or why the last attempt to start it failed).
        reason: String,
        /// Failures in a row, this one included.
        attempt: u32,
        /// The back-off before the next start.
        delay: std::time::Duration,
    },
    /// A restarted server is back: handshake done, its roots, log level and resource
    /// subscriptions given again. Its lists may have changed: `list_changed` notifications
    /// for each follow.
    Restarted {
        /// Restarts so far.
        restarts: u32,
        /// The revision negotiated this time.
        version: crate::protocol::ProtocolVersion,
    },
    /// The connection ended; the last event of the stream (for a restarted server: once it
    /// is shut down, or once it failed too often in a row and is not restarted again).
    Closed(CloseReason),
}

/// The stream of a server's events: async (`recv().await`, or as a `futures::Stream`) or
/// blocking (`recv_blocking`). Bounded: when the application does not keep up, the oldest
/// events are kept and new ones dropped and counted in
/// [`ServerStats::events_dropped`](super::ServerStats::events_dropped).
pub type EventStream = async_channel::Receiver<ServerEvent>;

/// The reactor's end of an event stream. Bounded by a length check rather than by the channel
/// (a bounded channel preallocates every slot: with 1,000 servers that was megabytes for
/// streams that are mostly empty). Only the reactor sends, so the check cannot race.
pub(crate) struct EventSink {
    tx: async_channel::Sender<ServerEvent>,
    capacity: usize,
    /// Bumped by every `list_changed` notification that passes (delivered or not).
    lists: Arc<ListEpochs>,
    /// A restarted server's supervisor, told of the connection's end instead of the stream
    /// when it takes it (`true`: it restarts the server).
    on_close: Option<CloseHook>,
}

/// Told of a connection's end; `true` when it takes the event (see [`EventSink`]).
pub(crate) type CloseHook = Arc<dyn Fn(&crate::protocol::CloseReason) -> bool + Send + Sync>;

impl std::fmt::Debug for EventSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventSink").field("capacity", &self.capacity).finish_non_exhaustive()
    }
}

/// How many times the server said each of its lists changed: a client's cached list is fresh
/// while the count it was fetched at is still the current one.
#[derive(Debug, Default)]
pub(crate) struct ListEpochs {
    pub(crate) tools: AtomicU64,
    pub(crate) resources: AtomicU64,
    pub(crate) prompts: AtomicU64,
}

impl EventSink {
    /// A sink holding at most `capacity` undelivered events, and its stream.
    pub(crate) fn new(capacity: usize) -> (EventSink, EventStream) {
        let (tx, rx) = async_channel::unbounded();
        let sink =
            EventSink { tx, capacity: capacity.max(1), lists: Arc::default(), on_close: None };
        (sink, rx)
    }

    /// Another sink into the same stream, with the same list counters (a restarted server's
    /// next connection), told of its end through `on_close`.
    pub(crate) fn sibling(&self, on_close: Option<CloseHook>) -> EventSink {
        EventSink {
            tx: self.tx.clone(),
            capacity: self.capacity,
            lists: self.lists.clone(),
            on_close,
        }
    }

    /// The list-change counters, shared with the client's list caches.
    pub(crate) fn lists(&self) -> Arc<ListEpochs> {
        self.lists.clone()
    }

    /// Sends, unless the stream is full or nobody listens any more.
    pub(crate) fn try_send(&self, event: ServerEvent) -> Result<(), ServerEvent> {
        if let (ServerEvent::Closed(reason), Some(hook)) = (&event, &self.on_close)
            && hook(reason)
        {
            return Ok(());
        }
        if let ServerEvent::Notification(n) = &event {
            let epoch = match n.method.as_str() {
                "notifications/tools/list_changed" => Some(&self.lists.tools),
                "notifications/resources/list_changed" => Some(&self.lists.resources),
                "notifications/prompts/list_changed" => Some(&self.lists.prompts),
                _ => None,
            };
            // Release: pairs with the client's Acquire load before it trusts its cache.
            if let Some(epoch) = epoch {
                epoch.fetch_add(1, Ordering::Release);
            }
        }
        if self.tx.len() >= self.capacity {
            return Err(event);
        }
        self.tx.try_send(event).map_err(async_channel::TrySendError::into_inner)
    }

    /// Whether every receiver is gone.
    pub(crate) fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

/// The event for a server notification, on either transport: `notifications/resources/updated`
/// becomes [`ServerEvent::ResourceUpdated`] numbered per URI (`updates` counts them);
/// `notifications/message` also goes to `tracing` at its level; the rest pass as they are.
pub(crate) fn notification_event(
    server: &str,
    updates: &mut HashMap<String, u64>,
    n: Notification,
) -> ServerEvent {
    if n.method == "notifications/resources/updated"
        && let Some(uri) = n.params.as_ref().and_then(|p| p.get("uri")).and_then(Value::as_str)
    {
        let seq = updates.entry(uri.to_owned()).or_insert(0);
        *seq += 1;
        return ServerEvent::ResourceUpdated { uri: uri.to_owned(), seq: *seq };
    }
    if n.method == "notifications/message" {
        log_server_message(server, n.params.as_ref());
    }
    ServerEvent::Notification(n)
}

/// Routes a server's `notifications/message` into `tracing` at the matching level.
fn log_server_message(server: &str, params: Option<&Value>) {
    let Some(params) = params else { return };
    let level = params.get("level").and_then(Value::as_str).unwrap_or("info");
    let logger = params.get("logger").and_then(Value::as_str).unwrap_or("");
    let data = params.get("data").map(ToString::to_string).unwrap_or_default();
    match level {
        "debug" => tracing::debug!(target: "ringmcp::server_log", server, logger, "{data}"),
        "info" | "notice" => {
            tracing::info!(target: "ringmcp::server_log", server, logger, "{data}")
        }
        "warning" => tracing::warn!(target: "ringmcp::server_log", server, logger, "{data}"),
        _ => tracing::error!(target: "ringmcp::server_log", server, logger, level, "{data}"),
    }
}

/// Something about a session's health the application hears of.
pub(crate) enum Alert {
    /// The server broke the protocol.
    Violation(crate::protocol::Violation),
    /// A keep-alive ping went unanswered; silent for this long.
    Unresponsive(std::time::Duration),
}

/// Logs an alert (as a warning, with the server's name) and turns it into its event.
pub(crate) fn alert_event(server: &str, alert: Alert) -> ServerEvent {
    match alert {
        Alert::Violation(v) => {
            tracing::warn!(server, "protocol violation: {v}");
            ServerEvent::Violation(v)
        }
        Alert::Unresponsive(silent_for) => {
            tracing::warn!(server, "keep-alive ping unanswered; silent for {silent_for:?}");
            ServerEvent::Unresponsive { silent_for }
        }
    }
}
