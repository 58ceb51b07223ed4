//! JSON-RPC error objects, standard codes, and decode errors.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Error codes: JSON-RPC 2.0's reserved ones and those MCP defines.
pub mod codes {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object (MCP also uses it for requests before
    /// `initialize`).
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal JSON-RPC error.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// Implementation-defined server error; MCP hosts use it for back-pressure ("Server queue
    /// limit reached") with `data.retryAfterSeconds`.
    pub const SERVER_ERROR: i64 = -32000;
    /// The request timed out (as the TypeScript SDK reports it).
    pub const REQUEST_TIMEOUT: i64 = -32001;
    /// MCP: resource not found (2024-11-05 … 2025-11-25).
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// MCP 2025-11-25: URL-mode elicitation required.
    pub const URL_ELICITATION_REQUIRED: i64 = -32042;
    /// MCP 2026-07-28: the HTTP headers do not match the body (HTTP 400).
    pub const HEADER_MISMATCH: i64 = -32020;
    /// MCP 2026-07-28: the request needs a client capability it did not declare
    /// (`data.requiredCapabilities`).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// MCP 2026-07-28: the request's protocol version is not supported (`data.supported`,
    /// `data.requested`).
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

/// A JSON-RPC error object (`{"code", "message", "data"?}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The integer code (see [`codes`]).
    pub code: i64,
    /// A short description.
    pub message: String,
    /// Extra information, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error object without data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject { code, message: message.into(), data: None }
    }

    /// The same object with `data` set.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
}

impl fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (code {})", self.message, self.code)?;
        if let Some(data) = &self.data {
            write!(f, ", data: {data}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ErrorObject {}

/// Why a frame is not a JSON-RPC message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// Not valid JSON (the parser's message).
    #[error("not JSON: {0}")]
    Json(String),
    /// Valid JSON, but not a JSON-RPC 2.0 message.
    #[error("not a JSON-RPC 2.0 message: {0}")]
    Invalid(&'static str),
}

impl DecodeError {
    /// The JSON-RPC code a receiver answers with (-32700 or -32600).
    pub fn code(&self) -> i64 {
        match self {
            DecodeError::Json(_) => codes::PARSE_ERROR,
            DecodeError::Invalid(_) => codes::INVALID_REQUEST,
        }
    }
}

impl From<&DecodeError> for ErrorObject {
    fn from(e: &DecodeError) -> Self {
        ErrorObject::new(e.code(), e.to_string())
    }
}
