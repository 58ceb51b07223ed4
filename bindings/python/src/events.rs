//! `EventStream`: a server's notifications, protocol violations and end, as an async iterator
//! (or a blocking one).

use std::time::Duration;

use pyo3::exceptions::{PyStopAsyncIteration, PyStopIteration};
use pyo3::prelude::*;
use ringmcp::host::ServerEvent;
use serde_json::{Value, json};

use crate::host::secs;
use crate::json::Json;
use crate::wait::wait;

/// A server's events (all clones of a client share one stream: each event goes to one reader).
#[pyclass(module = "ringmcp._native", name = "EventStream", frozen)]
pub(crate) struct EventStream {
    rx: ringmcp::host::EventStream,
}

impl EventStream {
    pub(crate) fn new(rx: ringmcp::host::EventStream) -> Self {
        EventStream { rx }
    }
}

/// An event as a dict with a `"type"`.
fn event(e: ServerEvent) -> Value {
    match e {
        ServerEvent::Notification(n) => {
            json!({"type": "notification", "method": n.method, "params": n.params})
        }
        ServerEvent::ResourceUpdated { uri, seq } => {
            json!({"type": "resource_updated", "uri": uri, "seq": seq})
        }
        ServerEvent::SandboxLimits { oom_kills, refused_forks } => {
            json!({"type": "sandbox_limits", "oom_kills": oom_kills, "refused_forks": refused_forks})
        }
        ServerEvent::Violation(v) => json!({"type": "violation", "message": v.to_string()}),
        ServerEvent::Unresponsive { silent_for } => {
            json!({"type": "unresponsive", "silent_for": silent_for.as_secs_f64()})
        }
        ServerEvent::Restarting { reason, attempt, delay } => json!({
            "type": "restarting", "reason": reason, "attempt": attempt, "delay": delay.as_secs_f64()
        }),
        ServerEvent::Restarted { restarts, version } => {
            json!({"type": "restarted", "restarts": restarts, "version": version.as_str()})
        }
        ServerEvent::Closed(reason) => json!({"type": "closed", "reason": reason.to_string()}),
        other => json!({"type": "other", "debug": format!("{other:?}")}),
    }
}

#[pymethods]
impl EventStream {
    fn __aiter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __anext__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let rx = self.rx.clone();
        crate::aio::spawn(py, async move {
            match rx.recv().await {
                Ok(e) => Ok(Json(event(e))),
                Err(_) => Err(PyStopAsyncIteration::new_err(())),
            }
        })
    }

    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Json> {
        match wait(py, self.rx.recv())? {
            Ok(e) => Ok(Json(event(e))),
            Err(_) => Err(PyStopIteration::new_err(())),
        }
    }

    /// The next event, blocking up to `timeout` seconds (`None` on timeout or at the end).
    #[pyo3(signature = (timeout = None))]
    fn recv(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Option<Json>> {
        let recv = self.rx.recv();
        let got = match timeout.map(secs).transpose()? {
            None => wait(py, recv)?.ok(),
            Some(t) => {
                let delay = futures_timer::Delay::new(t.max(Duration::ZERO));
                match wait(py, futures::future::select(Box::pin(recv), delay))? {
                    futures::future::Either::Left((got, _)) => got.ok(),
                    futures::future::Either::Right(_) => None,
                }
            }
        };
        Ok(got.map(|e| Json(event(e))))
    }
}
