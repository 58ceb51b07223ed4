//! The one road of a `tools/call`: [`ToolCall`], which every way of calling a tool ends in
//! ([`Client::call_tool`] and its variants, the blocking view, the CLI), so that a check added
//! here (the policy gate and its approval, task routing, the output-schema check) applies to
//! all.

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::Value;

use crate::protocol::{CallToolResult, RequestError};

use super::super::error::{Error, Result};
use super::super::gate::{Check, Gate, Permit, Request};
use super::{Client, PROGRESS_BACKLOG, Pass, ProgressStream, call_params};

/// Whether a call runs as a task (MCP 2025-11-25 tasks: created, polled, its result fetched).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TaskMode {
    /// As a task when the tool's cached definition requires it (`execution.taskSupport:
    /// "required"`) and the server runs tool calls as tasks; a plain call otherwise.
    #[default]
    Auto,
    /// Always as a task: refused (nothing sent) when the server does not run tool calls as
    /// tasks or the tool forbids it.
    Always,
    /// Never as a task.
    Never,
}

/// A `tools/call` being put together: `client.call("tool", args).timeout(t).await`.
///
/// Nothing is sent until [`send`](Self::send) (or `.await`, or [`blocking`](Self::blocking)).
#[must_use = "a ToolCall does nothing until it is sent or awaited"]
#[derive(Debug)]
pub struct ToolCall {
    client: Client,
    name: String,
    arguments: Value,
    timeout: Option<Duration>,
    progress: Option<async_channel::Sender<crate::protocol::Progress>>,
    task: TaskMode,
}

/// The answer to a sent [`ToolCall`]: the request is already queued (dropping this future
/// cancels it: `notifications/cancelled`, or `tasks/cancel` for a task).
#[must_use = "dropping the future cancels the call"]
pub struct CallFuture(Pin<Box<dyn Future<Output = Result<CallToolResult>> + Send + 'static>>);

impl std::fmt::Debug for CallFuture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CallFuture")
    }
}

impl Future for CallFuture {
    type Output = Result<CallToolResult>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.0.as_mut().poll(cx)
    }
}

impl Client {
    /// Starts a `tools/call` of `name` with `arguments` (a JSON object): set its options, then
    /// [`send`](ToolCall::send) it or `.await` it.
    pub fn call(&self, name: &str, arguments: Value) -> ToolCall {
        ToolCall {
            client: self.clone(),
            name: name.to_owned(),
            arguments,
            timeout: None,
            progress: None,
            task: TaskMode::Auto,
        }
    }
}

impl ToolCall {
    /// The call's own deadline (`None`: the host's or the server's default). A task's deadline
    /// covers its whole life: creation, polling and the result.
    pub fn timeout(mut self, timeout: impl Into<Option<Duration>>) -> Self {
        self.timeout = timeout.into();
        self
    }

    /// Asks for the server's progress notifications: they arrive on the returned stream (in
    /// order; at most [`PROGRESS_BACKLOG`] unread ones are kept), and each pushes a plain
    /// call's deadline back by its timeout, up to the session's maximum total. The stream ends
    /// when the call does (a call run as a task reports none).
    pub fn progress(mut self) -> (Self, ProgressStream) {
        let (tx, rx) = async_channel::bounded(PROGRESS_BACKLOG);
        self.progress = Some(tx);
        (self, rx)
    }

    /// Whether to run the call as a task (default [`TaskMode::Auto`]).
    pub fn task(mut self, mode: TaskMode) -> Self {
        self.task = mode;
        self
    }

    /// Sends the call now; the future yields its result. A tool that ran and failed is an
    /// `Ok` result with `is_error` set; an unknown tool or bad arguments are JSON-RPC errors.
    /// The result's `structuredContent` is checked against the tool's cached `outputSchema`,
    /// and a mismatch reported on the result (`output_schema_error`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `arguments` is not an object, or for a task the server or
    /// tool cannot run; otherwise as [`Client::request`].
    pub fn send(self) -> CallFuture {
        let gate = self.client.inner().gate.clone();
        match gate {
            None => CallFuture(Box::pin(dispatch(self, Pass::Check))),
            Some(gate) => CallFuture(Box::pin(async move {
                let mut this = self;
                let permit = decide(&gate, &this.client, &this.name, &mut this.arguments).await?;
                let args = gate.audits().then(|| this.arguments.clone());
                let (name, client) = (this.name.clone(), this.client.clone());
                let started = std::time::Instant::now();
                let mut result = dispatch(this, Pass::Permitted(permit)).await;
                if let Ok(r) = &mut result {
                    client.screen_result(&gate, &name, r);
                }
                if let Some(args) = args {
                    let value =
                        result.as_ref().map(|r| serde_json::to_value(r).unwrap_or(Value::Null));
                    let error = result.as_ref().err().map(ToString::to_string);
                    let outcome = match (&value, &error) {
                        (Ok(v), _) => Ok(v),
                        (_, Some(e)) => Err(e.as_str()),
                        (Err(_), None) => unreachable!("an error has a message"),
                    };
                    gate.audit_completion(&name, &args, outcome, started.elapsed());
                }
                result
            })),
        }
    }

    /// Sends the call and waits for its result on this thread.
    ///
    /// # Errors
    /// As [`send`](Self::send).
    pub fn blocking(self) -> Result<CallToolResult> {
        super::block_on(self.send())
    }
}

/// The gate's decision on a call, with the approval when one is needed (the gate records
/// it). `Err` is the refusal: nothing is sent.
async fn decide(gate: &Gate, client: &Client, name: &str, arguments: &mut Value) -> Result<Permit> {
    let refused = |denial| Error::Policy { server: client.inner().name.clone(), denial };
    // A call is decided against the listing (fetched once, then cached): an unlisted tool is
    // refused, and the definition's schema, annotations and pins count.
    let list = client.tools().await?;
    match gate.check(Request::Call { list: Some(&list), name, arguments }) {
        Check::Permit(permit) => Ok(permit),
        Check::Ask(ticket) => gate.settle(ticket).await.map_err(refused),
        Check::Deny(denial) => Err(refused(denial)),
    }
}

/// Sends a call (past the gate, if there is one) and checks its structured result.
fn dispatch(
    call: ToolCall,
    pass: Pass,
) -> impl Future<Output = Result<CallToolResult>> + Send + 'static {
    let ToolCall { client, name, arguments, timeout, progress, task } = call;
    // The tool's last known definition (never fetched just for this): its taskSupport and
    // outputSchema.
    let tool = client.cached_tool(&name);
    let required =
        tool.as_ref().is_some_and(|t| super::super::tasks::task_support(&t.extra) == "required");
    let as_task = match task {
        TaskMode::Always => true,
        TaskMode::Never => false,
        TaskMode::Auto => required && client.supports_tool_tasks(),
    };
    let call: Pin<Box<dyn Future<Output = Result<CallToolResult>> + Send>> = if as_task {
        let (client, name) = (client.clone(), name.clone());
        Box::pin(async move { client.run_as_task(&name, arguments, timeout, pass).await })
    } else {
        Box::pin(client.typed_with_progress(
            "tools/call",
            call_params(&name, &arguments),
            timeout,
            progress,
            pass,
        ))
    };
    async move {
        let inner = std::sync::Arc::clone(&client.inner());
        let (server, schemas) = (&inner.name, &inner.output_schemas);
        let mut result: CallToolResult = call.await?;
        let schema = tool.as_ref().and_then(|t| schemas.get(&t.list, t.index));
        if let Some(schema) = schema
            && !result.is_error
        {
            result.output_schema_error = match &result.structured_content {
                Some(content) => super::super::schema::output_error_compiled(&schema, content),
                None => {
                    Some("no structuredContent, although the tool declares an outputSchema".into())
                }
            };
            if let Some(e) = &result.output_schema_error {
                tracing::warn!(server = &**server, tool = name.as_str(), "{e}");
            }
        }
        Ok(result)
    }
}

impl IntoFuture for ToolCall {
    type Output = Result<CallToolResult>;
    type IntoFuture = CallFuture;

    fn into_future(self) -> CallFuture {
        self.send()
    }
}

impl Client {
    /// A task-run call with an optional deadline over its whole life: on expiry the task is
    /// cancelled (`tasks/cancel`, by dropping it) and the call fails with a timeout.
    async fn run_as_task(
        &self,
        name: &str,
        arguments: Value,
        timeout: Option<Duration>,
        pass: Pass,
    ) -> Result<CallToolResult> {
        use futures::future::{Either, select};
        let run = Box::pin(self.call_as_task(name, arguments, pass));
        let Some(after) = timeout else { return run.await };
        match select(run, futures_timer::Delay::new(after)).await {
            Either::Left((result, _)) => result,
            Either::Right(((), _task)) => Err(Error::Server {
                server: self.name().into(),
                source: RequestError::Timeout { method: "tools/call".into(), after },
            }),
        }
    }
}

impl Client {
    /// A result about to reach the caller, past the gate's content screen: injections and
    /// credentials acted on as the policy says, the session tainted by untrusted content.
    fn screen_result(&self, gate: &Gate, name: &str, result: &mut CallToolResult) {
        let list = self.cached_tool(name).map(|t| t.list.clone());
        let untrusted = gate.untrusted_source(list.as_ref(), name);
        let Ok(mut value) = serde_json::to_value(&*result) else { return };
        let spilled = self.spill_reports(&value);
        if gate.screen(name, untrusted, &mut value, spilled)
            && let Ok(mut screened) = serde_json::from_value::<CallToolResult>(value)
        {
            screened.output_schema_error = result.output_schema_error.take();
            *result = screened;
        }
    }
}
