//! The gateway's upstream channel: what the backends' supervisors, the request tasks, the
//! handler and the approver send to the upstream session's loop. A leaf of gateway/: the loop
//! (`upstream/`) and the senders (`dispatch.rs`, `backend.rs`, `handler.rs`) import it, it
//! imports none of them.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc;

use crate::jsonrpc::{ErrorObject, Id, RawJson, codes};

/// A message for the upstream loop.
#[derive(Debug)]
pub(crate) enum Out {
    /// The answer to upstream request `id` (JSON text, or a `Value`).
    Respond(Id, Result<RawJson, ErrorObject>),
    /// A notification for the upstream client.
    Notify(String, Option<Value>),
    /// A backend's lists changed (or it came or went).
    ListsChanged,
    /// Which upstream lists differ from what the client was last told.
    Changed(super::Changed),
    /// A subscribed resource changed (its upstream URI).
    ResourceUpdated(String),
    /// A backend's request for the upstream client.
    Ask {
        /// The backend.
        server: String,
        /// `sampling/createMessage` or `elicitation/create`.
        method: String,
        /// Its params.
        params: Value,
        /// Where the answer goes.
        reply: Reply,
    },
}

/// Where the answer to a request of the gateway's goes.
pub(crate) type Reply = futures_channel::oneshot::Sender<Result<Value, ErrorObject>>;

/// Messages the upstream channel holds at most.
const OUTBOX: usize = 1024;

/// The sending end of the gateway's upstream channel (cheap to clone): the backends'
/// supervisors, the request tasks, the handler and the approver send through it. It is bounded
/// ([`OUTBOX`] messages); what a full channel does depends on the message (docs/gateway.md,
/// "Buffers"):
/// - a notification (progress, a log message) is dropped, and the drops are counted in the log;
/// - anything else (an answer, a backend's request, a change of lists) waits for room: on the
///   gateway's own runtime in a task of its own (the runtime runs the loop that makes room, so
///   it must not block; such waiters are bounded by the requests in flight and the backends),
///   on any other thread by blocking it.
#[derive(Debug, Clone)]
pub struct Outbox {
    tx: mpsc::Sender<Out>,
    dropped: Arc<std::sync::atomic::AtomicU64>,
    /// Resource updates that found the channel full, coalesced by URI.
    updates: Arc<std::sync::Mutex<Coalesced>>,
}

/// The URIs whose update waits for room (each once, however often it changed meanwhile: the
/// client hears of every changed URI after its latest change, and a flood of updates costs
/// one entry a resource), and whether a task is draining them.
#[derive(Debug, Default)]
struct Coalesced {
    uris: std::collections::BTreeSet<String>,
    draining: bool,
}

impl Outbox {
    /// Queues a message; dropped when the upstream connection is gone.
    pub(crate) fn send(&self, out: Out) {
        let out = match self.tx.try_send(out) {
            Ok(()) => return,
            Err(mpsc::error::TrySendError::Closed(out)) => return closed(out),
            Err(mpsc::error::TrySendError::Full(out)) => out,
        };
        if let Out::ResourceUpdated(uri) = out {
            return self.coalesce(uri);
        }
        if let Out::Notify(method, _) = &out {
            use std::sync::atomic::Ordering;
            let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            if n == 1 || n.is_power_of_two() {
                tracing::warn!(
                    "the upstream client is not keeping up: {n} notifications dropped so far (the latest {method})"
                );
            }
            return;
        }
        let tx = self.tx.clone();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    if let Err(mpsc::error::SendError(out)) = tx.send(out).await {
                        closed(out);
                    }
                });
            }
            Err(_) => {
                if let Err(mpsc::error::SendError(out)) = tx.blocking_send(out) {
                    closed(out);
                }
            }
        }
    }
}

impl Outbox {
    /// A resource update that found the channel full: kept by its URI, sent by one draining
    /// task (or, off the gateway's runtime, this thread) as room comes.
    fn coalesce(&self, uri: String) {
        {
            let mut pending = super::lock(&self.updates);
            pending.uris.insert(uri);
            if std::mem::replace(&mut pending.draining, true) {
                return;
            }
        }
        let (tx, updates) = (self.tx.clone(), self.updates.clone());
        let next = move || super::lock(&updates).next();
        let forget = |updates: &std::sync::Mutex<Coalesced>| super::lock(updates).forget();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                let updates = self.updates.clone();
                runtime.spawn(async move {
                    while let Some(uri) = next() {
                        if tx.send(Out::ResourceUpdated(uri)).await.is_err() {
                            return forget(&updates);
                        }
                    }
                });
            }
            Err(_) => {
                while let Some(uri) = next() {
                    if tx.blocking_send(Out::ResourceUpdated(uri)).is_err() {
                        return forget(&self.updates);
                    }
                }
            }
        }
    }
}

impl Coalesced {
    /// The next URI to send; when there is none, the drain is over.
    fn next(&mut self) -> Option<String> {
        let uri = self.uris.pop_first();
        self.draining = uri.is_some();
        uri
    }

    /// The connection is gone: nothing is left to send.
    fn forget(&mut self) {
        self.uris.clear();
        self.draining = false;
    }
}

/// A message for a connection that is gone: a backend's request is answered with an error.
fn closed(out: Out) {
    if let Out::Ask { reply, .. } = out {
        let _ = reply.send(Err(ErrorObject::new(
            codes::INTERNAL_ERROR,
            "the gateway's upstream connection closed",
        )));
    }
}

/// The receiving end, consumed by the upstream loop ([`serve_stdio`](super::serve_stdio)).
#[derive(Debug)]
pub struct Inbox(pub(crate) mpsc::Receiver<Out>);

pub(crate) fn channel() -> (Outbox, Inbox) {
    let (tx, rx) = mpsc::channel(OUTBOX);
    (Outbox { tx, dropped: Arc::default(), updates: Arc::default() }, Inbox(rx))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_full_outbox_drops_notifications_and_keeps_everything_else() {
        let (outbox, mut inbox) = channel();
        for _ in 0..OUTBOX {
            outbox.send(Out::Notify("notifications/progress".into(), None));
        }
        outbox.send(Out::Notify("notifications/message".into(), None));
        assert_eq!(outbox.dropped.load(std::sync::atomic::Ordering::Relaxed), 1);
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(async {
            // An answer waits for room instead of being lost, without blocking the runtime.
            outbox.send(Out::Respond(Id::Number(7), Ok(RawJson::from_value(json!({})))));
            for _ in 0..OUTBOX {
                assert!(matches!(inbox.0.recv().await, Some(Out::Notify(..))));
            }
            assert!(matches!(inbox.0.recv().await, Some(Out::Respond(Id::Number(7), _))));
        });
        // A flood of resource updates on a full channel is coalesced by URI: one entry each,
        // every URI told once more.
        for _ in 0..OUTBOX {
            outbox.send(Out::Notify("notifications/progress".into(), None));
        }
        runtime.block_on(async {
            for i in 0..100_000 {
                outbox.send(Out::ResourceUpdated(format!("r{}", i % 3)));
            }
            assert_eq!(super::super::lock(&outbox.updates).uris.len(), 3);
            for _ in 0..OUTBOX {
                assert!(matches!(inbox.0.recv().await, Some(Out::Notify(..))));
            }
            let mut told = std::collections::BTreeSet::new();
            while told.len() < 3 {
                let Some(Out::ResourceUpdated(uri)) = inbox.0.recv().await else { panic!() };
                told.insert(uri);
            }
            assert!(inbox.0.try_recv().is_err(), "each URI once");
        });
        // A backend's request for a connection that is gone is answered with an error.
        drop(inbox);
        let (reply, answer) = futures_channel::oneshot::channel();
        let ask = Out::Ask {
            server: "s".into(),
            method: "elicitation/create".into(),
            params: json!({}),
            reply,
        };
        outbox.send(ask);
        let answer = futures::executor::block_on(answer).unwrap();
        assert!(answer.is_err());
    }
}
