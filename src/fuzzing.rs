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
        if let Ok(v) = &r.outcome {
            tool_result_round_trip(v);
        }
    }
}

/// A result read as a `tools/call` result (the hand-written readers of `CallToolResult` and
/// `Content`) writes out as JSON that reads back to the same thing.
fn tool_result_round_trip(result: &serde_json::Value) {
    use crate::protocol::CallToolResult;
    let Ok(typed) = serde_json::from_value::<CallToolResult>(result.clone()) else { return };
    let written = serde_json::to_value(&typed).expect("a read result serialises");
    let again: CallToolResult =
        serde_json::from_value(written.clone()).expect("a written result reads back");
    assert_eq!(again, typed, "read, written and read again: {written}");
    assert_eq!(serde_json::to_value(&again).expect("serialises"), written);
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

/// The policy under arbitrary configs and arguments: the first byte picks the tool's
/// annotations, the rest is split at the first `\n` into a policy config (JSON; an invalid
/// one is the default) and the call's arguments (JSON; an invalid one is a string argument
/// `path` holding the raw text). Never panics; an allowed call never carries a `path`
/// argument that leaves the root `/srv/root` in any reading a server might make of it
/// ([`crate::testkit::path_escapes`]: percent-decoded, NFKC, look-alike slashes, `\\`).
pub fn policy(data: &[u8]) {
    use crate::policy::paths::Lexical;
    use crate::policy::{GlobalPolicy, Policy, PolicyConfig, ToolTable, Verdict};
    use serde_json::{Value, json};
    let [ctl, rest @ ..] = data else { return };
    let text = String::from_utf8_lossy(rest);
    let (config, args) = text.split_once('\n').unwrap_or(("", &text));
    let mut config: PolicyConfig = serde_json::from_str(config).unwrap_or_default();
    config.roots = Some(vec!["/srv/root".into()]);
    let arguments: Value = match serde_json::from_str::<Value>(args) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({ "path": args }),
    };
    let annotations = json!({
        "readOnlyHint": ctl & 1 != 0, "destructiveHint": ctl & 2 != 0, "openWorldHint": ctl & 4 != 0
    });
    let tool = serde_json::from_value(json!({"name": "t", "annotations": annotations,
        "inputSchema": {"type": "object"}}))
    .expect("a tool");
    let table = ToolTable::new(&[tool]);
    let policy = Policy::new("s", &config, &GlobalPolicy::default(), &[], &Lexical);
    let verdict = policy.check_call("t", &arguments, table.get("t"), &Lexical);
    if let (Verdict::Allow { .. } | Verdict::Ask { .. }, Some(path)) =
        (&verdict, arguments.get("path").and_then(Value::as_str))
    {
        // Checked by an oracle written apart from `policy::paths`.
        assert!(!crate::testkit::path_escapes("/srv/root", path), "{path:?} allowed: {verdict:?}");
    }
}

/// The gateway's naming and routing tables under arbitrary backend names: the first line is
/// the separator, the others `server<TAB>tool` (or a URI, or a cursor). Every upstream name is
/// valid, unique, and resolves back to exactly the backend tool it was made from; URI ranges
/// and cursors never panic.
pub fn gateway(data: &[u8]) {
    use crate::gateway::catalog::{Catalog, Lists, Naming, ToolFilter, page};
    use crate::gateway::names::{check_separator, check_server, is_valid};
    use crate::protocol::Tool;
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let sep = lines.next().unwrap_or("__");
    let sep = if check_separator(sep).is_ok() { sep } else { "__" };
    let mut servers: Vec<(String, Vec<Tool>)> = Vec::new();
    let mut others = Vec::new();
    for line in lines {
        let _ = crate::gateway::spilled_range(line);
        others.push(line.to_owned());
        let Some((server, tool)) = line.split_once('\t') else { continue };
        if check_server(server, sep).is_err() || tool.is_empty() {
            continue;
        }
        let tool: Tool = serde_json::from_value(serde_json::json!({
            "name": tool, "inputSchema": {"type": "object"}}))
        .expect("a tool");
        match servers.iter_mut().find(|(s, _)| s == server) {
            Some((_, tools)) => tools.push(tool),
            None => servers.push((server.to_owned(), vec![tool])),
        }
    }
    let filter = ToolFilter::default();
    let lists: Vec<Option<Lists<'_>>> = servers
        .iter()
        .map(|(server, tools)| {
            Some(Lists {
                server,
                filter: &filter,
                tools,
                prompts: &[],
                resources: &[],
                templates: &[],
            })
        })
        .collect();
    let naming = Naming { separator: sep.to_owned(), prefix: true };
    let catalog = Catalog::build(&naming, &[], &lists);
    let mut seen = std::collections::HashSet::new();
    for tool in catalog.tools() {
        let name = tool["name"].as_str().expect("a name");
        assert!(is_valid(name), "{name:?}");
        assert!(seen.insert(name.to_owned()), "{name:?} twice");
        let target = catalog.tool(name).expect("an upstream name resolves");
        let (_, tools) = &servers[target.backend];
        assert!(tools.iter().any(|t| t.name == target.name), "{name:?} -> {target:?}");
    }
    let items: Vec<serde_json::Value> = catalog.tools().to_vec();
    for cursor in &others {
        let _ = page(&items, Some(cursor), 3);
    }
}

/// The gateway's whole upstream loop under arbitrary client messages and backend requests
/// (gateway/upstream/fuzz.rs says what the input is and what must hold).
pub fn gateway_loop(data: &[u8]) -> usize {
    crate::gateway::fuzz_loop(data)
}

/// The epoch of the protocol simulator's virtual clock: tests take one real instant as time
/// zero and then only add durations to it, so the session under test never reads a clock.
pub fn epoch() -> std::time::Instant {
    std::time::Instant::now()
}

/// The sandbox's network, on untrusted bytes: the first byte picks the part.
/// * DNS stub: the answer echoes the id, is a response, never grows without bound, gives a
///   placeholder only to a name the policy allows, and the placeholder maps back to it.
/// * First bytes and proxy requests: never panic; a decided verdict stays decided when more
///   bytes arrive (the proxy holds a connection's bytes only until it can tell).
/// * Allowlist entries: an entry that parses prints as text that parses to the same entry.
pub fn egress(data: &[u8]) {
    use crate::policy::egress::sniff::{self, First, ProxyRequest};
    use crate::policy::egress::{Entry, Matcher, NetworkPolicy, dns};
    let [mode, rest @ ..] = data else { return };
    match mode % 3 {
        0 => {
            let m = Matcher::new(
                &NetworkPolicy::new(["*.allowed.test", "exact.test:443"], ["no.allowed.test"])
                    .expect("valid"),
            );
            let mut places = dns::Placeholders::default();
            // Several datagrams: split on 0xff 0xfe.
            for query in rest.split(|&b| b == 0xfe) {
                let Some(a) = dns::answer(query, |n| m.answers_name(n), &mut places) else {
                    continue;
                };
                assert_eq!(&a.bytes[..2], &query[..2], "the id is echoed");
                assert!(a.bytes[2] & 0x80 != 0, "a response");
                assert!(a.bytes.len() <= query.len() + 16 + 12, "bounded by the question");
                if let dns::Outcome::Placeholder(ip) = a.outcome {
                    let name = a.name.as_deref().expect("a placeholder has a name");
                    assert!(m.answers_name(name), "{name} got a placeholder");
                    assert_eq!(places.name_of(ip.into()), Some(name));
                }
            }
        }
        1 => {
            let decided = |f: &First| !matches!(f, First::NeedMore);
            let cut = rest.len() / 2;
            let (short, long) = (sniff::first(&rest[..cut]), sniff::first(rest));
            if decided(&short) && rest.len() < sniff::MAX_HEAD {
                assert!(decided(&long), "{short:?} then {long:?}");
            }
            let p = sniff::proxy_request(rest);
            if let ProxyRequest::Connect { head, .. } = p {
                assert!(head <= rest.len());
            }
        }
        _ => {
            for line in String::from_utf8_lossy(rest).lines() {
                if let Ok(e) = line.parse::<Entry>() {
                    let text = e.to_string();
                    assert_eq!(
                        text.parse::<Entry>().as_ref(),
                        Ok(&e),
                        "{line:?} printed as {text:?}"
                    );
                }
            }
        }
    }
}

mod content;
mod route;
mod session;

pub use content::content;
pub use route::route;
pub use session::{server_session, session};

#[cfg(test)]
mod tests {
    /// The gateway loop's harness on its seeds: calls refused by a backend that is down,
    /// a backend's requests in a legacy session and as a 2026-07-28 round, retries with a
    /// requestState, cancellations, duplicate ids.
    #[test]
    fn the_gateway_loop_holds_on_its_seeds() {
        let started = std::time::Instant::now();
        for seed in [
            &include_bytes!("../fuzz/seeds/gateway_loop/legacy")[..],
            &include_bytes!("../fuzz/seeds/gateway_loop/modern")[..],
            b"!e\n!s\nnot json\n[]\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}",
        ] {
            assert!(super::gateway_loop(seed) > 0, "{}", String::from_utf8_lossy(seed));
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "no input waits");
    }

    #[test]
    fn fuzz_bodies_run() {
        super::egress(
            &[
                &[0u8][..],
                &crate::policy::egress::dns::query(7, "a.allowed.test", 1),
                &[0xfe],
                &crate::policy::egress::dns::query(8, "no.allowed.test", 28),
            ]
            .concat(),
        );
        super::egress(b"\x01\x16\x03\x01\x00\x05\x01\x00\x00\x01\x03");
        super::egress(b"\x01CONNECT a:1 HTTP/1.1\r\n\r\n");
        super::egress(b"\x02*.x.test:8443\n[::1]:80\n10.1.2.3/8\n@npm\nbad name");
        super::framer(b"\x05\x03{\"id\":1}\n\r\n{\"id\":123456789,\"x\":1}\npartial");
        super::framer(b"\x85\x03{\"id\":1}\n\r\n{\"id\":123456789,\"x\":1}\npartial");
        super::framer(b"");
        super::policy(b"\x00{\"tools\": {\"t\": \"allow\"}}\n{\"path\": \"../etc\"}");
        super::policy(b"\x07not json\n/srv/root/%2e%2e/x");
        super::server_session(b"\x06{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"roots\":{}}}}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\nnot json");
        for seed in [
            &include_bytes!("../fuzz/seeds/server_session/legacy")[..],
            &include_bytes!("../fuzz/seeds/server_session/modern")[..],
            &include_bytes!("../fuzz/seeds/server_session/modern-rounds")[..],
            &include_bytes!("../fuzz/seeds/server_session/modern-scoped")[..],
            &include_bytes!("../fuzz/seeds/server_session/listen-progress")[..],
        ] {
            super::server_session(seed);
        }
        for script in [
            &b"\x00\x00\x01\x04\x02\x08\x00\x09\x00"[..],
            b"\x3f\x00\x00\x04\x00\x08\x00\x08\x01\x08\x02\x0a\x09",
            b"\x01\x01\x00\x05\x00\x0a\xff\x0b\x00\x0b\x04",
        ] {
            super::session(script);
        }
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
        super::route(b"{\"model_type\":\"bert\"}\nfs\t{\"name\":\"read_file\",\"description\":\"Read a file\",\"inputSchema\":{\"properties\":{\"path\":{}}}}\nfs\t{\"name\":\"read_file\"}\ngh\t{\"name\":\"create_issue\"}\ngh\t[1]\nread ~/notes.txt\nopen a PR on acme/widgets #4\n\xff");
        super::route(b"RMCPEMB1");
        // The seed models load (so the fuzzer starts past the safetensors parser).
        for (model, vocab) in [
            (&include_bytes!("../fuzz/seeds/route/model")[..], super::route::VOCAB_BERT),
            (&include_bytes!("../fuzz/seeds/route/model-mpnet")[..], super::route::VOCAB_MPNET),
        ] {
            let split = model.iter().position(|&b| b == b'\n').unwrap();
            crate::route::BertEmbedder::from_parts(
                "seed",
                &model[..split],
                &model[split + 1..],
                vocab,
            )
            .expect("the seed model loads");
            super::route(model);
        }
        super::gateway(b"__\nfs\tread_file\nfs\tread.file\nx__y\tz\ngh\tr\xc3\xa9po\nringmcp-spill://a/b?offset=1\ngw:1");
    }
}
