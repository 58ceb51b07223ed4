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

mod approval;
pub mod audit;
mod builder;
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
mod request;
pub mod resolve;
pub mod router;
mod schema;
mod spawner;
pub use builder::HostBuilder;
use spawner::{SpawnJob, start_spawner};
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
pub use approval::{Approval, ApprovalRequest, ApproveMatching, Approver};
pub use client::{
    Blocking, CallFuture, Client, PROGRESS_BACKLOG, ProgressStream, ResponseFuture, TaskMode,
    ToolCall,
};
pub use config::{Config, ConfigError, Endpoint, ServerSpec};
pub use error::{Error, Result, STDERR_LINE_MAX, STDERR_LINES, StartFailure};
use events::EventSink;
pub use events::{EventStream, ServerEvent};
pub use gate::PolicySettings;
pub use handler::ClientHandler;
pub use remote::RemoteSpec;
pub use spilling::SpillConfig;
pub use stats::{SandboxStats, ServerStats};
pub use tasks::Task;

use client::{ClientInner, block_on};
use driver::{Driver, DriverConfig, ParsedQueue, ReactorCommand};
use pump::ServerCommand;
use request::{QueuedRequest, ServerId};

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
    /// The policy gate's settings, when the host has a policy.
    policy: Option<PolicySettings>,
    /// The era each server spoke at its last start (true: 2026-07-28), by
    /// [`ServerSpec::identity`] (the era is cached per server).
    eras: Arc<std::sync::Mutex<std::collections::HashMap<String, bool>>>,
    /// Every client this host started, for [`Host::router`] (dropped ones are pruned there).
    live: router::LiveClients,
    /// The session's taint (docs/policy.md, "After untrusted content"), shared by every gate.
    taint: Arc<std::sync::Mutex<crate::policy::taint::Taint>>,
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

    /// What tainted this host's session (content from an open-world tool, or content the scan
    /// flagged), if anything has: from then on, high-impact tools ask (or are refused, as the
    /// policy's `afterUntrusted` says). `None` without a policy.
    pub fn taint(&self) -> Option<crate::policy::taint::TaintSource> {
        self.taint.lock().unwrap_or_else(std::sync::PoisonError::into_inner).source().cloned()
    }

    /// Starts the session afresh (a new conversation): untrusted content read so far no
    /// longer counts.
    pub fn clear_taint(&self) {
        self.taint.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clear();
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
        let gate = self.policy.clone().map(|settings| {
            let roots = self.session.roots.as_deref().unwrap_or_default();
            gate::GateInputs::of(&spec, settings, roots, self.taint.clone())
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
        // With a policy, the server's sampling requests pass its gate before the handler.
        let gate_slot: Option<gate::GateSlot> = self.policy.as_ref().map(|_| Arc::default());
        let handler = self.handler.as_ref().map(|shared| match &gate_slot {
            Some(slot) => {
                let gated = gate::Gated { inner: shared.0.clone(), gate: slot.clone() };
                Arc::new(gated) as Arc<dyn ClientHandler>
            }
            None => shared.0.clone(),
        });
        let description = spec.description.clone();
        let job =
            SpawnJob { id, spec, queue: queue.clone(), events: events_tx, reply: tx, handler };
        let reactor = self.start_backend(job);
        let parser = self.parser;
        let store = self.spill_store.clone();
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
            let gate = gate.map(|g| g.build(name.clone(), details.init.instructions.clone()));
            if let (Some(slot), Some(gate)) = (&gate_slot, &gate) {
                let _ = slot.set(gate.clone());
            }
            let client = Client::new(ClientInner {
                id,
                queue,
                name,
                description,
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

    /// Hands a server to its connection: an HTTP server to a thread of its own, a stdio one
    /// to the spawner thread and then the reactor. Returns where its requests go.
    fn start_backend(&self, job: SpawnJob) -> Arc<dyn RequestSink> {
        let Some(remote) = job.spec.remote().cloned() else {
            if let Some((jobs, _)) = &self.spawner {
                // If the spawner is gone the job (and its reply sender) is dropped: the
                // caller sees `ReactorStopped`.
                let _ = jobs.send(job);
            }
            return self.reactor.clone();
        };
        let SpawnJob { id, spec, queue, events, reply, handler } = job;
        // Declares what the handler answers, as for stdio servers; the connection's thread
        // runs the handler.
        let mut session = self.session.clone();
        if let Some(t) = spec.request_timeout {
            session.request_timeout = t;
        }
        session.era = spec.era.unwrap_or(session.era);
        gate::scope_roots(&mut session, &spec);
        let name = spec.name.as_str().into();
        remote::start(remote::RemoteParts {
            id,
            name,
            spec: remote,
            session,
            queue,
            events,
            reply,
            handler,
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
