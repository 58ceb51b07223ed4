//! Network transports: the MCP **Streamable HTTP** client (revisions 2025-03-26 to 2025-11-25,
//! plus the headers of the stateless 2026-07-28 variant) and the legacy **HTTP+SSE** client
//! (2024-11-05) it falls back to.
//!
//! ```text
//!  caller (any runtime, or none)                 "ringmcp-http" thread (tokio current-thread)
//!  ─────────────────────────────                 ───────────────────────────────────────────
//!  send(msg) ──── bounded command channel ──▶  driver ── POST ──▶ 202 / JSON / SSE response
//!     ▲   (oneshot: Ok once the server                     │            │ (stream task per POST:
//!     │    accepted the POST)                              │            │  events in order,
//!  incoming() ◀── bounded channel ◀── every server message, in order ◀─┘  resumes with GET +
//!     │           (responses, requests,          GET stream (optional) ──  Last-Event-ID)
//!     │            notifications) + events       legacy: GET ─▶ `endpoint` ─▶ POSTs go there
//!  close() ─────────────────────────────────▶  DELETE session (405 accepted), stop
//! ```
//!
//! The transport carries raw JSON-RPC bytes: the caller encodes with [`crate::jsonrpc`] and
//! decodes what arrives on [`HttpTransport::incoming`]. It looks into a message only as far as
//! HTTP needs: the method and id of what it sends (headers, which response ends a stream), and
//! the ids of responses it receives.
//!
//! What it does (docs/protocol.md, "Transports"):
//! * every POST has `Accept: application/json, text/event-stream` and
//!   `Content-Type: application/json`; JSON and SSE responses, with the requests and
//!   notifications that precede the response on the SSE stream; 202 with no body;
//! * `Mcp-Session-Id` from the `initialize` response is sent on every later POST, GET and
//!   DELETE; a 404 to a request carrying it drops the id and reports
//!   [`Incoming::SessionExpired`] / [`TransportError::SessionExpired`];
//!   `MCP-Protocol-Version` on every request after `initialize`
//!   ([`set_protocol_version`](HttpTransport::set_protocol_version));
//! * SSE: comments and priming events (empty data) are skipped; `retry` is honoured; when a
//!   stream closes before its response the transport waits `retry` ms and resumes with GET +
//!   `Last-Event-ID`, as often as the server keeps answering; a drop is never turned into
//!   a cancellation; the optional GET stream, 405 meaning "none"; DELETE on close,
//!   405 accepted;
//! * fallback: when `initialize` gets 400, 404 or 405, GET the URL, wait for the `endpoint`
//!   event and speak HTTP+SSE from then on;
//! * once the protocol version is 2026-07-28 or later: `Mcp-Method` and `Mcp-Name`
//!   (`=?base64?…?=` when not header-safe), `MCP-Protocol-Version` on every POST, and no
//!   session, GET stream, resumption or DELETE (`Mcp-Param-*` headers are the caller's,
//!   through [`send_with_headers`](HttpTransport::send_with_headers) and
//!   [`encode_header_value`]).
//!
//! Bounds: one server message is at most [`HttpConfig::max_message_size`] bytes (16 MiB by
//! default), the incoming channel holds [`HttpConfig::incoming_capacity`] items (a full channel
//! stops reading from the network, it never drops), and the command channel is bounded too.
//!
//! OAuth is [`oauth`]'s (the host drives it; a fixed token can also go through
//! [`HttpConfig::bearer_token`]). Not done: batching on send.

#![forbid(unsafe_code)]

mod driver;
mod error;
pub mod oauth;
pub mod sse;
mod wire;

use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use futures_channel::oneshot;

pub use error::{BoxError, OAuthStep, TransportError};
pub use wire::{decode_header_value, encode_header_value};

use crate::jsonrpc::Id;
use driver::{Ctx, Shared, TransportCommand};

/// Settings of an HTTP transport. Build with [`HttpConfig::new`] and the chained setters.
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpConfig {
    /// The MCP endpoint, e.g. `https://example.com/mcp` (for a legacy server: its SSE URL).
    pub url: String,
    /// Extra headers sent on every request (e.g. `Authorization: Bearer …` from the config).
    pub headers: Vec<(String, String)>,
    /// Connect timeout, and how long to wait for the response head of every GET, DELETE and
    /// legacy POST, of POSTs of notifications and responses, and for the legacy `endpoint`
    /// event. The head of a POSTed *request* may legitimately wait for the result (a JSON
    /// response), so it is bounded by the caller's own request deadline instead
    /// ([`HttpTransport::cancel_stream`]). Default 30 s.
    pub timeout: Duration,
    /// The largest server message (one JSON body or one SSE event's data). Default 16 MiB.
    pub max_message_size: usize,
    /// Capacity of the [`HttpTransport::incoming`] channel. Default 256.
    pub incoming_capacity: usize,
    /// The wait before resuming a stream when the server set no `retry`. Default 1 s.
    pub default_retry: Duration,
    /// The longest `retry` honoured (a larger one is cut to this). Default 60 s.
    pub max_retry: Duration,
    /// Failed reconnection attempts in a row (network error, non-success status) before a
    /// stream is given up. Default 5.
    pub max_reconnect_failures: u32,
    /// Whether an `initialize` answered with 400, 404 or 405 tries the legacy HTTP+SSE
    /// transport. Default true.
    pub legacy_fallback: bool,
    /// OAuth for servers that answer 401 (`None`: a 401 is an error). Default `None`.
    pub oauth: Option<oauth::OAuthConfig>,
}

impl HttpConfig {
    /// A configuration for `url` with the defaults.
    pub fn new(url: impl Into<String>) -> HttpConfig {
        HttpConfig {
            url: url.into(),
            headers: Vec::new(),
            timeout: Duration::from_secs(30),
            max_message_size: 16 << 20,
            incoming_capacity: 256,
            default_retry: Duration::from_secs(1),
            max_retry: Duration::from_secs(60),
            max_reconnect_failures: 5,
            legacy_fallback: true,
            oauth: None,
        }
    }

    /// Authorizes with OAuth when the server answers 401 (see [`oauth`]).
    pub fn oauth(mut self, config: oauth::OAuthConfig) -> HttpConfig {
        self.oauth = Some(config);
        self
    }

    /// Adds a header sent on every request.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> HttpConfig {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Adds `Authorization: Bearer <token>`.
    pub fn bearer_token(self, token: &str) -> HttpConfig {
        self.header("Authorization", format!("Bearer {token}"))
    }

    /// Sets [`timeout`](Self::timeout).
    pub fn timeout(mut self, timeout: Duration) -> HttpConfig {
        self.timeout = timeout;
        self
    }

    /// Sets [`max_message_size`](Self::max_message_size).
    pub fn max_message_size(mut self, bytes: usize) -> HttpConfig {
        self.max_message_size = bytes;
        self
    }

    /// Sets [`incoming_capacity`](Self::incoming_capacity) (at least 1).
    pub fn incoming_capacity(mut self, items: usize) -> HttpConfig {
        self.incoming_capacity = items.max(1);
        self
    }

    /// Sets [`default_retry`](Self::default_retry).
    pub fn default_retry(mut self, wait: Duration) -> HttpConfig {
        self.default_retry = wait;
        self
    }

    /// Sets [`legacy_fallback`](Self::legacy_fallback).
    pub fn legacy_fallback(mut self, on: bool) -> HttpConfig {
        self.legacy_fallback = on;
        self
    }
}

impl fmt::Debug for HttpConfig {
    /// Header values are not printed: they are usually credentials.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("HttpConfig")
            .field("url", &self.url)
            .field("headers", &names)
            .field("timeout", &self.timeout)
            .field("max_message_size", &self.max_message_size)
            .field("incoming_capacity", &self.incoming_capacity)
            .field("default_retry", &self.default_retry)
            .field("max_retry", &self.max_retry)
            .field("max_reconnect_failures", &self.max_reconnect_failures)
            .field("legacy_fallback", &self.legacy_fallback)
            .field("oauth", &self.oauth)
            .finish()
    }
}

/// What arrives on [`HttpTransport::incoming`], in the order the server sent it (per stream).
#[derive(Debug)]
#[non_exhaustive]
pub enum Incoming {
    /// One server message as raw JSON: a response, a request (answer it with
    /// [`HttpTransport::send`]) or a notification; a batch array from a 2025-03-26 server.
    Message(Bytes),
    /// The server forgot the session (404 to a request carrying its id, or the legacy stream
    /// ended): every request in flight is lost, and the caller must send a fresh `initialize`.
    SessionExpired,
    /// A stream ended for good: `request` is the request whose response it still owed (`None`
    /// for the GET stream). Fail that request, or re-send it with a new id.
    StreamLost {
        /// The request whose response will not come on this stream.
        request: Option<Id>,
        /// Why.
        error: TransportError,
    },
    /// The transport closed; nothing follows, and the channel closes. (Sent when there is
    /// room; a closed channel means the same.)
    Closed,
}

/// Which wire protocol the transport speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HttpMode {
    /// Streamable HTTP (2025-03-26 and later).
    Streamable,
    /// Legacy HTTP+SSE (2024-11-05), after the fallback.
    LegacySse,
}

/// The answer to [`HttpTransport::open_get_stream`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GetStream {
    /// The GET stream is open (or already was); its messages arrive on `incoming`.
    Opened,
    /// The server has none (405), or the mode has none (legacy, 2026-07-28).
    Unsupported,
}

/// An MCP client transport over HTTP; see the [module docs](self).
///
/// Dropping it closes it in the background (DELETE included); [`close`](Self::close) does the
/// same and waits for it.
pub struct HttpTransport {
    commands: async_channel::Sender<TransportCommand>,
    incoming: async_channel::Receiver<Incoming>,
    shared: Arc<Mutex<Shared>>,
    thread: Option<JoinHandle<()>>,
    /// `close` queued a Close command: Drop must not close the queue under it.
    closing: bool,
}

impl fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpTransport").field("mode", &self.mode()).finish_non_exhaustive()
    }
}

/// Capacity of the command channel (sends waiting for the driver).
const COMMAND_CAPACITY: usize = 1024;

impl HttpTransport {
    /// Validates `config`, builds the HTTP client and starts the transport's thread. Nothing
    /// goes on the network until the first [`send`](Self::send) (normally `initialize`), which
    /// also decides between Streamable HTTP and the legacy fallback.
    ///
    /// # Errors
    /// [`TransportError::InvalidUrl`], [`TransportError::InvalidHeader`],
    /// [`TransportError::Client`] (TLS set-up, runtime or thread creation).
    pub fn connect(config: HttpConfig) -> Result<HttpTransport, TransportError> {
        let (incoming_tx, incoming) = async_channel::bounded(config.incoming_capacity.max(1));
        let shared = Arc::new(Mutex::new(Shared::default()));
        let ctx = Ctx::new(&config, Arc::clone(&shared), incoming_tx)?;
        let (commands, commands_rx) = async_channel::bounded(COMMAND_CAPACITY);
        let thread = driver::spawn(ctx, commands_rx)?;
        Ok(HttpTransport { commands, incoming, shared, thread: Some(thread), closing: false })
    }

    /// POSTs one JSON-RPC message (a request, a notification, or the response to a server
    /// request). The future resolves once the server accepted it: 202, a JSON response (already
    /// delivered on [`incoming`](Self::incoming)), or the head of an SSE response whose events
    /// then follow on `incoming`. It needs no particular runtime. The POST is queued when
    /// `send` is called, so calls made one after the other go out in that order.
    ///
    /// # Errors
    /// [`TransportError::Status`] (body excerpt included), [`TransportError::SessionExpired`],
    /// [`TransportError::Connect`], [`TransportError::ContentType`],
    /// [`TransportError::InvalidMessage`], [`TransportError::Closed`], …
    pub fn send(
        &self,
        message: impl Into<Bytes>,
    ) -> impl Future<Output = Result<(), TransportError>> + Send + 'static {
        self.send_with_headers(message, Vec::new())
    }

    /// [`send`](Self::send) with extra headers on this POST only (e.g. 2026-07-28
    /// `Mcp-Param-*`, values encoded with [`encode_header_value`]).
    pub fn send_with_headers(
        &self,
        message: impl Into<Bytes>,
        headers: Vec<(String, String)>,
    ) -> impl Future<Output = Result<(), TransportError>> + Send + 'static {
        let body = trim_line(message.into());
        let out = wire::peek_outgoing(&body);
        self.queue_send(body, out, headers)
    }

    /// [`send_with_headers`](Self::send_with_headers) for a message whose method, id and
    /// name the caller knows (the host's MCP session knows what it wrote): the transport
    /// reads nothing of the body. `known.name` matters only for the 2026-07-28 `Mcp-Name`
    /// header ([`request_name`] finds it in a line).
    pub fn send_known(
        &self,
        message: impl Into<Bytes>,
        known: Known,
        headers: Vec<(String, String)>,
    ) -> impl Future<Output = Result<(), TransportError>> + Send + 'static {
        let Known { method, id, name } = known;
        let out = wire::Outgoing { method, id, name, batch: false };
        self.queue_send(trim_line(message.into()), Ok(out), headers)
    }

    fn queue_send(
        &self,
        body: Bytes,
        out: Result<wire::Outgoing, TransportError>,
        headers: Vec<(String, String)>,
    ) -> impl Future<Output = Result<(), TransportError>> + Send + 'static {
        let (reply, done) = oneshot::channel();
        let queued = out
            .and_then(|out| Ok((out, driver::header_map(&headers)?)))
            .map(|(out, extra)| TransportCommand::Send { body, out, extra, reply });
        let commands = self.commands.clone();
        // Queue now (ordering); only a full queue makes the future wait for room.
        let pending = match queued {
            Ok(cmd) => match commands.try_send(cmd) {
                Ok(()) => Ok(None),
                Err(async_channel::TrySendError::Full(cmd)) => Ok(Some(cmd)),
                Err(async_channel::TrySendError::Closed(_)) => Err(TransportError::Closed),
            },
            Err(e) => Err(e),
        };
        async move {
            if let Some(cmd) = pending? {
                commands.send(cmd).await.map_err(|_| TransportError::Closed)?;
            }
            done.await.unwrap_or(Err(TransportError::Closed))
        }
    }

    /// The blocking twin of [`send`](Self::send).
    ///
    /// # Errors
    /// As [`send`](Self::send).
    pub fn send_blocking(&self, message: impl Into<Bytes>) -> Result<(), TransportError> {
        futures_executor::block_on(self.send(message))
    }

    /// Every server→client message and transport event, in order per stream. The channel is
    /// bounded: while it is full the transport stops reading from the server. Receivers are
    /// clones of one channel (each item goes to one of them); `recv_blocking` is the blocking
    /// twin of `recv`.
    pub fn incoming(&self) -> async_channel::Receiver<Incoming> {
        self.incoming.clone()
    }

    /// Sets the negotiated protocol version: sent as `MCP-Protocol-Version` on every request
    /// after `initialize` (call it when the `InitializeResult` arrives, before sending
    /// `notifications/initialized`). A version of 2026-07-28 or later switches to the stateless
    /// headers (`Mcp-Method`, `Mcp-Name`, the version on every POST; no session, GET stream,
    /// resumption or DELETE): set it before the first request in that era.
    pub fn set_protocol_version(&self, version: &str) {
        self.lock().protocol_version = Some(version.to_owned());
    }

    /// Forgets the protocol version: back to the state before the handshake (e.g. after a
    /// 2026-07-28 `server/discover` probe failed and `initialize` follows).
    pub fn clear_protocol_version(&self) {
        self.lock().protocol_version = None;
    }

    /// The protocol version set by [`set_protocol_version`](Self::set_protocol_version).
    pub fn protocol_version(&self) -> Option<String> {
        self.lock().protocol_version.clone()
    }

    /// The session id the server assigned in its `initialize` response, if any.
    pub fn session_id(&self) -> Option<String> {
        self.lock().session_id.clone()
    }

    /// Streamable HTTP, or legacy HTTP+SSE after the fallback.
    pub fn mode(&self) -> HttpMode {
        if self.lock().legacy.is_some() { HttpMode::LegacySse } else { HttpMode::Streamable }
    }

    /// Opens the optional GET stream for server messages unrelated to any POST (after
    /// `initialize`). It reconnects by itself (with `Last-Event-ID`) when the server closes it.
    ///
    /// # Errors
    /// [`TransportError::Status`], [`TransportError::Connect`], [`TransportError::ContentType`],
    /// [`TransportError::SessionExpired`], [`TransportError::Closed`].
    pub fn open_get_stream(
        &self,
    ) -> impl Future<Output = Result<GetStream, TransportError>> + Send + 'static {
        let (reply, done) = oneshot::channel();
        let commands = self.commands.clone();
        async move {
            commands
                .send(TransportCommand::OpenGet { reply })
                .await
                .map_err(|_| TransportError::Closed)?;
            done.await.unwrap_or(Err(TransportError::Closed))
        }
    }

    /// The blocking twin of [`open_get_stream`](Self::open_get_stream).
    ///
    /// # Errors
    /// As [`open_get_stream`](Self::open_get_stream).
    pub fn open_get_stream_blocking(&self) -> Result<GetStream, TransportError> {
        futures_executor::block_on(self.open_get_stream())
    }

    /// Stops reading the response stream of request `id` and closes its connection, and stops
    /// resuming it. In 2026-07-28 that is how a request is cancelled; before, it only stops
    /// waiting (POST `notifications/cancelled` for the server to stop working). Call it when a
    /// request times out: a stream that the server keeps accepting reconnections for (SSE
    /// polling) is otherwise followed until its response comes. No-op when there is none.
    pub fn cancel_stream(&self, id: &Id) {
        // A full or closed queue: the stream ends with the transport anyway.
        let _ = self.commands.try_send(TransportCommand::Cancel { id: id.clone() });
    }

    /// Closes the transport: DELETEs the session (a 405 or 404 answer is fine), drops every
    /// stream, sends [`Incoming::Closed`] and stops the thread.
    ///
    /// # Errors
    /// The DELETE's failure ([`TransportError::Status`], [`TransportError::Connect`],
    /// [`TransportError::Timeout`]); the transport is closed all the same.
    pub fn close(mut self) -> impl Future<Output = Result<(), TransportError>> + Send + 'static {
        let (reply, done) = oneshot::channel();
        let sent = self.commands.try_send(TransportCommand::Close { reply });
        let commands = self.commands.clone();
        self.closing = true;
        self.thread.take(); // the thread ends right after replying
        async move {
            match sent {
                Ok(()) => {}
                Err(async_channel::TrySendError::Full(cmd)) => {
                    commands.send(cmd).await.map_err(|_| TransportError::Closed)?;
                }
                Err(async_channel::TrySendError::Closed(_)) => return Ok(()),
            }
            done.await.unwrap_or(Ok(()))
        }
    }

    /// The blocking twin of [`close`](Self::close); also waits for the thread to end.
    ///
    /// # Errors
    /// As [`close`](Self::close).
    pub fn close_blocking(mut self) -> Result<(), TransportError> {
        let thread = self.thread.take();
        let result = futures_executor::block_on(self.close());
        if let Some(thread) = thread {
            let _ = thread.join();
        }
        result
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for HttpTransport {
    /// Closes the command channel; the thread then DELETEs the session and ends on its own
    /// (Drop never blocks on the network).
    fn drop(&mut self) {
        if !self.closing {
            self.commands.close();
        }
    }
}

/// Drops the `\n` that [`crate::jsonrpc`]'s encoders end each line with (zero-copy).
/// What [`HttpTransport::send_known`] is told of a message instead of reading it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Known {
    /// `method`, for a request or notification.
    pub method: Option<String>,
    /// The id, for a request (whose response ends its stream) or a response.
    pub id: Option<Id>,
    /// `params.name` of `tools/call` and `prompts/get`, `params.uri` of `resources/read`.
    pub name: Option<String>,
}

/// `params.name` of a `tools/call` or `prompts/get` line, `params.uri` of a `resources/read`
/// one (what 2026-07-28 puts in `Mcp-Name`); `None` for other methods.
pub fn request_name(method: &str, line: &[u8]) -> Option<String> {
    wire::peek_name(method, line)
}

fn trim_line(mut body: Bytes) -> Bytes {
    while body.last().is_some_and(|b| matches!(b, b'\n' | b'\r')) {
        body.truncate(body.len() - 1);
    }
    body
}
