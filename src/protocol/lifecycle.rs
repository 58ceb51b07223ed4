//! The client-side MCP lifecycle as an enum of states, each transition consuming the old state.
//!
//! ```text
//!  Uninitialized ──begin──▶ Initializing ──InitializeResult ok──▶ Active ──close──▶ Closed
//!       │                        ▲       │  error / bad version / timeout            ▲
//!       │ (2026-07-28 probe)     │       └──────────────────────────────────────────┤
//!       └──▶ Discovering ────────┘ any other answer (fallback)                       │
//!                 │  DiscoverResult with a modern revision ──▶ Active (stateless)    │
//!                 └──── no fallback (Era::Modern): error / timeout ──────────────────┘
//! ```
//! A -32022 (UnsupportedProtocolVersion) naming a revision we speak re-sends `server/discover`
//! once with it.
//! (docs/protocol.md, "Lifecycle": requests other than `ping` are refused
//! until `Active`; `notifications/initialized` is sent on entering `Active`.)

use crate::jsonrpc::RawJson;

use super::error::{CloseReason, RequestError};
use super::types::InitializeResult;
use super::version::ProtocolVersion;

/// What the handshake established.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerDetails {
    /// The negotiated revision.
    pub version: ProtocolVersion,
    /// The server's `InitializeResult`, as sent.
    pub init: InitializeResult,
}

impl ServerDetails {
    /// Whether the server declared capability `name` (e.g. `"tools"`).
    pub fn has_capability(&self, name: &str) -> bool {
        self.init.capabilities.get(name).is_some_and(|c| !c.is_null())
    }
}

/// Lifecycle state of a session.
#[derive(Debug)]
pub(crate) enum State {
    /// Nothing sent yet.
    Uninitialized,
    /// `server/discover` sent with this request id (asking for `version`); waiting for its
    /// answer. `fallback`: on anything but a `DiscoverResult` or a -32022 naming a modern
    /// revision, do the `initialize` handshake instead; `retried`: the -32022 retry was used.
    Discovering {
        request: super::RequestId,
        version: ProtocolVersion,
        fallback: bool,
        retried: bool,
    },
    /// `initialize` sent with this request id; waiting for its answer.
    Initializing { request: super::RequestId, offered: ProtocolVersion },
    /// Handshake done.
    Active(Box<ServerDetails>),
    /// Over; every later request fails with this reason.
    Closed(CloseReason),
}

impl State {
    /// `initialize` was sent.
    pub(crate) fn begin(self, request: super::RequestId, offered: ProtocolVersion) -> State {
        match self {
            State::Uninitialized | State::Discovering { .. } => {
                State::Initializing { request, offered }
            }
            other => other,
        }
    }

    /// The answer to `initialize` arrived. On success the state is `Active` and the caller must
    /// send `notifications/initialized`; on failure it is `Closed` and the error says why.
    pub(crate) fn on_initialize_answer(
        self,
        outcome: Result<RawJson, RequestError>,
    ) -> (State, Result<RawJson, RequestError>) {
        let State::Initializing { offered, .. } = self else {
            return (self, Err(RequestError::NotInitialized));
        };
        let fail = |e: RequestError| {
            (State::Closed(CloseReason::HandshakeFailed(Box::new(e.clone()))), Err(e))
        };
        let value = match outcome {
            Ok(value) => value,
            Err(e) => return fail(e),
        };
        let init: InitializeResult = match value.parse() {
            Ok(init) => init,
            Err(e) => {
                return fail(RequestError::MalformedResult {
                    method: "initialize".into(),
                    reason: e.to_string(),
                });
            }
        };
        match init.protocol_version.parse::<ProtocolVersion>() {
            // A stateless revision has no `initialize`: answering it with one is not a choice
            // we can honour through this handshake.
            Ok(version) if !version.is_modern() => {
                (State::Active(Box::new(ServerDetails { version, init })), Ok(value))
            }
            _ => fail(RequestError::UnsupportedVersion {
                offered: offered.as_str(),
                answered: init.protocol_version,
            }),
        }
    }

    /// The connection ended.
    pub(crate) fn close(self, reason: CloseReason) -> State {
        match self {
            State::Closed(earlier) => State::Closed(earlier),
            _ => State::Closed(reason),
        }
    }

    /// Whether a request for `method` may be sent now.
    /// Whether the handshake is done and the session open.
    pub(crate) fn is_active(&self) -> bool {
        matches!(self, State::Active(_))
    }

    pub(crate) fn admits(&self, method: &str) -> Result<(), RequestError> {
        match self {
            State::Active(_) => Ok(()),
            State::Closed(reason) => Err(RequestError::Closed(reason.clone())),
            State::Uninitialized | State::Initializing { .. } if method == "ping" => Ok(()),
            State::Uninitialized | State::Discovering { .. } | State::Initializing { .. } => {
                Err(RequestError::NotInitialized)
            }
        }
    }
}
