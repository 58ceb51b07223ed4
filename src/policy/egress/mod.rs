//! Which network destinations a sandboxed server may reach: the `sandbox.network` setting and
//! its verdicts, without I/O (docs/egress.md).
//!
//! A [`NetworkPolicy`] is a server's `allow` and `deny` lists. [`Matcher`] judges a
//! destination in the two steps the host proxy (`egress/`) takes:
//! 1. [`Matcher::judge`]: the name (or IP literal) and port the server asked for, against the
//!    lists; `deny` wins over `allow`, an unlisted destination is refused.
//! 2. [`Matcher::judge_resolved`]: every address the host's resolver returned for an allowed
//!    name. One that is loopback, private, link-local (cloud metadata included), carrier-grade
//!    NAT, unique-local, multicast, broadcast, unspecified or reserved — directly or in an
//!    IPv4-mapped, NAT64 or 6to4 form — refuses the whole name, unless an `allow` entry names
//!    that address or a range holding it ([`ranges`]). This is what stops DNS rebinding: an
//!    allowlisted name cannot lead to 169.254.169.254 or the host's own loopback.
//!
//! Addresses are `core::net` values: nothing here resolves, connects or reads a clock; the
//! host's proxy (`egress/`) does the I/O and hands the results in.
//!
//! The in-sandbox DNS stub uses [`Matcher::answers_name`] to decide which names get a
//! placeholder address ([`dns`]); the host judges again at connect time, so the stub is a
//! convenience, never the enforcement.

pub mod dns;
mod entry;
pub mod ranges;
pub mod sniff;

use core::net::IpAddr;
use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use entry::expand;
pub use entry::{Entry, HostPattern, IpNet, PRESETS, normal_name};
pub use ranges::{Range, blocked};

/// Ports an entry without `:port` covers.
pub const DEFAULT_PORTS: [u16; 2] = [80, 443];

/// The `network` key of a sandbox: `false` (default, no network at all), `true` (any public
/// destination, through the host's proxy), or `{"allow": [...], "deny": [...]}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Network {
    /// No network: loopback down, no IP sockets.
    #[default]
    Off,
    /// Outbound TCP through the host's proxy, judged by the policy.
    Proxied(NetworkPolicy),
}

impl Network {
    /// `true`: any public host on ports 80 and 443.
    pub fn any() -> Network {
        Network::Proxied(NetworkPolicy::any())
    }

    /// Only the destinations `allow` lists.
    ///
    /// # Errors
    /// The first entry that does not parse, and why.
    pub fn allow<S: AsRef<str>>(allow: impl IntoIterator<Item = S>) -> Result<Network, String> {
        Ok(Network::Proxied(NetworkPolicy::new(allow, std::iter::empty::<&str>())?))
    }

    /// Whether any network is granted.
    pub fn is_on(&self) -> bool {
        matches!(self, Network::Proxied(_))
    }

    /// The policy, when network is granted.
    pub fn policy(&self) -> Option<&NetworkPolicy> {
        match self {
            Network::Off => None,
            Network::Proxied(p) => Some(p),
        }
    }

    /// One line for `inspect` and `sandbox check`: `off`, `any public host (ports 80, 443)`, or
    /// the lists.
    pub fn describe(&self) -> String {
        match self {
            Network::Off => "off (no network)".into(),
            Network::Proxied(p) if *p == NetworkPolicy::any() => {
                "any public host on ports 80, 443, through the host's proxy".into()
            }
            Network::Proxied(p) => {
                let list = |v: &[Entry]| v.iter().map(ToString::to_string).collect::<Vec<_>>();
                let mut s = format!("allow {}", list(&p.allow).join(", "));
                if !p.deny.is_empty() {
                    s.push_str(&format!("; deny {}", list(&p.deny).join(", ")));
                }
                s
            }
        }
    }
}

impl From<NetworkPolicy> for Network {
    fn from(p: NetworkPolicy) -> Network {
        Network::Proxied(p)
    }
}

impl From<bool> for Network {
    /// `true` is [`Network::any`], `false` [`Network::Off`].
    fn from(on: bool) -> Network {
        if on { Network::any() } else { Network::Off }
    }
}

impl Serialize for Network {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Network::Off => s.serialize_bool(false),
            Network::Proxied(p) if *p == NetworkPolicy::any() => s.serialize_bool(true),
            Network::Proxied(p) => p.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Network {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Not an untagged enum: that would hide why an object failed to parse.
        let value = serde_json::Value::deserialize(d)?;
        match value {
            serde_json::Value::Bool(false) | serde_json::Value::Null => Ok(Network::Off),
            serde_json::Value::Bool(true) => Ok(Network::any()),
            other @ serde_json::Value::Object(_) => NetworkPolicy::deserialize(other)
                .map(Network::Proxied)
                .map_err(serde::de::Error::custom),
            _ => Err(serde::de::Error::custom(
                "sandbox.network is false, true, or {\"allow\": [...], \"deny\": [...]}",
            )),
        }
    }
}

/// A server's allow and deny lists.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetworkPolicy {
    /// Destinations the server may reach.
    pub allow: Vec<Entry>,
    /// Destinations refused even when `allow` matches.
    pub deny: Vec<Entry>,
}

impl NetworkPolicy {
    /// Any public host on ports 80 and 443 (`"network": true`).
    pub fn any() -> NetworkPolicy {
        NetworkPolicy { allow: vec![Entry::any()], deny: Vec::new() }
    }

    /// Parses both lists.
    ///
    /// # Errors
    /// The first entry that does not parse, and why.
    pub fn new<A: AsRef<str>, D: AsRef<str>>(
        allow: impl IntoIterator<Item = A>,
        deny: impl IntoIterator<Item = D>,
    ) -> Result<NetworkPolicy, String> {
        let parse = |s: &str| s.parse::<Entry>();
        let mut p = NetworkPolicy::default();
        for a in allow {
            p.allow.extend(expand(parse(a.as_ref())?));
        }
        for d in deny {
            p.deny.extend(expand(parse(d.as_ref())?));
        }
        Ok(p)
    }
}

/// Where a server asked to connect.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dest {
    /// A name (through the DNS stub or a proxy request).
    Name(String),
    /// An IP literal.
    Addr(IpAddr),
}

impl fmt::Display for Dest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dest::Name(n) => f.write_str(n),
            Dest::Addr(IpAddr::V6(a)) => write!(f, "[{a}]"),
            Dest::Addr(a) => write!(f, "{a}"),
        }
    }
}

/// The decision on one connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Let it through; `rule` is the entry that allowed it.
    Allow {
        /// The `allow` entry, as written.
        rule: String,
    },
    /// Refuse it.
    Refuse(Refusal),
}

impl Verdict {
    /// The rule behind the verdict: the entry, or the refusal's name.
    pub fn rule(&self) -> String {
        match self {
            Verdict::Allow { rule } => rule.clone(),
            Verdict::Refuse(r) => r.rule(),
        }
    }
}

/// Why a connection was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// No `allow` entry matches.
    NotListed,
    /// A `deny` entry matches.
    Denied {
        /// The entry.
        rule: String,
    },
    /// The destination is, or the name resolves to, a blocked address that no entry lists.
    Blocked {
        /// The address.
        addr: IpAddr,
        /// Its range.
        range: Range,
    },
    /// The name is not a valid host name.
    BadName,
    /// The name did not resolve.
    Unresolved {
        /// The resolver's words.
        error: String,
    },
    /// The TLS ClientHello names another host than the one connected to.
    SniMismatch {
        /// The SNI.
        sni: String,
    },
    /// The HTTP request's `Host` names another host than the one connected to.
    HostMismatch {
        /// The `Host` header.
        host: String,
    },
    /// The server already holds as many proxied connections as it may.
    TooManyConnections {
        /// The limit.
        limit: usize,
    },
    /// The host could not connect to the checked address.
    Unreachable {
        /// The OS error.
        error: String,
    },
    /// A proxy request (`HTTP_PROXY`) that is not `CONNECT host:port` or an absolute-form
    /// `http://` request.
    BadProxyRequest,
    /// The first bytes to a name on a web port could not be checked against it.
    UncheckedFirstBytes {
        /// What was wrong with them.
        what: String,
    },
}

impl Refusal {
    /// A short name for logs and the audit trail.
    pub fn rule(&self) -> String {
        match self {
            Refusal::NotListed => "not-listed".into(),
            Refusal::Denied { rule } => format!("deny {rule}"),
            Refusal::Blocked { range, .. } => format!("blocked-range {}", range.name()),
            Refusal::BadName => "bad-name".into(),
            Refusal::Unresolved { .. } => "unresolved".into(),
            Refusal::SniMismatch { .. } => "sni-mismatch".into(),
            Refusal::HostMismatch { .. } => "host-mismatch".into(),
            Refusal::TooManyConnections { .. } => "connection-limit".into(),
            Refusal::Unreachable { .. } => "unreachable".into(),
            Refusal::BadProxyRequest => "bad-proxy-request".into(),
            Refusal::UncheckedFirstBytes { .. } => "unchecked-first-bytes".into(),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::NotListed => f.write_str("not in sandbox.network.allow"),
            Refusal::Denied { rule } => write!(f, "matches sandbox.network.deny entry {rule:?}"),
            Refusal::Blocked { addr, range } => write!(
                f,
                "{addr} is {}; only an allow entry naming that address or its range opens it",
                range.describe()
            ),
            Refusal::BadName => f.write_str("not a valid host name"),
            Refusal::Unresolved { error } => write!(f, "the name did not resolve: {error}"),
            Refusal::SniMismatch { sni } => {
                write!(f, "its TLS ClientHello asks for another host ({sni:?})")
            }
            Refusal::HostMismatch { host } => {
                write!(f, "its HTTP request's Host header names another host ({host:?})")
            }
            Refusal::TooManyConnections { limit } => {
                write!(f, "the server already has {limit} proxied connections open")
            }
            Refusal::Unreachable { error } => write!(f, "the host could not connect: {error}"),
            Refusal::BadProxyRequest => f.write_str(
                "the proxy understands only CONNECT host:port and absolute http:// requests",
            ),
            Refusal::UncheckedFirstBytes { what } => {
                write!(f, "{what}, so the host it asks for cannot be checked")
            }
        }
    }
}

/// A compiled [`NetworkPolicy`].
#[derive(Debug, Clone)]
pub struct Matcher {
    policy: NetworkPolicy,
}

impl Matcher {
    /// Compiles `policy`.
    pub fn new(policy: &NetworkPolicy) -> Matcher {
        let mut policy = policy.clone();
        policy.allow = policy.allow.into_iter().flat_map(expand).collect();
        policy.deny = policy.deny.into_iter().flat_map(expand).collect();
        Matcher { policy }
    }

    /// The policy it judges by.
    pub fn policy(&self) -> &NetworkPolicy {
        &self.policy
    }

    /// The ports the sandbox must capture: every port an `allow` entry covers.
    pub fn ports(&self) -> BTreeSet<u16> {
        self.policy.allow.iter().flat_map(Entry::ports).collect()
    }

    /// Step 1: the destination as the server named it. Names are compared lowercased
    /// without a trailing dot; IP literals match only entries that name them (or `*`, for a
    /// public address); a blocked address needs an entry that names it.
    pub fn judge(&self, dest: &Dest, port: u16) -> Verdict {
        match dest {
            Dest::Name(name) => {
                let Some(name) = normal_name(name) else {
                    return Verdict::Refuse(Refusal::BadName);
                };
                // A name that is an address in disguise ("127.0.0.1" asked through a proxy)
                // is judged as that address.
                if let Ok(ip) = name.parse::<IpAddr>() {
                    return self.judge(&Dest::Addr(ip), port);
                }
                if let Some(d) =
                    self.policy.deny.iter().find(|e| e.denies_port(port) && e.matches_name(&name))
                {
                    return Verdict::Refuse(Refusal::Denied { rule: d.to_string() });
                }
                match self
                    .policy
                    .allow
                    .iter()
                    .find(|e| e.covers_port(port) && e.matches_name(&name))
                {
                    Some(a) => Verdict::Allow { rule: a.to_string() },
                    None => Verdict::Refuse(Refusal::NotListed),
                }
            }
            Dest::Addr(ip) => {
                let ip = ip.to_canonical();
                if let Some(d) = self.denied_addr(ip, port) {
                    return Verdict::Refuse(Refusal::Denied { rule: d.to_string() });
                }
                if let Some(a) = self.named_addr(ip, port) {
                    return Verdict::Allow { rule: a.to_string() };
                }
                if let Some(range) = blocked(ip) {
                    return Verdict::Refuse(Refusal::Blocked { addr: ip, range });
                }
                match self
                    .policy
                    .allow
                    .iter()
                    .find(|e| e.covers_port(port) && e.host == HostPattern::Any)
                {
                    Some(a) => Verdict::Allow { rule: a.to_string() },
                    None => Verdict::Refuse(Refusal::NotListed),
                }
            }
        }
    }

    /// Step 2, for a name that step 1 allowed: every address it resolved to. Refused when
    /// there are none, when a `deny` entry names one, or when one is in a blocked range that
    /// no `allow` entry names (one bad address refuses the name: the server cannot steer
    /// which one is dialled).
    pub fn judge_resolved(&self, port: u16, addrs: &[IpAddr]) -> Option<Refusal> {
        if addrs.is_empty() {
            return Some(Refusal::Unresolved { error: "no addresses".into() });
        }
        for &ip in addrs {
            let ip = ip.to_canonical();
            if let Some(d) = self.denied_addr(ip, port) {
                return Some(Refusal::Denied { rule: d.to_string() });
            }
            if let Some(range) = blocked(ip)
                && self.named_addr(ip, port).is_none()
            {
                return Some(Refusal::Blocked { addr: ip, range });
            }
        }
        None
    }

    /// Whether the DNS stub answers `name` with a placeholder: some captured port would allow
    /// it (the host judges the actual port again at connect time).
    pub fn answers_name(&self, name: &str) -> bool {
        self.ports()
            .into_iter()
            .any(|p| matches!(self.judge(&Dest::Name(name.into()), p), Verdict::Allow { .. }))
    }

    fn denied_addr(&self, ip: IpAddr, port: u16) -> Option<&Entry> {
        self.policy
            .deny
            .iter()
            .find(|e| e.denies_port(port) && (e.names_addr(ip) || e.host == HostPattern::Any))
    }

    fn named_addr(&self, ip: IpAddr, port: u16) -> Option<&Entry> {
        self.policy.allow.iter().find(|e| e.covers_port(port) && e.names_addr(ip))
    }
}

#[cfg(test)]
pub(crate) mod tests;
