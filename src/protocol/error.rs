//! Errors of the MCP session layer.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::jsonrpc::{ErrorObject, Id};

/// How a server process or its stdout ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CloseReason {
    /// The process exited with this code.
    Exited(i32),
    /// The process was killed by this signal.
    Signaled(i32),
    /// The server closed its stdout (the process may still be running).
    StdoutClosed,
    /// The host shut the server down.
    Shutdown,
    /// The handshake (`initialize`, or the `server/discover` probe) failed, with this error.
    HandshakeFailed(Box<RequestError>),
    /// The host could not keep talking to the server (an I/O error on its pipes or its HTTP
    /// connection).
    Io(IoFailure),
    /// The sandbox's OOM killer stopped the server at its memory limit (given as enforced).
    OutOfMemory(String),
    /// A server the host restarts failed this many times in a row and is not restarted
    /// again; `last` is the last failure.
    GaveUp {
        /// Failures in a row.
        failures: u32,
        /// The last one.
        last: String,
    },
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CloseReason::Exited(code) => write!(f, "server process exited with status {code}"),
            CloseReason::Signaled(sig) => write!(f, "server process was killed by signal {sig}"),
            CloseReason::StdoutClosed => f.write_str("server closed its stdout"),
            CloseReason::Shutdown => f.write_str("server was shut down by the host"),
            CloseReason::HandshakeFailed(error) => {
                write!(f, "initialize handshake failed: {error}")
            }
            CloseReason::Io(why) => write!(f, "I/O error talking to the server: {why}"),
            CloseReason::OutOfMemory(limit) => {
                write!(f, "server was OOM-killed at its sandbox memory limit ({limit})")
            }
            CloseReason::GaveUp { failures, last } => write!(
                f,
                "server failed {failures} times in a row and is not restarted again (last: {last}); fix what that says and start it again"
            ),
        }
    }
}

impl CloseReason {
    /// An I/O failure described by `what` alone (e.g. "the server closed its stdin").
    pub fn io(what: impl Into<String>) -> Self {
        CloseReason::Io(IoFailure::new(what))
    }

    /// An I/O failure: `what` the host was doing, and the error that stopped it.
    pub fn io_error(
        what: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        CloseReason::Io(IoFailure::caused_by(what, source))
    }
}

/// An I/O failure on a server's connection: what the host was doing, and the underlying error
/// (an `io::Error`, an HTTP transport error, ...), kept as the error's `source`.
#[derive(Debug, Clone)]
pub struct IoFailure {
    what: String,
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl IoFailure {
    /// A failure described by `what` alone.
    pub fn new(what: impl Into<String>) -> Self {
        IoFailure { what: what.into(), source: None }
    }

    /// A failure of `what`, caused by `source`.
    pub fn caused_by(
        what: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        IoFailure { what: what.into(), source: Some(Arc::new(source)) }
    }

    /// What the host was doing.
    pub fn what(&self) -> &str {
        &self.what
    }

    /// The OS error number, when the cause is an `io::Error` that has one.
    pub fn raw_os_error(&self) -> Option<i32> {
        let source: &(dyn std::error::Error + 'static) = self.source.as_deref()?;
        source.downcast_ref::<std::io::Error>().and_then(std::io::Error::raw_os_error)
    }
}

impl From<&str> for IoFailure {
    fn from(what: &str) -> Self {
        IoFailure::new(what)
    }
}

impl From<String> for IoFailure {
    fn from(what: String) -> Self {
        IoFailure::new(what)
    }
}

impl fmt::Display for IoFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Some(source) => write!(f, "{}: {source}", self.what),
            None => f.write_str(&self.what),
        }
    }
}

impl std::error::Error for IoFailure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Two failures are the same when they say the same (the cause compared by its message).
impl PartialEq for IoFailure {
    fn eq(&self, other: &Self) -> bool {
        self.what == other.what
            && self.source.as_ref().map(ToString::to_string)
                == other.source.as_ref().map(ToString::to_string)
    }
}

impl Eq for IoFailure {}

/// Who is at fault when something fails, and so who can do something about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Fault {
    /// The server: it answered with an error, broke the protocol, went away or took too long.
    Peer,
    /// The server is busy: back-pressure; the same request may succeed later.
    Busy,
    /// The caller: a request that cannot be sent as asked (too large, wrong shape, not
    /// expressible in the negotiated revision, before the handshake).
    Caller,
    /// The host's policy refused it.
    Policy,
    /// The sandbox could not be set up.
    Sandbox,
    /// An I/O failure between the host and the server.
    Io,
    /// The host itself (its reactor, its spill store).
    Internal,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Fault::Peer => "the server",
            Fault::Busy => "back-pressure",
            Fault::Caller => "the caller",
            Fault::Policy => "the host's policy",
            Fault::Sandbox => "the sandbox",
            Fault::Io => "I/O",
            Fault::Internal => "the host",
        })
    }
}

/// Why one request did not get a result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// The server answered with a JSON-RPC error object.
    #[error("server returned error: {0}")]
    Rpc(ErrorObject),
    /// No answer within the request's deadline.
    #[error("{method} timed out after {after:?}")]
    Timeout {
        /// The request's method.
        method: String,
        /// How long we waited.
        after: Duration,
    },
    /// The answer was a line longer than the frame limit; it was discarded.
    #[error("the answer ({len} bytes) exceeds the {max}-byte frame limit and was discarded")]
    FrameTooLarge {
        /// Length of the discarded line.
        len: u64,
        /// The limit in force.
        max: usize,
    },
    /// The server went away before answering.
    #[error("{0}")]
    Closed(CloseReason),
    /// The session is not initialized yet (only `ping` may be sent before).
    #[error("the session is not initialized yet")]
    NotInitialized,
    /// The server already has its limit of requests outstanding; retry after `retry_after`.
    /// Maps to JSON-RPC -32000 "Server queue limit reached. Backpressure applied." with
    /// `data.retryAfterSeconds`.
    #[error(
        "server queue limit ({limit} outstanding requests) reached; back-pressure applied, retry after {retry_after:?}"
    )]
    QueueFull {
        /// The per-server limit.
        limit: usize,
        /// Estimated from the server's recent service rate.
        retry_after: Duration,
    },
    /// The request is larger than the server accepts; it was not sent (the TypeScript SDK's
    /// servers exit on an 11 MB line, which would fail every other request too).
    #[error("request of {len} bytes exceeds this server's {max}-byte request limit; not sent")]
    RequestTooLarge {
        /// The serialised request's size.
        len: usize,
        /// The limit in force.
        max: usize,
    },
    /// An oversized answer could not be streamed to the spill store (quota exhausted, disk
    /// full, malformed JSON, ...). The stream resynchronised at the next line.
    #[error("the answer could not be spilled: {reason}")]
    SpillFailed {
        /// What went wrong.
        reason: String,
    },
    /// The pending-request table is full.
    #[error("too many requests in flight (limit {0})")]
    TooManyPending(usize),
    /// The server chose a protocol version we do not speak.
    #[error(
        "server answered protocol version {answered:?}, which ringmcp does not support (offered {offered})"
    )]
    UnsupportedVersion {
        /// What we offered.
        offered: &'static str,
        /// What the server answered.
        answered: String,
    },
    /// The server needs input this client cannot give to complete the request (2026-07-28
    /// `input_required`: a capability that is not declared, an input the application refused
    /// or failed to produce, or too many rounds).
    #[error("{method} needs {input} from the client, which it did not get: {reason}")]
    InputNotProvided {
        /// The request's method.
        method: String,
        /// What the server asked for (`elicitation/create`, `sampling/createMessage`, ...).
        input: String,
        /// Why it was not provided.
        reason: String,
    },
    /// The server cancelled the task running the request (MCP 2025-11-25 tasks) before it
    /// produced a result.
    #[error("{method}: the server cancelled task {task}: {reason}")]
    TaskCancelled {
        /// The request's method.
        method: String,
        /// The server's id of the task.
        task: String,
        /// The server's status message, if any.
        reason: String,
    },
    /// The request cannot be expressed in the negotiated revision (e.g. params that are not
    /// an object in 2026-07-28, where every request carries `_meta`); nothing was sent.
    #[error("{method} cannot be sent: {reason}")]
    InvalidRequest {
        /// The request's method.
        method: String,
        /// Why.
        reason: String,
    },
    /// `resources/read` of a resource the server does not have: -32002 up to 2025-11-25,
    /// -32602 in 2026-07-28 (which clients still accept -32002 from).
    #[error("resource not found: {uri} ({error})")]
    ResourceNotFound {
        /// The URI asked for.
        uri: String,
        /// The server's error.
        error: ErrorObject,
    },
    /// The server's answer did not have the shape MCP requires.
    #[error("malformed {method} result: {reason}")]
    MalformedResult {
        /// The request's method.
        method: String,
        /// What was wrong.
        reason: String,
    },
}

impl RequestError {
    /// Who is at fault.
    pub fn fault(&self) -> Fault {
        match self {
            RequestError::Rpc(_)
            | RequestError::Timeout { .. }
            | RequestError::FrameTooLarge { .. }
            | RequestError::UnsupportedVersion { .. }
            | RequestError::ResourceNotFound { .. }
            | RequestError::MalformedResult { .. }
            | RequestError::TaskCancelled { .. }
            | RequestError::InputNotProvided { .. } => Fault::Peer,
            RequestError::Closed(CloseReason::Io(_)) => Fault::Io,
            RequestError::Closed(CloseReason::Shutdown) => Fault::Caller,
            RequestError::Closed(_) => Fault::Peer,
            RequestError::QueueFull { .. } | RequestError::TooManyPending(_) => Fault::Busy,
            RequestError::NotInitialized
            | RequestError::RequestTooLarge { .. }
            | RequestError::InvalidRequest { .. } => Fault::Caller,
            RequestError::SpillFailed { .. } => Fault::Internal,
        }
    }
}

/// Something the server sent that breaks the protocol. Reported as an event and counted; the
/// session carries on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Violation {
    /// A stdout line that is not JSON.
    #[error("non-JSON line on stdout ({len} bytes, starts {preview:?}): {error}")]
    NotJson {
        /// Parser message.
        error: String,
        /// Length of the line.
        len: usize,
        /// Its first bytes, lossily decoded.
        preview: String,
    },
    /// JSON that is not a JSON-RPC 2.0 message.
    #[error("invalid JSON-RPC message: {0}")]
    InvalidMessage(String),
    /// A response whose id matches no pending request.
    #[error("response to unknown request id {0}")]
    UnknownResponse(Id),
    /// An error response with a null id (the server could not read one of our messages).
    #[error("error response without id: {0}")]
    ErrorWithoutId(ErrorObject),
    /// An oversized line whose id could not be found.
    #[error("discarded an oversized line of {len} bytes (limit {max}) with no recognisable id")]
    OversizedWithoutId {
        /// Length of the discarded line.
        len: u64,
        /// The limit in force.
        max: usize,
    },
    /// The stream ended inside a line.
    #[error("stdout ended inside an unterminated line of {0} bytes")]
    TruncatedLine(u64),
}
