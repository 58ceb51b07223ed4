//! The sans-IO MCP client session: lifecycle, version negotiation, the pending-request table
//! with deadlines, and the answers a client owes the server.
//!
//! A [`Session`] never reads the clock or touches a file descriptor. The driver (the reactor)
//! feeds it and drains it in this order, each time something happens:
//!
//! ```text
//!   inputs                         session                       outputs
//!   handle_frame(bytes, now)  ──▶ ┌───────────┐ ──▶ poll_transmit() -> bytes for stdin
//!   handle_oversized(o)       ──▶ │  State +  │ ──▶ poll_event()    -> completions, notifications,
//!   handle_timeout(now)       ──▶ │  pending  │                        protocol violations
//!   handle_closed(reason)     ──▶ └───────────┘ ──▶ poll_timeout()  -> next deadline to wake at
//!   request(.., token)        ──▶
//! ```
//!
//! `T` is the caller's completion token (the host uses a oneshot sender); it is handed back in
//! [`Event::Completed`] exactly once per accepted request, whatever happens to the request.

#![forbid(unsafe_code)]

mod answers;
mod config;
mod error;
mod event;
mod handshake;
mod inflight;
mod keepalive;
mod lifecycle;
mod listen;
mod loan;
pub mod modern;
pub mod names;
mod rounds;
pub mod server;
mod transmit;
mod types;
mod version;

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::frame::{IdSniffer, Oversized};
use crate::jsonrpc::{self, DecodeError, ErrorObject, Id, RawDecoded, RawJson};

pub use config::{ClientFeatures, DEFAULT_REQUEST_TIMEOUT, SessionConfig};
pub use error::{CloseReason, Fault, IoFailure, RequestError, Violation};
pub use event::{Event, Progress, SessionStats};
pub use inflight::RequestId;
use inflight::{InFlight, Pending};
use keepalive::{KeepAlive, Tick};
pub use lifecycle::ServerDetails;
use lifecycle::State;
pub use listen::ListenFilter;
use listen::ListenStream;
pub use loan::Loan;
pub use modern::{Era, ParamHeader, param_header_value, param_headers};
use rounds::Rounds;
pub use transmit::{Transmit, TransmitKind};
pub use types::{
    CallToolResult, Content, GetPromptResult, Implementation, InitializeResult, Prompt,
    PromptMessage, ReadResourceResult, Resource, ResourceContents, Root, Tool,
};
pub use version::{ProtocolVersion, UnsupportedVersion};

/// The most `input_required` rounds one request may go through before it fails (a server
/// that keeps asking is not going to finish).
pub const MAX_INPUT_ROUNDS: u8 = 16;

/// The client side of one MCP connection, without I/O. See the module docs for the contract.
///
/// It composes smaller state machines, each in a module of its own with its own tests: the
/// requests in flight ([`inflight`]), the `input_required` rounds ([`rounds`]), the
/// `subscriptions/listen` stream ([`listen`]) and the keep-alive ([`keepalive`]).
#[derive(Debug)]
pub struct Session<T> {
    config: SessionConfig,
    state: State,
    next_id: i64,
    inflight: InFlight<T>,
    transmit: VecDeque<Transmit>,
    events: VecDeque<Event<T>>,
    stats: SessionStats,
    last_received: Option<Instant>,
    /// Server requests handed to the application and not answered yet.
    delegated: std::collections::HashSet<Id>,
    /// The latest time an input carried (`input_required` retries are sent "now").
    clock: Option<Instant>,
    /// 2026-07-28 `input_required` rounds (and 2025-11-25 -32042 ones).
    rounds: Rounds<T>,
    /// 2026-07-28: the level sent as `_meta` logLevel on every request (set through
    /// `logging/setLevel`, which that revision replaced by the per-request member).
    log_level: Option<String>,
    /// 2026-07-28: the `_meta` text spliced into every request, for the revision it names.
    meta_cache: Option<(ProtocolVersion, String)>,
    /// 2026-07-28: the `subscriptions/listen` stream.
    listen: ListenStream,
    keepalive: KeepAlive,
}

impl<T> Session<T> {
    /// A session in the `Uninitialized` state.
    pub fn new(config: SessionConfig) -> Self {
        let keepalive = KeepAlive::new(config.keep_alive);
        Session {
            config,
            state: State::Uninitialized,
            next_id: 1,
            inflight: InFlight::default(),
            transmit: VecDeque::new(),
            events: VecDeque::new(),
            stats: SessionStats::default(),
            last_received: None,
            delegated: std::collections::HashSet::new(),
            clock: None,
            rounds: Rounds::default(),
            log_level: None,
            meta_cache: None,
            listen: ListenStream::default(),
            keepalive,
        }
    }

    /// The id the next request will be sent with.
    fn peek_id(&self) -> RequestId {
        RequestId::new(self.next_id)
    }

    /// An id for a request sent outside [`send_line`](Self::send_line).
    fn take_id(&mut self) -> RequestId {
        let id = self.peek_id();
        self.next_id += 1;
        id
    }

    /// Queues a request. `params` is pre-serialised JSON (an object). `timeout` overrides the
    /// session's default.
    ///
    /// # Errors
    /// If the session is not `Active` (only `ping` may precede it), is closed, or has
    /// `max_pending` requests in flight; the token is handed back with the error.
    pub fn request(
        &mut self,
        method: &str,
        params: Option<&RawValue>,
        now: Instant,
        timeout: Option<Duration>,
        token: T,
    ) -> Result<RequestId, (T, RequestError)> {
        self.clock = Some(now);
        if let Err(e) = self.state.admits(method) {
            return Err((token, e));
        }
        if self.inflight.len() >= self.config.max_pending {
            return Err((token, RequestError::TooManyPending(self.config.max_pending)));
        }
        let id = self.peek_id();
        let Some(version) = self.modern() else {
            self.send_request(id, method, params, now, timeout, token);
            return Ok(id);
        };
        // 2026-07-28: `ping` and `logging/setLevel` are gone. A ping becomes the one request
        // every server must answer; the log level goes into every later request's `_meta`.
        let method = match method {
            "ping" => "server/discover",
            "logging/setLevel" => return self.set_log_level(params, token),
            "resources/subscribe" | "resources/unsubscribe" | "notifications/initialized" => {
                let reason = "not part of 2026-07-28 (resource updates come through \
                              subscriptions/listen, which ringmcp does not open yet)"
                    .to_owned();
                return Err((
                    token,
                    RequestError::InvalidRequest { method: method.into(), reason },
                ));
            }
            other => other,
        };
        // Encoded with the `_meta` spliced in, in one buffer (no re-serialising, no second scan).
        match modern::encode_with_meta(id, method, params, self.meta_json(version)) {
            Ok(line) => self.send_line(id, method, line.into(), now, timeout, token),
            Err(reason) => {
                return Err((
                    token,
                    RequestError::InvalidRequest { method: method.into(), reason },
                ));
            }
        }
        Ok(id)
    }

    /// `logging/setLevel` in 2026-07-28: remembered for `_meta`, answered at once.
    fn set_log_level(
        &mut self,
        params: Option<&RawValue>,
        token: T,
    ) -> Result<RequestId, (T, RequestError)> {
        let level = params
            .and_then(|p| serde_json::from_str::<Value>(p.get()).ok())
            .and_then(|p| p.get("level").and_then(Value::as_str).map(str::to_owned));
        let Some(level) = level else {
            let reason = "params must name a level".to_owned();
            return Err((
                token,
                RequestError::InvalidRequest { method: "logging/setLevel".into(), reason },
            ));
        };
        self.log_level = Some(level);
        self.meta_cache = None;
        let id = self.take_id();
        let outcome = Ok(RawJson::from_value(json!({})));
        self.events.push_back(Event::Completed { token, outcome });
        Ok(id)
    }

    /// As [`request`](Self::request), with `_meta.progressToken` set to the request's id:
    /// the server's `notifications/progress` for it become [`Event::Progress`], and each one
    /// pushes the deadline back by the timeout (up to
    /// [`SessionConfig::max_request_total`] after sending).
    ///
    /// # Errors
    /// As [`request`](Self::request); also when `params` is not a JSON object.
    pub fn request_with_progress(
        &mut self,
        method: &str,
        params: Option<&RawValue>,
        now: Instant,
        timeout: Option<Duration>,
        token: T,
    ) -> Result<RequestId, (T, RequestError)> {
        let id = self.peek_id();
        let text = params.map_or("{}", RawValue::get).trim_start();
        let Some(members) = text.strip_prefix('{') else {
            let reason = "params must be a JSON object".to_owned();
            return Err((token, RequestError::MalformedResult { method: method.into(), reason }));
        };
        let raw = if memchr::memmem::find(text.as_bytes(), b"\"_meta\"").is_none() {
            // No `_meta` yet: spliced in front of the members, nothing parsed.
            let members = members.trim_start();
            let sep = if members.starts_with('}') { "" } else { "," };
            format!(r#"{{"_meta":{{"progressToken":{id}}}{sep}{members}"#)
        } else {
            // A `_meta` (or the text of one) is there: merged the slow way.
            let mut value: Value = serde_json::from_str(text).unwrap_or_else(|_| json!({}));
            let object = value.as_object_mut().map(|o| o.entry("_meta").or_insert(json!({})));
            if let Some(meta) = object.and_then(Value::as_object_mut) {
                meta.insert("progressToken".into(), json!(id));
            }
            value.to_string()
        };
        let raw = RawValue::from_string(raw).expect("an object with the token spliced in");
        let id = self.request(method, Some(&raw), now, timeout, token)?;
        if let Some(p) = self.inflight.get_mut(id) {
            p.timeout = Some(timeout.unwrap_or(self.config.request_timeout));
        }
        Ok(id)
    }

    /// Routes a progress notification to its request, pushing its deadline back. Returns
    /// false when the token names no request of ours in flight (then it is dropped).
    fn on_progress(&mut self, params: Option<&Value>, now: Instant) -> bool {
        let Some(params) = params else { return false };
        let Some(origin) = params.get("progressToken").and_then(Value::as_i64) else {
            return false;
        };
        let origin = RequestId::new(origin);
        let Some(id) = self.current_id(origin) else { return false };
        let Some(p) = self.inflight.get(id) else { return false };
        let Some(timeout) = p.timeout else { return false };
        let Some(progress) = params.get("progress").and_then(Value::as_f64) else { return false };
        let cap = p.sent + self.config.max_request_total;
        self.inflight.extend(id, (now + timeout).min(cap));
        let total = params.get("total").and_then(Value::as_f64);
        let message = params.get("message").and_then(Value::as_str).map(str::to_owned);
        self.events.push_back(Event::Progress {
            id: origin,
            progress: Progress { progress, total, message },
        });
        true
    }

    /// The id request `origin` is in flight under now (a 2026-07-28 retry has a new one).
    fn current_id(&self, origin: RequestId) -> Option<RequestId> {
        match self.inflight.get(origin) {
            Some(p) if p.origin == origin => Some(origin),
            _ => self.rounds.reissued(origin),
        }
    }

    fn send_request(
        &mut self,
        id: RequestId,
        method: &str,
        params: Option<&RawValue>,
        now: Instant,
        timeout: Option<Duration>,
        token: T,
    ) {
        let line = jsonrpc::encode_request(&Id::Number(id.get()), method, params);
        self.send_line(id, method, line.into(), now, timeout, token);
    }

    /// Queues an encoded request line (`id`, `method`) and enters it in the pending table.
    fn send_line(
        &mut self,
        id: RequestId,
        method: &str,
        line: Bytes,
        now: Instant,
        timeout: Option<Duration>,
        token: T,
    ) {
        self.next_id += 1;
        let method: std::sync::Arc<str> = method.into();
        let kind = TransmitKind::Request { method: method.clone(), id };
        self.transmit.push_back(Transmit { bytes: line.clone(), kind });
        self.enter(id, method, line, now, timeout, token);
    }

    /// Enters a request sent at `sent` (by the session, or by its caller under a loan) in the
    /// pending table.
    fn enter(
        &mut self,
        id: RequestId,
        method: std::sync::Arc<str>,
        line: Bytes,
        sent: Instant,
        timeout: Option<Duration>,
        token: T,
    ) {
        let deadline = sent + timeout.unwrap_or(self.config.request_timeout);
        // Kept for a retry: a 2026-07-28 `input_required`, or a -32042 (URL elicitation
        // required) when URL elicitation is declared.
        let kept =
            (self.modern().is_some() || self.config.features.elicitation_url).then_some(line);
        let pending = Pending {
            method,
            sent,
            deadline,
            token,
            timeout: None,
            origin: id,
            line: kept,
            rounds: 0,
        };
        self.inflight.insert(id, pending);
        self.stats.requests += 1;
    }

    /// Queues a notification to the server.
    pub fn notify(&mut self, method: &str, params: Option<Value>) {
        let line = jsonrpc::encode_notification(method, params).expect("Value serialises");
        let kind = TransmitKind::Notification { method: method.into(), cancels: None };
        self.transmit.push_back(Transmit { bytes: line.into(), kind });
    }

    /// Queues `notifications/cancelled` for our request `id` (typed, so a transport can act on
    /// the cancellation without reading the line).
    fn notify_cancelled(&mut self, id: RequestId, reason: &str) {
        let params = json!({"requestId": id, "reason": reason});
        let line = jsonrpc::encode_notification("notifications/cancelled", Some(params))
            .expect("Value serialises");
        let method = "notifications/cancelled".into();
        let kind = TransmitKind::Notification { method, cancels: Some(id) };
        self.transmit.push_back(Transmit { bytes: line.into(), kind });
    }

    /// Feeds one frame received from the server. Only the envelope is decoded here; a
    /// response's `result` stays a raw slice of `frame` for the caller to parse.
    pub fn handle_frame(&mut self, frame: &Bytes, now: Instant) {
        let decoded = jsonrpc::decode_raw(frame);
        self.handle_decoded(frame, decoded, now);
    }

    /// Feeds one frame that was already parsed (e.g. on a worker pool). `frame` is only read
    /// when `decoded` is an error, to report it and to find the request it answered.
    pub fn handle_decoded(
        &mut self,
        frame: &[u8],
        decoded: Result<RawDecoded, DecodeError>,
        now: Instant,
    ) {
        self.stats.frames += 1;
        self.last_received = Some(now);
        self.keepalive.heard(now);
        self.clock = Some(now);
        match decoded {
            Ok(RawDecoded::Single(msg)) => self.dispatch(msg),
            Ok(RawDecoded::Batch(items)) => {
                for item in items {
                    match item {
                        Ok(msg) => self.dispatch(msg),
                        Err(e) => self.violation(Violation::InvalidMessage(e.to_string())),
                    }
                }
            }
            Err(e) => {
                let reason = e.to_string();
                match e {
                    DecodeError::Json(_) => {
                        let preview = String::from_utf8_lossy(&frame[..frame.len().min(80)]);
                        let preview = preview.into_owned();
                        let len = frame.len();
                        self.violation(Violation::NotJson { error: reason.clone(), len, preview });
                    }
                    _ => self.violation(Violation::InvalidMessage(reason.clone())),
                }
                self.fail_unreadable_answer(frame, reason);
            }
        }
    }

    /// A frame that does not decode may still name the request it answers (e.g. a result with a
    /// number beyond f64 range): fail that request now rather than let it run into its timeout.
    fn fail_unreadable_answer(&mut self, frame: &[u8], reason: String) {
        let mut sniffer = IdSniffer::new();
        sniffer.feed(frame);
        self.fail_by_token(sniffer.id(), |method| RequestError::MalformedResult { method, reason });
    }

    /// Fails the pending request whose id is the raw JSON `token`, with the error `make`
    /// builds from its method. Returns whether there was one.
    fn fail_by_token(
        &mut self,
        token: Option<&[u8]>,
        make: impl FnOnce(String) -> RequestError,
    ) -> bool {
        let Some(Id::Number(n)) = token.and_then(Id::from_token) else { return false };
        let id = RequestId::new(n);
        if let Some(p) = self.inflight.get(id) {
            let method = p.method.to_string();
            self.complete(id, Err(make(method)));
            return true;
        }
        if self.listen.id() == Some(id) {
            // The listen stream broke (HTTP) or its answer was unreadable: reopen it later.
            self.listen.ended(self.clock);
            return true;
        }
        // The keep-alive ping could not be sent or read: the next one follows.
        self.keepalive.settle(id)
    }

    /// Reports a line the framer discarded for being over the limit: the request it answered
    /// (if its id could be sniffed) fails with [`RequestError::FrameTooLarge`].
    pub fn handle_oversized(&mut self, oversized: &Oversized) {
        let (len, max) = (oversized.len, self.config.max_frame);
        if !self
            .fail_by_token(oversized.id.as_deref(), |_| RequestError::FrameTooLarge { len, max })
        {
            self.violation(Violation::OversizedWithoutId { len, max });
        }
    }

    /// Fails the request an answer was for (by its raw id token, when one was found) with
    /// `error`; an answer that names no pending request is a violation.
    pub fn handle_failed_answer(&mut self, id: Option<&[u8]>, error: RequestError) {
        let message = error.to_string();
        if !self.fail_by_token(id, |_| error) {
            self.violation(Violation::InvalidMessage(message));
        }
    }

    /// Reports that stdout ended inside a line of `len` bytes.
    pub fn handle_truncated(&mut self, len: u64) {
        self.violation(Violation::TruncatedLine(len));
    }

    /// Expires every request whose deadline is at or before `now`: each completes with
    /// [`RequestError::Timeout`] and the server is sent `notifications/cancelled` (except for
    /// `initialize`, which MUST NOT be cancelled; its timeout closes the session).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.clock = Some(now);
        while let Some(id) = self.inflight.next_expired(now) {
            let Some(p) = self.inflight.get(id) else { continue };
            let error = RequestError::Timeout { method: p.method.to_string(), after: now - p.sent };
            self.stats.timeouts += 1;
            let probe = matches!(self.state, State::Discovering { request, .. } if request == id);
            if &*p.method != "initialize" && !probe {
                let reason = format!("timed out after {:?}", now - p.sent);
                self.notify_cancelled(id, &reason);
            }
            self.complete(id, Err(error));
            self.inflight.abandon(id);
        }
        self.keepalive_tick(now);
        self.listen_tick(now);
    }

    /// Sends the keep-alive ping when the server has been silent for the interval, and reports
    /// one that went unanswered.
    fn keepalive_tick(&mut self, now: Instant) {
        let active = self.state.is_active();
        match self.keepalive.tick(now, active, self.config.request_timeout) {
            Tick::Wait => {}
            Tick::Unanswered(id) => {
                self.stats.keepalive_timeouts += 1;
                self.inflight.abandon(id);
                let silent_for = now - self.last_received.unwrap_or(now);
                self.events.push_back(Event::Unresponsive { silent_for });
            }
            Tick::Ping => {
                let id = self.take_id();
                let (line, method) = match self.modern() {
                    Some(version) => (
                        modern::encode_with_meta(
                            id,
                            "server/discover",
                            None,
                            self.meta_json(version),
                        )
                        .expect("no params to splice into"),
                        "server/discover",
                    ),
                    None => (jsonrpc::encode_request(&Id::Number(id.get()), "ping", None), "ping"),
                };
                let kind = TransmitKind::Request { method: method.into(), id };
                self.transmit.push_back(Transmit { bytes: line.into(), kind });
                self.stats.requests += 1;
                self.stats.keepalive_pings += 1;
                self.keepalive.sent(id, now);
            }
        }
    }

    /// The earliest pending deadline, if any: the driver calls [`handle_timeout`] then.
    ///
    /// [`handle_timeout`]: Self::handle_timeout
    pub fn poll_timeout(&mut self) -> Option<Instant> {
        // The keep-alive and the listen stream's reopening have timers of their own.
        let keepalive = self.keepalive.due(self.state.is_active(), self.config.request_timeout);
        [keepalive, self.listen.due(), self.inflight.earliest()].into_iter().flatten().min()
    }

    /// The connection is over: every pending request fails with `reason`, now and later.
    pub fn handle_closed(&mut self, reason: CloseReason) {
        let state = std::mem::replace(&mut self.state, State::Uninitialized);
        self.state = state.close(reason.clone());
        for id in self.inflight.ids() {
            self.complete(id, Err(RequestError::Closed(reason.clone())));
            // A server still running (stdin closed, not yet exited) may answer it yet.
            self.inflight.abandon(id);
        }
        for token in self.rounds.close() {
            let outcome = Err(RequestError::Closed(reason.clone()));
            self.events.push_back(Event::Completed { token, outcome });
        }
        // Servers answer an open subscriptions/listen when their input ends: a late answer.
        if let Some(id) = self.listen.id() {
            self.inflight.abandon(id);
        }
        self.listen.close();
        self.inflight.clear_deadlines();
    }

    /// The next line to write to the server, and what it is.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        self.transmit.pop_front()
    }

    /// The next event for the driver.
    pub fn poll_event(&mut self) -> Option<Event<T>> {
        self.events.pop_front()
    }

    /// What the handshake established, once `Active`.
    pub fn server(&self) -> Option<&ServerDetails> {
        match &self.state {
            State::Active(details) => Some(details),
            _ => None,
        }
    }

    /// Why the session closed, if it did.
    pub fn close_reason(&self) -> Option<&CloseReason> {
        match &self.state {
            State::Closed(reason) => Some(reason),
            _ => None,
        }
    }

    /// Requests in flight.
    pub fn pending(&self) -> usize {
        self.inflight.len()
    }

    /// When the last frame arrived (liveness, for keep-alive decisions).
    pub fn last_received(&self) -> Option<Instant> {
        self.last_received
    }

    /// Counters.
    pub fn stats(&self) -> SessionStats {
        self.stats
    }

    /// The session's settings.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// Replaces the roots answered to `roots/list` and tells the server
    /// (`notifications/roots/list_changed`, as the declared `roots.listChanged` promises).
    /// Ignored when the session was configured without roots (the capability was not
    /// declared, so the server must not be told).
    pub fn set_roots(&mut self, roots: Vec<Root>) {
        if self.config.roots.is_none() {
            return;
        }
        self.config.roots = Some(roots);
        // 2026-07-28 has no such notification: the roots go with the next input request.
        if self.state.is_active() && self.modern().is_none() {
            self.notify("notifications/roots/list_changed", None);
        }
    }

    /// Answers a server request delivered as [`Event::ServerRequest`]. Ignored when the server
    /// cancelled it meanwhile, or when `id` is not one we are waiting on.
    ///
    /// `now` matters for an input of a 2026-07-28 round (or a -32042 URL elicitation): once the
    /// last one is in, the request is re-sent, with its deadline counted from `now`.
    pub fn respond(&mut self, id: &Id, outcome: Result<Value, ErrorObject>, now: Instant) {
        self.clock = Some(now);
        if let Some((origin, key)) = self.rounds.take_input(id) {
            self.on_input(origin, key, outcome);
            return;
        }
        if !self.delegated.remove(id) {
            return;
        }
        let line = match outcome {
            Ok(result) => jsonrpc::encode_result(id, result).expect("Value serialises"),
            Err(error) => jsonrpc::encode_error(Some(id), &error),
        };
        self.transmit.push_back(Transmit { bytes: line.into(), kind: TransmitKind::Response });
    }

    /// Cancels request `id` for a caller that stopped waiting: the server is sent
    /// `notifications/cancelled` (never for `initialize`), the request leaves the pending table
    /// and its token is handed back (no [`Event::Completed`] follows), and a late answer is
    /// discarded and counted in [`SessionStats::late_answers`].
    pub fn cancel(&mut self, id: RequestId, reason: &str) -> Option<T> {
        if let Some(token) = self.rounds.cancel(id) {
            // Waiting for the application's input: nothing is in flight at the server.
            self.stats.cancelled += 1;
            return Some(token);
        }
        let origin = id;
        let id = self.current_id(origin)?;
        if self.inflight.get(id).is_none_or(|p| &*p.method == "initialize") {
            return None;
        }
        if matches!(self.state, State::Discovering { request, .. } if request == id) {
            return None;
        }
        let p = self.inflight.remove(id)?;
        self.rounds.forget(origin);
        self.notify_cancelled(id, reason);
        self.stats.cancelled += 1;
        self.inflight.abandon(id);
        Some(p.token)
    }

    fn violation(&mut self, v: Violation) {
        self.stats.violations += 1;
        self.events.push_back(Event::Violation(v));
    }
}

#[cfg(test)]
mod tests;
