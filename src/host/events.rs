//! What a server tells the host outside of answers: notifications, protocol violations, and
//! the end of the connection.

use crate::jsonrpc::Notification;
use crate::protocol::{CloseReason, Violation};

/// An event from one server, delivered on [`Client::events`](super::Client::events).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ServerEvent {
    /// A notification (`notifications/tools/list_changed`, `notifications/message`, ...).
    Notification(Notification),
    /// The server broke the protocol (e.g. a non-JSON line on stdout); the session carries on.
    Violation(Violation),
    /// The connection ended; the last event of the stream.
    Closed(CloseReason),
}

/// The stream of a server's events: async (`recv().await`, or as a `futures::Stream`) or
/// blocking (`recv_blocking`). Bounded: when the application does not keep up, the oldest
/// events are kept and new ones dropped and counted in
/// [`ServerStats::events_dropped`](super::ServerStats::events_dropped).
pub type EventStream = async_channel::Receiver<ServerEvent>;
