//! The public error type, grouped by who is at fault.

use std::sync::Arc;

use serde_json::json;

use crate::jsonrpc::{ErrorObject, codes};
use crate::protocol::RequestError;
use crate::queue::QUEUE_FULL_MESSAGE;
use crate::sandbox::SpawnError;

use super::config::ConfigError;

/// Everything that can go wrong in the host API.
///
/// * the **server** misbehaved, failed or went away: [`Error::Server`];
/// * the server could not be **started**: [`Error::Spawn`];
/// * the **caller** misused the API: [`Error::InvalidArgument`], [`Error::Config`];
/// * the host's own machinery failed: [`Error::Reactor`], [`Error::ReactorStopped`].
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
    /// The server process could not be started.
    #[error("server {server:?}: {source}")]
    Spawn {
        /// The server's name.
        server: Arc<str>,
        /// The failed step.
        #[source]
        source: SpawnError,
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
}

impl Error {
    /// The request-level error, when the server is at fault.
    pub fn request_error(&self) -> Option<&RequestError> {
        match self {
            Error::Server { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// A shorthand for results of the host API.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<&Error> for ErrorObject {
    /// The JSON-RPC error a gateway forwards to its own client for this failure.
    fn from(e: &Error) -> Self {
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
