//! What the session hands the I/O layer: each line it wants written, with what the line is,
//! so that no layer below reads the session's own bytes again to find out (the HTTP transport
//! needs the method for its headers, the id to follow a request's stream, and which request a
//! cancellation names).

use std::sync::Arc;

use bytes::Bytes;

/// One line for the server (newline-terminated JSON), and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// The bytes to write.
    pub bytes: Bytes,
    /// What they are.
    pub kind: TransmitKind,
}

/// What a [`Transmit`] carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransmitKind {
    /// A request of ours: its method and its id (our ids are numbers).
    Request {
        /// The method, as sent (2026-07-28 renames `ping` to `server/discover`).
        method: Arc<str>,
        /// The request's id on the wire.
        id: super::RequestId,
    },
    /// A notification.
    Notification {
        /// The method.
        method: Arc<str>,
        /// For `notifications/cancelled`: the request of ours it cancels.
        cancels: Option<super::RequestId>,
    },
    /// Our answer to a request of the server's.
    Response,
}

impl Transmit {
    /// The method of a request or notification; `None` for a response.
    pub fn method(&self) -> Option<&str> {
        match &self.kind {
            TransmitKind::Request { method, .. } | TransmitKind::Notification { method, .. } => {
                Some(method)
            }
            TransmitKind::Response => None,
        }
    }
}
