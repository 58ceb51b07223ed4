//! The fuzz body of the tool router.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::Value;

use crate::route::{BertEmbedder, Embedder, Ranker, Router, StaticEmbedder, tokens, values};

/// One server's tools: upstream name and definition.
type Tools = Vec<(String, Value)>;

/// The tool router under arbitrary catalogs and requests: lines `server<TAB>JSON` are tool
/// definitions (any JSON), other lines are queries; the bytes are also offered whole to both
/// embedder parsers. Every routed name exists and is unique, never more than K come back, the
/// token totals add up (and each tool's count is its whole definition's, also after an edit
/// that reuses the unchanged parts' counts), and replacing a server (whole, edited, in part, or
/// with nothing) keeps the catalog consistent. Nothing panics.
/// The fuzzed models' vocabularies: BERT's markers, MPNet's.
pub(crate) const VOCAB_BERT: &str = "[PAD]\n[UNK]\n[CLS]\n[SEP]\nread\nfile\n##s\n";
pub(crate) const VOCAB_MPNET: &str = "<s>\n<pad>\n</s>\n[UNK]\nread\nfile\n##s\n";

pub fn route(data: &[u8]) {
    let _ = StaticEmbedder::from_bytes(data);
    // A model: the first line is config.json, the rest model.safetensors (the seeds hold a
    // small valid one of each family), over a fixed vocabulary with BERT's or MPNet's markers;
    // when it loads, it embeds.
    let split = data.iter().position(|&b| b == b'\n').unwrap_or(data.len());
    let weights = data.get(split + 1..).unwrap_or_default();
    for vocab in [VOCAB_BERT, VOCAB_MPNET] {
        if let Ok(m) = BertEmbedder::from_parts("fuzz", &data[..split], weights, vocab) {
            assert_eq!(m.embed("read files").len(), m.dim());
        }
    }
    let (servers, queries) = catalog(&String::from_utf8_lossy(data));
    let mut router = Router::new().with_embedder(Arc::new(table()));
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
    let halves: Vec<(String, Tools)> =
        servers.iter().map(|(s, t)| (s.clone(), t[..t.len() / 2].to_vec())).collect();
    for (server, tools) in &halves {
        router.replace_server(server, tools.clone());
    }
    check(&router, &queries);
    as_if_fresh(&router, &halves, &queries);
    for (server, _) in &servers {
        router.remove_server(server);
    }
    assert_eq!((router.len(), router.all_tokens()), (0, 0));
    check(&router, &queries);
}

/// A four-token, two-dimension table in the real format, so the semantic half runs.
fn table() -> StaticEmbedder {
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
    StaticEmbedder::from_bytes(&table).expect("the fuzz table parses")
}

/// The servers' tools (lines `server<TAB>JSON`) and the queries (the other lines).
fn catalog(text: &str) -> (Vec<(String, Tools)>, Vec<String>) {
    let mut servers: Vec<(String, Tools)> = Vec::new();
    let mut queries = Vec::new();
    for line in text.lines() {
        match line.split_once('\t') {
            Some((server, def)) => {
                let Ok(tool) = serde_json::from_str::<Value>(def) else { continue };
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
    (servers, queries)
}

/// What every route of every query must be, with every ranker and a few K.
fn check(router: &Router, queries: &[String]) {
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
}

/// After all the edits, the index ranks exactly as one built from nothing over the same lists
/// (BM25's document counts, lengths and postings, the token counts), unless two servers'
/// tools share a name (then which one holds it depends on the order of updates).
fn as_if_fresh(router: &Router, lists: &[(String, Tools)], queries: &[String]) {
    let mut owner = HashMap::new();
    let shared = lists.iter().any(|(s, tools)| {
        tools.iter().any(|(n, _)| *owner.entry(n.as_str()).or_insert(s.as_str()) != s.as_str())
    });
    if shared {
        return;
    }
    let mut fresh = Router::new().with_embedder(Arc::new(table()));
    for (server, tools) in lists {
        fresh.replace_server(server, tools.clone());
    }
    assert_eq!((fresh.len(), fresh.all_tokens()), (router.len(), router.all_tokens()));
    let all = router.len().max(1);
    for q in queries {
        let scores = |r: &Router| -> HashMap<String, f32> {
            let got = r.route_with(q, all, Ranker::Lexical).tools;
            got.into_iter().map(|t| (t.name, t.lexical)).collect()
        };
        let (a, b) = (scores(router), scores(&fresh));
        assert_eq!(a.len(), b.len(), "{q:?}");
        for (name, s) in &a {
            let t = b.get(name).copied().unwrap_or(f32::NAN);
            assert!((s - t).abs() <= 1e-4 * s.abs().max(1.0), "{name}: {s} vs {t} for {q:?}");
        }
    }
}
