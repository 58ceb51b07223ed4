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
        CallFuture(self.send_as::<CallToolResult>())
    }

    /// [`send`](Self::send), with the result as the JSON the server sent (checked, screened
    /// and audited the same way), for a caller that passes it on rather than reads it (the
    /// gateway): no typed [`CallToolResult`] is built only to be serialised again.
    pub(crate) fn send_json(self) -> impl Future<Output = Result<Value>> + Send + 'static {
        self.send_as::<Value>()
    }

    /// Without a gate the request is queued here and now (as `send` promises); with one, when
    /// the future is first polled, since the gate may have to wait for an approval.
    fn send_as<T: CallOutput>(self) -> Pin<Box<dyn Future<Output = Result<T>> + Send + 'static>> {
        let Some(gate) = self.client.inner().gate.clone() else {
            return Box::pin(dispatch::<T>(self, Pass::Check));
        };
        Box::pin(async move {
            let mut this = self;
            let permit = decide(&gate, &this.client, &this.name, &mut this.arguments).await?;
            let args = gate.audits().then(|| this.arguments.clone());
            let (name, client) = (this.name.clone(), this.client.clone());
            let started = std::time::Instant::now();
            let mut result = dispatch::<T>(this, Pass::Permitted(permit)).await;
            if let Ok(r) = &mut result {
                r.screen(&client, &gate, &name);
            }
            if let Some(args) = args {
                let value = result.as_ref().map(CallOutput::audited);
                let error = result.as_ref().err().map(ToString::to_string);
                let outcome = match (&value, &error) {
                    (Ok(v), _) => Ok(v),
                    (_, Some(e)) => Err(e.as_str()),
                    (Err(_), None) => unreachable!("an error has a message"),
                };
                gate.audit_completion(&name, &args, outcome, started.elapsed());
            }
            result
        })
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

/// What a call's result is read into: the typed [`CallToolResult`], or the JSON as the
/// server sent it ([`ToolCall::send_json`]). The checks a result goes through are written once,
/// over this.
trait CallOutput: serde::de::DeserializeOwned + Send + 'static {
    /// A task's result, fetched typed.
    fn from_typed(result: CallToolResult) -> Self;
    /// `isError`.
    fn is_error(&self) -> bool;
    /// `structuredContent`, unless absent or null.
    fn structured(&self) -> Option<&Value>;
    /// Records what is wrong with `structuredContent` (the JSON form only logs it).
    fn set_schema_error(&mut self, error: Option<String>);
    /// The gate's content screen, in place.
    fn screen(&mut self, client: &Client, gate: &Gate, name: &str);
    /// The result as the audit trail records it.
    fn audited(&self) -> Value;
    /// Whether it has the shape of a result (the typed form has it by construction).
    fn check(&self) -> std::result::Result<(), String> {
        Ok(())
    }
}

impl CallOutput for CallToolResult {
    fn from_typed(result: CallToolResult) -> Self {
        result
    }
    fn is_error(&self) -> bool {
        self.is_error
    }
    fn structured(&self) -> Option<&Value> {
        self.structured_content.as_ref()
    }
    fn set_schema_error(&mut self, error: Option<String>) {
        self.output_schema_error = error;
    }
    fn screen(&mut self, client: &Client, gate: &Gate, name: &str) {
        let Ok(mut value) = serde_json::to_value(&*self) else { return };
        if client.screen_result(gate, name, &mut value)
            && let Ok(mut screened) = serde_json::from_value::<CallToolResult>(value)
        {
            screened.output_schema_error = self.output_schema_error.take();
            *self = screened;
        }
    }
    fn audited(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

impl CallOutput for Value {
    fn from_typed(result: CallToolResult) -> Self {
        serde_json::to_value(result).unwrap_or(Value::Null)
    }
    fn is_error(&self) -> bool {
        self.get("isError").and_then(Value::as_bool).unwrap_or(false)
    }
    fn structured(&self) -> Option<&Value> {
        self.get("structuredContent").filter(|v| !v.is_null())
    }
    fn set_schema_error(&mut self, _: Option<String>) {}
    fn screen(&mut self, client: &Client, gate: &Gate, name: &str) {
        client.screen_result(gate, name, self);
    }
    fn audited(&self) -> Value {
        self.clone()
    }
    fn check(&self) -> std::result::Result<(), String> {
        check_shape(self)
    }
}

/// What a `tools/call` result must be for the typed form to read it, checked on the JSON form
/// without building it: an object whose `content`, if present, is an array of objects and
/// whose `isError`, if present, is a boolean.
fn check_shape(result: &Value) -> std::result::Result<(), String> {
    let Some(members) = result.as_object() else {
        return Err(format!("a tools/call result must be an object, got {result}"));
    };
    match members.get("content") {
        None => {}
        Some(Value::Array(blocks)) if blocks.iter().all(Value::is_object) => {}
        Some(_) => return Err("content must be an array of objects".into()),
    }
    match members.get("isError") {
        None | Some(Value::Bool(_)) => Ok(()),
        Some(_) => Err("isError must be a boolean".into()),
    }
}

/// Sends a call (past the gate, if there is one) and checks its structured result.
fn dispatch<T: CallOutput>(
    call: ToolCall,
    pass: Pass,
) -> impl Future<Output = Result<T>> + Send + 'static {
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
    let call: Pin<Box<dyn Future<Output = Result<T>> + Send>> = if as_task {
        let (client, name) = (client.clone(), name.clone());
        Box::pin(async move {
            client.run_as_task(&name, arguments, timeout, pass).await.map(T::from_typed)
        })
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
        let mut result: T = call.await?;
        result.check().map_err(|e| super::malformed(server, "tools/call", e))?;
        let schema = tool.as_ref().and_then(|t| schemas.get(&t.list, t.index));
        if let Some(schema) = schema
            && !result.is_error()
        {
            let error = match result.structured() {
                Some(content) => super::super::schema::output_error_compiled(&schema, content),
                None => {
                    Some("no structuredContent, although the tool declares an outputSchema".into())
                }
            };
            if let Some(e) = &error {
                tracing::warn!(server = &**server, tool = name.as_str(), "{e}");
            }
            result.set_schema_error(error);
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
    /// `true` when the result was changed.
    fn screen_result(&self, gate: &Gate, name: &str, result: &mut Value) -> bool {
        let list = self.cached_tool(name).map(|t| t.list.clone());
        let untrusted = gate.untrusted_source(list.as_ref(), name);
        let spilled = self.spill_reports(result);
        gate.screen(name, untrusted, result, spilled)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{CallOutput, CallToolResult, check_shape};

    /// The JSON form accepts what the typed form reads and refuses what it refuses, and reads
    /// `isError` and `structuredContent` the same way.
    #[test]
    fn the_json_form_checks_what_the_typed_form_reads() {
        let good = [
            json!({"content": [{"type": "text", "text": "x"}], "isError": true}),
            json!({"structuredContent": {"a": 1}, "_meta": {}}),
            json!({"content": [], "structuredContent": null}),
        ];
        for v in good {
            assert_eq!(check_shape(&v), Ok(()), "{v}");
            let typed: CallToolResult = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(v.is_error(), typed.is_error(), "{v}");
            assert_eq!(v.structured(), typed.structured(), "{v}");
        }
        let bad =
            [json!([]), json!({"content": {}}), json!({"content": [1]}), json!({"isError": 1})];
        for v in bad {
            assert!(check_shape(&v).is_err(), "{v}");
            assert!(serde_json::from_value::<CallToolResult>(v.clone()).is_err(), "{v}");
        }
    }
}
