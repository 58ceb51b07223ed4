//! The reference semantics of [`SpillScanner`], for the property tests and the fuzz target:
//! [`check`] scans a line under a given chunking and compares everything with what serde_json
//! makes of the line. Panics on any disagreement.

use std::convert::Infallible;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, MapAccess, SeqAccess, Visitor};

use super::{
    HELD_SLACK, MAX_DEPTH, PLACEHOLDER_KEY, PathSegment, ScanError, Scanned, SpillEncoding,
    SpillScanner, SpillSink,
};

/// A JSON value that keeps members in order, duplicates included (unlike `serde_json::Value`),
/// since the scanner sees every member.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number, as serde_json parses it.
    Number(serde_json::Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Node>),
    /// An object's members in order.
    Object(Vec<(String, Node)>),
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Number(v.into()))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        serde_json::Number::from_f64(v).map(Node::Number).ok_or_else(|| E::custom("not finite"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::String(v.to_owned()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut members = Vec::new();
        while let Some(member) = map.next_entry()? {
            members.push(member);
        }
        Ok(Node::Object(members))
    }
}

impl Node {
    /// Nesting depth of containers (a scalar is 0).
    fn depth(&self) -> usize {
        match self {
            Node::Array(items) => 1 + items.iter().map(Node::depth).max().unwrap_or(0),
            Node::Object(members) => 1 + members.iter().map(|(_, v)| v.depth()).max().unwrap_or(0),
            _ => 0,
        }
    }

    /// Longest member name, in bytes.
    fn longest_key(&self) -> usize {
        match self {
            Node::Array(items) => items.iter().map(Node::longest_key).max().unwrap_or(0),
            Node::Object(members) => {
                members.iter().map(|(k, v)| k.len().max(v.longest_key())).max().unwrap_or(0)
            }
            _ => 0,
        }
    }
}

/// A spill as the sink saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// `begin`'s arguments.
    pub index: usize,
    /// `begin`'s path.
    pub path: Vec<PathSegment>,
    /// `begin`'s encoding.
    pub encoding: SpillEncoding,
    /// All `write`s, concatenated.
    pub bytes: Vec<u8>,
    /// `end`'s length, once ended.
    pub ended: Option<u64>,
}

/// A sink that records everything and asserts the call order documented on [`SpillSink`].
#[derive(Debug, Default)]
pub struct RecordingSink {
    /// The spills, in order.
    pub spills: Vec<Recorded>,
}

impl SpillSink for RecordingSink {
    type Error = Infallible;

    fn begin(
        &mut self,
        index: usize,
        path: &[PathSegment],
        encoding: SpillEncoding,
    ) -> Result<(), Infallible> {
        assert_eq!(index, self.spills.len(), "spill indices count from 0");
        assert!(self.spills.last().is_none_or(|s| s.ended.is_some()), "begin before end");
        let path = path.to_vec();
        self.spills.push(Recorded { index, path, encoding, bytes: Vec::new(), ended: None });
        Ok(())
    }

    fn write(&mut self, index: usize, bytes: &[u8]) -> Result<(), Infallible> {
        assert!(!bytes.is_empty(), "empty write");
        let open = self.spills.last_mut().expect("write before begin");
        assert!(open.index == index && open.ended.is_none(), "write to spill {index}");
        open.bytes.extend_from_slice(bytes);
        Ok(())
    }

    fn end(&mut self, index: usize, len: u64) -> Result<(), Infallible> {
        let open = self.spills.last_mut().expect("end before begin");
        assert!(open.index == index && open.ended.is_none(), "end of spill {index}");
        assert_eq!(open.bytes.len() as u64, len, "end's length");
        open.ended = Some(len);
        Ok(())
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding.
pub fn base64_encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for group in bytes.chunks(3) {
        let v = group.iter().enumerate().fold(0u32, |v, (i, &b)| v | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= group.len() {
                out.push(char::from(ALPHABET[(v >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `text` if it is canonical base64 (what [`base64_encode`] produces), decoded.
pub fn base64_decode_canonical(text: &str) -> Option<Vec<u8>> {
    let body = text.trim_end_matches('=');
    let mut bits = 0u32;
    let mut nbits = 0;
    let mut out = Vec::new();
    for c in body.bytes() {
        let v = ALPHABET.iter().position(|&a| a == c)?;
        bits = bits << 6 | v as u32;
        nbits += 6;
        if nbits >= 8 {
            nbits -= 8;
            out.push((bits >> nbits) as u8);
            bits &= (1 << nbits) - 1;
        }
    }
    (base64_encode(&out) == text).then_some(out)
}

/// The skeleton with each placeholder replaced by its spill as a JSON string (base64 again for
/// decoded spills): the original message, up to whitespace and escaping.
pub fn reconstruct(scanned: &Scanned, contents: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut at = 0;
    for (info, bytes) in scanned.spills.iter().zip(contents) {
        out.extend_from_slice(&scanned.skeleton[at..info.placeholder.start]);
        let text = match info.encoding {
            SpillEncoding::Utf8Text => {
                String::from_utf8(bytes.clone()).expect("spilled text is UTF-8")
            }
            SpillEncoding::Base64Decoded => base64_encode(bytes),
        };
        out.extend_from_slice(serde_json::to_string(&text).expect("string").as_bytes());
        at = info.placeholder.end;
    }
    out.extend_from_slice(&scanned.skeleton[at..]);
    out
}

/// A spill the oracle expects: path, encoding, and the string's text.
type Expected = (Vec<PathSegment>, SpillEncoding, String);

/// Strings of `node` (inside `result`) longer than `threshold`, in document order.
fn expected_spills(
    node: &Node,
    key: Option<&str>,
    path: &mut Vec<PathSegment>,
    threshold: usize,
    out: &mut Vec<Expected>,
) {
    match node {
        Node::String(s) if s.len() > threshold => {
            let encoding = match key {
                Some("data" | "blob") => SpillEncoding::Base64Decoded,
                _ => SpillEncoding::Utf8Text,
            };
            out.push((path.clone(), encoding, s.clone()));
        }
        Node::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(PathSegment::Index(i));
                expected_spills(item, None, path, threshold, out);
                path.pop();
            }
        }
        Node::Object(members) => {
            for (k, v) in members {
                path.push(PathSegment::Key(k.clone()));
                expected_spills(v, Some(k), path, threshold, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// Scans `line` with `threshold`, cut into chunks at `cuts` (positions; out-of-range or
/// decreasing ones are skipped), and checks the outcome against serde_json.
///
/// # Panics
/// On any disagreement.
pub fn check(line: &[u8], threshold: usize, cuts: &[usize]) {
    let expected = serde_json::from_slice::<Node>(line);
    // A member name is held whole while it is read; for a line serde_json rejects, any could be.
    let longest_key = expected.as_ref().map_or(line.len(), Node::longest_key);
    let mut scanner = SpillScanner::new(threshold).max_skeleton(usize::MAX);
    let mut sink = RecordingSink::default();
    let mut outcome = Ok(());
    let mut start = 0;
    for end in cuts.iter().copied().chain([line.len()]) {
        if end < start || end > line.len() {
            continue;
        }
        outcome = scanner.feed(&line[start..end], &mut sink).map_err(super::FeedError::into_scan);
        if outcome.is_err() {
            break;
        }
        let bound = threshold.max(longest_key).saturating_add(HELD_SLACK);
        assert!(scanner.held_bytes() <= bound, "held {} > {bound}", scanner.held_bytes());
        start = end;
    }
    let scanned = outcome.and_then(|()| scanner.finish());
    if let Err(e) = &scanned {
        let offset = e.offset();
        assert!(offset <= line.len() as u64, "{e:?} past the end");
    }
    match (expected, scanned) {
        (Ok(Node::Object(members)), Ok(scanned)) => {
            verify(&members, &scanned, &sink, threshold);
        }
        (Ok(Node::Object(members)), Err(e)) => {
            let mut spills = Vec::new();
            for (_, v) in members.iter().filter(|(k, _)| k == "result") {
                expected_spills(v, Some("result"), &mut Vec::new(), threshold, &mut spills);
            }
            let bad_base64 = spills.iter().any(|(_, enc, s)| {
                *enc == SpillEncoding::Base64Decoded && base64_decode_canonical(s).is_none()
            });
            let too_deep = Node::Object(members).depth() > MAX_DEPTH;
            match e {
                ScanError::InvalidBase64 { .. } if bad_base64 => {}
                ScanError::TooDeep { .. } if too_deep => {}
                e => panic!("scanner rejects a message serde_json accepts: {e}"),
            }
        }
        (Ok(_), Err(ScanError::NotAnObject { .. })) | (Err(_), Err(_)) => {}
        (Ok(_), r) => panic!("not an object, but the scanner says {r:?}"),
        (Err(e), Ok(_)) => panic!("scanner accepts a line serde_json rejects ({e})"),
    }
}

/// Everything a successful scan must satisfy.
fn verify(members: &[(String, Node)], scanned: &Scanned, sink: &RecordingSink, threshold: usize) {
    let skeleton = serde_json::from_slice::<Node>(&scanned.skeleton);
    assert!(skeleton.is_ok(), "skeleton does not parse: {skeleton:?}");
    // The sink saw exactly the spills the scan reports, complete, placeholders in place.
    assert_eq!(sink.spills.len(), scanned.spills.len());
    let mut at = 0;
    for (info, rec) in scanned.spills.iter().zip(&sink.spills) {
        assert_eq!((info.index, &info.path, info.encoding), (rec.index, &rec.path, rec.encoding));
        assert_eq!(Some(info.len), rec.ended);
        assert!(info.placeholder.start >= at);
        at = info.placeholder.end;
        let marker = format!("{{\"{PLACEHOLDER_KEY}\":{}}}", info.index);
        assert_eq!(&scanned.skeleton[info.placeholder.clone()], marker.as_bytes());
    }
    // Exactly the strings over the threshold were spilled, with the right contents.
    let mut expected = Vec::new();
    for (_, v) in members.iter().filter(|(k, _)| k == "result") {
        expected_spills(v, Some("result"), &mut Vec::new(), threshold, &mut expected);
    }
    assert_eq!(expected.len(), sink.spills.len(), "number of spills");
    for ((path, encoding, text), rec) in expected.iter().zip(&sink.spills) {
        assert_eq!((path, *encoding), (&rec.path, rec.encoding));
        match encoding {
            SpillEncoding::Utf8Text => {
                assert!(rec.bytes == text.as_bytes(), "spill {} text", rec.index)
            }
            SpillEncoding::Base64Decoded => {
                let decoded = base64_decode_canonical(text).expect("scanner accepted bad base64");
                assert!(rec.bytes == decoded, "spill {} bytes", rec.index);
            }
        }
    }
    // Putting the spills back gives the message.
    let contents: Vec<Vec<u8>> = sink.spills.iter().map(|r| r.bytes.clone()).collect();
    let rebuilt =
        serde_json::from_slice::<Node>(&reconstruct(scanned, &contents)).expect("rebuilt parses");
    assert!(rebuilt == Node::Object(members.to_vec()), "rebuilt message differs");
    // Envelope facts.
    let id = members.iter().rev().find(|(k, _)| k == "id").map(|(_, v)| v);
    let token =
        scanned.id.as_deref().map(|t| serde_json::from_slice::<Node>(t).expect("id token parses"));
    assert_eq!(token.as_ref(), id, "id");
    assert_eq!(scanned.is_error, members.iter().any(|(k, _)| k == "error"));
    assert_eq!(scanned.has_result, members.iter().any(|(k, _)| k == "result"));
}
