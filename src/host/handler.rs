//! Server→client requests (MCP's "client features"): how the application answers
//! `sampling/createMessage` and `elicitation/create`.
//!
//! A host without a handler declares neither capability, so a compliant server never asks
//! (MCP-CLIENT.md checklist 17). With one, each request runs on a thread of its own, so a
//! handler may block (a human in the loop) without stalling any server's I/O; if the server
//! cancels the request meanwhile, the handler's answer is dropped.

use std::fmt;
use std::os::fd::OwnedFd;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::jsonrpc::{ErrorObject, Id, codes};
use crate::protocol::ClientFeatures;

/// Answers the requests a server sends to the client. Every method has a safe default: the
/// host declines politely.
pub trait ClientHandler: Send + Sync + 'static {
    /// Which requests to declare and receive.
    fn features(&self) -> ClientFeatures;

    /// `sampling/createMessage`: return `{role, content, model, stopReason?}`. Default: the
    /// user declined (error code -1, as MCP specifies).
    ///
    /// # Errors
    /// The JSON-RPC error to send back.
    fn create_message(&self, server: &str, params: Value) -> Result<Value, ErrorObject> {
        let _ = (server, params);
        Err(ErrorObject::new(-1, "User rejected sampling request"))
    }

    /// `elicitation/create` (form or URL mode): return `{action: "accept"|"decline"|"cancel",
    /// content?}`. Default: declined.
    ///
    /// # Errors
    /// The JSON-RPC error to send back.
    fn elicit(&self, server: &str, params: Value) -> Result<Value, ErrorObject> {
        let _ = (server, params);
        Ok(json!({ "action": "decline" }))
    }
}

/// A handler as the builder keeps it.
#[derive(Clone)]
pub(crate) struct SharedHandler(pub(crate) Arc<dyn ClientHandler>);

impl fmt::Debug for SharedHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ClientHandler({:?})", self.0.features())
    }
}

/// The host's handler and the way answers get back to the reactor.
#[derive(Clone)]
pub(crate) struct HandlerSlot {
    pub(crate) handler: Arc<dyn ClientHandler>,
    pub(crate) answers: Arc<AnswerQueue>,
    pub(crate) wake: Arc<OwnedFd>,
}

impl fmt::Debug for HandlerSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HandlerSlot")
    }
}

/// An application's answer to server `conn`'s request `id`.
pub(crate) struct Answer {
    pub(crate) conn: u64,
    pub(crate) id: Id,
    pub(crate) outcome: Result<Value, ErrorObject>,
}

/// Answers waiting for the reactor.
pub(crate) type AnswerQueue = crossbeam_queue::SegQueue<Answer>;

impl HandlerSlot {
    /// Runs the handler for one request on a thread of its own; the answer is queued for the
    /// reactor, which is woken.
    pub(crate) fn dispatch(
        &self,
        conn: u64,
        server: Arc<str>,
        id: Id,
        method: String,
        params: Option<Value>,
    ) {
        let slot = self.clone();
        let fallback_id = id.clone();
        let run = move || {
            let params = params.unwrap_or(Value::Null);
            let outcome = match method.as_str() {
                "sampling/createMessage" => slot.handler.create_message(&server, params),
                "elicitation/create" => slot.handler.elicit(&server, params),
                _ => Err(ErrorObject::new(
                    codes::METHOD_NOT_FOUND,
                    format!("Method not found: {method}"),
                )),
            };
            slot.answers.push(Answer { conn, id, outcome });
            crate::uring::sys::eventfd_signal(&slot.wake);
        };
        if let Err(e) = std::thread::Builder::new().name("ringmcp-handler".into()).spawn(run) {
            let error = ErrorObject::new(codes::INTERNAL_ERROR, format!("no handler thread: {e}"));
            self.answers.push(Answer { conn, id: fallback_id, outcome: Err(error) });
            crate::uring::sys::eventfd_signal(&self.wake);
        }
    }
}
