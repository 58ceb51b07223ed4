//! One backend of the gateway: its client while it is up, and the supervisor that starts it,
//! forwards what it says outside of answers, and restarts it with back-off when it goes away
//! (docs/gateway.md, "Resilience").

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;
use serde_json::{Value, json};

use crate::host::{Client, ServerEvent, ServerSpec};
use crate::protocol::{Prompt, Resource, Tool};

use super::catalog::{Lists, ToolFilter};
use super::outbox::Out;
use super::{BackendSpec, Core, lock};

/// Where a backend is in its life.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "state")]
pub enum Health {
    /// Being started (first time or after a failure).
    Starting,
    /// Serving.
    Up,
    /// Gone; restarted when the back-off delay has passed.
    Restarting {
        /// Milliseconds until the next attempt.
        in_ms: u64,
    },
    /// Given up on (`maxRestarts` failures in a row).
    Stopped,
}

/// What `ringmcp__status` reports of one backend.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BackendStatus {
    /// Its name (the prefix).
    pub name: String,
    /// Its state.
    #[serde(flatten)]
    pub health: Health,
    /// Restarts so far.
    pub restarts: u32,
    /// Why it last failed, when it did.
    pub last_error: Option<String>,
    /// Seconds since it came up, while it is up.
    pub up_for_secs: Option<u64>,
    /// The revision negotiated, while it is up.
    pub protocol_version: Option<String>,
    /// Whether it runs sandboxed.
    pub sandboxed: bool,
}

#[derive(Debug)]
struct State {
    health: Health,
    client: Option<Client>,
    restarts: u32,
    last_error: Option<String>,
    up_since: Option<Instant>,
    next_try: Option<Instant>,
}

/// One backend.
#[derive(Debug)]
pub(crate) struct Backend {
    pub(crate) spec: ServerSpec,
    pub(crate) filter: ToolFilter,
    state: Mutex<State>,
}

/// A backend's lists, fetched from its client.
#[derive(Debug)]
pub(crate) struct OwnedLists {
    tools: Arc<Vec<Tool>>,
    prompts: Arc<Vec<Prompt>>,
    resources: Arc<Vec<Resource>>,
    templates: Vec<Value>,
}

impl OwnedLists {
    pub(crate) fn view<'a>(&'a self, backend: &'a Backend) -> Lists<'a> {
        Lists {
            server: &backend.spec.name,
            filter: &backend.filter,
            tools: &self.tools,
            prompts: &self.prompts,
            resources: &self.resources,
            templates: &self.templates,
        }
    }
}

impl Backend {
    pub(crate) fn new(b: BackendSpec) -> Self {
        let state = State {
            health: Health::Starting,
            client: None,
            restarts: 0,
            last_error: None,
            up_since: None,
            next_try: None,
        };
        Backend { spec: b.spec, filter: b.filter, state: Mutex::new(state) }
    }

    /// Drops its client (the gateway is shutting down).
    pub(crate) fn forget(&self) {
        let mut state = lock(&self.state);
        state.client = None;
        state.health = Health::Stopped;
    }

    /// Its name.
    pub(crate) fn name(&self) -> &str {
        &self.spec.name
    }

    /// Its client, while it is up.
    pub(crate) fn client(&self) -> Option<Client> {
        lock(&self.state).client.clone()
    }

    /// Its client, or the error an upstream request routed to it gets.
    pub(crate) fn require(&self) -> Result<Client, crate::jsonrpc::ErrorObject> {
        let state = lock(&self.state);
        if let Some(c) = &state.client {
            return Ok(c.clone());
        }
        let why = state.last_error.as_deref().unwrap_or("it has not finished starting");
        let mut retry_after = None;
        let when = match &state.health {
            Health::Restarting { .. } => {
                let left = (state.next_try)
                    .map_or(Duration::ZERO, |t| t.saturating_duration_since(Instant::now()));
                // A start under way (the delay passed): come back shortly.
                retry_after = Some(left.max(Duration::from_millis(10)));
                format!("; it is restarted in {} ms", left.as_millis())
            }
            Health::Stopped => {
                "; it failed too often and stays down (see ringmcp__status; restart the gateway)"
                    .to_owned()
            }
            _ => String::new(),
        };
        // The host's own refusal, so that its JSON-RPC form (data.reason, retryAfterSeconds)
        // is the same whether the client meets the server directly or through the gateway.
        let refusal = crate::host::Error::Unavailable {
            server: self.name().into(),
            why: format!("{why}{when}"),
            retry_after,
        };
        Err(crate::jsonrpc::ErrorObject::from(&refusal))
    }

    /// What `ringmcp__status` shows.
    pub(crate) fn status(&self) -> BackendStatus {
        let state = lock(&self.state);
        let mut health = state.health.clone();
        // Its connection ended and the host's news of it is on its way: already restarting.
        if health == Health::Up && state.client.as_ref().is_some_and(Client::connection_closed) {
            health = Health::Restarting { in_ms: 0 };
        }
        if let (Health::Restarting { .. }, Some(t)) = (&health, state.next_try) {
            health = Health::Restarting {
                in_ms: t.saturating_duration_since(Instant::now()).as_millis() as u64,
            };
        }
        BackendStatus {
            name: self.name().to_owned(),
            health,
            restarts: state.restarts,
            last_error: state.last_error.clone(),
            up_for_secs: state.up_since.map(|t| t.elapsed().as_secs()),
            protocol_version: state.client.as_ref().map(|c| c.protocol_version().to_string()),
            sandboxed: self.spec.sandboxed(),
        }
    }

    /// Its lists, when it is up (a list it fails to give counts as empty, and is logged).
    pub(crate) async fn lists(&self) -> Option<OwnedLists> {
        let client = self.client()?;
        let name = self.name();
        let has = |cap| client.has_capability(cap);
        let tools = listed(name, "tools/list", has("tools"), client.tools());
        let prompts = listed(name, "prompts/list", has("prompts"), client.prompts());
        let resources = listed(name, "resources/list", has("resources"), client.resources());
        let templates = listed(
            name,
            "resources/templates/list",
            has("resources"),
            client.list_resource_templates(),
        );
        let (tools, prompts, resources, templates) =
            futures::future::join4(tools, prompts, resources, templates).await;
        Some(OwnedLists { tools, prompts, resources, templates })
    }
}

/// One of a backend's lists: empty when it lacks the capability or fails to give it (logged;
/// many servers with resources answer no templates, so that failure is only a debug line).
async fn listed<T: Default>(
    server: &str,
    method: &str,
    wanted: bool,
    list: impl std::future::Future<Output = crate::host::Result<T>>,
) -> T {
    if !wanted {
        return T::default();
    }
    list.await.unwrap_or_else(|e| {
        if method == "resources/templates/list" {
            tracing::debug!(server, "{method} failed: {e}");
        } else {
            tracing::warn!(server, "{method} failed: {e}");
        }
        T::default()
    })
}

/// Runs backend `index` for the gateway's life: start it (again, with back-off, while its
/// first start fails), then serve it while the host's supervision restarts it whenever it
/// goes away (docs/host.md, "Supervision"), until that gives up. `legacy`: the upstream
/// client speaks a revision before 2026-07-28.
pub(crate) async fn supervise(core: Arc<Core>, index: usize, legacy: bool) {
    let backend = core.backends[index].clone();
    // The server's own "restart" in the config, else the gateway's.
    let policy = (backend.spec.restart.clone()).unwrap_or_else(|| core.settings.restart.clone());
    let spec = backend.spec.clone().restart(policy.clone());
    let mut failures = 0u32;
    let mut first = true;
    loop {
        set(&backend, |s| s.health = Health::Starting);
        let started = Instant::now();
        match start(&core, &spec, legacy).await {
            Ok(client) => {
                tracing::info!(
                    server = backend.name(),
                    version = %client.protocol_version(),
                    "backend up in {} ms",
                    started.elapsed().as_millis()
                );
                let events = client.events();
                set_log_level(&core, &backend, &client).await;
                came_up(&core, &backend, &client);
                if std::mem::take(&mut first) {
                    core.settle();
                }
                let reason = forward_events(&core, index, &client, events).await;
                drop(client);
                tracing::error!(server = backend.name(), "backend stays down: {reason}");
                set(&backend, |s| {
                    s.health = Health::Stopped;
                    s.client = None;
                    s.up_since = None;
                    s.last_error = Some(reason);
                });
                core.invalidate();
                core.upstream.send(Out::ListsChanged);
                return;
            }
            Err(e) => {
                tracing::warn!(server = backend.name(), "backend failed to start: {e}");
                set(&backend, |s| s.last_error = Some(e.to_string()));
                if std::mem::take(&mut first) {
                    core.settle();
                }
            }
        }
        failures += 1;
        if policy.max_restarts.is_some_and(|max| failures > max) {
            tracing::error!(
                server = backend.name(),
                "backend failed {failures} times in a row: not restarted again"
            );
            set(&backend, |s| s.health = Health::Stopped);
            return;
        }
        let delay = policy.delay(failures);
        tracing::info!(
            server = backend.name(),
            "restarting in {} ms (restart {})",
            delay.as_millis(),
            failures
        );
        set(&backend, |s| {
            s.health = Health::Restarting { in_ms: delay.as_millis() as u64 };
            s.next_try = Some(Instant::now() + delay);
            s.restarts += 1;
        });
        tokio::time::sleep(delay).await;
    }
}

/// The upstream client's `logging/setLevel`, given to a backend that comes up (the host gives
/// it again after each restart).
async fn set_log_level(core: &Core, backend: &Backend, client: &Client) {
    let level = lock(&core.log_level).clone();
    if let Some(level) = level
        && (client.has_capability("logging") || client.protocol_version().is_modern())
        && let Err(e) = client.set_log_level(&level).await
    {
        tracing::info!(server = backend.name(), "logging/setLevel {level}: {e}");
    }
}

/// A backend is up (first start or restart): its tools join the lists.
fn came_up(core: &Core, backend: &Backend, client: &Client) {
    set(backend, |s| {
        s.health = Health::Up;
        s.client = Some(client.clone());
        s.up_since = Some(Instant::now());
    });
    core.invalidate();
    core.upstream.send(Out::ListsChanged);
}

/// Starts a backend in its era. For a legacy client, a backend whose config leaves the era
/// open speaks the `initialize` handshake, so that what it asks of the client (elicitation,
/// sampling, roots) goes the way that client takes it: a server written for both eras may
/// have no way to ask in 2026-07-28 (the Python SDK's tools that call `ctx.elicit` fail
/// with "no back-channel"). A backend that refuses the handshake (it speaks only
/// 2026-07-28) is started again with the probe, and its rounds are relayed as requests.
async fn start(core: &Core, spec: &ServerSpec, legacy: bool) -> crate::host::Result<Client> {
    if !legacy || spec.era.is_some() {
        return core.spawn(spec.clone()).await;
    }
    let mut first = spec.clone();
    first.era = Some(crate::protocol::Era::Legacy);
    match core.spawn(first).await {
        Err(e) if refused_handshake(&e) => {
            let why = e.request_error().map(ToString::to_string).unwrap_or_default();
            tracing::info!(
                server = %spec.name,
                "backend refused the initialize handshake ({why}): speaking 2026-07-28 to it"
            );
            core.spawn(spec.clone()).await
        }
        started => started,
    }
}

/// Whether a start failed because the server answered `initialize` with an error or with a
/// revision the handshake does not take (not because it crashed or stayed silent).
fn refused_handshake(e: &crate::host::Error) -> bool {
    use crate::protocol::RequestError;
    matches!(
        e.request_error(),
        Some(RequestError::Rpc(_) | RequestError::UnsupportedVersion { .. })
    ) && matches!(e, crate::host::Error::Handshake(_))
}

fn set(backend: &Backend, f: impl FnOnce(&mut State)) {
    f(&mut lock(&backend.state));
}

/// Forwards the backend's notifications upstream, and follows its restarts, until the host
/// stops restarting it; returns why.
async fn forward_events(
    core: &Core,
    index: usize,
    client: &Client,
    events: crate::host::EventStream,
) -> String {
    let name = client.name().to_owned();
    while let Ok(event) = events.recv().await {
        match event {
            ServerEvent::Notification(n) => match n.method.as_str() {
                "notifications/tools/list_changed"
                | "notifications/prompts/list_changed"
                | "notifications/resources/list_changed" => {
                    core.invalidate();
                    core.upstream.send(Out::ListsChanged);
                }
                "notifications/message" => {
                    let mut params = n.params.unwrap_or_else(|| json!({}));
                    let logger = match params.get("logger").and_then(Value::as_str) {
                        Some(l) => format!("{name}/{l}"),
                        None => name.clone(),
                    };
                    params["logger"] = json!(logger);
                    core.upstream.send(Out::Notify("notifications/message".into(), Some(params)));
                }
                other => tracing::debug!(server = %name, "notification {other} not forwarded"),
            },
            ServerEvent::ResourceUpdated { uri, .. } => {
                let catalog = core.catalog().await;
                let up = catalog.upstream_uri(index, &uri);
                core.upstream.send(Out::ResourceUpdated(up));
            }
            ServerEvent::Violation(v) => {
                tracing::debug!(server = %name, "protocol violation: {v}");
            }
            ServerEvent::Unresponsive { silent_for } => {
                tracing::warn!(server = %name, "silent for {} s", silent_for.as_secs());
            }
            ServerEvent::SandboxLimits { oom_kills, refused_forks } => {
                tracing::warn!(
                    server = %name,
                    "sandbox limits hit: {oom_kills} OOM kills, {refused_forks} refused forks"
                );
            }
            ServerEvent::Restarting { reason, attempt, delay } => {
                tracing::warn!(
                    server = %name,
                    "backend went away: {reason}; restarting in {} ms (attempt {attempt})",
                    delay.as_millis()
                );
                let backend = &core.backends[index];
                set(backend, |s| {
                    s.health = Health::Restarting { in_ms: delay.as_millis() as u64 };
                    s.next_try = Some(Instant::now() + delay);
                    s.restarts += 1;
                    s.client = None;
                    s.up_since = None;
                    s.last_error = Some(reason);
                });
                core.invalidate();
                core.upstream.send(Out::ListsChanged);
            }
            ServerEvent::Restarted { restarts, version } => {
                tracing::info!(server = %name, %version, "backend back up (restart {restarts})");
                came_up(core, &core.backends[index], client);
            }
            ServerEvent::Closed(reason) => return reason.to_string(),
        }
    }
    "its event stream ended".to_owned()
}

/// Seconds since the Unix epoch, for the status report.
pub(crate) fn unix_now() -> u64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}
