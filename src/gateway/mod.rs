//! `ringmcp gateway`: one MCP server in front of every server of an `mcpServers` config
//! (docs/gateway.md).
//!
//! ```text
//!  upstream client ──stdio──▶ upstream.rs  ServerSession (protocol/server.rs): lifecycle,
//!  (Claude Desktop,           │            one answer per request, cancellation, the gateway's
//!   Cursor, an SDK)           │            own requests to the client with deadlines
//!                             ▼
//!                           dispatch.rs    each request: catalog lookup, the backend's Client
//!                             │            (policy, approval, audit, spill), the result back
//!                             ▼
//!                           backend.rs     one supervisor per backend: start, forward its
//!                                          notifications, restart with back-off
//! ```
//!
//! The naming and routing tables ([`names`], [`catalog`]) are pure; the I/O lives in
//! `upstream.rs` (stdin/stdout) and in the [`Host`] the backends run on.

#![forbid(unsafe_code)]

mod backend;
pub mod catalog;
mod dispatch;
mod handler;
mod outbox;
/// Upstream naming (`server__tool`), kept below host/ and gateway/ in `protocol::names`.
pub use crate::protocol::names;
mod search;
mod spilled;
mod upstream;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

pub use crate::host::RestartPolicy;
use crate::host::{Host, ServerSpec};

pub use backend::{BackendStatus, Health};
pub use catalog::{Catalog, ToolFilter};
pub use handler::{GatewayApprover, GatewayHandler};
pub use names::{NameError, check_separator, check_server};
pub use outbox::{Inbox, Outbox};
pub use search::preload_embedder;
pub(crate) use upstream::fuzz::gateway_loop as fuzz_loop;
pub use upstream::{Factory, HttpOptions, serve, serve_http, serve_stdio};

/// The config file's `"gateway"` object (every key optional).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct GatewaySettings {
    /// Between server and tool names (default `__`).
    pub separator: String,
    /// Items per page of the upstream `*/list` answers.
    pub page_size: usize,
    /// How crashed backends are restarted.
    pub restart: RestartPolicy,
    /// Where the gateway's log also goes (besides stderr).
    pub log_file: Option<PathBuf>,
    /// Largest range of a spilled payload served by one `resources/read`, and largest payload
    /// served whole (bytes).
    pub read_chunk_max: usize,
    /// `tools/list` holds only the gateway's own tools, `ringmcp__find_tools` and the tools it
    /// found (docs/gateway.md, "Tool search").
    pub tool_search: bool,
    /// `tools/list` holds the backends' tools, in order, up to this many tokens (o200k_base),
    /// and `ringmcp__find_tools` for the rest.
    pub tool_budget: Option<usize>,
    /// The router's embedder in these modes: a static table file or a model folder for the
    /// full encoder (docs/routing.md, "Embedders"; default `$RINGMCP_EMBED_TABLE`, else the
    /// static table scripts/deps.sh builds).
    pub embeddings: Option<PathBuf>,
}

impl GatewaySettings {
    /// Whether `tools/list` is routed (search or budget mode).
    pub fn routes_tools(&self) -> bool {
        self.tool_search || self.tool_budget.is_some()
    }
}

impl Default for GatewaySettings {
    fn default() -> Self {
        GatewaySettings {
            separator: names::DEFAULT_SEPARATOR.into(),
            page_size: 100,
            restart: RestartPolicy::default(),
            log_file: None,
            read_chunk_max: 4 << 20,
            tool_search: false,
            tool_budget: None,
            embeddings: None,
        }
    }
}

/// One backend as the gateway is given it.
#[derive(Debug, Clone)]
pub struct BackendSpec {
    /// How to start or reach it (its name is the prefix).
    pub spec: ServerSpec,
    /// Which of its tools are exposed.
    pub filter: ToolFilter,
}

/// Why a gateway cannot start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GatewayError {
    /// A name is unusable.
    #[error(transparent)]
    Name(#[from] NameError),
    /// `--no-prefix` with more than one backend.
    #[error(
        "--no-prefix keeps tool names unchanged and so serves exactly one backend; the config has {0}: remove --no-prefix or keep one server"
    )]
    NoPrefixNeedsOne(usize),
    /// The config has no servers.
    #[error("the config has no servers under \"mcpServers\": add at least one")]
    Empty,
    /// The `"gateway"` object or a `"tools"` filter is malformed.
    #[error("{0}")]
    Settings(String),
    /// The servers need more open files than this process may have.
    #[error(
        "the config has {servers} servers, which need about {needed} open files; this process may open {limit} (RLIMIT_NOFILE): raise the limit (`ulimit -n {suggest}`, or systemd's LimitNOFILE={suggest}) or split the servers across several gateways"
    )]
    TooManyServers {
        /// Servers in the config.
        servers: usize,
        /// Files they need, about.
        needed: u64,
        /// The process's limit.
        limit: u64,
        /// A limit that fits.
        suggest: u64,
    },
    /// Reading or writing stdio failed.
    #[error("gateway I/O: {0}")]
    Io(#[from] std::io::Error),
}

/// Open files the host holds for one server it starts (pipes, pidfd, cgroup; measured: 5).
const FDS_PER_STDIO_SERVER: u64 = 5;
/// Open files the host holds for one HTTP server (its connections and its thread's runtime).
const FDS_PER_HTTP_SERVER: u64 = 4;
/// Open files the gateway itself needs besides its servers.
const FDS_RESERVE: u64 = 64;

/// Refuses a config whose servers cannot all be held open under this process's open-file
/// limit, before anything is started (each would otherwise fail on its own, late).
fn check_fd_budget(backends: &[BackendSpec]) -> Result<(), GatewayError> {
    let Some(limit) = crate::sandbox::open_file_limit() else { return Ok(()) };
    let per = |b: &BackendSpec| match b.spec.launch() {
        Some(_) => FDS_PER_STDIO_SERVER,
        None => FDS_PER_HTTP_SERVER,
    };
    let needed = FDS_RESERVE + backends.iter().map(per).sum::<u64>();
    if needed <= limit {
        return Ok(());
    }
    let suggest = needed.next_power_of_two().max(1024);
    Err(GatewayError::TooManyServers { servers: backends.len(), needed, limit, suggest })
}

/// What the gateway is made of: the host its backends run on, the backends, and how names
/// are made.
#[derive(Debug)]
pub struct Gateway {
    pub(crate) core: Arc<Core>,
    /// The host's reactor when it was built to run on the session's thread
    /// ([`with_reactor`](Gateway::with_reactor)).
    pub(crate) reactor: Option<crate::host::Reactor>,
}

/// The state every task of the gateway shares.
#[derive(Debug)]
pub(crate) struct Core {
    /// `None` once the gateway shut down.
    host: std::sync::RwLock<Option<Host>>,
    /// The backends' supervisors, once started.
    supervisors: Mutex<Vec<tokio::task::AbortHandle>>,
    pub(crate) backends: Vec<Arc<backend::Backend>>,
    pub(crate) naming: catalog::Naming,
    pub(crate) settings: GatewaySettings,
    /// The merged lists, `None` when a backend's lists changed since they were built.
    catalog: Mutex<Option<Arc<Catalog>>>,
    /// Bumped whenever the catalog goes stale.
    epoch: AtomicU64,
    /// Held while the catalog is built: the requests that find it stale meanwhile wait and
    /// take that build, instead of each fetching every backend's lists and building its own
    /// (all the calls in flight when a backend restarts would).
    building: tokio::sync::Mutex<()>,
    /// Messages for the upstream connection.
    pub(crate) upstream: Outbox,
    /// How many backends finished their first start (up or failed).
    settled: tokio::sync::watch::Sender<usize>,
    /// The lists as the upstream client was last told of them.
    announced: Mutex<Option<Arc<Catalog>>>,
    /// The upstream client's `logging/setLevel`, given to every backend that comes up.
    pub(crate) log_level: Mutex<Option<String>>,
    /// The tool-routing modes' router and found tools.
    pub(crate) search: Arc<search::Search>,
}

/// Which upstream lists differ between two catalogs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Changed {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
}

/// Builds of the catalog in a row while backends keep coming and going, before the last one
/// is used uncached.
const CATALOG_TRIES: u32 = 3;

/// How long list requests wait for backends still starting.
const STARTUP_WAIT: Duration = Duration::from_secs(30);

impl Gateway {
    /// A gateway over `backends` on `host`. Build the host with the gateway's
    /// [`GatewayHandler`] and [`GatewayApprover`] made from `outbox` (see
    /// [`Gateway::outbox`]) so that server requests and approvals reach the upstream client.
    ///
    /// # Errors
    /// [`GatewayError`] for a name or setting that cannot work.
    pub fn new(
        host: Host,
        backends: Vec<BackendSpec>,
        settings: GatewaySettings,
        prefix: bool,
        outbox: Outbox,
    ) -> Result<Gateway, GatewayError> {
        check_separator(&settings.separator)?;
        if backends.is_empty() {
            return Err(GatewayError::Empty);
        }
        if !prefix && backends.len() > 1 {
            return Err(GatewayError::NoPrefixNeedsOne(backends.len()));
        }
        check_fd_budget(&backends)?;
        for b in &backends {
            check_server(&b.spec.name, &settings.separator)?;
        }
        let naming = catalog::Naming { separator: settings.separator.clone(), prefix };
        let backends = backends.into_iter().map(|b| Arc::new(backend::Backend::new(b))).collect();
        let settings_embeddings = settings.embeddings.clone();
        let core = Core {
            host: std::sync::RwLock::new(Some(host)),
            supervisors: Mutex::new(Vec::new()),
            backends,
            naming,
            settings,
            catalog: Mutex::new(None),
            building: tokio::sync::Mutex::new(()),
            epoch: AtomicU64::new(0),
            upstream: outbox,
            settled: tokio::sync::watch::Sender::new(0),
            announced: Mutex::new(None),
            log_level: Mutex::new(None),
            search: Arc::new(search::Search::new(settings_embeddings)),
        };
        Ok(Gateway { core: Arc::new(core), reactor: None })
    }

    /// Runs `reactor`, the reactor of the host given to [`new`](Gateway::new) (built with
    /// [`HostBuilder::build_hosted`](crate::host::HostBuilder::build_hosted) on this thread),
    /// as a task beside the upstream session ([`serve_stdio`], [`serve`]): a backend's answer
    /// is then read, checked and sent upstream on one thread, with no hop between threads.
    /// Over HTTP ([`serve_http`]) each session's host needs a reactor thread: a gateway with
    /// a hosted reactor is refused there.
    #[must_use]
    pub fn with_reactor(mut self, reactor: crate::host::Reactor) -> Self {
        self.reactor = Some(reactor);
        self
    }

    /// A new outbox: the channel the host's handler and approver, and the backends, use to
    /// reach the upstream client. Pass it to [`Gateway::new`] and to the handler/approver.
    pub fn outbox() -> (Outbox, Inbox) {
        outbox::channel()
    }

    /// The backends' current state.
    pub fn status(&self) -> Vec<BackendStatus> {
        self.core.backends.iter().map(|b| b.status()).collect()
    }
}

impl Core {
    /// The merged lists, built from the backends that are up when stale.
    pub(crate) async fn catalog(&self) -> Arc<Catalog> {
        if let Some(c) = lock(&self.catalog).clone() {
            return c;
        }
        let _building = self.building.lock().await;
        if let Some(c) = lock(&self.catalog).clone() {
            return c;
        }
        // Backends still starting get a while, so that a client's first list is complete.
        let total = self.backends.len();
        let mut settled = self.settled.subscribe();
        let _ = tokio::time::timeout(STARTUP_WAIT, settled.wait_for(|n| *n >= total)).await;
        // A backend that comes up or goes away during a build makes it stale before it is
        // done: build again (the caller would otherwise be told, say, that a tool of a backend
        // now up does not exist), up to a few times while lists keep changing.
        let mut tries = 0;
        let built = loop {
            tries += 1;
            let epoch = self.epoch.load(Ordering::Acquire);
            let built = self.build().await;
            if self.epoch.load(Ordering::Acquire) == epoch {
                *lock(&self.catalog) = Some(built.clone());
                if self.settings.tool_search {
                    // Index the new lists now, on the blocking pool, so that the next search
                    // finds the router ready instead of indexing while the model waits
                    // (tool-search mode: where every tool is found by searching).
                    self.search.warm_later(&built, self.backend_names());
                }
                break built;
            }
            if tries == CATALOG_TRIES {
                break built;
            }
        };
        lock(&self.announced).get_or_insert_with(|| built.clone());
        built
    }

    /// The merged lists of the backends up now.
    async fn build(&self) -> Arc<Catalog> {
        let lists = futures::future::join_all(self.backends.iter().map(|b| b.lists())).await;
        let mut own = vec![dispatch::status_tool()];
        if self.settings.routes_tools() {
            own.push(crate::route::find::definition(&self.briefs()));
        }
        let views: Vec<Option<catalog::Lists<'_>>> =
            lists.iter().zip(&self.backends).map(|(l, b)| l.as_ref().map(|l| l.view(b))).collect();
        Arc::new(Catalog::build(&self.naming, &own, &views))
    }

    /// The backends as `ringmcp__find_tools` names them: each with what it is for (its
    /// config's `description`, else what its handshake said of it, once it is up).
    fn briefs(&self) -> Vec<crate::route::find::ServerBrief> {
        use crate::route::find::{ServerBrief, about};
        (self.backends.iter())
            .map(|b| {
                let about = match b.client() {
                    Some(client) => client.about(),
                    None => about(b.spec.description.as_deref(), None, None),
                };
                ServerBrief { name: b.spec.name.clone(), about }
            })
            .collect()
    }

    /// The backends' names, in order (backend `i` is `names[i]`).
    pub(crate) fn backend_names(&self) -> Vec<String> {
        self.backends.iter().map(|b| b.spec.name.clone()).collect()
    }

    /// A backend finished its first start.
    pub(crate) fn settle(&self) {
        self.settled.send_modify(|n| *n += 1);
    }

    /// Whether every backend finished its first start.
    pub(crate) fn started(&self) -> bool {
        *self.settled.borrow() >= self.backends.len()
    }

    /// Rebuilds the lists and tells which differ from what the upstream client was last told.
    pub(crate) async fn changes(&self) -> Changed {
        let new = self.catalog().await;
        let old = lock(&self.announced).replace(new.clone());
        match old {
            None => Changed { tools: true, prompts: true, resources: true },
            Some(old) => Changed {
                tools: old.tools() != new.tools(),
                prompts: old.prompts() != new.prompts(),
                resources: old.resources() != new.resources() || old.templates() != new.templates(),
            },
        }
    }

    /// Starts every backend's supervisor (on the current tokio runtime) for a client of
    /// revision `client`: a backend whose era the config leaves open speaks the client's era
    /// (docs/gateway.md, "Eras").
    pub(crate) fn start(self: &Arc<Self>, client: crate::protocol::ProtocolVersion) {
        let legacy = !client.is_modern();
        let mut supervisors = lock(&self.supervisors);
        for i in 0..self.backends.len() {
            let supervisor = backend::supervise(self.clone(), i, legacy);
            supervisors.push(tokio::spawn(supervisor).abort_handle());
        }
    }

    /// Starts backend `spec` on the host (an error once the gateway shut down).
    pub(crate) fn spawn(
        &self,
        spec: ServerSpec,
    ) -> impl std::future::Future<Output = crate::host::Result<crate::host::Client>> + Send + 'static
    {
        let host = self.host.read().unwrap_or_else(PoisonError::into_inner);
        let spawn = host.as_ref().map(|h| h.spawn(spec));
        async move {
            match spawn {
                Some(s) => s.await,
                None => {
                    Err(crate::host::Error::InvalidArgument("the gateway is shutting down".into()))
                }
            }
        }
    }

    /// Stops the supervisors and the host (every backend). `wait`: until the backends are
    /// gone; otherwise they are stopped on a thread of their own, so that the caller (an HTTP
    /// session ending) does not wait for servers that are slow to exit.
    pub(crate) fn shutdown(&self, wait: bool) {
        for s in lock(&self.supervisors).drain(..) {
            s.abort();
        }
        let host = self.host.write().unwrap_or_else(PoisonError::into_inner).take();
        for b in &self.backends {
            b.forget();
        }
        let Some(host) = host else { return };
        if wait {
            drop(host);
        } else if let Err(e) =
            std::thread::Builder::new().name("gateway-stop".into()).spawn(move || drop(host))
        {
            tracing::warn!("no thread to stop the backends on ({e}): they are stopped here");
        }
    }

    /// The merged lists if they are fresh, without building them.
    pub(crate) fn cached_catalog(&self) -> Option<Arc<Catalog>> {
        lock(&self.catalog).clone()
    }

    /// Marks the merged lists stale (a backend came, went, or changed a list).
    pub(crate) fn invalidate(&self) {
        self.epoch.fetch_add(1, Ordering::AcqRel);
        *lock(&self.catalog) = None;
    }
}

/// A spill URI's range (fuzzing).
#[doc(hidden)]
pub fn spilled_range(uri: &str) -> Option<(u64, Option<u64>)> {
    spilled::parse(uri).ok().and_then(|r| r.range)
}

/// Locks a mutex whose holder may have panicked (the data stays consistent: every update is
/// a single assignment).
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Parses the `"gateway"` object of a config (absent: the defaults).
///
/// # Errors
/// [`GatewayError::Settings`] naming what is wrong.
pub fn settings_from(value: Option<&Value>) -> Result<GatewaySettings, GatewayError> {
    match value {
        None => Ok(GatewaySettings::default()),
        Some(v) => serde_json::from_value(v.clone())
            .map_err(|e| GatewayError::Settings(format!("the config's \"gateway\" object: {e}"))),
    }
}

/// Parses a server entry's `"tools"` filter (absent: every tool).
///
/// # Errors
/// [`GatewayError::Settings`] naming the server and what is wrong.
pub fn filter_from(server: &str, value: Option<&Value>) -> Result<ToolFilter, GatewayError> {
    match value {
        None => Ok(ToolFilter::default()),
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| {
            GatewayError::Settings(format!(
                "server {server:?}: \"tools\" must be {{\"allow\": [globs], \"deny\": [globs]}}: {e}"
            ))
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_off_doubles_up_to_the_cap() {
        let r = RestartPolicy { initial_delay_ms: 100, max_delay_ms: 1000, max_restarts: None };
        let delays: Vec<u64> = (1..=6).map(|n| r.delay(n).as_millis() as u64).collect();
        assert_eq!(delays, [100, 200, 400, 800, 1000, 1000]);
        assert_eq!(r.delay(u32::MAX), Duration::from_millis(1000));
    }

    #[test]
    fn settings_refuse_unknown_keys_and_bad_filters() {
        let s = settings_from(Some(&serde_json::json!({"separator": "-", "pageSize": 5}))).unwrap();
        assert_eq!((s.separator.as_str(), s.page_size), ("-", 5));
        assert!(settings_from(Some(&serde_json::json!({"seperator": "-"}))).is_err());
        let e = filter_from("fs", Some(&serde_json::json!({"allow": "x"}))).unwrap_err();
        assert!(e.to_string().contains("server \"fs\""), "{e}");
        let f = filter_from("fs", Some(&serde_json::json!({"deny": ["rm*"]}))).unwrap();
        assert!(!f.exposes("rmdir") && f.exposes("ls"));
    }
}
