//! [`Client`]: one running server, as the application sees it.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures_channel::oneshot;
use serde_json::{Value, json};

use crate::protocol::{
    CloseReason, GetPromptResult, InitializeResult, Progress, Prompt, ProtocolVersion,
    ReadResourceResult, RequestError, Resource, ServerDetails, Tool,
};

use crate::jsonrpc::codes;
use crate::parse::JsonParser;
use crate::queue::RequestQueue;
use crate::spill::store::SpillStore;

use super::RequestSink;
use super::error::{Error, Result};
use super::events::EventStream;
use super::gate::Request;
use super::pump::ServerCommand;
use super::request::{QueuedRequest, ServerId};
use super::stats::ServerStats;

/// Progress notifications of one call, in the order the server sent them.
pub type ProgressStream = async_channel::Receiver<Progress>;

/// Unread progress updates a [`ProgressStream`] keeps; newer ones are dropped past this.
pub const PROGRESS_BACKLOG: usize = 256;

mod blocking;
mod call;
mod lists;
mod send;
mod spilled;

pub use blocking::Blocking;
pub use call::{CallFuture, TaskMode, ToolCall};
pub(crate) use lists::ListCache;
pub use send::ResponseFuture;
pub(crate) use send::{Params, Pass};

/// `tools/call` params, encoded straight from the name and arguments.
fn call_params(name: &str, arguments: &Value) -> Result<Params> {
    #[derive(serde::Serialize)]
    struct Call<'a> {
        name: &'a str,
        arguments: &'a Value,
    }
    if !arguments.is_object() {
        return Err(Error::InvalidArgument(format!(
            "tool arguments must be a JSON object, got {arguments}"
        )));
    }
    serde_json::value::to_raw_value(&Call { name, arguments })
        .map(Params::Raw)
        .map_err(|e| Error::InvalidArgument(format!("tool arguments do not encode: {e}")))
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
    /// Where requests are written on the caller's thread, when the server is idle (stdio
    /// servers of a host that allows it).
    pub(crate) lane: Option<Arc<super::lane::Lane>>,
    pub(crate) name: Arc<str>,
    /// Its spec's `description` (what it is for, in a few words).
    pub(crate) description: Option<String>,
    pub(crate) details: ServerDetails,
    pub(crate) reactor: Arc<dyn RequestSink>,
    pub(crate) events: EventStream,
    /// The policy gate, when the host has a policy: every request passes it first.
    pub(crate) gate: Option<Arc<super::gate::Gate>>,
    /// Whether the server is restarted when it goes away (its requests in flight then fail
    /// with [`Error::Restarted`]).
    pub(crate) supervised: bool,
}

impl Drop for ClientInner {
    fn drop(&mut self) {
        // Never blocks and needs no runtime: the reactor runs the shutdown sequence.
        if let Some(lane) = &self.lane {
            lane.hold();
        }
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
///
/// A server started with [`ServerSpec::restart`](super::ServerSpec::restart) keeps its
/// `Client` across restarts: each restart swaps in the new connection (docs/host.md,
/// "Supervision").
#[derive(Clone)]
pub struct Client {
    cell: Arc<Cell>,
}

/// What every clone of a [`Client`] shares: the server's current connection, and its
/// supervision when it is restarted.
pub(crate) struct Cell {
    name: Arc<str>,
    current: Current,
    pub(crate) supervision: Option<Arc<super::supervise::Supervision>>,
}

/// The connection: fixed for a server that is not restarted (read without any atomic
/// operation, as every request reads it several times), swappable for one that is.
enum Current {
    Fixed(Arc<ClientInner>),
    Swapped(std::sync::RwLock<Arc<ClientInner>>),
}

/// A borrow of the current connection (see [`Client::inner`]).
pub(crate) enum InnerRef<'a> {
    Fixed(&'a Arc<ClientInner>),
    /// A clone (no lock is held: a request reads the connection several times, and a
    /// nested read lock could deadlock against a restart's write).
    Swapped(Arc<ClientInner>),
}

impl std::ops::Deref for InnerRef<'_> {
    type Target = Arc<ClientInner>;

    fn deref(&self) -> &Arc<ClientInner> {
        match self {
            InnerRef::Fixed(inner) => inner,
            InnerRef::Swapped(inner) => inner,
        }
    }
}

impl Drop for Cell {
    fn drop(&mut self) {
        if let Some(s) = &self.supervision {
            s.stop();
        }
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("name", &self.cell.name)
            .field("version", &self.inner().details.version)
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

fn malformed(server: &Arc<str>, method: &str, reason: String) -> Error {
    Error::Server {
        server: server.clone(),
        source: RequestError::MalformedResult { method: method.into(), reason },
    }
}

impl Client {
    pub(crate) fn new(
        inner: ClientInner,
        supervision: Option<Arc<super::supervise::Supervision>>,
    ) -> Client {
        let name = inner.name.clone();
        let current = match supervision {
            Some(_) => Current::Swapped(std::sync::RwLock::new(Arc::new(inner))),
            None => Current::Fixed(Arc::new(inner)),
        };
        Client { cell: Arc::new(Cell { name, current, supervision }) }
    }

    /// The current connection (a restarted server's newest). Held across an `await`, clone
    /// the `Arc` out of it.
    pub(crate) fn inner(&self) -> InnerRef<'_> {
        match &self.cell.current {
            Current::Fixed(inner) => InnerRef::Fixed(inner),
            Current::Swapped(lock) => InnerRef::Swapped(
                lock.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone(),
            ),
        }
    }

    /// Swaps in a restarted server's new connection; the old one is shut down once its last
    /// user lets go of it.
    pub(crate) fn replace(&self, inner: ClientInner) {
        let Current::Swapped(lock) = &self.cell.current else {
            unreachable!("only a supervised client's connection is replaced")
        };
        let new = Arc::new(inner);
        let old = std::mem::replace(
            &mut *lock.write().unwrap_or_else(std::sync::PoisonError::into_inner),
            new,
        );
        // Dropped outside the lock: the last user's drop shuts the old connection down.
        drop(old);
    }

    /// Its supervision, when it is restarted.
    pub(crate) fn supervision(&self) -> Option<&Arc<super::supervise::Supervision>> {
        self.cell.supervision.as_ref()
    }

    /// Whether its current connection has ended (a restarted server's, until the next one is
    /// swapped in).
    pub(crate) fn connection_closed(&self) -> bool {
        self.inner().queue.closed().is_some()
    }

    /// The client of a cell (the supervisor's, after a restart).
    pub(crate) fn from_cell(cell: Arc<Cell>) -> Client {
        Client { cell }
    }

    /// For a server started with [`ServerSpec::restart`](super::ServerSpec::restart): whether
    /// it is up, being restarted or given up on, its restarts and its last error (`None` for
    /// a server that is not restarted).
    pub fn supervision_status(&self) -> Option<super::SupervisionStatus> {
        self.supervision().map(|s| s.status())
    }

    /// A weak reference (the host's list of live clients holds these).
    pub(crate) fn downgrade(&self) -> std::sync::Weak<Cell> {
        Arc::downgrade(&self.cell)
    }

    /// The client of a weak reference, while it lives.
    pub(crate) fn upgrade(weak: &std::sync::Weak<Cell>) -> Option<Client> {
        weak.upgrade().map(|cell| Client { cell })
    }

    /// The server's name (from its spec).
    pub fn name(&self) -> &str {
        &self.cell.name
    }

    /// What the server is for, in a few words: its spec's `description`, else what its
    /// handshake said of it (`serverInfo`'s description or title, its `instructions`' first
    /// sentence). How tool search names it ([`route::find`](crate::route::find)).
    pub fn about(&self) -> Option<String> {
        let init = &self.inner().details.init;
        let info = serde_json::to_value(&init.server_info).ok();
        crate::route::find::about(
            self.inner().description.as_deref(),
            info.as_ref(),
            init.instructions.as_deref(),
        )
    }

    /// The negotiated protocol revision.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner().details.version
    }

    /// The server's `InitializeResult` (serverInfo, capabilities, instructions).
    pub fn server_info(&self) -> InitializeResult {
        self.inner().details.init.clone()
    }

    /// Whether the server declared capability `name` (`"tools"`, `"resources"`, ...).
    pub fn has_capability(&self, name: &str) -> bool {
        self.inner().details.has_capability(name)
    }

    /// The server's notifications, protocol violations and end, as a stream. All clones of a
    /// client share one stream (each event goes to one receiver).
    pub fn events(&self) -> EventStream {
        self.inner().events.clone()
    }

    /// Replaces the roots this client answers `roots/list` with, and tells the server
    /// (`notifications/roots/list_changed`). Only for hosts built with
    /// [`roots`](super::HostBuilder::roots): without them the capability was not declared and
    /// this does nothing.
    ///
    /// # Errors
    /// [`Error::Policy`] (nothing sent) when a root lies outside the roots the server's policy
    /// confines it to.
    pub fn set_roots(&self, roots: Vec<crate::protocol::Root>) -> Result<()> {
        let permit = self.pass(Request::Roots(&roots))?;
        if let Some(s) = self.supervision() {
            s.remember_roots(&roots);
        }
        self.command(ServerCommand::SetRoots { roots }, permit);
        Ok(())
    }

    /// Sends a notification to the server.
    ///
    /// # Errors
    /// [`Error::Policy`] (nothing sent) when the server's policy refuses it.
    pub fn notify(&self, method: &str, params: Option<Value>) -> Result<()> {
        let permit = self.pass(Request::Method { method, params: params.as_ref() })?;
        self.command(ServerCommand::Notify { method: method.into(), params }, permit);
        Ok(())
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
        let inner = self.inner();
        let cache = inner.cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
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
                .map_err(|e| malformed(&client.inner().name, "resources/read", e.to_string()))
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
        if let Some(s) = self.supervision() {
            s.remember_subscription(uri, true);
        }
        if self.protocol_version().is_modern() {
            let params = json!({ "uri": uri });
            let uri = uri.to_owned();
            let outcome = self.require(&["resources", "subscribe"]).and_then(|()| {
                let _permit = self.pass(Request::Method {
                    method: "resources/subscribe",
                    params: Some(&params),
                })?;
                self.update_listen(|f| {
                    if !f.resource_subscriptions.contains(&uri) {
                        f.resource_subscriptions.push(uri);
                    }
                });
                Ok(())
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
        if let Some(s) = self.supervision() {
            s.remember_subscription(uri, false);
        }
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
        if let (Some(s), true) = (self.supervision(), LEVELS.contains(&level)) {
            s.remember_log_level(level);
        }
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
        let caps = &self.inner().details.init.capabilities;
        let found = path
            .iter()
            .try_fold(caps, |v, key| v.get(key))
            .is_some_and(|v| !v.is_null() && *v != Value::Bool(false));
        if found {
            Ok(())
        } else {
            Err(Error::InvalidArgument(format!(
                "server {:?} did not declare the `{}` capability",
                self.inner().name,
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
        self.inner().reactor.send(self.inner().id, ServerCommand::Stats { reply: tx });
        rx.await.map_err(|_| Error::ReactorStopped)
    }

    /// Runs the shutdown sequence (close stdin, SIGTERM after 2 s, SIGKILL after 2 more) and
    /// waits for the process to be reaped; returns how it ended.
    pub async fn shutdown(&self) -> CloseReason {
        if let Some(s) = self.supervision() {
            s.stop();
        }
        let (tx, rx) = oneshot::channel();
        self.in_order(ServerCommand::Shutdown { reply: Some(tx) });
        rx.await.unwrap_or(CloseReason::Shutdown)
    }
}

pub(crate) fn block_on<F: Future>(f: F) -> F::Output {
    futures_executor::block_on(f)
}
