//! Server→client requests (MCP's "client features"): how the application answers
//! `sampling/createMessage` and `elicitation/create`.
//!
//! A host without a handler declares neither capability, so a compliant server never asks
//! (docs/protocol.md, "Server→client input"). With one, each request runs on a thread of its own, so a
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
    pub(crate) conn: super::request::ServerId,
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
        conn: super::request::ServerId,
        server: Arc<str>,
        id: Id,
        method: String,
        params: Option<Value>,
    ) {
        let slot = self.clone();
        spawn_answer(self.handler.clone(), server, method, params, move |outcome| {
            slot.answers.push(Answer { conn, id, outcome });
            crate::uring::sys::eventfd_signal(&slot.wake);
        });
    }
}

/// Runs `handler` on server `server`'s request `method` on a thread of its own (the handler
/// may block on a human) and hands the outcome to `deliver`, on that thread. If no thread can
/// be started, a clone of `deliver` gets an internal error at once, on the caller's thread.
/// Shared by the reactor (stdio servers) and the HTTP connections' threads.
pub(crate) fn spawn_answer(
    handler: Arc<dyn ClientHandler>,
    server: Arc<str>,
    method: String,
    params: Option<Value>,
    deliver: impl FnOnce(Result<Value, ErrorObject>) + Clone + Send + 'static,
) {
    let fallback = deliver.clone();
    let run = move || deliver(answer(&*handler, &server, &method, params));
    if let Err(e) = std::thread::Builder::new().name("ringmcp-handler".into()).spawn(run) {
        fallback(Err(ErrorObject::new(codes::INTERNAL_ERROR, format!("no handler thread: {e}"))));
    }
}

/// The handler's answer to one server request.
fn answer(
    handler: &dyn ClientHandler,
    server: &str,
    method: &str,
    params: Option<Value>,
) -> Result<Value, ErrorObject> {
    let params = params.unwrap_or(Value::Null);
    match method {
        "sampling/createMessage" => handler.create_message(server, params),
        "elicitation/create" => handler.elicit(server, params),
        _ => Err(ErrorObject::new(codes::METHOD_NOT_FOUND, format!("Method not found: {method}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ClientFeatures;

    struct Echo;
    impl ClientHandler for Echo {
        fn features(&self) -> ClientFeatures {
            ClientFeatures { elicitation_form: true, ..ClientFeatures::default() }
        }
        fn elicit(&self, server: &str, params: Value) -> Result<Value, ErrorObject> {
            Ok(json!({"action": "accept", "content": {"server": server, "asked": params}}))
        }
    }

    /// Each request runs on a thread of its own and its outcome reaches `deliver` once;
    /// a method no handler method takes gets -32601, and a default method declines.
    #[test]
    fn spawn_answer_delivers_each_outcome_once() {
        let (tx, rx) = std::sync::mpsc::channel();
        for method in ["elicitation/create", "roots/list", "sampling/createMessage"] {
            let tx = tx.clone();
            let params = Some(json!({"m": method}));
            spawn_answer(Arc::new(Echo), "srv".into(), method.into(), params, move |outcome| {
                tx.send((method, std::thread::current().name().map(str::to_owned), outcome))
                    .unwrap();
            });
        }
        drop(tx);
        let mut answers: Vec<_> = rx.iter().collect();
        answers.sort_by_key(|(method, ..)| *method);
        let threads: Vec<_> = answers.iter().map(|(_, thread, _)| thread.as_deref()).collect();
        assert_eq!(threads, [Some("ringmcp-handler"); 3]);
        let outcomes: Vec<_> = answers.into_iter().map(|(_, _, outcome)| outcome).collect();
        assert_eq!(
            outcomes[0],
            Ok(json!({"action": "accept", "content": {"server": "srv",
                      "asked": {"m": "elicitation/create"}}}))
        );
        assert_eq!(outcomes[1].as_ref().unwrap_err().code, codes::METHOD_NOT_FOUND);
        assert_eq!(outcomes[2].as_ref().unwrap_err().code, -1, "the default declines sampling");
    }
}
