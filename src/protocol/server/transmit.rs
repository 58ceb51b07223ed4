//! What the server session hands its driver: each line to write, with what the line is and
//! which of the driver's streams it belongs to, so that no driver reads the session's bytes
//! again to route them (the mirror of the client side's [`Transmit`](crate::protocol::Transmit)).
//!
//! The session writes the client's own ids, progress tokens and subscription ids into the
//! typed values before encoding; a driver only frames the bytes (an SSE event, a JSON body) as
//! the last step.

use std::sync::Arc;

use bytes::Bytes;

/// Where a frame came from, for a driver that serves several streams of one session (HTTP:
/// each POST is a stream).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    /// The driver's number for the stream (a POST); the lines that answer it carry it back.
    pub stream: u64,
    /// The ids are the client's of this stream only (stateless clients sharing one session):
    /// the session keys the requests by ids of its own, and gives the client's back in what
    /// it writes.
    pub scoped: bool,
}

/// One line for the client (newline-terminated JSON), and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerTransmit {
    /// The bytes to write.
    pub bytes: Bytes,
    /// What they are.
    pub kind: ServerTransmitKind,
    /// The stream it belongs to: the answer's, the progress's request's, the listen
    /// notification's `subscriptions/listen` request's; `None` for the rest (and for every
    /// line of a session whose frames came without an [`Origin`]).
    pub stream: Option<u64>,
}

/// What a [`ServerTransmit`] carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerTransmitKind {
    /// The answer to a request of the client's.
    Response {
        /// The error's code when it is an error.
        error: Option<i64>,
        /// The last answer its stream waits for: nothing more of its requests is open or
        /// queued (a driver may end the stream).
        ends_stream: bool,
    },
    /// A notification.
    Notification {
        /// Its method.
        method: Arc<str>,
    },
    /// A request of the server's (sampling, elicitation, roots, ping).
    Request {
        /// Its method.
        method: Arc<str>,
    },
    /// No line (the bytes are empty): every request of the stream was cancelled, so no answer
    /// will come for it; a driver ends the stream (a client that cancelled does not wait on
    /// it, and a connection held open for nothing is a leak).
    StreamEnd,
}
