//! Throughput of [`LineFramer`]: how fast the reactor's pipe bytes become frames.
//!
//! One input of about 4 MiB of newline-terminated JSON-ish lines is pushed in fixed-size chunks
//! (4 KiB, 64 KiB and 256 KiB, the reactor's default read size) and every frame is pulled after
//! each chunk, as the reactor does. Line sizes are 100 B (notifications, small results), 10 KiB
//! (typical tool results) and 1 MiB (file contents). The framer is long-lived across iterations,
//! like a server's framer, so its buffer is warm.
//!
//! `naive` is the floor: one `memchr_iter` over the whole input, no buffering and no copy.
//!
//! Run with `cargo bench --bench framer`; add `-- --quick` for a fast look.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use ringmcp::frame::{DEFAULT_MAX_FRAME, FrameEvent, LineFramer};

/// Bytes of input per iteration (rounded to whole lines).
const INPUT_BYTES: usize = 4 * 1024 * 1024;

const CHUNKS: [(usize, &str); 3] =
    [(4 * 1024, "4KiB"), (64 * 1024, "64KiB"), (256 * 1024, "256KiB")];

const LINES: [(usize, &str); 3] = [(100, "100B"), (10 * 1024, "10KiB"), (1024 * 1024, "1MiB")];

/// Newline-terminated lines of exactly `line_len` bytes each (newline included), filling about
/// [`INPUT_BYTES`]. Each line looks like a JSON-RPC response padded with text.
fn input(line_len: usize) -> Vec<u8> {
    let lines = (INPUT_BYTES / line_len).max(1);
    let mut out = Vec::with_capacity(lines * line_len);
    for i in 0..lines {
        let head = format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"result\":{{\"text\":\"");
        let tail = b"\"}}\n";
        let pad = line_len.saturating_sub(head.len() + tail.len());
        out.extend_from_slice(head.as_bytes());
        out.extend((0..pad).map(|k| b"abcdefghij klmnopqrstuvwxyz"[(k + i) % 27]));
        out.extend_from_slice(tail);
    }
    out
}

/// Pushes `input` in `chunk`-sized pieces, pulling every frame after each push; returns the
/// number of frame bytes seen (so nothing is optimised away).
fn frame_all(framer: &mut LineFramer, input: &[u8], chunk: usize) -> usize {
    let mut seen = 0;
    for piece in input.chunks(chunk) {
        framer.push(piece);
        while let Some(event) = framer.next_event() {
            match event {
                FrameEvent::Frame(frame) => seen += frame.len(),
                other => panic!("unexpected framer event: {other:?}"),
            }
        }
    }
    seen
}

/// The floor: every line boundary found in one pass over the whole input.
fn naive(input: &[u8]) -> usize {
    let mut start = 0;
    let mut seen = 0;
    for nl in memchr::memchr_iter(b'\n', input) {
        seen += black_box(&input[start..nl]).len();
        start = nl + 1;
    }
    seen
}

fn bench_framer(c: &mut Criterion) {
    for (line_len, line_name) in LINES {
        let data = input(line_len);
        let expected = naive(&data);
        let mut group = c.benchmark_group(format!("framer/line={line_name}"));
        group.throughput(Throughput::Bytes(data.len() as u64));
        for (chunk, chunk_name) in CHUNKS {
            let mut framer = LineFramer::new(DEFAULT_MAX_FRAME);
            assert_eq!(frame_all(&mut framer, &data, chunk), expected);
            group.bench_with_input(BenchmarkId::new("chunk", chunk_name), &data, |b, data| {
                b.iter(|| frame_all(&mut framer, black_box(data), chunk));
            });
        }
        group.bench_with_input(BenchmarkId::new("naive", "whole"), &data, |b, data| {
            b.iter(|| naive(black_box(data)));
        });
        group.finish();
    }
}

criterion_group!(benches, bench_framer);
criterion_main!(benches);
