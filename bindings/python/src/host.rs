//! `Host`: the engine's host (one io_uring reactor thread, many servers), its options, and its
//! router.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use ringmcp::host::audit::AuditLog;
use ringmcp::host::pins::{PinMode, PinStore};
use ringmcp::host::{self as engine, PolicySettings, SpillConfig};
use ringmcp::policy::{AuditConfig, GlobalPolicy};
use ringmcp::protocol::{Era, Implementation, Root};
use ringmcp::spill::store::StoreConfig;
use serde_json::Value;

use crate::callbacks::{self, Callback, Handler, PyApprover};
use crate::client::Client;
use crate::errors::{self, to_py};
use crate::json::{self, Json, Ser};
use crate::spec::ServerSpec;
use crate::wait::run;

/// What `Host(...)` and `Config.host(...)` take.
#[derive(Default)]
pub(crate) struct HostOptions {
    request_timeout: Option<f64>,
    max_frame: Option<usize>,
    max_pending: Option<usize>,
    max_request_bytes: Option<usize>,
    direct_write: Option<bool>,
    spill: Option<bool>,
    spill_threshold: Option<usize>,
    spill_dir: Option<PathBuf>,
    era: Option<Era>,
    roots: Option<Vec<PathBuf>>,
    client_info: Option<Implementation>,
    policy: Option<Value>,
    approver: Option<Py<PyAny>>,
    approval_timeout: Option<f64>,
    pub(crate) audit: Option<Value>,
    pins: Option<PathBuf>,
    pin_mode: Option<String>,
    sampling: Option<Py<PyAny>>,
    elicitation: Option<Py<PyAny>>,
    /// A config file's top-level policy (`Config.host`).
    pub(crate) config_policy: Option<GlobalPolicy>,
    /// A config file's top-level audit (`Config.host`).
    pub(crate) audit_config: Option<AuditConfig>,
}

const OPTIONS: &[&str] = &[
    "request_timeout",
    "max_frame",
    "max_pending",
    "max_request_bytes",
    "direct_write",
    "spill",
    "spill_threshold",
    "spill_dir",
    "era",
    "roots",
    "client_info",
    "policy",
    "approver",
    "approval_timeout",
    "audit",
    "pins",
    "pin_mode",
    "sampling",
    "elicitation",
];

impl HostOptions {
    /// Reads keyword options; an unknown one is an error that lists them all.
    pub(crate) fn from_kwargs(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut o = HostOptions::default();
        let Some(kwargs) = kwargs else { return Ok(o) };
        for (key, value) in kwargs.iter() {
            let key: String = key.extract()?;
            if value.is_none() {
                continue;
            }
            let v = &value;
            match key.as_str() {
                "request_timeout" => o.request_timeout = Some(v.extract()?),
                "max_frame" => o.max_frame = Some(v.extract()?),
                "max_pending" => o.max_pending = Some(v.extract()?),
                "max_request_bytes" => o.max_request_bytes = Some(v.extract()?),
                "direct_write" => o.direct_write = Some(v.extract()?),
                "spill" => o.spill = Some(v.extract()?),
                "spill_threshold" => o.spill_threshold = Some(v.extract()?),
                "spill_dir" => o.spill_dir = Some(v.extract()?),
                "era" => {
                    o.era = Some(
                        serde_json::from_value(json::value(v)?)
                            .map_err(|e| errors::config(format!("era: {e}")))?,
                    );
                }
                "roots" => o.roots = Some(v.extract()?),
                "client_info" => {
                    o.client_info = Some(
                        serde_json::from_value(json::value(v)?)
                            .map_err(|e| errors::config(format!("client_info: {e}")))?,
                    );
                }
                "policy" => o.policy = Some(json::value(v)?),
                "approver" => o.approver = Some(v.clone().unbind()),
                "approval_timeout" => o.approval_timeout = Some(v.extract()?),
                "audit" => {
                    o.audit = Some(match v.extract::<PathBuf>() {
                        Ok(path) => serde_json::json!({ "path": path }),
                        Err(_) => json::value(v)?,
                    });
                }
                "pins" => o.pins = Some(v.extract()?),
                "pin_mode" => o.pin_mode = Some(v.extract()?),
                "sampling" => o.sampling = Some(v.clone().unbind()),
                "elicitation" => o.elicitation = Some(v.clone().unbind()),
                other => {
                    return Err(errors::invalid(format!(
                        "Host() got an unknown option {other:?} (it takes: {})",
                        OPTIONS.join(", ")
                    )));
                }
            }
        }
        Ok(o)
    }

    /// The policy gate's settings, when the options ask for a policy (any of `policy`,
    /// `approver`, `audit`, `pins`, or a config's top-level policy).
    fn policy(
        &mut self,
        event_loop: Option<&Py<PyAny>>,
        py: Python<'_>,
    ) -> PyResult<Option<PolicySettings>> {
        let asked = !matches!(self.policy, None | Some(Value::Bool(false)))
            || self.approver.is_some()
            || self.audit.is_some()
            || self.audit_config.is_some()
            || self.pins.is_some()
            || self.config_policy.is_some();
        if !asked {
            return Ok(None);
        }
        let mut settings = PolicySettings::default();
        if let Some(global) = self.config_policy.take() {
            settings.global = global;
        }
        match self.policy.take() {
            None | Some(Value::Bool(_)) => {}
            Some(global) => {
                settings.global = serde_json::from_value(global)
                    .map_err(|e| errors::config(format!("policy: {e}")))?;
            }
        }
        if let Some(approver) = self.approver.take() {
            let cb = Callback::new(approver, event_loop.map(|l| l.clone_ref(py)));
            settings.approver = Some(Arc::new(PyApprover(cb)));
        }
        if let Some(t) = self.approval_timeout {
            settings.approval_timeout = secs(t)?;
        }
        let audit = match self.audit.take() {
            Some(v) => Some(
                serde_json::from_value::<AuditConfig>(v)
                    .map_err(|e| errors::config(format!("audit: {e}")))?,
            ),
            None => self.audit_config.take(),
        };
        if let Some(audit) = audit {
            let log = AuditLog::open(audit).map_err(|e| errors::config(e.to_string()))?;
            settings.audit = Some(Arc::new(log));
        }
        if let Some(path) = self.pins.take() {
            let mode = match self.pin_mode.as_deref() {
                None | Some("tofu") => PinMode::TrustOnFirstUse,
                Some("strict") => PinMode::Strict,
                Some(other) => {
                    return Err(errors::invalid(format!(
                        "pin_mode {other:?}: one of \"tofu\", \"strict\""
                    )));
                }
            };
            let store = PinStore::open(&path, mode).map_err(|e| errors::config(e.to_string()))?;
            settings.pins = Some(Arc::new(store));
        }
        Ok(Some(settings))
    }
}

/// Seconds as a duration (a negative or non-finite number is the caller's mistake).
pub(crate) fn secs(s: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(s)
        .map_err(|_| errors::invalid(format!("{s} is not a duration in seconds")))
}

/// Runs MCP servers: one io_uring reactor thread drives every server spawned from it.
#[pyclass(module = "ringmcp._native", name = "Host", frozen)]
pub(crate) struct Host {
    host: Arc<Cell>,
}

/// A host until it is closed.
type Cell = Mutex<Option<Arc<engine::Host>>>;

/// Every host made and not yet dropped, for [`close_all`].
static LIVE: Mutex<Vec<Weak<Cell>>> = Mutex::new(Vec::new());

/// Closes every host still open (`atexit`): their servers are shut down before the
/// interpreter exits, which would otherwise end the reactor threads mid-shutdown.
#[pyfunction(name = "_close_all")]
pub(crate) fn close_all(py: Python<'_>) {
    let live: Vec<_> = std::mem::take(&mut *LIVE.lock().unwrap_or_else(PoisonError::into_inner));
    let hosts: Vec<_> = live
        .iter()
        .filter_map(Weak::upgrade)
        .filter_map(|cell| cell.lock().unwrap_or_else(PoisonError::into_inner).take())
        .collect();
    py.detach(move || drop(hosts));
}

impl Host {
    pub(crate) fn build(py: Python<'_>, mut o: HostOptions) -> PyResult<Host> {
        let event_loop = callbacks::current_loop(py);
        let mut b = engine::Host::builder();
        if let Some(t) = o.request_timeout {
            b = b.request_timeout(secs(t)?);
        }
        if let Some(n) = o.max_frame {
            b = b.max_frame(n);
        }
        if let Some(n) = o.max_pending {
            b = b.max_pending(n);
        }
        if let Some(n) = o.max_request_bytes {
            b = b.max_request_bytes(n);
        }
        // Off unless asked: an asyncio caller goes on with its loop after sending, the pattern
        // that measured slower with it (docs/host.md, "The direct write").
        b = b.direct_write(o.direct_write.unwrap_or(false));
        if o.spill == Some(false) {
            b = b.spill(None);
        } else if o.spill_threshold.is_some() || o.spill_dir.is_some() {
            let mut config = SpillConfig::default();
            if let Some(t) = o.spill_threshold {
                config.line_threshold = t;
            }
            if let Some(dir) = o.spill_dir.take() {
                config.store = StoreConfig::new().base_dir(dir);
            }
            b = b.spill(Some(config));
        }
        if let Some(era) = o.era {
            b = b.era(era);
        }
        if let Some(roots) = o.roots.take() {
            let roots = roots
                .into_iter()
                .map(|p| {
                    let p = std::path::absolute(&p).unwrap_or(p);
                    Root { uri: format!("file://{}", p.display()), name: None }
                })
                .collect();
            b = b.roots(roots);
        }
        if let Some(info) = o.client_info.take() {
            b = b.client_info(info);
        }
        if o.sampling.is_some() || o.elicitation.is_some() {
            let cb = |f: Py<PyAny>| Callback::new(f, event_loop.as_ref().map(|l| l.clone_ref(py)));
            let handler = Handler {
                sampling: o.sampling.take().map(cb),
                elicitation: o.elicitation.take().map(cb),
            };
            b = b.handler(Arc::new(handler));
        }
        if let Some(settings) = o.policy(event_loop.as_ref(), py)? {
            b = b.policy(settings);
        }
        let host = py.detach(|| b.build()).map_err(to_py)?;
        let cell = Arc::new(Mutex::new(Some(Arc::new(host))));
        let mut live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
        live.retain(|w| w.strong_count() > 0);
        live.push(Arc::downgrade(&cell));
        Ok(Host { host: cell })
    }

    fn get(&self) -> PyResult<Arc<engine::Host>> {
        self.host
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .ok_or_else(errors::closed_host)
    }
}

#[pymethods]
impl Host {
    #[new]
    #[pyo3(signature = (**options))]
    fn new(py: Python<'_>, options: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        Host::build(py, HostOptions::from_kwargs(options)?)
    }

    /// Starts a server and completes its handshake (an awaitable of its `Client`).
    fn spawn<'py>(&self, py: Python<'py>, spec: &ServerSpec) -> PyResult<Bound<'py, PyAny>> {
        let fut = self.get()?.spawn(spec.spec.clone());
        run(py, false, async move { fut.await.map(Client::new).map_err(to_py) })
    }

    /// Blocking `spawn`.
    fn spawn_blocking<'py>(
        &self,
        py: Python<'py>,
        spec: &ServerSpec,
    ) -> PyResult<Bound<'py, PyAny>> {
        let fut = self.get()?.spawn(spec.spec.clone());
        run(py, true, async move { fut.await.map(Client::new).map_err(to_py) })
    }

    /// A tool router over every live server of this host.
    fn router(&self, py: Python<'_>) -> PyResult<Router> {
        let host = self.get()?;
        Ok(Router { router: Arc::new(py.detach(|| host.router())) })
    }

    /// What tainted the session (untrusted content read), if anything has: `server`, `tool`,
    /// `why` and the content's `digest`.
    fn taint(&self) -> PyResult<Option<Json>> {
        Ok(self.get()?.taint().map(|t| {
            Json(serde_json::json!({
                "server": t.server, "tool": t.tool, "why": t.why, "digest": t.digest,
            }))
        }))
    }

    /// Starts the session afresh: untrusted content read so far no longer counts.
    fn clear_taint(&self) -> PyResult<()> {
        self.get()?.clear_taint();
        Ok(())
    }

    /// Shuts every server down and stops the reactor (a no-op when closed already).
    fn close(&self, py: Python<'_>) {
        let host = self.host.lock().unwrap_or_else(PoisonError::into_inner).take();
        // Up to ~4 s for a server that ignores stdin EOF and SIGTERM: other threads run.
        py.detach(move || drop(host));
    }

    #[getter]
    fn closed(&self) -> bool {
        self.host.lock().unwrap_or_else(PoisonError::into_inner).is_none()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) {
        self.close(py);
    }

    fn __aenter__<'py>(slf: Py<Self>, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        crate::aio::spawn(py, async move { Ok(slf) })
    }

    #[pyo3(signature = (*_exc))]
    fn __aexit__<'py>(
        &self,
        py: Python<'py>,
        _exc: &Bound<'py, pyo3::types::PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let host = self.host.lock().unwrap_or_else(PoisonError::into_inner).take();
        crate::aio::spawn(py, async move {
            if let Some(host) = host {
                tokio::task::spawn_blocking(move || drop(host))
                    .await
                    .map_err(|e| errors::invalid(format!("closing the host: {e}")))?;
            }
            Ok(crate::json::Unit)
        })
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let host = self.host.lock().unwrap_or_else(PoisonError::into_inner).take();
        // Dropped by the garbage collector, perhaps with the GIL held: the shutdown (which may
        // wait on servers) runs on a thread of its own.
        if let Some(host) = host {
            let _ =
                std::thread::Builder::new().name("ringmcp-close".into()).spawn(move || drop(host));
        }
    }
}

/// Semantic tool routing over every live server of a host.
#[pyclass(module = "ringmcp._native", name = "Router", frozen)]
pub(crate) struct Router {
    router: Arc<engine::router::HostRouter>,
}

#[pymethods]
impl Router {
    /// The `k` tools best fitting `query` across every live server (an awaitable).
    #[pyo3(signature = (query, k = 5))]
    fn route<'py>(&self, py: Python<'py>, query: String, k: usize) -> PyResult<Bound<'py, PyAny>> {
        let router = self.router.clone();
        run(py, false, async move { router.route(&query, k).await.map(Ser).map_err(to_py) })
    }

    /// Blocking `route`.
    #[pyo3(signature = (query, k = 5))]
    fn route_blocking<'py>(
        &self,
        py: Python<'py>,
        query: String,
        k: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let router = self.router.clone();
        run(py, true, async move { router.route(&query, k).await.map(Ser).map_err(to_py) })
    }

    /// The embedder in use (`None`: keywords only).
    #[getter]
    fn embedder(&self) -> Option<String> {
        self.router.embedder()
    }
}
