//! What a session hands its driver besides bytes: events, and its counters.

use std::time::Duration;

use serde_json::Value;

use crate::jsonrpc::{Id, Notification, RawJson};

use super::error::{RequestError, Violation};
use super::inflight::RequestId;

/// Something the driver must act on.
#[derive(Debug)]
pub enum Event<T> {
    /// A request finished: answered, failed, timed out or abandoned. Exactly once per request.
    Completed {
        /// The token given to [`Session::request`] or [`Session::initialize`].
        token: T,
        /// The `result`, or why there is none.
        outcome: Result<RawJson, RequestError>,
    },
    /// A notification from the server.
    Notification(Notification),
    /// A server→client request the application answers (see [`ClientFeatures`]); reply with
    /// [`Session::respond`] and this `id`. If the server cancels it first, the answer is
    /// dropped (no response may follow a cancellation).
    ServerRequest {
        /// The server's request id.
        id: Id,
        /// `sampling/createMessage` or `elicitation/create`.
        method: String,
        /// Its params.
        params: Option<Value>,
    },
    /// Progress of request `id` (sent with [`Session::request_with_progress`]).
    Progress {
        /// The request's id, as returned when it was queued.
        id: RequestId,
        /// What the server reported.
        progress: Progress,
    },
    /// The server broke the protocol; the session carries on.
    Violation(Violation),
    /// A keep-alive ping ([`SessionConfig::keep_alive`]) went unanswered: nothing has come
    /// from the server for `silent_for`. The session carries on (the application decides
    /// whether to restart the server); the next ping follows after another interval.
    Unresponsive {
        /// Time since the server's last frame.
        silent_for: Duration,
    },
}

/// Counters, for diagnostics and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionStats {
    /// Requests sent.
    pub requests: u64,
    /// Frames received.
    pub frames: u64,
    /// Protocol violations seen.
    pub violations: u64,
    /// Requests that timed out.
    pub timeouts: u64,
    /// Server→client requests answered.
    pub server_requests: u64,
    /// Requests cancelled by the client (their caller stopped waiting).
    pub cancelled: u64,
    /// Answers that arrived after their request was cancelled or timed out: discarded, never
    /// delivered to anyone.
    pub late_answers: u64,
    /// Keep-alive pings sent.
    pub keepalive_pings: u64,
    /// Keep-alive pings that went unanswered ([`Event::Unresponsive`]).
    pub keepalive_timeouts: u64,
}

/// A `notifications/progress` for a request in flight.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Progress so far (increases with each notification; may be fractional).
    pub progress: f64,
    /// The total, when the server knows it.
    pub total: Option<f64>,
    /// A human-readable message, when given.
    pub message: Option<String>,
}
