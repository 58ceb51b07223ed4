//! The raw baseline: the same request line bounced off `cat` over blocking pipes.
//!
//! This is the floor any stdio host pays (two pipe hops and a process wake-up each way),
//! without JSON work, a reactor or a real server, so `ringmcp p50 / raw p50` shows what
//! ringmcp adds on top of the kernel.

use std::io::{self, BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

use indicatif::ProgressBar;
use ringmcp::jsonrpc::{Id, encode_request};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::measure::Latencies;

/// Lines up to this size are written and read back from one thread: they fit in the default
/// 64 KiB pipe buffers both ways, so the write completes before the read starts. Longer lines
/// would deadlock that way (cat blocks on its full stdout while we block on its full stdin), so
/// a scoped writer thread feeds them while this thread reads.
pub(crate) const ONE_THREAD_MAX: usize = 32 * 1024;

/// The exact bytes ringmcp writes for `tools/call` of `tool` with `arguments` as request `id`:
/// the params are built and serialised as [`Client::call_tool`] does, then framed by the
/// library's own encoder.
///
/// [`Client::call_tool`]: ringmcp::host::Client::call_tool
pub(crate) fn request_line(id: i64, tool: &str, arguments: &Value) -> Vec<u8> {
    let params = json!({ "name": tool, "arguments": arguments }).to_string();
    let params = RawValue::from_string(params).expect("serde_json output is JSON");
    encode_request(&Id::Number(id), "tools/call", Some(&params))
}

/// The baseline's latencies and how it was run.
#[derive(Debug)]
pub(crate) struct Baseline {
    pub(crate) latencies: Latencies,
    /// Whether a writer thread was needed (lines over [`ONE_THREAD_MAX`]).
    pub(crate) writer_thread: bool,
}

/// Bounces `line` off a `cat` child `warmup + count` times, one at a time, timing each
/// write-and-read-back (the first `warmup` are not recorded).
///
/// # Errors
/// When `cat` cannot be started, a pipe fails, or cat's answer is not the line sent.
pub(crate) fn run(
    line: &[u8],
    warmup: u64,
    count: u64,
    progress: Option<&ProgressBar>,
) -> io::Result<Baseline> {
    let mut child = Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| io::Error::new(e.kind(), format!("starting `cat` for --baseline: {e}")))?;
    let mut stdin = child.stdin.take().expect("stdin was piped");
    let stdout = child.stdout.take().expect("stdout was piped");
    let mut reader = BufReader::with_capacity((line.len() + 1).max(64 * 1024), stdout);
    let writer_thread = line.len() > ONE_THREAD_MAX;
    let mut answer = Vec::with_capacity(line.len() + 1);
    let mut latencies = Latencies::new();
    for i in 0..warmup + count {
        answer.clear();
        let started = Instant::now();
        if writer_thread {
            std::thread::scope(|s| {
                let writer = s.spawn(|| stdin.write_all(line));
                let read = reader.read_until(b'\n', &mut answer);
                writer.join().expect("the writer thread does not panic").and(read)
            })?;
        } else {
            stdin.write_all(line)?;
            reader.read_until(b'\n', &mut answer)?;
        }
        let latency = started.elapsed();
        if answer != line {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("cat answered {} bytes for a {}-byte line", answer.len(), line.len()),
            ));
        }
        if i >= warmup {
            latencies.record(latency);
            if let Some(bar) = progress
                && (i + 1 - warmup).is_multiple_of(64)
            {
                bar.set_position(i + 1 - warmup);
            }
        }
    }
    drop(stdin);
    child.wait()?;
    Ok(Baseline { latencies, writer_thread })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_is_one_json_rpc_request() {
        let line = request_line(12345, "echo", &json!({"text": "hello"}));
        assert_eq!(line.last(), Some(&b'\n'));
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
        assert!(line.starts_with(br#"{"jsonrpc":"2.0","id":12345,"method":"tools/call","#));
        let value: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(
            value,
            json!({"jsonrpc":"2.0","id":12345,"method":"tools/call",
                   "params":{"name":"echo","arguments":{"text":"hello"}}})
        );
    }

    #[test]
    fn bounces_small_and_large_lines_off_cat() {
        for size in [10, ONE_THREAD_MAX + 1000] {
            let text = "x".repeat(size);
            let line = request_line(1, "echo", &json!({ "text": text }));
            let b = run(&line, 2, 5, None).expect("cat is on every Linux machine");
            assert_eq!(b.latencies.count(), 5);
            assert_eq!(b.writer_thread, size > ONE_THREAD_MAX);
        }
    }
}
