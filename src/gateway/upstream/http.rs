//! The upstream connection over Streamable HTTP (`ringmcp gateway --http ADDR`;
//! docs/gateway.md, "HTTP").
//!
//! One endpoint, `/mcp`. `initialize` opens a session (`Mcp-Session-Id`) with a gateway of its
//! own: its own host and backends, so that nothing a backend asks (sampling, elicitation,
//! approvals), says (logs, updates) or keeps (spilled payloads) can cross from one client to
//! another. A POST with requests is answered with an SSE stream (or JSON, for a client that
//! does not accept `text/event-stream`) carrying the answers and what relates to them
//! (progress); everything else goes to the session's GET stream, kept for resumption with
//! `Last-Event-ID`. DELETE ends the session. Requests of the stateless 2026-07-28 revision
//! share one gateway; their ids are rewritten on the way in and back, so that two clients'
//! ids never meet in one session.
//!
//! Every request must carry the bearer token (unless `--no-auth`, loopback only), a `Host`
//! that names this server and, when it has one, an `Origin` on the same host or on loopback
//! (against DNS rebinding); bodies are bounded.

use std::collections::{HashMap, HashSet, VecDeque};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST, HeaderValue, ORIGIN};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::jsonrpc::{ErrorObject, Id, codes};
use crate::protocol::ProtocolVersion;
use crate::protocol::modern::{
    META_PROTOCOL_VERSION as META_VERSION, META_SUBSCRIPTION_ID as SUBSCRIPTION_ID,
};

use super::super::{Gateway, GatewayError, lock};
use super::lane::{LaneTx, Lines, Refused, lane};
use super::{Inbox, Input, Router, Source, run};

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";
const LAST_EVENT_HEADER: &str = "last-event-id";

/// Events kept per session for GET-stream resumption.
const HISTORY: usize = 1024;
/// Bytes of events the history keeps at most.
const HISTORY_BYTES: usize = 32 << 20;

/// The reconnection delay SSE streams announce.
const RETRY_MS: u64 = 1000;

/// Settings of the HTTP front.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Where to listen.
    pub addr: SocketAddr,
    /// The bearer token every request must carry (`None`: no authentication, loopback only).
    pub token: Option<String>,
    /// Largest request body.
    pub max_body: usize,
    /// Most sessions open at once.
    pub max_sessions: usize,
    /// A session with no request for this long is closed.
    pub idle_timeout: Duration,
}

impl HttpOptions {
    /// Loopback port `addr`, a token, 8 MiB bodies, 32 sessions, one hour idle.
    pub fn new(addr: SocketAddr, token: Option<String>) -> Self {
        HttpOptions {
            addr,
            token,
            max_body: 8 << 20,
            max_sessions: 32,
            idle_timeout: Duration::from_secs(3600),
        }
    }
}

/// Makes one gateway (its host and backends) for a new session.
pub type Factory = dyn Fn() -> Result<(Gateway, Inbox), GatewayError> + Send + Sync;

/// How a POST's answers are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PostMode {
    /// As SSE events (with ids), progress included.
    Sse,
    /// The bare answers, for one JSON body.
    Json,
    /// Bare lines, progress included: the HTTP side picks JSON or SSE once it sees the first
    /// (a stateless request answered at once gets its HTTP status from its error).
    Raw,
}

/// A stream attached to a session's router.
pub(crate) enum Attach {
    /// A POST's answer stream: the ids of its requests and their progress tokens.
    Post { ids: Vec<Id>, tokens: Vec<Value>, mode: PostMode, tx: LaneTx },
    /// The session's GET stream, resuming after `last` when given.
    Get { last: Option<u64>, tx: LaneTx },
}

struct Post {
    ids: HashSet<Id>,
    tokens: Vec<Value>,
    mode: PostMode,
    tx: LaneTx,
}

/// Where a session's lines go: each answer to the POST that asked, progress along with it,
/// the rest to the GET stream (kept in a bounded history for `Last-Event-ID`).
pub(crate) struct Streams {
    posts: Vec<Post>,
    get: Option<LaneTx>,
    history: VecDeque<(u64, Bytes)>,
    /// The bytes `history` holds.
    history_bytes: usize,
    next_event: u64,
}

/// What a line is, for routing.
#[derive(serde::Deserialize)]
struct Peek {
    id: Option<Id>,
    method: Option<String>,
    params: Option<PeekParams>,
}

#[derive(serde::Deserialize)]
struct PeekParams {
    #[serde(rename = "progressToken")]
    progress_token: Option<Value>,
    #[serde(rename = "_meta")]
    meta: Option<HashMap<String, Value>>,
}

impl Streams {
    fn new() -> Self {
        Streams {
            posts: Vec::new(),
            get: None,
            history: VecDeque::new(),
            history_bytes: 0,
            next_event: 0,
        }
    }

    /// Wraps a line as one SSE event.
    fn event(&mut self, line: &[u8]) -> (u64, Bytes) {
        self.next_event += 1;
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let mut out = Vec::with_capacity(line.len() + 32);
        out.extend_from_slice(format!("id: {}\ndata: ", self.next_event).as_bytes());
        out.extend_from_slice(line);
        out.extend_from_slice(b"\n\n");
        (self.next_event, out.into())
    }

    /// The event that opens a stream: an id to resume from, no data, and how long to wait
    /// before reconnecting (MCP 2025-11-25 SSE polling).
    fn priming(&mut self) -> Bytes {
        self.next_event += 1;
        format!("id: {}\nretry: {RETRY_MS}\ndata: \n\n", self.next_event).into()
    }

    pub(crate) fn line(&mut self, line: Bytes) {
        let peek: Option<Peek> = serde_json::from_slice(&line).ok();
        let (id, method, params) = match peek {
            Some(p) => (p.id, p.method, p.params),
            None => (None, None, None),
        };
        let index = match (&id, &method) {
            // An answer: to the POST that carried the request.
            (Some(id), None) => self.posts.iter().position(|p| p.ids.contains(id)),
            // Progress: with its request; a subscription's notification: on its stream; a log
            // message: the GET stream, else the latest POST stream that can carry it.
            (None, Some(m)) => {
                let token = params.as_ref().and_then(|p| p.progress_token.as_ref());
                let sub = params
                    .as_ref()
                    .and_then(|p| p.meta.as_ref())
                    .and_then(|m| m.get(SUBSCRIPTION_ID))
                    .and_then(|v| serde_json::from_value::<Id>(v.clone()).ok());
                match (token, sub) {
                    (Some(t), _) => self
                        .posts
                        .iter()
                        .position(|p| p.mode != PostMode::Json && p.tokens.contains(t)),
                    (None, Some(s)) => self.posts.iter().position(|p| p.ids.contains(&s)),
                    _ if m == "notifications/message" && self.get.is_none() => {
                        self.posts.iter().rposition(|p| p.mode != PostMode::Json)
                    }
                    _ => None,
                }
            }
            // A request of the gateway's (sampling, elicitation): the GET stream, else the
            // latest POST stream that can carry it.
            (Some(_), Some(_)) if self.get.is_none() => {
                self.posts.iter().rposition(|p| p.mode == PostMode::Sse)
            }
            _ => None,
        };
        if let Some(i) = index {
            let post = &self.posts[i];
            let body = if post.mode == PostMode::Sse { self.event(&line).1 } else { line.clone() };
            let post = &mut self.posts[i];
            let sent = match post.tx.send(body) {
                Ok(()) => true,
                Err(full) => {
                    if full == Refused::Behind {
                        tracing::warn!(
                            "dropped a POST's answer stream: its client read too slowly (what is left goes to the GET stream)"
                        );
                    }
                    false
                }
            };
            if let (Some(id), None) = (&id, &method) {
                post.ids.remove(id);
            }
            let done = post.ids.is_empty() || !sent;
            if done {
                self.posts.remove(i);
            }
            if sent {
                return;
            }
        }
        self.onto_get(&line);
    }

    fn onto_get(&mut self, line: &[u8]) {
        let (id, event) = self.event(line);
        while self.history.len() == HISTORY || self.history_bytes + event.len() > HISTORY_BYTES {
            let Some((_, old)) = self.history.pop_front() else { break };
            self.history_bytes -= old.len();
        }
        self.history_bytes += event.len();
        self.history.push_back((id, event.clone()));
        if let Some(get) = &self.get
            && let Err(full) = get.send(event)
        {
            if full == Refused::Behind {
                tracing::warn!(
                    "dropped the GET stream: its client read too slowly (it may reconnect with Last-Event-ID)"
                );
            }
            self.get = None;
        }
    }

    pub(crate) fn attach(&mut self, attach: Attach) {
        match attach {
            Attach::Post { ids, tokens, mode, tx } => {
                if mode == PostMode::Sse {
                    let _ = tx.send(self.priming());
                }
                self.posts.push(Post { ids: ids.into_iter().collect(), tokens, mode, tx });
            }
            Attach::Get { last, tx } => {
                let _ = tx.send(self.priming());
                if let Some(last) = last {
                    for (_, event) in self.history.iter().filter(|(id, _)| *id > last) {
                        let _ = tx.send(event.clone());
                    }
                }
                self.get = Some(tx);
            }
        }
    }
}

/// A session: its loop's input and when it was last used.
struct Session {
    input: mpsc::Sender<Input>,
    used: Instant,
}

struct Server {
    factory: Box<Factory>,
    options: HttpOptions,
    sessions: Mutex<HashMap<String, Session>>,
    /// The shared gateway of stateless (2026-07-28) requests, once one came.
    stateless: Mutex<Option<mpsc::Sender<Input>>>,
    next_internal: AtomicU64,
}

type Body = BoxBody<Bytes, Infallible>;

fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed()
}

/// A request refused before it reached a session: the HTTP status and the JSON-RPC error.
struct Refusal {
    status: StatusCode,
    code: i64,
    message: String,
    /// A 401's `WWW-Authenticate`.
    challenge: bool,
}

impl Refusal {
    fn new(status: StatusCode, code: i64, message: impl Into<String>) -> Self {
        Refusal { status, code, message: message.into(), challenge: false }
    }

    fn response(self) -> Response<Body> {
        let mut r = rpc_error(self.status, None, self.code, &self.message);
        if self.challenge {
            r.headers_mut().insert(
                "www-authenticate",
                HeaderValue::from_static("Bearer realm=\"ringmcp-gateway\""),
            );
        }
        r
    }
}

fn rpc_error(status: StatusCode, id: Option<&Id>, code: i64, message: &str) -> Response<Body> {
    let body = crate::jsonrpc::encode_error(id, &ErrorObject::new(code, message));
    let mut r = Response::new(full(body));
    *r.status_mut() = status;
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// Serves the gateway over Streamable HTTP until the process ends. `ready` is told the
/// address bound (the port, when `addr` asked for 0).
///
/// # Errors
/// [`GatewayError::Io`] when the address cannot be bound.
pub fn serve_http(
    factory: Box<Factory>,
    options: HttpOptions,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), GatewayError> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(options.addr).await?;
        let bound = listener.local_addr()?;
        ready(bound);
        let server = Arc::new(Server {
            factory,
            options: HttpOptions { addr: bound, ..options },
            sessions: Mutex::new(HashMap::new()),
            stateless: Mutex::new(None),
            next_internal: AtomicU64::new(0),
        });
        tokio::spawn(expire(server.clone()));
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!("accepting a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let server = server.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let server = server.clone();
                    async move { Ok::<_, Infallible>(handle(&server, req).await) }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                if let Err(e) =
                    hyper::server::conn::http1::Builder::new().serve_connection(io, service).await
                {
                    tracing::debug!("HTTP connection: {e}");
                }
            });
        }
    })
}

/// Closes sessions idle past the timeout.
async fn expire(server: Arc<Server>) {
    loop {
        tokio::time::sleep(Duration::from_secs(30)).await;
        let idle = server.options.idle_timeout;
        lock(&server.sessions).retain(|id, s| {
            let keep = s.used.elapsed() < idle;
            if !keep {
                tracing::info!(session = %id, "session idle for {} s: closed", idle.as_secs());
            }
            keep
        });
    }
}

/// Whether `host` (a `Host` header or an `Origin`'s host) names loopback.
fn loopback_name(host: &str) -> bool {
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    };
    matches!(name, "localhost" | "127.0.0.1" | "[::1]")
}

/// Compares in time that depends on the lengths only.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The checks every request passes: `Host`, `Origin`, bearer token.
fn admit(server: &Server, req: &Request<Incoming>) -> Result<(), Refusal> {
    let header = |name| req.headers().get(name).and_then(|v: &HeaderValue| v.to_str().ok());
    let host = header(HOST).unwrap_or_default();
    let loopback = server.options.addr.ip().is_loopback();
    if loopback && !loopback_name(host) {
        return Err(Refusal::new(
            StatusCode::FORBIDDEN,
            codes::INVALID_REQUEST,
            format!("Host {host:?} is not this loopback server (DNS rebinding?)"),
        ));
    }
    if let Some(origin) = header(ORIGIN) {
        let origin_host = url::Url::parse(origin).ok().and_then(|u| {
            let h = u.host_str()?.to_owned();
            Some(match u.port() {
                Some(p) => format!("{h}:{p}"),
                None => h,
            })
        });
        let fine = origin_host.is_some_and(|o| loopback_name(&o) || o == host);
        if !fine {
            return Err(Refusal::new(
                StatusCode::FORBIDDEN,
                codes::INVALID_REQUEST,
                format!("Origin {origin:?} may not use this server"),
            ));
        }
    }
    if let Some(token) = &server.options.token {
        let given = header(AUTHORIZATION).and_then(|a| a.strip_prefix("Bearer ")).unwrap_or("");
        if !same(given.as_bytes(), token.as_bytes()) {
            let mut r = Refusal::new(
                StatusCode::UNAUTHORIZED,
                codes::INVALID_REQUEST,
                "Missing or wrong bearer token: send Authorization: Bearer TOKEN (printed by ringmcp gateway --http at start)",
            );
            r.challenge = true;
            return Err(r);
        }
    }
    Ok(())
}

async fn handle(server: &Arc<Server>, req: Request<Incoming>) -> Response<Body> {
    if let Err(refused) = admit(server, &req) {
        return refused.response();
    }
    if req.uri().path() != "/mcp" {
        return rpc_error(
            StatusCode::NOT_FOUND,
            None,
            codes::INVALID_REQUEST,
            "The MCP endpoint is /mcp",
        );
    }
    let session =
        req.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
    match *req.method() {
        Method::POST => post(server, req, session).await,
        Method::GET => get(server, &req, session).await,
        Method::DELETE => match session {
            Some(id) if lock(&server.sessions).remove(&id).is_some() => {
                tracing::info!(session = %id, "session ended by the client");
                let mut r = Response::new(full(Bytes::new()));
                *r.status_mut() = StatusCode::NO_CONTENT;
                r
            }
            _ => {
                rpc_error(StatusCode::NOT_FOUND, None, codes::INVALID_REQUEST, "Session not found")
            }
        },
        _ => {
            let mut r = rpc_error(
                StatusCode::METHOD_NOT_ALLOWED,
                None,
                codes::INVALID_REQUEST,
                "Use POST, GET or DELETE on /mcp",
            );
            r.headers_mut().insert("allow", HeaderValue::from_static("GET, POST, DELETE"));
            r
        }
    }
}

fn sse_response(rx: Lines) -> Response<Body> {
    use futures::StreamExt;
    let stream = rx.map(|b| Ok::<_, Infallible>(Frame::data(b)));
    let mut r = Response::new(BodyExt::boxed(StreamBody::new(stream)));
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert("cache-control", HeaderValue::from_static("no-cache"));
    r
}

async fn get(
    server: &Arc<Server>,
    req: &Request<Incoming>,
    session: Option<String>,
) -> Response<Body> {
    let Some(id) = session else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            None,
            codes::INVALID_REQUEST,
            "GET needs an Mcp-Session-Id (stateless 2026-07-28 clients use subscriptions/listen)",
        );
    };
    let input = match used(server, &id) {
        Ok(input) => input,
        Err(r) => return r.response(),
    };
    let last = req
        .headers()
        .get(LAST_EVENT_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let (tx, rx) = lane();
    if input.send(Input::Attach(Attach::Get { last, tx })).await.is_err() {
        return rpc_error(StatusCode::NOT_FOUND, None, codes::INVALID_REQUEST, "Session ended");
    }
    sse_response(rx)
}

/// What a POST body holds.
struct Parsed {
    value: Value,
    /// Requests' ids and methods.
    requests: Vec<(Id, String)>,
    tokens: Vec<Value>,
    modern: bool,
}

fn parse(body: &[u8], header_version: Option<&str>) -> Result<Parsed, ErrorObject> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| ErrorObject::new(codes::PARSE_ERROR, format!("Parse error: {e}")))?;
    let items: Vec<&Value> = match &value {
        Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    let mut parsed =
        Parsed { value: Value::Null, requests: Vec::new(), tokens: Vec::new(), modern: false };
    for item in items {
        let method = item.get("method").and_then(Value::as_str);
        let id = item.get("id").and_then(|v| serde_json::from_value::<Id>(v.clone()).ok());
        if let (Some(id), Some(method)) = (id, method) {
            parsed.requests.push((id, method.to_owned()));
        }
        if let Some(t) = item.pointer("/params/_meta/progressToken") {
            parsed.tokens.push(t.clone());
        }
        let named = item.pointer(&format!("/params/_meta/{}", META_VERSION.replace('/', "~1")));
        if named.and_then(Value::as_str).is_some_and(is_modern) || method == Some("server/discover")
        {
            parsed.modern = true;
        }
    }
    if header_version.is_some_and(is_modern) {
        parsed.modern = true;
    }
    parsed.value = value;
    Ok(parsed)
}

/// Whether a named protocol version is of the 2026-07-28 era (an unknown name is not).
fn is_modern(version: &str) -> bool {
    version.parse::<ProtocolVersion>().is_ok_and(ProtocolVersion::is_modern)
}

async fn post(
    server: &Arc<Server>,
    req: Request<Incoming>,
    session: Option<String>,
) -> Response<Body> {
    let sse = req
        .headers()
        .get(ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/event-stream"));
    let header = |name: &str| req.headers().get(name).map(|v| v.to_str().map(str::to_owned));
    let version = header(VERSION_HEADER).and_then(Result::ok);
    let method_header = header(METHOD_HEADER);
    let name_header = header(NAME_HEADER);
    let max = server.options.max_body;
    let body = match Limited::new(req.into_body(), max).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            return rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                None,
                codes::INVALID_REQUEST,
                &format!("Request body over the gateway's {max}-byte limit"),
            );
        }
    };
    let parsed = match parse(&body, version.as_deref()) {
        Ok(p) => p,
        Err(e) => {
            let line = crate::jsonrpc::encode_error(None, &e);
            let mut r = Response::new(full(line));
            *r.status_mut() = StatusCode::BAD_REQUEST;
            return r;
        }
    };
    if parsed.modern
        && let Err(why) =
            check_headers(&parsed.value, version.as_deref(), method_header, name_header)
    {
        return rpc_error(StatusCode::BAD_REQUEST, None, codes::HEADER_MISMATCH, &why);
    }
    let initialize = parsed.requests.iter().any(|(_, m)| m == "initialize");
    // Which session: the header's; a new one for `initialize`; the shared stateless one.
    // A stateless request (even an `initialize`, which that revision answers with -32601)
    // never opens a session.
    let initialize = initialize && !parsed.modern;
    let (input, new_session, rewrite) = match (&session, initialize, parsed.modern) {
        (Some(id), _, _) => match used(server, id) {
            Ok(input) => (input, None, false),
            Err(r) => return r.response(),
        },
        (None, true, _) => match open_session(server) {
            Ok((id, input)) => (input, Some(id), false),
            Err(r) => return r.response(),
        },
        (None, false, true) => match stateless(server) {
            Ok(input) => (input, None, true),
            Err(r) => return r.response(),
        },
        (None, false, false) => {
            return rpc_error(
                StatusCode::BAD_REQUEST,
                None,
                codes::INVALID_REQUEST,
                "Missing Mcp-Session-Id: send initialize first (or speak 2026-07-28)",
            );
        }
    };
    let batch = parsed.value.is_array();
    let mut tokens = parsed.tokens;
    let (frame, ids, map) = if rewrite {
        internal_ids(server, parsed.value)
    } else {
        let ids = parsed.requests.iter().map(|(id, _)| id.clone()).collect();
        (body, ids, HashMap::new())
    };
    if ids.is_empty() {
        let _ = input.send(Input::Frame(frame)).await;
        let mut r = Response::new(full(Bytes::new()));
        *r.status_mut() = StatusCode::ACCEPTED;
        return r;
    }
    let (tx, rx) = lane();
    let count = ids.len();
    let mode = match (sse, rewrite && !batch) {
        (true, true) => PostMode::Raw,
        (true, false) => PostMode::Sse,
        (false, _) => PostMode::Json,
    };
    if rewrite {
        // Progress comes back under the gateway's own tokens.
        tokens = map.keys().filter(|k| k.starts_with('t')).map(|k| json!(k)).collect();
    }
    let attach = Attach::Post { ids, tokens, mode, tx };
    if input.send(Input::Attach(attach)).await.is_err()
        || input.send(Input::Frame(frame)).await.is_err()
    {
        return rpc_error(StatusCode::NOT_FOUND, None, codes::INVALID_REQUEST, "Session ended");
    }
    let rx = if map.is_empty() { rx } else { restore_ids(rx, map) };
    let mut response = match mode {
        PostMode::Sse => sse_response(rx),
        PostMode::Json => json_response(rx, count, batch).await,
        PostMode::Raw => auto_response(rx).await,
    };
    if let Some(id) = new_session
        && let Ok(v) = HeaderValue::from_str(&id)
    {
        response.headers_mut().insert(SESSION_HEADER, v);
    }
    response
}

/// A stateless request's answer: JSON when the answer comes first (an error gets the HTTP
/// status 2026-07-28 gives it), else an SSE stream of what comes (progress, then the answer).
async fn auto_response(mut rx: Lines) -> Response<Body> {
    use futures::StreamExt;
    let Some(first) = rx.next().await else {
        return rpc_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            None,
            codes::INTERNAL_ERROR,
            "no answer",
        );
    };
    let peek: Option<Peek> = serde_json::from_slice(&first).ok();
    let answer = peek.as_ref().is_some_and(|p| p.id.is_some() && p.method.is_none());
    if answer {
        let code = serde_json::from_slice::<Value>(&first)
            .ok()
            .and_then(|v| v.pointer("/error/code").and_then(Value::as_i64));
        let mut r = Response::new(full(first));
        *r.status_mut() = code.map_or(StatusCode::OK, status_of);
        r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        return r;
    }
    let frame = |line: Bytes| -> Bytes {
        let line = line.strip_suffix(b"\n").unwrap_or(&line);
        [b"data: ".as_slice(), line, b"\n\n"].concat().into()
    };
    sse_response(Box::pin(futures::stream::once(async move { first }).chain(rx).map(frame)))
}

/// The HTTP status of a 2026-07-28 error answer.
fn status_of(code: i64) -> StatusCode {
    match code {
        codes::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        codes::PARSE_ERROR
        | codes::INVALID_REQUEST
        | codes::INVALID_PARAMS
        | codes::HEADER_MISMATCH
        | codes::UNSUPPORTED_PROTOCOL_VERSION
        | codes::MISSING_REQUIRED_CLIENT_CAPABILITY => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// 2026-07-28 standard headers against the body: `MCP-Protocol-Version` the same as the
/// `_meta` one, `Mcp-Method` the body's method, `Mcp-Name` (decoded) the tool or prompt name
/// or the resource URI.
fn check_headers(
    body: &Value,
    version: Option<&str>,
    method: Option<Result<String, hyper::header::ToStrError>>,
    name: Option<Result<String, hyper::header::ToStrError>>,
) -> Result<(), String> {
    if body.is_array() {
        return Ok(()); // no batches in 2026-07-28; the session refuses them
    }
    let meta_version = body.pointer(&format!("/params/_meta/{}", META_VERSION.replace('/', "~1")));
    if let (Some(h), Some(m)) = (version, meta_version.and_then(Value::as_str))
        && h != m
    {
        return Err(format!("MCP-Protocol-Version {h:?} differs from the body's _meta {m:?}"));
    }
    let Some(body_method) = body.get("method").and_then(Value::as_str) else { return Ok(()) };
    match method {
        None => {
            return Err(format!(
                "Mcp-Method header missing (the body's method is {body_method:?})"
            ));
        }
        Some(Err(_)) => return Err("Mcp-Method header is not visible ASCII".into()),
        Some(Ok(m)) if m != body_method => {
            return Err(format!("Mcp-Method {m:?} differs from the body's method {body_method:?}"));
        }
        Some(Ok(_)) => {}
    }
    let named = match body_method {
        "tools/call" | "prompts/get" => body.pointer("/params/name"),
        "resources/read" => body.pointer("/params/uri"),
        _ => None,
    };
    let Some(named) = named.and_then(Value::as_str) else { return Ok(()) };
    let given = match name {
        None => return Err(format!("Mcp-Name header missing (the body names {named:?})")),
        Some(Err(_)) => return Err("Mcp-Name header is not visible ASCII".into()),
        Some(Ok(n)) => n,
    };
    match crate::transport::decode_header_value(&given) {
        None => Err(format!("Mcp-Name {given:?} is not valid =?base64?…?=")),
        Some(decoded) if decoded != named => {
            Err(format!("Mcp-Name {decoded:?} differs from the body's {named:?}"))
        }
        Some(_) => Ok(()),
    }
}

/// Waits for `count` answers and returns them as one JSON body (an array for a batch).
async fn json_response(mut rx: Lines, count: usize, batch: bool) -> Response<Body> {
    use futures::StreamExt;
    let mut answers = Vec::with_capacity(count);
    while answers.len() < count {
        match rx.next().await {
            Some(line) => answers.push(line),
            None => break,
        }
    }
    let body: Bytes = if batch {
        let mut out = b"[".to_vec();
        for (i, a) in answers.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(a.strip_suffix(b"\n").unwrap_or(a));
        }
        out.push(b']');
        out.into()
    } else {
        answers.into_iter().next().unwrap_or_default()
    };
    let mut r = Response::new(full(body));
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}

/// Session `id`'s input, marking it used; 404 when there is no such session (any more).
fn used(server: &Server, id: &str) -> Result<mpsc::Sender<Input>, Refusal> {
    let mut sessions = lock(&server.sessions);
    let Some(s) = sessions.get_mut(id) else {
        return Err(Refusal::new(
            StatusCode::NOT_FOUND,
            codes::INVALID_REQUEST,
            "Session not found (it ended or expired): initialize again",
        ));
    };
    s.used = Instant::now();
    Ok(s.input.clone())
}

/// Starts a session with a gateway of its own.
fn open_session(server: &Arc<Server>) -> Result<(String, mpsc::Sender<Input>), Refusal> {
    if lock(&server.sessions).len() >= server.options.max_sessions {
        return Err(Refusal::new(
            StatusCode::SERVICE_UNAVAILABLE,
            codes::SERVER_ERROR,
            format!(
                "The gateway has {} sessions open, its limit: end one (DELETE) or wait for idle ones to close",
                server.options.max_sessions
            ),
        ));
    }
    let input = start(server, "session")?;
    let id = session_id();
    tracing::info!(session = %id, "session opened");
    lock(&server.sessions)
        .insert(id.clone(), Session { input: input.clone(), used: Instant::now() });
    Ok((id, input))
}

/// The shared gateway of stateless requests.
fn stateless(server: &Arc<Server>) -> Result<mpsc::Sender<Input>, Refusal> {
    let mut shared = lock(&server.stateless);
    if let Some(input) = shared.as_ref().filter(|i| !i.is_closed()) {
        return Ok(input.clone());
    }
    let input = start(server, "stateless")?;
    *shared = Some(input.clone());
    Ok(input)
}

/// Makes a gateway and runs its loop as a task.
fn start(server: &Arc<Server>, what: &str) -> Result<mpsc::Sender<Input>, Refusal> {
    let (gateway, inbox) = (server.factory)().map_err(|e| {
        Refusal::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            codes::INTERNAL_ERROR,
            format!("starting the {what}'s backends: {e}"),
        )
    })?;
    let (tx, rx) = mpsc::channel(256);
    let core = gateway.core;
    core.start();
    tokio::spawn(run(core, inbox.0, Source::Channel(rx), Router::Http(Streams::new())));
    Ok(tx)
}

fn session_id() -> String {
    let mut bytes = [0u8; 16];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
        .expect("the system's random source");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Stateless requests get ids of the gateway's own (`h<N>`), and so do their progress tokens;
/// returns the frame to feed, the internal ids and the way back.
fn internal_ids(server: &Server, mut value: Value) -> (Bytes, Vec<Id>, HashMap<String, Value>) {
    let mut map = HashMap::new();
    let mut ids = Vec::new();
    let items: Vec<&mut Value> = match &mut value {
        Value::Array(items) => items.iter_mut().collect(),
        one => vec![one],
    };
    for item in items {
        if item.get("method").is_none() || item.get("id").is_none() {
            continue;
        }
        let n = server.next_internal.fetch_add(1, Ordering::Relaxed);
        let internal = format!("h{n}");
        map.insert(internal.clone(), item["id"].take());
        item["id"] = json!(internal);
        ids.push(Id::String(internal.clone()));
        if let Some(token) = item.pointer_mut("/params/_meta/progressToken") {
            let t = format!("t{internal}");
            map.insert(t.clone(), token.take());
            *token = json!(t);
        }
    }
    let frame = serde_json::to_vec(&value).expect("JSON").into();
    (frame, ids, map)
}

/// Puts the client's ids (and progress tokens, and subscription ids) back into what goes out.
fn restore_ids(rx: Lines, map: HashMap<String, Value>) -> Lines {
    use futures::StreamExt;
    Box::pin(rx.map(move |chunk| restore(&chunk, &map)))
}

fn restore(chunk: &[u8], map: &HashMap<String, Value>) -> Bytes {
    // An SSE event (`id: N\ndata: LINE\n\n`, or `data: LINE\n\n`) or a bare JSON line. Only
    // a field at a line's start of an event counts: a bare line's text may hold `data: `.
    let data = if chunk.starts_with(b"data: ") {
        Some(0)
    } else if chunk.starts_with(b"id: ") || chunk.starts_with(b"event: ") {
        chunk.windows(7).position(|w| w == b"\ndata: ").map(|at| at + 1)
    } else {
        None
    };
    let (prefix, line, suffix) = match data {
        Some(at) => {
            let line_start = at + 6;
            let end = chunk.len() - chunk.iter().rev().take_while(|b| **b == b'\n').count();
            (&chunk[..line_start], &chunk[line_start..end], &chunk[end..])
        }
        None => (&chunk[..0], chunk, &chunk[chunk.len()..]),
    };
    let Ok(mut v) = serde_json::from_slice::<Value>(line) else {
        return Bytes::copy_from_slice(chunk);
    };
    let back = |slot: Option<&mut Value>| {
        if let Some(slot) = slot
            && let Some(original) = slot.as_str().and_then(|s| map.get(s))
        {
            *slot = original.clone();
        }
    };
    back(v.get_mut("id"));
    back(v.pointer_mut("/params/progressToken"));
    back(v.pointer_mut(&format!("/params/_meta/{}", SUBSCRIPTION_ID.replace('/', "~1"))));
    let mut out = prefix.to_vec();
    out.extend_from_slice(&serde_json::to_vec(&v).expect("JSON"));
    out.extend_from_slice(suffix);
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_with_or_without_a_port() {
        assert!(
            loopback_name("localhost:8080")
                && loopback_name("127.0.0.1")
                && loopback_name("[::1]:9")
        );
        assert!(!loopback_name("evil.example:8080") && !loopback_name("127.0.0.1.evil.example"));
    }

    #[test]
    fn the_era_is_read_from_a_known_version_not_from_how_its_text_sorts() {
        assert!(is_modern("2026-07-28"));
        assert!(!is_modern("2025-11-25") && !is_modern("2025-03-26"));
        // Text that sorts after the modern date but names no revision.
        assert!(!is_modern("2026-07-28x") && !is_modern("9"));
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-99"}}}"#;
        assert!(!parse(body, None).unwrap().modern);
        assert!(parse(body, Some("2026-07-28")).unwrap().modern);
    }

    /// The next line of a lane if one is there now.
    fn now(lines: &mut Lines) -> Option<Bytes> {
        use futures::{FutureExt, StreamExt};
        lines.next().now_or_never().flatten()
    }

    #[test]
    fn a_stream_whose_client_reads_too_slowly_is_dropped_and_the_session_carries_on() {
        let mut s = Streams::new();
        let (get_tx, mut get_rx) = super::super::lane::lane_of(8, 1 << 20);
        s.attach(Attach::Get { last: None, tx: get_tx });
        let note =
            Bytes::from_static(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n");
        for _ in 0..100 {
            s.line(note.clone());
        }
        assert!(s.get.is_none(), "the GET stream was dropped once 8 lines were unread");
        let mut read = 0;
        while now(&mut get_rx).is_some() {
            read += 1;
        }
        assert_eq!(read, 8, "what it held is still read, then it ends");
        assert!(s.history.len() <= HISTORY && s.history_bytes <= HISTORY_BYTES);
        // A POST's answer still reaches it.
        let (post_tx, mut post_rx) = lane();
        s.attach(Attach::Post {
            ids: vec![Id::Number(1)],
            tokens: vec![],
            mode: PostMode::Json,
            tx: post_tx,
        });
        s.line(Bytes::from_static(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"));
        assert!(now(&mut post_rx).is_some());
        // The client reconnects and is replayed what it missed, from the history.
        let (again, mut again_rx) = lane();
        s.attach(Attach::Get { last: Some(5), tx: again });
        let mut replayed = 0;
        while now(&mut again_rx).is_some() {
            replayed += 1;
        }
        assert!(replayed > 90, "{replayed}");
    }

    #[test]
    fn answers_go_to_their_post_and_the_rest_to_the_get_stream() {
        let mut s = Streams::new();
        let (post_tx, mut post_rx) = lane();
        let (get_tx, mut get_rx) = lane();
        s.attach(Attach::Post {
            ids: vec![Id::Number(1)],
            tokens: vec![json!("p")],
            mode: PostMode::Sse,
            tx: post_tx,
        });
        s.attach(Attach::Get { last: None, tx: get_tx });
        s.line(Bytes::from_static(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"p\",\"progress\":1}}\n"));
        s.line(Bytes::from_static(
            b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n",
        ));
        s.line(Bytes::from_static(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"));
        // Each stream opens with a priming event: an id, a retry delay, no data.
        let priming = now(&mut post_rx).unwrap();
        assert!(priming.starts_with(b"id: 1\nretry: ") && priming.ends_with(b"data: \n\n"));
        assert!(now(&mut get_rx).unwrap().starts_with(b"id: 2\nretry: "));
        let progress = now(&mut post_rx).unwrap();
        assert!(progress.starts_with(b"id: 3\ndata: {") && progress.ends_with(b"}\n\n"));
        assert!(now(&mut post_rx).unwrap().windows(6).any(|w| w == b"\"id\":1"));
        assert!(now(&mut post_rx).is_none(), "the stream ends after its answer");
        assert!(now(&mut get_rx).unwrap().windows(12).any(|w| w == b"list_changed"));
        // Resumption replays what the GET stream was sent after the given event.
        let (again, mut again_rx) = lane();
        s.attach(Attach::Get { last: Some(3), tx: again });
        assert!(now(&mut again_rx).unwrap().starts_with(b"id: 6\nretry: "), "its own priming");
        assert!(now(&mut again_rx).unwrap().starts_with(b"id: 4\n"), "then the replay");
    }

    #[test]
    fn stateless_ids_go_back_as_the_client_sent_them() {
        let map = HashMap::from([("h7".to_owned(), json!(1)), ("th7".to_owned(), json!("tok"))]);
        let line = restore(b"id: 3\ndata: {\"id\":\"h7\",\"result\":{}}\n\n", &map);
        assert_eq!(&line[..], b"id: 3\ndata: {\"id\":1,\"result\":{}}\n\n");
        let p = restore(
            b"{\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"th7\"}}",
            &map,
        );
        assert!(p.windows(5).any(|w| w == b"\"tok\""));
    }

    /// A bare answer whose text holds `data: ` is not an SSE event (it used to be cut there,
    /// fail to parse, and reach the client with the gateway's own id).
    #[test]
    fn an_answer_holding_data_colon_gets_its_id_back() {
        let map = HashMap::from([("h0".to_owned(), json!(7))]);
        let bare = br#"{"id":"h0","result":{"content":[{"type":"text","text":"metadata: 1"}]}}"#;
        let v: Value = serde_json::from_slice(&restore(bare, &map)).unwrap();
        assert_eq!(v["id"], json!(7));
        assert_eq!(v["result"]["content"][0]["text"], "metadata: 1");
        let event = [b"id: 4\ndata: ".as_slice(), bare, b"\n\n"].concat();
        let back = restore(&event, &map);
        assert!(back.starts_with(b"id: 4\ndata: {") && back.ends_with(b"}\n\n"));
        let v: Value =
            serde_json::from_slice(&back[b"id: 4\ndata: ".len()..back.len() - 2]).unwrap();
        assert_eq!(v["id"], json!(7));
        let framed = [b"data: ".as_slice(), bare, b"\n\n"].concat();
        assert!(restore(&framed, &map).starts_with(b"data: {\"id\":7"));
    }
}
