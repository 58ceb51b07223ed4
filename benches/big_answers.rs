//! PERFORMANCE.md, "P3b": one large `blob` answer received by ringmcp, and by the official Rust SDK
//! client rmcp, from the same `ringmcp serve`; one call per process.
//!
//! `scripts/big-answers.sh` runs this next to `benches/big_answers/client.mjs` (TypeScript SDK) and
//! `benches/big_answers/client.py` (Python SDK). All four take the same arguments and print the same
//! JSON line:
//!
//! ```text
//! cargo bench --bench big_answers -- ringmcp|rmcp --server PATH --bytes N [--timeout SECS]
//! {"client":..,"bytes":N,"ok":bool,"seconds":..,"error":..,"init_seconds":..,
//!  "cpu_seconds":..,"peak_rss_kib":..}
//! ```
//!
//! A run spawns `PATH serve`, initializes, calls `blob {"bytes": N}` once and checks what the
//! caller received: N bytes of the blob pattern (the length, the first and the last 36 bytes).
//! `seconds` runs from the call to that checked content; `init_seconds` is spawn + initialize.
//! `cpu_seconds` (user + sys) and `peak_rss_kib` are this process's own
//! (`getrusage(RUSAGE_SELF)`), not the server's. A call with no answer after `--timeout`
//! (default 300 s) is a failure: "hung" when this process sat idle meanwhile, "did not finish"
//! when it was busy.
//!
//! * **ringmcp** runs with the `ringmcp` CLI's host settings: an answer line longer than
//!   16 MiB is streamed to the spill store and the caller gets a `resource_link`, whose
//!   payload is checked through [`Client::spilled`] (that is, read back from the store);
//!   shorter answers arrive as text in memory.
//! * **rmcp** runs as an application would: `TokioChildProcess` on a tokio multi-thread
//!   runtime, default settings. What it logs (e.g. dropping an oversized line) is captured and
//!   added to the error.
//!
//! Unless its first argument names a client (so also under `cargo test --all-targets`, with or
//! without test flags) it prints its usage and exits 0: this is a manual benchmark, not a test.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use nix::sys::resource::{UsageWho, getrusage};
use nix::sys::time::TimeValLike;
use ringmcp::frame::DEFAULT_MAX_FRAME;
use ringmcp::host::{Client, Host, ServerSpec, SpillConfig};
use ringmcp::protocol::{CallToolResult, Content, RequestError};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

const USAGE: &str = "usage: big_answers ringmcp|rmcp --server PATH --bytes N [--timeout SECS]";

/// The `blob` tool's text: byte `i` is `PATTERN[i % 36]` (see `src/bin/ringmcp/serve/tools.rs`).
const PATTERN: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// How many bytes are compared at each end of the text.
const ENDS: u64 = 36;

/// Bound on the initialize handshake and on shutting the server down afterwards.
const SETUP_LIMIT: Duration = Duration::from_secs(30);

/// Which client receives the answer.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Ringmcp,
    Rmcp,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Ringmcp => "ringmcp",
            Kind::Rmcp => "rmcp",
        }
    }
}

#[derive(Debug)]
struct Opts {
    kind: Kind,
    server: PathBuf,
    bytes: u64,
    timeout: Duration,
}

/// What one run measured; `error` is `None` when the content checked out.
#[derive(Debug, Default)]
struct Outcome {
    init: Option<Duration>,
    call: Option<Duration>,
    error: Option<String>,
}

fn main() -> ExitCode {
    // `cargo bench` adds `--bench`; nothing else here starts with `--bench`.
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    // `cargo test --all-targets [-- FLAGS]` runs this too, with no client or with test flags.
    if !matches!(args.first().map(String::as_str), Some("ringmcp" | "rmcp")) {
        println!("big_answers: a manual benchmark, run by scripts/big-answers.sh; {USAGE}");
        return ExitCode::SUCCESS;
    }
    let opts = match parse(&args) {
        Ok(opts) => opts,
        Err(e) => {
            eprintln!("big_answers: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let logs = Logs::install();
    let outcome = match opts.kind {
        Kind::Ringmcp => run_ringmcp(&opts),
        Kind::Rmcp => run_rmcp(&opts),
    };
    let error = outcome.error.map(|e| match logs.text() {
        logged if logged.is_empty() => e,
        logged => format!("{e}; {} logged: {logged}", opts.kind.label()),
    });
    let usage = getrusage(UsageWho::RUSAGE_SELF).ok();
    let line = json!({
        "client": opts.kind.label(),
        "bytes": opts.bytes,
        "ok": error.is_none(),
        "seconds": outcome.call.map(|d| d.as_secs_f64()),
        "error": error,
        "init_seconds": outcome.init.map(|d| d.as_secs_f64()),
        "cpu_seconds": cpu_time().as_secs_f64(),
        // Linux reports ru_maxrss in KiB.
        "peak_rss_kib": usage.map(|u| u.max_rss()),
    });
    println!("{line}");
    ExitCode::SUCCESS
}

fn parse(args: &[String]) -> Result<Opts, String> {
    let kind = match args[0].as_str() {
        "ringmcp" => Kind::Ringmcp,
        "rmcp" => Kind::Rmcp,
        other => return Err(format!("unknown client {other:?}")),
    };
    let (mut server, mut bytes, mut timeout) = (None, None, Duration::from_secs(300));
    let mut rest = args[1..].iter();
    while let Some(flag) = rest.next() {
        let value = rest.next().ok_or_else(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--server" => server = Some(PathBuf::from(value)),
            "--bytes" => bytes = Some(value.parse().map_err(|e| format!("--bytes {value}: {e}"))?),
            "--timeout" => {
                let secs: f64 = value.parse().map_err(|e| format!("--timeout {value}: {e}"))?;
                timeout =
                    Duration::try_from_secs_f64(secs).map_err(|e| format!("--timeout: {e}"))?;
            }
            _ => return Err(format!("unknown flag {flag:?}")),
        }
    }
    let server = server.ok_or("--server is required")?;
    let bytes = bytes.ok_or("--bytes is required")?;
    Ok(Opts { kind, server, bytes, timeout })
}

/// This process's user + system CPU time so far.
fn cpu_time() -> Duration {
    let Ok(usage) = getrusage(UsageWho::RUSAGE_SELF) else { return Duration::ZERO };
    let micros = usage.user_time().num_microseconds() + usage.system_time().num_microseconds();
    Duration::from_micros(u64::try_from(micros).unwrap_or(0))
}

/// The failure text for a call that had no answer after `limit`, given the CPU this process
/// used meanwhile: idle means the client is waiting for something that will not come.
fn no_answer(limit: Duration, cpu: Duration) -> String {
    let (limit, cpu) = (limit.as_secs_f64(), cpu.as_secs_f64());
    if cpu > limit / 2.0 {
        format!("did not finish in {limit:.0} s (client busy: {cpu:.1} s CPU)")
    } else {
        format!("hung: no answer after {limit:.0} s (client idle: {cpu:.1} s CPU)")
    }
}

/// The expected blob bytes in `range`.
fn expected(range: std::ops::Range<u64>) -> Vec<u8> {
    range.map(|i| PATTERN[(i % PATTERN.len() as u64) as usize]).collect()
}

/// Checks a received text's length and both ends; `read(offset, len)` fetches its bytes.
fn check(
    n: u64,
    len: u64,
    read: impl Fn(u64, u64) -> Result<Vec<u8>, String>,
) -> Result<(), String> {
    if len != n {
        return Err(format!("received {len} bytes of text, expected {n}"));
    }
    let tail = n.saturating_sub(ENDS);
    for range in [0..ENDS.min(n), tail..n] {
        if read(range.start, range.end - range.start)? != expected(range.clone()) {
            return Err(format!("text bytes {range:?} differ from the blob pattern"));
        }
    }
    Ok(())
}

fn check_text(text: &str, n: u64) -> Result<(), String> {
    let bytes = text.as_bytes();
    check(n, bytes.len() as u64, |at, len| Ok(bytes[at as usize..(at + len) as usize].to_vec()))
}

fn run_ringmcp(opts: &Opts) -> Outcome {
    let mut outcome = Outcome::default();
    // The CLI's host (`src/bin/ringmcp/target.rs`): spill answer lines over the frame limit.
    let spill = SpillConfig { line_threshold: DEFAULT_MAX_FRAME, ..SpillConfig::default() };
    let host = match Host::builder().request_timeout(opts.timeout).spill(Some(spill)).build() {
        Ok(host) => host,
        Err(e) => return Outcome { error: Some(format!("host: {e}")), ..outcome },
    };
    let started = Instant::now();
    // Unsandboxed, like the server the other clients start (no CPU quota on it).
    let spec = ServerSpec::new("ringmcp-serve", &opts.server).arg("serve").sandbox(None);
    let client = match host.spawn_blocking(spec) {
        Ok(client) => client,
        Err(e) => return Outcome { error: Some(format!("spawn + initialize: {e}")), ..outcome },
    };
    outcome.init = Some(started.elapsed());
    let cpu = cpu_time();
    let started = Instant::now();
    let checked = match client.blocking().call_tool("blob", json!({ "bytes": opts.bytes })) {
        Ok(result) => check_ringmcp(&client, &result, opts.bytes),
        Err(e) => match e.request_error() {
            Some(RequestError::Timeout { .. }) => Err(no_answer(opts.timeout, cpu_time() - cpu)),
            _ => Err(e.to_string()),
        },
    };
    outcome.call = Some(started.elapsed());
    outcome.error = checked.err();
    client.blocking().shutdown();
    outcome
}

/// The text is either inline or, spilled, a `resource_link` to the store.
fn check_ringmcp(client: &Client, result: &CallToolResult, n: u64) -> Result<(), String> {
    if result.is_error {
        return Err(format!("tool error: {:?}", result.content));
    }
    match result.content.as_slice() {
        [Content::Text { text, .. }] => check_text(text, n),
        [Content::Other { kind, raw }] if kind == "resource_link" => {
            let uri = raw.get("uri").and_then(Value::as_str).ok_or("resource_link without uri")?;
            let file = client.spilled(uri).ok_or_else(|| format!("{uri} is not in the store"))?;
            check(n, file.len(), |at, len| {
                file.read_range(at, len as usize).map_err(|e| format!("reading {uri}: {e}"))
            })
        }
        other => Err(format!("unexpected content: {} blocks", other.len())),
    }
}

fn run_rmcp(opts: &Opts) -> Outcome {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            return Outcome { error: Some(format!("tokio runtime: {e}")), ..Outcome::default() };
        }
    };
    let outcome = runtime.block_on(rmcp_call(opts));
    // A child stuck writing would keep the runtime's blocking pool busy: do not wait for it.
    runtime.shutdown_timeout(Duration::from_secs(1));
    outcome
}

async fn rmcp_call(opts: &Opts) -> Outcome {
    let mut outcome = Outcome::default();
    let started = Instant::now();
    let command = tokio::process::Command::new(&opts.server).configure(|c| {
        c.arg("serve");
    });
    let transport = match TokioChildProcess::new(command) {
        Ok(transport) => transport,
        Err(e) => return Outcome { error: Some(format!("spawn: {e}")), ..outcome },
    };
    let service = match tokio::time::timeout(SETUP_LIMIT, ().serve(transport)).await {
        Ok(Ok(service)) => service,
        Ok(Err(e)) => return Outcome { error: Some(format!("initialize: {e}")), ..outcome },
        Err(_) => return Outcome { error: Some("initialize: no answer".into()), ..outcome },
    };
    outcome.init = Some(started.elapsed());
    let Value::Object(arguments) = json!({ "bytes": opts.bytes }) else {
        unreachable!("a json! object literal is an object")
    };
    let params = CallToolRequestParams::new("blob").with_arguments(arguments);
    let cpu = cpu_time();
    let started = Instant::now();
    let checked = match tokio::time::timeout(opts.timeout, service.peer().call_tool(params)).await {
        Err(_) => Err(no_answer(opts.timeout, cpu_time() - cpu)),
        Ok(Err(e)) => Err(e.to_string()),
        Ok(Ok(result)) if result.is_error == Some(true) => Err("tool error".to_owned()),
        Ok(Ok(result)) => match result.content.as_slice() {
            [block] => match block.as_text() {
                Some(text) => check_text(&text.text, opts.bytes),
                None => Err("the content is not text".to_owned()),
            },
            other => Err(format!("unexpected content: {} blocks", other.len())),
        },
    };
    outcome.call = Some(started.elapsed());
    outcome.error = checked.err();
    // Closes the server's stdin; `ringmcp serve` exits on EOF.
    let _ = tokio::time::timeout(SETUP_LIMIT, service.cancel()).await;
    outcome
}

/// Warnings and errors the libraries log through `tracing`, kept to go with a failure.
#[derive(Debug, Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl Logs {
    fn install() -> Logs {
        let logs = Logs::default();
        let writer = logs.clone();
        let _ = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::WARN)
            .with_ansi(false)
            .without_time()
            .with_writer(move || writer.clone())
            .try_init();
        logs
    }

    /// What was logged, one line per event joined by " | ".
    fn text(&self) -> String {
        let bytes = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let text = String::from_utf8_lossy(&bytes);
        text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" | ")
    }
}

impl Write for Logs {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).extend_from_slice(buf);
        io::stderr().write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().flush()
    }
}
