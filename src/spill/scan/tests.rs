use std::fmt::Write as _;

use proptest::prelude::*;
use proptest::sample::Index;
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use super::oracle::{self, Node, RecordingSink, base64_encode};
use super::*;

/// Scans `line` in chunks of `chunk` bytes.
fn scan_in(
    line: &[u8],
    threshold: usize,
    chunk: usize,
) -> (Result<Scanned, ScanError>, RecordingSink) {
    let mut scanner = SpillScanner::new(threshold);
    let mut sink = RecordingSink::default();
    for piece in line.chunks(chunk.max(1)) {
        if let Err(e) = scanner.feed(piece, &mut sink) {
            return (Err(e.into_scan()), sink);
        }
    }
    (scanner.finish(), sink)
}

/// The error for `line`, which must be the same whole and byte by byte.
fn error_of(line: &[u8], threshold: usize) -> ScanError {
    let whole = scan_in(line, threshold, line.len()).0.expect_err("rejected");
    let bytes = scan_in(line, threshold, 1).0.expect_err("rejected byte by byte");
    assert_eq!(whole, bytes, "{}", String::from_utf8_lossy(line));
    whole
}

fn key(k: &str) -> PathSegment {
    PathSegment::Key(k.to_owned())
}

#[test]
fn spills_large_strings_and_keeps_the_rest() {
    let line = br#"{"jsonrpc":"2.0", "id":7, "result":{"content":[{"type":"text","text":"hello world, long"},
        {"type":"image","data":"aGVsbG8gd29ybGQ=","mimeType":"image/png"}],"n":[1.5e3,true,null]}}"#;
    let (scanned, sink) = scan_in(line, 10, 7);
    let scanned = scanned.expect("valid");
    assert_eq!(
        String::from_utf8(scanned.skeleton.clone()).expect("utf-8"),
        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":{"$ringmcp_spill":0}},{"type":"image","data":{"$ringmcp_spill":1},"mimeType":"image/png"}],"n":[1.5e3,true,null]}}"#
    );
    assert_eq!(scanned.id.as_deref(), Some(&b"7"[..]));
    assert!(scanned.has_result && !scanned.is_error);
    assert_eq!(sink.spills[0].bytes, b"hello world, long");
    assert_eq!(sink.spills[1].bytes, b"hello world");
    let info = &scanned.spills[1];
    assert_eq!(info.path, [key("content"), PathSegment::Index(1), key("data")]);
    assert_eq!((info.encoding, info.len), (SpillEncoding::Base64Decoded, 11));
    assert_eq!(info.pointer(), "/content/1/data");
    for cut in 0..=line.len() {
        oracle::check(line, 10, &[cut]);
    }
}

#[test]
fn escapes_are_decoded_when_spilled_and_kept_when_not() {
    let line = br#"{"id":"a\"b","result":{"t":"\u00e9\uD83D\uDE00\n\/x","k\u0065y":"\u0041","d\u0061ta":"QU\/D"}}"#;
    let (scanned, sink) = scan_in(line, 3, 1);
    let scanned = scanned.expect("valid");
    assert_eq!(scanned.id.as_deref(), Some(&br#""a\"b""#[..]));
    assert_eq!(sink.spills[0].bytes, "é😀\n/x".as_bytes());
    assert_eq!(sink.spills[1].bytes, [0x41, 0x4f, 0xc3]);
    assert_eq!(scanned.spills[1].path, [key("data")]);
    assert!(String::from_utf8_lossy(&scanned.skeleton).contains(r#""key":"A""#));
    oracle::check(line, 3, &[]);
}

#[test]
fn escapes_and_long_runs_keep_their_order() {
    let run = "x".repeat(3 * DIRECT_WRITE);
    let line = format!(r#"{{"result":["\n{run}\t{run}é\u00e9","{run}\/"]}}"#);
    for threshold in [0, 1, 5, DIRECT_WRITE, 4 * DIRECT_WRITE] {
        for cut in [0, 12, 13, 14, 100, 2000, 3100, 6200] {
            oracle::check(line.as_bytes(), threshold, &[cut]);
        }
    }
}

#[test]
fn strings_outside_result_are_never_spilled() {
    let line = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"a long message indeed","data":"QUJD"}}"#;
    let (scanned, sink) = scan_in(line, 0, 5);
    let scanned = scanned.expect("valid");
    assert!(scanned.is_error && !scanned.has_result && sink.spills.is_empty());
    assert_eq!(scanned.skeleton, line);
}

#[test]
fn rejects_malformed_lines_precisely() {
    let syntax = |offset, reason| ScanError::Syntax { offset, reason };
    let cases: [(&[u8], ScanError); 18] = [
        (br#"{"id":1,"result":{"a":"xy"#, ScanError::Truncated { offset: 25 }),
        (b"", ScanError::Truncated { offset: 0 }),
        (br#"{"result":"a\qb"}"#, syntax(13, "invalid escape")),
        (br#"{"result":"\u12G4"}"#, syntax(15, "expected a hex digit in a \\u escape")),
        (br#"{"result":"ab\udc00"}"#, syntax(13, "lone low surrogate in a \\u escape")),
        (
            br#"{"result":"\ud800\u0041"}"#,
            syntax(11, "high surrogate not followed by a low surrogate"),
        ),
        (b"{\"result\":\"a\x01\"}", syntax(12, "control character in a string")),
        (b"{\"result\":\"ab\xE2\x82A\"}", syntax(13, "invalid UTF-8 in a string")),
        (b"{\"r\xff\":1}", syntax(3, "invalid UTF-8 in a string")),
        (b"[1]", ScanError::NotAnObject { offset: 0 }),
        (b"  \"x\"", ScanError::NotAnObject { offset: 2 }),
        (br#"{"id":1} x"#, syntax(9, "trailing characters after the message")),
        (br#"{"id":1}{}"#, syntax(8, "trailing characters after the message")),
        (br#"{"result":[1,1e400]}"#, syntax(13, "number out of range")),
        (br#"{"result":[1e99999999999]}"#, syntax(11, "number out of range")),
        (br#"{"result":[01]}"#, syntax(12, "leading zero in a number")),
        (br#"{"result":[1}"#, syntax(12, "mismatched closing bracket")),
        (br#"{"result":[tru]}"#, syntax(14, "invalid literal")),
    ];
    for (line, expected) in cases {
        assert_eq!(error_of(line, 4), expected, "{}", String::from_utf8_lossy(line));
        oracle::check(line, 4, &[]);
    }
}

#[test]
fn invalid_utf8_split_across_chunks_is_found() {
    let line = b"{\"result\":\"long enough \xE2\x82A\"}";
    for cut in 0..=line.len() {
        let mut scanner = SpillScanner::new(4);
        let mut sink = RecordingSink::default();
        let first = scanner.feed(&line[..cut], &mut sink).map_err(FeedError::into_scan);
        let err = first
            .and_then(|()| scanner.feed(&line[cut..], &mut sink).map_err(FeedError::into_scan));
        assert_eq!(
            err,
            Err(ScanError::Syntax { offset: 23, reason: "invalid UTF-8 in a string" }),
            "cut {cut}"
        );
    }
}

#[test]
fn invalid_base64_is_reported_where_it_goes_wrong() {
    let bad = |offset| ScanError::InvalidBase64 { offset };
    // Past the threshold, in the buffered prefix, behind an escape, and an incomplete group.
    assert_eq!(error_of(br#"{"result":{"data":"QUJD*EVG"}}"#, 2), bad(23));
    assert_eq!(error_of(br#"{"result":{"data":"QU*DREVG"}}"#, 4), bad(21));
    assert_eq!(error_of(br#"{"result":{"blob":"QUJD\u002aEVG"}}"#, 2), bad(23));
    assert_eq!(error_of(br#"{"result":{"data":"QUJDR"}}"#, 2), bad(24));
    assert_eq!(error_of(br#"{"result":[{"data":"QQ==QQ=="}]}"#, 0), bad(24));
    // Small `data` strings are kept as they are, base64 or not.
    assert!(scan_in(br#"{"result":{"data":"not base64"}}"#, 20, 3).0.is_ok());
}

#[test]
fn nesting_is_bounded_so_placeholders_still_parse() {
    let nested = |depth: usize| {
        let inner = depth - 1; // the message object is one level
        format!("{{\"result\":{}\"x\"{}}}", "[".repeat(inner), "]".repeat(inner)).into_bytes()
    };
    oracle::check(&nested(MAX_DEPTH), 0, &[]);
    assert!(scan_in(&nested(MAX_DEPTH), 0, 3).0.is_ok());
    assert_eq!(
        error_of(&nested(MAX_DEPTH + 1), 0),
        ScanError::TooDeep { offset: 10 + MAX_DEPTH as u64 - 1 }
    );
    oracle::check(&nested(MAX_DEPTH + 1), 0, &[]);
}

#[test]
fn the_skeleton_is_bounded() {
    let line = format!(r#"{{"id":1,"error":{{"code":1,"message":"{}"}}}}"#, "m".repeat(100));
    let mut scanner = SpillScanner::new(0).max_skeleton(64);
    let mut sink = RecordingSink::default();
    let err = scanner.feed(line.as_bytes(), &mut sink).map_err(FeedError::into_scan);
    assert_eq!(err, Err(ScanError::SkeletonTooLarge { offset: line.len() as u64 }));
}

#[test]
fn sink_errors_stop_the_scan() {
    struct Failing;
    impl SpillSink for Failing {
        type Error = &'static str;
        fn begin(
            &mut self,
            _: usize,
            _: &[PathSegment],
            _: SpillEncoding,
        ) -> Result<(), Self::Error> {
            Ok(())
        }
        fn write(&mut self, _: usize, _: &[u8]) -> Result<(), Self::Error> {
            Err("disk full")
        }
        fn end(&mut self, _: usize, _: u64) -> Result<(), Self::Error> {
            Ok(())
        }
    }
    let mut scanner = SpillScanner::new(1);
    let err = scanner.feed(br#"{"result":"abcdef"#, &mut Failing);
    assert!(matches!(err, Err(FeedError::Sink("disk full"))));
    let again = scanner.feed(b"\"}", &mut Failing);
    assert!(matches!(again, Err(FeedError::Scan(ScanError::Aborted { offset: 0 }))));
    assert_eq!(scanner.finish(), Err(ScanError::Aborted { offset: 0 }));
}

/// A sink that only counts what it is given.
#[derive(Default)]
struct Count {
    writes: usize,
    bytes: u64,
}

impl SpillSink for Count {
    type Error = Infallible;
    fn begin(&mut self, _: usize, _: &[PathSegment], _: SpillEncoding) -> Result<(), Infallible> {
        Ok(())
    }
    fn write(&mut self, _: usize, bytes: &[u8]) -> Result<(), Infallible> {
        std::hint::black_box(bytes);
        self.writes += 1;
        self.bytes += bytes.len() as u64;
        Ok(())
    }
    fn end(&mut self, _: usize, _: u64) -> Result<(), Infallible> {
        Ok(())
    }
}

#[test]
fn large_runs_reach_the_sink_in_few_writes() {
    let body = "x".repeat(1 << 20);
    let line = format!(
        r#"{{"id":1,"result":{{"text":"{body}","data":"{}"}}}}"#,
        base64_encode(body.as_bytes())
    );
    let mut scanner = SpillScanner::new(100);
    let mut sink = Count::default();
    for piece in line.as_bytes().chunks(64 * 1024) {
        scanner.feed(piece, &mut sink).map_err(FeedError::into_scan).expect("valid");
        assert!(scanner.held_bytes() <= 100 + HELD_SLACK);
    }
    let scanned = scanner.finish().expect("valid");
    assert_eq!(sink.bytes, 2 << 20);
    assert!(sink.writes < 2 * 16 + (1 << 20) * 2 / STAGING, "{} writes", sink.writes);
    assert!(scanned.skeleton.len() < 100, "{}", scanned.skeleton.len());
}

/// Rough throughput on 100 MB results (`cargo test --release --lib spill::scan::tests::throughput
/// -- --ignored --nocapture`).
#[test]
#[ignore = "a measurement, not a test"]
fn throughput() {
    let n = 100_000_000;
    let plain: String = "lorem ipsum dolor sit amet, consectetur adipiscing elit. "
        .chars()
        .cycle()
        .take(n)
        .collect();
    let code = "    if x > 0 {\\n        println!(\\\"{x}\\\");\\n    }\\n";
    let code = code.repeat(n / code.len());
    let dense = "\\\"quoted\\\"\\ttab \\u00e9\\u4e2d\\n";
    let dense = dense.repeat(n / dense.len());
    let bytes: Vec<u8> = (0..n * 3 / 4).map(|i| (i * 7 + i / 13) as u8).collect();
    let cases = [
        ("plain text", "text", plain),
        ("code", "text", code),
        ("dense escapes", "text", dense),
        ("base64", "data", base64_encode(&bytes)),
    ];
    for (name, member, body) in cases {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{{"type":"text","{member}":"{body}"}}]}}}}"#
        );
        // Best of three, so that building the inputs does not count.
        let mut secs = f64::INFINITY;
        for _ in 0..3 {
            let start = std::time::Instant::now();
            let mut scanner = SpillScanner::new(4096);
            let mut sink = Count::default();
            for piece in line.as_bytes().chunks(64 * 1024) {
                scanner.feed(piece, &mut sink).map_err(FeedError::into_scan).expect("valid");
            }
            let scanned = scanner.finish().expect("valid");
            secs = secs.min(start.elapsed().as_secs_f64());
            assert_eq!(scanned.spills.len(), 1);
            assert_eq!(scanned.spills[0].len, sink.bytes);
        }
        println!(
            "{name} (1 escape per {:.0} bytes): {:.0} MB in {secs:.3} s = {:.2} GB/s",
            body.len() as f64 / body.matches('\\').count().max(1) as f64,
            line.len() as f64 / 1e6,
            line.len() as f64 / secs / 1e9
        );
    }
}

// ---- Property test against the oracle ----

impl Serialize for Node {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Node::Null => s.serialize_unit(),
            Node::Bool(b) => s.serialize_bool(*b),
            Node::Number(n) => n.serialize(s),
            Node::String(t) => s.serialize_str(t),
            Node::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Node::Object(members) => {
                let mut map = s.serialize_map(Some(members.len()))?;
                for (k, v) in members {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

/// A tiny deterministic generator for serialisation choices.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Serialises like a careless server: random whitespace, and characters escaped at random
/// (`\uhhhh`, surrogate pairs, `\/`, short escapes).
fn write_wild(node: &Node, rng: &mut Rng, out: &mut String) {
    let ws = |rng: &mut Rng, out: &mut String| {
        out.push_str(["", "", "", " ", "  ", "\t", "\r\n "][rng.below(7) as usize]);
    };
    match node {
        Node::String(t) => write_wild_str(t, rng, out),
        Node::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                ws(rng, out);
                write_wild(item, rng, out);
                ws(rng, out);
            }
            out.push(']');
        }
        Node::Object(members) => {
            out.push('{');
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                ws(rng, out);
                write_wild_str(k, rng, out);
                ws(rng, out);
                out.push(':');
                ws(rng, out);
                write_wild(v, rng, out);
                ws(rng, out);
            }
            out.push('}');
        }
        scalar => out.push_str(&serde_json::to_string(scalar).expect("scalar")),
    }
}

fn write_wild_str(text: &str, rng: &mut Rng, out: &mut String) {
    // One character in `rate` (on average) is escaped although it need not be; varying the rate
    // per message gives both escape-dense text and long raw runs between escapes.
    let rate = [2, 6, 64, 1000][(rng.0 >> 60) as usize % 4];
    out.push('"');
    for c in text.chars() {
        let roll = rng.below(rate);
        let short = match c {
            '"' | '\\' => Some(c),
            '\n' => Some('n'),
            '\t' => Some('t'),
            '\r' => Some('r'),
            '\u{8}' => Some('b'),
            '\u{c}' => Some('f'),
            '/' => Some('/'),
            _ => None,
        };
        match short {
            Some(s) if c == '"' || c == '\\' || roll == 0 || c < ' ' && roll % 2 == 1 => {
                out.push('\\');
                out.push(s);
            }
            _ if roll == 0 || c < ' ' => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    write!(out, "\\u{u:04X}").expect("string");
                }
            }
            _ => out.push(c),
        }
    }
    out.push('"');
}

fn text() -> impl Strategy<Value = String> {
    let special = prop_oneof![
        Just('"'),
        Just('\\'),
        Just('/'),
        Just('\n'),
        Just('\t'),
        Just('\u{1}'),
        Just('é'),
        Just('中'),
        Just('😀'),
        Just('\u{7f}'),
        Just('\u{ffff}'),
        any::<char>(),
        Just('a'),
        Just(' '),
    ];
    prop_oneof![
        3 => "[a-z ]{0,20}",
        2 => proptest::collection::vec(special, 0..40).prop_map(|v| v.into_iter().collect()),
        1 => (0usize..300).prop_map(|n| "lorem ipsum é中😀 ".chars().cycle().take(n).collect()),
        2 => (0usize..3000).prop_map(|n| "lorem ipsum é中😀 ".chars().cycle().take(n).collect()),
    ]
}

fn base64_text() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => proptest::collection::vec(any::<u8>(), 0..400).prop_map(|b| base64_encode(&b)),
        1 => "[A-Za-z0-9+/=*]{0,12}",
    ]
}

fn member_key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("type".to_owned()),
        Just("text".to_owned()),
        Just("data".to_owned()),
        Just("blob".to_owned()),
        Just("content".to_owned()),
        "[a-z]{1,6}",
        "\\PC{0,4}",
    ]
}

fn leaf() -> impl Strategy<Value = Node> {
    prop_oneof![
        1 => Just(Node::Null),
        1 => any::<bool>().prop_map(Node::Bool),
        1 => any::<i64>().prop_map(|n| Node::Number(n.into())),
        1 => any::<u64>().prop_map(|n| Node::Number(n.into())),
        1 => any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f).map(Node::Number)),
        4 => text().prop_map(Node::String),
    ]
}

fn value() -> impl Strategy<Value = Node> {
    leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Node::Array),
            proptest::collection::vec((member_key(), inner.clone()), 0..6).prop_map(Node::Object),
            (
                prop_oneof![Just("data"), Just("blob")],
                base64_text(),
                proptest::collection::vec((member_key(), inner), 0..3)
            )
                .prop_map(|(k, b64, mut rest)| {
                    rest.insert(0, (k.to_owned(), Node::String(b64)));
                    Node::Object(rest)
                }),
        ]
    })
}

fn message() -> impl Strategy<Value = Node> {
    let id = prop_oneof![
        any::<i64>().prop_map(|n| Node::Number(n.into())),
        "[a-z0-9\"]{0,8}".prop_map(Node::String),
    ];
    let body = prop_oneof![
        4 => value().prop_map(|v| ("result".to_owned(), v)),
        1 => (text(), value()).prop_map(|(m, d)| {
            let error = vec![("code".to_owned(), Node::Number((-32000).into())), ("message".to_owned(), Node::String(m)), ("data".to_owned(), d)];
            ("error".to_owned(), Node::Object(error))
        }),
    ];
    (id, body, any::<bool>()).prop_map(|(id, body, id_last)| {
        let mut members = vec![("jsonrpc".to_owned(), Node::String("2.0".to_owned()))];
        if id_last {
            members.extend([body, ("id".to_owned(), id)]);
        } else {
            members.extend([("id".to_owned(), id), body]);
        }
        Node::Object(members)
    })
}

fn threshold() -> impl Strategy<Value = usize> {
    prop_oneof![
        1 => Just(0),
        6 => 1..16usize,
        2 => 16..300usize,
        1 => 300..3000usize,
        1 => Just(usize::MAX),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn matches_serde_json_under_every_chunking(
        msg in message(),
        style in 0..3u8,
        seed in any::<u64>(),
        threshold in threshold(),
        cuts in proptest::collection::vec(any::<Index>(), 0..24),
        bytewise in proptest::bool::weighted(0.2),
    ) {
        let line = match style {
            0 => serde_json::to_vec(&msg).expect("serialises"),
            1 => serde_json::to_vec_pretty(&msg).expect("serialises"),
            _ => {
                let mut out = String::new();
                write_wild(&msg, &mut Rng(seed | 1), &mut out);
                out.into_bytes()
            }
        };
        let mut cuts: Vec<usize> = if bytewise {
            (1..line.len()).collect()
        } else {
            cuts.iter().map(|i| i.index(line.len() + 1)).collect()
        };
        cuts.sort_unstable();
        oracle::check(&line, threshold, &cuts);
    }
}

#[test]
fn decode_base64_agrees_with_the_oracle() {
    for len in 0..40usize {
        let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
        let text = super::oracle::base64_encode(&bytes);
        assert_eq!(super::decode_base64(text.as_bytes()), Ok(bytes));
    }
    for (bad, at) in [("QQ", 2), ("QQ=", 3), ("Q===", 1), ("QR==", 2), ("QQ==QQ==", 4), ("Q Q=", 1)]
    {
        assert_eq!(super::decode_base64(bad.as_bytes()), Err(at), "{bad}");
        assert_eq!(super::oracle::base64_decode_canonical(bad), None, "{bad}");
    }
}
