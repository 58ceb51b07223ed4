//! Supervision of a server started with [`ServerSpec::restart`](super::ServerSpec::restart)
//! (docs/host.md, "Supervision"): when its connection ends (exit, crash, closed stdout, lost
//! HTTP connection) it is started again after an exponential back-off, the handshake runs
//! again, what the application had set is given again (roots, log level, resource
//! subscriptions), and its lists are announced as changed. The [`Client`] stays the same: the
//! new connection is swapped in. Requests in flight fail with [`Error::Restarted`] (never
//! re-sent: a `tools/call` may have taken effect); while it is down, requests fail at once
//! with [`Error::Unavailable`]. After `max_restarts` failures in a row it stays down and the
//! event stream ends with [`CloseReason::GaveUp`].
//!
//! The restart runs on a short-lived thread of its own (the back-off sleep and the
//! handshake), started when the connection ends: the library needs no async runtime.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError, Weak};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::json;

use crate::jsonrpc::Notification;
use crate::protocol::{CloseReason, Root};

use super::client::{Cell, Client, block_on};
use super::events::{CloseHook, EventSink, EventStream, ServerEvent};
use super::launcher::Launcher;
use super::{Error, ServerSpec};

/// A server that stayed up this long starts its back-off again from the first delay.
pub const STABLE_AFTER: Duration = Duration::from_secs(60);

/// How a server that goes away is restarted: after `initialDelayMs`, doubled after each
/// failure in a row up to `maxDelayMs`; the count of failures starts again once the server
/// stayed up for a minute; after `maxRestarts` failures in a row it stays down (absent: never
/// given up on). The config's key is `"restart"` (a server entry's, or the gateway's).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct RestartPolicy {
    /// The first delay.
    pub initial_delay_ms: u64,
    /// The longest delay.
    pub max_delay_ms: u64,
    /// Restarts in a row before giving up (`None`: never give up).
    pub max_restarts: Option<u32>,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        RestartPolicy { initial_delay_ms: 500, max_delay_ms: 30_000, max_restarts: None }
    }
}

impl RestartPolicy {
    /// The delay before restart number `n` (1-based) of a run of failures.
    pub fn delay(&self, n: u32) -> Duration {
        let factor = 1u64 << n.saturating_sub(1).min(20);
        Duration::from_millis(self.initial_delay_ms.saturating_mul(factor).min(self.max_delay_ms))
    }
}

/// Where a supervised server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerHealth {
    /// Serving.
    Up,
    /// Gone; started again at `next_try`.
    Restarting {
        /// When the next start is tried.
        next_try: Instant,
    },
    /// Given up on (too many failures in a row), or shut down.
    Stopped,
}

/// What [`Client::supervision_status`] reports.
#[derive(Debug, Clone)]
pub struct SupervisionStatus {
    /// Where it is.
    pub health: ServerHealth,
    /// Restarts so far (successful starts after the first).
    pub restarts: u32,
    /// Failures in a row (0 while it has been up for a while).
    pub failures: u32,
    /// Why it last went away, or why its last start failed.
    pub last_error: Option<String>,
    /// Since when the current connection is up.
    pub up_since: Option<Instant>,
}

#[derive(Debug)]
struct State {
    status: SupervisionStatus,
    /// Which connection is the current one (its close hook carries the same number).
    generation: u64,
}

/// What the application set on the server, given again after a restart.
#[derive(Debug, Default)]
struct Remembered {
    roots: Option<Vec<Root>>,
    log_level: Option<String>,
    subscriptions: BTreeSet<String>,
}

/// One supervised server's supervisor, shared by its [`Client`]'s clones.
pub(crate) struct Supervision {
    policy: RestartPolicy,
    spec: ServerSpec,
    launcher: Weak<Launcher>,
    /// Into the client's event stream (for the supervisor's own events).
    sink: EventSink,
    stream: EventStream,
    client: OnceLock<Weak<Cell>>,
    state: Mutex<State>,
    /// Woken by [`stop`](Self::stop) during a back-off.
    wake: Condvar,
    stopping: AtomicBool,
    remembered: Mutex<Remembered>,
    me: Weak<Supervision>,
}

impl std::fmt::Debug for Supervision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supervision").field("server", &self.spec.name).finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Supervision {
    pub(super) fn new(
        policy: RestartPolicy,
        spec: ServerSpec,
        launcher: &Arc<Launcher>,
        sink: EventSink,
        stream: &EventStream,
    ) -> Arc<Supervision> {
        let status = SupervisionStatus {
            health: ServerHealth::Up,
            restarts: 0,
            failures: 0,
            last_error: None,
            up_since: Some(Instant::now()),
        };
        Arc::new_cyclic(|me| Supervision {
            policy,
            spec,
            launcher: Arc::downgrade(launcher),
            sink,
            stream: stream.clone(),
            client: OnceLock::new(),
            state: Mutex::new(State { status, generation: 0 }),
            wake: Condvar::new(),
            stopping: AtomicBool::new(false),
            remembered: Mutex::default(),
            me: me.clone(),
        })
    }

    /// The client it supervises (once its first start succeeded).
    pub(crate) fn attach(&self, client: &Client) {
        let _ = self.client.set(client.downgrade());
        lock(&self.state).status.up_since = Some(Instant::now());
    }

    /// The close hook of connection `generation`: its end starts a restart when it is the
    /// current connection and the server is up; the end of an older one, or of a start that
    /// failed, is the supervisor's own business (never the application's).
    pub(crate) fn hook(&self, generation: u64) -> CloseHook {
        let me = self.me.clone();
        Arc::new(move |reason: &CloseReason| match me.upgrade() {
            Some(s) => s.closed(generation, reason),
            None => false,
        })
    }

    /// Stops supervising: the server is shut down by the application (or its client dropped),
    /// and the stream ends as for any server.
    pub(crate) fn stop(&self) {
        self.stopping.store(true, Ordering::Release);
        let _state = lock(&self.state);
        self.wake.notify_all();
    }

    /// Whether it should still be restarted: not stopped, and its host still there.
    fn wanted(&self) -> bool {
        !self.stopping.load(Ordering::Acquire)
            && self.launcher.upgrade().is_some_and(|l| !l.closed())
    }

    /// Its status now.
    pub(crate) fn status(&self) -> SupervisionStatus {
        lock(&self.state).status.clone()
    }

    /// The error a request gets while the server is down (its last connection ended with
    /// `reason`).
    pub(crate) fn unavailable(&self, reason: &CloseReason) -> Error {
        let status = self.status();
        let last = status.last_error.unwrap_or_else(|| reason.to_string());
        let (why, retry_after) = match status.health {
            ServerHealth::Restarting { next_try } => {
                let left = next_try.saturating_duration_since(Instant::now());
                let why = format!(
                    "{last}; it is being restarted (attempt {}, next start in {} ms): retry then",
                    status.failures,
                    left.as_millis()
                );
                (why, Some(left))
            }
            // Its end is being handled on the connection's thread right now.
            ServerHealth::Up => {
                let next = self.policy.delay(status.failures + 1);
                let why = format!(
                    "{reason}; it is being restarted (next start in about {} ms): retry then",
                    next.as_millis()
                );
                (why, Some(next))
            }
            ServerHealth::Stopped => {
                (format!("{last}; it is not restarted again: fix that and start it anew"), None)
            }
        };
        Error::Unavailable { server: self.spec.name.as_str().into(), why, retry_after }
    }

    /// Remembers roots the application set, to give them again after a restart.
    pub(crate) fn remember_roots(&self, roots: &[Root]) {
        lock(&self.remembered).roots = Some(roots.to_vec());
    }

    /// Remembers the log level the application set.
    pub(crate) fn remember_log_level(&self, level: &str) {
        lock(&self.remembered).log_level = Some(level.to_owned());
    }

    /// Remembers a resource subscription (`on`) or its end.
    pub(crate) fn remember_subscription(&self, uri: &str, on: bool) {
        let mut remembered = lock(&self.remembered);
        if on {
            remembered.subscriptions.insert(uri.to_owned());
        } else {
            remembered.subscriptions.remove(uri);
        }
    }

    /// Connection `generation` ended; `true` when the supervisor takes it (see [`hook`]).
    ///
    /// [`hook`]: Self::hook
    fn closed(&self, generation: u64, reason: &CloseReason) -> bool {
        if !self.wanted() || self.client.get().is_none() {
            return false;
        }
        let mut state = lock(&self.state);
        if state.generation != generation || state.status.health != ServerHealth::Up {
            return true;
        }
        // Marked down now, on the connection's thread, so that no request is sent into the
        // closed connection meanwhile.
        state.status.health = ServerHealth::Restarting { next_try: Instant::now() };
        drop(state);
        let Some(me) = self.me.upgrade() else { return false };
        let reason = reason.to_string();
        let spawned = std::thread::Builder::new()
            .name("ringmcp-restart".into())
            .spawn(move || me.restart(reason));
        if let Err(e) = spawned {
            tracing::error!(server = %self.spec.name, "no thread to restart it on ({e}): it stays down");
            lock(&self.state).status.health = ServerHealth::Stopped;
            return false;
        }
        true
    }

    /// Restarts the server, with back-off, until it is up again, given up on, or no longer
    /// wanted.
    fn restart(&self, mut reason: String) {
        let name = self.spec.name.as_str();
        loop {
            let Some((attempt, delay)) = self.fail(&reason) else { return };
            tracing::warn!(
                server = name,
                "went away ({reason}): restarting in {} ms (attempt {attempt})",
                delay.as_millis()
            );
            let event = ServerEvent::Restarting { reason: reason.clone(), attempt, delay };
            let _ = self.sink.try_send(event);
            if !self.back_off(delay) {
                return;
            }
            let Some(cell) = self.client.get().and_then(Weak::upgrade) else { return };
            let Some(launcher) = self.launcher.upgrade().filter(|l| !l.closed()) else {
                lock(&self.state).status.health = ServerHealth::Stopped;
                let _ = self.sink.try_send(ServerEvent::Closed(CloseReason::Shutdown));
                return;
            };
            let generation = lock(&self.state).generation + 1;
            let events = self.sink.sibling(Some(self.hook(generation)));
            match block_on(launcher.connect(self.spec.clone(), events, self.stream.clone())) {
                Ok(inner) => {
                    let version = inner.details.version;
                    let client = Client::from_cell(cell);
                    client.replace(inner);
                    let restarts = {
                        let mut state = lock(&self.state);
                        state.generation = generation;
                        let s = &mut state.status;
                        s.health = ServerHealth::Up;
                        s.up_since = Some(Instant::now());
                        s.restarts += 1;
                        s.restarts
                    };
                    tracing::info!(server = name, %version, "restarted (restart {restarts})");
                    self.give_again(&client);
                    let _ = self.sink.try_send(ServerEvent::Restarted { restarts, version });
                    for list in ["tools", "prompts", "resources"] {
                        let method = format!("notifications/{list}/list_changed");
                        let n = Notification { method, params: None };
                        let _ = self.sink.try_send(ServerEvent::Notification(n));
                    }
                    // It may have gone away again before it was the current connection (its
                    // hook then passed): that end counts now.
                    let gone = client.inner().queue.closed().cloned();
                    drop(client);
                    if let Some(reason) = gone {
                        self.closed(generation, &reason);
                    }
                    return;
                }
                Err(e) => reason = e.to_string(),
            }
        }
    }

    /// Counts a failure; the attempt number and the delay before the next start, or `None`
    /// when it is given up on (the stream then ends) or no longer wanted.
    fn fail(&self, reason: &str) -> Option<(u32, Duration)> {
        if !self.wanted() {
            lock(&self.state).status.health = ServerHealth::Stopped;
            return None;
        }
        let mut state = lock(&self.state);
        let s = &mut state.status;
        if s.up_since.take().is_some_and(|t| t.elapsed() >= STABLE_AFTER) {
            s.failures = 0;
        }
        s.failures += 1;
        s.last_error = Some(reason.to_owned());
        if self.policy.max_restarts.is_some_and(|max| s.failures > max) {
            s.health = ServerHealth::Stopped;
            let failures = s.failures;
            drop(state);
            tracing::error!(
                server = %self.spec.name,
                "failed {failures} times in a row: not restarted again ({reason})"
            );
            let gave_up = CloseReason::GaveUp { failures, last: reason.to_owned() };
            let _ = self.sink.try_send(ServerEvent::Closed(gave_up));
            return None;
        }
        let delay = self.policy.delay(s.failures);
        s.health = ServerHealth::Restarting { next_try: Instant::now() + delay };
        Some((s.failures, delay))
    }

    /// Waits out the back-off; `false` when the supervision stopped meanwhile.
    fn back_off(&self, delay: Duration) -> bool {
        let deadline = Instant::now() + delay;
        let mut state = lock(&self.state);
        while !self.stopping.load(Ordering::Acquire) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return true;
            }
            state = self.wake.wait_timeout(state, left).unwrap_or_else(PoisonError::into_inner).0;
        }
        false
    }

    /// Gives the new connection what the application had set on the old one.
    fn give_again(&self, client: &Client) {
        let Remembered { roots, log_level, subscriptions } = {
            let r = lock(&self.remembered);
            Remembered {
                roots: r.roots.clone(),
                log_level: r.log_level.clone(),
                subscriptions: r.subscriptions.clone(),
            }
        };
        let name = self.spec.name.as_str();
        if let Some(roots) = roots
            && let Err(e) = client.set_roots(roots)
        {
            tracing::warn!(server = name, "roots not given again after the restart: {e}");
        }
        if let Some(level) = log_level
            && let Err(e) = block_on(client.set_log_level(&level))
        {
            tracing::warn!(server = name, "log level not set again after the restart: {e}");
        }
        for uri in subscriptions {
            if let Err(e) = block_on(client.subscribe_resource(&uri)) {
                let params = json!({"uri": uri});
                tracing::warn!(server = name, %params, "not subscribed again after the restart: {e}");
            }
        }
    }
}
