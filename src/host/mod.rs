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
mod lane;
mod launcher;
mod memory;
pub mod pins;
mod pump;
mod remote;
mod request;
pub mod resolve;
pub mod router;
mod schema;
mod spawner;
pub use builder::{HostBuilder, Reactor};
use spawner::start_spawner;
mod spilling;
mod stats;
mod stderr;
mod supervise;
mod tasks;

use std::future::Future;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::sync::mpsc::{Sender, channel};
use std::thread::JoinHandle;
use std::time::Duration;

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
pub use events::{EventStream, ServerEvent};
pub use gate::PolicySettings;
pub use handler::ClientHandler;
pub use remote::RemoteSpec;
pub use spilling::SpillConfig;
pub use stats::{SandboxStats, ServerStats};
pub use supervise::{RestartPolicy, STABLE_AFTER, ServerHealth, SupervisionStatus};
pub use tasks::Task;

use client::block_on;
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
    /// Where callers' direct writes are handed to the reactor; `None`: the host does not
    /// let callers write (HostBuilder::direct_write).
    handoffs: Option<Arc<lane::Handoffs>>,
}

impl ReactorHandle {
    /// Puts a queue that just received its first request on the ready list and wakes the
    /// reactor (see [`RequestQueue::push`] for why one wake-up per idle→busy edge suffices).
    pub(crate) fn schedule(&self, queue: Arc<RequestQueue<QueuedRequest>>) {
        self.ready.push(queue);
        sys::eventfd_signal(&*self.wake);
    }

    /// A lane for stdio server `server`, when the host lets callers write themselves.
    pub(crate) fn lane(&self, server: ServerId) -> Option<Arc<lane::Lane>> {
        let handoffs = self.handoffs.clone()?;
        Some(Arc::new(lane::Lane::new(server, handoffs, self.wake.clone())))
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
    /// What starting a server takes (shared with the supervisors of restartable servers).
    launcher: Arc<launcher::Launcher>,
    thread: Option<JoinHandle<()>>,
    /// The spawner thread (its job queue is the launcher's).
    spawner: Option<JoinHandle<()>>,
    features: Features,
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
        router::HostRouter::new(self.launcher.live.clone(), embedder)
    }

    /// What tainted this host's session (content from an open-world tool, or content the scan
    /// flagged), if anything has: from then on, high-impact tools ask (or are refused, as the
    /// policy's `afterUntrusted` says). `None` without a policy.
    pub fn taint(&self) -> Option<crate::policy::taint::TaintSource> {
        self.launcher
            .taint
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .source()
            .cloned()
    }

    /// Starts the session afresh (a new conversation): untrusted content read so far no
    /// longer counts.
    pub fn clear_taint(&self) {
        self.launcher.taint.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clear();
    }

    /// What the kernel's io_uring offered this host's reactor (and so which fast paths run).
    pub fn uring_features(&self) -> Features {
        self.features
    }

    /// Starts a server and completes the `initialize` handshake. The future resolves once the
    /// server is ready to use. A spec with [`restart`](ServerSpec::restart) is restarted
    /// when it goes away (docs/host.md, "Supervision").
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (nothing started) for a spec with a builder call that does
    /// not apply to its kind of server; [`Error::Spawn`] when the process cannot be started;
    /// [`Error::Server`] when the handshake fails (error answer, unsupported version,
    /// timeout, early exit).
    pub fn spawn(&self, spec: ServerSpec) -> impl Future<Output = Result<Client>> + Send + use<> {
        launcher::Launcher::spawn(&self.launcher, spec)
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
        self.launcher.close();
        if let Some(thread) = self.spawner.take() {
            let _ = thread.join();
        }
        self.launcher.reactor.send(ReactorCommand::Stop);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
