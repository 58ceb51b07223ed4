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

/// The client session driven by a script of operations decoded from `data`: requests (with
/// and without progress), answers of every kind to the ids in flight (results, errors,
/// `input_required`, -32042, garbage), notifications, server requests, cancellations, time
/// passing, the listen stream, and finally the connection's end. The first byte picks the era
/// (legacy, modern) and the features. Panics when the session breaks its contract: a token
/// completed twice, or one never handed back once the connection is over (every accepted
/// request completes exactly once, or its token comes back from `cancel`).
pub fn session(data: &[u8]) {
    use crate::protocol::{
        ClientFeatures, CloseReason, Event, ListenFilter, RequestId, Session, SessionConfig,
    };
    use serde_json::{Value, json};
    use std::collections::BTreeSet;
    use std::time::Duration;

    let [ctl, script @ ..] = data else { return };
    let modern = ctl & 1 == 1;
    let features = ClientFeatures {
        sampling: ctl & 2 != 0,
        elicitation_form: ctl & 4 != 0,
        elicitation_url: ctl & 8 != 0,
    };
    let config = SessionConfig {
        features,
        era: if modern { crate::protocol::Era::Modern } else { crate::protocol::Era::Legacy },
        keep_alive: (ctl & 16 != 0).then_some(Duration::from_secs(3)),
        max_pending: 8,
        roots: (ctl & 32 != 0).then(Vec::new),
        ..SessionConfig::default()
    };
    let mut s: Session<u32> = Session::new(config);
    let mut now = epoch();
    let mut open: BTreeSet<u32> = BTreeSet::new(); // accepted, not yet completed
    let mut done: BTreeSet<u32> = BTreeSet::new();
    let mut ids: Vec<RequestId> = Vec::new();
    let mut inputs: Vec<crate::jsonrpc::Id> = Vec::new();
    let mut next_token = 1u32;
    let feed = |s: &mut Session<u32>, v: Value, now| {
        s.handle_frame(&bytes::Bytes::from(v.to_string()), now);
    };
    let drain = |s: &mut Session<u32>,
                 open: &mut BTreeSet<u32>,
                 done: &mut BTreeSet<u32>,
                 inputs: &mut Vec<crate::jsonrpc::Id>| {
        while s.poll_transmit().is_some() {}
        while let Some(event) = s.poll_event() {
            match event {
                Event::Completed { token, .. } => {
                    assert!(done.insert(token), "token {token} completed twice");
                    assert!(token == 0 || open.remove(&token), "token {token} was never open");
                }
                Event::ServerRequest { id, .. } => inputs.push(id),
                _ => {}
            }
        }
    };
    s.handshake(now, 0);
    let answer = if modern {
        json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete",
            "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "f", "version": "1"}}})
    } else {
        json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}}, "serverInfo": {"name": "f", "version": "1"}}})
    };
    feed(&mut s, answer, now);
    drain(&mut s, &mut open, &mut done, &mut inputs);
    let mut bytes = script.iter().copied();
    while let Some(op) = bytes.next() {
        let arg = bytes.next().unwrap_or(0);
        let pick = |v: &[RequestId]| v.get(usize::from(arg) % v.len().max(1)).copied();
        match op % 12 {
            0 | 1 => {
                let token = next_token;
                next_token += 1;
                let method =
                    ["tools/call", "tools/list", "ping", "logging/setLevel"][usize::from(arg % 4)];
                let params = serde_json::value::RawValue::from_string(
                    json!({"name": "t", "level": "info"}).to_string(),
                )
                .expect("JSON");
                let sent = if op % 12 == 0 {
                    s.request(method, Some(&params), now, None, token)
                } else {
                    s.request_with_progress(method, Some(&params), now, None, token)
                };
                match sent {
                    Ok(id) => {
                        open.insert(token);
                        ids.push(id);
                    }
                    Err((back, _)) => assert_eq!(back, token, "the refused token comes back"),
                }
            }
            2 => {
                if let Some(id) = pick(&ids) {
                    feed(
                        &mut s,
                        json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}}),
                        now,
                    );
                }
            }
            3 => {
                if let Some(id) = pick(&ids) {
                    let error = json!({"code": -32603 + i64::from(arg % 3), "message": "m"});
                    feed(&mut s, json!({"jsonrpc": "2.0", "id": id, "error": error}), now);
                }
            }
            4 => {
                if let Some(id) = pick(&ids) {
                    let ask = json!({"resultType": "input_required", "requestState": "st",
                        "inputRequests": {"a": {"method": "sampling/createMessage", "params": {}},
                                          "b": {"method": "roots/list"},
                                          "c": {"method": "elicitation/create",
                                                "params": {"mode": "form"}}}});
                    feed(&mut s, json!({"jsonrpc": "2.0", "id": id, "result": ask}), now);
                }
            }
            5 => {
                if let Some(id) = pick(&ids) {
                    let data = json!({"elicitations": [{"mode": "url", "url": "https://x",
                        "elicitationId": "e", "message": "go"}]});
                    let error = json!({"code": -32042, "message": "url", "data": data});
                    feed(&mut s, json!({"jsonrpc": "2.0", "id": id, "error": error}), now);
                }
            }
            6 => {
                if let Some(id) = pick(&ids) {
                    let params = json!({"progressToken": id, "progress": f64::from(arg)});
                    let n = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                        "params": params});
                    feed(&mut s, n, now);
                }
            }
            7 => {
                let method = ["sampling/createMessage", "roots/list", "elicitation/create", "x/y"]
                    [usize::from(arg % 4)];
                let r = json!({"jsonrpc": "2.0", "id": format!("s{arg}"), "method": method,
                    "params": {}});
                feed(&mut s, r, now);
            }
            8 => {
                if !inputs.is_empty() {
                    let id = inputs.remove(usize::from(arg) % inputs.len());
                    let outcome = match arg % 3 {
                        0 => Ok(json!({"action": "accept", "content": {}})),
                        1 => Ok(json!({"action": "decline"})),
                        _ => Err(crate::jsonrpc::ErrorObject::new(-1, "no")),
                    };
                    s.respond(&id, outcome, now);
                }
            }
            9 => {
                if let Some(id) = pick(&ids)
                    && let Some(token) = s.cancel(id, "fuzz")
                {
                    assert!(open.remove(&token), "cancel handed back token {token}, not open");
                    assert!(done.insert(token), "token {token} completed twice");
                }
            }
            10 => {
                now += Duration::from_millis(u64::from(arg) * 500);
                s.handle_timeout(now);
            }
            _ => match arg % 3 {
                0 => s.listen(ListenFilter { tools_list_changed: true, ..Default::default() }, now),
                1 => s.handle_frame(
                    &bytes::Bytes::copy_from_slice(&script[..script.len().min(usize::from(arg))]),
                    now,
                ),
                _ => s.handle_truncated(u64::from(arg)),
            },
        }
        drain(&mut s, &mut open, &mut done, &mut inputs);
    }
    s.handle_closed(CloseReason::Shutdown);
    drain(&mut s, &mut open, &mut done, &mut inputs);
    assert!(open.is_empty(), "tokens never completed: {open:?}");
    assert_eq!(s.pending(), 0);
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

/// The server session under arbitrary client lines (the input split at newlines; the first
/// byte picks the revisions spoken and how requests are answered). Never panics, writes only
/// JSON-RPC, and takes exactly one answer per request it handed out (none once cancelled).
pub fn server_session(data: &[u8]) {
    use crate::protocol::ProtocolVersion;
    use crate::protocol::server::{
        Incoming, Listenable, Origin, ServerConfig, ServerSession, ServerTransmit,
        ServerTransmitKind,
    };
    use serde_json::{Value, json};
    use std::collections::HashMap;
    let [ctl, rest @ ..] = data else { return };
    let versions =
        if ctl & 1 == 0 { ProtocolVersion::ALL.to_vec() } else { ProtocolVersion::LEGACY.to_vec() };
    let listen = (ctl & 8 != 0).then_some(Listenable::ALL);
    let config = ServerConfig { versions, listen, ..ServerConfig::default() };
    let mut s: ServerSession<u32> = ServerSession::new(config);
    let now = epoch();
    let mut open = Vec::new();
    // Per stream: whether its latest answer said it ended the stream.
    let mut ended: HashMap<u64, bool> = HashMap::new();
    // (a cancelled request is never answered: its stream gets no last answer to say so)
    let mut cancelled = false;
    let drain = |s: &mut ServerSession<u32>, ended: &mut HashMap<u64, bool>| {
        while let Some(ServerTransmit { bytes, kind, stream }) = s.poll_transmit() {
            let v: Value = serde_json::from_slice(&bytes).expect("the session writes JSON");
            assert_eq!(v["jsonrpc"], "2.0", "{v}");
            match kind {
                ServerTransmitKind::Response { error, ends_stream } => {
                    assert!(v.get("method").is_none(), "{v}");
                    assert_eq!(error, v.pointer("/error/code").and_then(Value::as_i64), "{v}");
                    if let Some(stream) = stream {
                        ended.insert(stream, ends_stream);
                    }
                }
                ServerTransmitKind::Notification { method }
                | ServerTransmitKind::Request { method } => {
                    assert_eq!(v["method"], *method, "{v}");
                }
            }
        }
    };
    for (n, line) in rest.split(|&b| b == b'\n').enumerate() {
        let origin =
            (ctl & 16 != 0).then_some(Origin { stream: n as u64 % 3, scoped: ctl & 32 != 0 });
        s.handle_frame_from(line, origin, now);
        while let Some(event) = s.poll_event() {
            match event {
                Incoming::Request { id, .. } | Incoming::Retry { id, .. } => open.push(id),
                Incoming::Cancelled { id, .. } => {
                    open.retain(|o| *o != id);
                    cancelled = true;
                }
                _ => {}
            }
        }
        // Answer some of the open requests, some twice, some with a round.
        if ctl & 2 != 0 || n % 2 == 0 {
            for (i, id) in std::mem::take(&mut open).into_iter().enumerate() {
                if ctl & 64 != 0 && i % 2 == 0 {
                    let asks = serde_json::Map::from_iter([(
                        "k".to_owned(),
                        json!({"method": "roots/list"}),
                    )]);
                    if s.input_required(&id, asks, now).is_some() {
                        continue;
                    }
                }
                let first = s.respond(&id, Ok(json!({})));
                let again = s.respond(&id, Ok(json!({})));
                assert!(first && !again, "one answer per request");
            }
        }
        if ctl & 4 != 0 {
            let _ = s.request("roots/list", None, n as u32, now);
            s.notify("notifications/tools/list_changed", None);
            s.notify("notifications/progress", Some(json!({"progressToken": n, "progress": 1})));
        }
        drain(&mut s, &mut ended);
    }
    // Once every request is answered, every stream's last answer said it was the last.
    for id in open {
        assert!(s.respond(&id, Ok(json!({}))), "an open request can be answered");
    }
    s.handle_timeout(now + std::time::Duration::from_secs(3600));
    drain(&mut s, &mut ended);
    if ctl & 8 == 0 && !cancelled {
        // (an open listen stream is never answered, so its stream never ends)
        assert!(ended.values().all(|e| *e), "{ended:?}");
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

/// The epoch of the protocol simulator's virtual clock: tests take one real instant as time
/// zero and then only add durations to it, so the session under test never reads a clock.
pub fn epoch() -> std::time::Instant {
    std::time::Instant::now()
}

/// The tool router under arbitrary catalogs and requests: lines `server<TAB>JSON` are tool
/// definitions (any JSON), other lines are queries; the bytes are also offered whole to both
/// embedder parsers. Every routed name exists and is unique, never more than K come back, the
/// token totals add up (and each tool's count is its whole definition's, also after an edit
/// that reuses the unchanged parts' counts), and replacing a server (whole, edited, in part, or
/// with nothing) keeps the catalog consistent. Nothing panics.
pub fn route(data: &[u8]) {
    use crate::route::{BertEmbedder, Ranker, Router, StaticEmbedder, tokens, values};
    use std::collections::HashSet;
    let _ = StaticEmbedder::from_bytes(data);
    // A model: the first line is config.json, the rest model.safetensors (the seeds hold a
    // small valid one), over a fixed vocabulary; when it loads, it embeds.
    let split = data.iter().position(|&b| b == b'\n').unwrap_or(data.len());
    let weights = data.get(split + 1..).unwrap_or_default();
    if let Ok(m) = BertEmbedder::from_parts(
        "fuzz",
        &data[..split],
        weights,
        "[PAD]\n[UNK]\n[CLS]\n[SEP]\nread\nfile\n##s\n",
    ) {
        use crate::route::Embedder;
        assert_eq!(m.embed("read files").len(), m.dim());
    }
    let text = String::from_utf8_lossy(data);
    // A four-token, two-dimension table in the real format, so the semantic half runs.
    let mut table = b"RMCPEMB1".to_vec();
    for v in [1u32, 2, 5, 1] {
        table.extend(v.to_le_bytes());
    }
    for t in ["[UNK]", "read", "file", "issue", "##s"] {
        table.extend((t.len() as u16).to_le_bytes());
        table.extend(t.as_bytes());
    }
    for h in [0u16, 0, 0x3c00, 0, 0x3800, 0x3800, 0, 0x3c00, 0xb800, 0x3800] {
        table.extend(h.to_le_bytes());
    }
    let embedder = StaticEmbedder::from_bytes(&table).expect("the fuzz table parses");
    let mut router = Router::new().with_embedder(std::sync::Arc::new(embedder));
    let mut servers: Vec<(String, Vec<(String, serde_json::Value)>)> = Vec::new();
    let mut queries = Vec::new();
    for line in text.lines() {
        match line.split_once('\t') {
            Some((server, def)) => {
                let Ok(tool) = serde_json::from_str::<serde_json::Value>(def) else { continue };
                let own = tool.get("name").and_then(|n| n.as_str()).unwrap_or("t").to_owned();
                let name = format!("{server}__{own}");
                match servers.iter_mut().find(|(s, _)| s == server) {
                    Some((_, tools)) => tools.push((name, tool)),
                    None => servers.push((server.to_owned(), vec![(name, tool)])),
                }
            }
            None => queries.push(line.to_owned()),
        }
    }
    let check = |router: &Router, queries: &[String]| {
        for q in queries {
            let _ = values::in_query(q);
            let _ = values::expand(q);
            for ranker in [Ranker::Lexical, Ranker::Semantic, Ranker::Fused] {
                for k in [0, 1, 5] {
                    let got = router.route_with(q, k, ranker);
                    assert!(got.tools.len() <= k);
                    let names: HashSet<&str> = got.tools.iter().map(|t| t.name.as_str()).collect();
                    assert_eq!(names.len(), got.tools.len(), "a tool twice");
                    assert!(got.tools.iter().all(|t| router.tool(&t.name).is_some()));
                    assert_eq!(got.tokens, got.tools.iter().map(|t| t.tokens).sum::<usize>());
                    assert!(got.tokens <= got.all_tokens && got.catalog == router.len());
                    for t in &got.tools {
                        let (_, def) = router.tool(&t.name).expect("routed tools exist");
                        assert_eq!(t.tokens, tokens::count(&def.to_string()), "{def}");
                    }
                }
            }
        }
    };
    for (server, tools) in &servers {
        router.replace_server(server, tools.clone());
    }
    check(&router, &queries);
    let total = router.all_tokens();
    // Unchanged lists again: nothing moves. Then half of each list, then none.
    for (server, tools) in &servers {
        router.replace_server(server, tools.clone());
    }
    assert_eq!(router.all_tokens(), total);
    // Every definition edited: a member changed or added, the rest reused.
    let query = queries.first().cloned().unwrap_or_default();
    for (server, tools) in &servers {
        let edited = tools
            .iter()
            .map(|(n, t)| {
                let mut t = t.clone();
                if let Some(obj) = t.as_object_mut() {
                    obj.insert("description".into(), query.clone().into());
                }
                (n.clone(), t)
            })
            .collect();
        router.replace_server(server, edited);
    }
    check(&router, &queries);
    for (server, tools) in &servers {
        router.replace_server(server, tools[..tools.len() / 2].to_vec());
    }
    check(&router, &queries);
    // After all those edits, the index ranks exactly as one built from nothing over the same
    // lists (BM25's document counts, lengths and postings, the token counts), unless two
    // servers' tools share a name (then which one holds it depends on the order of updates).
    let halves: Vec<(String, Vec<(String, serde_json::Value)>)> =
        servers.iter().map(|(s, t)| (s.clone(), t[..t.len() / 2].to_vec())).collect();
    let mut owner = std::collections::HashMap::new();
    let shared = halves.iter().any(|(s, tools)| {
        tools.iter().any(|(n, _)| *owner.entry(n.as_str()).or_insert(s.as_str()) != s.as_str())
    });
    if !shared {
        let table = StaticEmbedder::from_bytes(&table).expect("the fuzz table parses");
        let mut fresh = Router::new().with_embedder(std::sync::Arc::new(table));
        for (server, tools) in &halves {
            fresh.replace_server(server, tools.clone());
        }
        assert_eq!((fresh.len(), fresh.all_tokens()), (router.len(), router.all_tokens()));
        let all = router.len().max(1);
        for q in &queries {
            let scores = |r: &Router| -> std::collections::HashMap<String, f32> {
                let got = r.route_with(q, all, Ranker::Lexical).tools;
                got.into_iter().map(|t| (t.name, t.lexical)).collect()
            };
            let (a, b) = (scores(&router), scores(&fresh));
            assert_eq!(a.len(), b.len(), "{q:?}");
            for (name, s) in &a {
                let t = b.get(name).copied().unwrap_or(f32::NAN);
                assert!((s - t).abs() <= 1e-4 * s.abs().max(1.0), "{name}: {s} vs {t} for {q:?}");
            }
        }
    }
    for (server, _) in &servers {
        router.remove_server(server);
    }
    assert_eq!((router.len(), router.all_tokens()), (0, 0));
    check(&router, &queries);
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
pub use content::content;

#[cfg(test)]
mod tests {
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
        // The seed model loads (so the fuzzer starts past the safetensors parser).
        let model = include_bytes!("../fuzz/seeds/route/model");
        let split = model.iter().position(|&b| b == b'\n').unwrap();
        crate::route::BertEmbedder::from_parts(
            "seed",
            &model[..split],
            &model[split + 1..],
            "[PAD]\n[UNK]\n[CLS]\n[SEP]\nread\nfile\n##s\n",
        )
        .expect("the seed model loads");
        super::route(model);
        super::gateway(b"__\nfs\tread_file\nfs\tread.file\nx__y\tz\ngh\tr\xc3\xa9po\nringmcp-spill://a/b?offset=1\ngw:1");
    }
}
