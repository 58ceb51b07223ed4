//! The keep-alive: after an interval without a frame from the server, one ping; an answer of
//! any kind (even an error) shows the server is alive; no answer within the request timeout
//! makes it unresponsive, and the silence is counted again from then.

use std::time::{Duration, Instant};

use super::inflight::RequestId;

/// The keep-alive's state.
#[derive(Debug, Default)]
pub(super) struct KeepAlive {
    /// Off when `None`.
    interval: Option<Duration>,
    /// The ping in flight: its id and when it was sent.
    ping: Option<(RequestId, Instant)>,
    /// Since when the server has been silent: the last frame received, or the last
    /// unanswered ping's expiry.
    idle_since: Option<Instant>,
}

/// What the keep-alive wants done now.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Tick {
    /// Nothing.
    Wait,
    /// Send a ping (then report it with [`KeepAlive::sent`]).
    Ping,
    /// The ping went unanswered: the server is unresponsive.
    Unanswered(RequestId),
}

impl KeepAlive {
    pub(super) fn new(interval: Option<Duration>) -> Self {
        KeepAlive { interval, ..KeepAlive::default() }
    }

    /// A frame arrived.
    pub(super) fn heard(&mut self, now: Instant) {
        self.idle_since = Some(now);
    }

    /// When the keep-alive next needs attention (`timeout`: how long a ping may go
    /// unanswered): the ping's deadline while one is in flight, else the moment the server
    /// will have been silent for the interval. `None` when off or not `active`.
    pub(super) fn due(&self, active: bool, timeout: Duration) -> Option<Instant> {
        let interval = self.interval?;
        if !active {
            return None;
        }
        match self.ping {
            Some((_, sent)) => Some(sent + timeout),
            None => self.idle_since.map(|t| t + interval),
        }
    }

    /// What is due at `now`.
    pub(super) fn tick(&mut self, now: Instant, active: bool, timeout: Duration) -> Tick {
        match self.due(active, timeout) {
            Some(due) if now >= due => match self.ping.take() {
                Some((id, _)) => {
                    self.idle_since = Some(now);
                    Tick::Unanswered(id)
                }
                None => Tick::Ping,
            },
            _ => Tick::Wait,
        }
    }

    /// The ping was sent as request `id`.
    pub(super) fn sent(&mut self, id: RequestId, now: Instant) {
        self.ping = Some((id, now));
    }

    /// Whether `id` is the ping in flight; if so it is over (answered, or lost: the next one
    /// follows after the interval).
    pub(super) fn settle(&mut self, id: RequestId) -> bool {
        let ours = self.ping.is_some_and(|(ping, _)| ping == id);
        if ours {
            self.ping = None;
        }
        ours
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMEOUT: Duration = Duration::from_secs(10);

    /// Silence for the interval sends a ping; an answer settles it and the interval counts
    /// from the last frame again.
    #[test]
    fn silence_sends_one_ping_and_an_answer_settles_it() {
        let t0 = crate::fuzzing::epoch();
        let s = Duration::from_secs;
        let mut k = KeepAlive::new(Some(s(5)));
        k.heard(t0);
        assert_eq!(k.due(true, TIMEOUT), Some(t0 + s(5)));
        assert_eq!(k.tick(t0 + s(4), true, TIMEOUT), Tick::Wait);
        assert_eq!(k.tick(t0 + s(5), true, TIMEOUT), Tick::Ping);
        k.sent(RequestId::new(7), t0 + s(5));
        assert_eq!(k.due(true, TIMEOUT), Some(t0 + s(15)), "the ping's own deadline");
        assert_eq!(k.tick(t0 + s(6), true, TIMEOUT), Tick::Wait, "one ping at a time");
        assert!(!k.settle(RequestId::new(8)), "another request's answer");
        k.heard(t0 + s(7));
        assert!(k.settle(RequestId::new(7)));
        assert_eq!(k.due(true, TIMEOUT), Some(t0 + s(12)));
    }

    /// An unanswered ping is reported once; the silence is then counted from its expiry.
    #[test]
    fn an_unanswered_ping_is_reported_once() {
        let t0 = crate::fuzzing::epoch();
        let s = Duration::from_secs;
        let mut k = KeepAlive::new(Some(s(5)));
        k.heard(t0);
        assert_eq!(k.tick(t0 + s(5), true, TIMEOUT), Tick::Ping);
        k.sent(RequestId::new(1), t0 + s(5));
        assert_eq!(k.tick(t0 + s(15), true, TIMEOUT), Tick::Unanswered(RequestId::new(1)));
        assert_eq!(k.due(true, TIMEOUT), Some(t0 + s(20)));
        assert_eq!(k.tick(t0 + s(16), true, TIMEOUT), Tick::Wait);
        assert!(!k.settle(RequestId::new(1)), "a late answer is no longer the ping");
    }

    /// Off, or before the session is active, nothing is ever due.
    #[test]
    fn off_or_inactive_is_never_due() {
        let t0 = crate::fuzzing::epoch();
        let mut off = KeepAlive::new(None);
        off.heard(t0);
        assert_eq!(off.due(true, TIMEOUT), None);
        assert_eq!(off.tick(t0 + Duration::from_secs(3600), true, TIMEOUT), Tick::Wait);
        let mut on = KeepAlive::new(Some(Duration::from_secs(1)));
        on.heard(t0);
        assert_eq!(on.due(false, TIMEOUT), None);
        assert_eq!(on.tick(t0 + Duration::from_secs(3600), false, TIMEOUT), Tick::Wait);
    }
}
