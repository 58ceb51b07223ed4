//! Per-server request queues with back-pressure.
//!
//! A caller's request reaches the reactor through its server's [`RequestQueue`]: a lock-free
//! queue (crossbeam's `SegQueue`, which allocates in small blocks as it fills, so an idle
//! server costs a few bytes rather than `limit` preallocated slots) behind an admission
//! counter that bounds it. At most `limit` requests
//! per server are *outstanding* (queued for the reactor, or sent and unanswered). One more is
//! refused at once, before anything is queued, with [`QueueFull`]: JSON-RPC `-32000` "Server
//! queue limit reached. Backpressure applied." and a `retryAfterSeconds` estimated from the
//! server's recent service rate. Nothing waits and nothing grows without bound.
//!
//! Wake-ups are coalesced: the first request pushed into an idle queue puts the queue on the
//! reactor's ready list and signals it; later pushes see the queue already scheduled and make no
//! syscall. The reactor unschedules a queue *before* draining it, so a push either is seen by
//! that drain or schedules the queue again (see [`RequestQueue::push`] for the orderings).

#![forbid(unsafe_code)]

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crossbeam_queue::SegQueue;

use crate::protocol::CloseReason;

/// The message MCP hosts use for back-pressure refusals.
pub const QUEUE_FULL_MESSAGE: &str = "Server queue limit reached. Backpressure applied.";

/// A refusal: the server already has `limit` requests outstanding.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QueueFull {
    /// The per-server limit in force.
    pub limit: usize,
    /// When a retry is likely to be admitted, from the server's recent service rate.
    pub retry_after: Duration,
}

/// Reactor-side bookkeeping of how fast a server answers: an exponentially weighted moving
/// average of completions per second over windows of [`RateMeter::WINDOW`].
#[derive(Debug)]
pub struct RateMeter {
    window_start: Option<Instant>,
    count: u32,
}

impl RateMeter {
    /// Length of one sampling window.
    pub const WINDOW: Duration = Duration::from_millis(100);

    /// A meter with no samples.
    pub fn new() -> Self {
        RateMeter { window_start: None, count: 0 }
    }
}

impl Default for RateMeter {
    fn default() -> Self {
        Self::new()
    }
}

/// One server's request ring and admission state, shared by its clients (producers) and the
/// reactor (the single consumer).
#[derive(Debug)]
pub struct RequestQueue<T> {
    id: u64,
    /// Bounded by admission: it never holds more than `limit` requests.
    ring: SegQueue<T>,
    limit: usize,
    /// Requests admitted and not yet finished (in the ring, or sent and unanswered).
    outstanding: AtomicUsize,
    /// The queue is on the reactor's ready list (or about to be).
    scheduled: AtomicBool,
    /// Recent completions per second, as `f64` bits; 0 means "no estimate yet".
    rate: AtomicU64,
    /// Why the server is gone, once it is; later requests fail with it.
    closed: OnceLock<CloseReason>,
}

impl<T> RequestQueue<T> {
    /// A queue admitting at most `limit` outstanding requests (at least 1).
    pub fn new(id: u64, limit: usize) -> Self {
        let limit = limit.max(1);
        RequestQueue {
            id,
            ring: SegQueue::new(),
            limit,
            outstanding: AtomicUsize::new(0),
            scheduled: AtomicBool::new(false),
            rate: AtomicU64::new(0),
            closed: OnceLock::new(),
        }
    }

    /// The server id this queue feeds.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The per-server limit.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Requests admitted and not yet finished.
    pub fn outstanding(&self) -> usize {
        self.outstanding.load(Ordering::Relaxed)
    }

    /// Why the queue was closed, if it was.
    pub fn closed(&self) -> Option<&CloseReason> {
        self.closed.get()
    }

    /// Marks the server gone; requests from now on are refused with `reason`.
    pub fn close(&self, reason: CloseReason) {
        let _ = self.closed.set(reason);
    }

    /// Admits one request: reserves an outstanding slot or refuses with [`QueueFull`].
    ///
    /// # Errors
    /// When `limit` requests are already outstanding.
    pub fn admit(self: &Arc<Self>) -> Result<Ticket<T>, QueueFull> {
        // Relaxed: the counter is a pure quota; no data is published through it (the request
        // itself travels through the ring, whose push/pop synchronise on their own).
        let admitted = self.outstanding.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
            (n < self.limit).then_some(n + 1)
        });
        match admitted {
            Ok(_) => Ok(Ticket { queue: self.clone() }),
            Err(n) => Err(QueueFull { limit: self.limit, retry_after: self.retry_after(n) }),
        }
    }

    /// Pushes a request admitted by [`admit`](Self::admit) (the request carries its
    /// [`Ticket`]). Returns `true` when the caller must put the queue on the reactor's ready
    /// list and wake the reactor (the queue was idle).
    ///
    /// Orderings: the push into the ring happens before our `swap(true, AcqRel)`. The reactor
    /// unschedules with `swap(false, AcqRel)` and only then drains. Both are read-modify-writes
    /// of one atomic, so one comes first in its modification order:
    /// * ours first: the reactor's swap reads our `true` (or a later value of the same release
    ///   sequence), acquires our push, and its drain sees the request;
    /// * the reactor's first: our swap reads `false`, we return `true`, and the caller
    ///   schedules the queue again, so a later drain sees it.
    ///
    pub fn push(&self, request: T) -> bool {
        self.ring.push(request);
        !self.scheduled.swap(true, Ordering::AcqRel)
    }

    /// Reactor side: unschedules the queue, then yields what it holds. Call when the queue is
    /// popped from the ready list.
    pub fn drain(&self) -> impl Iterator<Item = T> + '_ {
        // AcqRel: see `push`. The acquire half makes pushes that preceded the scheduling
        // visible to the pops below.
        self.scheduled.swap(false, Ordering::AcqRel);
        std::iter::from_fn(move || self.ring.pop())
    }

    /// Reactor side: one request of this server finished at `now`; updates the service rate.
    pub fn record_completion(&self, meter: &mut RateMeter, now: Instant) {
        meter.count += 1;
        let start = *meter.window_start.get_or_insert(now);
        let elapsed = now.saturating_duration_since(start);
        if elapsed >= RateMeter::WINDOW {
            let sample = f64::from(meter.count) / elapsed.as_secs_f64();
            let old = f64::from_bits(self.rate.load(Ordering::Relaxed));
            let rate = if old > 0.0 { 0.5 * old + 0.5 * sample } else { sample };
            // Relaxed: an advisory estimate; readers need no ordering with anything else.
            self.rate.store(rate.to_bits(), Ordering::Relaxed);
            meter.window_start = Some(now);
            meter.count = 0;
        }
    }

    /// The time to work off `outstanding` requests at the recent rate (1 s without an
    /// estimate), clamped to [1 ms, 60 s].
    fn retry_after(&self, outstanding: usize) -> Duration {
        let rate = f64::from_bits(self.rate.load(Ordering::Relaxed));
        let secs = if rate > 0.0 { outstanding as f64 / rate } else { 1.0 };
        Duration::from_secs_f64(secs.clamp(0.001, 60.0))
    }
}

/// An admitted request's slot. Dropping it (however the request ends: answered, failed, or
/// dropped unsent) frees the slot, so the quota cannot leak.
#[derive(Debug)]
pub struct Ticket<T> {
    queue: Arc<RequestQueue<T>>,
}

impl<T> Drop for Ticket<T> {
    fn drop(&mut self) {
        // Relaxed: see `admit`.
        self.queue.outstanding.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The reactor's list of queues with new requests. Each queue is on it at most once (its
/// `scheduled` flag), so its length is bounded by the number of servers.
pub type ReadyList<T> = SegQueue<Arc<RequestQueue<T>>>;

#[cfg(test)]
mod tests;
