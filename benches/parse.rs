//! JSON parse throughput on realistic MCP payloads: serde_json (what ringmcp uses) against
//! simd-json.
//!
//! Payloads are generated deterministically at start (no files, no network):
//!
//! * `call/escaped/{100KB,1MB,10MB}`: a `tools/call` response whose one text content is JSON
//!   source (pretty-printed records), as a tool returning a file's contents would send it:
//!   about one `\"` or `\n` escape every 7 bytes.
//! * `call/prose/{100KB,1MB,10MB}`: the same envelope around plain English prose (a `\n` per
//!   paragraph, nothing else to escape).
//! * `list/500tools`: a `tools/list` response with 500 tools, each with a description and an
//!   `inputSchema` (properties with types, descriptions, enums, defaults; `required`).
//!
//! Parsers, each producing an owned tree:
//!
//! * `serde_json`: `serde_json::from_slice::<serde_json::Value>`;
//! * `ringmcp_decode`: [`ringmcp::jsonrpc::decode`] (serde_json plus envelope classification);
//! * `ringmcp_envelope`: [`ringmcp::jsonrpc::decode_raw`], what the reactor runs: the envelope
//!   is checked and the result kept as a raw slice (no tree built);
//! * `simd_owned`: `simd_json::to_owned_value`;
//! * `simd_borrowed`: `simd_json::to_borrowed_value` (strings without escapes borrow the input);
//! * `simd_serde`: `simd_json::serde::from_slice::<serde_json::Value>`;
//! * `clone`: copying the payload alone.
//!
//! Every timed iteration parses and then drops the tree (freeing is part of the cost a host pays).
//! simd-json parses in place (it needs `&mut [u8]`), so every simd iteration gets a fresh copy
//! of the payload made in `iter_batched_ref`'s untimed setup and freed untimed: the simd numbers
//! exclude the copy, and `clone` (copy and free, timed) shows what a caller that cannot hand over
//! its buffer pays on top.
//!
//! Run with `cargo bench --bench parse`; add `-- --quick` or `--measurement-time 2` to shorten.

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};

/// Sizes of the tools/call payloads, in bytes of the whole JSON-RPC message (approximate).
const SIZES: [(usize, &str); 3] = [(100_000, "100KB"), (1_000_000, "1MB"), (10_000_000, "10MB")];

/// A small deterministic generator (64-bit LCG, Knuth's MMIX constants): no `rand` dependency and
/// the same payloads on every machine.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const WORDS: &[&str] = &[
    "the",
    "server",
    "returns",
    "a",
    "result",
    "for",
    "each",
    "request",
    "and",
    "client",
    "reads",
    "it",
    "from",
    "pipe",
    "when",
    "process",
    "writes",
    "line",
    "of",
    "JSON",
    "text",
    "with",
    "several",
    "fields",
    "that",
    "describe",
    "what",
    "happened",
    "during",
    "call",
    "tool",
    "file",
    "directory",
    "contains",
    "many",
    "entries",
    "which",
    "are",
    "listed",
    "in",
    "order",
    "by",
    "name",
    "size",
    "modification",
    "time",
    "but",
    "some",
    "may",
    "be",
    "hidden",
    "or",
    "unreadable",
    "because",
    "permissions",
    "deny",
    "access",
    "to",
    "user",
    "running",
    "this",
    "query",
    "database",
    "table",
    "rows",
    "columns",
    "index",
    "search",
    "matched",
    "documents",
];

/// Plain prose of about `len` bytes: sentences of common words, a newline every paragraph.
fn prose(len: usize, rng: &mut Lcg) -> String {
    let mut out = String::with_capacity(len + 64);
    let mut since_break = 0;
    while out.len() < len {
        let words = 8 + rng.below(16);
        for w in 0..words {
            let word = rng.pick(WORDS);
            if w == 0 {
                let mut chars = word.chars();
                if let Some(first) = chars.next() {
                    out.extend(first.to_uppercase());
                    out.push_str(chars.as_str());
                }
            } else {
                out.push(' ');
                out.push_str(word);
            }
        }
        out.push_str(". ");
        since_break += 1;
        if since_break == 6 {
            out.push('\n');
            since_break = 0;
        }
    }
    out
}

/// Pretty-printed JSON records of about `len` bytes: what a tool returns when it reads a JSON
/// file. Full of quotes and newlines that must be escaped once embedded in a JSON string.
fn json_source(len: usize, rng: &mut Lcg) -> String {
    let mut out = String::with_capacity(len + 1024);
    out.push_str("[\n");
    let mut i = 0u64;
    while out.len() < len {
        let record = json!({
            "id": i,
            "name": format!("{}-{}", rng.pick(WORDS), rng.pick(WORDS)),
            "path": format!("/srv/data/{}/{}.json", rng.pick(WORDS), i),
            "size": rng.next() % 1_000_000,
            "tags": [rng.pick(WORDS), rng.pick(WORDS), rng.pick(WORDS)],
            "enabled": rng.below(2) == 1,
            "owner": { "name": rng.pick(WORDS), "uid": rng.below(65536) },
            "note": format!("{} {} {}", rng.pick(WORDS), rng.pick(WORDS), rng.pick(WORDS)),
        });
        if i > 0 {
            out.push_str(",\n");
        }
        let pretty = serde_json::to_string_pretty(&record).expect("serialise record");
        for line in pretty.lines() {
            out.push_str("  ");
            out.push_str(line);
            out.push('\n');
        }
        out.pop();
        i += 1;
    }
    out.push_str("\n]\n");
    out
}

/// A `tools/call` response carrying `text` as its one text content.
fn call_response(text: String) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "jsonrpc": "2.0",
        "id": 42,
        "result": { "content": [{ "type": "text", "text": text }], "isError": false },
    }))
    .expect("serialise response")
}

/// A tools/call response of about `target` bytes, generating the text with `make` and scaling
/// it by the measured escape overhead.
fn sized_call(target: usize, rng: &mut Lcg, make: fn(usize, &mut Lcg) -> String) -> Vec<u8> {
    let probe = make(64 * 1024, rng);
    let ratio =
        serde_json::to_string(&probe).expect("escape probe").len() as f64 / probe.len() as f64;
    call_response(make((target as f64 / ratio) as usize, rng))
}

const TYPES: &[&str] = &["string", "integer", "number", "boolean"];

/// A `tools/list` response with `n` tools with realistic input schemas.
fn tools_list(n: usize, rng: &mut Lcg) -> Vec<u8> {
    let tools: Vec<Value> = (0..n)
        .map(|i| {
            let props = 2 + rng.below(7);
            let mut properties = serde_json::Map::new();
            let mut required = Vec::new();
            for p in 0..props {
                let name = format!("{}_{}", rng.pick(WORDS), p);
                let ty = rng.pick(TYPES);
                let mut schema = json!({
                    "type": ty,
                    "description": prose(60 + rng.below(120), rng).trim_end().to_owned(),
                });
                match (ty, rng.below(3)) {
                    ("string", 0) => {
                        schema["enum"] = json!([rng.pick(WORDS), rng.pick(WORDS), rng.pick(WORDS)]);
                    }
                    ("integer", _) => {
                        schema["minimum"] = json!(0);
                        schema["default"] = json!(rng.below(100));
                    }
                    ("boolean", _) => schema["default"] = json!(false),
                    _ => {}
                }
                if rng.below(2) == 0 {
                    required.push(Value::String(name.clone()));
                }
                properties.insert(name, schema);
            }
            json!({
                "name": format!("{}_{}_{i}", rng.pick(WORDS), rng.pick(WORDS)),
                "title": format!("{} {}", rng.pick(WORDS), rng.pick(WORDS)),
                "description": prose(150 + rng.below(300), rng).trim_end().to_owned(),
                "inputSchema": {
                    "type": "object",
                    "properties": properties,
                    "required": required,
                    "additionalProperties": false,
                },
                "annotations": { "readOnlyHint": rng.below(2) == 0 },
            })
        })
        .collect();
    serde_json::to_vec(&json!({ "jsonrpc": "2.0", "id": 7, "result": { "tools": tools } }))
        .expect("serialise tools/list")
}

/// Whether criterion will measure (`cargo bench`) rather than run each benchmark once
/// (`cargo test --benches`, usually a debug build): criterion's own rule.
fn measuring() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test")
}

/// Every payload; without `full` (test mode) only those under 1 MB, to keep debug runs short.
fn payloads(full: bool) -> Vec<(String, Vec<u8>)> {
    let mut rng = Lcg(0x5eed_cafe_f00d_d00d);
    let mut out = Vec::new();
    let sizes = SIZES.iter().filter(|(size, _)| full || *size < 1_000_000);
    for &(size, name) in sizes.clone() {
        out.push((format!("call/escaped/{name}"), sized_call(size, &mut rng, json_source)));
    }
    for &(size, name) in sizes {
        out.push((format!("call/prose/{name}"), sized_call(size, &mut rng, prose)));
    }
    out.push(("list/500tools".to_owned(), tools_list(500, &mut rng)));
    out
}

/// Checks once that every parser accepts the payload and agrees with serde_json.
fn check(payload: &[u8]) {
    let reference: Value = serde_json::from_slice(payload).expect("serde_json parses");
    assert!(ringmcp::jsonrpc::decode(payload).is_ok(), "ringmcp decodes");
    let via_simd: Value =
        simd_json::serde::from_slice(&mut payload.to_vec()).expect("simd_json::serde parses");
    assert_eq!(via_simd, reference, "simd-json and serde_json disagree");
    simd_json::to_owned_value(&mut payload.to_vec()).expect("simd_json owned parses");
}

fn bench_parse(c: &mut Criterion) {
    for (name, payload) in payloads(measuring()) {
        check(&payload);
        let escapes = payload.windows(2).filter(|w| w[0] == b'\\').count();
        eprintln!("payload {name}: {} bytes, {escapes} backslash escapes", payload.len());
        let mut group = c.benchmark_group(format!("parse/{name}"));
        group.throughput(Throughput::Bytes(payload.len() as u64));
        if payload.len() >= 1_000_000 {
            group.sample_size(10);
        }
        let input = payload.as_slice();
        group.bench_with_input(BenchmarkId::from_parameter("serde_json"), input, |b, input| {
            b.iter(|| serde_json::from_slice::<Value>(input).expect("parse"));
        });
        group.bench_with_input(BenchmarkId::from_parameter("ringmcp_decode"), input, |b, input| {
            b.iter(|| ringmcp::jsonrpc::decode(input).expect("decode"));
        });
        let frame = bytes::Bytes::copy_from_slice(input);
        group.bench_with_input(
            BenchmarkId::from_parameter("ringmcp_envelope"),
            &frame,
            |b, frame| {
                b.iter(|| ringmcp::jsonrpc::decode_raw(frame).expect("decode_raw"));
            },
        );
        group.bench_with_input(BenchmarkId::from_parameter("simd_owned"), input, |b, input| {
            b.iter_batched_ref(
                || input.to_vec(),
                |bytes| drop(black_box(simd_json::to_owned_value(bytes).expect("parse"))),
                BatchSize::LargeInput,
            );
        });
        group.bench_with_input(BenchmarkId::from_parameter("simd_borrowed"), input, |b, input| {
            b.iter_batched_ref(
                || input.to_vec(),
                |bytes| drop(black_box(simd_json::to_borrowed_value(bytes).expect("parse"))),
                BatchSize::LargeInput,
            );
        });
        group.bench_with_input(BenchmarkId::from_parameter("simd_serde"), input, |b, input| {
            b.iter_batched_ref(
                || input.to_vec(),
                |bytes| {
                    let value: Value = simd_json::serde::from_slice(bytes).expect("parse");
                    drop(black_box(value));
                },
                BatchSize::LargeInput,
            );
        });
        group.bench_with_input(BenchmarkId::from_parameter("clone"), input, |b, input| {
            b.iter(|| input.to_vec());
        });
        group.finish();
    }
}

criterion_group!(benches, bench_parse);
criterion_main!(benches);
