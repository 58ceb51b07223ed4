//! The HTTP transports' error type: one variant per failure, grouped by who is at fault.

use std::time::Duration;

use super::sse::SseError;

/// A boxed lower-level error (the HTTP client's), kept opaque so that it is not part of the API.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why an HTTP transport operation failed.
///
/// * Caller misuse or configuration: [`InvalidUrl`](Self::InvalidUrl),
///   [`InvalidHeader`](Self::InvalidHeader), [`InvalidMessage`](Self::InvalidMessage),
///   [`Closed`](Self::Closed).
/// * Local setup: [`Client`](Self::Client).
/// * Network: [`Connect`](Self::Connect), [`Body`](Self::Body), [`Timeout`](Self::Timeout).
/// * The server misbehaved or refused: [`Status`](Self::Status),
///   [`ContentType`](Self::ContentType), [`Sse`](Self::Sse),
///   [`MessageTooLarge`](Self::MessageTooLarge), [`LegacyHandshake`](Self::LegacyHandshake),
///   [`InvalidSessionId`](Self::InvalidSessionId), [`StreamEnded`](Self::StreamEnded).
/// * Protocol state: [`SessionExpired`](Self::SessionExpired) (re-initialize).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The configured URL does not parse, or is not `http`/`https`.
    #[error("invalid MCP server URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL as configured.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A configured header has an invalid name or value.
    #[error("invalid HTTP header {name:?}: {reason}")]
    InvalidHeader {
        /// The header name as configured.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The bytes given to `send` are not one JSON-RPC message (a JSON object or batch array).
    #[error("not a JSON-RPC message: {reason}")]
    InvalidMessage {
        /// What is wrong with them.
        reason: String,
    },
    /// The transport was closed (by `close`, or its thread ended).
    #[error("HTTP transport closed")]
    Closed,
    /// Building the HTTP client (TLS set-up) failed.
    #[error("building the HTTP client: {}", chain(.source))]
    Client {
        /// The client builder's error.
        #[source]
        source: BoxError,
    },
    /// The request could not be sent or no response head arrived (DNS, refused, TLS, reset).
    #[error("{method} {url}: {}", chain(.source))]
    Connect {
        /// `POST`, `GET` or `DELETE`.
        method: &'static str,
        /// The URL requested.
        url: String,
        /// The HTTP client's error.
        #[source]
        source: BoxError,
    },
    /// Reading a response body failed midway.
    #[error("reading the {method} response body: {}", chain(.source))]
    Body {
        /// `POST`, `GET` or `DELETE`.
        method: &'static str,
        /// The HTTP client's error.
        #[source]
        source: BoxError,
    },
    /// No answer within the configured time.
    #[error("{step}: no answer within {after:?}")]
    Timeout {
        /// What was being waited for.
        step: &'static str,
        /// The limit that ran out.
        after: Duration,
    },
    /// The server refused a request for want of authorization (401, or 403
    /// `insufficient_scope`) and OAuth is not configured, or did not help.
    #[error("the server requires authorization (HTTP {status}{})", scope_note(challenge))]
    Unauthorized {
        /// 401 or 403.
        status: u16,
        /// What its `WWW-Authenticate` said.
        challenge: super::oauth::challenge::Challenge,
    },
    /// The OAuth flow failed at `step`: what went wrong, and the error that caused it when
    /// there is one (the HTTP client's, a URL's).
    #[error("OAuth {step} failed: {}", oauth_cause(reason, source.as_deref()))]
    OAuth {
        /// The step.
        step: OAuthStep,
        /// What went wrong (may be empty when `source` says it all).
        reason: String,
        /// The underlying error.
        #[source]
        source: Option<BoxError>,
    },
    /// The server answered with a non-success status.
    #[error("{method} answered HTTP {status}: {body}")]
    Status {
        /// `POST`, `GET` or `DELETE`.
        method: &'static str,
        /// The HTTP status code.
        status: u16,
        /// The start of the response body (lossy UTF-8, at most 4 KiB): for a JSON-RPC error
        /// body, the caller may parse it (era detection, `-32020`, …).
        body: String,
    },
    /// A success response of a type the transport cannot read.
    #[error("unexpected response Content-Type {content_type:?} for {method}")]
    ContentType {
        /// `POST` or `GET`.
        method: &'static str,
        /// The Content-Type received (empty when absent).
        content_type: String,
    },
    /// The server's event stream could not be parsed.
    #[error("SSE stream: {0}")]
    Sse(#[from] SseError),
    /// A JSON response body exceeded the configured maximum message size.
    #[error("server message larger than {limit} bytes")]
    MessageTooLarge {
        /// The configured maximum.
        limit: usize,
    },
    /// The legacy HTTP+SSE (2024-11-05) stream did not start with a usable `endpoint` event.
    #[error("legacy HTTP+SSE handshake: {reason}")]
    LegacyHandshake {
        /// What went wrong.
        reason: String,
    },
    /// The server's `Mcp-Session-Id` holds characters outside visible ASCII.
    #[error("server sent an invalid Mcp-Session-Id")]
    InvalidSessionId,
    /// An event stream ended before it delivered the response, and could not be resumed.
    #[error("event stream ended before the response: {reason}")]
    StreamEnded {
        /// Why it was not (or no longer) resumed.
        reason: &'static str,
    },
    /// The server answered 404 to a request carrying our session id: the session is gone and
    /// the caller must send a fresh `initialize` (the transport has dropped the id).
    #[error("MCP session expired (HTTP 404): re-initialize")]
    SessionExpired,
}

/// An error and its causes, joined with `: ` (the HTTP client's top-level messages alone, such
/// as "error sending request", hide the reason).
fn chain(error: &BoxError) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(e) = cause {
        let part = e.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        cause = e.source();
    }
    text
}

fn scope_note(challenge: &super::oauth::challenge::Challenge) -> String {
    match &challenge.scope {
        Some(scope) => format!(", scope {scope:?}"),
        None => String::new(),
    }
}

/// The steps of the OAuth flow (MCP authorization).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OAuthStep {
    /// Finding the protected resource's and the authorization server's metadata.
    Discovery,
    /// Making the PKCE verifier.
    Pkce,
    /// Dynamic client registration.
    Registration,
    /// The user's authorization (the redirect).
    Authorization,
    /// Exchanging the code for a token.
    Token,
}

impl std::fmt::Display for OAuthStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            OAuthStep::Discovery => "discovery",
            OAuthStep::Pkce => "pkce",
            OAuthStep::Registration => "registration",
            OAuthStep::Authorization => "authorization",
            OAuthStep::Token => "token",
        })
    }
}

/// An OAuth failure's message: the reason, then its cause.
fn oauth_cause(
    reason: &str,
    source: Option<&(dyn std::error::Error + Send + Sync + 'static)>,
) -> String {
    match (reason.is_empty(), source) {
        (_, None) => reason.to_owned(),
        (true, Some(e)) => e.to_string(),
        (false, Some(e)) => format!("{reason}: {e}"),
    }
}
