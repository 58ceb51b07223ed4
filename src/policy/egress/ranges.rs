//! The address ranges no sandboxed server reaches unless an `allow` entry names them: the
//! host's own loopback, private networks, link-local (where clouds serve instance metadata
//! and credentials), carrier-grade NAT, unique-local IPv6, multicast, broadcast, unspecified,
//! documentation, benchmarking and reserved space — and the IPv6 forms that carry one of
//! those IPv4 addresses (IPv4-mapped, IPv4-compatible, NAT64, 6to4).
//!
//! Sources: RFC 6890 (special-purpose registries), RFC 1918, RFC 6598, RFC 3927, RFC 4193,
//! RFC 4291, RFC 6052, RFC 8215, RFC 3056, RFC 4380, RFC 5737, RFC 2544, RFC 3849.

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A blocked range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Range {
    /// `0.0.0.0/8`, `::`.
    Unspecified,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918: `10/8`, `172.16/12`, `192.168/16`.
    Private,
    /// RFC 6598: `100.64/10`.
    CarrierGradeNat,
    /// A cloud's instance metadata address (`169.254.169.254`, `169.254.170.2`,
    /// `fd00:ec2::254`, `100.100.100.200`).
    Metadata,
    /// `169.254/16`, `fe80::/10`.
    LinkLocal,
    /// `fc00::/7`.
    UniqueLocal,
    /// `224/4`, `ff00::/8`.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// Documentation and benchmarking ranges, `240/4`, `192.0.0/24`, `fec0::/10`,
    /// `100::/64`, Teredo, and the local-use NAT64 prefix: nothing a server should dial.
    Reserved,
}

impl Range {
    /// A short name (audit records).
    pub fn name(self) -> &'static str {
        match self {
            Range::Unspecified => "unspecified",
            Range::Loopback => "loopback",
            Range::Private => "private",
            Range::CarrierGradeNat => "cgnat",
            Range::Metadata => "metadata",
            Range::LinkLocal => "link-local",
            Range::UniqueLocal => "unique-local",
            Range::Multicast => "multicast",
            Range::Broadcast => "broadcast",
            Range::Reserved => "reserved",
        }
    }

    /// For messages: "a loopback address", …
    pub fn describe(self) -> &'static str {
        match self {
            Range::Unspecified => "an unspecified address",
            Range::Loopback => "a loopback address",
            Range::Private => "a private address (RFC 1918)",
            Range::CarrierGradeNat => "a carrier-grade NAT address",
            Range::Metadata => "a cloud metadata address",
            Range::LinkLocal => "a link-local address",
            Range::UniqueLocal => "a unique-local IPv6 address",
            Range::Multicast => "a multicast address",
            Range::Broadcast => "the broadcast address",
            Range::Reserved => "a reserved address",
        }
    }
}

/// The blocked range `ip` is in, if any. An IPv6 address that embeds an IPv4 one (mapped,
/// compatible, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) is judged by the embedded address.
pub fn blocked(ip: IpAddr) -> Option<Range> {
    match ip {
        IpAddr::V4(v4) => blocked_v4(v4),
        IpAddr::V6(v6) => blocked_v6(v6),
    }
}

const METADATA_V4: [Ipv4Addr; 3] = [
    Ipv4Addr::new(169, 254, 169, 254),
    Ipv4Addr::new(169, 254, 170, 2),
    Ipv4Addr::new(100, 100, 100, 200),
];
const METADATA_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254);

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
    u32::from(ip) & mask == u32::from(Ipv4Addr::from(net)) & mask
}

fn in_v6(ip: Ipv6Addr, net: Ipv6Addr, prefix: u32) -> bool {
    let mask = u128::MAX.checked_shl(128 - prefix).unwrap_or(0);
    u128::from(ip) & mask == u128::from(net) & mask
}

fn blocked_v4(ip: Ipv4Addr) -> Option<Range> {
    if METADATA_V4.contains(&ip) {
        return Some(Range::Metadata);
    }
    let table: [([u8; 4], u32, Range); 16] = [
        ([0, 0, 0, 0], 8, Range::Unspecified),
        ([10, 0, 0, 0], 8, Range::Private),
        ([100, 64, 0, 0], 10, Range::CarrierGradeNat),
        ([127, 0, 0, 0], 8, Range::Loopback),
        ([169, 254, 0, 0], 16, Range::LinkLocal),
        ([172, 16, 0, 0], 12, Range::Private),
        ([192, 0, 0, 0], 24, Range::Reserved),
        ([192, 0, 2, 0], 24, Range::Reserved),
        ([192, 88, 99, 0], 24, Range::Reserved),
        ([192, 168, 0, 0], 16, Range::Private),
        ([198, 18, 0, 0], 15, Range::Reserved),
        ([198, 51, 100, 0], 24, Range::Reserved),
        ([203, 0, 113, 0], 24, Range::Reserved),
        ([224, 0, 0, 0], 4, Range::Multicast),
        ([255, 255, 255, 255], 32, Range::Broadcast),
        ([240, 0, 0, 0], 4, Range::Reserved),
    ];
    table.iter().find(|(net, len, _)| in_v4(ip, *net, *len)).map(|&(_, _, r)| r)
}

fn blocked_v6(ip: Ipv6Addr) -> Option<Range> {
    if let Some(v4) = embedded_v4(ip) {
        // An address that carries an IPv4 one reaches it: judge that one. A public IPv4 in
        // such a form is still an odd thing to dial, but not a blocked one.
        return blocked_v4(v4);
    }
    if ip == METADATA_V6 {
        return Some(Range::Metadata);
    }
    if ip.is_unspecified() {
        return Some(Range::Unspecified);
    }
    if ip.is_loopback() {
        return Some(Range::Loopback);
    }
    let v6 = |s: &str| s.parse::<Ipv6Addr>().expect("a constant");
    let table: [(Ipv6Addr, u32, Range); 9] = [
        (v6("fe80::"), 10, Range::LinkLocal),
        (v6("fec0::"), 10, Range::Reserved),
        (v6("fc00::"), 7, Range::UniqueLocal),
        (v6("ff00::"), 8, Range::Multicast),
        (v6("100::"), 64, Range::Reserved),
        (v6("2001:db8::"), 32, Range::Reserved),
        (v6("3fff::"), 20, Range::Reserved),
        (v6("2001::"), 32, Range::Reserved),
        (v6("64:ff9b:1::"), 48, Range::Reserved),
    ];
    table.iter().find(|(net, len, _)| in_v6(ip, *net, *len)).map(|&(_, _, r)| r)
}

/// The IPv4 address an IPv6 one carries: IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible
/// `::a.b.c.d` (deprecated, but kernels still route it), NAT64 `64:ff9b::a.b.c.d`, 6to4
/// `2002:AABB:CCDD::/48`, IPv4-translated (SIIT) `::ffff:0:a.b.c.d`.
pub fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    // IPv4-translated (SIIT, RFC 2765): ::ffff:0:a.b.c.d.
    if s[..6] == [0, 0, 0, 0, 0xffff, 0] {
        return Some(low);
    }
    if s[..6] == [0, 0, 0, 0, 0, 0] && !(s[6] == 0 && s[7] <= 1) {
        return Some(low);
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(low);
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8));
    }
    None
}
