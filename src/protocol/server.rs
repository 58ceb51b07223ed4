//! The server side of one MCP connection, without I/O: the mirror of [`Session`](super::Session)
//! for hosts that *are* MCP servers (the reference server, the aggregating gateway).
//!
//! A [`ServerSession`] negotiates the revision (`initialize` for 2024-11-05 … 2025-11-25, with a
//! counter-offer of the latest one it speaks when the client asks for another; `server/discover`
//! and per-request `_meta` for the stateless 2026-07-28), refuses what may not come before the
//! handshake, hands every other request to the application as [`Incoming::Request`] and sends
//! exactly one answer for it ([`respond`](ServerSession::respond); none once the client
//! cancelled it), and sends the server's own requests to the client (sampling, elicitation,
//! roots) only when the client declared the capability, each with a deadline. Like the client
//! session it reads no clock and touches no file descriptor: the driver feeds it frames and
//! time, and drains lines to write and events to act on.

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use serde_json::{Value, json};

use crate::frame::IdSniffer;
use crate::jsonrpc::{self, Decoded, ErrorObject, Id, Message, Request, Response, codes};

use super::modern::META_PROTOCOL_VERSION;
use super::version::ProtocolVersion;

mod answer;
mod config;
mod handshake;
mod listen;
mod rounds;
mod transmit;

use config::CACHEABLE;
pub use config::{CacheHints, ServerConfig};
pub use listen::Listenable;
use listen::Listeners;
use rounds::Rounds;
pub use rounds::{InputResponses, ROUND_WAIT};
pub use transmit::{Origin, ServerTransmit, ServerTransmitKind};

/// Something the application must act on.
#[derive(Debug, PartialEq)]
pub enum Incoming<T> {
    /// The handshake ended (`notifications/initialized`, or the first stateless request):
    /// the revision, and what the client said of itself.
    Initialized {
        /// The negotiated revision.
        version: ProtocolVersion,
        /// The client's `clientInfo`.
        client_info: Value,
        /// The client's capabilities.
        capabilities: Value,
    },
    /// A request to answer (with [`ServerSession::respond`]).
    Request {
        /// Its id.
        id: Id,
        /// Its method.
        method: String,
        /// Its params.
        params: Option<Value>,
        /// The revision it was sent in (2026-07-28 requests carry theirs).
        version: ProtocolVersion,
    },
    /// The retry of a 2026-07-28 request this session answered with
    /// [`input_required`](ServerSession::input_required): a request to answer, like
    /// [`Request`](Self::Request), with the answers to the round's input requests.
    Retry {
        /// Its id.
        id: Id,
        /// Its method.
        method: String,
        /// Its params (`inputResponses` and `requestState` included).
        params: Option<Value>,
        /// The revision it was sent in.
        version: ProtocolVersion,
        /// The `requestState` the round was handed out with.
        state: String,
        /// The answer to each of the round's input requests.
        responses: InputResponses,
    },
    /// A round handed out with `requestState` `state` was not retried in time (forget what
    /// was kept for it).
    RoundExpired {
        /// The round's `requestState`.
        state: String,
    },
    /// A notification (`notifications/cancelled` of a request in flight comes as
    /// [`Cancelled`](Self::Cancelled) instead; of any other id, as a notification).
    Notification {
        /// Its method.
        method: String,
        /// Its params.
        params: Option<Value>,
    },
    /// The client cancelled request `id`: stop working on it; no answer will be sent.
    Cancelled {
        /// The request.
        id: Id,
        /// Why, when the client said.
        reason: Option<String>,
    },
    /// The answer to one of the server's own requests (or its timeout).
    Answer {
        /// The token it was sent with.
        token: T,
        /// The client's result, or the error (a timeout is -32001).
        outcome: Result<Value, ErrorObject>,
    },
    /// A message that breaks the protocol (answered with an error when it was a request).
    Violation(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    AwaitingInitialize,
    /// `initialize` answered, `notifications/initialized` not yet seen.
    Initializing(ProtocolVersion),
    Ready(ProtocolVersion),
}

/// A request of the client's handed out and not answered yet.
#[derive(Debug)]
struct Open {
    method: String,
    version: ProtocolVersion,
    /// The client's id, when the request is keyed by one of the session's own (a scoped
    /// [`Origin`]).
    wire: Option<Id>,
    /// The driver's stream it came on.
    stream: Option<u64>,
    /// Its progress token as the server sees it (the key of `tokens`).
    token: Option<String>,
}

impl Open {
    /// The client's id of the request keyed `key`.
    fn wire(&self, key: &Id) -> Id {
        self.wire.clone().unwrap_or_else(|| key.clone())
    }
}

/// The server side of one connection. `T` is the application's token for each of its own
/// requests.
#[derive(Debug)]
pub struct ServerSession<T> {
    config: ServerConfig,
    phase: Phase,
    client_info: Value,
    client_capabilities: Value,
    /// Requests of the client handed out and not answered yet, by the key the application
    /// knows them by.
    open: HashMap<Id, Open>,
    /// Progress tokens of the open requests, as the server sees them (JSON text): the
    /// request's key, and the client's token when it was replaced by one of the session's.
    tokens: HashMap<String, (Id, Option<Value>)>,
    /// Keys handed out for scoped requests.
    next_key: u64,
    /// Where the frame being handled came from.
    origin: Option<Origin>,
    /// Answers each stream still waits for (open requests and answers not polled yet).
    owed: HashMap<u64, usize>,
    /// The revision of the latest request (stateless clients have no handshake).
    seen: Option<ProtocolVersion>,
    listeners: Listeners,
    rounds: Rounds,
    /// The server's requests in flight: token, deadline, method.
    pending: HashMap<i64, (T, Instant, String)>,
    next_id: i64,
    transmit: VecDeque<ServerTransmit>,
    events: VecDeque<Incoming<T>>,
}

impl<T> ServerSession<T> {
    /// A session waiting for its client.
    pub fn new(config: ServerConfig) -> Self {
        ServerSession {
            config,
            phase: Phase::AwaitingInitialize,
            client_info: Value::Null,
            client_capabilities: json!({}),
            open: HashMap::new(),
            tokens: HashMap::new(),
            next_key: 0,
            origin: None,
            owed: HashMap::new(),
            seen: None,
            listeners: Listeners::default(),
            rounds: Rounds::default(),
            pending: HashMap::new(),
            next_id: 1,
            transmit: VecDeque::new(),
            events: VecDeque::new(),
        }
    }

    /// The negotiated revision, once there is one.
    pub fn version(&self) -> Option<ProtocolVersion> {
        match self.phase {
            Phase::AwaitingInitialize => None,
            Phase::Initializing(v) | Phase::Ready(v) => Some(v),
        }
    }

    /// Entries the session holds for the client's requests and its own (open requests, their
    /// progress tokens, streams owed answers, parked rounds, listen streams, requests in
    /// flight, queued transmits and events): what bounds its memory. Fuzzing checks that it
    /// comes back to the listen streams alone once everything is answered and timed out.
    #[doc(hidden)]
    pub fn footprint(&self) -> usize {
        self.open.len()
            + self.tokens.len()
            + self.owed.len()
            + self.rounds.len()
            + self.listeners.len()
            + self.pending.len()
            + self.transmit.len()
            + self.events.len()
    }

    /// Listen streams open (see [`footprint`](Self::footprint)).
    #[doc(hidden)]
    pub fn listen_streams(&self) -> usize {
        self.listeners.len()
    }

    /// The revision of the client's latest request (a stateless client has no handshake).
    pub fn latest_version(&self) -> Option<ProtocolVersion> {
        self.seen
    }

    /// The client's capabilities (`{}` before the handshake).
    pub fn client_capabilities(&self) -> &Value {
        &self.client_capabilities
    }

    /// The next line to write to the client, and what it is.
    pub fn poll_transmit(&mut self) -> Option<ServerTransmit> {
        let mut t = self.transmit.pop_front()?;
        if let (ServerTransmitKind::Response { ends_stream, .. }, Some(stream)) =
            (&mut t.kind, t.stream)
        {
            *ends_stream = self.settle(stream);
        }
        Some(t)
    }

    /// One answer of `stream` is out (or will never come); `true` when it was the last owed.
    fn settle(&mut self, stream: u64) -> bool {
        let Some(owed) = self.owed.get_mut(&stream) else { return true };
        *owed = owed.saturating_sub(1);
        if *owed == 0 {
            self.owed.remove(&stream);
            return true;
        }
        false
    }

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<Incoming<T>> {
        self.events.pop_front()
    }

    /// Feeds one frame (a line without its newline).
    pub fn handle_frame(&mut self, frame: &[u8], now: Instant) {
        self.handle_frame_from(frame, None, now);
    }

    /// Feeds one frame that came on one of the driver's streams: what answers it carries the
    /// stream back ([`ServerTransmit::stream`]).
    pub fn handle_frame_from(&mut self, frame: &[u8], origin: Option<Origin>, now: Instant) {
        let _ = now;
        self.origin = origin;
        self.decode(frame);
        self.origin = None;
    }

    fn decode(&mut self, frame: &[u8]) {
        match jsonrpc::decode(frame) {
            Ok(Decoded::Single(m)) => self.message(m),
            Ok(Decoded::Batch(items)) => {
                for item in items {
                    match item {
                        Ok(m) => self.message(m),
                        Err(e) => self.error(None, ErrorObject::from(&e)),
                    }
                }
            }
            Err(e) if !matches!(e, jsonrpc::DecodeError::Json(_)) && jsonrpc::is_answer(frame) => {
                // An answer, even a malformed one, is never answered (two peers doing so would
                // answer each other forever).
                self.events.push_back(Incoming::Violation(e.to_string()));
            }
            Err(e) => {
                let id = match e {
                    jsonrpc::DecodeError::Json(_) => None,
                    _ => {
                        let mut sniffer = IdSniffer::new();
                        sniffer.feed(frame);
                        sniffer.id().and_then(Id::from_token)
                    }
                };
                self.events.push_back(Incoming::Violation(e.to_string()));
                self.error(id.as_ref(), ErrorObject::from(&e));
            }
        }
    }

    fn message(&mut self, message: Message) {
        match message {
            Message::Request(r) => self.request_in(r),
            Message::Notification(n) => match n.method.as_str() {
                "notifications/initialized" => {
                    if let Phase::Initializing(version) = self.phase {
                        self.phase = Phase::Ready(version);
                        self.seen = Some(version);
                        self.events.push_back(Incoming::Initialized {
                            version,
                            client_info: self.client_info.clone(),
                            capabilities: self.client_capabilities.clone(),
                        });
                    }
                }
                "notifications/cancelled" => {
                    let params = n.params.as_ref();
                    let id = params.and_then(|p| p.get("requestId")).cloned();
                    let id = id.and_then(|v| serde_json::from_value::<Id>(v).ok());
                    match id {
                        Some(id) if let Some(open) = self.close(&id) => {
                            if let Some(stream) = open.stream
                                && self.settle(stream)
                            {
                                self.transmit.push_back(ServerTransmit {
                                    bytes: bytes::Bytes::new(),
                                    kind: ServerTransmitKind::StreamEnd,
                                    stream: Some(stream),
                                });
                            }
                            self.listeners.close(&id);
                            let reason = params
                                .and_then(|p| p.get("reason"))
                                .and_then(Value::as_str)
                                .map(str::to_owned);
                            self.events.push_back(Incoming::Cancelled { id, reason });
                        }
                        // A request already answered (or answered by the application
                        // itself), or never seen: nothing to stop, but the application may
                        // want to know.
                        _ => {
                            let (method, params) = (n.method, n.params);
                            self.events.push_back(Incoming::Notification { method, params });
                        }
                    }
                }
                _ => {
                    let (method, params) = (n.method, n.params);
                    self.events.push_back(Incoming::Notification { method, params });
                }
            },
            Message::Response(r) => self.answer_in(r),
        }
    }

    fn request_in(&mut self, r: Request) {
        let Request { id, method, params } = r;
        let scoped = self.origin.is_some_and(|o| o.scoped);
        if !scoped && self.open.contains_key(&id) {
            let error = ErrorObject::new(codes::INVALID_REQUEST, "Duplicate request id");
            return self.error(Some(&id), error);
        }
        let stateless = match self.stateless_version(params.as_ref()) {
            Ok(v) => v,
            Err(error) => return self.error(Some(&id), error),
        };
        let modern_only = self.config.versions.iter().all(|v| v.is_modern());
        match method.as_str() {
            // Gone in 2026-07-28 (the handshake, ping, and what moved into `_meta` or
            // `subscriptions/listen`).
            "initialize"
            | "ping"
            | "logging/setLevel"
            | "resources/subscribe"
            | "resources/unsubscribe"
                if stateless.is_some() =>
            {
                let error = ErrorObject::new(
                    codes::METHOD_NOT_FOUND,
                    format!(
                        "Method not found: {method} is not part of {}",
                        stateless.expect("matched").as_str()
                    ),
                );
                self.error(Some(&id), error)
            }
            // 2026-07-28 has no ping; a legacy request of it is answered.
            "ping" => self.result(&id, json!({})),
            "initialize" => self.initialize(&id, params),
            "server/discover" if self.modern_versions().next().is_some() => {
                if stateless.is_none() {
                    let error = ErrorObject::new(
                        codes::INVALID_PARAMS,
                        format!(
                            "server/discover needs params._meta with {META_PROTOCOL_VERSION} and {}",
                            super::modern::META_CLIENT_CAPABILITIES
                        ),
                    );
                    return self.error(Some(&id), error);
                }
                let result = self.discover();
                self.result(&id, result);
            }
            _ if modern_only && stateless.is_none() => {
                let error = ErrorObject::new(
                    codes::INVALID_PARAMS,
                    format!(
                        "This server speaks only 2026-07-28: params._meta must carry {META_PROTOCOL_VERSION} and {}",
                        super::modern::META_CLIENT_CAPABILITIES
                    ),
                );
                self.error(Some(&id), error)
            }
            _ => {
                let version = match (stateless, self.phase) {
                    (Some(v), _) => {
                        if self.phase == Phase::AwaitingInitialize {
                            // Stateless: each request carries the client's capabilities.
                            let meta = params.as_ref().and_then(|p| p.get("_meta"));
                            let caps = meta
                                .and_then(|m| m.get(super::modern::META_CLIENT_CAPABILITIES))
                                .cloned()
                                .unwrap_or(json!({}));
                            self.client_capabilities = caps;
                        }
                        v
                    }
                    (None, Phase::Initializing(v) | Phase::Ready(v)) if !v.is_modern() => v,
                    _ => {
                        let error =
                            ErrorObject::new(codes::INVALID_REQUEST, "Server not initialized");
                        return self.error(Some(&id), error);
                    }
                };
                self.hand_out(id, method, params, version);
            }
        }
    }

    /// Opens a request the application is to answer (keyed by an id of the session's own when
    /// its frame is scoped) and hands it out; `subscriptions/listen` (when the session serves
    /// it) and the retries of its own rounds are handled here.
    fn hand_out(
        &mut self,
        id: Id,
        method: String,
        mut params: Option<Value>,
        version: ProtocolVersion,
    ) {
        let stream = self.origin.map(|o| o.stream);
        let (key, wire) = if self.origin.is_some_and(|o| o.scoped) {
            self.next_key += 1;
            (Id::String(format!("~{}", self.next_key)), Some(id))
        } else {
            (id, None)
        };
        let token = params.as_mut().and_then(|p| p.pointer_mut("/_meta/progressToken"));
        let token = token.map(|t| match wire {
            // A scoped request's token is replaced by the session's own (two clients may use
            // the same), and given back in its progress.
            Some(_) => {
                let client = std::mem::replace(t, json!(format!("{key}")));
                let ours = t.to_string();
                self.tokens.insert(ours.clone(), (key.clone(), Some(client)));
                ours
            }
            None => {
                let text = t.to_string();
                self.tokens.insert(text.clone(), (key.clone(), None));
                text
            }
        });
        if let Some(stream) = stream {
            *self.owed.entry(stream).or_default() += 1;
        }
        let open = Open { method: method.clone(), version, wire, stream, token };
        self.open.insert(key.clone(), open);
        self.seen = Some(version);
        if version.is_modern() {
            if method == "subscriptions/listen"
                && let Some(can) = self.config.listen
            {
                return self.listen_in(key, params.as_ref(), can);
            }
            if let Some((state, responses)) = self.retry_of(params.as_ref()) {
                let id = key;
                let retry = Incoming::Retry { id, method, params, version, state, responses };
                return self.events.push_back(retry);
            }
        }
        self.events.push_back(Incoming::Request { id: key, method, params, version });
    }

    /// Forgets the open request keyed `key` (answered, claimed or cancelled).
    fn close(&mut self, key: &Id) -> Option<Open> {
        let open = self.open.remove(key)?;
        if let Some(token) = &open.token {
            self.tokens.remove(token);
        }
        Some(open)
    }

    fn answer_in(&mut self, r: Response) {
        let Some(Id::Number(n)) = r.id else {
            if let Err(e) = r.outcome {
                self.events.push_back(Incoming::Violation(format!("error without id: {e:?}")));
            }
            return;
        };
        // Late answers (after a timeout) and unknown ids are dropped.
        if let Some((token, _, _)) = self.pending.remove(&n) {
            self.events.push_back(Incoming::Answer { token, outcome: r.outcome });
        }
    }

    /// Sends a notification to the client, where it belongs: progress with its request
    /// (under the client's own token); to a 2026-07-28 client, list changes and resource
    /// updates on the listen streams that asked for them (tagged with their subscription id),
    /// others of those dropped; to an older client, as it is. Nothing goes out before the
    /// client's first request.
    pub fn notify(&mut self, method: &str, mut params: Option<Value>) {
        let Some(version) = self.seen else { return };
        let mut stream = None;
        if method == "notifications/progress"
            && let Some(t) = params.as_mut().and_then(|p| p.get_mut("progressToken"))
            && let Some((key, client)) = self.tokens.get(&t.to_string())
        {
            stream = self.open.get(key).and_then(|o| o.stream);
            if let Some(client) = client {
                *t = client.clone();
            }
        }
        if version.is_modern() && self.onto_listen_streams(method, params.as_ref()) {
            return;
        }
        self.queue_notification(method, params, stream);
    }

    fn queue_notification(&mut self, method: &str, params: Option<Value>, stream: Option<u64>) {
        let line = jsonrpc::encode_notification(method, params).expect("Value serialises");
        let kind = ServerTransmitKind::Notification { method: method.into() };
        self.transmit.push_back(ServerTransmit { bytes: line.into(), kind, stream });
    }

    /// Sends progress for the client's request that carried `token` as its `progressToken`.
    pub fn progress(
        &mut self,
        token: &Value,
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) {
        let mut params = json!({"progressToken": token, "progress": progress});
        if let Some(t) = total {
            params["total"] = json!(t);
        }
        if let Some(m) = message {
            params["message"] = json!(m);
        }
        self.notify("notifications/progress", Some(params));
    }

    /// Sends a request of the server's to the client (`sampling/createMessage`,
    /// `elicitation/create`, `roots/list`, `ping`): its answer comes as [`Incoming::Answer`]
    /// with `token`.
    ///
    /// # Errors
    /// The token back, when the client did not declare the capability the method needs (or
    /// the handshake is not done).
    pub fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
        token: T,
        now: Instant,
    ) -> Result<(), T> {
        let needs = match method {
            "sampling/createMessage" => Some("sampling"),
            "elicitation/create" => Some("elicitation"),
            "roots/list" => Some("roots"),
            _ => None,
        };
        let declared = needs.is_none_or(|cap| self.client_capabilities.get(cap).is_some());
        if self.version().is_none() && self.client_capabilities == json!({}) || !declared {
            return Err(token);
        }
        self.request_anyway(method, params, token, now);
        Ok(())
    }

    /// [`request`](Self::request) without the capability check: for a test peer that checks
    /// how a client answers what it did not declare.
    pub fn request_anyway(&mut self, method: &str, params: Option<Value>, token: T, now: Instant) {
        let id = self.next_id;
        self.next_id += 1;
        let raw =
            params.map(|p| serde_json::value::RawValue::from_string(p.to_string()).expect("JSON"));
        let line = jsonrpc::encode_request(&Id::Number(id), method, raw.as_deref());
        let kind = ServerTransmitKind::Request { method: method.into() };
        self.transmit.push_back(ServerTransmit { bytes: line.into(), kind, stream: None });
        self.pending.insert(id, (token, now + self.config.request_timeout, method.to_owned()));
    }

    /// When [`handle_timeout`](Self::handle_timeout) is due next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let requests = self.pending.values().map(|(_, deadline, _)| *deadline).min();
        requests.into_iter().chain(self.rounds.next_deadline()).min()
    }

    /// Fails the server's requests whose deadline passed (telling the client to stop).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.expire_rounds(now);
        let mut expired: Vec<i64> =
            self.pending.iter().filter(|(_, (_, d, _))| *d <= now).map(|(id, _)| *id).collect();
        expired.sort_unstable();
        for id in expired {
            let (token, _, method) = self.pending.remove(&id).expect("just listed");
            let params = json!({"requestId": id, "reason": "timed out"});
            self.notify("notifications/cancelled", Some(params));
            let error = ErrorObject::new(
                codes::REQUEST_TIMEOUT,
                format!("the client did not answer {method} in time"),
            );
            self.events.push_back(Incoming::Answer { token, outcome: Err(error) });
        }
    }
}

#[cfg(test)]
mod tests;
