//! The sans-IO session's cost per request, legacy (2025-11-25) against stateless
//! (2026-07-28): queue a `tools/call`, take its line, feed the answer, take the completion.
//! The stateless era adds the `_meta` splice into the params, keeping the line for a possible
//! `input_required` retry, and the `resultType` check on the answer.
//!
//! Run with `cargo bench --bench session`.

use std::hint::black_box;
use std::time::Instant;

use bytes::Bytes;
use criterion::{Criterion, criterion_group, criterion_main};
use ringmcp::protocol::{Era, Event, Session, SessionConfig};
use serde_json::value::RawValue;

const PARAMS: &str = r#"{"name":"echo","arguments":{"text":"hello from the session benchmark"}}"#;

/// A session past the handshake, in the given era.
fn active(era: Era) -> Session<u64> {
    let now = Instant::now();
    let mut s = Session::new(SessionConfig { era, ..SessionConfig::default() });
    s.handshake(now, 0);
    let first = s.poll_transmit().expect("handshake sent");
    let id: serde_json::Value =
        serde_json::from_slice::<serde_json::Value>(&first.bytes).unwrap()["id"].clone();
    let result = match era {
        Era::Legacy => {
            serde_json::json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                          "serverInfo": {"name": "b", "version": "1"}})
        }
        _ => serde_json::json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                                "capabilities": {"tools": {}}, "serverInfo": {"name": "b", "version": "1"}}),
    };
    let answer = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result});
    s.handle_frame(&Bytes::from(answer.to_string()), now);
    while s.poll_transmit().is_some() {}
    while s.poll_event().is_some() {}
    assert!(s.server().is_some());
    s
}

fn one_call(s: &mut Session<u64>, params: &RawValue, now: Instant) {
    let id = s.request("tools/call", Some(params), now, None, 7).unwrap();
    let line = s.poll_transmit().unwrap();
    black_box(&line);
    let answer = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"hello from the session benchmark"}}]}}}}"#
    );
    s.handle_frame(&Bytes::from(answer), now);
    match s.poll_event() {
        Some(Event::Completed { outcome: Ok(r), .. }) => {
            black_box(r);
        }
        other => panic!("{other:?}"),
    }
}

fn bench(c: &mut Criterion) {
    let params = RawValue::from_string(PARAMS.to_owned()).unwrap();
    let mut group = c.benchmark_group("session_call");
    for (name, era) in [("legacy", Era::Legacy), ("modern", Era::Modern)] {
        let mut s = active(era);
        let now = Instant::now();
        group.bench_function(name, |b| b.iter(|| one_call(&mut s, &params, now)));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
