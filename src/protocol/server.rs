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
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde_json::{Value, json};

use crate::frame::IdSniffer;
use crate::jsonrpc::{self, Decoded, ErrorObject, Id, Message, Request, Response, codes};

use super::modern::META_PROTOCOL_VERSION;
use super::types::Implementation;
use super::version::ProtocolVersion;

/// What a server session is configured with.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Sent as `serverInfo`.
    pub server_info: Implementation,
    /// The capabilities declared (`{"tools": {...}, ...}`).
    pub capabilities: Value,
    /// Sent as `instructions`, when given.
    pub instructions: Option<String>,
    /// The revisions spoken, newest last or in any order (default: every one).
    pub versions: Vec<ProtocolVersion>,
    /// Deadline of the server's own requests to the client.
    pub request_timeout: Duration,
    /// 2026-07-28: the caching hints put on cacheable results (`server/discover`, the lists,
    /// `resources/read`) that do not carry their own; `None` for none.
    pub cache: Option<CacheHints>,
    /// Refuse an `initialize` without `capabilities` and `clientInfo` (`name`, `version`), as
    /// the schema requires them (default: only `protocolVersion` is required).
    pub strict_initialize: bool,
}

/// The `ttlMs` and `cacheScope` of a 2026-07-28 cacheable result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheHints {
    /// How long the client may reuse the result.
    pub ttl_ms: u64,
    /// `"private"` (this client) or `"shared"`.
    pub scope: String,
}

impl Default for CacheHints {
    /// Not to be reused: `ttlMs` 0, private.
    fn default() -> Self {
        CacheHints { ttl_ms: 0, scope: "private".into() }
    }
}

/// 2026-07-28 results that carry caching hints.
const CACHEABLE: [&str; 6] = [
    "server/discover",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
    "resources/read",
];

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            server_info: Implementation::new("ringmcp", env!("CARGO_PKG_VERSION")),
            capabilities: json!({}),
            instructions: None,
            versions: ProtocolVersion::ALL.to_vec(),
            request_timeout: Duration::from_secs(60),
            cache: Some(CacheHints::default()),
            strict_initialize: false,
        }
    }
}

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

/// The server side of one connection. `T` is the application's token for each of its own
/// requests.
#[derive(Debug)]
pub struct ServerSession<T> {
    config: ServerConfig,
    phase: Phase,
    client_info: Value,
    client_capabilities: Value,
    /// Requests of the client handed out and not answered yet: their method and revision.
    open: HashMap<Id, (String, ProtocolVersion)>,
    /// The server's requests in flight: token, deadline, method.
    pending: HashMap<i64, (T, Instant, String)>,
    next_id: i64,
    transmit: VecDeque<Bytes>,
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

    /// The client's capabilities (`{}` before the handshake).
    pub fn client_capabilities(&self) -> &Value {
        &self.client_capabilities
    }

    /// The next line to write to the client.
    pub fn poll_transmit(&mut self) -> Option<Bytes> {
        self.transmit.pop_front()
    }

    /// The next event for the application.
    pub fn poll_event(&mut self) -> Option<Incoming<T>> {
        self.events.pop_front()
    }

    /// Feeds one frame (a line without its newline).
    pub fn handle_frame(&mut self, frame: &[u8], now: Instant) {
        let _ = now;
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
                        Some(id) if self.open.remove(&id).is_some() => {
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

    /// The revision a stateless request names in its `_meta`: `Ok(None)` when it names none,
    /// an error (-32022 with the revisions spoken, or -32602 without client capabilities)
    /// when it names one this session does not speak or leaves out what that revision needs.
    fn stateless_version(
        &self,
        params: Option<&Value>,
    ) -> Result<Option<ProtocolVersion>, ErrorObject> {
        let meta = params.and_then(|p| p.get("_meta"));
        let Some(named) = meta.and_then(|m| m.get(META_PROTOCOL_VERSION)) else {
            return Ok(None);
        };
        // A legacy-only server knows nothing of stateless requests (and says "not
        // initialized", as any legacy server would).
        if self.modern_versions().next().is_none() {
            return Ok(None);
        }
        let version = named.as_str().and_then(|n| n.parse::<ProtocolVersion>().ok());
        match version {
            Some(v) if v.is_modern() && self.config.versions.contains(&v) => {
                if meta.and_then(|m| m.get(super::modern::META_CLIENT_CAPABILITIES)).is_none() {
                    return Err(ErrorObject::new(
                        codes::INVALID_PARAMS,
                        format!(
                            "params._meta names {v} but lacks {}",
                            super::modern::META_CLIENT_CAPABILITIES
                        ),
                    ));
                }
                Ok(Some(v))
            }
            // A legacy revision named in `_meta` is not a stateless request.
            Some(v) if !v.is_modern() => Ok(None),
            _ => {
                let supported: Vec<&str> =
                    self.modern_versions().map(ProtocolVersion::as_str).collect();
                Err(ErrorObject::new(
                    codes::UNSUPPORTED_PROTOCOL_VERSION,
                    "Unsupported protocol version",
                )
                .with_data(json!({"supported": supported, "requested": named})))
            }
        }
    }

    fn request_in(&mut self, r: Request) {
        let Request { id, method, params } = r;
        if self.open.contains_key(&id) {
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
                self.open.insert(id.clone(), (method.clone(), version));
                self.events.push_back(Incoming::Request { id, method, params, version });
            }
        }
    }

    fn modern_versions(&self) -> impl Iterator<Item = ProtocolVersion> + '_ {
        self.config.versions.iter().copied().filter(|v| v.is_modern())
    }

    fn discover(&self) -> Value {
        let versions: Vec<&str> = self.modern_versions().map(ProtocolVersion::as_str).collect();
        let mut result = json!({
            "supportedVersions": versions,
            "capabilities": self.config.capabilities,
            "_meta": {super::modern::META_SERVER_INFO: self.config.server_info},
        });
        if let Some(i) = &self.config.instructions {
            result["instructions"] = json!(i);
        }
        self.stamp("server/discover", &mut result);
        result
    }

    /// What a 2026-07-28 result carries besides the application's answer: `resultType`
    /// (`complete` unless the application chose, e.g. `input_required`) and, on cacheable
    /// results, the caching hints.
    fn stamp(&self, method: &str, result: &mut Value) {
        let Some(members) = result.as_object_mut() else { return };
        members.entry("resultType").or_insert_with(|| json!("complete"));
        if let Some(cache) = &self.config.cache
            && CACHEABLE.contains(&method)
        {
            members.entry("ttlMs").or_insert_with(|| json!(cache.ttl_ms));
            members.entry("cacheScope").or_insert_with(|| json!(cache.scope));
        }
    }

    fn initialize(&mut self, id: &Id, params: Option<Value>) {
        if self.phase != Phase::AwaitingInitialize {
            let error = ErrorObject::new(codes::INVALID_REQUEST, "Server already initialized");
            return self.error(Some(id), error);
        }
        let params = params.unwrap_or(Value::Null);
        let Some(asked) = params.get("protocolVersion").and_then(Value::as_str) else {
            let error =
                ErrorObject::new(codes::INVALID_PARAMS, "initialize needs a protocolVersion");
            return self.error(Some(id), error);
        };
        if self.config.strict_initialize
            && let Err(why) = complete_initialize(&params)
        {
            let error = ErrorObject::new(
                codes::INVALID_PARAMS,
                format!("Invalid params for initialize: {why}"),
            );
            return self.error(Some(id), error);
        }
        let legacy = || self.config.versions.iter().copied().filter(|v| !v.is_modern());
        let Some(latest) = legacy().max_by_key(|v| v.as_str()) else {
            // -32022 with the revisions spoken: what a client probing for the era reads as
            // "this is a stateless server".
            let supported: Vec<&str> =
                self.modern_versions().map(ProtocolVersion::as_str).collect();
            let error = ErrorObject::new(
                codes::UNSUPPORTED_PROTOCOL_VERSION,
                format!(
                    "Unsupported protocol version {asked}: this server speaks only {} (use server/discover)",
                    supported.join(", ")
                ),
            )
            .with_data(json!({"supported": supported, "requested": asked}));
            return self.error(Some(id), error);
        };
        // The client's revision when we speak it; otherwise our latest, for it to accept or
        // disconnect.
        let version = legacy().find(|v| v.as_str() == asked).unwrap_or(latest);
        self.client_info = params.get("clientInfo").cloned().unwrap_or(Value::Null);
        self.client_capabilities = params.get("capabilities").cloned().unwrap_or(json!({}));
        self.phase = Phase::Initializing(version);
        let mut result = json!({
            "protocolVersion": version.as_str(),
            "capabilities": self.config.capabilities,
            "serverInfo": self.config.server_info,
        });
        if let Some(i) = &self.config.instructions {
            result["instructions"] = json!(i);
        }
        self.result(id, result);
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

    /// Answers the client's request `id`. Ignored (and `false`) when it is not open: already
    /// answered, cancelled by the client, or never received.
    ///
    /// A 2026-07-28 result gets `resultType` (and the caching hints on cacheable methods)
    /// when it lacks them.
    pub fn respond(&mut self, id: &Id, outcome: Result<Value, ErrorObject>) -> bool {
        let Some((method, version)) = self.open.remove(id) else {
            return false;
        };
        match outcome {
            Ok(mut v) => {
                if version.is_modern() {
                    self.stamp(&method, &mut v);
                }
                self.result(id, v)
            }
            Err(e) => self.error(Some(id), e),
        }
        true
    }

    /// Takes over answering request `id` (the application writes the answer itself, e.g.
    /// streamed); `false` when it is not open.
    pub fn claim(&mut self, id: &Id) -> bool {
        self.open.remove(id).is_some()
    }

    /// Answers a message the driver could not hand over (too long to buffer) with `error`, by
    /// its id when one was found in it.
    pub fn reject(&mut self, id: Option<&Id>, error: ErrorObject) {
        self.error(id, error);
    }

    /// Sends a notification to the client.
    pub fn notify(&mut self, method: &str, params: Option<Value>) {
        let line = jsonrpc::encode_notification(method, params).expect("Value serialises");
        self.transmit.push_back(line.into());
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
        self.transmit.push_back(line.into());
        self.pending.insert(id, (token, now + self.config.request_timeout, method.to_owned()));
    }

    /// When [`handle_timeout`](Self::handle_timeout) is due next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.pending.values().map(|(_, deadline, _)| *deadline).min()
    }

    /// Fails the server's requests whose deadline passed (telling the client to stop).
    pub fn handle_timeout(&mut self, now: Instant) {
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

    fn result(&mut self, id: &Id, value: Value) {
        let line = jsonrpc::encode_result(id, value).expect("Value serialises");
        self.transmit.push_back(line.into());
    }

    fn error(&mut self, id: Option<&Id>, error: ErrorObject) {
        self.transmit.push_back(jsonrpc::encode_error(id, &error).into());
    }
}

/// What a strict server requires of `initialize` params besides `protocolVersion`.
fn complete_initialize(params: &Value) -> Result<(), String> {
    if !params.get("capabilities").is_some_and(Value::is_object) {
        return Err("missing field `capabilities`".into());
    }
    let info = params.get("clientInfo").ok_or("missing field `clientInfo`")?;
    for field in ["name", "version"] {
        if !info.get(field).is_some_and(Value::is_string) {
            return Err(format!("clientInfo: missing field `{field}`"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
