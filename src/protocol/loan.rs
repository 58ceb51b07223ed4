//! Requests written by the caller itself: the session lends an id ahead of time, the caller
//! encodes and writes the line on its own thread, and the session adopts the request when it
//! hears of it (before any answer to it can be read). docs/host.md, "The direct write".
//!
//! The session stays the one owner of ids, deadlines and the pending table; the loan only
//! moves where the line is written from. A lent id that is never used leaves a gap in the
//! numbering and nothing else.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::value::RawValue;

use super::inflight::RequestId;
use super::{RequestError, Session, modern};
use crate::jsonrpc::{self, Id};

/// An id lent to a caller, with what it needs to encode a request line as the session would.
#[derive(Debug, Clone)]
pub struct Loan {
    /// The id the request is sent with.
    pub id: RequestId,
    /// 2026-07-28: the `_meta` members every request carries (`None` in a legacy session).
    meta: Option<Arc<str>>,
    /// The session's default timeout, for a request that names none.
    pub default_timeout: Duration,
}

impl Loan {
    /// The request line, exactly as [`Session::request`] would write it; `None` for a request
    /// the session must shape itself (a 2026-07-28 `ping`, `logging/setLevel`, a method that
    /// revision dropped) or params that are not an object: those take the session's road.
    pub fn encode(&self, method: &str, params: Option<&RawValue>) -> Option<Bytes> {
        if !lendable(method) {
            return None;
        }
        let Some(meta) = &self.meta else {
            return Some(
                jsonrpc::encode_request(&Id::Number(self.id.get()), method, params).into(),
            );
        };
        modern::encode_with_meta(self.id, method, params, meta).ok().map(Bytes::from)
    }
}

/// Whether a request of `method` may go through a [`Loan`]: anything the session passes
/// through unchanged in either era.
fn lendable(method: &str) -> bool {
    !matches!(
        method,
        "initialize"
            | "ping"
            | "logging/setLevel"
            | "resources/subscribe"
            | "resources/unsubscribe"
            | "server/discover"
            | "subscriptions/listen"
    ) && !method.starts_with("notifications/")
}

impl<T> Session<T> {
    /// Lends the next id for a request the caller writes itself, when the session is active
    /// and one more request would not pass `max_pending` (lend one at a time: each loan is
    /// one request more than [`pending`](Self::pending) counts).
    pub fn lend(&mut self) -> Option<Loan> {
        if self.state.admits("tools/call").is_err()
            || self.inflight.len() + 1 >= self.config.max_pending
        {
            return None;
        }
        let meta = self.modern().map(|version| Arc::from(self.meta_json(version)));
        let id = self.take_id();
        Some(Loan { id, meta, default_timeout: self.config.request_timeout })
    }

    /// Enters a request the caller wrote itself under a lent id: from here on it is pending
    /// like any other (answer, timeout, cancel, close). `sent` is when the caller wrote it.
    ///
    /// # Errors
    /// When the session closed since the loan (the token is handed back with the reason).
    pub fn adopt(
        &mut self,
        id: RequestId,
        method: &str,
        line: Bytes,
        sent: Instant,
        timeout: Option<Duration>,
        token: T,
    ) -> Result<(), (T, RequestError)> {
        if let Err(e) = self.state.admits(method) {
            return Err((token, e));
        }
        self.enter(id, method.into(), line, sent, timeout, token);
        Ok(())
    }
}
