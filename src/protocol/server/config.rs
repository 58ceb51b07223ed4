//! What a server session is configured with.

use std::time::Duration;

use serde_json::{Value, json};

use super::super::types::Implementation;
use super::super::version::ProtocolVersion;
use super::{Listenable, ROUND_WAIT};

/// What a server session is configured with.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Sent as `serverInfo`.
    pub server_info: Implementation,
    /// The capabilities declared (`{"tools": {...}, ...}`).
    pub capabilities: Value,
    /// Sent as `instructions`, when given.
    pub instructions: Option<String>,
    /// The revisions spoken, newest last or in any order (default: every one).
    pub versions: Vec<ProtocolVersion>,
    /// Deadline of the server's own requests to the client.
    pub request_timeout: Duration,
    /// 2026-07-28: the caching hints put on cacheable results (`server/discover`, the lists,
    /// `resources/read`) that do not carry their own; `None` for none.
    pub cache: Option<CacheHints>,
    /// Refuse an `initialize` without `capabilities` and `clientInfo` (`name`, `version`), as
    /// the schema requires them (default: only `protocolVersion` is required).
    pub strict_initialize: bool,
    /// 2026-07-28: serve `subscriptions/listen` in the session, granting these notifications
    /// (`None`: the request is handed to the application like any other).
    pub listen: Option<Listenable>,
    /// How long an `input_required` round waits for its retry.
    pub round_wait: Duration,
}

/// The `ttlMs` and `cacheScope` of a 2026-07-28 cacheable result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheHints {
    /// How long the client may reuse the result.
    pub ttl_ms: u64,
    /// `"private"` (this client) or `"shared"`.
    pub scope: String,
}

impl Default for CacheHints {
    /// Not to be reused: `ttlMs` 0, private.
    fn default() -> Self {
        CacheHints { ttl_ms: 0, scope: "private".into() }
    }
}

/// 2026-07-28 results that carry caching hints.
pub(super) const CACHEABLE: [&str; 6] = [
    "server/discover",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
    "resources/read",
];

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            server_info: Implementation::new("ringmcp", env!("CARGO_PKG_VERSION")),
            capabilities: json!({}),
            instructions: None,
            versions: ProtocolVersion::ALL.to_vec(),
            request_timeout: Duration::from_secs(60),
            cache: Some(CacheHints::default()),
            strict_initialize: false,
            listen: None,
            round_wait: ROUND_WAIT,
        }
    }
}
