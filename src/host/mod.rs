//! The public API: [`Host`] (one reactor thread, many servers) and [`Client`] (one server).
//!
//! ```no_run
//! use ringmcp::host::{Host, ServerSpec};
//! use serde_json::json;
//!
//! # fn main() -> Result<(), ringmcp::host::Error> {
//! let host = Host::builder().build()?;
//! let server = host.spawn_blocking(ServerSpec::new("fs", "npx").args(["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]))?;
//! for tool in server.blocking().list_tools()? {
//!     println!("{}", tool.name);
//! }
//! let result = server.blocking().call_tool("list_directory", json!({"path": "/tmp"}))?;
//! println!("{}", result.text());
//! # Ok(()) }
//! ```

#![forbid(unsafe_code)]

pub mod audit;
mod client;
mod config;
mod conn;
mod driver;
mod egress;
pub mod embedding;
mod error;
mod events;
pub mod gate;
mod handler;
mod inbound;
pub mod pins;
mod pump;
mod remote;
pub mod resolve;
pub mod router;
mod schema;
mod spilling;
mod stats;
mod stderr;
mod tasks;

use std::future::Future;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::thread::JoinHandle;
use std::time::Duration;

use futures_channel::oneshot;

use crate::parse::JsonParser;
use crate::parse::pool::ParsePool;
use crate::protocol::{Era, Implementation, Root, SessionConfig};
use crate::queue::{ReadyList, RequestQueue};
use crate::uring::{BufferPool, Features, Ring, sys};

pub use crate::protocol::Fault;
pub use client::{
    Blocking, CallFuture, Client, PROGRESS_BACKLOG, ProgressStream, ResponseFuture, TaskMode,
    ToolCall,
};
pub use config::{Config, ConfigError, Endpoint, ServerSpec};
pub use error::{Error, Result, STDERR_LINE_MAX, STDERR_LINES, StartFailure};
use events::EventSink;
pub use events::{EventStream, ServerEvent};
pub use gate::{Approval, ApprovalRequest, ApproveMatching, Approver, PolicySettings};
pub use handler::ClientHandler;
pub use remote::RemoteSpec;
pub use spilling::SpillConfig;
pub use stats::{SandboxStats, ServerStats};
pub use tasks::Task;

use client::{ClientInner, block_on};
use driver::{Driver, DriverConfig, ParsedQueue, QueuedRequest, ReactorCommand, ServerId};
use pump::ServerCommand;

/// Default largest request: 8 MiB, under the 10 MiB the TypeScript SDK's servers accept.
pub const DEFAULT_MAX_REQUEST: usize = 8 << 20;

/// Where a client's requests and commands go: the io_uring reactor (stdio servers) or an
/// HTTP connection's thread.
pub(crate) trait RequestSink: Send + Sync + std::fmt::Debug {
    /// A queue that just received its first request.
    fn schedule(&self, queue: Arc<RequestQueue<QueuedRequest>>);
    /// A command for server `server` (notify, cancel, stats, shutdown, ...).
    fn send(&self, server: ServerId, command: ServerCommand);
}

impl RequestSink for ReactorHandle {
    fn schedule(&self, queue: Arc<RequestQueue<QueuedRequest>>) {
        ReactorHandle::schedule(self, queue);
    }

    fn send(&self, server: ServerId, command: ServerCommand) {
        ReactorHandle::send(self, ReactorCommand::Server { id: server, command });
    }
}

/// The caller side of the reactor: a command channel plus the eventfd that wakes it.
pub(crate) struct ReactorHandle {
    commands: Sender<ReactorCommand>,
    ready: Arc<ReadyList<QueuedRequest>>,
    wake: Arc<OwnedFd>,
}

impl ReactorHandle {
    /// Puts a queue that just received its first request on the ready list and wakes the
    /// reactor (see [`RequestQueue::push`] for why one wake-up per idle→busy edge suffices).
    pub(crate) fn schedule(&self, queue: Arc<RequestQueue<QueuedRequest>>) {
        self.ready.push(queue);
        sys::eventfd_signal(&*self.wake);
    }

    /// Queues a command and wakes the reactor. Never blocks on the reactor. If the reactor is
    /// gone the command is dropped, which drops any reply sender inside it, so the waiting
    /// caller sees [`Error::ReactorStopped`].
    pub(crate) fn send(&self, command: ReactorCommand) {
        if self.commands.send(command).is_ok() {
            sys::eventfd_signal(&*self.wake);
        }
    }
}

/// Builds a [`Host`].
#[derive(Debug, Clone)]
pub struct HostBuilder {
    session: SessionConfig,
    stderr_capacity: usize,
    read_size: usize,
    ring_entries: u32,
    events_capacity: usize,
    queue_limit: usize,
    parse_threads: usize,
    offload_threshold: usize,
    buffers: Option<BufferPool>,
    parser: JsonParser,
    max_request: usize,
    /// `None`: the default store, and no spilling if it cannot be opened.
    spill: Option<Option<SpillConfig>>,
    handler: Option<handler::SharedHandler>,
    policy: Option<PolicySettings>,
    egress: Option<crate::egress::ProxyConfig>,
}

impl Default for HostBuilder {
    fn default() -> Self {
        HostBuilder {
            session: SessionConfig::default(),
            stderr_capacity: 64 * 1024,
            read_size: 256 * 1024,
            ring_entries: 1024,
            events_capacity: 1024,
            queue_limit: 4096,
            parse_threads: 1,
            offload_threshold: 256 * 1024,
            buffers: Some(BufferPool::default()),
            parser: JsonParser::default(),
            max_request: DEFAULT_MAX_REQUEST,
            spill: None,
            handler: None,
            policy: None,
            egress: None,
        }
    }
}

impl HostBuilder {
    /// Defaults: 60 s request timeout, 16 MiB frame limit, 64 KiB stderr tail per server.
    pub fn new() -> Self {
        Self::default()
    }

    /// Deadline for requests that do not set their own.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.session.request_timeout = timeout;
        self
    }

    /// Most bytes of one stdout line held in memory (default 16 MiB). With
    /// [`spill`](Self::spill) on (the default), a line past this bound or past the spill
    /// threshold, whichever is lower, is streamed to the store. With spilling off, a longer
    /// answer is discarded and its request fails with
    /// [`RequestError::FrameTooLarge`](crate::protocol::RequestError::FrameTooLarge).
    ///
    /// # Panics
    /// If `bytes` is zero.
    pub fn max_frame(mut self, bytes: usize) -> Self {
        assert!(bytes > 0, "max_frame must be positive");
        self.session.max_frame = bytes;
        self
    }

    /// Most requests outstanding per server (queued or sent and unanswered; default 4,096).
    /// One more fails at once with
    /// [`RequestError::QueueFull`](crate::protocol::RequestError::QueueFull) (JSON-RPC -32000
    /// with `retryAfterSeconds`), so nothing queues without bound.
    pub fn max_pending(mut self, n: usize) -> Self {
        self.session.max_pending = n.max(1) + 1; // + the session's own requests
        self.queue_limit = n.max(1);
        self
    }

    /// How much of each server's stderr is kept (the rest is only logged).
    pub fn stderr_capacity(mut self, bytes: usize) -> Self {
        self.stderr_capacity = bytes;
        self
    }

    /// Capacity of each server's event stream.
    pub fn events_capacity(mut self, n: usize) -> Self {
        self.events_capacity = n.max(1);
        self
    }

    /// How servers' revisions are found (default [`Era::Auto`]: probe with the 2026-07-28
    /// `server/discover`, fall back to `initialize` on any other answer or after
    /// [`probe_timeout`](Self::probe_timeout)). A server's era is remembered by the host, so
    /// the next start of the same command (or URL) skips the probe when it was legacy.
    pub fn era(mut self, era: Era) -> Self {
        self.session.era = era;
        self
    }

    /// Keep-alive: ping a server that has sent nothing for `interval` (in 2026-07-28, which has
    /// no ping, a `server/discover`); an unanswered ping (within the request timeout) is
    /// reported as [`ServerEvent::Unresponsive`]. Default: off.
    pub fn keep_alive(mut self, interval: Duration) -> Self {
        self.session.keep_alive = Some(interval);
        self
    }

    /// How long the `server/discover` probe waits before falling back to `initialize`
    /// (default 5 s, counted from the spawn, so it includes the start-up; only a legacy server that ignores unknown requests makes it wait).
    pub fn probe_timeout(mut self, timeout: Duration) -> Self {
        self.session.probe_timeout = timeout;
        self
    }

    /// Declares the `roots` capability and answers `roots/list` with these roots.
    pub fn roots(mut self, roots: Vec<Root>) -> Self {
        self.session.roots = Some(roots);
        self
    }

    /// How callers parse their results (default [`JsonParser::Auto`]: serde_json, or
    /// simd-json for large escape-dense results). Results are parsed on the caller's thread,
    /// straight into the type asked for.
    pub fn parser(mut self, parser: JsonParser) -> Self {
        self.parser = parser;
        self
    }

    /// Frames of at least `bytes` are parsed on the worker pool instead of the reactor thread
    /// (default 256 KiB, where parsing starts to cost more than the hand-off).
    pub fn parse_offload_threshold(mut self, bytes: usize) -> Self {
        self.offload_threshold = bytes.max(1);
        self
    }

    /// Worker threads parsing large frames (default 1; 0 parses everything on the reactor).
    pub fn parse_threads(mut self, n: usize) -> Self {
        self.parse_threads = n;
        self
    }

    /// The shared receive buffers of multishot reads (default: 128 × 64 KiB); `None` turns
    /// multishot reads off (every pipe then has a read buffer of its own armed).
    pub fn read_buffers(mut self, pool: Option<BufferPool>) -> Self {
        self.buffers = pool;
        self
    }

    /// Largest request sent to a server (default 8 MiB; per server:
    /// [`ServerSpec::max_request_bytes`]). A larger one fails before it is sent.
    pub fn max_request_bytes(mut self, bytes: usize) -> Self {
        self.max_request = bytes;
        self
    }

    /// Streams answers longer than `config.line_threshold` to a spill store instead of
    /// buffering them: large strings in their results become `resource_link`s to
    /// `ringmcp-spill://` URIs, read with [`Client::read_spilled`] or [`Client::spilled`].
    ///
    /// On by default with [`SpillConfig::default`] (4 MiB lines, 64 KiB strings, a store under
    /// the runtime or temp dir); if that default store cannot be opened the host starts without
    /// spilling and logs why. A store given here must open, or [`build`](Self::build) fails.
    /// `None` turns spilling off: answers up to [`max_frame`](Self::max_frame) are then
    /// delivered inline and longer ones fail.
    pub fn spill(mut self, config: Option<SpillConfig>) -> Self {
        self.spill = Some(config);
        self
    }

    /// Answers the servers' `sampling/createMessage` and `elicitation/create` requests (and
    /// declares those capabilities, as [`ClientHandler::features`] says). Without one, neither
    /// is declared and such requests get -32601.
    pub fn handler(mut self, handler: Arc<dyn ClientHandler>) -> Self {
        self.session.features = handler.features();
        self.handler = Some(handler::SharedHandler(handler));
        self
    }

    /// Puts the security gateway in every client's path: each request is decided by its
    /// server's rules ([`ServerSpec::policy`]; the built-in policy when it has none: allow,
    /// except annotated destructive or open-world tools, which ask) before it is sent, with
    /// approvals, pins and the audit trail as `settings` say (docs/policy.md).
    pub fn policy(mut self, settings: PolicySettings) -> Self {
        self.policy = Some(settings);
        self
    }

    /// How the egress proxy of sandboxed servers with network resolves names, dials, limits
    /// connections and reports them (docs/egress.md). The default resolves with the host's
    /// resolver, dials for real, and applies [`Limits::default`](crate::egress::Limits);
    /// every connection also goes to the audit trail when [`policy`](Self::policy) keeps one.
    pub fn egress(mut self, config: crate::egress::ProxyConfig) -> Self {
        self.egress = Some(config);
        self
    }

    /// The `clientInfo` sent in `initialize`.
    pub fn client_info(mut self, info: Implementation) -> Self {
        self.session.client_info = info;
        self
    }

    /// Starts the reactor thread.
    ///
    /// # Errors
    /// [`Error::Reactor`] when io_uring or an eventfd cannot be set up, or the thread cannot
    /// be started.
    pub fn build(self) -> Result<Host> {
        let wake = Arc::new(sys::eventfd().map_err(Error::Reactor)?);
        let ready = Arc::new(ReadyList::new());
        let parsed = Arc::new(ParsedQueue::new());
        let pool = if self.parse_threads == 0 {
            None
        } else {
            let (queue, wake) = (parsed.clone(), wake.clone());
            let deliver = Arc::new(move |p| {
                queue.push(p);
                sys::eventfd_signal(&*wake);
            });
            Some(ParsePool::new(self.parse_threads, self.parser, deliver).map_err(Error::Reactor)?)
        };
        let (tx, rx) = channel();
        let spill = self.spill_store()?;
        let spill_store = spill.as_ref().map(|(_, store)| store.clone());
        let config = DriverConfig {
            session: self.session.clone(),
            stderr_capacity: self.stderr_capacity,
            read_size: self.read_size,
            pipe_size: sys::pipe_max_size(),
            offload_threshold: self.offload_threshold,
            handler: self.handler.clone().map(|shared| handler::HandlerSlot {
                handler: shared.0,
                answers: Arc::new(handler::AnswerQueue::new()),
                wake: wake.clone(),
            }),
            spill,
        };
        let reactor_parts = (rx, ready.clone(), parsed, pool, wake.clone(), config);
        let (thread, features) = self.start_reactor(reactor_parts)?;
        tracing::debug!(?features, "io_uring reactor running");
        let reactor = Arc::new(ReactorHandle { commands: tx, ready, wake });
        let audit = self.policy.as_ref().and_then(|p| p.audit.clone());
        let egress = Arc::new(egress::EgressSlot::new(self.egress.clone(), audit));
        let spawner = match start_spawner(reactor.clone(), egress) {
            Ok(s) => s,
            Err(e) => {
                reactor.send(ReactorCommand::Stop);
                let _ = thread.join();
                return Err(Error::Reactor(e));
            }
        };
        Ok(Host {
            reactor,
            spawner: Some(spawner),
            session: self.session,
            thread: Some(thread),
            next_id: AtomicU64::new(1),
            events_capacity: self.events_capacity,
            queue_limit: self.queue_limit,
            features,
            parser: self.parser,
            max_request: self.max_request,
            spill_store,
            handler: self.handler,
            policy: self.policy,
            eras: Arc::default(),
            live: router::LiveClients::default(),
        })
    }

    /// The spill store the builder asked for: the one configured, none, or by default the
    /// default store when it can be opened (a warning otherwise).
    fn spill_store(&self) -> Result<Option<(SpillConfig, Arc<crate::spill::store::SpillStore>)>> {
        match &self.spill {
            Some(Some(config)) => {
                let store = spilling::open_store(config).map_err(Error::Spill)?;
                Ok(Some((config.clone(), store)))
            }
            Some(None) => Ok(None),
            None => {
                let config = SpillConfig::default();
                match spilling::open_store(&config) {
                    Ok(store) => Ok(Some((config, store))),
                    Err(e) => {
                        tracing::warn!(
                            "large answers will not be spilled: the default spill store cannot \
                             be opened: {e}"
                        );
                        Ok(None)
                    }
                }
            }
        }
    }

    /// Starts the reactor thread. The ring is built on that thread itself (with SINGLE_ISSUER
    /// only the thread that created it may submit); its outcome comes back before this
    /// returns.
    fn start_reactor(&self, parts: ReactorParts) -> Result<(JoinHandle<()>, Features)> {
        let (rx, ready, parsed, pool, wake, config) = parts;
        let (entries, buffers) = (self.ring_entries, self.buffers);
        let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("ringmcp-reactor".into())
            .spawn(move || {
                let ring = match Ring::new(entries, buffers) {
                    Ok(ring) => ring,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let _ = ready_tx.send(Ok(ring.features()));
                Driver::new(ring, rx, ready, parsed, pool, wake, config).run();
            })
            .map_err(Error::Reactor)?;
        match ready_rx.recv() {
            Ok(Ok(features)) => Ok((thread, features)),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(Error::Reactor(e))
            }
            Err(_) => {
                let _ = thread.join();
                Err(Error::ReactorStopped)
            }
        }
    }
}

/// What the reactor thread starts with: its command channel, the ready list, the parse
/// pool's output and the pool, the wake-up eventfd, its settings.
type ReactorParts = (
    std::sync::mpsc::Receiver<ReactorCommand>,
    Arc<ReadyList<QueuedRequest>>,
    Arc<ParsedQueue>,
    Option<ParsePool>,
    Arc<OwnedFd>,
    DriverConfig,
);

/// Runs MCP servers: one reactor thread drives every server spawned from this host.
///
/// Dropping the host shuts every server down (close stdin, SIGTERM, SIGKILL; see
/// [`Client::shutdown`]) and joins the reactor thread, so no process or fd outlives it. That
/// can take up to about 4 s for a server that ignores both stdin EOF and SIGTERM.
#[derive(Debug)]
pub struct Host {
    reactor: Arc<ReactorHandle>,
    thread: Option<JoinHandle<()>>,
    next_id: AtomicU64,
    events_capacity: usize,
    queue_limit: usize,
    features: Features,
    parser: JsonParser,
    max_request: usize,
    spill_store: Option<Arc<crate::spill::store::SpillStore>>,
    /// The spawner thread and its job queue.
    spawner: Option<(std::sync::mpsc::Sender<SpawnJob>, JoinHandle<()>)>,
    /// Session settings, for HTTP servers (stdio ones get them from the reactor's copy).
    session: SessionConfig,
    /// The application's answers to server requests, for HTTP servers (stdio ones go through
    /// the reactor's copy).
    handler: Option<handler::SharedHandler>,
    /// The security gateway's settings, when the host has a policy.
    policy: Option<PolicySettings>,
    /// The era each server spoke at its last start (true: 2026-07-28), by
    /// [`ServerSpec::identity`] (the era is cached per server).
    eras: Arc<std::sync::Mutex<std::collections::HashMap<String, bool>>>,
    /// Every client this host started, for [`Host::router`] (dropped ones are pruned there).
    live: router::LiveClients,
}

/// A server to start, handed to the spawner thread.
struct SpawnJob {
    id: ServerId,
    spec: Box<ServerSpec>,
    queue: Arc<RequestQueue<QueuedRequest>>,
    events: EventSink,
    reply: oneshot::Sender<Result<crate::protocol::ServerDetails>>,
}

/// Starts the spawner: a long-lived thread that starts every server process (a sandboxed one
/// takes milliseconds of setup that must not stall the reactor's I/O), then hands it to the
/// reactor. Long-lived on purpose: a parent-death signal fires when the *thread* that forked
/// the process exits.
fn start_spawner(
    reactor: Arc<ReactorHandle>,
    egress: Arc<egress::EgressSlot>,
) -> std::io::Result<(std::sync::mpsc::Sender<SpawnJob>, JoinHandle<()>)> {
    let (tx, rx) = std::sync::mpsc::channel::<SpawnJob>();
    let thread = std::thread::Builder::new().name("ringmcp-spawner".into()).spawn(move || {
        for SpawnJob { id, spec, queue, events, reply } in rx {
            let spawned = Box::new(match spec.launch() {
                Some(launch) => egress.spawn(&spec.name, launch),
                None => unreachable!("only stdio servers are sent to the spawner"),
            });
            let command = ReactorCommand::Spawn { id, spec, spawned, queue, events, reply };
            if let Err(std::sync::mpsc::SendError(ReactorCommand::Spawn { spawned, .. })) =
                reactor.commands.send(command)
                && let Ok(mut s) = *spawned
            {
                // The reactor is gone (it only stops after this thread): never leave a child.
                let _ = crate::sandbox::signal_group(s.child.id(), crate::sandbox::Signal::Kill);
                let _ = s.child.wait();
            } else {
                sys::eventfd_signal(&*reactor.wake);
            }
        }
    })?;
    Ok((tx, thread))
}

impl std::fmt::Debug for ReactorHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReactorHandle")
    }
}

impl Host {
    /// A builder with safe defaults.
    pub fn builder() -> HostBuilder {
        HostBuilder::new()
    }

    /// A tool router over every server this host started and still has a [`Client`] for
    /// (docs/routing.md): `route(query, k)` returns the few tools that fit, with the tokens
    /// they cost against injecting them all. Uses the static embedding table when
    /// `scripts/deps.sh` built it (or `$RINGMCP_EMBED_TABLE` names one), else ranks by
    /// keywords alone and warns once.
    pub fn router(&self) -> router::HostRouter {
        self.router_with(embedding::load_embedder(None))
    }

    /// [`router`](Self::router) with the embedder given (`None`: keywords only).
    pub fn router_with(
        &self,
        embedder: Option<Arc<dyn crate::route::Embedder>>,
    ) -> router::HostRouter {
        router::HostRouter::new(self.live.clone(), embedder)
    }

    /// What the kernel's io_uring offered this host's reactor (and so which fast paths run).
    pub fn uring_features(&self) -> Features {
        self.features
    }

    /// Starts a server and completes the `initialize` handshake. The future resolves once the
    /// server is ready to use.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (nothing started) for a spec with a builder call that does
    /// not apply to its kind of server; [`Error::Spawn`] when the process cannot be started;
    /// [`Error::Server`] when the handshake fails (error answer, unsupported version,
    /// timeout, early exit).
    pub fn spawn(&self, spec: ServerSpec) -> impl Future<Output = Result<Client>> + Send + use<> {
        use futures::future::Either;
        if let Some(why) = spec.misuse() {
            return Either::Left(std::future::ready(Err(Error::InvalidArgument(why))));
        }
        // Relaxed: the counter only needs to hand out distinct values.
        let id = ServerId::new(self.next_id.fetch_add(1, Ordering::Relaxed));
        let name: Arc<str> = spec.name.as_str().into();
        let (events_tx, events_rx) = EventSink::new(self.events_capacity);
        let lists = events_tx.lists();
        let (tx, rx) = oneshot::channel();
        let queue = Arc::new(RequestQueue::new(id.get(), self.queue_limit));
        let max_request = spec.max_request_bytes.unwrap_or(self.max_request);
        let mut spec = Box::new(spec);
        // A server known to be legacy skips the probe; a modern one is probed anyway (the
        // probe is its first request), with the fallback, in case it changed.
        let identity = spec.identity();
        let (pin_key, policy) = (identity.clone(), spec.policy.clone());
        // Where the server resolves relative paths (the policy checks them against it too).
        let cwd = spec.launch().and_then(|l| {
            l.cwd.clone().or_else(|| match &l.sandbox {
                Some(s) => Some(s.workspace.clone().unwrap_or_else(|| "/tmp".into())),
                None => std::env::current_dir().ok(),
            })
        });
        let eras = self.eras.clone();
        let live = self.live.clone();
        let known =
            eras.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&identity).copied();
        let default_era = self.session.era;
        let era = spec.era.unwrap_or(match (default_era, known) {
            (Era::Auto, Some(false)) => Era::Legacy,
            (era, _) => era,
        });
        spec.era = Some(era);
        let hint = spec.launch().filter(|_| spec.sandboxed()).map(|l| {
            let words = std::iter::once(&l.program).chain(&l.args);
            let command: Vec<String> = words.map(|w| shell_word(&w.to_string_lossy())).collect();
            let network = l.sandbox.as_ref().map(|s| s.network.clone()).unwrap_or_default();
            error::sandbox_hint(&command.join(" "), &network)
        });
        let registry = Arc::new(spilling::SpillRegistry::default());
        let backend: Arc<dyn RequestSink> = match spec.remote().cloned() {
            Some(remote) => {
                // Declares what the handler answers, as for stdio servers; the connection's
                // thread runs the handler.
                let mut session = self.session.clone();
                if let Some(t) = spec.request_timeout {
                    session.request_timeout = t;
                }
                session.era = era;
                gate::scope_roots(&mut session, &spec);
                remote::start(remote::RemoteParts {
                    id,
                    name: name.clone(),
                    spec: remote,
                    session,
                    queue: queue.clone(),
                    events: events_tx,
                    reply: tx,
                    handler: self.handler.as_ref().map(|shared| shared.0.clone()),
                })
            }
            None => {
                let job = SpawnJob { id, spec, queue: queue.clone(), events: events_tx, reply: tx };
                if let Some((jobs, _)) = &self.spawner {
                    // If the spawner is gone the job (and its reply sender) is dropped: the
                    // caller sees `ReactorStopped`.
                    let _ = jobs.send(job);
                }
                self.reactor.clone()
            }
        };
        let reactor = backend;
        let parser = self.parser;
        let store = self.spill_store.clone();
        let gate = self.policy.clone().map(|settings| {
            let roots: Vec<std::path::PathBuf> = self
                .session
                .roots
                .iter()
                .flatten()
                .filter_map(|r| r.uri.strip_prefix("file://"))
                .map(|p| percent_encoding::percent_decode_str(p).decode_utf8_lossy().into_owned())
                .map(std::path::PathBuf::from)
                .collect();
            (settings, pin_key, policy, roots, cwd)
        });
        Either::Right(async move {
            let details = rx.await.map_err(|_| Error::ReactorStopped)?;
            let mut eras = eras.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            match &details {
                Ok(d) => eras.insert(identity, d.version.is_modern()),
                // Probe again next time.
                Err(_) => eras.remove(&identity),
            };
            drop(eras);
            let details = details.map_err(|mut e| {
                if let Error::Handshake(failure) = &mut e {
                    failure.hint = hint;
                }
                e
            })?;
            let gate = gate.map(|(settings, pin_key, policy, roots, cwd)| {
                let instructions = details.init.instructions.clone();
                Arc::new(gate::Gate::new(
                    name.clone(),
                    pin_key,
                    policy.as_ref(),
                    &roots,
                    cwd,
                    instructions,
                    settings,
                ))
            });
            let client = Client::new(ClientInner {
                id,
                queue,
                name,
                details,
                reactor,
                events: events_rx,
                parser,
                max_request,
                spilled: registry,
                store,
                next_request_seq: AtomicU64::new(0),
                lists,
                cache: std::sync::Mutex::default(),
                output_schemas: schema::OutputSchemas::default(),
                gate,
            });
            live.add(&client);
            Ok(client)
        })
    }

    /// Blocking [`spawn`](Self::spawn).
    ///
    /// # Errors
    /// As [`spawn`](Self::spawn).
    pub fn spawn_blocking(&self, spec: ServerSpec) -> Result<Client> {
        block_on(self.spawn(spec))
    }
}

/// `word` quoted for a POSIX shell when it holds anything but safe characters.
fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        // The spawner first: every process it started reaches the reactor, which then shuts
        // them down with the rest.
        if let Some((jobs, thread)) = self.spawner.take() {
            drop(jobs);
            let _ = thread.join();
        }
        self.reactor.send(ReactorCommand::Stop);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
