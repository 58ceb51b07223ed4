//! Servers reached over HTTP (Streamable HTTP, or legacy HTTP+SSE): the same sans-IO
//! [`Session`] and the same [`Client`](super::Client) API as stdio servers, driven by a thread of
//! their own (a tokio current-thread runtime) instead of the io_uring reactor, which only
//! serves pipes.
//!
//! Server→client requests go to the host's [`ClientHandler`] as for stdio servers (each on a
//! thread of its own; the answer comes back to this thread and is POSTed). They arrive on a
//! POST's SSE stream or on the GET stream, which is opened once the handshake is done.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use futures_channel::oneshot;
use serde_json::Value;

use crate::frame::IdSniffer;
use crate::jsonrpc::{ErrorObject, Id};
use crate::protocol::{
    CloseReason, ParamHeader, RequestError, ServerDetails, Session, SessionConfig,
    param_header_value, param_headers,
};
use crate::protocol::{Transmit, TransmitKind};
use crate::queue::RequestQueue;
use crate::transport::{
    GetStream, HttpConfig, HttpTransport, Incoming, TransportError, encode_header_value,
};
use crate::transport::{Known, request_name};

use super::RequestSink;
use super::error::Error;
use super::events::EventSink;
use super::handler::{ClientHandler, spawn_answer};
use super::pump::{Control, Delegate, Pump, ServerCommand};
use super::request::{QueuedRequest, ServerId};
use super::stats::ServerStats;

/// Where an HTTP server is.
#[derive(Debug, Clone)]
pub struct RemoteSpec {
    /// The MCP endpoint, e.g. `http://127.0.0.1:3001/mcp`.
    pub url: String,
    /// Extra headers on every request (e.g. `Authorization: Bearer …`).
    pub headers: Vec<(String, String)>,
    /// OAuth, for a server that answers 401.
    pub oauth: Option<crate::transport::oauth::OAuthConfig>,
}

/// What the loop reacts to besides the transport.
enum Input {
    Scheduled,
    Command(ServerCommand),
}

/// The client side's handle on one remote connection.
pub(crate) struct RemoteHandle {
    inputs: async_channel::Sender<Input>,
}

impl std::fmt::Debug for RemoteHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RemoteHandle")
    }
}

impl RequestSink for RemoteHandle {
    fn schedule(&self, _queue: Arc<RequestQueue<QueuedRequest>>) {
        let _ = self.inputs.try_send(Input::Scheduled);
    }

    fn send(&self, _server: ServerId, command: ServerCommand) {
        let _ = self.inputs.try_send(Input::Command(command));
    }
}

/// Everything a remote connection starts with.
pub(crate) struct RemoteParts {
    pub(crate) id: ServerId,
    pub(crate) name: Arc<str>,
    pub(crate) spec: RemoteSpec,
    pub(crate) session: SessionConfig,
    pub(crate) queue: Arc<RequestQueue<QueuedRequest>>,
    pub(crate) events: EventSink,
    pub(crate) reply: oneshot::Sender<Result<ServerDetails, Error>>,
    /// Answers the server's sampling and elicitation requests (the session declares what it
    /// answers); `None`: they get -32601.
    pub(crate) handler: Option<Arc<dyn ClientHandler>>,
}

/// Connects and starts the connection's thread; its handle is the client's backend.
pub(crate) fn start(parts: RemoteParts) -> Arc<RemoteHandle> {
    let (tx, rx) = async_channel::unbounded();
    let handle = Arc::new(RemoteHandle { inputs: tx });
    let name = parts.name.clone();
    let spawned = std::thread::Builder::new()
        .name(format!("ringmcp-http-{}", parts.id.get()))
        .spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread().enable_time().build() {
                Ok(rt) => rt,
                Err(e) => {
                    let source = RequestError::Closed(CloseReason::io_error(
                        "starting the HTTP connection's runtime",
                        e,
                    ));
                    let _ = parts.reply.send(Err(Error::Server { server: parts.name, source }));
                    return;
                }
            };
            rt.block_on(run(parts, rx));
        });
    if let Err(e) = spawned {
        tracing::error!(server = &*name, "starting the HTTP connection thread: {e}");
    }
    handle
}

struct Remote {
    /// The session, its callers and its events.
    pump: Pump,
    /// `None` once closed.
    transport: Option<HttpTransport>,
    closed: Option<CloseReason>,
    /// The handshake just completed: open the GET stream after the next POSTs (once).
    get_stream_due: bool,
    /// The client declares capabilities the server may call back on (sampling, elicitation,
    /// roots): `spawn` then resolves only once the GET stream is open or refused.
    await_get_stream: bool,
    /// `spawn`'s answer, held until the GET stream is open (see `await_get_stream`).
    deferred_init: Option<(oneshot::Sender<Result<ServerDetails, Error>>, ServerDetails)>,
    /// 2026-07-28: what `Mcp-Param-*` headers each tool's calls carry.
    tool_headers: ToolHeaders,
}

/// 2026-07-28: the `x-mcp-header` annotations of each tool, learnt from the answers to the
/// `tools/list` requests we sent (a `tools/call`'s annotated arguments go into `Mcp-Param-*`
/// headers).
#[derive(Default)]
struct ToolHeaders {
    by_tool: HashMap<String, Vec<ParamHeader>>,
    /// Raw ids of the `tools/list` requests in flight.
    lists: HashSet<Vec<u8>>,
}

/// The longest `spawn` waits for the GET stream's head (when it waits; see
/// `Remote::await_get_stream`).
const GET_STREAM_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// The application's answer to the server's request `id`.
type Answer = (Id, Result<Value, ErrorObject>);

/// Connects: the connection's state, its stream of incoming messages and of the handler's
/// answers; `None` (after telling `spawn` why) when the transport cannot be set up.
fn connect(
    parts: RemoteParts,
) -> Option<(Remote, async_channel::Receiver<Incoming>, async_channel::Receiver<Answer>)> {
    let RemoteParts { id: _, name, spec, session, queue, events, reply, handler } = parts;
    let await_get_stream =
        session.roots.is_some() || session.features != crate::protocol::ClientFeatures::default();
    let mut config = HttpConfig::new(spec.url.clone());
    for (k, v) in &spec.headers {
        config = config.header(k, v);
    }
    if let Some(oauth) = spec.oauth.clone() {
        config = config.oauth(oauth);
    }
    let transport = match HttpTransport::connect(config) {
        Ok(t) => t,
        Err(e) => {
            let reason = CloseReason::io_error("setting up the HTTP transport", e);
            queue.close(reason.clone());
            let source = RequestError::Closed(reason);
            let _ = reply.send(Err(Error::Server { server: name, source }));
            return None;
        }
    };
    let incoming = transport.incoming();
    // The handler's answers, sent from its threads; unbounded, but at most one per server
    // request the session delegated.
    let (answers_tx, answers) = async_channel::unbounded::<Answer>();
    let delegate = handler.map(|handler| -> Delegate {
        Box::new(move |name: Arc<str>, id: Id, method: String, params: Option<Value>| {
            let answers = answers_tx.clone();
            let deliver = move |outcome| {
                let _ = answers.try_send((id, outcome));
            };
            spawn_answer(handler.clone(), name, method, params, deliver);
        })
    });
    let pump = Pump::new(name, Session::new(session), queue, events, delegate, reply);
    let remote = Remote {
        pump,
        transport: Some(transport),
        closed: None,
        get_stream_due: false,
        await_get_stream,
        deferred_init: None,
        tool_headers: ToolHeaders::default(),
    };
    Some((remote, incoming, answers))
}

async fn run(parts: RemoteParts, inputs: async_channel::Receiver<Input>) {
    let Some((mut r, incoming, answers)) = connect(parts) else { return };
    let mut sends = FuturesUnordered::new();
    r.pump.handshake(Instant::now());
    r.transmit(&mut sends);
    r.deliver();
    loop {
        let deadline = r.pump.session.poll_timeout();
        let sleep = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            }
        };
        let finished = tokio::select! {
            input = inputs.recv() => match input {
                Ok(Input::Scheduled) => {
                    r.pump.drain_queue(Instant::now());
                    false
                }
                Ok(Input::Command(c)) => r.command(c).await,
                // Every client handle is gone.
                Err(_) => {
                    r.close(CloseReason::Shutdown).await;
                    true
                }
            },
            message = incoming.recv() => r.on_incoming(message).await,
            Some((token, outcome)) = sends.next(), if !sends.is_empty() => {
                r.on_sent(token, outcome);
                false
            },
            Ok((id, outcome)) = answers.recv() => {
                // Dropped by the session if the server cancelled the request meanwhile.
                // May also queue a request: the retry of a 2026-07-28 input round (or of a
                // -32042), sent like any other (headers, tracking); the response itself is
                // not tracked (its id is the server's).
                r.pump.session.respond(&id, outcome, Instant::now());
                false
            },
            () = sleep => {
                r.pump.session.handle_timeout(Instant::now());
                false
            }
        };
        if finished {
            break;
        }
        // Events first: completing `initialize` sets the version header that
        // `notifications/initialized` must carry, and answers to server requests go out now
        // rather than on the next wake.
        r.deliver();
        r.transmit(&mut sends);
    }
}

/// What follows the handshake's last POST (`notifications/initialized`).
struct AfterHandshake<F> {
    name: Arc<str>,
    /// Opening the GET stream (`None`: no transport left).
    opening: Option<F>,
    /// `spawn`'s answer, when it waits for the GET stream.
    deferred: Option<(oneshot::Sender<Result<ServerDetails, Error>>, ServerDetails)>,
}

impl<F: std::future::Future<Output = Result<GetStream, TransportError>>> AfterHandshake<F> {
    /// Opens the GET stream if `open` (the POST was accepted), then answers `spawn`.
    async fn run(self, open: bool) {
        let name = &*self.name;
        if let Some(opening) = self.opening.filter(|_| open) {
            // Bounded: a server that holds the GET's head back delays `spawn` this long at
            // most (the GET goes on in the transport).
            match tokio::time::timeout(GET_STREAM_GRACE, opening).await {
                Ok(Ok(stream)) => tracing::debug!(server = name, "GET stream: {stream:?}"),
                Ok(Err(e)) => tracing::debug!(server = name, "no GET stream: {e}"),
                Err(_) => tracing::debug!(server = name, "GET stream: no answer yet"),
            }
        }
        if let Some((reply, details)) = self.deferred {
            let _ = reply.send(Ok(details));
        }
    }
}

type SendFuture = std::pin::Pin<
    Box<dyn std::future::Future<Output = (Option<Vec<u8>>, Result<(), TransportError>)> + Send>,
>;

impl Remote {
    /// A message (or the end) from the transport. Returns true when the connection is over.
    async fn on_incoming(&mut self, message: Result<Incoming, async_channel::RecvError>) -> bool {
        match message {
            Ok(Incoming::Message(bytes)) => {
                self.tool_headers.learn(&bytes);
                self.pump.session.handle_frame(&bytes, Instant::now());
            }
            Ok(Incoming::StreamLost { request: Some(id), error }) => {
                let token = serde_json::to_vec(&id).unwrap_or_default();
                let reason = CloseReason::io_error("the server's stream broke", error);
                let error = RequestError::Closed(reason);
                self.pump.session.handle_failed_answer(Some(&token), error);
                // The call failed here: tell the server to stop working on it (a dropped
                // stream is not a cancellation before 2026-07-28, where it is one).
                if !self.pump.session.wire_version().is_some_and(|v| v.is_modern()) {
                    let params = serde_json::json!({
                        "requestId": id, "reason": "the response stream broke"
                    });
                    self.pump.session.notify("notifications/cancelled", Some(params));
                }
            }
            // The GET stream gave up reconnecting: only unsolicited messages are lost.
            Ok(Incoming::StreamLost { request: None, error }) => {
                tracing::warn!(server = &*self.pump.name, "the server's GET stream ended: {error}");
            }
            Ok(Incoming::SessionExpired) => {
                let reason = "the server ended the HTTP session (404)";
                self.close(CloseReason::io(reason)).await;
                return true;
            }
            Ok(_) | Err(_) => {
                self.close(CloseReason::io("the server closed the HTTP connection")).await;
                return true;
            }
        }
        false
    }

    /// A POST finished: a request whose POST failed fails now, with the HTTP error.
    fn on_sent(&mut self, token: Option<Vec<u8>>, outcome: Result<(), TransportError>) {
        match (outcome, token) {
            (Ok(()), _) => {}
            (Err(e), Some(token)) => {
                let error = RequestError::Closed(CloseReason::io_error("a POST to the server", e));
                self.pump.session.handle_failed_answer(Some(&token), error);
            }
            // A notification or a response to the server: nobody waits for it.
            (Err(e), None) => {
                tracing::warn!(server = &*self.pump.name, "a POST to the server failed: {e}");
            }
        }
    }

    /// POSTs everything the session queued; each POST's outcome comes back with the raw id of
    /// the request it carried.
    ///
    /// Right after the handshake (the batch then ends with `notifications/initialized`), the
    /// optional GET stream is opened once that last POST was accepted (docs/protocol.md,
    /// "Transports"): servers send there the requests and notifications that belong to no POST
    /// (the TypeScript SDK's servers send a tool handler's `elicitation/create` and
    /// `sampling/createMessage` there, and `list_changed`, `resources/updated`). Without one
    /// (405, or any failure) those are lost, which is no reason to fail the connection. When
    /// the client declares capabilities the server may call back on, `spawn` resolves only
    /// after that attempt (bounded by [`GET_STREAM_GRACE`]), so that a request the server sends
    /// on the GET stream right after the handshake is not lost.
    fn transmit(&mut self, sends: &mut FuturesUnordered<SendFuture>) {
        self.sync_version();
        let modern = self.pump.session.wire_version().is_some_and(|v| v.is_modern());
        let mut batch = Vec::new();
        // The session says what each line is: nothing it wrote is read again, except the
        // params of a 2026-07-28 `tools/call`, `prompts/get` or `resources/read` (for the
        // `Mcp-Name` and `Mcp-Param-*` headers).
        while let Some(Transmit { bytes, kind }) = self.pump.session.poll_transmit() {
            let Some(transport) = &self.transport else { continue };
            let (known, token) = match kind {
                // Only our requests are tracked: a response carries the server's id, which
                // must not be matched against ours if its POST fails.
                TransmitKind::Request { method, id } => {
                    let token = id.to_string().into_bytes();
                    let name = if modern { request_name(&method, &bytes) } else { None };
                    let id = Some(Id::Number(id.get()));
                    (Known { method: Some(method.to_string()), id, name }, Some(token))
                }
                TransmitKind::Notification { method, cancels } => {
                    if let Some(id) = cancels {
                        // Stop following the request's stream; in 2026-07-28 closing it *is*
                        // the cancellation over HTTP, and no notification is sent.
                        transport.cancel_stream(&Id::Number(id.get()));
                        if modern {
                            continue;
                        }
                    }
                    (Known { method: Some(method.to_string()), ..Known::default() }, None)
                }
                TransmitKind::Response => (Known::default(), None),
            };
            let headers =
                match known.method.as_deref() {
                    Some(m @ ("tools/list" | "tools/call")) if modern => self
                        .tool_headers
                        .for_request(m, &bytes, known.name.as_deref(), token.as_deref()),
                    _ => Vec::new(),
                };
            let Some(transport) = &self.transport else { continue };
            batch.push((token, transport.send_known(bytes, known, headers)));
        }
        let mut after = std::mem::take(&mut self.get_stream_due).then(|| AfterHandshake {
            name: self.pump.name.clone(),
            opening: self.transport.as_ref().map(HttpTransport::open_get_stream),
            deferred: self.deferred_init.take(),
        });
        let last = batch.len().saturating_sub(1);
        for (i, (token, sent)) in batch.into_iter().enumerate() {
            let after = if i == last { after.take() } else { None };
            sends.push(Box::pin(async move {
                let outcome = sent.await;
                if let Some(after) = after {
                    after.run(outcome.is_ok()).await;
                }
                (token, outcome)
            }));
        }
        if let Some(after) = after {
            // Nothing was POSTed with it (not expected): open it now.
            sends.push(Box::pin(async move {
                after.run(true).await;
                (None, Ok(()))
            }));
        }
    }

    /// Puts the revision the session is at into the transport's headers: the one the
    /// `server/discover` probe asks for (so its POST has the 2026-07-28 headers), none while
    /// `initialize` is under way, then the negotiated one (`MCP-Protocol-Version` on
    /// `notifications/initialized` and after).
    fn sync_version(&self) {
        let Some(transport) = &self.transport else { return };
        let wanted = self.pump.session.wire_version().map(crate::protocol::ProtocolVersion::as_str);
        if transport.protocol_version().as_deref() != wanted {
            match wanted {
                Some(version) => transport.set_protocol_version(version),
                None => transport.clear_protocol_version(),
            }
        }
    }

    /// Carries out a client's command. Returns true when the connection is over.
    async fn command(&mut self, command: ServerCommand) -> bool {
        match self.pump.apply(command, Instant::now()) {
            None => false,
            Some(Control::Stats(reply)) => {
                let session = self.pump.session.stats();
                let events_dropped = self.pump.events_dropped();
                let _ =
                    reply.send(ServerStats { session, events_dropped, ..ServerStats::default() });
                false
            }
            Some(Control::Shutdown(reply)) => {
                if let Some(reply) = reply {
                    self.pump.on_finished(reply);
                }
                self.close(CloseReason::Shutdown).await;
                true
            }
        }
    }

    async fn close(&mut self, reason: CloseReason) {
        if self.closed.is_some() {
            return;
        }
        self.closed = Some(reason.clone());
        let name = self.pump.name.clone();
        self.pump.close_session(&reason, Instant::now(), |source| Error::Server {
            server: name,
            source,
        });
        // DELETE the session (a 405 is fine); bounded by the transport's timeout.
        if let Some(transport) = self.transport.take()
            && let Err(e) = transport.close().await
        {
            tracing::debug!(server = &*self.pump.name, "closing the HTTP session: {e}");
        }
        self.pump.closed(&reason);
    }

    /// Completes callers and emits events; answers `spawn` when the handshake ends (after the
    /// GET stream's attempt, when the client may be called back on).
    fn deliver(&mut self) {
        let Some(outcome) = self.pump.deliver(Instant::now()) else { return };
        let outcome = match outcome {
            Ok(details) => {
                // The version header follows in `transmit` (`sync_version`). 2026-07-28 has no
                // GET stream (nor server→client requests).
                self.get_stream_due = !details.version.is_modern();
                if self.await_get_stream
                    && self.get_stream_due
                    && let Some(reply) = self.pump.init_reply.take()
                {
                    self.deferred_init = Some((reply, details.clone()));
                }
                Ok(details)
            }
            Err(source) => Err(Error::Server { server: self.pump.name.clone(), source }),
        };
        if let Some(reply) = self.pump.init_reply.take() {
            let _ = reply.send(outcome);
        }
    }
}

impl ToolHeaders {
    /// 2026-07-28: the `Mcp-Param-*` headers of an outgoing `tools/call` (docs/protocol.md,
    /// "Tools": each argument annotated with `x-mcp-header`, encoded as the transport
    /// encodes header values, omitted when null or absent). Also notes the ids of `tools/list`
    /// requests, whose answers teach the annotations.
    fn for_request(
        &mut self,
        method: &str,
        line: &[u8],
        tool: Option<&str>,
        token: Option<&[u8]>,
    ) -> Vec<(String, String)> {
        #[derive(serde::Deserialize)]
        struct Peek {
            params: Option<PeekParams>,
        }
        #[derive(serde::Deserialize)]
        struct PeekParams {
            arguments: Option<Box<serde_json::value::RawValue>>,
        }
        match method {
            "tools/list" => {
                if let Some(token) = token {
                    // Bounded: a list whose answer never comes (timed out, cancelled, lost)
                    // would leave its id behind.
                    if self.lists.len() >= 64 {
                        self.lists.clear();
                    }
                    self.lists.insert(token.to_vec());
                }
                Vec::new()
            }
            "tools/call" => {
                // The arguments are read only for a tool with annotated ones.
                let Some(annotated) = tool.and_then(|name| self.by_tool.get(name)) else {
                    return Vec::new();
                };
                let Ok(peek) = serde_json::from_slice::<Peek>(line) else { return Vec::new() };
                let arguments = peek
                    .params
                    .and_then(|p| p.arguments)
                    .and_then(|a| serde_json::from_str::<Value>(a.get()).ok())
                    .unwrap_or(Value::Null);
                annotated
                    .iter()
                    .filter_map(|h| {
                        let value = param_header_value(arguments.get(&h.property))?;
                        let value = encode_header_value(&value).into_owned();
                        Some((format!("Mcp-Param-{}", h.header), value))
                    })
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    /// Reads the `x-mcp-header` annotations out of an answer to a `tools/list` we sent.
    fn learn(&mut self, message: &[u8]) {
        if self.lists.is_empty() {
            return;
        }
        let mut sniffer = IdSniffer::new();
        sniffer.feed(message);
        let Some(id) = sniffer.id() else { return };
        if !self.lists.remove(id) {
            return;
        }
        #[derive(serde::Deserialize)]
        struct Answer {
            result: Option<Listed>,
        }
        #[derive(serde::Deserialize)]
        struct Listed {
            #[serde(default)]
            tools: Vec<Listing>,
        }
        #[derive(serde::Deserialize)]
        struct Listing {
            name: String,
            #[serde(default, rename = "inputSchema")]
            input_schema: Value,
        }
        let Ok(Answer { result: Some(listed) }) = serde_json::from_slice::<Answer>(message) else {
            return;
        };
        for tool in listed.tools {
            match param_headers(&tool.input_schema) {
                Ok(headers) if !headers.is_empty() => {
                    self.by_tool.insert(tool.name, headers);
                }
                // Left out of the list by the client (`Client::list_tools`).
                _ => {
                    self.by_tool.remove(&tool.name);
                }
            }
        }
    }
}
