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
//! share one gateway; its session keys them by ids of its own and writes each client's id back
//! into its answers, so that two clients' ids never meet (each POST is a stream of the
//! session, its [`Origin`]).
//!
//! Every request must carry the bearer token (unless `--no-auth`, loopback only), a `Host`
//! that names this server and, when it has one, an `Origin` on the same host or on loopback
//! (against DNS rebinding); bodies are bounded.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST, HeaderValue, ORIGIN};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::jsonrpc::{ErrorObject, Id, codes};
use crate::protocol::ProtocolVersion;
use crate::protocol::modern::META_PROTOCOL_VERSION as META_VERSION;

use super::super::{Gateway, GatewayError, lock};
use super::lane::lane;

mod responses;
mod streams;

use responses::{auto_response, json_response, sse_response};

use super::{Inbox, Input, Router, Source, run};
use crate::protocol::server::Origin;
pub(crate) use streams::{Attach, PostMode, Streams};

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";
const LAST_EVENT_HEADER: &str = "last-event-id";

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
    /// Numbers the POSTs (each is a stream of its session).
    next_stream: AtomicU64,
    /// The sessions' loops, awaited when the gateway is told to stop.
    loops: Mutex<tokio::task::JoinSet<()>>,
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

/// Serves the gateway over Streamable HTTP until SIGTERM or SIGINT, then closes every
/// session (their requests in flight are answered for a while, their backends stopped) and
/// returns. `ready` is told the address bound (the port, when `addr` asked for 0).
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
            next_stream: AtomicU64::new(0),
            loops: Mutex::new(tokio::task::JoinSet::new()),
        });
        tokio::spawn(expire(server.clone()));
        let mut stop = std::pin::pin!(stop_signal());
        loop {
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                () = &mut stop => break,
            };
            let (stream, _) = match accepted {
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
        drop(listener);
        close(&server).await;
        Ok(())
    })
}

/// SIGTERM or SIGINT (never, when they cannot be caught: the process is then ended by them).
async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
        (Ok(mut term), Ok(mut int)) => {
            let name = tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = int.recv() => "SIGINT",
            };
            tracing::info!("{name}: closing every session");
        }
        (Err(e), _) | (_, Err(e)) => {
            tracing::warn!("cannot catch SIGTERM/SIGINT ({e}): they end the gateway at once");
            std::future::pending::<()>().await;
        }
    }
}

/// Ends every session: their loops see their input end, answer what is in flight (up to
/// `DRAIN`) and stop their backends.
async fn close(server: &Server) {
    lock(&server.sessions).clear();
    *lock(&server.stateless) = None;
    let mut loops = std::mem::take(&mut *lock(&server.loops));
    let all = async { while loops.join_next().await.is_some() {} };
    if tokio::time::timeout(super::DRAIN + Duration::from_secs(5), all).await.is_err() {
        tracing::warn!("sessions still open after {} s: stopping anyway", super::DRAIN.as_secs());
    }
}

/// Closes sessions idle past the timeout.
async fn expire(server: Arc<Server>) {
    loop {
        tokio::time::sleep(Duration::from_secs(30)).await;
        // Loops that ended leave their outcome in the set until taken.
        while lock(&server.loops).try_join_next().is_some() {}
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
    modern: bool,
}

fn parse(body: &[u8], header_version: Option<&str>) -> Result<Parsed, ErrorObject> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| ErrorObject::new(codes::PARSE_ERROR, format!("Parse error: {e}")))?;
    let items: Vec<&Value> = match &value {
        Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    let mut parsed = Parsed { value: Value::Null, requests: Vec::new(), modern: false };
    for item in items {
        let method = item.get("method").and_then(Value::as_str);
        let id = item.get("id").and_then(|v| serde_json::from_value::<Id>(v.clone()).ok());
        if let (Some(id), Some(method)) = (id, method) {
            parsed.requests.push((id, method.to_owned()));
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
    let (input, new_session, scoped) = match session_of(server, session.as_deref(), &parsed) {
        Ok(which) => which,
        Err(refused) => return refused.response(),
    };
    let batch = parsed.value.is_array();
    let stream = server.next_stream.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let origin = Some(Origin { stream, scoped });
    if parsed.requests.is_empty() {
        let _ = input.send(Input::Frame(body, origin)).await;
        let mut r = Response::new(full(Bytes::new()));
        *r.status_mut() = StatusCode::ACCEPTED;
        return r;
    }
    let (tx, rx) = lane();
    // One request whose answer comes first is answered as JSON (no SSE event to fit in a
    // client's event-size limit, as a large resource read would not); with progress or
    // anything else before it, as SSE. A batch is always SSE.
    let mode = match (sse, batch) {
        (true, false) => PostMode::Auto,
        (true, true) => PostMode::Sse,
        (false, _) => PostMode::Json,
    };
    let (head_tx, head) = tokio::sync::oneshot::channel();
    let head_tx = (mode == PostMode::Auto).then_some(head_tx);
    let attach = Attach::Post { stream, mode, tx, head: head_tx };
    if input.send(Input::Attach(attach)).await.is_err()
        || input.send(Input::Frame(body, origin)).await.is_err()
    {
        return rpc_error(StatusCode::NOT_FOUND, None, codes::INVALID_REQUEST, "Session ended");
    }
    let mut response = match mode {
        PostMode::Sse => sse_response(rx),
        PostMode::Json => json_response(rx, batch).await,
        PostMode::Auto => auto_response(rx, head, parsed.modern).await,
    };
    if let Some(id) = new_session
        && let Ok(v) = HeaderValue::from_str(&id)
    {
        response.headers_mut().insert(SESSION_HEADER, v);
    }
    response
}

/// Which session a POST goes to: the header's; a new one for `initialize`; the shared
/// stateless one (a stateless request, even an `initialize`, which that revision answers
/// with -32601, never opens a session). With it, the new session's id and whether its ids are
/// the client's alone (stateless: the session keys them by its own).
fn session_of(
    server: &Arc<Server>,
    session: Option<&str>,
    parsed: &Parsed,
) -> Result<(mpsc::Sender<Input>, Option<String>, bool), Refusal> {
    let initialize = parsed.requests.iter().any(|(_, m)| m == "initialize") && !parsed.modern;
    match (session, initialize, parsed.modern) {
        (Some(id), _, _) => used(server, id).map(|input| (input, None, false)),
        (None, true, _) => open_session(server).map(|(id, input)| (input, Some(id), false)),
        (None, false, true) => stateless(server).map(|input| (input, None, true)),
        (None, false, false) => Err(Refusal::new(
            StatusCode::BAD_REQUEST,
            codes::INVALID_REQUEST,
            "Missing Mcp-Session-Id: send initialize first (or speak 2026-07-28)",
        )),
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
    if gateway.reactor.is_some() {
        return Err(Refusal::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            codes::INTERNAL_ERROR,
            format!(
                "starting the {what}'s backends: the gateway's host was built with its reactor on the caller's thread (HostBuilder::build_hosted), which HTTP sessions cannot run; build it with HostBuilder::build"
            ),
        ));
    }
    let (tx, rx) = mpsc::channel(256);
    let core = gateway.core;
    let session = run(core, inbox.0, Source::Channel(rx), Router::Http(Streams::new()));
    lock(&server.loops).spawn(session);
    Ok(tx)
}

fn session_id() -> String {
    let mut bytes = [0u8; 16];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
        .expect("the system's random source");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
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
}
