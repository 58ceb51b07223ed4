//! A session's settings.

use std::time::Duration;

use super::modern::Era;
use super::types::{Implementation, Root};
use super::version::ProtocolVersion;

/// Default per-request timeout (MCP leaves it to the client; 60 s is common practice).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Settings of one session.
#[derive(Debug, Clone)]
pub struct SessionConfig {
    /// Sent as `clientInfo`.
    pub client_info: Implementation,
    /// The revision offered in `initialize`.
    pub offer: ProtocolVersion,
    /// Deadline of requests that do not set their own.
    pub request_timeout: Duration,
    /// Most requests in flight at once; more are refused with [`RequestError::TooManyPending`].
    pub max_pending: usize,
    /// Frame limit in force (reported in [`RequestError::FrameTooLarge`]).
    pub max_frame: usize,
    /// Roots to answer `roots/list` with; `None` means the `roots` capability is not declared
    /// and `roots/list` gets -32601.
    pub roots: Option<Vec<Root>>,
    /// The longest a request with progress may run, however often its deadline is pushed
    /// back by progress notifications (default 10 minutes).
    pub max_request_total: Duration,
    /// Server→client requests the application answers (declared as capabilities, delivered
    /// as [`Event::ServerRequest`], answered with [`Session::respond`]). Default: none. In
    /// 2026-07-28 the same requests arrive inside `input_required` results and are delivered
    /// the same way.
    pub features: ClientFeatures,
    /// How the revision is found: probe with `server/discover` and fall back to `initialize`
    /// (the default), or only one of the two.
    pub era: Era,
    /// How long the `server/discover` probe of [`Era::Auto`] waits before falling back to
    /// `initialize` (a legacy server may ignore a request it does not know). Default 5 s
    /// (it includes the server's start-up). A modern server whose answer comes later still
    /// ends up modern: it refuses the `initialize` with -32022, which is taken as its answer.
    pub probe_timeout: Duration,
    /// Keep-alive: after this long without a frame from the server, send `ping` (in
    /// 2026-07-28, which has no ping: `server/discover`); no answer within the request timeout
    /// raises [`Event::Unresponsive`]. Default: off.
    pub keep_alive: Option<Duration>,
}

/// Which server→client requests the client answers (and so declares in `initialize`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientFeatures {
    /// `sampling/createMessage`.
    pub sampling: bool,
    /// `elicitation/create` in form mode.
    pub elicitation_form: bool,
    /// `elicitation/create` in URL mode (2025-11-25).
    pub elicitation_url: bool,
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            client_info: Implementation::new("ringmcp", env!("CARGO_PKG_VERSION")),
            offer: ProtocolVersion::LATEST,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_pending: 65_536,
            max_frame: crate::frame::DEFAULT_MAX_FRAME,
            roots: None,
            max_request_total: Duration::from_secs(600),
            features: ClientFeatures::default(),
            era: Era::Auto,
            probe_timeout: Duration::from_secs(5),
            keep_alive: None,
        }
    }
}
