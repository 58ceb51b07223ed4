//! One `allow` or `deny` entry of a sandbox's network policy: its grammar (names, `*.`
//! suffixes, `*`, IP literals and ranges, presets, ports), how it prints, and what it matches.

use core::net::IpAddr;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::DEFAULT_PORTS;

/// A preset stands for several entries; anything else for itself.
pub(super) fn expand(e: Entry) -> Vec<Entry> {
    match &e.host {
        HostPattern::Preset(name) => preset(name)
            .unwrap_or_default()
            .iter()
            .map(|s| s.parse().expect("presets parse"))
            .collect(),
        _ => vec![e],
    }
}

/// Named groups of hosts: the package registries that package runners (`npx`, `uvx`, …) fetch
/// from.
pub const PRESETS: &[(&str, &[&str])] = &[
    ("npm", &["registry.npmjs.org:443"]),
    ("pypi", &["pypi.org:443", "files.pythonhosted.org:443"]),
    ("crates", &["index.crates.io:443", "static.crates.io:443", "crates.io:443"]),
];

fn preset(name: &str) -> Option<&'static [&'static str]> {
    PRESETS.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

/// What an entry's host part matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostPattern {
    /// `*`: any name, and any public IP literal.
    Any,
    /// `name`: exactly that name (lowercase, no trailing dot).
    Exact(String),
    /// `*.suffix`: names ending in `.suffix`, not `suffix` itself.
    Subdomains(String),
    /// An address or a range (`10.0.0.0/8`, `fd00::/8`; a single address has the full prefix).
    Net(IpNet),
    /// `@npm`, `@pypi`, … (expanded when the policy is built).
    Preset(String),
}

/// An IP network: an address and a prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpNet {
    /// The network's address (host bits zero).
    pub addr: IpAddr,
    /// Prefix length.
    pub prefix: u8,
}

impl IpNet {
    /// Whether `ip` lies in the network (IPv4-mapped IPv6 addresses count as IPv4).
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip.to_canonical()) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(self.prefix)).unwrap_or(0);
                u32::from(a) & mask == u32::from(n)
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => {
                let mask = u128::MAX.checked_shl(128 - u32::from(self.prefix)).unwrap_or(0);
                u128::from(a) & mask == u128::from(n)
            }
            _ => false,
        }
    }

    fn parse(s: &str) -> Option<IpNet> {
        let (addr, prefix) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let addr: IpAddr = addr.parse().ok()?;
        let addr = addr.to_canonical();
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(p) => p.parse::<u8>().ok().filter(|&p| p <= max)?,
            None => max,
        };
        let net = IpNet { addr, prefix };
        // The address with its host bits cleared, so `contains` compares like with like.
        let addr = match addr {
            IpAddr::V4(a) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
                IpAddr::V4((u32::from(a) & mask).into())
            }
            IpAddr::V6(a) => {
                let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
                IpAddr::V6((u128::from(a) & mask).into())
            }
        };
        Some(IpNet { addr, ..net })
    }
}

impl fmt::Display for IpNet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let full = if self.addr.is_ipv4() { 32 } else { 128 };
        if self.prefix == full {
            write!(f, "{}", self.addr)
        } else {
            write!(f, "{}/{}", self.addr, self.prefix)
        }
    }
}

/// One `allow` or `deny` entry: a host pattern and the ports it covers (without a port: 80
/// and 443 in `allow`, every port in `deny`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// What it matches.
    pub host: HostPattern,
    /// The port, when given (else [`DEFAULT_PORTS`]).
    pub port: Option<u16>,
}

impl Entry {
    /// `*`.
    pub fn any() -> Entry {
        Entry { host: HostPattern::Any, port: None }
    }

    /// An `allow` entry without a port covers [`DEFAULT_PORTS`].
    pub(super) fn covers_port(&self, port: u16) -> bool {
        match self.port {
            Some(p) => p == port,
            None => DEFAULT_PORTS.contains(&port),
        }
    }

    /// A `deny` entry without a port covers every port: "deny evil.example" means all of it.
    pub(super) fn denies_port(&self, port: u16) -> bool {
        self.port.is_none_or(|p| p == port)
    }

    pub(super) fn ports(&self) -> impl Iterator<Item = u16> + '_ {
        self.port.map_or(DEFAULT_PORTS.to_vec(), |p| vec![p]).into_iter()
    }

    /// Whether the entry matches a name (IP entries never do).
    pub(super) fn matches_name(&self, name: &str) -> bool {
        match &self.host {
            HostPattern::Any => true,
            HostPattern::Exact(n) => n == name,
            HostPattern::Subdomains(suffix) => {
                name.len() > suffix.len() + 1
                    && name.ends_with(suffix.as_str())
                    && name.as_bytes()[name.len() - suffix.len() - 1] == b'.'
            }
            HostPattern::Net(_) | HostPattern::Preset(_) => false,
        }
    }

    /// Whether the entry names `ip` explicitly (an address or a range holding it).
    pub(super) fn names_addr(&self, ip: IpAddr) -> bool {
        matches!(&self.host, HostPattern::Net(net) if net.contains(ip))
    }
}

impl std::str::FromStr for Entry {
    type Err = String;

    fn from_str(text: &str) -> Result<Entry, String> {
        let t = text.trim();
        let bad = |why: &str| format!("sandbox.network entry {text:?}: {why}");
        if t.is_empty() {
            return Err(bad("empty"));
        }
        if let Some(name) = t.strip_prefix('@') {
            return match preset(name) {
                Some(_) => Ok(Entry { host: HostPattern::Preset(name.into()), port: None }),
                None => {
                    let known: Vec<String> = PRESETS.iter().map(|(n, _)| format!("@{n}")).collect();
                    Err(bad(&format!("no such preset (known: {})", known.join(", "))))
                }
            };
        }
        // `[v6]:port`, `[v6/len]:port`, `[v6]`.
        let (host, port) = if let Some(rest) = t.strip_prefix('[') {
            let (inside, after) = rest.split_once(']').ok_or_else(|| bad("unclosed '['"))?;
            match after {
                "" => (inside, None),
                p => (
                    inside,
                    Some(p.strip_prefix(':').ok_or_else(|| bad("expected ':port' after ']'"))?),
                ),
            }
        } else if t.matches(':').count() > 1 {
            // A bare IPv6 address or range: no port (use brackets to give one).
            (t, None)
        } else {
            match t.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (t, None),
            }
        };
        let port = match port {
            None => None,
            Some(p) => Some(
                p.parse::<u16>()
                    .ok()
                    .filter(|&p| p != 0)
                    .ok_or_else(|| bad("the port must be a number from 1 to 65535"))?,
            ),
        };
        // "10.0.0.7." is an address, not a name (the root dot is dropped for names too).
        let host = host.strip_suffix('.').filter(|h| h.parse::<IpAddr>().is_ok()).unwrap_or(host);
        let host = if host == "*" {
            HostPattern::Any
        } else if let Some(net) = IpNet::parse(host) {
            HostPattern::Net(net)
        } else if host.contains('/') || host.parse::<IpAddr>().is_ok() {
            return Err(bad("not a valid address range"));
        } else if let Some(suffix) = host.strip_prefix("*.") {
            HostPattern::Subdomains(normal_name(suffix).ok_or_else(|| bad(NAME_RULE))?)
        } else {
            HostPattern::Exact(normal_name(host).ok_or_else(|| bad(NAME_RULE))?)
        };
        Ok(Entry { host, port })
    }
}

const NAME_RULE: &str = "a host name is dot-separated labels of letters, digits, '-' and '_' \
     ('*' alone, or '*.' before a name for its subdomains)";

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v6 = matches!(&self.host, HostPattern::Net(n) if n.addr.is_ipv6());
        let host = match &self.host {
            HostPattern::Any => "*".to_string(),
            HostPattern::Exact(n) => n.clone(),
            HostPattern::Subdomains(s) => format!("*.{s}"),
            HostPattern::Net(n) => n.to_string(),
            HostPattern::Preset(p) => format!("@{p}"),
        };
        match (self.port, v6) {
            (Some(p), true) => write!(f, "[{host}]:{p}"),
            (Some(p), false) => write!(f, "{host}:{p}"),
            (None, _) => f.write_str(&host),
        }
    }
}

impl Serialize for Entry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A host name as DNS carries it, lowercased, without a trailing dot: `None` unless every
/// label is 1–63 characters of `[A-Za-z0-9_-]` and the whole is at most 253.
pub fn normal_name(name: &str) -> Option<String> {
    let name = name.strip_suffix('.').unwrap_or(name);
    let ok = !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            (1..=63).contains(&label.len())
                && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    ok.then(|| name.to_ascii_lowercase())
}
