//! The public error type, grouped by who is at fault.

use std::sync::Arc;

use serde_json::json;

use crate::jsonrpc::{ErrorObject, codes};
use crate::protocol::{CloseReason, Fault, RequestError};
use crate::queue::QUEUE_FULL_MESSAGE;
use crate::sandbox::SpawnError;

use super::config::ConfigError;

/// Everything that can go wrong in the host API. [`Error::fault`] says who is at fault:
///
/// * a request to a server did not produce a result: [`Error::Server`], whose
///   [`RequestError`] may be the server's doing ([`Fault::Peer`]: an error answer, a protocol
///   violation, an exit, a timeout), back-pressure ([`Fault::Busy`]), the caller's
///   ([`Fault::Caller`]: too large, not expressible) or an I/O failure ([`Fault::Io`]);
/// * the server never became ready: [`Error::Handshake`];
/// * the server could not be **started**: [`Error::Spawn`] (the sandbox step that failed);
/// * the **caller** misused the API: [`Error::InvalidArgument`], [`Error::Config`];
/// * the host's own machinery failed: [`Error::Spill`], [`Error::Reactor`],
///   [`Error::ReactorStopped`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A request to the server did not produce a result.
    #[error("server {server:?}: {source}")]
    Server {
        /// The server's name.
        server: Arc<str>,
        /// What happened.
        #[source]
        source: RequestError,
    },
    /// The server started but never became ready: its `initialize` handshake failed, or it
    /// exited (or was killed) first. Carries the end of what it wrote to stderr, and for a
    /// sandboxed server how to find out what it needs.
    #[error(transparent)]
    Handshake(Box<StartFailure>),
    /// The server process could not be started.
    #[error("server {server:?}: {source}")]
    Spawn {
        /// The server's name.
        server: Arc<str>,
        /// The failed step.
        #[source]
        source: SpawnError,
    },
    /// The host's policy refused the request: it was not sent to the server.
    #[error("server {server:?}: {denial}")]
    Policy {
        /// The server's name.
        server: Arc<str>,
        /// The rule and the reason.
        #[source]
        denial: crate::policy::Denial,
    },
    /// An argument could not be used (e.g. it does not serialise to a JSON object).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The configuration is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The spill store could not be opened or read.
    #[error("spill store: {0}")]
    Spill(#[source] crate::spill::store::SpillError),
    /// The reactor could not be started (e.g. io_uring is unavailable).
    #[error("starting the io_uring reactor: {0}")]
    Reactor(#[source] std::io::Error),
    /// The host was dropped or its reactor thread died.
    #[error("the host's reactor has stopped")]
    ReactorStopped,
    /// A server started with [`ServerSpec::restart`](super::ServerSpec::restart) went away
    /// while this request was in flight. The request was not re-sent (it may have taken
    /// effect); the server is being restarted ([`ServerEvent::Restarting`](super::ServerEvent::Restarting)).
    #[error(
        "server {server:?} went away during the request ({reason}) and is being restarted; the request was not re-sent: send it again once the server is back if repeating it is safe"
    )]
    Restarted {
        /// The server's name.
        server: Arc<str>,
        /// How its connection ended.
        reason: CloseReason,
    },
    /// A server started with [`ServerSpec::restart`](super::ServerSpec::restart) is down:
    /// being restarted (`retry_after` says when the next start is tried), or given up on after
    /// failing too often in a row (`retry_after` is `None`). Nothing was sent.
    #[error("server {server:?} is not available: {why}")]
    Unavailable {
        /// The server's name.
        server: Arc<str>,
        /// Why, and what to do.
        why: String,
        /// When the next start is tried, while it is being restarted.
        retry_after: Option<std::time::Duration>,
    },
    /// The tool router's indexing failed (a bug: it panicked); the catalog stays as it was and
    /// the next route tries again.
    #[error("the tool router's indexing failed ({0}); the next route indexes again")]
    Router(String),
}

/// Why a server never became ready ([`Error::Handshake`]).
#[derive(Debug, thiserror::Error)]
#[error("server {server:?}: {source}{}", start_context(stderr, hint.as_deref()))]
pub struct StartFailure {
    /// The server's name.
    pub server: Arc<str>,
    /// What happened.
    #[source]
    pub source: RequestError,
    /// The last lines of its stderr (at most [`STDERR_LINES`], each cut at
    /// [`STDERR_LINE_MAX`] characters), oldest first.
    pub stderr: Vec<String>,
    /// For a sandboxed server: how to see what it needs.
    pub hint: Option<String>,
}

impl Error {
    /// Who is at fault, and so who can act on it.
    pub fn fault(&self) -> Fault {
        match self {
            Error::Server { source, .. } => source.fault(),
            Error::Handshake(failure) => failure.source.fault(),
            Error::Restarted { .. } | Error::Unavailable { .. } => Fault::Peer,
            Error::Spawn { source, .. } => spawn_fault(source),
            Error::Policy { denial, .. } if denial.kind == crate::policy::DenialKind::Audit => {
                Fault::Io
            }
            Error::Policy { .. } => Fault::Policy,
            Error::InvalidArgument(_) | Error::Config(_) => Fault::Caller,
            Error::Spill(_) | Error::Reactor(_) | Error::ReactorStopped | Error::Router(_) => {
                Fault::Internal
            }
        }
    }

    /// The request-level error, when the server is at fault.
    pub fn request_error(&self) -> Option<&RequestError> {
        match self {
            Error::Server { source, .. } => Some(source),
            Error::Handshake(failure) => Some(&failure.source),
            _ => None,
        }
    }
}

/// Who is at fault when a server cannot be started: the command or its sandbox settings are
/// the caller's; a sandbox step that failed is the sandbox's (the machine lacks something);
/// starting processes and pipes is the host's.
fn spawn_fault(e: &SpawnError) -> Fault {
    match e {
        SpawnError::Exec { .. } | SpawnError::Plan(_) => Fault::Caller,
        SpawnError::Seccomp(_)
        | SpawnError::LimitsNotEnforced { .. }
        | SpawnError::Cgroup(_)
        | SpawnError::Setup { .. } => Fault::Sandbox,
        _ => Fault::Internal,
    }
}

/// Most stderr lines a [`Error::Handshake`] carries.
pub const STDERR_LINES: usize = 12;
/// Longest stderr line, in characters, a [`Error::Handshake`] carries (longer ones are cut,
/// marked `…`).
pub const STDERR_LINE_MAX: usize = 300;

/// The last [`STDERR_LINES`] non-empty lines of `tail` (lossy UTF-8, each bounded).
pub(crate) fn last_lines(tail: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(tail);
    let lines: Vec<&str> = text.lines().map(str::trim_end).filter(|l| !l.is_empty()).collect();
    lines[lines.len().saturating_sub(STDERR_LINES)..]
        .iter()
        .map(|l| match l.char_indices().nth(STDERR_LINE_MAX) {
            Some((cut, _)) => format!("{}…", &l[..cut]),
            None => (*l).to_owned(),
        })
        .collect()
}

/// The stderr lines and the hint, as the rest of a [`Error::Handshake`] message.
fn start_context(stderr: &[String], hint: Option<&str>) -> String {
    let mut out = String::new();
    if stderr.is_empty() {
        out.push_str("\n  it wrote nothing to stderr");
    } else {
        out.push_str("\n  the end of its stderr:");
        for line in stderr {
            out.push_str("\n    ");
            out.push_str(line);
        }
    }
    if let Some(hint) = hint {
        out.push_str("\n  ");
        out.push_str(hint);
    }
    out
}

/// For a sandboxed server whose start failed: how to see what it needs, saying what network
/// it has.
pub(crate) fn sandbox_hint(command: &str, network: &crate::policy::egress::Network) -> String {
    let net = match network {
        crate::policy::egress::Network::Off => format!(
            "it has no network: let it reach the hosts it needs with \"network\": {{\"allow\": \
             [\"api.example.com\"]}} (`ringmcp sandbox run --network --network-log -- {command}` \
             prints the names it tries)"
        ),
        n => format!(
            "its network: {}; `ringmcp sandbox run --network-log --allow-host HOST -- {command}` \
             prints the names it tries and what was refused",
            n.describe()
        ),
    };
    format!(
        "it ran in the sandbox: `ringmcp sandbox run -- {command}` runs it by hand to see what it \
         needs; give it folders with `--bind DIR` (\"binds\" in its \"sandbox\" config) or a \
         `workspace` (\"workspaceWritable\": true to write there); {net}; or start it with \
         `--no-sandbox` (\"sandbox\": {{\"profile\": \"off\"}})"
    )
}

/// A shorthand for results of the host API.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<&Error> for ErrorObject {
    /// The JSON-RPC error a gateway forwards to its own client for this failure.
    fn from(e: &Error) -> Self {
        if let Error::Policy { denial, .. } = e {
            return ErrorObject::new(denial.code(), e.to_string())
                .with_data(json!({ "rule": denial.rule, "reason": denial.reason }));
        }
        // A supervised server's state, for a client to act on without reading the message:
        // `data.reason` is "restarted" (the request may have taken effect) or "unavailable".
        match e {
            Error::Unavailable { server, retry_after, .. } => {
                let mut data = json!({ "reason": "unavailable", "server": &**server });
                if let Some(after) = retry_after {
                    let secs = (after.as_secs_f64() * 1000.0).ceil() / 1000.0;
                    data["retryAfterSeconds"] = json!(secs);
                }
                return ErrorObject::new(codes::SERVER_ERROR, e.to_string()).with_data(data);
            }
            Error::Restarted { server, .. } => {
                let data = json!({ "reason": "restarted", "server": &**server });
                return ErrorObject::new(codes::SERVER_ERROR, e.to_string()).with_data(data);
            }
            _ => {}
        }
        let code = match e.request_error() {
            Some(RequestError::Rpc(obj)) => return obj.clone(),
            Some(RequestError::QueueFull { retry_after, .. }) => {
                let secs = (retry_after.as_secs_f64() * 1000.0).ceil() / 1000.0;
                return ErrorObject::new(codes::SERVER_ERROR, QUEUE_FULL_MESSAGE)
                    .with_data(json!({ "retryAfterSeconds": secs }));
            }
            Some(RequestError::Timeout { .. }) => codes::REQUEST_TIMEOUT,
            Some(RequestError::RequestTooLarge { .. }) => codes::INVALID_PARAMS,
            Some(RequestError::Closed(_) | RequestError::TooManyPending(_)) => codes::SERVER_ERROR,
            Some(_) => codes::INTERNAL_ERROR,
            None if matches!(e, Error::InvalidArgument(_)) => codes::INVALID_PARAMS,
            None => codes::INTERNAL_ERROR,
        };
        ErrorObject::new(code, e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stderr_tail_is_bounded_and_the_message_complete() {
        let mut tail = Vec::new();
        for i in 0..40 {
            tail.extend_from_slice(format!("line {i}\n\n").as_bytes());
        }
        tail.extend_from_slice(&[b'x'; 1000]);
        tail.extend_from_slice(b"\xff\xfe not utf-8\n");
        let lines = last_lines(&tail);
        assert_eq!(lines.len(), STDERR_LINES);
        assert_eq!(lines[0], "line 29");
        let last = lines.last().unwrap();
        assert!(last.ends_with('…') && last.chars().count() == STDERR_LINE_MAX + 1, "{last}");
        let e = Error::Handshake(Box::new(StartFailure {
            server: "v".into(),
            source: RequestError::Closed(crate::protocol::CloseReason::Exited(1)),
            stderr: vec!["Traceback".into(), "PermissionError: '/x/trace'".into()],
            hint: Some(sandbox_hint("python3 server.py", &Default::default())),
        }));
        let text = e.to_string();
        assert!(text.starts_with("server \"v\": server process exited with status 1\n"), "{text}");
        assert!(text.contains("\n    PermissionError: '/x/trace'\n"), "{text}");
        assert!(text.contains("`ringmcp sandbox run -- python3 server.py`"), "{text}");
        assert!(text.contains("it has no network"), "{text}");
        let on = sandbox_hint("x", &crate::policy::egress::Network::allow(["a.example"]).unwrap());
        assert!(on.contains("its network: allow a.example"), "{on}");
        assert!(e.request_error().is_some());
        let quiet = Error::Handshake(Box::new(StartFailure {
            server: "q".into(),
            source: RequestError::NotInitialized,
            stderr: Vec::new(),
            hint: None,
        }));
        assert!(quiet.to_string().ends_with("it wrote nothing to stderr"), "{quiet}");
    }

    /// Each error says whose fault it is; an I/O failure keeps its `io::Error` as its source.
    #[test]
    fn errors_say_who_is_at_fault_and_keep_their_causes() {
        use crate::protocol::CloseReason;
        use std::time::Duration;
        let server = |source| Error::Server { server: "s".into(), source };
        let rpc = RequestError::Rpc(ErrorObject::new(-32603, "boom"));
        assert_eq!(server(rpc).fault(), Fault::Peer);
        let full = RequestError::QueueFull { limit: 1, retry_after: Duration::from_secs(1) };
        assert_eq!(server(full).fault(), Fault::Busy);
        assert_eq!(server(RequestError::TooManyPending(9)).fault(), Fault::Busy);
        let large = RequestError::RequestTooLarge { len: 10, max: 1 };
        assert_eq!(server(large).fault(), Fault::Caller);
        let exited = RequestError::Closed(CloseReason::Exited(1));
        assert_eq!(server(exited).fault(), Fault::Peer);
        let epipe = std::io::Error::from_raw_os_error(libc::EPIPE);
        let reason = CloseReason::io_error("writing to stdin", epipe);
        let CloseReason::Io(failure) = &reason else { unreachable!() };
        assert_eq!(failure.raw_os_error(), Some(libc::EPIPE));
        assert_eq!(failure.what(), "writing to stdin");
        let cause = std::error::Error::source(failure).expect("the io::Error is kept");
        assert!(cause.downcast_ref::<std::io::Error>().is_some());
        assert!(reason.to_string().ends_with("writing to stdin: Broken pipe (os error 32)"));
        assert_eq!(server(RequestError::Closed(reason)).fault(), Fault::Io);
        let exec = SpawnError::Exec {
            program: "nope".into(),
            source: std::io::Error::from_raw_os_error(libc::ENOENT),
        };
        assert_eq!(Error::Spawn { server: "s".into(), source: exec }.fault(), Fault::Caller);
        assert_eq!(Error::InvalidArgument("x".into()).fault(), Fault::Caller);
        assert_eq!(Error::ReactorStopped.fault(), Fault::Internal);
    }
}
