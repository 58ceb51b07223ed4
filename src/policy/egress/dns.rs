//! The sandbox's DNS stub, without I/O: it answers every query itself and never forwards one
//! (a forwarding resolver would be a channel out: `secret.attacker.example` leaks through the
//! query alone).
//!
//! * A name the policy lets through gets a placeholder IPv4 address from `198.18.0.0/15`
//!   (RFC 2544's benchmarking range, never routed), the same one for every query of it; the
//!   sandbox's capture maps the placeholder back to the name when the server connects, and
//!   the host resolves the name itself.
//! * Other record types of such a name (AAAA, MX, TXT, …) get an empty answer (NODATA), so
//!   clients fall back to the A record.
//! * A name the policy refuses gets NXDOMAIN; one with a label outside `[A-Za-z0-9_-]` gets
//!   REFUSED; anything that is not a well-formed query is dropped (or FORMERR when the header
//!   is readable).

use core::net::{IpAddr, Ipv4Addr};
use std::collections::HashMap;

/// First placeholder address (198.18.0.1; .0.0 is skipped).
const FIRST: u32 = u32::from_be_bytes([198, 18, 0, 1]);
/// Last placeholder address (198.19.255.254).
const LAST: u32 = u32::from_be_bytes([198, 19, 255, 254]);
/// The most names a sandbox's stub gives placeholders to (the range has room for 131,070).
pub const MAX_NAMES: usize = 16_384;
/// TTL of a placeholder answer, in seconds: placeholders never change within a sandbox.
const TTL: u32 = 3600;

/// Names given placeholders, both ways. Bounded at [`MAX_NAMES`] (about 5 MiB of names at
/// most, in a sandbox's own memory); past it, new names get SERVFAIL.
#[derive(Debug, Default)]
pub struct Placeholders {
    by_name: HashMap<String, Ipv4Addr>,
    by_addr: HashMap<Ipv4Addr, String>,
}

impl Placeholders {
    /// The name a placeholder stands for.
    pub fn name_of(&self, ip: IpAddr) -> Option<&str> {
        match ip.to_canonical() {
            IpAddr::V4(v4) => self.by_addr.get(&v4).map(String::as_str),
            IpAddr::V6(_) => None,
        }
    }

    /// The placeholder of `name`, made on first use.
    pub fn assign(&mut self, name: &str) -> Option<Ipv4Addr> {
        if let Some(&ip) = self.by_name.get(name) {
            return Some(ip);
        }
        let next = FIRST + self.by_name.len() as u32;
        if next > LAST || self.by_name.len() >= MAX_NAMES {
            return None;
        }
        let ip = Ipv4Addr::from(next);
        self.by_name.insert(name.to_owned(), ip);
        self.by_addr.insert(ip, name.to_owned());
        Some(ip)
    }

    /// How many names have placeholders.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }

    /// Whether none has.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
}

/// What the stub did with a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Answered with this placeholder.
    Placeholder(Ipv4Addr),
    /// The name is allowed, but not for this record type: an empty answer.
    NoData,
    /// The name is not allowed.
    NxDomain,
    /// The name has a label outside `[A-Za-z0-9_-]`.
    Refused,
    /// Not a query the stub handles (several questions, an opcode other than QUERY, …), or
    /// the placeholder range is full.
    Failed,
}

/// The stub's reply to one datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The response datagram.
    pub bytes: Vec<u8>,
    /// The name asked, lowercased without a trailing dot, when it could be read.
    pub name: Option<String>,
    /// The record type asked.
    pub qtype: u16,
    /// What was answered.
    pub outcome: Outcome,
}

const TYPE_A: u16 = 1;
const CLASS_IN: u16 = 1;
const RCODE_FORMERR: u8 = 1;
const RCODE_SERVFAIL: u8 = 2;
const RCODE_NXDOMAIN: u8 = 3;
const RCODE_REFUSED: u8 = 5;

/// Answers `query`. `allows` says whether a (lowercased) name may have a placeholder.
/// `None` when the datagram is too short to carry a header, or is itself a response: nothing
/// is sent back.
pub fn answer(
    query: &[u8],
    allows: impl Fn(&str) -> bool,
    places: &mut Placeholders,
) -> Option<Answer> {
    if query.len() < 12 || query[2] & 0x80 != 0 {
        return None;
    }
    let fail = |rcode: u8, name: Option<String>, qtype: u16, outcome: Outcome, question: &[u8]| {
        Answer { bytes: response(query, question, rcode, None), name, qtype, outcome }
    };
    let opcode = (query[2] >> 3) & 0x0f;
    let qdcount = u16::from_be_bytes([query[4], query[5]]);
    if opcode != 0 || qdcount != 1 {
        return Some(fail(RCODE_FORMERR, None, 0, Outcome::Failed, &[]));
    }
    // The question: labels, then type and class. Queries carry no compression pointers.
    let mut at = 12;
    let mut labels: Vec<&[u8]> = Vec::new();
    loop {
        let Some(&len) = query.get(at) else {
            return Some(fail(RCODE_FORMERR, None, 0, Outcome::Failed, &[]));
        };
        at += 1;
        if len == 0 {
            break;
        }
        if len > 63 || labels.len() >= 127 {
            return Some(fail(RCODE_FORMERR, None, 0, Outcome::Failed, &[]));
        }
        let Some(label) = query.get(at..at + len as usize) else {
            return Some(fail(RCODE_FORMERR, None, 0, Outcome::Failed, &[]));
        };
        labels.push(label);
        at += len as usize;
    }
    let Some(tail) = query.get(at..at + 4) else {
        return Some(fail(RCODE_FORMERR, None, 0, Outcome::Failed, &[]));
    };
    let qtype = u16::from_be_bytes([tail[0], tail[1]]);
    let qclass = u16::from_be_bytes([tail[2], tail[3]]);
    let question = &query[12..at + 4];
    let clean = |l: &&[u8]| l.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if labels.is_empty() || !labels.iter().all(clean) || at - 12 > 255 {
        let shown = labels.iter().map(|l| String::from_utf8_lossy(l)).collect::<Vec<_>>().join(".");
        return Some(fail(RCODE_REFUSED, Some(shown), qtype, Outcome::Refused, question));
    }
    let name = labels
        .iter()
        .map(|l| std::str::from_utf8(l).unwrap_or_default())
        .collect::<Vec<_>>()
        .join(".")
        .to_ascii_lowercase();
    if qclass != CLASS_IN || !allows(&name) {
        return Some(fail(RCODE_NXDOMAIN, Some(name), qtype, Outcome::NxDomain, question));
    }
    if qtype != TYPE_A {
        return Some(fail(0, Some(name), qtype, Outcome::NoData, question));
    }
    match places.assign(&name) {
        Some(ip) => Some(Answer {
            bytes: response(query, question, 0, Some(ip)),
            name: Some(name),
            qtype,
            outcome: Outcome::Placeholder(ip),
        }),
        None => Some(fail(RCODE_SERVFAIL, Some(name), qtype, Outcome::Failed, question)),
    }
}

/// A response to `query` carrying `question` (empty when it could not be read) and, with
/// `ip`, one A record pointing back at the question's name.
fn response(query: &[u8], question: &[u8], rcode: u8, ip: Option<Ipv4Addr>) -> Vec<u8> {
    let mut out = Vec::with_capacity(12 + question.len() + 16);
    out.extend_from_slice(&query[..2]);
    // QR, the query's opcode and RD, AA; RA clear (the stub recurses nowhere).
    out.push(0x80 | (query[2] & 0x79) | 0x04);
    out.push(rcode & 0x0f);
    let qd = u16::from(!question.is_empty());
    out.extend_from_slice(&qd.to_be_bytes());
    out.extend_from_slice(&u16::from(ip.is_some()).to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(question);
    if let Some(ip) = ip {
        out.extend_from_slice(&[0xc0, 12]);
        out.extend_from_slice(&TYPE_A.to_be_bytes());
        out.extend_from_slice(&CLASS_IN.to_be_bytes());
        out.extend_from_slice(&TTL.to_be_bytes());
        out.extend_from_slice(&4u16.to_be_bytes());
        out.extend_from_slice(&ip.octets());
    }
    out
}

/// A query for `name` and `qtype` with id `id` (tests, the fuzz target, the bench).
pub fn query(id: u16, name: &str, qtype: u16) -> Vec<u8> {
    let mut q = id.to_be_bytes().to_vec();
    q.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.trim_end_matches('.').split('.') {
        q.push(label.len() as u8);
        q.extend_from_slice(label.as_bytes());
    }
    q.push(0);
    q.extend_from_slice(&qtype.to_be_bytes());
    q.extend_from_slice(&CLASS_IN.to_be_bytes());
    q
}
