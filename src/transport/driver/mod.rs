//! The transport's thread: a tokio current-thread runtime running the command loop, one task
//! per POST in flight and one per open event stream. Everything here is private; the public
//! face is [`super::HttpTransport`].
//!
//! Ordering: commands are handled in the order they were queued. An `initialize` POST is
//! handled inline (a barrier), so the mode (Streamable HTTP or legacy) and the session id are
//! settled before the next message goes out; every other POST runs as its own task.
//!
//! `stream` reads SSE streams (and resumes them); `legacy` is the HTTP+SSE fallback.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use futures_channel::oneshot;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, RequestBuilder, Response, StatusCode, Url};
use tokio::task::AbortHandle;

use super::wire::{Outgoing, encode_header_value, is_modern, valid_session_id};
use super::{BoxError, GetStream, HttpConfig, Incoming, TransportError};
use crate::jsonrpc::Id;
use legacy::{legacy_connect, post_legacy};
use stream::{StreamGuard, StreamKind, open_get, spawn_stream};

mod legacy;
mod stream;

const SESSION_HEADER: &str = "mcp-session-id";
const VERSION_HEADER: &str = "mcp-protocol-version";
const LAST_EVENT_ID: &str = "last-event-id";
const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";
const ACCEPT_BOTH: &str = "application/json, text/event-stream";
const EVENT_STREAM: &str = "text/event-stream";
const JSON: &str = "application/json";
/// How much of an error response's body is kept.
const EXCERPT: usize = 4096;
/// The shortest wait before a reconnection (a `retry: 0` must not become a busy loop).
const MIN_RETRY: Duration = Duration::from_millis(10);

/// What the public handle asks of the thread.
pub(super) enum TransportCommand {
    Send {
        body: Bytes,
        out: Outgoing,
        extra: HeaderMap,
        reply: oneshot::Sender<Result<(), TransportError>>,
    },
    OpenGet {
        reply: oneshot::Sender<Result<GetStream, TransportError>>,
    },
    Cancel {
        id: Id,
    },
    Close {
        reply: oneshot::Sender<Result<(), TransportError>>,
    },
}

/// State shared by the handle and the thread (never locked across an `.await`).
#[derive(Debug, Default)]
pub(super) struct Shared {
    /// `Mcp-Session-Id` assigned by the server's `initialize` response.
    pub(super) session_id: Option<String>,
    /// The negotiated protocol version (`MCP-Protocol-Version`).
    pub(super) protocol_version: Option<String>,
    /// The legacy POST endpoint, once the HTTP+SSE fallback succeeded.
    pub(super) legacy: Option<Url>,
    /// A GET stream task is running.
    get_open: bool,
    /// The OAuth access token, sent as `Authorization: Bearer` on every request.
    pub(super) access_token: Option<String>,
}

/// A consistent view of [`Shared`] for one exchange.
struct Snapshot {
    session: Option<String>,
    version: Option<String>,
    modern: bool,
    legacy: Option<Url>,
}

/// Everything the tasks share.
pub(super) struct Ctx {
    client: reqwest::Client,
    url: Url,
    headers: HeaderMap,
    timeout: Duration,
    max_message: usize,
    default_retry: Duration,
    max_retry: Duration,
    max_failures: u32,
    legacy_fallback: bool,
    shared: Arc<Mutex<Shared>>,
    incoming: async_channel::Sender<Incoming>,
    /// How to stop each request's POST or stream by request id, with a per-spawn token (ids
    /// can be reused).
    streams: Mutex<HashMap<Id, (u64, Stop)>>,
    next_token: Mutex<u64>,
    /// OAuth, when configured: one flow at a time.
    oauth: Option<(super::oauth::OAuthConfig, tokio::sync::Mutex<super::oauth::OAuthState>)>,
}

/// Turns configured header pairs into a header map (values marked sensitive).
pub(super) fn header_map(pairs: &[(String, String)]) -> Result<HeaderMap, TransportError> {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        let bad = |reason: String| TransportError::InvalidHeader { name: name.clone(), reason };
        let key = HeaderName::from_bytes(name.as_bytes()).map_err(|e| bad(e.to_string()))?;
        let mut val = HeaderValue::from_str(value).map_err(|e| bad(e.to_string()))?;
        val.set_sensitive(true);
        map.append(key, val);
    }
    Ok(map)
}

impl Ctx {
    pub(super) fn new(
        config: &HttpConfig,
        shared: Arc<Mutex<Shared>>,
        incoming: async_channel::Sender<Incoming>,
    ) -> Result<Ctx, TransportError> {
        let invalid =
            |reason: String| TransportError::InvalidUrl { url: config.url.clone(), reason };
        let url = Url::parse(&config.url).map_err(|e| invalid(e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid(format!("scheme {:?} is not http or https", url.scheme())));
        }
        let client = reqwest::Client::builder()
            .connect_timeout(config.timeout)
            .user_agent(concat!("ringmcp/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| TransportError::Client { source: e.into() })?;
        Ok(Ctx {
            client,
            url,
            headers: header_map(&config.headers)?,
            timeout: config.timeout,
            max_message: config.max_message_size,
            default_retry: config.default_retry,
            max_retry: config.max_retry,
            max_failures: config.max_reconnect_failures,
            legacy_fallback: config.legacy_fallback,
            shared,
            incoming,
            streams: Mutex::new(HashMap::new()),
            next_token: Mutex::new(0),
            oauth: config.oauth.clone().map(|c| (c, tokio::sync::Mutex::default())),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn snapshot(&self) -> Snapshot {
        let shared = self.lock();
        Snapshot {
            session: shared.session_id.clone(),
            version: shared.protocol_version.clone(),
            modern: shared.protocol_version.as_deref().is_some_and(is_modern),
            legacy: shared.legacy.clone(),
        }
    }

    /// Hands an item to the caller, waiting while the channel is full. False once every
    /// receiver is gone.
    async fn deliver(&self, item: Incoming) -> bool {
        self.incoming.send(item).await.is_ok()
    }

    /// A request with the configured headers (and the OAuth token, once there is one).
    fn request(&self, method: Method, url: &Url) -> RequestBuilder {
        let request = self.client.request(method, url.clone()).headers(self.headers.clone());
        match self.lock().access_token.as_deref() {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    /// Answers a 401/403 with the OAuth flow (when configured), unless another request got
    /// a new token since `used` was sent with. Errors when there is no OAuth or it failed.
    async fn reauthorize(
        &self,
        status: u16,
        challenge: super::oauth::Challenge,
        used: Option<String>,
    ) -> Result<(), TransportError> {
        let Some((config, state)) = &self.oauth else {
            return Err(TransportError::Unauthorized { status, challenge });
        };
        let mut state = state.lock().await;
        if self.lock().access_token != used {
            return Ok(()); // Someone else re-authorized meanwhile: just retry.
        }
        // A flow that just failed for this same token is not run again for each waiter.
        if let Some((token, error)) = &state.failed
            && *token == used
        {
            let reason = format!("an earlier attempt failed: {error}");
            let step = super::error::OAuthStep::Authorization;
            return Err(TransportError::OAuth { step, reason, source: None });
        }
        match super::oauth::authorize(
            &self.client,
            config,
            &mut state,
            &self.url,
            status,
            &challenge,
        )
        .await
        {
            Ok(()) => {
                state.failed = None;
                self.lock().access_token = state.token.clone();
                Ok(())
            }
            Err(e) => {
                state.failed = Some((used, e.to_string()));
                Err(e)
            }
        }
    }

    /// Sends a request, waiting at most `deadline` for the response head.
    async fn execute(
        &self,
        method: &'static str,
        url: &Url,
        request: RequestBuilder,
        deadline: Option<Duration>,
    ) -> Result<Response, TransportError> {
        let sent = request.send();
        let result = match deadline {
            Some(after) => tokio::time::timeout(after, sent)
                .await
                .map_err(|_| TransportError::Timeout { step: response_step(method), after })?,
            None => sent.await,
        };
        result.map_err(|e| TransportError::Connect {
            method,
            url: url.to_string(),
            source: e.into(),
        })
    }

    /// A non-success response as an error, with the start of its body.
    async fn status_error(&self, method: &'static str, mut response: Response) -> TransportError {
        let status = response.status().as_u16();
        let mut body = Vec::new();
        let read = async {
            while body.len() < EXCERPT {
                match response.chunk().await {
                    Ok(Some(chunk)) => body.extend_from_slice(&chunk),
                    _ => break,
                }
            }
        };
        // A server that never finishes its error body still gets reported.
        let _ = tokio::time::timeout(self.timeout, read).await;
        body.truncate(EXCERPT);
        TransportError::Status { method, status, body: String::from_utf8_lossy(&body).into_owned() }
    }

    /// A whole (JSON) body, bounded by the maximum message size and the timeout.
    async fn read_body(
        &self,
        method: &'static str,
        mut response: Response,
    ) -> Result<Bytes, TransportError> {
        let limit = self.max_message;
        if response.content_length().is_some_and(|n| n > limit as u64) {
            return Err(TransportError::MessageTooLarge { limit });
        }
        let read = async {
            let mut body = Vec::new();
            while let Some(chunk) = response
                .chunk()
                .await
                .map_err(|e| TransportError::Body { method, source: e.into() })?
            {
                if body.len() + chunk.len() > limit {
                    return Err(TransportError::MessageTooLarge { limit });
                }
                body.extend_from_slice(&chunk);
            }
            Ok(Bytes::from(body))
        };
        tokio::time::timeout(self.timeout, read).await.map_err(|_| TransportError::Timeout {
            step: "reading a JSON response",
            after: self.timeout,
        })?
    }

    /// Drops the session id after a 404 (if it is still the one that was sent) and tells the
    /// caller, once.
    async fn expire(&self, sent: &str) {
        let cleared = {
            let mut shared = self.lock();
            let ours = shared.session_id.as_deref() == Some(sent);
            if ours {
                shared.session_id = None;
            }
            ours
        };
        if cleared {
            tracing::debug!("MCP session expired (404); the caller must re-initialize");
            self.deliver(Incoming::SessionExpired).await;
        }
    }

    /// The legacy stream or session is gone: back to Streamable HTTP (the next `initialize`
    /// goes through the fallback again), and tell the caller, once.
    async fn legacy_lost(&self, endpoint: &Url) {
        let cleared = {
            let mut shared = self.lock();
            let ours = shared.legacy.as_ref() == Some(endpoint);
            if ours {
                shared.legacy = None;
            }
            ours
        };
        if cleared {
            tracing::debug!("legacy HTTP+SSE session ended; the caller must re-initialize");
            self.deliver(Incoming::SessionExpired).await;
        }
    }

    fn cancel(&self, id: &Id) {
        let entry = self.streams.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
        match entry {
            Some((_, Stop::Post(stop))) => {
                let _ = stop.send(());
            }
            Some((_, Stop::Stream(handle))) => handle.abort(),
            None => {}
        }
    }

    /// A new token for a tracked POST or stream.
    fn next_token(&self) -> u64 {
        let mut next = self.next_token.lock().unwrap_or_else(PoisonError::into_inner);
        *next += 1;
        *next
    }

    /// Tracks request `id`'s work as `stop`, under a new token.
    fn track(&self, id: Id, stop: Stop) -> u64 {
        let token = self.next_token();
        self.streams.lock().unwrap_or_else(PoisonError::into_inner).insert(id, (token, stop));
        token
    }
}

/// How a request's work stops when it is cancelled (it timed out, or the caller gave up).
pub(super) enum Stop {
    /// Its POST, still waiting for the response's head: the POST ends as if sent (nothing is
    /// owed to anyone), and its connection is closed.
    Post(oneshot::Sender<()>),
    /// Its SSE stream's task.
    Stream(AbortHandle),
}

fn response_step(method: &'static str) -> &'static str {
    match method {
        "POST" => "waiting for the POST response",
        "GET" => "waiting for the GET response",
        _ => "waiting for the DELETE response",
    }
}

/// The media type of a response, lower-cased, without parameters.
fn media_type(response: &Response) -> String {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

/// Starts the transport's thread with its runtime.
pub(super) fn spawn(
    ctx: Ctx,
    commands: async_channel::Receiver<TransportCommand>,
) -> Result<JoinHandle<()>, TransportError> {
    let client_error = |e: std::io::Error| TransportError::Client { source: BoxError::from(e) };
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(client_error)?;
    let ctx = Arc::new(ctx);
    std::thread::Builder::new()
        .name("ringmcp-http".into())
        .spawn(move || {
            let (reply, result) = runtime.block_on(run(Arc::clone(&ctx), commands));
            // Dropping the runtime drops every stream task and its connection.
            drop(runtime);
            let _ = ctx.incoming.try_send(Incoming::Closed);
            drop(ctx);
            if let Some(reply) = reply {
                let _ = reply.send(result);
            }
        })
        .map_err(client_error)
}

type CloseReply = Option<oneshot::Sender<Result<(), TransportError>>>;

/// The command loop; returns on `Close` or when the handle is gone, after the DELETE.
async fn run(
    ctx: Arc<Ctx>,
    commands: async_channel::Receiver<TransportCommand>,
) -> (CloseReply, Result<(), TransportError>) {
    while let Ok(command) = commands.recv().await {
        match command {
            TransportCommand::Send { body, out, extra, reply } if out.is_initialize() => {
                let _ = reply.send(post(&ctx, body, out, extra).await);
            }
            TransportCommand::Send { body, out, extra, reply } => {
                // A request's POST can be cancelled until its stream (if any) takes over:
                // a server that holds the response's head back must not hold the
                // connection after the caller gave up.
                let (stop, stopped) = match out.request_id() {
                    Some(id) => {
                        let (tx, rx) = oneshot::channel();
                        let token = ctx.track(id.clone(), Stop::Post(tx));
                        (Some(StreamGuard::post(Arc::clone(&ctx), token, id.clone())), Some(rx))
                    }
                    None => (None, None),
                };
                let ctx = Arc::clone(&ctx);
                tokio::spawn(async move {
                    let _untrack = stop;
                    let cancelled = async {
                        // A dropped sender: its stream took over, or the POST is untracked.
                        if let Some(rx) = stopped
                            && rx.await.is_ok()
                        {
                            return;
                        }
                        std::future::pending::<()>().await;
                    };
                    let outcome = tokio::select! {
                        outcome = post(&ctx, body, out, extra) => outcome,
                        () = cancelled => Ok(()),
                    };
                    let _ = reply.send(outcome);
                });
            }
            // Its own task: a server slow to send the GET's head must not hold up the POSTs.
            TransportCommand::OpenGet { reply } => {
                let ctx = Arc::clone(&ctx);
                tokio::spawn(async move {
                    let _ = reply.send(open_get(&ctx).await);
                });
            }
            TransportCommand::Cancel { id } => ctx.cancel(&id),
            TransportCommand::Close { reply } => return (Some(reply), close_session(&ctx).await),
        }
    }
    (None, close_session(&ctx).await)
}

/// POSTs one message in the current mode; an `initialize` refused with 400/404/405 tries the
/// legacy transport.
async fn post(
    ctx: &Arc<Ctx>,
    body: Bytes,
    out: Outgoing,
    extra: HeaderMap,
) -> Result<(), TransportError> {
    let snap = ctx.snapshot();
    if let Some(endpoint) = &snap.legacy {
        return post_legacy(ctx, endpoint, body, extra).await;
    }
    // A 401 runs the OAuth flow and the POST goes again; a 403 `insufficient_scope` asks for
    // more scope, a bounded number of times.
    let step_ups = ctx.oauth.as_ref().map_or(0, |(c, _)| c.max_step_ups);
    let mut attempts = 0;
    let sent = loop {
        let used = ctx.lock().access_token.clone();
        match post_streamable(ctx, &snap, body.clone(), &out, extra.clone()).await {
            Err(TransportError::Unauthorized { status, challenge })
                if ctx.oauth.is_some()
                    && (attempts == 0 || (status == 403 && attempts <= step_ups)) =>
            {
                attempts += 1;
                ctx.reauthorize(status, challenge, used).await?;
            }
            other => break other,
        }
    };
    match sent {
        Err(refused @ TransportError::Status { status: 400 | 404 | 405, .. })
            if out.is_initialize()
                && snap.session.is_none()
                && !snap.modern
                && ctx.legacy_fallback =>
        {
            tracing::debug!("initialize refused ({refused}); trying legacy HTTP+SSE");
            match legacy_connect(ctx).await {
                Ok(endpoint) => post_legacy(ctx, &endpoint, body, extra).await,
                // The GET answered with an event stream but a bad handshake: that is the news.
                Err(e @ TransportError::LegacyHandshake { .. }) => Err(e),
                Err(e) => {
                    tracing::debug!("legacy HTTP+SSE fallback failed: {e}");
                    Err(refused)
                }
            }
        }
        other => other,
    }
}

async fn post_streamable(
    ctx: &Arc<Ctx>,
    snap: &Snapshot,
    body: Bytes,
    out: &Outgoing,
    extra: HeaderMap,
) -> Result<(), TransportError> {
    let mut req =
        ctx.request(Method::POST, &ctx.url).header(ACCEPT, ACCEPT_BOTH).header(CONTENT_TYPE, JSON);
    if let Some(session) = snap.session.as_deref()
        && !snap.modern
    {
        req = req.header(SESSION_HEADER, session);
    }
    if let Some(version) = snap.version.as_deref()
        && (snap.modern || !out.is_initialize())
    {
        req = req.header(VERSION_HEADER, version);
    }
    if snap.modern {
        if let Some(method) = &out.method {
            req = req.header(METHOD_HEADER, encode_header_value(method).as_ref());
        }
        if let Some(name) = &out.name {
            req = req.header(NAME_HEADER, encode_header_value(name).as_ref());
        }
    }
    req = req.headers(extra).body(body);
    // The head of a response to a request may wait for the result (JSON mode); `initialize`
    // may not (it is a barrier for every later command).
    let long = (out.request_id().is_some() || out.batch) && !out.is_initialize();
    let response = ctx.execute("POST", &ctx.url, req, (!long).then_some(ctx.timeout)).await?;
    let status = response.status();
    if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
        let challenge = super::oauth::challenge_of(&response);
        if super::oauth::needs_auth(status, &challenge) {
            return Err(TransportError::Unauthorized { status: status.as_u16(), challenge });
        }
    }
    if status == StatusCode::NOT_FOUND
        && !snap.modern
        && let Some(sent) = snap.session.as_deref()
    {
        ctx.expire(sent).await;
        return Err(TransportError::SessionExpired);
    }
    if !status.is_success() {
        // 2026-07-28 answers a request it refuses with 400/404 and a JSON-RPC error for it
        // (-32020 header mismatch, -32022 unsupported version, -32601 unknown method): that
        // error is the request's answer, delivered like any other.
        if snap.modern
            && media_type(&response) == JSON
            && let Some(id) = out.request_id()
        {
            let body = ctx.read_body("POST", response).await?;
            if is_error_for(&body, id) {
                ctx.deliver(Incoming::Message(body)).await;
                return Ok(());
            }
            let body = String::from_utf8_lossy(&body[..body.len().min(EXCERPT)]).into_owned();
            return Err(TransportError::Status { method: "POST", status: status.as_u16(), body });
        }
        return Err(ctx.status_error("POST", response).await);
    }
    if out.is_initialize()
        && !snap.modern
        && let Some(value) = response.headers().get(SESSION_HEADER)
    {
        let id = value.to_str().ok().filter(|id| valid_session_id(id));
        let id = id.ok_or(TransportError::InvalidSessionId)?;
        ctx.lock().session_id = Some(id.to_owned());
    }
    let request = out.request_id().cloned();
    if request.is_none() && !out.batch {
        // A notification or a response: 202 (any success will do), nothing to read.
        return Ok(());
    }
    match media_type(&response).as_str() {
        JSON => {
            let message = ctx.read_body("POST", response).await?;
            if !message.iter().all(u8::is_ascii_whitespace) {
                ctx.deliver(Incoming::Message(message)).await;
            }
            Ok(())
        }
        EVENT_STREAM => {
            spawn_stream(ctx, response, StreamKind::Post(request));
            Ok(())
        }
        // Accepted without a body: the response will come on the GET stream.
        _ if status == StatusCode::ACCEPTED => Ok(()),
        other => {
            Err(TransportError::ContentType { method: "POST", content_type: other.to_owned() })
        }
    }
}

/// Whether `body` is a JSON-RPC error response to request `id`.
fn is_error_for(body: &[u8], id: &Id) -> bool {
    #[derive(serde::Deserialize)]
    struct Envelope {
        id: Option<Id>,
        error: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_slice::<Envelope>(body)
        .is_ok_and(|e| e.error.is_some() && e.id.as_ref() == Some(id))
}

/// DELETEs the session (Streamable HTTP with a session id only). 404 and 405 are fine.
async fn close_session(ctx: &Ctx) -> Result<(), TransportError> {
    let snap = ctx.snapshot();
    let Some(session) = snap.session.as_deref().filter(|_| snap.legacy.is_none() && !snap.modern)
    else {
        return Ok(());
    };
    let mut req = ctx.request(Method::DELETE, &ctx.url).header(SESSION_HEADER, session);
    if let Some(version) = snap.version.as_deref() {
        req = req.header(VERSION_HEADER, version);
    }
    let response = ctx.execute("DELETE", &ctx.url, req, Some(ctx.timeout)).await?;
    ctx.lock().session_id = None;
    match response.status() {
        s if s.is_success() => Ok(()),
        StatusCode::NOT_FOUND | StatusCode::METHOD_NOT_ALLOWED => Ok(()),
        _ => Err(ctx.status_error("DELETE", response).await),
    }
}
