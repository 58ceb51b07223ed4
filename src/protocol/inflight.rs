//! The session's requests in flight: the table by id, the deadline heap (min-heap with lazy
//! deletion: an entry whose request is gone, or whose deadline moved, is skipped when it
//! reaches the top), and the bounded memory of abandoned ids that tells a late answer from a
//! violation.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::time::{Duration, Instant};

use bytes::Bytes;

/// The id of one of our requests on the wire (our ids are numbers, unique per session).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct RequestId(i64);

impl RequestId {
    /// The id with this number.
    pub const fn new(n: i64) -> Self {
        RequestId(n)
    }

    /// Its number.
    pub const fn get(self) -> i64 {
        self.0
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId(n)
    }
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// How many cancelled or timed-out request ids are remembered to recognise late answers.
pub(super) const RECENTLY_ABANDONED: usize = 4096;

/// One request in flight.
#[derive(Debug)]
pub(super) struct Pending<T> {
    pub(super) method: std::sync::Arc<str>,
    pub(super) sent: Instant,
    pub(super) deadline: Instant,
    pub(super) token: T,
    /// Set for requests sent with a `progressToken` (their id): each progress notification
    /// moves the deadline to `now + timeout`, never past `sent + max_request_total`.
    pub(super) timeout: Option<Duration>,
    /// The id the caller knows the request by: its first id (a 2026-07-28 retry after
    /// `input_required` is sent with a new one).
    pub(super) origin: RequestId,
    /// The request line as sent (kept when a retry may be built from it; a reference to the
    /// transmitted bytes, not a copy).
    pub(super) line: Option<Bytes>,
    /// `input_required` rounds so far.
    pub(super) rounds: u8,
}

/// The requests in flight, their deadlines and the ids abandoned lately.
#[derive(Debug)]
pub(super) struct InFlight<T> {
    pending: HashMap<RequestId, Pending<T>>,
    /// Min-heap of (deadline, id); stale entries are skipped lazily.
    deadlines: BinaryHeap<Reverse<(Instant, RequestId)>>,
    /// Ids of requests cancelled or timed out lately (bounded).
    abandoned: VecDeque<RequestId>,
}

impl<T> Default for InFlight<T> {
    fn default() -> Self {
        InFlight {
            pending: HashMap::new(),
            deadlines: BinaryHeap::new(),
            abandoned: VecDeque::new(),
        }
    }
}

impl<T> InFlight<T> {
    pub(super) fn len(&self) -> usize {
        self.pending.len()
    }

    pub(super) fn contains(&self, id: RequestId) -> bool {
        self.pending.contains_key(&id)
    }

    pub(super) fn get(&self, id: RequestId) -> Option<&Pending<T>> {
        self.pending.get(&id)
    }

    pub(super) fn get_mut(&mut self, id: RequestId) -> Option<&mut Pending<T>> {
        self.pending.get_mut(&id)
    }

    pub(super) fn remove(&mut self, id: RequestId) -> Option<Pending<T>> {
        self.pending.remove(&id)
    }

    /// Enters a request and its deadline.
    pub(super) fn insert(&mut self, id: RequestId, pending: Pending<T>) {
        self.deadlines.push(Reverse((pending.deadline, id)));
        self.pending.insert(id, pending);
        if self.deadlines.len() > 2 * self.pending.len() + 64 {
            // Entries of finished requests are normally popped as they reach the top; a
            // long-lived request at the top would let them pile up behind it. Rebuild so the
            // heap stays proportional to what is really pending (amortised O(1) per request).
            self.deadlines =
                self.pending.iter().map(|(&id, p)| Reverse((p.deadline, id))).collect();
        }
    }

    /// Moves request `id`'s deadline later (never earlier).
    pub(super) fn extend(&mut self, id: RequestId, deadline: Instant) {
        if let Some(p) = self.pending.get_mut(&id)
            && deadline > p.deadline
        {
            p.deadline = deadline;
            self.deadlines.push(Reverse((deadline, id)));
        }
    }

    /// The next request whose deadline is at or before `now` (it stays in the table).
    pub(super) fn next_expired(&mut self, now: Instant) -> Option<RequestId> {
        while let Some(&Reverse((deadline, id))) = self.deadlines.peek() {
            if deadline > now {
                return None;
            }
            self.deadlines.pop();
            if self.pending.get(&id).is_some_and(|p| p.deadline == deadline) {
                return Some(id);
            }
        }
        None
    }

    /// The earliest deadline of a request still in flight.
    pub(super) fn earliest(&mut self) -> Option<Instant> {
        while let Some(&Reverse((deadline, id))) = self.deadlines.peek() {
            if self.pending.get(&id).is_some_and(|p| p.deadline == deadline) {
                return Some(deadline);
            }
            self.deadlines.pop();
        }
        None
    }

    /// Every request id, in the order they were sent.
    pub(super) fn ids(&self) -> Vec<RequestId> {
        let mut ids: Vec<RequestId> = self.pending.keys().copied().collect();
        ids.sort_unstable();
        ids
    }

    /// Forgets every deadline (the connection is over).
    pub(super) fn clear_deadlines(&mut self) {
        self.deadlines.clear();
    }

    /// Remembers that `id` was given up on, so its late answer is recognised.
    pub(super) fn abandon(&mut self, id: RequestId) {
        if self.abandoned.len() == RECENTLY_ABANDONED {
            self.abandoned.pop_front();
        }
        self.abandoned.push_back(id);
    }

    /// Whether `id` was given up on lately.
    pub(super) fn was_abandoned(&self, id: RequestId) -> bool {
        self.abandoned.contains(&id)
    }

    #[cfg(test)]
    pub(super) fn heap_len(&self) -> usize {
        self.deadlines.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(deadline: Instant, n: i64) -> Pending<i64> {
        Pending {
            method: "m".into(),
            sent: deadline,
            deadline,
            token: n,
            timeout: None,
            origin: RequestId(n),
            line: None,
            rounds: 0,
        }
    }

    /// Requests expire in deadline order, each once; a moved deadline's old heap entry is
    /// skipped, and a removed request never expires.
    #[test]
    fn expiry_follows_deadlines_and_skips_stale_entries() {
        let t0 = crate::fuzzing::epoch();
        let s = Duration::from_secs;
        let mut f = InFlight::default();
        f.insert(RequestId(1), pending(t0 + s(3), 1));
        f.insert(RequestId(2), pending(t0 + s(1), 2));
        f.insert(RequestId(3), pending(t0 + s(2), 3));
        f.extend(RequestId(2), t0 + s(5));
        f.extend(RequestId(2), t0 + s(4)); // earlier than the current one: ignored
        f.remove(RequestId(3));
        assert_eq!(f.earliest(), Some(t0 + s(3)));
        assert_eq!(f.next_expired(t0 + s(2)), None);
        assert_eq!(f.next_expired(t0 + s(10)), Some(RequestId(1)));
        f.remove(RequestId(1));
        assert_eq!(f.next_expired(t0 + s(10)), Some(RequestId(2)));
        assert_eq!(f.get(RequestId(2)).map(|p| p.deadline), Some(t0 + s(5)));
        f.remove(RequestId(2));
        assert_eq!(f.next_expired(t0 + s(10)), None);
        assert_eq!(f.earliest(), None);
    }

    /// A long-lived request at the top of the heap does not let the entries of finished
    /// requests pile up behind it.
    #[test]
    fn the_heap_stays_proportional_to_what_is_pending() {
        let t0 = crate::fuzzing::epoch();
        let mut f = InFlight::default();
        f.insert(RequestId(0), pending(t0, 0));
        for n in 1..10_000 {
            f.insert(RequestId(n), pending(t0 + Duration::from_secs(60), n));
            f.remove(RequestId(n));
            assert!(f.heap_len() <= 2 * (f.len() + 1) + 64, "{} entries at {n}", f.heap_len());
        }
        assert_eq!(f.ids(), [RequestId(0)]);
    }

    /// The memory of abandoned ids is bounded and forgets the oldest first.
    #[test]
    fn abandoned_ids_are_remembered_boundedly() {
        let mut f = InFlight::<()>::default();
        for n in 0..(RECENTLY_ABANDONED as i64 + 10) {
            f.abandon(RequestId(n));
        }
        assert!(!f.was_abandoned(RequestId(9)));
        assert!(f.was_abandoned(RequestId(10)));
        assert!(f.was_abandoned(RequestId(RECENTLY_ABANDONED as i64 + 9)));
        assert_eq!(f.abandoned.len(), RECENTLY_ABANDONED);
    }
}
