//! Python callables as the engine's callbacks: the sampling and elicitation handler
//! ([`ClientHandler`]), the policy's approver ([`Approver`]) and progress callbacks.
//!
//! The engine calls handlers and approvers on threads of their own; each call takes the GIL
//! for as long as the callable runs. A callable may be a coroutine function: its coroutine
//! runs on the event loop the host was made in (when that loop is running), else on a loop of
//! its own for the call. A callable that raises never crashes the host: the server gets an
//! error answer (the approver's exception is a refusal) and the traceback goes to stderr.

use pyo3::prelude::*;
use ringmcp::host::{Approval, ApprovalRequest, Approver, ClientHandler};
use ringmcp::jsonrpc::{ErrorObject, codes};
use ringmcp::protocol::ClientFeatures;
use serde_json::{Value, json};

use crate::json::{self, Json};

/// A Python callable and the event loop its coroutines run on.
pub(crate) struct Callback {
    func: Py<PyAny>,
    event_loop: Option<Py<PyAny>>,
}

impl Callback {
    pub(crate) fn new(func: Py<PyAny>, event_loop: Option<Py<PyAny>>) -> Self {
        Callback { func, event_loop }
    }

    /// Calls it and waits for its value (a coroutine's result, when it returns one).
    fn call<'py>(
        &self,
        py: Python<'py>,
        args: impl pyo3::call::PyCallArgs<'py>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let out = self.func.bind(py).call1(args)?;
        let asyncio = py.import("asyncio")?;
        if !asyncio.call_method1("iscoroutine", (&out,))?.is_truthy()? {
            return Ok(out);
        }
        match running(py, self.event_loop.as_ref())? {
            // The host's loop runs on another thread: the coroutine runs there, and this
            // thread waits (concurrent.futures.Future.result releases the GIL).
            Some(lp) => {
                asyncio.call_method1("run_coroutine_threadsafe", (out, lp))?.call_method0("result")
            }
            None => asyncio.call_method1("run", (out,)),
        }
    }

    /// Calls it without waiting for it, for notifications such as progress: on the host's
    /// event loop when it runs on another thread (`call_soon_threadsafe`, a coroutine function
    /// as a task of that loop), else here (a coroutine run to completion).
    pub(crate) fn notify<'py>(
        &self,
        py: Python<'py>,
        args: Bound<'py, pyo3::types::PyTuple>,
    ) -> PyResult<()> {
        let asyncio = py.import("asyncio")?;
        let func = self.func.bind(py);
        if let Some(lp) = running(py, self.event_loop.as_ref())? {
            if py.import("inspect")?.call_method1("iscoroutinefunction", (func,))?.is_truthy()? {
                let coro = func.call1(&args)?;
                asyncio.call_method1("run_coroutine_threadsafe", (coro, lp))?;
            } else {
                let mut all = vec![func.clone()];
                all.extend(args.iter());
                lp.call_method1("call_soon_threadsafe", pyo3::types::PyTuple::new(py, all)?)?;
            }
            return Ok(());
        }
        let out = func.call1(args)?;
        if asyncio.call_method1("iscoroutine", (&out,))?.is_truthy()? {
            asyncio.call_method1("run", (out,))?;
        }
        Ok(())
    }

    pub(crate) fn clone_ref(&self, py: Python<'_>) -> Callback {
        Callback {
            func: self.func.clone_ref(py),
            event_loop: self.event_loop.as_ref().map(|l| l.clone_ref(py)),
        }
    }
}

/// The loop, when it is running on a thread other than this one (waiting on it from its own
/// thread would deadlock).
fn running<'py>(py: Python<'py>, lp: Option<&Py<PyAny>>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(lp) = lp.map(|l| l.bind(py)) else { return Ok(None) };
    if lp.call_method0("is_closed")?.is_truthy()? || !lp.call_method0("is_running")?.is_truthy()? {
        return Ok(None);
    }
    let asyncio = py.import("asyncio")?;
    let here = asyncio.call_method0("_get_running_loop")?;
    Ok(if here.is(lp) { None } else { Some(lp.clone()) })
}

/// The event loop running on this thread, if any (where the host's coroutines will run).
pub(crate) fn current_loop(py: Python<'_>) -> Option<Py<PyAny>> {
    let here = py.import("asyncio").ok()?.call_method0("_get_running_loop").ok()?;
    (!here.is_none()).then(|| here.unbind())
}

/// Reports a callback's exception (it is answered for, not raised anywhere).
fn report(py: Python<'_>, what: &str, e: &PyErr) {
    eprintln!("ringmcp: the {what} callback raised an exception:");
    e.display(py);
}

/// An answer the application gave as a JSON-RPC error (`{"code", "message"}`, as the official
/// SDK's `ErrorData`) rather than a result.
fn as_error(v: &Value) -> Option<ErrorObject> {
    let o = v.as_object()?;
    let code = o.get("code")?.as_i64()?;
    let message = o.get("message")?.as_str()?;
    if o.contains_key("role") || o.contains_key("action") {
        return None;
    }
    let mut e = ErrorObject::new(code, message);
    if let Some(data) = o.get("data") {
        e = e.with_data(data.clone());
    }
    Some(e)
}

/// `sampling/createMessage` and `elicitation/create` answered by Python callables
/// (`callback(server, params)`).
pub(crate) struct Handler {
    pub(crate) sampling: Option<Callback>,
    pub(crate) elicitation: Option<Callback>,
}

impl Handler {
    fn answer(
        &self,
        what: &str,
        cb: &Callback,
        server: &str,
        params: Value,
    ) -> Result<Value, ErrorObject> {
        Python::attach(|py| {
            let out = cb.call(py, (server, Json(params))).and_then(|o| json::value(&o));
            match out {
                Ok(v) => as_error(&v).map_or(Ok(v), Err),
                Err(e) => {
                    report(py, what, &e);
                    Err(ErrorObject::new(
                        codes::INTERNAL_ERROR,
                        format!("the client's {what} callback failed: {e}"),
                    ))
                }
            }
        })
    }
}

impl ClientHandler for Handler {
    fn features(&self) -> ClientFeatures {
        ClientFeatures {
            sampling: self.sampling.is_some(),
            // Both modes, as the official SDK declares them: the callback sees `params["mode"]`.
            elicitation_form: self.elicitation.is_some(),
            elicitation_url: self.elicitation.is_some(),
        }
    }

    fn create_message(&self, server: &str, params: Value) -> Result<Value, ErrorObject> {
        match &self.sampling {
            Some(cb) => self.answer("sampling", cb, server, params),
            None => Err(ErrorObject::new(-1, "User rejected sampling request")),
        }
    }

    fn elicit(&self, server: &str, params: Value) -> Result<Value, ErrorObject> {
        match &self.elicitation {
            Some(cb) => self.answer("elicitation", cb, server, params),
            None => Ok(json!({ "action": "decline" })),
        }
    }
}

/// The policy's approver as a Python callable: `approver(request) -> "once" | "always" |
/// "deny"` (or `True`/`False`).
pub(crate) struct PyApprover(pub(crate) Callback);

impl Approver for PyApprover {
    fn approve(&self, request: &ApprovalRequest) -> Approval {
        let asked = json!({
            "server": request.server,
            "tool": request.tool,
            "arguments": request.arguments,
            "rule": request.rule,
            "description": request.description,
            "reason": request.reason,
        });
        Python::attach(|py| {
            let answer = self.0.call(py, (Json(asked),)).and_then(|o| json::value(&o));
            match answer {
                Ok(Value::Bool(true)) => Approval::Once,
                Ok(Value::String(s)) => match s.to_ascii_lowercase().as_str() {
                    "once" | "yes" | "allow" | "y" => Approval::Once,
                    "always" | "a" => Approval::Always,
                    _ => Approval::Deny,
                },
                Ok(_) => Approval::Deny,
                Err(e) => {
                    report(py, "approver", &e);
                    Approval::Deny
                }
            }
        })
    }

    fn name(&self) -> String {
        "python approver".into()
    }
}
