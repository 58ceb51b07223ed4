//! [`Client`]: one running server, as the application sees it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use futures_channel::oneshot;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::protocol::{
    CloseReason, GetPromptResult, InitializeResult, Progress, Prompt, ProtocolVersion,
    ReadResourceResult, RequestError, Resource, ServerDetails, Tool,
};

use crate::jsonrpc::{RawJson, codes};
use crate::parse::{JsonParser, Parser};
use crate::queue::{QueueFull, RequestQueue};
use crate::spill::store::SpillStore;

use super::RequestSink;
use super::driver::{QueuedRequest, Reply, ServerId};
use super::error::{Error, Result};
use super::events::EventStream;
use super::pump::ServerCommand;
use super::stats::ServerStats;

/// Progress notifications of one call, in the order the server sent them.
pub type ProgressStream = async_channel::Receiver<Progress>;

/// Unread progress updates a [`ProgressStream`] keeps; newer ones are dropped past this.
pub const PROGRESS_BACKLOG: usize = 256;

mod blocking;
mod call;
mod lists;
mod spilled;

pub use blocking::Blocking;
pub use call::{CallFuture, TaskMode, ToolCall};
pub(crate) use lists::ListCache;

fn call_params(name: &str, arguments: Value) -> Result<Value> {
    if arguments.is_object() {
        Ok(json!({ "name": name, "arguments": arguments }))
    } else {
        Err(Error::InvalidArgument(format!(
            "tool arguments must be a JSON object, got {arguments}"
        )))
    }
}

pub(crate) struct ClientInner {
    pub(crate) id: ServerId,
    pub(crate) parser: JsonParser,
    pub(crate) max_request: usize,
    pub(crate) spilled: Arc<super::spilling::SpillRegistry>,
    /// The host's spill store, when it spills: where [`Client::fetch_resource`] puts payloads.
    pub(crate) store: Option<Arc<SpillStore>>,
    /// Numbers the requests of this client (for cancelling the one whose future is dropped).
    pub(crate) next_request_seq: std::sync::atomic::AtomicU64,
    /// How often each list changed (bumped as `list_changed` notifications arrive).
    pub(crate) lists: Arc<super::events::ListEpochs>,
    /// The lists fetched by [`Client::tools`] & co, with the change count they were fetched at.
    pub(crate) cache: std::sync::Mutex<ListCache>,
    /// The cached tool list's output schemas, compiled once per list.
    pub(crate) output_schemas: super::schema::OutputSchemas,
    pub(crate) queue: Arc<RequestQueue<QueuedRequest>>,
    pub(crate) name: Arc<str>,
    pub(crate) details: ServerDetails,
    pub(crate) reactor: Arc<dyn RequestSink>,
    pub(crate) events: EventStream,
    /// The security gateway, when the host has a policy: every request passes it first.
    pub(crate) gate: Option<Arc<super::gate::Gate>>,
}

impl Drop for ClientInner {
    fn drop(&mut self) {
        // Never blocks and needs no runtime: the reactor runs the shutdown sequence.
        self.reactor.send(self.id, ServerCommand::Shutdown { reply: None });
    }
}

/// A connection to one running MCP server. Cheap to clone; the server is shut down when the
/// last clone is dropped (or by [`shutdown`](Self::shutdown)).
///
/// Every async method returns a runtime-agnostic future (it only waits on a channel that the
/// reactor thread completes), usable from tokio, async-std, smol or `block_on`. Single-request
/// methods (`request`, `call_tool`, `read_resource`, `get_prompt`, `ping`) send when called,
/// not when first polled, so several calls can be started and then awaited together. Every one
/// of them is also on the [`blocking`](Self::blocking) view, for synchronous code (not to be
/// used from inside an async task). Every `tools/call` goes through one road, [`ToolCall`]
/// ([`call`](Self::call)), which the `call_tool*` conveniences end in.
#[derive(Clone)]
pub struct Client {
    inner: Arc<ClientInner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("name", &self.inner.name)
            .field("version", &self.inner.details.version)
            .finish()
    }
}

/// A tool of the cached list, without copying it (see [`Client::cached_tool`]).
pub(crate) struct CachedTool {
    pub(crate) list: Arc<Vec<Tool>>,
    pub(crate) index: usize,
}

impl std::ops::Deref for CachedTool {
    type Target = Tool;

    fn deref(&self) -> &Tool {
        &self.list[self.index]
    }
}

/// The future of one request's `result` as a `serde_json::Value` (parsed on the thread that
/// polls it, not on the reactor).
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct ResponseFuture {
    raw: RawFuture,
    spilled: Arc<super::spilling::SpillRegistry>,
    method: Box<str>,
    parser: JsonParser,
}

impl Future for ResponseFuture {
    type Output = Result<Value>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        Pin::new(&mut this.raw).poll(cx).map(|r| {
            let mut raw = r?;
            this.spilled.adopt(raw.take_attachments());
            Parser::new(this.parser)
                .result(raw)
                .map_err(|e| malformed(&this.raw.server, &this.method, e.to_string()))
        })
    }
}

/// The future of one request's raw `result`. Dropping it before the answer cancels the
/// request: the server is sent `notifications/cancelled` and a late answer is discarded.
#[derive(Debug)]
struct RawFuture {
    state: Waiting,
    server: Arc<str>,
}

#[derive(Debug)]
enum Waiting {
    /// Sent; the reactor completes the channel.
    Reply(oneshot::Receiver<Result<RawJson, RequestError>>, CancelOnDrop),
    /// Refused before sending; taken when polled.
    Refused(Option<Error>),
    /// The outcome was delivered.
    Done,
}

/// Tells the reactor that the caller of request `seq` stopped waiting.
#[derive(Debug)]
struct CancelOnDrop {
    reactor: Arc<dyn RequestSink>,
    server: ServerId,
    seq: u64,
}

impl Drop for RawFuture {
    fn drop(&mut self) {
        if let Waiting::Reply(_, cancel) = &self.state {
            cancel.reactor.send(cancel.server, ServerCommand::Cancel { seq: cancel.seq });
        }
    }
}

impl Future for RawFuture {
    type Output = Result<RawJson>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let server = self.server.clone();
        match &mut self.state {
            Waiting::Refused(error) => {
                Poll::Ready(Err(error.take().unwrap_or(Error::ReactorStopped)))
            }
            Waiting::Reply(rx, _) => {
                let outcome = ready!(Pin::new(rx).poll(cx));
                self.state = Waiting::Done;
                Poll::Ready(match outcome {
                    Ok(Ok(v)) => Ok(v),
                    Ok(Err(source)) => Err(Error::Server { server, source }),
                    Err(oneshot::Canceled) => Err(Error::ReactorStopped),
                })
            }
            Waiting::Done => Poll::Ready(Err(Error::ReactorStopped)),
        }
    }
}

fn malformed(server: &Arc<str>, method: &str, reason: String) -> Error {
    Error::Server {
        server: server.clone(),
        source: RequestError::MalformedResult { method: method.into(), reason },
    }
}

impl Client {
    pub(crate) fn new(inner: ClientInner) -> Client {
        Client { inner: Arc::new(inner) }
    }

    /// A weak reference (the host's list of live clients holds these).
    pub(crate) fn downgrade(&self) -> std::sync::Weak<ClientInner> {
        Arc::downgrade(&self.inner)
    }

    /// The client of a weak reference, while it lives.
    pub(crate) fn upgrade(weak: &std::sync::Weak<ClientInner>) -> Option<Client> {
        weak.upgrade().map(|inner| Client { inner })
    }

    /// The server's name (from its spec).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The negotiated protocol revision.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.details.version
    }

    /// The server's `InitializeResult` (serverInfo, capabilities, instructions).
    pub fn server_info(&self) -> &InitializeResult {
        &self.inner.details.init
    }

    /// Whether the server declared capability `name` (`"tools"`, `"resources"`, ...).
    pub fn has_capability(&self, name: &str) -> bool {
        self.inner.details.has_capability(name)
    }

    /// The server's notifications, protocol violations and end, as a stream. All clones of a
    /// client share one stream (each event goes to one receiver).
    pub fn events(&self) -> EventStream {
        self.inner.events.clone()
    }

    /// Sends any request and returns its raw `result`. `timeout` overrides the default.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `params` is not a JSON object; [`Error::Server`] when the
    /// server answers with an error, times out, or goes away.
    pub fn request(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Option<Duration>,
    ) -> ResponseFuture {
        self.request_via(method, params, timeout, false)
    }

    /// [`request`](Self::request), `gated` when the gate already decided it.
    pub(crate) fn request_via(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Option<Duration>,
        gated: bool,
    ) -> ResponseFuture {
        let raw = self.send(method, params, timeout, None, gated);
        let spilled = self.inner.spilled.clone();
        ResponseFuture { raw, spilled, method: method.into(), parser: self.inner.parser }
    }

    /// Queues a request; the future yields its raw `result`. Every request of this client goes
    /// through here, and so past the gate: a `tools/call` already decided by [`ToolCall`]'s
    /// gate comes with `gated`; one sent raw is decided here against the cached tool list (it
    /// cannot wait for an approval: that is `Client::call`'s).
    fn send(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Option<Duration>,
        progress: Option<async_channel::Sender<Progress>>,
        gated: bool,
    ) -> RawFuture {
        let server = self.inner.name.clone();
        if let Some(gate) = &self.inner.gate
            && let Err(denial) = self.pass_gate(gate, method, params.as_ref(), gated)
        {
            let error = Error::Policy { server: server.clone(), denial };
            return RawFuture { state: Waiting::Refused(Some(error)), server };
        }
        let params = match params.map(|p| serialise_params(&p)).transpose() {
            Ok(p) => p,
            Err(e) => return RawFuture { state: Waiting::Refused(Some(e)), server },
        };
        let refuse = |source| RawFuture {
            state: Waiting::Refused(Some(Error::Server { server: server.clone(), source })),
            server: server.clone(),
        };
        // The envelope around the params adds well under 256 bytes.
        let len = params.as_ref().map_or(0, |p| p.get().len()) + method.len() + 64;
        if len > self.inner.max_request {
            return refuse(RequestError::RequestTooLarge { len, max: self.inner.max_request });
        }
        let queue = &self.inner.queue;
        if let Some(reason) = queue.closed() {
            return refuse(RequestError::Closed(reason.clone()));
        }
        let ticket = match queue.admit() {
            Ok(ticket) => ticket,
            Err(QueueFull { limit, retry_after }) => {
                return refuse(RequestError::QueueFull { limit, retry_after });
            }
        };
        let (tx, rx) = oneshot::channel();
        // Relaxed: the counter only needs to hand out distinct values.
        let seq = self.inner.next_request_seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let reply = Reply { tx, ticket, seq };
        if queue.push(QueuedRequest { method: method.into(), params, timeout, reply, progress }) {
            self.inner.reactor.schedule(queue.clone());
        }
        let cancel =
            CancelOnDrop { reactor: self.inner.reactor.clone(), server: self.inner.id, seq };
        RawFuture { state: Waiting::Reply(rx, cancel), server }
    }

    /// The gate's decision on a request [`send`](Self::send) is about to queue.
    fn pass_gate(
        &self,
        gate: &super::gate::Gate,
        method: &str,
        params: Option<&Value>,
        gated: bool,
    ) -> std::result::Result<(), crate::policy::Denial> {
        use crate::policy::{Denial, DenialKind, Verdict};
        if method != "tools/call" {
            return gate.check_request(method, params);
        }
        if gated {
            return Ok(());
        }
        let name = params.and_then(|p| p.get("name")).and_then(Value::as_str).unwrap_or_default();
        let arguments = params.and_then(|p| p.get("arguments")).cloned().unwrap_or(json!({}));
        let verdict = match self.fresh_cached_tools() {
            Some(list) => gate.decide(&list, name, &arguments),
            None => Verdict::Deny(Denial::new(
                "unlisted",
                DenialKind::Unlisted,
                "a raw tools/call is checked against the server's tool list, which was not fetched yet: \
                 call Client::tools first, or use Client::call",
            )),
        };
        let verdict = match verdict {
            Verdict::Allow { rule } => match gate.admit(name) {
                Ok(()) => Verdict::Allow { rule },
                Err(d) => Verdict::Deny(d),
            },
            v => v,
        };
        gate.audit_decision(name, &arguments, &verdict, None)?;
        match verdict {
            Verdict::Allow { .. } => Ok(()),
            Verdict::Ask { rule } => Err(Denial::new(
                rule,
                DenialKind::NotApproved,
                format!(
                    "tool {name:?} needs approval, which a raw request cannot wait for: use Client::call"
                ),
            )),
            Verdict::Deny(d) => Err(d),
        }
    }

    /// The cached tool list, if one was fetched and no `list_changed` came since.
    fn fresh_cached_tools(&self) -> Option<Arc<Vec<Tool>>> {
        let cache = self.inner.cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let cached = cache.tools.as_ref()?;
        let now = self.inner.lists.tools.load(std::sync::atomic::Ordering::Acquire);
        (cached.epoch == now).then(|| cached.list.clone())
    }

    /// Replaces the roots this client answers `roots/list` with, and tells the server
    /// (`notifications/roots/list_changed`). Only for hosts built with
    /// [`roots`](super::HostBuilder::roots): without them the capability was not declared and
    /// this does nothing.
    pub fn set_roots(&self, roots: Vec<crate::protocol::Root>) {
        self.inner.reactor.send(self.inner.id, ServerCommand::SetRoots { roots });
    }

    /// Sends a notification to the server.
    pub fn notify(&self, method: &str, params: Option<Value>) {
        let command = ServerCommand::Notify { method: method.into(), params };
        self.inner.reactor.send(self.inner.id, command);
    }

    /// Sends now; the returned future parses the raw result straight into `T` on the thread
    /// that polls it (no intermediate `Value`).
    fn typed<T: DeserializeOwned>(
        &self,
        method: &'static str,
        params: Result<Value>,
        timeout: Option<Duration>,
    ) -> impl Future<Output = Result<T>> + Send + 'static {
        self.typed_with_progress(method, params, timeout, None, false)
    }

    fn typed_with_progress<T: DeserializeOwned>(
        &self,
        method: &'static str,
        params: Result<Value>,
        timeout: Option<Duration>,
        progress: Option<async_channel::Sender<Progress>>,
        gated: bool,
    ) -> impl Future<Output = Result<T>> + Send + 'static {
        let sent = params.map(|p| self.send(method, Some(p), timeout, progress, gated));
        let (server, parser) = (self.inner.name.clone(), self.inner.parser);
        let spilled = self.inner.spilled.clone();
        async move {
            let mut raw = sent?.await?;
            spilled.adopt(raw.take_attachments());
            Parser::new(parser).result(raw).map_err(|e| malformed(&server, method, e.to_string()))
        }
    }

    /// `tools/call`: [`call`](Self::call)`(name, arguments).send()`. A tool that ran and
    /// failed is an `Ok` result with `is_error` set; an unknown tool or bad arguments are
    /// JSON-RPC errors (`Err`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `arguments` is not an object; as [`request`](Self::request).
    pub fn call_tool(&self, name: &str, arguments: Value) -> CallFuture {
        self.call(name, arguments).send()
    }

    /// `tools/call` with its own deadline: [`call`](Self::call)`(..).timeout(timeout)`.
    ///
    /// # Errors
    /// As [`call_tool`](Self::call_tool).
    pub fn call_tool_with_timeout(
        &self,
        name: &str,
        arguments: Value,
        timeout: Option<Duration>,
    ) -> CallFuture {
        self.call(name, arguments).timeout(timeout).send()
    }

    /// The tool `name` from the cached list of [`tools`](Self::tools), if it was fetched: the
    /// last definition seen, even when a `list_changed` (or the `ttlMs`) has made the list due
    /// for a refetch (a tool's `taskSupport` and `outputSchema` rarely change, and servers
    /// announce a change right after the handshake whether or not anything changed).
    pub(crate) fn cached_tool(&self, name: &str) -> Option<CachedTool> {
        let cache = self.inner.cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let list = cache.tools.as_ref()?.list.clone();
        let index = list.iter().position(|t| t.name == name)?;
        Some(CachedTool { list, index })
    }

    /// `tools/call` with a `progressToken`: [`call`](Self::call)`(..).timeout(timeout)
    /// .progress()`, sent. The server's progress notifications for this call arrive on the
    /// returned stream; see [`ToolCall::progress`].
    ///
    /// # Errors
    /// As [`call_tool`](Self::call_tool).
    pub fn call_tool_with_progress(
        &self,
        name: &str,
        arguments: Value,
        timeout: Option<Duration>,
    ) -> (CallFuture, ProgressStream) {
        let (call, progress) = self.call(name, arguments).timeout(timeout).progress();
        (call.send(), progress)
    }

    /// `resources/list`, following every page.
    ///
    /// # Errors
    /// As [`request`](Self::request), or a malformed result.
    pub async fn list_resources(&self) -> Result<Vec<Resource>> {
        self.list_all("resources/list", "resources").await
    }

    /// `resources/read`.
    ///
    /// # Errors
    /// As [`request`](Self::request) (-32002 for an unknown resource), or a malformed result.
    pub fn read_resource(
        &self,
        uri: &str,
    ) -> impl Future<Output = Result<ReadResourceResult>> + Send + 'static {
        let read = self.typed::<Value>("resources/read", Ok(json!({ "uri": uri })), None);
        let (modern, uri) = (self.protocol_version().is_modern(), uri.to_owned());
        let client = self.clone();
        async move {
            let shown = uri.clone();
            let mut value = read.await.map_err(|e| match e {
                // Not found is -32002 up to 2025-11-25 and -32602 in 2026-07-28, which clients
                // should still accept -32002 from: one error for both.
                Error::Server { server, source: RequestError::Rpc(error) }
                    if error.code == codes::RESOURCE_NOT_FOUND
                        || (modern && error.code == codes::INVALID_PARAMS) =>
                {
                    Error::Server { server, source: RequestError::ResourceNotFound { uri, error } }
                }
                other => other,
            })?;
            client.screen_read(&shown, &mut value);
            serde_json::from_value(value)
                .map_err(|e| malformed(&client.inner.name, "resources/read", e.to_string()))
        }
    }

    /// `resources/templates/list`, following every page (templates as the server sent them).
    ///
    /// # Errors
    /// As [`request`](Self::request), or a malformed result.
    pub async fn list_resource_templates(&self) -> Result<Vec<Value>> {
        self.list_all("resources/templates/list", "resourceTemplates").await
    }

    /// `resources/subscribe`: the server's `notifications/resources/updated` for `uri` then
    /// arrive as [`ServerEvent::ResourceUpdated`](super::ServerEvent::ResourceUpdated), numbered
    /// per URI in the order sent.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (nothing sent) when the server did not declare
    /// `resources.subscribe`; otherwise as [`request`](Self::request).
    ///
    /// In 2026-07-28 the URI is added to the `subscriptions/listen` stream's
    /// `resourceSubscriptions` (the stream is reopened with the new filter); the future is
    /// ready at once.
    pub fn subscribe_resource(
        &self,
        uri: &str,
    ) -> impl Future<Output = Result<()>> + Send + 'static {
        use futures::future::Either;
        if self.protocol_version().is_modern() {
            let uri = uri.to_owned();
            let outcome = self.require(&["resources", "subscribe"]).map(|()| {
                self.update_listen(|f| {
                    if !f.resource_subscriptions.contains(&uri) {
                        f.resource_subscriptions.push(uri);
                    }
                });
            });
            return Either::Left(std::future::ready(outcome));
        }
        Either::Right(self.checked(
            "resources/subscribe",
            &["resources", "subscribe"],
            json!({ "uri": uri }),
        ))
    }

    /// `resources/unsubscribe`.
    ///
    /// # Errors
    /// As [`subscribe_resource`](Self::subscribe_resource).
    pub fn unsubscribe_resource(
        &self,
        uri: &str,
    ) -> impl Future<Output = Result<()>> + Send + 'static {
        use futures::future::Either;
        if self.protocol_version().is_modern() {
            let outcome = self.require(&["resources", "subscribe"]).map(|()| {
                self.update_listen(|f| f.resource_subscriptions.retain(|u| u != uri));
            });
            return Either::Left(std::future::ready(outcome));
        }
        Either::Right(self.checked(
            "resources/unsubscribe",
            &["resources", "subscribe"],
            json!({ "uri": uri }),
        ))
    }

    /// `logging/setLevel`; the server's `notifications/message` go to `tracing` at their
    /// level (and on [`events`](Self::events)).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (nothing sent) for a level that is not one of the eight
    /// syslog levels, or when the server did not declare `logging`; otherwise as
    /// [`request`](Self::request).
    pub fn set_log_level(&self, level: &str) -> impl Future<Output = Result<()>> + Send + 'static {
        const LEVELS: [&str; 8] =
            ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
        let params = json!({ "level": level });
        let sent: Result<futures::future::Either<_, _>> = if !LEVELS.contains(&level) {
            Err(Error::InvalidArgument(format!("{level:?} is not a log level (one of {LEVELS:?})")))
        } else if self.protocol_version().is_modern() {
            // 2026-07-28 has no logging capability: the level rides in every request's _meta
            // (the session keeps it and answers at once).
            let set = self.request("logging/setLevel", Some(params), None);
            Ok(futures::future::Either::Left(async move { set.await.map(drop) }))
        } else {
            Ok(futures::future::Either::Right(self.checked(
                "logging/setLevel",
                &["logging"],
                params,
            )))
        };
        async move { sent?.await }
    }

    /// `completion/complete` for an argument of a prompt (`{"type": "ref/prompt", "name"}`)
    /// or a resource template (`{"type": "ref/resource", "uri"}`); `context` carries the
    /// values of the other arguments. Returns the `completion` object (`values`, `total`,
    /// `hasMore`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (nothing sent) when the server did not declare
    /// `completions`; otherwise as [`request`](Self::request).
    pub fn complete(
        &self,
        reference: Value,
        argument: &str,
        value: &str,
        context: Option<Value>,
    ) -> impl Future<Output = Result<Value>> + Send + 'static {
        let mut params =
            json!({ "ref": reference, "argument": { "name": argument, "value": value } });
        if let Some(arguments) = context {
            params["context"] = json!({ "arguments": arguments });
        }
        let sent = self
            .require(&["completions"])
            .map(|()| self.request("completion/complete", Some(params), None));
        async move {
            let mut result = sent?.await?;
            let mut completion =
                result.get_mut("completion").map(Value::take).unwrap_or(Value::Null);
            // At most 100 values; more means there are more.
            if let Some(values) = completion.get_mut("values").and_then(Value::as_array_mut)
                && values.len() > 100
            {
                values.truncate(100);
                completion["hasMore"] = json!(true);
            }
            Ok(completion)
        }
    }

    /// Fails unless the server declared the capability at `path` (e.g. `resources.subscribe`).
    fn require(&self, path: &[&str]) -> Result<()> {
        let caps = &self.inner.details.init.capabilities;
        let found = path
            .iter()
            .try_fold(caps, |v, key| v.get(key))
            .is_some_and(|v| !v.is_null() && *v != Value::Bool(false));
        if found {
            Ok(())
        } else {
            Err(Error::InvalidArgument(format!(
                "server {:?} did not declare the `{}` capability",
                self.inner.name,
                path.join(".")
            )))
        }
    }

    /// A request that needs a capability, with an empty result.
    fn checked(
        &self,
        method: &'static str,
        capability: &[&str],
        params: Value,
    ) -> impl Future<Output = Result<()>> + Send + 'static {
        let sent = self.require(capability).map(|()| self.request(method, Some(params), None));
        async move { sent?.await.map(drop) }
    }

    /// `prompts/list`, following every page.
    ///
    /// # Errors
    /// As [`request`](Self::request), or a malformed result.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>> {
        self.list_all("prompts/list", "prompts").await
    }

    /// `prompts/get`.
    ///
    /// # Errors
    /// As [`request`](Self::request), or a malformed result.
    pub fn get_prompt(
        &self,
        name: &str,
        arguments: Value,
    ) -> impl Future<Output = Result<GetPromptResult>> + Send + 'static {
        self.typed("prompts/get", Ok(json!({ "name": name, "arguments": arguments })), None)
    }

    /// `ping`.
    ///
    /// # Errors
    /// As [`request`](Self::request).
    pub fn ping(&self) -> impl Future<Output = Result<()>> + Send + 'static {
        let sent = self.request("ping", None, None);
        async move { sent.await.map(drop) }
    }

    /// Counters, pid and the tail of stderr.
    ///
    /// # Errors
    /// [`Error::ReactorStopped`] when the server has already been removed.
    pub async fn stats(&self) -> Result<ServerStats> {
        let (tx, rx) = oneshot::channel();
        self.inner.reactor.send(self.inner.id, ServerCommand::Stats { reply: tx });
        rx.await.map_err(|_| Error::ReactorStopped)
    }

    /// Runs the shutdown sequence (close stdin, SIGTERM after 2 s, SIGKILL after 2 more) and
    /// waits for the process to be reaped; returns how it ended.
    pub async fn shutdown(&self) -> CloseReason {
        let (tx, rx) = oneshot::channel();
        self.inner.reactor.send(self.inner.id, ServerCommand::Shutdown { reply: Some(tx) });
        rx.await.unwrap_or(CloseReason::Shutdown)
    }
}

pub(crate) fn block_on<F: Future>(f: F) -> F::Output {
    futures_executor::block_on(f)
}

fn serialise_params(params: &Value) -> Result<Box<RawValue>> {
    if !params.is_object() {
        return Err(Error::InvalidArgument(format!("params must be a JSON object, got {params}")));
    }
    Ok(RawValue::from_string(params.to_string()).expect("serde_json output is JSON"))
}
