//! The tool router (PERFORMANCE.md, "Tool routing"): one query over 1,000 tools (the real
//! catalog of bench/route/catalog.json, its servers repeated under other names until there are
//! 1,000), fused and each ranker alone; and one server's `list_changed` (one tool of it
//! changed, every tool's description changed, and the server indexed from nothing).
//! Targets: ≤ 1 ms per query, ≤ 5 ms per update.
//!
//! Run with `cargo bench --bench route` (after scripts/deps.sh, which builds the embedding
//! table and links the full model; without them their rows are skipped, loudly).

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use ringmcp::host::embedding::{embed_table_path, load_table, open_embedder};
use ringmcp::host::router::named;
use ringmcp::protocol::Tool;
use ringmcp::route::{CatalogEntry, Embedder, Ranker, Router};

/// A row that cannot run: said loudly, and under `CI=true` a failure (a skipped row there
/// means a missing dependency, not a choice).
fn skip(why: String) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("route bench: {why} (CI=true: a skipped row fails)");
    }
    eprintln!("!!! route bench: {why}");
}

fn servers() -> Option<Vec<(String, Vec<Tool>)>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/route/catalog.json");
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            skip(format!("skipped: {path}: {e}"));
            return None;
        }
    };
    let entries: Vec<CatalogEntry> = serde_json::from_str(&text).expect("a catalog");
    let mut by = CatalogEntry::by_server(entries);
    let real = by.clone();
    let mut total: usize = by.iter().map(|(_, t)| t.len()).sum();
    let mut copy = 2;
    while total < 1000 {
        for (s, tools) in &real {
            if total >= 1000 {
                break;
            }
            let take = tools.len().min(1000 - total);
            by.push((format!("{s}-{copy}"), tools[..take].to_vec()));
            total += take;
        }
        copy += 1;
    }
    Some(by)
}

fn build(embedder: Option<Arc<dyn Embedder>>, servers: &[(String, Vec<Tool>)]) -> Router {
    let mut r = Router::new().with_optional_embedder(embedder);
    for (s, tools) in servers {
        r.replace_server(s, named(s, tools));
    }
    r
}

fn bench(c: &mut Criterion) {
    let Some(servers) = servers() else { return };
    let embedder: Option<Arc<dyn Embedder>> = match load_table(&embed_table_path()) {
        Ok(e) => Some(Arc::new(e)),
        Err(e) => {
            skip(format!("no embedding table ({e}): semantic and fused rows skipped"));
            None
        }
    };
    let router = build(embedder.clone(), &servers);
    assert_eq!(router.len(), 1000, "the bench wants exactly 1,000 tools");
    let query = "show me the open pull requests waiting for my review";
    let mut g = c.benchmark_group("route_1000_tools");
    g.bench_function("lexical", |b| {
        b.iter(|| black_box(router.route_with(black_box(query), 5, Ranker::Lexical)))
    });
    if embedder.is_some() {
        g.bench_function("semantic", |b| {
            b.iter(|| black_box(router.route_with(black_box(query), 5, Ranker::Semantic)))
        });
        g.bench_function("fused", |b| {
            b.iter(|| black_box(router.route_with(black_box(query), 5, Ranker::Fused)))
        });
    }
    // The full encoder (the wheel's all-MiniLM-L6-v2 folder scripts/deps.sh links): the
    // query is encoded by the transformer each time; tool vectors come from the on-disk cache
    // after the first run.
    let model = embed_table_path().with_file_name("all-MiniLM-L6-v2");
    match open_embedder(&model) {
        Ok(bert) if model.is_dir() => {
            let router = build(Some(bert), &servers);
            g.bench_function("fused_full_encoder", |b| {
                b.iter(|| black_box(router.route_with(black_box(query), 5, Ranker::Fused)))
            });
        }
        Ok(_) => {
            skip(format!("{} is not a model folder: full-encoder row skipped", model.display()))
        }
        Err(e) => skip(format!("no full encoder ({e}): its row skipped")),
    }
    g.finish();
    // One server's list_changed (the largest real server's): one tool's description edited
    // (what a list change usually is: the rest is re-checked, not re-indexed), every tool's
    // description edited (a server upgraded: each definition is re-indexed, its unchanged
    // members keep their token counts), and the server's tools indexed from nothing (the worst
    // case: a server connecting).
    let (name, tools) =
        servers.iter().take(30).max_by_key(|(_, t)| t.len()).expect("servers").clone();
    let docs = named(&name, &tools);
    // The first `changed` definitions get a new description, revision `round`.
    let revised = |changed: usize, round: usize| {
        let mut d = docs.clone();
        for (_, t) in d.iter_mut().take(changed) {
            let desc = t["description"].as_str().unwrap_or("").to_owned();
            t["description"] = format!("{desc} (revision {round})").into();
        }
        d
    };
    let mut g = c.benchmark_group("update_one_server");
    let mut r = router.clone();
    let mut round = 0;
    for (label, changed) in [("one_changed", 1), ("all_changed", docs.len())] {
        g.bench_function(format!("{name}_{}_tools/{label}", tools.len()), |b| {
            b.iter_batched(
                || {
                    round += 1;
                    revised(changed, round)
                },
                |d| r.replace_server(black_box(&name), d),
                criterion::BatchSize::SmallInput,
            )
        });
    }
    // The server's tools indexed with no earlier version to reuse (a server connecting).
    // (The router is handed back, so dropping it is not timed.)
    let mut without = router.clone();
    without.remove_server(&name);
    g.bench_function(format!("{name}_{}_tools/all_new", tools.len()), |b| {
        b.iter_batched(
            || (without.clone(), docs.clone()),
            |(mut r, d)| {
                r.replace_server(black_box(&name), d);
                r
            },
            criterion::BatchSize::SmallInput,
        )
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
