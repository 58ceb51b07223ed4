//! `Client` (one running server) and `ToolCall` (the call builder). Every request method
//! returns an awaitable, or with `client.blocking` its result: both go through [`run`].

use std::time::Duration;

use pyo3::prelude::*;
use ringmcp::host::{self as engine, Error, TaskMode};
use ringmcp::protocol::{CallToolResult, RequestError};
use serde_json::{Value, json};

use crate::callbacks::{self, Callback};
use crate::errors::{self, to_py, with_stderr};
use crate::events::EventStream;
use crate::host::secs;
use crate::json::{self, Json, Ser, Unit};
use crate::spill::SpillFile;
use crate::wait::run;

/// How long a failed request waits for the server's stderr tail (its end is being reaped).
const STDERR_WAIT: Duration = Duration::from_millis(300);

/// One running server.
#[pyclass(module = "ringmcp._native", name = "Client", frozen)]
pub(crate) struct Client {
    client: engine::Client,
    /// `client.blocking`: methods return their results rather than awaitables.
    blocking: bool,
}

impl Client {
    pub(crate) fn new(client: engine::Client) -> Self {
        Client { client, blocking: false }
    }

    /// Runs a request of this client (awaitable or blocking, as the client is).
    fn run<'py, F, T>(&self, py: Python<'py>, fut: F) -> PyResult<Bound<'py, PyAny>>
    where
        F: Future<Output = Result<T, Error>> + Send + 'static,
        T: for<'a> IntoPyObject<'a> + Send + 'static,
    {
        let client = self.client.clone();
        run(py, self.blocking, async move {
            match fut.await {
                Ok(v) => Ok(v),
                Err(e) => Err(failure(&client, e).await),
            }
        })
    }
}

/// The exception of a failed request: for the server's end, with its last stderr lines.
async fn failure(client: &engine::Client, e: Error) -> PyErr {
    let ended = matches!(
        &e,
        Error::Server { source: RequestError::Closed(_), .. } | Error::Restarted { .. }
    );
    if !ended {
        return to_py(e);
    }
    let stats =
        futures::future::select(Box::pin(client.stats()), futures_timer::Delay::new(STDERR_WAIT))
            .await;
    let stderr = match stats {
        futures::future::Either::Left((Ok(stats), _)) => stats.stderr_lines(),
        _ => Vec::new(),
    };
    with_stderr(e, stderr)
}

/// Arguments as a JSON object (`None`: `{}`).
fn arguments(arguments: Option<&Bound<'_, PyAny>>) -> PyResult<Value> {
    Ok(json::optional(arguments)?.unwrap_or_else(|| json!({})))
}

fn task_mode(mode: &str) -> PyResult<TaskMode> {
    match mode {
        "auto" => Ok(TaskMode::Auto),
        "always" => Ok(TaskMode::Always),
        "never" => Ok(TaskMode::Never),
        other => Err(errors::invalid(format!(
            "task mode {other:?}: one of \"auto\", \"always\", \"never\""
        ))),
    }
}

#[pymethods]
impl Client {
    #[getter]
    fn name(&self) -> String {
        self.client.name().to_owned()
    }

    /// The negotiated protocol revision.
    #[getter]
    fn protocol_version(&self) -> String {
        self.client.protocol_version().to_string()
    }

    /// The `InitializeResult` (serverInfo, capabilities, instructions).
    #[getter]
    fn server_info(&self) -> Ser<ringmcp::protocol::InitializeResult> {
        Ser(self.client.server_info())
    }

    /// This client with blocking methods.
    #[getter]
    fn blocking(&self) -> Client {
        Client { client: self.client.clone(), blocking: true }
    }

    fn about(&self) -> Option<String> {
        self.client.about()
    }

    fn has_capability(&self, name: &str) -> bool {
        self.client.has_capability(name)
    }

    /// A `tools/call` to put together.
    #[pyo3(signature = (name, arguments = None))]
    fn call(&self, name: String, arguments: Option<&Bound<'_, PyAny>>) -> PyResult<ToolCall> {
        Ok(ToolCall {
            client: self.client.clone(),
            name,
            arguments: self::arguments(arguments)?,
            timeout: None,
            progress: None,
            task: TaskMode::Auto,
            blocking: self.blocking,
        })
    }

    /// `tools/call`.
    #[pyo3(signature = (name, arguments = None, *, timeout = None, progress = None, task = "auto"))]
    fn call_tool<'py>(
        &self,
        py: Python<'py>,
        name: String,
        arguments: Option<&Bound<'py, PyAny>>,
        timeout: Option<f64>,
        progress: Option<Py<PyAny>>,
        task: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let call = ToolCall {
            client: self.client.clone(),
            name,
            arguments: self::arguments(arguments)?,
            timeout: timeout.map(secs).transpose()?,
            progress: progress.map(|f| Callback::new(f, callbacks::current_loop(py))),
            task: task_mode(task)?,
            blocking: self.blocking,
        };
        call.start(py, self.blocking)
    }

    fn list_tools<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let c = self.client.clone();
        self.run(py, async move { c.list_tools().await.map(Ser) })
    }

    fn list_resources<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let c = self.client.clone();
        self.run(py, async move { c.list_resources().await.map(Ser) })
    }

    fn list_resource_templates<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let c = self.client.clone();
        self.run(py, async move { c.list_resource_templates().await.map(Ser) })
    }

    fn read_resource<'py>(&self, py: Python<'py>, uri: &str) -> PyResult<Bound<'py, PyAny>> {
        let fut = self.client.read_resource(uri);
        self.run(py, async move { fut.await.map(Ser) })
    }

    fn subscribe_resource<'py>(&self, py: Python<'py>, uri: &str) -> PyResult<Bound<'py, PyAny>> {
        let fut = self.client.subscribe_resource(uri);
        self.run(py, async move { fut.await.map(|()| Unit) })
    }

    fn unsubscribe_resource<'py>(&self, py: Python<'py>, uri: &str) -> PyResult<Bound<'py, PyAny>> {
        let fut = self.client.unsubscribe_resource(uri);
        self.run(py, async move { fut.await.map(|()| Unit) })
    }

    fn list_prompts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let c = self.client.clone();
        self.run(py, async move { c.list_prompts().await.map(Ser) })
    }

    #[pyo3(signature = (name, arguments = None))]
    fn get_prompt<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        arguments: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let fut = self.client.get_prompt(name, self::arguments(arguments)?);
        self.run(py, async move { fut.await.map(Ser) })
    }

    /// `completion/complete`: the `completion` object (`values`, `total`, `hasMore`).
    #[pyo3(signature = (r#ref, argument, value, context = None))]
    fn complete<'py>(
        &self,
        py: Python<'py>,
        r#ref: &Bound<'py, PyAny>,
        argument: &str,
        value: &str,
        context: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let fut =
            self.client.complete(json::value(r#ref)?, argument, value, json::optional(context)?);
        self.run(py, async move { fut.await.map(Json) })
    }

    fn set_log_level<'py>(&self, py: Python<'py>, level: &str) -> PyResult<Bound<'py, PyAny>> {
        let fut = self.client.set_log_level(level);
        self.run(py, async move { fut.await.map(|()| Unit) })
    }

    fn ping<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let fut = self.client.ping();
        self.run(py, async move { fut.await.map(|()| Unit) })
    }

    /// Any request; its result as the server sent it (through the same policy gate).
    #[pyo3(signature = (method, params = None, *, timeout = None))]
    fn request<'py>(
        &self,
        py: Python<'py>,
        method: &str,
        params: Option<&Bound<'py, PyAny>>,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let timeout = timeout.map(secs).transpose()?;
        let fut = self.client.request(method, json::optional(params)?, timeout);
        self.run(py, async move { fut.await.map(Json) })
    }

    /// Sends a notification.
    #[pyo3(signature = (method, params = None))]
    fn notify(&self, method: &str, params: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        self.client.notify(method, json::optional(params)?).map_err(to_py)
    }

    /// Replaces the roots this client answers `roots/list` with (paths, `file://` URIs, or
    /// `{"uri", "name"}` dicts).
    fn set_roots(&self, roots: Vec<Bound<'_, PyAny>>) -> PyResult<()> {
        let mut list = Vec::with_capacity(roots.len());
        for r in &roots {
            let root = match r.extract::<std::path::PathBuf>() {
                Ok(p) if !p.to_string_lossy().contains("://") => ringmcp::protocol::Root {
                    uri: format!("file://{}", std::path::absolute(&p).unwrap_or(p).display()),
                    name: None,
                },
                _ => serde_json::from_value(match json::value(r)? {
                    Value::String(uri) => json!({ "uri": uri }),
                    other => other,
                })
                .map_err(|e| errors::invalid(format!("a root: {e}")))?,
            };
            list.push(root);
        }
        self.client.set_roots(list).map_err(to_py)
    }

    /// pid, counters, the last stderr lines and the sandbox's limits.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let c = self.client.clone();
        self.run(py, async move {
            let s = c.stats().await?;
            let session = &s.session;
            Ok(Json(json!({
                "pid": s.pid,
                "requests": session.requests,
                "frames": session.frames,
                "violations": session.violations,
                "timeouts": session.timeouts,
                "server_requests": session.server_requests,
                "cancelled": session.cancelled,
                "late_answers": session.late_answers,
                "stdout_bytes": s.stdout_bytes,
                "stderr_bytes": s.stderr_bytes,
                "stderr": s.stderr_lines(),
                "events_dropped": s.events_dropped,
                "frames_offloaded": s.frames_offloaded,
                "answers_spilled": s.answers_spilled,
                "direct_writes": s.direct_writes,
                "sandbox": s.sandbox.as_ref().map(|b| format!("{:?}", b.limits)),
            })))
        })
    }

    /// Shuts the server down; returns how it ended.
    fn shutdown<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let c = self.client.clone();
        run(py, self.blocking, async move { Ok(c.shutdown().await.to_string()) })
    }

    /// The server's events.
    fn events(&self) -> EventStream {
        EventStream::new(self.client.events())
    }

    /// The spilled payload behind a `ringmcp-spill://` link of a result.
    fn open_spilled(&self, uri: &str) -> PyResult<SpillFile> {
        self.client.spilled(uri).map(SpillFile::new).ok_or_else(|| {
            pyo3::exceptions::PyKeyError::new_err(format!(
                "{uri:?} is not a payload this client spilled (or it was released)"
            ))
        })
    }

    /// A server's resource read into a spill file (e.g. a `resource_link` it returned).
    fn fetch_resource<'py>(&self, py: Python<'py>, uri: &str) -> PyResult<Bound<'py, PyAny>> {
        let fut = self.client.fetch_resource(uri);
        self.run(py, async move { fut.await.map(SpillFile::new) })
    }

    /// For a restarted server: its health, restarts and last error.
    fn supervision_status(&self) -> Option<Json> {
        self.client.supervision_status().map(|s| {
            Json(json!({
                "health": format!("{:?}", s.health),
                "restarts": s.restarts,
                "last_error": s.last_error,
            }))
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "<ringmcp.Client {:?} {}{}>",
            self.client.name(),
            self.client.protocol_version(),
            if self.blocking { " blocking" } else { "" }
        )
    }
}

/// A `tools/call` being put together.
#[pyclass(module = "ringmcp._native", name = "ToolCall", frozen)]
pub(crate) struct ToolCall {
    client: engine::Client,
    name: String,
    arguments: Value,
    timeout: Option<Duration>,
    progress: Option<Callback>,
    task: TaskMode,
    blocking: bool,
}

impl ToolCall {
    fn with(&self, py: Python<'_>, f: impl FnOnce(&mut ToolCall)) -> ToolCall {
        let mut c = ToolCall {
            client: self.client.clone(),
            name: self.name.clone(),
            arguments: self.arguments.clone(),
            timeout: self.timeout,
            progress: self.progress.as_ref().map(|p| p.clone_ref(py)),
            task: self.task,
            blocking: self.blocking,
        };
        f(&mut c);
        c
    }

    /// Sends the call now: its awaitable, or its result when `blocking`.
    fn start<'py>(&self, py: Python<'py>, blocking: bool) -> PyResult<Bound<'py, PyAny>> {
        let mut call = self
            .client
            .call(&self.name, self.arguments.clone())
            .timeout(self.timeout)
            .task(self.task);
        let mut progress = None;
        if let Some(cb) = &self.progress {
            let (c, stream) = call.progress();
            call = c;
            progress = Some((cb.clone_ref(py), stream));
        }
        let sent = call.send();
        let client = self.client.clone();
        run(py, blocking, async move {
            let result = match progress {
                None => sent.await,
                Some((cb, stream)) => with_progress(sent, cb, stream).await,
            };
            match result {
                Ok(r) => Ok(Ser(r)),
                Err(e) => Err(failure(&client, e).await),
            }
        })
    }
}

/// Waits for a call while handing its progress notifications to `cb(progress, total,
/// message)`.
async fn with_progress(
    sent: engine::CallFuture,
    cb: Callback,
    stream: engine::ProgressStream,
) -> Result<CallToolResult, Error> {
    let notify = |p: ringmcp::protocol::Progress| {
        Python::attach(|py| {
            let args = (p.progress, p.total, p.message).into_pyobject(py);
            if let Err(e) = args.and_then(|a| cb.notify(py, a)) {
                eprintln!("ringmcp: the progress callback raised an exception:");
                e.display(py);
            }
        });
    };
    let drain = async {
        while let Ok(p) = stream.recv().await {
            notify(p);
        }
    };
    let result = match futures::future::select(sent, Box::pin(drain)).await {
        futures::future::Either::Left((result, _)) => result,
        futures::future::Either::Right(((), sent)) => sent.await,
    };
    // Notifications that arrived with the answer.
    while let Ok(p) = stream.try_recv() {
        notify(p);
    }
    result
}

#[pymethods]
impl ToolCall {
    /// The call's own deadline, in seconds (`None`: the host's).
    #[pyo3(signature = (seconds))]
    fn timeout(&self, py: Python<'_>, seconds: Option<f64>) -> PyResult<ToolCall> {
        let t = seconds.map(secs).transpose()?;
        Ok(self.with(py, |c| c.timeout = t))
    }

    /// Asks for progress: `callback(progress, total, message)` for each notification.
    fn progress(&self, py: Python<'_>, callback: Py<PyAny>) -> ToolCall {
        let cb = Callback::new(callback, callbacks::current_loop(py));
        self.with(py, |c| c.progress = Some(cb))
    }

    /// Whether to run it as a task: "auto", "always" or "never".
    fn task(&self, py: Python<'_>, mode: &str) -> PyResult<ToolCall> {
        let mode = task_mode(mode)?;
        Ok(self.with(py, |c| c.task = mode))
    }

    /// Sends it: an awaitable of its result.
    fn send<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.start(py, false)
    }

    /// Sends it and waits for its result.
    fn blocking<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.start(py, true)
    }

    fn __await__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.start(py, false)?.call_method0("__await__")
    }
}
