//! Fuzz bodies, kept in the library so that a unit test compiles and runs them on every build.
//! The `fuzz/` crate's targets are one-line wrappers around these functions.

#![forbid(unsafe_code)]

use crate::frame::{LineFramer, merge_spills, oracle, oracle_spilling};
use crate::jsonrpc;

/// Framer vs. its oracle: the first bytes choose the bound and the chunking, the rest is the
/// input. Panics on any disagreement.
pub fn framer(data: &[u8]) {
    let [a, b, rest @ ..] = data else { return };
    let max = 1 + usize::from(*a) % 96;
    let chunk = 1 + usize::from(*b) % 17;
    // The top bit of the first byte picks a spilling framer.
    let spill = *a >= 128;
    let mut framer = if spill { LineFramer::spilling(max) } else { LineFramer::new(max) };
    let mut got = Vec::new();
    // Vary the chunk sizes deterministically: chunk, 2*chunk, 3*chunk, ...
    let mut start = 0;
    let mut step = chunk;
    let mut round = 0usize;
    while start < rest.len() {
        let end = (start + step).min(rest.len());
        // Alternate the copying and the zero-copy entry points, and sometimes push twice
        // before pulling, so every path is compared with the oracle.
        if round.is_multiple_of(2) {
            framer.push(&rest[start..end]);
        } else {
            framer.push_bytes(bytes::Bytes::copy_from_slice(&rest[start..end]));
        }
        if round % 3 != 1 {
            while let Some(ev) = framer.next_event() {
                got.push(ev);
            }
            assert!(framer.buffered() <= max + 2 * 48, "framer buffered past its bound");
        }
        start = end;
        step = step % 31 + chunk;
        round += 1;
    }
    while let Some(ev) = framer.next_event() {
        got.push(ev);
    }
    if spill {
        assert_eq!(merge_spills(got), oracle_spilling(rest, max));
    } else {
        assert_eq!(got, oracle(rest, max));
    }
}

/// The JSON-RPC decoders must never panic, must agree (the raw one may only be more lenient
/// about number ranges, which its caller's parse then reports), and what they accept must
/// survive re-encoding.
pub fn jsonrpc_decode(data: &[u8]) {
    let raw = jsonrpc::decode_raw(&bytes::Bytes::copy_from_slice(data));
    match (&raw, jsonrpc::decode(data)) {
        (Ok(jsonrpc::RawDecoded::Single(_)), Ok(jsonrpc::Decoded::Single(_)))
        | (Ok(jsonrpc::RawDecoded::Batch(_)), Ok(jsonrpc::Decoded::Batch(_)))
        | (Err(_), Err(_))
        | (Ok(_), Err(jsonrpc::DecodeError::Json(_))) => {}
        (raw, full) => panic!("decoders disagree: raw {raw:?}, full {full:?}"),
    }
    if let Ok(jsonrpc::Decoded::Single(jsonrpc::Message::Response(r))) = jsonrpc::decode(data) {
        let line = match (&r.id, &r.outcome) {
            (Some(id), Ok(v)) => jsonrpc::encode_result(id, v).expect("value encodes"),
            (id, Err(e)) => jsonrpc::encode_error(id.as_ref(), e),
            (None, Ok(_)) => unreachable!("decoder rejects results with null ids"),
        };
        let again = jsonrpc::decode(&line[..line.len() - 1]).expect("re-encoded response decodes");
        assert!(matches!(again, jsonrpc::Decoded::Single(jsonrpc::Message::Response(_))));
    }
}

/// The spill scanner against serde_json: the first byte picks the threshold (low 3 bits) and the
/// chunk sizes, the rest is the line. Never panics on its own; panics when the scan disagrees
/// with serde_json (accepts what it rejects, rejects a valid message for another reason than
/// non-canonical base64 or depth, or loses or alters anything in the skeleton and spills).
pub fn spill_scan(data: &[u8]) {
    let [ctl, line @ ..] = data else { return };
    let threshold = [0, 1, 2, 3, 5, 8, 64, usize::MAX][usize::from(ctl & 7)];
    let chunk = 1 + usize::from(ctl >> 3);
    // Chunks of chunk, 2*chunk, 3*chunk, ... (mod 31), as for the framer.
    let mut cuts = Vec::new();
    let (mut at, mut step) = (0, chunk);
    while at < line.len() {
        at += step;
        cuts.push(at.min(line.len()));
        step = step % 31 + chunk;
    }
    crate::spill::scan::oracle::check(line, threshold, &cuts);
}

/// The SSE parser against its oracle: the first byte picks the chunk sizes, the rest is the
/// event stream. Panics on any disagreement.
pub fn sse(data: &[u8]) {
    use crate::transport::sse::{oracle, parse_chunked};
    let [ctl, input @ ..] = data else { return };
    let chunk = 1 + usize::from(ctl % 16);
    let (mut cuts, mut at, mut step) = (Vec::new(), 0, chunk);
    while at < input.len() {
        at += step;
        cuts.push(at.min(input.len()));
        step = step % 13 + chunk;
    }
    // No event of a fuzz input can reach the bound, so the parser never gives up here.
    let got = parse_chunked(input, &cuts, 1 << 30).expect("within the bound");
    assert_eq!(got, oracle(input));
}

/// The epoch of the protocol simulator's virtual clock: tests take one real instant as time
/// zero and then only add durations to it, so the session under test never reads a clock.
pub fn epoch() -> std::time::Instant {
    std::time::Instant::now()
}

#[cfg(test)]
mod tests {
    #[test]
    fn fuzz_bodies_run() {
        super::framer(b"\x05\x03{\"id\":1}\n\r\n{\"id\":123456789,\"x\":1}\npartial");
        super::framer(b"\x85\x03{\"id\":1}\n\r\n{\"id\":123456789,\"x\":1}\npartial");
        super::framer(b"");
        super::jsonrpc_decode(br#"{"jsonrpc":"2.0","id":1,"result":{"a":[1,2]}}"#);
        super::jsonrpc_decode(br#"{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}"#);
        super::jsonrpc_decode(b"\xff\xfe");
        super::spill_scan(
            &[&b"\x01"[..], br#"{"jsonrpc":"2.0","id":1,"result":{"text":"abc","data":"QUJD"}}"#]
                .concat(),
        );
        super::spill_scan(b"\x00{\"result\":\"\\ud83d\\ude00\"} ");
        super::spill_scan(b"\x09[1]");
        super::spill_scan(b"");
        super::sse(b"\x03id: 1\r\ndata: a\r\ndata:b\r\rretry: 5\n: c\n\xEF\xBB\xBFx\n\n");
        super::sse(b"");
    }
}
