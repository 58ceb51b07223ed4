//! Task-augmented tool calls (MCP 2025-11-25, experimental "tasks"; docs/protocol.md,
//! "Tools"): a `tools/call` with a `task` member is answered at once with a
//! `CreateTaskResult`; the client polls `tasks/get` at the server's `pollInterval` until the
//! task needs input or ends, then fetches the outcome with `tasks/result` (which also carries
//! the server's requests for input, e.g. an elicitation, to the host's handler while it waits).
//! A caller that stops waiting cancels the task with `tasks/cancel`, never with
//! `notifications/cancelled`.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::protocol::{CallToolResult, RequestError};

use super::Client;
use super::error::{Error, Result};

/// A task's state, as `tasks/get` and `tasks/list` report it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The server's id for it.
    pub task_id: String,
    /// `working`, `input_required`, `completed`, `failed` or `cancelled`.
    pub status: String,
    /// A human-readable note on the status.
    #[serde(default)]
    pub status_message: Option<String>,
    /// How often the server suggests polling, in milliseconds.
    #[serde(default)]
    pub poll_interval: Option<u64>,
    /// How long the server keeps the task after it ends, in milliseconds.
    #[serde(default)]
    pub ttl: Option<Value>,
}

impl Task {
    /// Whether the task has ended (`completed`, `failed` or `cancelled`).
    pub fn is_terminal(&self) -> bool {
        matches!(self.status.as_str(), "completed" | "failed" | "cancelled")
    }
}

/// Polling bounds: a server's `pollInterval` is clamped into this range.
const MIN_POLL: Duration = Duration::from_millis(50);
const MAX_POLL: Duration = Duration::from_secs(10);
/// When the server suggests no interval.
const DEFAULT_POLL: Duration = Duration::from_secs(1);
/// How long `tasks/result` may block (it answers when the task ends).
const TASK_RESULT_TIMEOUT: Duration = Duration::from_secs(600);

/// Sends `tasks/cancel` for a task whose caller stopped waiting (on its own thread: the
/// caller's future is being dropped, and the request must outlive it).
struct CancelOnDrop {
    client: Client,
    task: Option<String>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(task) = self.task.take() else { return };
        let client = self.client.clone();
        let spawned =
            std::thread::Builder::new().name("ringmcp-task-cancel".into()).spawn(move || {
                let params = json!({ "taskId": task });
                if let Err(e) =
                    futures_executor::block_on(client.request("tasks/cancel", Some(params), None))
                {
                    tracing::debug!(server = client.name(), "tasks/cancel {task}: {e}");
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("cannot cancel a task: {e}");
        }
    }
}

impl Client {
    /// Whether the server runs tool calls as tasks (`tasks.requests.tools.call`).
    pub fn supports_tool_tasks(&self) -> bool {
        self.server_info().capabilities["tasks"]["requests"]["tools"].get("call").is_some()
    }

    /// `tools/call` made as a task: [`call`](Self::call)`(..).task(TaskMode::Always)`.
    /// Created, polled with `tasks/get` at the server's `pollInterval`, and its result
    /// fetched with `tasks/result`. Dropping the future cancels the task (`tasks/cancel`).
    /// [`call_tool`](Self::call_tool) does this by itself for a tool whose cached definition
    /// says `execution.taskSupport: "required"`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the server does not run tool calls as tasks, or the
    /// tool's cached definition forbids it (`taskSupport` absent or `"forbidden"`); a failed
    /// or cancelled task as [`RequestError::MalformedResult`]-free [`Error::Server`] with the
    /// server's error; otherwise as [`request`](Self::request).
    pub async fn call_tool_as_task(&self, name: &str, arguments: Value) -> Result<CallToolResult> {
        self.call(name, arguments).task(super::TaskMode::Always).send().await
    }

    /// The task road of [`ToolCall::send`](super::ToolCall::send).
    pub(crate) async fn call_as_task(
        &self,
        name: &str,
        arguments: Value,
        pass: super::client::Pass,
    ) -> Result<CallToolResult> {
        if !self.supports_tool_tasks() {
            return Err(Error::InvalidArgument(format!(
                "server {:?} does not run tool calls as tasks (no tasks.requests.tools.call)",
                self.name()
            )));
        }
        if let Some(tool) = self.cached_tool(name)
            && task_support(&tool.extra) == "forbidden"
        {
            return Err(Error::InvalidArgument(format!(
                "tool {name:?} does not support task execution"
            )));
        }
        let params = json!({ "name": name, "arguments": arguments, "task": {} });
        // Only reached from `ToolCall::send`, whose gate decided the call already.
        let created: Value = self.request_with("tools/call", Some(params), None, pass).await?;
        let Some(task) = created.get("task") else {
            // The server ran it at once after all: that is the result.
            return serde_json::from_value(created)
                .map_err(|e| self.malformed("tools/call", e.to_string()));
        };
        let mut task: Task = serde_json::from_value(task.clone())
            .map_err(|e| self.malformed("tools/call", format!("CreateTaskResult: {e}")))?;
        let mut guard = CancelOnDrop { client: self.clone(), task: Some(task.task_id.clone()) };
        while !task.is_terminal() && task.status != "input_required" {
            let wait = task.poll_interval.map_or(DEFAULT_POLL, Duration::from_millis);
            futures_timer::Delay::new(wait.clamp(MIN_POLL, MAX_POLL)).await;
            let params = json!({ "taskId": task.task_id });
            let polled: Value = self.request("tasks/get", Some(params), None).await?;
            task = serde_json::from_value(polled)
                .map_err(|e| self.malformed("tasks/get", e.to_string()))?;
        }
        if task.status == "cancelled" {
            guard.task = None;
            return Err(Error::Server {
                server: self.name().into(),
                source: RequestError::TaskCancelled {
                    method: "tools/call".into(),
                    task: task.task_id,
                    reason: task.status_message.unwrap_or_else(|| "no reason given".into()),
                },
            });
        }
        // `tasks/result` blocks until the task ends (and carries its input requests): as long
        // as the session lets any request run.
        let params = json!({ "taskId": task.task_id });
        let long = Some(TASK_RESULT_TIMEOUT);
        let result: Value = self.request("tasks/result", Some(params), long).await?;
        guard.task = None;
        serde_json::from_value(result).map_err(|e| self.malformed("tasks/result", e.to_string()))
    }

    /// `tasks/get`: a task's state.
    ///
    /// # Errors
    /// As [`request`](Self::request), or a malformed result.
    pub async fn get_task(&self, task_id: &str) -> Result<Task> {
        let polled: Value =
            self.request("tasks/get", Some(json!({ "taskId": task_id })), None).await?;
        serde_json::from_value(polled).map_err(|e| self.malformed("tasks/get", e.to_string()))
    }

    /// `tasks/cancel`.
    ///
    /// # Errors
    /// As [`request`](Self::request) (-32602 for an unknown or finished task).
    pub async fn cancel_task(&self, task_id: &str) -> Result<Task> {
        let answer: Value =
            self.request("tasks/cancel", Some(json!({ "taskId": task_id })), None).await?;
        serde_json::from_value(answer).map_err(|e| self.malformed("tasks/cancel", e.to_string()))
    }

    fn malformed(&self, method: &str, reason: String) -> Error {
        Error::Server {
            server: self.name().into(),
            source: RequestError::MalformedResult { method: method.into(), reason },
        }
    }
}

/// A tool definition's `execution.taskSupport` (`"forbidden"` when absent).
pub(crate) fn task_support(extra: &serde_json::Map<String, Value>) -> &str {
    extra
        .get("execution")
        .and_then(|e| e.get("taskSupport"))
        .and_then(Value::as_str)
        .unwrap_or("forbidden")
}
