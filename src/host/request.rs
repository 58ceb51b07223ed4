//! What travels from a caller to the reactor and back: a request through its server's queue,
//! where its outcome goes, and the host's number for a server. A leaf: it imports nothing of
//! host/'s other files, which all import it.

use std::time::Duration;

use futures_channel::oneshot;
use serde_json::value::RawValue;

use crate::jsonrpc::RawJson;
use crate::protocol::RequestError;
use crate::queue::Ticket;

/// A caller's request, travelling through its server's [`RequestQueue`].
pub(crate) struct QueuedRequest {
    pub(crate) method: Box<str>,
    pub(crate) params: Option<Box<RawValue>>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) reply: Reply,
    /// Where the request's progress notifications go, if the caller asked for them.
    pub(crate) progress: Option<async_channel::Sender<crate::protocol::Progress>>,
}

/// Where a request's outcome goes, plus its admission slot (freed when this is dropped).
pub(crate) struct Reply {
    pub(crate) tx: oneshot::Sender<Result<RawJson, RequestError>>,
    pub(crate) ticket: Ticket<QueuedRequest>,
    /// The client's number for this request, by which a dropped future cancels it.
    pub(crate) seq: u64,
}

impl Reply {
    pub(crate) fn send(self, outcome: Result<RawJson, RequestError>) {
        // Free the slot first: a caller that sees this outcome and submits again at once must
        // find it free (the channel's release/acquire orders the decrement before its admit).
        let Reply { tx, ticket, .. } = self;
        drop(ticket);
        // A caller that stopped waiting is not an error.
        let _ = tx.send(outcome);
    }
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Reply")
    }
}

/// The host's number for one of its servers (a stdio or an HTTP connection), unique for the
/// host's life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct ServerId(u64);

impl ServerId {
    pub(crate) const fn new(n: u64) -> Self {
        ServerId(n)
    }

    pub(crate) const fn get(self) -> u64 {
        self.0
    }
}
