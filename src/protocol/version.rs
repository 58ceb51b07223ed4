//! MCP protocol revisions.

use std::fmt;
use std::str::FromStr;

/// A released MCP revision that ringmcp speaks: the four legacy ones through the `initialize`
/// handshake, and the stateless 2026-07-28 ("modern") one through `server/discover` and
/// per-request `_meta`.
///
/// Ordered by date, so `a < b` means `a` is older.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// The first release.
    V2024_11_05,
    /// Streamable HTTP, batches, tool annotations.
    V2025_03_26,
    /// Structured tool output, elicitation, `resource_link`; batches removed.
    V2025_06_18,
    /// Icons, URL elicitation, sampling with tools, tasks.
    V2025_11_25,
    /// Stateless: no `initialize`, `_meta` versioning on every request, `server/discover`,
    /// multi round-trip requests (`input_required`), `subscriptions/listen`.
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every revision we speak, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The revisions negotiated through `initialize`, oldest first.
    pub const LEGACY: [ProtocolVersion; 4] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ];

    /// The revision we offer in `initialize` (the newest legacy one).
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The stateless revision we ask for in `server/discover` (the newest modern one).
    pub const LATEST_MODERN: ProtocolVersion = ProtocolVersion::V2026_07_28;

    /// Whether this is a stateless (2026-07-28 or later) revision.
    pub fn is_modern(self) -> bool {
        self >= ProtocolVersion::V2026_07_28
    }

    /// The revision's date string, as sent on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A version string that is not one of [`ProtocolVersion::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unsupported MCP protocol version {0:?} (supported: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28)"
)]
pub struct UnsupportedVersion(pub String);

impl FromStr for ProtocolVersion {
    type Err = UnsupportedVersion;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProtocolVersion::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| UnsupportedVersion(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_orders() {
        for v in ProtocolVersion::ALL {
            assert_eq!(v.as_str().parse::<ProtocolVersion>(), Ok(v));
        }
        assert!(ProtocolVersion::V2024_11_05 < ProtocolVersion::LATEST);
        assert!(ProtocolVersion::LATEST < ProtocolVersion::LATEST_MODERN);
        assert!(ProtocolVersion::LATEST_MODERN.is_modern() && !ProtocolVersion::LATEST.is_modern());
        assert!(ProtocolVersion::LEGACY.iter().all(|v| !v.is_modern()));
        assert!("2027-01-01".parse::<ProtocolVersion>().is_err());
        assert!("".parse::<ProtocolVersion>().is_err());
    }
}
