//! [`HostBuilder`]: a host's settings, and the start of its reactor, spawner and egress.

#[allow(clippy::wildcard_imports)]
use super::*;

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
    direct_write: bool,
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
            direct_write: true,
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

    /// Whether a caller may write its request to an idle stdio server's stdin itself, on its
    /// own thread, instead of waking the reactor to write it (default on; docs/host.md, "The
    /// direct write"). Off, every request goes through the reactor.
    pub fn direct_write(mut self, on: bool) -> Self {
        self.direct_write = on;
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

    /// Puts the policy gate in every client's path: each request is decided by its
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
        self.build_with(false).map(|(host, _)| host)
    }

    /// A host whose reactor is not a thread of its own but a task the caller runs
    /// ([`Reactor::run`]) on a current-thread tokio runtime (with I/O enabled), the thread
    /// this is called on: for a host whose callers are all tasks of that one thread (the
    /// gateway's session), answers then wake them with no hop between threads (docs/host.md,
    /// "A reactor hosted on the caller's thread").
    ///
    /// Nothing on that thread may block waiting for a server ([`Host::spawn_blocking`],
    /// `futures::executor::block_on` of a call): the reactor would wait behind it. The
    /// reactor task ends once the host is dropped and every server has stopped; keep
    /// running it until then. Like the reactor thread, it blocks SIGPIPE on the thread that
    /// runs it (a write to a server gone is an `EPIPE` error, not the end of the process).
    ///
    /// # Errors
    /// As [`build`](Self::build).
    pub fn build_hosted(self) -> Result<(Host, Reactor)> {
        let (host, reactor) = self.build_with(true)?;
        Ok((host, reactor.expect("a hosted build makes its reactor")))
    }

    fn build_with(self, hosted: bool) -> Result<(Host, Option<Reactor>)> {
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
            scan_content: self.policy.is_some(),
        };
        let handoffs = Arc::new(super::lane::Handoffs::new());
        let reactor_parts =
            (rx, ready.clone(), parsed, pool, wake.clone(), handoffs.clone(), config);
        let (thread, features, hosted) = if hosted {
            let ring = Ring::pollable(self.ring_entries, self.buffers).map_err(Error::Reactor)?;
            let features = ring.features();
            let (rx, ready, parsed, pool, wake, handoffs, config) = reactor_parts;
            let driver = Driver::new(ring, rx, ready, parsed, pool, wake, handoffs, config);
            (None, features, Some(Reactor(driver)))
        } else {
            let (thread, features) = self.start_reactor(reactor_parts)?;
            (Some(thread), features, None)
        };
        tracing::debug!(?features, "io_uring reactor running");
        let handoffs = self.direct_write.then_some(handoffs);
        let reactor = Arc::new(ReactorHandle { commands: tx, ready, wake, handoffs });
        let audit = self.policy.as_ref().and_then(|p| p.audit.clone());
        let egress = Arc::new(egress::EgressSlot::new(self.egress.clone(), audit));
        let spawner = match start_spawner(reactor.clone(), egress) {
            Ok(s) => s,
            Err(e) => {
                reactor.send(ReactorCommand::Stop);
                if let Some(thread) = thread {
                    let _ = thread.join();
                }
                return Err(Error::Reactor(e));
            }
        };
        let (jobs, spawner) = spawner;
        let launcher = launcher::Launcher {
            reactor,
            jobs: std::sync::Mutex::new(Some(jobs)),
            next_id: AtomicU64::new(1),
            events_capacity: self.events_capacity,
            queue_limit: self.queue_limit,
            parser: self.parser,
            max_request: self.max_request,
            spill_store,
            session: self.session,
            handler: self.handler,
            policy: self.policy,
            eras: Arc::default(),
            live: router::LiveClients::default(),
            taint: Arc::default(),
        };
        let host = Host { launcher: Arc::new(launcher), thread, spawner: Some(spawner), features };
        Ok((host, hosted))
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
        let (rx, ready, parsed, pool, wake, handoffs, config) = parts;
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
                let features = ring.features();
                // Ready once the driver is made: what it opens on the way (its memory watch
                // reads the cgroup's files) is closed again before `build` returns.
                let driver = Driver::new(ring, rx, ready, parsed, pool, wake, handoffs, config);
                let _ = ready_tx.send(Ok(features));
                driver.run();
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
    Arc<super::lane::Handoffs>,
    DriverConfig,
);

/// The reactor of a host built with [`HostBuilder::build_hosted`], to run as a task of the
/// thread it was built on.
pub struct Reactor(Driver);

impl Reactor {
    /// Drives every server of the host until the host is dropped and they have all stopped.
    pub async fn run(self) {
        self.0.run_hosted().await;
    }
}

impl std::fmt::Debug for Reactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Reactor")
    }
}
