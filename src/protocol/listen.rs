//! The 2026-07-28 `subscriptions/listen` stream: opened with the application's filter,
//! demultiplexed by subscription id (an older stream's notifications are dropped), reopened
//! with back-off when it ends (1 s, doubling up to a minute, back to 1 s once acknowledged).

use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::jsonrpc::{Id, RawMessage};

use super::inflight::RequestId;
use super::modern;
use super::{Session, Transmit, TransmitKind, Violation};

/// The first and the longest wait before an ended `subscriptions/listen` stream is reopened.
const LISTEN_BACKOFF_MIN: Duration = Duration::from_secs(1);
const LISTEN_BACKOFF_MAX: Duration = Duration::from_secs(60);

/// What a 2026-07-28 `subscriptions/listen` asks for: each notification type is opt-in.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListenFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tools_list_changed: bool,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prompts_list_changed: bool,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resources_list_changed: bool,
    /// `notifications/resources/updated` for these URIs (replaces `resources/subscribe`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_subscriptions: Vec<String>,
}

impl ListenFilter {
    /// Whether it asks for nothing (then no subscription is kept open).
    pub fn is_empty(&self) -> bool {
        *self == ListenFilter::default()
    }

    /// Whether everything `other` grants was asked for here.
    pub(super) fn covers(&self, other: &ListenFilter) -> bool {
        (self.tools_list_changed || !other.tools_list_changed)
            && (self.prompts_list_changed || !other.prompts_list_changed)
            && (self.resources_list_changed || !other.resources_list_changed)
            && other.resource_subscriptions.iter().all(|u| self.resource_subscriptions.contains(u))
    }
}

/// The open stream: its request id and what it asked for.
#[derive(Debug, Clone)]
struct Open {
    id: RequestId,
    filter: ListenFilter,
}

/// The listen stream's state.
#[derive(Debug)]
pub(super) struct ListenStream {
    open: Option<Open>,
    /// What the application wants the stream to carry (`None`: no stream).
    wanted: Option<ListenFilter>,
    /// When an ended stream is reopened.
    retry: Option<Instant>,
    backoff: Duration,
}

impl Default for ListenStream {
    fn default() -> Self {
        ListenStream { open: None, wanted: None, retry: None, backoff: LISTEN_BACKOFF_MIN }
    }
}

/// What a message from the server means to the listen stream.
#[derive(Debug, PartialEq)]
pub(super) enum Route {
    /// Not the stream's: the session handles it.
    NotOurs,
    /// The stream's, and handled here (a stale stream's notification, the stream's end).
    Consumed,
    /// The stream's notification, to deliver as usual.
    Deliver,
    /// The server acknowledged the stream, granting this filter (`None`: it named none);
    /// delivered as usual.
    Acknowledged { granted: Option<ListenFilter>, asked: ListenFilter },
}

impl ListenStream {
    /// The application wants `filter` (empty: no stream). Returns the open stream to cancel.
    pub(super) fn want(&mut self, filter: ListenFilter) -> Option<RequestId> {
        let old = self.open.take().map(|o| o.id);
        self.retry = None;
        self.backoff = LISTEN_BACKOFF_MIN;
        self.wanted = (!filter.is_empty()).then_some(filter);
        old
    }

    /// The filter to open a stream with, if one is wanted.
    pub(super) fn wanted(&self) -> Option<&ListenFilter> {
        self.wanted.as_ref()
    }

    /// A stream was opened as request `id`.
    pub(super) fn opened(&mut self, id: RequestId, filter: ListenFilter) {
        self.open = Some(Open { id, filter });
    }

    /// The open stream's id.
    pub(super) fn id(&self) -> Option<RequestId> {
        self.open.as_ref().map(|o| o.id)
    }

    /// The open stream's filter.
    pub(super) fn filter(&self) -> Option<&ListenFilter> {
        self.open.as_ref().map(|o| &o.filter)
    }

    /// The stream ended without the client asking: reopened after the back-off, counted
    /// from `now` (when known).
    pub(super) fn ended(&mut self, now: Option<Instant>) {
        self.open = None;
        if self.wanted.is_some()
            && let Some(now) = now
        {
            self.retry = Some(now + self.backoff);
            self.backoff = (self.backoff * 2).min(LISTEN_BACKOFF_MAX);
        }
    }

    /// When the stream is due to be reopened.
    pub(super) fn due(&self) -> Option<Instant> {
        self.retry
    }

    /// Whether the stream is to be reopened at `now`.
    pub(super) fn tick(&mut self, now: Instant) -> bool {
        let due = self.retry.is_some_and(|due| now >= due);
        if due {
            self.retry = None;
        }
        due
    }

    /// The connection is over: no stream, none wanted.
    pub(super) fn close(&mut self) {
        *self = ListenStream::default();
    }

    /// What `msg` means to the stream (its end is recorded here, with `now`).
    pub(super) fn route(&mut self, msg: &RawMessage, now: Option<Instant>) -> Route {
        let Some(listen_id) = self.id() else { return Route::NotOurs };
        match msg {
            RawMessage::Response(resp) if resp.id == Some(Id::Number(listen_id.get())) => {
                // The server ended the stream (gracefully, or with an error).
                tracing::debug!("the server ended subscriptions/listen {listen_id}");
                self.ended(now);
                Route::Consumed
            }
            RawMessage::Notification(n) => {
                let params = n.params.as_ref();
                let cancelled = (n.method == "notifications/cancelled")
                    .then(|| params.and_then(|p| p.get("requestId")).and_then(Value::as_i64))
                    .flatten();
                if cancelled == Some(listen_id.get()) {
                    // stdio: the server tears the subscription down.
                    self.ended(now);
                    return Route::Deliver;
                }
                let tagged = params
                    .and_then(|p| p.get("_meta"))
                    .and_then(|m| m.get(modern::META_SUBSCRIPTION_ID))
                    .and_then(Value::as_i64);
                let Some(tagged) = tagged else { return Route::NotOurs };
                if tagged != listen_id.get() {
                    tracing::debug!("dropped {} of a closed subscription {tagged}", n.method);
                    return Route::Consumed;
                }
                if n.method != "notifications/subscriptions/acknowledged" {
                    return Route::Deliver;
                }
                self.backoff = LISTEN_BACKOFF_MIN;
                let granted = params
                    .and_then(|p| p.get("notifications"))
                    .and_then(|f| serde_json::from_value::<ListenFilter>(f.clone()).ok());
                let asked = self.filter().cloned().unwrap_or_default();
                Route::Acknowledged { granted, asked }
            }
            _ => Route::NotOurs,
        }
    }
}

impl<T> Session<T> {
    /// 2026-07-28: (re)opens the `subscriptions/listen` stream with `filter` (docs/protocol.md,
    /// "Resources, prompts, completion, logging"): the open one, if any, is cancelled first
    /// (`notifications/cancelled`; over HTTP that closes its stream), and an empty filter
    /// leaves none open. The stream has no deadline; its notifications carry its id in `_meta`
    /// subscriptionId, and those of an older stream are dropped. Ignored in the legacy era
    /// (`resources/subscribe` there).
    ///
    /// A stream that ends (the server closes it, or it breaks) is reopened with the same
    /// filter after a back-off (1 s, doubling up to a minute, back to 1 s once acknowledged).
    pub fn listen(&mut self, filter: ListenFilter, now: Instant) {
        self.clock = Some(now);
        if self.modern().is_none() {
            return;
        }
        if let Some(old) = self.listen.want(filter) {
            self.notify_cancelled(old, "subscription replaced");
            self.inflight.abandon(old);
        }
        self.open_listen();
    }

    /// Sends `subscriptions/listen` with the wanted filter.
    pub(super) fn open_listen(&mut self) {
        let Some(version) = self.modern() else { return };
        let Some(filter) = self.listen.wanted().cloned() else { return };
        let id = self.take_id();
        let body = json!({ "notifications": filter }).to_string();
        let body = RawValue::from_string(body).expect("serde_json output is JSON");
        let meta = self.meta_json(version);
        let line = modern::encode_with_meta(id, "subscriptions/listen", Some(&body), meta)
            .expect("an object");
        let kind = TransmitKind::Request { method: "subscriptions/listen".into(), id };
        self.transmit.push_back(Transmit { bytes: line.into(), kind });
        self.stats.requests += 1;
        self.listen.opened(id, filter);
    }

    /// Reopens the `subscriptions/listen` stream when its back-off is over.
    pub(super) fn listen_tick(&mut self, now: Instant) {
        if self.listen.tick(now) {
            self.open_listen();
        }
    }

    /// The filter of the open `subscriptions/listen`, if one is open.
    pub fn listening(&self) -> Option<&ListenFilter> {
        self.listen.filter()
    }

    /// Routes what belongs to the `subscriptions/listen` stream. Returns true when the message
    /// was consumed (a stale stream's notification, the stream's end).
    pub(super) fn on_listen_message(&mut self, msg: &RawMessage) -> bool {
        match self.listen.route(msg, self.clock) {
            Route::NotOurs | Route::Deliver => false,
            Route::Consumed => true,
            Route::Acknowledged { granted, asked } => {
                match granted {
                    Some(granted) if !asked.covers(&granted) => {
                        self.violation(Violation::InvalidMessage(format!(
                            "subscriptions/listen acknowledged {granted:?}, more than asked ({asked:?})"
                        )));
                    }
                    Some(granted) if granted != asked => {
                        tracing::info!(
                            "subscriptions/listen: the server granted {granted:?} of {asked:?}"
                        );
                    }
                    Some(_) => {}
                    None => self.violation(Violation::InvalidMessage(
                        "subscriptions/acknowledged without a notifications filter".into(),
                    )),
                }
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::decode_raw;

    fn message(v: Value) -> RawMessage {
        match decode_raw(&bytes::Bytes::from(v.to_string())).unwrap() {
            crate::jsonrpc::RawDecoded::Single(m) => m,
            crate::jsonrpc::RawDecoded::Batch(_) => unreachable!(),
        }
    }

    fn tools() -> ListenFilter {
        ListenFilter { tools_list_changed: true, ..ListenFilter::default() }
    }

    /// An ended stream is reopened after a back-off that doubles up to a minute and drops back
    /// to a second once the server acknowledges a stream.
    #[test]
    fn back_off_doubles_to_its_cap_and_resets_on_acknowledgement() {
        let t0 = crate::fuzzing::epoch();
        let mut l = ListenStream::default();
        assert_eq!(l.want(tools()), None);
        let mut waits = Vec::new();
        for n in 0..8 {
            l.opened(RequestId::new(n), tools());
            l.ended(Some(t0));
            waits.push(l.due().unwrap() - t0);
            assert!(!l.tick(t0), "not before the back-off");
            assert!(l.tick(l.due().unwrap()));
            assert_eq!(l.due(), None);
        }
        let secs: Vec<u64> = waits.iter().map(Duration::as_secs).collect();
        assert_eq!(secs, [1, 2, 4, 8, 16, 32, 60, 60]);
        l.opened(RequestId::new(9), tools());
        let ack = message(json!({"jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {"notifications": {"toolsListChanged": true},
                       "_meta": {modern::META_SUBSCRIPTION_ID: 9}}}));
        let route = l.route(&ack, Some(t0));
        assert_eq!(route, Route::Acknowledged { granted: Some(tools()), asked: tools() });
        l.ended(Some(t0));
        assert_eq!(l.due(), Some(t0 + LISTEN_BACKOFF_MIN));
    }

    /// Notifications tagged with an older stream's id are consumed (dropped); the open
    /// stream's are delivered; untagged ones are not the stream's business.
    #[test]
    fn only_the_open_streams_notifications_are_delivered() {
        let mut l = ListenStream::default();
        l.want(tools());
        l.opened(RequestId::new(5), tools());
        let tagged = |id: i64| {
            message(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                "params": {"_meta": {modern::META_SUBSCRIPTION_ID: id}}}))
        };
        assert_eq!(l.route(&tagged(4), None), Route::Consumed);
        assert_eq!(l.route(&tagged(5), None), Route::Deliver);
        let plain = message(json!({"jsonrpc": "2.0", "method": "notifications/message"}));
        assert_eq!(l.route(&plain, None), Route::NotOurs);
        let other = message(json!({"jsonrpc": "2.0", "id": 6, "result": {}}));
        assert_eq!(l.route(&other, None), Route::NotOurs);
        let end = message(json!({"jsonrpc": "2.0", "id": 5, "result": {}}));
        assert_eq!(l.route(&end, None), Route::Consumed);
        assert_eq!(l.id(), None);
    }

    /// Replacing the filter names the open stream to cancel and forgets a pending reopening;
    /// an empty filter wants no stream, so an ending one is not reopened.
    #[test]
    fn replacing_or_emptying_the_filter() {
        let t0 = crate::fuzzing::epoch();
        let mut l = ListenStream::default();
        l.want(tools());
        l.opened(RequestId::new(1), tools());
        assert_eq!(l.want(ListenFilter::default()), Some(RequestId::new(1)));
        assert_eq!(l.wanted(), None);
        l.ended(Some(t0));
        assert_eq!(l.due(), None, "nothing wanted, nothing reopened");
        l.want(tools());
        l.opened(RequestId::new(2), tools());
        let cancel = message(json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 2}}));
        assert_eq!(l.route(&cancel, Some(t0)), Route::Deliver, "the session still sees it");
        assert_eq!(l.due(), Some(t0 + LISTEN_BACKOFF_MIN));
        l.close();
        assert_eq!((l.id(), l.wanted(), l.due()), (None, None, None));
    }
}
