//! The host's side of sandboxed servers' network: one egress proxy per [`Host`](super::Host),
//! started when the first server that asks for network starts, fed every such server's
//! channel, its connections written to the audit trail (docs/egress.md).
//!
//! Fail closed: when the proxy cannot start, a `strict` server that asked for network is not
//! started, and a `standard` one starts with no network and a warning; never with more
//! network than it asked for.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::audit::AuditLog;
use crate::egress::{EgressEvent, Proxy, ProxyConfig};
use crate::policy::egress::Network;
use crate::sandbox::runner::Runner;
use crate::sandbox::{self, Launch, Profile, SpawnError, Spawned};

/// The proxy, once started.
pub(crate) struct EgressSlot {
    /// `None` only while dropping.
    config: Option<ProxyConfig>,
    proxy: Mutex<Option<Arc<Proxy>>>,
    /// Ends when the audit trail's writer thread has written everything it was given.
    writer: Mutex<Option<std::sync::mpsc::Receiver<()>>>,
}

/// Egress records waiting for the audit writer; past this, records are counted, not kept,
/// and the count is written as an `egress-dropped` record.
const AUDIT_QUEUE: usize = 4096;

impl EgressSlot {
    /// A slot whose proxy uses `config` and also writes each connection to `audit`. The
    /// writes happen on a thread of their own: an audit trail that syncs every record must not
    /// stall the proxy, which serves every server.
    pub(crate) fn new(config: Option<ProxyConfig>, audit: Option<Arc<AuditLog>>) -> EgressSlot {
        let mut config = config.unwrap_or_default();
        let mut writer = None;
        if let Some(audit) = audit {
            let (tx, rx) =
                std::sync::mpsc::sync_channel::<serde_json::Map<String, Value>>(AUDIT_QUEUE);
            let dropped = Arc::new(AtomicU64::new(0));
            let lost = dropped.clone();
            let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
            writer = std::thread::Builder::new()
                .name("ringmcp-egress-audit".into())
                .spawn(move || {
                    for record in rx {
                        // A failed write is logged by the trail itself; the connection has
                        // already been decided.
                        let _ = audit.record(record);
                        // Relaxed: a counter; the writer only needs to see it eventually.
                        let n = lost.swap(0, Ordering::Relaxed);
                        if n > 0 {
                            let mut r = serde_json::Map::new();
                            r.insert("type".into(), "egress-dropped".into());
                            r.insert("count".into(), n.into());
                            let _ = audit.record(r);
                        }
                    }
                    drop(done_tx);
                })
                .ok()
                .map(|_| done_rx);
            let user = config.sink.take();
            config.sink = Some(Arc::new(move |event: &EgressEvent| {
                if let EgressEvent::Connection(record) = event
                    && let Ok(Value::Object(mut map)) = serde_json::to_value(record)
                {
                    map.insert("type".into(), "egress".into());
                    if tx.try_send(map).is_err() {
                        dropped.fetch_add(1, Ordering::Relaxed);
                    }
                }
                if let Some(user) = &user {
                    user(event);
                }
            }));
        }
        EgressSlot { config: Some(config), proxy: Mutex::new(None), writer: Mutex::new(writer) }
    }

    fn proxy(&self) -> std::io::Result<Arc<Proxy>> {
        let mut slot = self.proxy.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(p) = slot.as_ref() {
            return Ok(p.clone());
        }
        let config = self.config.clone().unwrap_or_default();
        let p = Arc::new(Proxy::start(config)?);
        *slot = Some(p.clone());
        Ok(p)
    }

    /// Spawns `launch` for the server `name`, its network (if any) served by the proxy.
    pub(crate) fn spawn(&self, name: &str, launch: &Launch) -> Result<Spawned, SpawnError> {
        let Some(config) = launch.sandbox.as_ref().filter(|s| s.profile != Profile::Off) else {
            return sandbox::spawn(launch);
        };
        if let Some(runner) = Runner::detect(&launch.program, &launch.args)
            && !runner.reachable(&config.network)
        {
            return Err(SpawnError::RegistryUnreachable { advice: runner.advice() });
        }
        if !config.network.is_on() {
            return sandbox::spawn(launch);
        }
        let proxy = match self.proxy() {
            Ok(p) => p,
            Err(e) if config.profile == Profile::Strict => {
                return Err(SpawnError::EgressUnavailable { reason: e.to_string() });
            }
            Err(e) => {
                tracing::warn!(
                    server = name,
                    "server {name:?}: the egress proxy could not start ({e}); starting it with no network"
                );
                let mut launch = launch.clone();
                if let Some(s) = launch.sandbox.as_mut() {
                    s.network = Network::Off;
                }
                return sandbox::spawn(&launch);
            }
        };
        let mut spawned = sandbox::spawn(launch)?;
        if let Some(channel) = spawned.egress.take()
            && let Err(e) = proxy.attach(name, &config.network, channel)
        {
            // The channel is closed: every connection the server opens is reset.
            tracing::warn!(
                server = name,
                "server {name:?}: its network could not be attached to the egress proxy ({e}): its connections will be reset"
            );
        }
        Ok(spawned)
    }
}

impl Drop for EgressSlot {
    /// Stops the proxy, then lets the audit writer finish what it was given: every
    /// connection's record is in the trail once the host is dropped.
    fn drop(&mut self) {
        drop(self.proxy.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take());
        drop(self.config.take());
        // Bounded: a record still held elsewhere must not hang the host's drop.
        let writer = self.writer.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(done) = writer.take() {
            let _ = done.recv_timeout(std::time::Duration::from_secs(5));
        }
    }
}
