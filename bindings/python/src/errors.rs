//! The engine's errors as the Python exceptions of `ringmcp.errors` (defined in Python, so
//! they are ordinary classes with attributes; created lazily, without the GIL).

use pyo3::PyErr;
use ringmcp::host::Error;
use ringmcp::jsonrpc::ErrorObject;
use ringmcp::protocol::RequestError;
use serde_json::{Value, json};

use crate::json::Json;

pyo3::import_exception!(ringmcp.errors, RingmcpError);
pyo3::import_exception!(ringmcp.errors, ServerError);
pyo3::import_exception!(ringmcp.errors, RequestTimeout);
pyo3::import_exception!(ringmcp.errors, ServerClosed);
pyo3::import_exception!(ringmcp.errors, HandshakeError);
pyo3::import_exception!(ringmcp.errors, Backpressure);
pyo3::import_exception!(ringmcp.errors, Unavailable);
pyo3::import_exception!(ringmcp.errors, Restarted);
pyo3::import_exception!(ringmcp.errors, PolicyDenied);
pyo3::import_exception!(ringmcp.errors, SpawnError);
pyo3::import_exception!(ringmcp.errors, ConfigError);
pyo3::import_exception!(ringmcp.errors, InvalidArgument);
pyo3::import_exception!(ringmcp.errors, HostError);

/// The exception of an engine error, with what it knows as attributes (`fault`, `server`,
/// `code`, `data`, and per kind `rule`/`reason`, `stderr`, `retry_after`, `hint`).
pub(crate) fn to_py(e: Error) -> PyErr {
    with_stderr(e, Vec::new())
}

/// [`to_py`], with the server's last stderr lines when the error is its end.
pub(crate) fn with_stderr(e: Error, stderr: Vec<String>) -> PyErr {
    let rpc = ErrorObject::from(&e);
    let mut details = json!({
        "fault": fault_name(e.fault()),
        "code": rpc.code,
        "data": rpc.data,
    });
    let message = e.to_string();
    let args = |mut details: Value, extra: Value| {
        if let (Some(d), Value::Object(extra)) = (details.as_object_mut(), extra) {
            d.extend(extra);
        }
        (message.clone(), Json(details))
    };
    match &e {
        Error::Server { server, .. }
        | Error::Spawn { server, .. }
        | Error::Policy { server, .. }
        | Error::Restarted { server, .. }
        | Error::Unavailable { server, .. } => details["server"] = json!(&**server),
        Error::Handshake(f) => details["server"] = json!(&*f.server),
        _ => {}
    }
    match &e {
        Error::Policy { denial, .. } => PyErr::new::<PolicyDenied, _>(args(
            details,
            json!({"rule": denial.rule, "reason": denial.reason}),
        )),
        Error::Handshake(f) => PyErr::new::<HandshakeError, _>(args(
            details,
            json!({"stderr": f.stderr, "hint": f.hint}),
        )),
        Error::Spawn { .. } => PyErr::new::<SpawnError, _>(args(details, Value::Null)),
        Error::Restarted { .. } => {
            PyErr::new::<Restarted, _>(args(details, json!({ "stderr": stderr })))
        }
        Error::Unavailable { retry_after, .. } => PyErr::new::<Unavailable, _>(args(
            details,
            json!({"retry_after": retry_after.map(|d| d.as_secs_f64())}),
        )),
        Error::Server { source, .. } => {
            let extra = json!({ "stderr": stderr });
            match source {
                RequestError::Timeout { .. } => {
                    PyErr::new::<RequestTimeout, _>(args(details, extra))
                }
                RequestError::Closed(_) => PyErr::new::<ServerClosed, _>(args(details, extra)),
                RequestError::QueueFull { retry_after, .. } => PyErr::new::<Backpressure, _>(args(
                    details,
                    json!({"retry_after": retry_after.as_secs_f64()}),
                )),
                _ => PyErr::new::<ServerError, _>(args(details, extra)),
            }
        }
        Error::InvalidArgument(_) => PyErr::new::<InvalidArgument, _>(args(details, Value::Null)),
        Error::Config(_) => PyErr::new::<ConfigError, _>(args(details, Value::Null)),
        _ => PyErr::new::<HostError, _>(args(details, Value::Null)),
    }
}

/// The short name of who is at fault, as `RingmcpError.fault` gives it.
fn fault_name(fault: ringmcp::host::Fault) -> &'static str {
    use ringmcp::host::Fault;
    match fault {
        Fault::Peer => "peer",
        Fault::Busy => "busy",
        Fault::Caller => "caller",
        Fault::Policy => "policy",
        Fault::Sandbox => "sandbox",
        Fault::Io => "io",
        _ => "internal",
    }
}

/// A caller's mistake found before anything reached the engine.
pub(crate) fn invalid(message: impl Into<String>) -> PyErr {
    let details = json!({"fault": "caller"});
    PyErr::new::<InvalidArgument, _>((message.into(), Json(details)))
}

/// An unusable configuration.
pub(crate) fn config(message: impl Into<String>) -> PyErr {
    let details = json!({"fault": "caller"});
    PyErr::new::<ConfigError, _>((message.into(), Json(details)))
}

/// The host was closed.
pub(crate) fn closed_host() -> PyErr {
    let details = json!({"fault": "caller"});
    PyErr::new::<HostError, _>((
        "the host is closed: make a new ringmcp.Host to start servers".to_owned(),
        Json(details),
    ))
}
