//! The one road of every request a [`Client`] sends: past the gate (a [`Permit`]), the size
//! bound, the queue's admission, then the reactor; and the futures that wait for the answer
//! (dropping one cancels its request).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use futures_channel::oneshot;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::jsonrpc::RawJson;
use crate::parse::{JsonParser, Parser};
use crate::protocol::{CloseReason, Progress, RequestError, Tool};
use crate::queue::QueueFull;

use super::super::RequestSink;
use super::super::error::{Error, Result};
use super::super::gate::{self, Permit, Request};
use super::super::pump::ServerCommand;
use super::super::request::{QueuedRequest, Reply, ServerId};
use super::{Client, malformed};

/// How a request gets past its client's gate: decided when it is sent, or decided before
/// (a call's permit, after any approval it needed).
pub(crate) enum Pass {
    /// Decide it now (it cannot wait for an approval).
    Check,
    /// Already decided.
    Permitted(Permit),
}

/// The future of one request's `result` as a `serde_json::Value` (parsed on the thread that
/// polls it, not on the reactor).
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct ResponseFuture {
    raw: RawFuture,
    spilled: Arc<super::super::spilling::SpillRegistry>,
    method: Box<str>,
    parser: JsonParser,
}

impl Future for ResponseFuture {
    type Output = Result<Value>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        Pin::new(&mut this.raw).poll(cx).map(|r| {
            let mut raw = r?;
            this.spilled.adopt(raw.take_attachments());
            Parser::new(this.parser)
                .result(raw)
                .map_err(|e| malformed(&this.raw.server, &this.method, e.to_string()))
        })
    }
}

/// The future of one request's raw `result`. Dropping it before the answer cancels the
/// request: the server is sent `notifications/cancelled` and a late answer is discarded.
#[derive(Debug)]
struct RawFuture {
    state: Waiting,
    server: Arc<str>,
    /// The server is restarted when it goes away: its end is [`Error::Restarted`].
    supervised: bool,
}

#[derive(Debug)]
enum Waiting {
    /// Sent; the reactor completes the channel.
    Reply(oneshot::Receiver<Result<RawJson, RequestError>>, CancelOnDrop),
    /// Refused before sending; taken when polled.
    Refused(Option<Error>),
    /// The outcome was delivered.
    Done,
}

/// Tells the reactor that the caller of request `seq` stopped waiting.
#[derive(Debug)]
struct CancelOnDrop {
    reactor: Arc<dyn RequestSink>,
    server: ServerId,
    seq: u64,
}

impl Drop for RawFuture {
    fn drop(&mut self) {
        if let Waiting::Reply(_, cancel) = &self.state {
            cancel.reactor.send(cancel.server, ServerCommand::Cancel { seq: cancel.seq });
        }
    }
}

impl Future for RawFuture {
    type Output = Result<RawJson>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let server = self.server.clone();
        match &mut self.state {
            Waiting::Refused(error) => {
                Poll::Ready(Err(error.take().unwrap_or(Error::ReactorStopped)))
            }
            Waiting::Reply(rx, _) => {
                let outcome = ready!(Pin::new(rx).poll(cx));
                self.state = Waiting::Done;
                Poll::Ready(match outcome {
                    Ok(Ok(v)) => Ok(v),
                    Ok(Err(RequestError::Closed(reason)))
                        if self.supervised && reason != crate::protocol::CloseReason::Shutdown =>
                    {
                        Err(Error::Restarted { server, reason })
                    }
                    Ok(Err(source)) => Err(Error::Server { server, source }),
                    Err(oneshot::Canceled) => Err(Error::ReactorStopped),
                })
            }
            Waiting::Done => Poll::Ready(Err(Error::ReactorStopped)),
        }
    }
}

impl Client {
    /// Sends any request and returns its raw `result`. `timeout` overrides the default.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `params` is not a JSON object; [`Error::Server`] when the
    /// server answers with an error, times out, or goes away.
    pub fn request(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Option<Duration>,
    ) -> ResponseFuture {
        self.request_with(method, params, timeout, Pass::Check)
    }

    /// [`request`](Self::request), past the gate as `pass` says.
    pub(crate) fn request_with(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Option<Duration>,
        pass: Pass,
    ) -> ResponseFuture {
        let raw = self.send(method, params.map(Params::Value), timeout, None, pass);
        let spilled = self.inner().spilled.clone();
        ResponseFuture { raw, spilled, method: method.into(), parser: self.inner().parser }
    }

    /// Queues a request; the future yields its raw `result`. Every request of this client goes
    /// through here, and so past the gate: a `tools/call` already decided by [`ToolCall`]
    /// (which waits for approval when one is needed) comes with its permit; any other request
    /// is decided here, a raw `tools/call` against the cached tool list (it cannot wait for an
    /// approval: that is `Client::call`'s).
    fn send(
        &self,
        method: &str,
        params: Option<Params>,
        timeout: Option<Duration>,
        progress: Option<async_channel::Sender<Progress>>,
        pass: Pass,
    ) -> RawFuture {
        let server = self.inner().name.clone();
        let refused = |error| RawFuture {
            state: Waiting::Refused(Some(error)),
            server: server.clone(),
            supervised: false,
        };
        let (permit, params) = match pass {
            Pass::Permitted(permit) => (permit, params),
            // Nothing to check: the params go as they are, already encoded or not.
            Pass::Check if self.inner().gate.is_none() => {
                match gate::check_now(None, Request::Method { method, params: None }) {
                    Ok(permit) => (permit, params),
                    Err(denial) => {
                        return refused(Error::Policy { server: server.clone(), denial });
                    }
                }
            }
            Pass::Check => {
                let mut params = match params.map(Params::into_value).transpose() {
                    Ok(params) => params,
                    Err(e) => return refused(e),
                };
                match self.pass_gate(method, &mut params) {
                    Ok(permit) => (permit, params.map(Params::Value)),
                    Err(denial) => {
                        return refused(Error::Policy { server: server.clone(), denial });
                    }
                }
            }
        };
        self.queue(method, params, timeout, progress, permit)
    }

    /// Queues a request the gate let through.
    fn queue(
        &self,
        method: &str,
        params: Option<Params>,
        timeout: Option<Duration>,
        progress: Option<async_channel::Sender<Progress>>,
        _permit: Permit,
    ) -> RawFuture {
        let server = self.inner().name.clone();
        let params = match params.map(Params::into_raw).transpose() {
            Ok(p) => p,
            Err(e) => {
                return RawFuture { state: Waiting::Refused(Some(e)), server, supervised: false };
            }
        };
        let refuse = |source| RawFuture {
            state: Waiting::Refused(Some(Error::Server { server: server.clone(), source })),
            server: server.clone(),
            supervised: false,
        };
        // The envelope around the params adds well under 256 bytes.
        let len = params.as_ref().map_or(0, |p| p.get().len()) + method.len() + 64;
        if len > self.inner().max_request {
            return refuse(RequestError::RequestTooLarge { len, max: self.inner().max_request });
        }
        let inner = self.inner();
        let queue = &inner.queue;
        if let Some(reason) = queue.closed() {
            if let Some(s) = self.supervision().filter(|_| *reason != CloseReason::Shutdown) {
                let error = s.unavailable(reason);
                return RawFuture {
                    state: Waiting::Refused(Some(error)),
                    server,
                    supervised: false,
                };
            }
            return refuse(RequestError::Closed(reason.clone()));
        }
        let ticket = match queue.admit() {
            Ok(ticket) => ticket,
            Err(QueueFull { limit, retry_after }) => {
                return refuse(RequestError::QueueFull { limit, retry_after });
            }
        };
        let (tx, rx) = oneshot::channel();
        // Relaxed: the counter only needs to hand out distinct values.
        let seq = self.inner().next_request_seq.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut reply = Reply { tx, ticket, seq };
        // An idle server's request is written here, on the caller's thread (lane.rs); one
        // with a progress stream takes the queue (the session shapes its params).
        let direct = match (&inner.lane, &progress) {
            (Some(lane), None) => lane.try_send(method, params.as_deref(), timeout, reply),
            _ => Err(reply),
        };
        if let Err(queued) = direct {
            reply = queued;
            if queue.push(QueuedRequest { method: method.into(), params, timeout, reply, progress })
            {
                self.inner().reactor.schedule(queue.clone());
            }
        }
        let cancel =
            CancelOnDrop { reactor: self.inner().reactor.clone(), server: self.inner().id, seq };
        RawFuture { state: Waiting::Reply(rx, cancel), server, supervised: inner.supervised }
    }

    /// The gate's decision on a request [`send`](Self::send) is about to queue (credentials
    /// in a call's arguments redacted in place when the policy says so).
    fn pass_gate(
        &self,
        method: &str,
        params: &mut Option<Value>,
    ) -> std::result::Result<Permit, crate::policy::Denial> {
        let inner = self.inner();
        let gate = inner.gate.as_deref();
        if method != "tools/call" || gate.is_none() {
            return gate::check_now(gate, Request::Method { method, params: params.as_ref() });
        }
        let list = self.fresh_cached_tools();
        let mut call = params.as_mut().and_then(Value::as_object_mut);
        let name = call.as_ref().and_then(|p| p.get("name")).and_then(Value::as_str);
        let name = name.unwrap_or_default().to_owned();
        let given = call.as_mut().and_then(|p| p.get_mut("arguments"));
        let mut arguments = given.map_or_else(|| json!({}), Value::take);
        let request = Request::Call { list: list.as_ref(), name: &name, arguments: &mut arguments };
        let decided = gate::check_now(gate, request);
        if let Some(call) = call
            && call.contains_key("arguments")
        {
            call.insert("arguments".into(), arguments);
        }
        decided
    }

    /// The cached tool list, if one was fetched and no `list_changed` came since.
    fn fresh_cached_tools(&self) -> Option<Arc<Vec<Tool>>> {
        let inner = self.inner();
        let cache = inner.cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let cached = cache.tools.as_ref()?;
        let now = self.inner().lists.tools.load(std::sync::atomic::Ordering::Acquire);
        (cached.epoch == now).then(|| cached.list.clone())
    }

    /// The gate's permit for a request that never waits for approval.
    pub(super) fn pass(&self, request: Request<'_>) -> Result<Permit> {
        gate::check_now(self.inner().gate.as_deref(), request)
            .map_err(|denial| Error::Policy { server: self.inner().name.clone(), denial })
    }

    /// Hands the reactor a command the gate let through.
    pub(super) fn command(&self, command: ServerCommand, _permit: Permit) {
        self.in_order(command);
    }

    /// Hands the reactor a command. One whose effect on the server must come before any
    /// request sent after it ([`ServerCommand::ordered`]) holds the lane first, so those
    /// requests take the queue, which the reactor drains after its commands (and lends again
    /// once the command's bytes are written).
    pub(super) fn in_order(&self, command: ServerCommand) {
        if command.ordered()
            && let Some(lane) = &self.inner().lane
        {
            lane.hold();
        }
        self.inner().reactor.send(self.inner().id, command);
    }

    /// Sends now; the returned future parses the raw result straight into `T` on the thread
    /// that polls it (no intermediate `Value`).
    pub(super) fn typed<T: DeserializeOwned>(
        &self,
        method: &'static str,
        params: Result<Value>,
        timeout: Option<Duration>,
    ) -> impl Future<Output = Result<T>> + Send + 'static {
        self.typed_with_progress(method, params.map(Params::Value), timeout, None, Pass::Check)
    }

    pub(super) fn typed_with_progress<T: DeserializeOwned>(
        &self,
        method: &'static str,
        params: Result<Params>,
        timeout: Option<Duration>,
        progress: Option<async_channel::Sender<Progress>>,
        pass: Pass,
    ) -> impl Future<Output = Result<T>> + Send + 'static {
        let sent = params.map(|p| self.send(method, Some(p), timeout, progress, pass));
        let (server, parser) = (self.inner().name.clone(), self.inner().parser);
        let spilled = self.inner().spilled.clone();
        async move {
            let mut raw = sent?.await?;
            spilled.adopt(raw.take_attachments());
            Parser::new(parser).result(raw).map_err(|e| malformed(&server, method, e.to_string()))
        }
    }
}

/// A request's params: a tree, or already encoded (a call's, written straight from its name
/// and arguments, so no map is built only to be serialised).
pub(crate) enum Params {
    /// To be checked as a tree (by a gate deciding the request) and encoded when queued.
    Value(Value),
    /// Encoded; always a JSON object.
    Raw(Box<RawValue>),
}

impl Params {
    /// The tree, parsing encoded params back (only a gate deciding a raw request needs it).
    fn into_value(self) -> Result<Value> {
        match self {
            Params::Value(v) => Ok(v),
            Params::Raw(raw) => serde_json::from_str(raw.get())
                .map_err(|e| Error::InvalidArgument(format!("params are not JSON: {e}"))),
        }
    }

    /// The encoded params, which must be an object.
    fn into_raw(self) -> Result<Box<RawValue>> {
        match self {
            Params::Raw(raw) => Ok(raw),
            Params::Value(params) => {
                if !params.is_object() {
                    return Err(Error::InvalidArgument(format!(
                        "params must be a JSON object, got {params}"
                    )));
                }
                Ok(RawValue::from_string(params.to_string()).expect("serde_json output is JSON"))
            }
        }
    }
}
