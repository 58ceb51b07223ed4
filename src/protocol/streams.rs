//! The session's long-lived exchanges of its own: the 2026-07-28 `subscriptions/listen`
//! stream (opened with the application's filter, demultiplexed by subscription id, reopened
//! with back-off when it ends) and the keep-alive ping.

use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::jsonrpc::{self, Id, RawMessage};

use super::modern;
use super::{Event, Session, Transmit, TransmitKind, Violation};

/// The first and the longest wait before an ended `subscriptions/listen` stream is reopened.
pub(super) const LISTEN_BACKOFF_MIN: Duration = Duration::from_secs(1);
pub(super) const LISTEN_BACKOFF_MAX: Duration = Duration::from_secs(60);

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

/// The open `subscriptions/listen` of a 2026-07-28 session.
#[derive(Debug, Clone)]
pub(super) struct Listen {
    pub(super) id: i64,
    pub(super) filter: ListenFilter,
}

impl<T> Session<T> {
    /// When the keep-alive next needs attention: the ping's deadline while one is in flight,
    /// else the moment the server will have been silent for the interval.
    pub(super) fn keepalive_due(&self) -> Option<Instant> {
        let interval = self.config.keep_alive?;
        if !self.state.is_active() {
            return None;
        }
        match self.keepalive {
            Some((_, sent)) => Some(sent + self.config.request_timeout),
            None => self.idle_since.map(|t| t + interval),
        }
    }

    /// Sends the keep-alive ping when the server has been silent for the interval, and reports
    /// one that went unanswered.
    pub(super) fn keepalive_tick(&mut self, now: Instant) {
        let Some(due) = self.keepalive_due() else { return };
        if now < due {
            return;
        }
        if let Some((id, _)) = self.keepalive.take() {
            self.stats.keepalive_timeouts += 1;
            self.remember_abandoned(id);
            let silent_for = now - self.last_received.unwrap_or(now);
            self.idle_since = Some(now);
            self.events.push_back(Event::Unresponsive { silent_for });
            return;
        }
        let id = self.next_id;
        self.next_id += 1;
        let (line, method) = match self.modern() {
            Some(version) => (
                modern::encode_with_meta(id, "server/discover", None, self.meta_json(version))
                    .expect("no params to splice into"),
                "server/discover",
            ),
            None => (jsonrpc::encode_request(&Id::Number(id), "ping", None), "ping"),
        };
        let kind = TransmitKind::Request { method: method.into(), id };
        self.transmit.push_back(Transmit { bytes: line.into(), kind });
        self.stats.requests += 1;
        self.stats.keepalive_pings += 1;
        self.keepalive = Some((id, now));
    }

    /// 2026-07-28: (re)opens the `subscriptions/listen` stream with `filter` (docs/protocol.md,
    /// "Resources, prompts, completion, logging"): the open one, if any, is cancelled first (`notifications/cancelled`; over
    /// HTTP that closes its stream), and an empty filter leaves none open. The stream has no
    /// deadline; its notifications carry its id in `_meta` subscriptionId, and those of an
    /// older stream are dropped. Ignored in the legacy era (`resources/subscribe` there).
    ///
    /// A stream that ends (the server closes it, or it breaks) is reopened with the same
    /// filter after a back-off (1 s, doubling up to a minute, back to 1 s once acknowledged).
    pub fn listen(&mut self, filter: ListenFilter, now: Instant) {
        self.clock = Some(now);
        if self.modern().is_none() {
            return;
        }
        if let Some(old) = self.listen.take() {
            self.notify_cancelled(old.id, "subscription replaced");
            self.remember_abandoned(old.id);
        }
        self.listen_retry = None;
        self.listen_backoff = LISTEN_BACKOFF_MIN;
        self.listen_wanted = (!filter.is_empty()).then_some(filter);
        self.open_listen();
    }

    /// Sends `subscriptions/listen` with the wanted filter.
    pub(super) fn open_listen(&mut self) {
        let Some(version) = self.modern() else { return };
        let Some(filter) = self.listen_wanted.clone() else { return };
        let id = self.next_id;
        self.next_id += 1;
        let body = json!({ "notifications": filter }).to_string();
        let body = RawValue::from_string(body).expect("serde_json output is JSON");
        let meta = self.meta_json(version);
        let line = modern::encode_with_meta(id, "subscriptions/listen", Some(&body), meta)
            .expect("an object");
        let kind = TransmitKind::Request { method: "subscriptions/listen".into(), id };
        self.transmit.push_back(Transmit { bytes: line.into(), kind });
        self.stats.requests += 1;
        self.listen = Some(Listen { id, filter });
    }

    /// The `subscriptions/listen` stream ended without the client asking: it is reopened after
    /// the back-off.
    pub(super) fn listen_ended(&mut self) {
        self.listen = None;
        // The clock was set by the input that brought the news (a stream only ends after
        // the session became active, so it always is).
        if self.listen_wanted.is_some()
            && let Some(now) = self.clock
        {
            self.listen_retry = Some(now + self.listen_backoff);
            self.listen_backoff = (self.listen_backoff * 2).min(LISTEN_BACKOFF_MAX);
        }
    }

    /// Reopens the `subscriptions/listen` stream when its back-off is over.
    pub(super) fn listen_tick(&mut self, now: Instant) {
        if self.listen_retry.is_some_and(|due| now >= due) {
            self.listen_retry = None;
            self.open_listen();
        }
    }

    /// The filter of the open `subscriptions/listen`, if one is open.
    pub fn listening(&self) -> Option<&ListenFilter> {
        self.listen.as_ref().map(|l| &l.filter)
    }

    /// Routes what belongs to the `subscriptions/listen` stream. Returns true when the message
    /// was consumed (a stale stream's notification, the stream's end).
    pub(super) fn on_listen_message(&mut self, msg: &RawMessage) -> bool {
        let listen_id = self.listen.as_ref().map(|l| l.id);
        match msg {
            RawMessage::Response(resp) => {
                // The server ended the stream (gracefully, or with an error).
                if let (Some(Id::Number(n)), Some(id)) = (&resp.id, listen_id)
                    && *n == id
                {
                    tracing::debug!("the server ended subscriptions/listen {id}");
                    self.listen_ended();
                    return true;
                }
                false
            }
            RawMessage::Notification(n) => {
                let params = n.params.as_ref();
                let cancelled = (n.method == "notifications/cancelled")
                    .then(|| params.and_then(|p| p.get("requestId")).and_then(Value::as_i64))
                    .flatten();
                if cancelled.is_some() && cancelled == listen_id {
                    // stdio: the server tears the subscription down.
                    self.listen_ended();
                    return false;
                }
                let tagged = params
                    .and_then(|p| p.get("_meta"))
                    .and_then(|m| m.get(modern::META_SUBSCRIPTION_ID))
                    .and_then(Value::as_i64);
                let Some(tagged) = tagged else { return false };
                if Some(tagged) != listen_id {
                    tracing::debug!("dropped {} of a closed subscription {tagged}", n.method);
                    return true;
                }
                if n.method == "notifications/subscriptions/acknowledged" {
                    self.listen_backoff = LISTEN_BACKOFF_MIN;
                    let granted = params
                        .and_then(|p| p.get("notifications"))
                        .and_then(|f| serde_json::from_value::<ListenFilter>(f.clone()).ok());
                    let asked = self.listen.as_ref().map(|l| l.filter.clone()).unwrap_or_default();
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
                }
                false
            }
            RawMessage::Request(_) => false,
        }
    }
}
