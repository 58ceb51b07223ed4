//! Large results by reference, upstream: a backend answer past the spill threshold reaches the
//! upstream client with its big items as `resource_link`s to `ringmcp-spill://` URIs, which
//! the gateway serves through `resources/read`, whole (up to a limit) or in ranges with the
//! RFC 6570 query form `URI?offset=N&length=M` (docs/gateway.md, "Large results").

use base64::Engine;
use serde_json::{Value, json};

use crate::jsonrpc::{ErrorObject, RawJson, codes};
use crate::spill::store::{SpillFile, URI_SCHEME};

/// The resource template advertising ranged reads.
pub(crate) fn template() -> Value {
    json!({
        "uriTemplate": format!("{URI_SCHEME}://{{store}}/{{id}}{{?offset,length}}"),
        "name": "spilled",
        "title": "Large results kept by the gateway",
        "description": "A tool result too large to send inline, as a resource_link's URI. Read it whole (when small enough) or in ranges: ?offset=N&length=M bytes, answered as base64 blobs.",
    })
}

/// A spill URI split into its base and range.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Ranged<'a> {
    pub(crate) base: &'a str,
    pub(crate) range: Option<(u64, Option<u64>)>,
}

/// Splits `uri`'s query into offset and length.
///
/// # Errors
/// -32602 for a malformed or unknown query parameter.
pub(crate) fn parse(uri: &str) -> Result<Ranged<'_>, ErrorObject> {
    let Some((base, query)) = uri.split_once('?') else {
        return Ok(Ranged { base: uri, range: None });
    };
    let (mut offset, mut length) = (None, None);
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let n =
            v.parse::<u64>().map_err(|_| bad(uri, &format!("{k}={v:?} is not a byte count")))?;
        match k {
            "offset" => offset = Some(n),
            "length" => length = Some(n),
            _ => return Err(bad(uri, &format!("unknown parameter {k:?}"))),
        }
    }
    Ok(Ranged { base, range: Some((offset.unwrap_or(0), length)) })
}

fn bad(uri: &str, why: &str) -> ErrorObject {
    ErrorObject::new(
        codes::INVALID_PARAMS,
        format!("{uri:?}: {why}; ranges read as URI?offset=N&length=M"),
    )
}

/// The `resources/read` result for `uri` of `file`.
///
/// # Errors
/// -32602 when a whole read is too large for one message (the error says how to read it in
/// ranges); -32603 when the file cannot be read.
pub(crate) fn read(
    uri: &str,
    range: Option<(u64, Option<u64>)>,
    file: &SpillFile,
    chunk_max: usize,
) -> Result<RawJson, ErrorObject> {
    let size = file.len();
    let Some((offset, length)) = range else {
        if size > chunk_max as u64 {
            return Err(ErrorObject::new(
                codes::INVALID_PARAMS,
                format!(
                    "{uri} holds {size} bytes, more than the {chunk_max} one read returns: read it in ranges, {uri}?offset=0&length={chunk_max}, then offset={chunk_max} and so on"
                ),
            )
            .with_data(json!({"uri": uri, "size": size, "maxLength": chunk_max})));
        }
        let bytes = file.read_range(0, size as usize).map_err(internal)?;
        // A spilled payload keeps no type: text is whatever decodes as UTF-8.
        let item = match String::from_utf8(bytes) {
            Ok(text) => json!({"uri": uri, "mimeType": "text/plain", "text": text}),
            Err(e) => json!({"uri": uri, "mimeType": "application/octet-stream",
                             "blob": encode(e.as_bytes())}),
        };
        return Ok(RawJson::from_value(json!({"contents": [item]})));
    };
    let length = length.unwrap_or(chunk_max as u64).min(chunk_max as u64);
    let n = usize::try_from(length.min(size.saturating_sub(offset))).expect("at most chunk_max");
    Ok(RawJson::raw(range_json(uri, file, offset, n)?.into()))
}

/// Bytes read and encoded at a time: a multiple of 3, so the pieces' base64 joins into the
/// whole's.
const PIECE: usize = 3 << 18;

/// The `resources/read` result for `n` bytes of `file` from `offset`, as JSON text: the file
/// read in pieces, each base64-encoded straight into the text. A range is megabytes of base64,
/// which a `Value` would hold in a copy of its own and serde scan again for escapes.
fn range_json(uri: &str, file: &SpillFile, offset: u64, n: usize) -> Result<Vec<u8>, ErrorObject> {
    use std::io::Write;
    let engine = &base64::engine::general_purpose::STANDARD;
    let b64 = base64::encoded_len(n, true).expect("a range's base64 fits in memory");
    // Room for the members and, in front, the envelope the session splices around it.
    let mut out = Vec::with_capacity(b64 + uri.len() + 512);
    out.extend_from_slice(br#"{"contents":[{"uri":"#);
    serde_json::to_writer(&mut out, uri).expect("a string serialises");
    out.extend_from_slice(br#","mimeType":"application/octet-stream","blob":""#);
    let mut at = out.len();
    out.resize(at + b64, 0);
    let mut buf = vec![0; PIECE.min(n)];
    let mut done = 0;
    while done < n {
        let piece = &mut buf[..PIECE.min(n - done)];
        if file.read_at(offset + done as u64, piece).map_err(internal)? < piece.len() {
            return Err(internal("the file is shorter than its recorded length"));
        }
        at += engine.encode_slice(&*piece, &mut out[at..]).expect("sized by encoded_len");
        done += piece.len();
    }
    let meta = json!({"io.ringmcp/range": {"offset": offset, "length": n, "size": file.len()}});
    write!(out, r#"","_meta":{meta}}}]}}"#).expect("writes to a Vec");
    Ok(out)
}

fn encode(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn internal(e: impl std::fmt::Display) -> ErrorObject {
    ErrorObject::new(codes::INTERNAL_ERROR, format!("reading a spilled payload: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spill::store::{SpillStore, StoreConfig};

    /// A store of the test's own (one store per folder and process).
    fn store(test: &str) -> std::sync::Arc<SpillStore> {
        let base = std::env::temp_dir().join(format!("ringmcp-spilled-{test}"));
        SpillStore::open(StoreConfig::new().base_dir(base)).unwrap()
    }

    #[test]
    fn ranges_parse_and_strangers_are_refused() {
        let u = "ringmcp-spill://1-2/3";
        assert_eq!(parse(u).unwrap(), Ranged { base: u, range: None });
        let r = parse("ringmcp-spill://1-2/3?offset=10&length=5").unwrap();
        assert_eq!(r, Ranged { base: u, range: Some((10, Some(5))) });
        assert_eq!(parse("ringmcp-spill://1-2/3?length=5").unwrap().range, Some((0, Some(5))));
        assert!(parse("ringmcp-spill://1-2/3?offset=-1").is_err());
        assert!(parse("ringmcp-spill://1-2/3?start=1").is_err());
    }

    #[test]
    fn a_file_reads_whole_or_in_ranges() {
        let store = store("whole");
        let mut w = store.create("t").unwrap();
        w.write_all(b"hello, world").unwrap();
        let file = w.finish().unwrap();
        let uri = file.uri().to_owned();
        let whole = read(&uri, parse(&uri).unwrap().range, &file, 64).unwrap().to_value();
        assert_eq!(whole["contents"][0]["text"], "hello, world");
        let ranged_uri = format!("{uri}?offset=7&length=100");
        let r = read(&ranged_uri, parse(&ranged_uri).unwrap().range, &file, 64).unwrap().to_value();
        let range = json!({"offset": 7, "length": 5, "size": 12});
        let want = json!({"contents": [{
            "uri": ranged_uri, "mimeType": "application/octet-stream", "blob": encode(b"world"),
            "_meta": {"io.ringmcp/range": range},
        }]});
        assert_eq!(r, want, "the range's JSON text reads as the result it stands for");
        let past = format!("{uri}?offset=99");
        let r = read(&past, parse(&past).unwrap().range, &file, 64).unwrap().to_value();
        assert_eq!(r["contents"][0]["blob"], "");
        let e = read(&uri, parse(&uri).unwrap().range, &file, 4).unwrap_err();
        assert!(e.message.contains("?offset=0&length=4"), "{}", e.message);
    }

    #[test]
    fn a_range_of_many_pieces_is_the_base64_of_its_bytes() {
        let store = store("pieces");
        let bytes: Vec<u8> = (0..3 * PIECE as u32 + 7).map(|i| (i * 7 + i / 251) as u8).collect();
        let mut w = store.create("t").unwrap();
        w.write_all(&bytes).unwrap();
        let file = w.finish().unwrap();
        let uri = file.uri().to_owned();
        // Offsets and lengths that are and are not multiples of 3 and of a piece.
        for (offset, length) in [(0, bytes.len()), (1, 2 * PIECE + 2), (PIECE + 5, 10 << 20)] {
            let ranged = format!("{uri}?offset={offset}&length={length}");
            let r = read(&ranged, parse(&ranged).unwrap().range, &file, 8 << 20).unwrap();
            let r = r.to_value();
            let end = (offset + length).min(bytes.len()).min(offset + (8 << 20));
            assert_eq!(r["contents"][0]["blob"], encode(&bytes[offset..end]), "{ranged}");
            assert_eq!(r["contents"][0]["_meta"]["io.ringmcp/range"]["length"], end - offset);
        }
    }
}
