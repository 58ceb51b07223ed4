//! The blocking view of a [`Client`]: `client.blocking().call_tool(..)` waits on the calling
//! thread for exactly what `client.call_tool(..).await` yields. Every async method of
//! `Client` has its counterpart here, under the same name and with the same arguments, so
//! there is one list of operations and one way to make each blocking.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::protocol::{
    CallToolResult, CloseReason, GetPromptResult, Prompt, ReadResourceResult, Resource, Tool,
};
use crate::spill::store::SpillFile;

use super::super::error::Result;
use super::super::stats::ServerStats;
use super::super::tasks::Task;
use super::{Client, block_on};

/// [`Client`]'s async methods, each waited for on the calling thread (from any thread, with or
/// without an async runtime; not from inside an async task, which it would block). Made by
/// [`Client::blocking`]. For a [`ToolCall`](super::ToolCall) built with options, use its
/// [`blocking`](super::ToolCall::blocking) terminal.
#[derive(Debug, Clone, Copy)]
pub struct Blocking<'c>(&'c Client);

impl Client {
    /// The blocking view of this client.
    pub fn blocking(&self) -> Blocking<'_> {
        Blocking(self)
    }
}

/// One blocking method per async one, with the async method's documentation and errors.
macro_rules! blocking {
    ($($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*) -> $out:ty;)*) => {
        impl Blocking<'_> {
            $(
                $(#[$doc])*
                #[doc = concat!("Blocking [`Client::", stringify!($name), "`].")]
                ///
                /// # Errors
                #[doc = concat!("As [`Client::", stringify!($name), "`].")]
                pub fn $name(self, $($arg: $ty),*) -> $out {
                    block_on(self.0.$name($($arg),*))
                }
            )*
        }
    };
}

blocking! {
    request(method: &str, params: Option<Value>, timeout: Option<Duration>) -> Result<Value>;
    tools() -> Result<Arc<Vec<Tool>>>;
    resources() -> Result<Arc<Vec<Resource>>>;
    prompts() -> Result<Arc<Vec<Prompt>>>;
    list_tools() -> Result<Vec<Tool>>;
    list_resources() -> Result<Vec<Resource>>;
    list_resource_templates() -> Result<Vec<Value>>;
    list_prompts() -> Result<Vec<Prompt>>;
    call_tool(name: &str, arguments: Value) -> Result<CallToolResult>;
    call_tool_with_timeout(name: &str, arguments: Value, timeout: Option<Duration>)
        -> Result<CallToolResult>;
    call_tool_as_task(name: &str, arguments: Value) -> Result<CallToolResult>;
    get_task(task_id: &str) -> Result<Task>;
    cancel_task(task_id: &str) -> Result<Task>;
    read_resource(uri: &str) -> Result<ReadResourceResult>;
    fetch_resource(uri: &str) -> Result<SpillFile>;
    subscribe_resource(uri: &str) -> Result<()>;
    unsubscribe_resource(uri: &str) -> Result<()>;
    set_log_level(level: &str) -> Result<()>;
    complete(reference: Value, argument: &str, value: &str, context: Option<Value>)
        -> Result<Value>;
    get_prompt(name: &str, arguments: Value) -> Result<GetPromptResult>;
    ping() -> Result<()>;
    stats() -> Result<ServerStats>;
}

impl Blocking<'_> {
    /// Blocking [`Client::shutdown`].
    pub fn shutdown(self) -> CloseReason {
        block_on(self.0.shutdown())
    }
}
