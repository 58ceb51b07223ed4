//! What the content screen costs (PERFORMANCE.md, "Untrusted content"): the poisoning
//! detector per tool definition (the route catalog's 600 real tools, judged as listings), the
//! result judge per MB of prose (this repository's documentation, which holds many cue words:
//! "system", "prompt", "tool", "model", "secret"), the streaming scan of a spilled text with
//! credentials, and the screen of a small result end to end (scan and apply).
//!
//! Run with `cargo bench --bench content`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ringmcp::policy::content::stream::StreamScan;
use ringmcp::policy::content::{scan_result_text, secrets};
use ringmcp::policy::poison::scan_listing;
use ringmcp::policy::results::{self, Treatment};
use ringmcp::policy::{OnInjection, SecretsAction};
use ringmcp::protocol::Tool;
use serde_json::{Value, json};

fn catalog() -> Vec<Vec<Tool>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/route/catalog.json");
    let entries: Vec<Value> = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let mut servers: Vec<(String, Vec<Tool>)> = Vec::new();
    for e in entries {
        let server = e["server"].as_str().unwrap().to_owned();
        let tool: Tool = serde_json::from_value(e["tool"].clone()).unwrap();
        match servers.iter_mut().find(|(s, _)| *s == server) {
            Some((_, tools)) => tools.push(tool),
            None => servers.push((server, vec![tool])),
        }
    }
    servers.into_iter().map(|(_, t)| t).collect()
}

/// About `bytes` of prose: the repository's docs, repeated.
fn prose(bytes: usize) -> String {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/docs");
    let mut docs = String::new();
    let mut files: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()).collect();
    files.sort();
    for f in files.iter().filter(|f| f.extension().is_some_and(|e| e == "md")) {
        docs.push_str(&std::fs::read_to_string(f).unwrap());
    }
    let mut out = String::with_capacity(bytes + docs.len());
    while out.len() < bytes {
        out.push_str(&docs);
    }
    out
}

fn bench(c: &mut Criterion) {
    let listings = catalog();
    let tools: usize = listings.iter().map(Vec::len).sum();
    let mut g = c.benchmark_group("content");
    g.sample_size(10);
    g.throughput(Throughput::Elements(tools as u64));
    g.bench_function("definitions (route catalog)", |b| {
        b.iter(|| {
            for l in &listings {
                black_box(scan_listing(black_box(l), &[]));
            }
        })
    });
    let text = prose(4 << 20);
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("result prose (judge)", |b| {
        b.iter(|| black_box(scan_result_text("/content/0/text", black_box(&text))))
    });
    g.bench_function("result prose (credentials)", |b| {
        b.iter(|| black_box(secrets::find(black_box(text.as_bytes()))))
    });
    g.bench_function("spilled prose (stream, 64 KiB pieces)", |b| {
        b.iter(|| {
            let mut scan = StreamScan::new("/content/0", true);
            for piece in text.as_bytes().chunks(64 << 10) {
                scan.feed(piece);
            }
            black_box(scan.finish())
        })
    });
    let small = json!({"content": [{"type": "text", "text": "Found 3 files: notes.txt, todo.md, report.pdf (2.1 MB). The last one was changed yesterday by the build system."}]});
    let treatment = Treatment {
        on_injection: OnInjection::Flag,
        secrets: SecretsAction::Redact,
        delimit: false,
    };
    g.throughput(Throughput::Elements(1));
    g.bench_function("small result (scan and apply)", |b| {
        b.iter(|| {
            let mut v = small.clone();
            let found = results::scan(&v, true, &|_| false);
            black_box(results::apply(&mut v, &found, treatment, "fs", "search"))
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
