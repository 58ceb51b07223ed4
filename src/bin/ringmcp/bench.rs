//! `ringmcp bench`: throughput, latency, CPU and memory of calls through one host.
//!
//! N copies of the server run on one [`Host`] (one reactor thread); one bench thread keeps
//! exactly C `tools/call`s in flight, spread round-robin, and records each call's latency.
//! `--baseline` bounces the same request line off `cat` for the floor the kernel sets, and
//! `--idle-servers` measures what idle servers cost the host. `--gateway CLIENTS` sends the
//! calls through one `ringmcp gateway --http` with that many upstream clients.

mod baseline;
mod drive;
mod gateway;
mod kind;
mod measure;
mod plot;
mod report;
mod servers;
mod soak;
use crate::size;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use ringmcp::host::Client;
use serde_json::{Value, json};

use crate::target::{Failure, ServerArgs, exit};

use drive::{Load, Stop, drive};
use measure::{CpuTime, Latencies, peak_rss_bytes};
use report::{BaselineResult, Report, Setup};

/// Measure calls/s, latency percentiles, CPU per call and memory through one host.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Put the policy gate in the path (the server's policy from the config, else the
    /// built-in one): each call is decided (schema, paths, rules) before it is sent.
    #[arg(long)]
    policy: bool,
    /// Copies of the server to start on the one host; calls are spread round-robin.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    servers: u64,
    /// Calls in flight at any time, in total.
    #[arg(long, value_name = "C", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    concurrency: u64,
    /// Measured calls (default 10000).
    #[arg(long, value_name = "R", conflicts_with = "duration", value_parser = clap::value_parser!(u64).range(1..))]
    requests: Option<u64>,
    /// Measure for this many seconds instead of a number of calls.
    #[arg(long, value_name = "SECS")]
    duration: Option<f64>,
    /// The tool to call.
    #[arg(long, value_name = "NAME", default_value = "echo")]
    tool: String,
    /// The tool's arguments as a JSON object (default: `{"text":"hello"}` for echo, else `{}`).
    #[arg(long, value_name = "JSON", conflicts_with = "payload")]
    args: Option<String>,
    /// Payload size (B, KB, MB, GB, KiB, MiB, GiB): the text echo sends, or the bytes blob returns.
    #[arg(long, value_name = "BYTES", value_parser = size::parse_size)]
    payload: Option<u64>,
    /// Calls made before measuring, not counted.
    #[arg(long, value_name = "R", default_value_t = 200)]
    warmup: u64,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Also time the same request line bounced off `cat` over pipes (the raw floor).
    #[arg(long)]
    baseline: bool,
    /// Plot the latency percentiles to this .svg or .html file.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
    /// Start this many more servers that stay idle, and measure the host's CPU meanwhile.
    #[arg(long, value_name = "N", default_value_t = 0)]
    idle_servers: u64,
    /// How long to measure the host's CPU with the idle servers.
    #[arg(long, value_name = "SECS", default_value_t = 3.0)]
    idle_seconds: f64,
    /// Measure server start-up instead of calls: spawn → initialized, `--requests` times in a
    /// row (default 20, after `--warmup` untimed ones), each server shut down before the next
    /// (untimed). Compare `--no-sandbox` with the default sandbox (PERFORMANCE.md P6).
    #[arg(long)]
    spawn_only: bool,
    /// The soak: this share of the calls (0 < RATE ≤ 1) are faults, drawn at random among a
    /// crash, a hang and a garbage line (the tools of the reference server, the default,
    /// started with `--fault-tools`); servers that die are restarted;
    /// every call is accounted for; RSS, fds and threads are sampled (PERFORMANCE.md).
    #[arg(long, value_name = "RATE")]
    faults: Option<f64>,
    /// With `--faults`: seconds between samples of RSS, fds and threads.
    #[arg(long, value_name = "SECS", default_value_t = 5.0, requires = "faults")]
    sample_every: f64,
    /// Send the calls through one `ringmcp gateway --http` on loopback, with this many
    /// upstream clients (HTTP sessions) in front of it, each with its own copies of the
    /// `--servers` backends. With `--faults`, the gateway is the process sampled, and nothing
    /// of the sessions may be left in it once the clients are gone (the soak through the
    /// gateway).
    #[arg(long, value_name = "CLIENTS", value_parser = clap::value_parser!(u64).range(1..),
          conflicts_with_all = ["policy", "spawn_only", "idle_servers"])]
    gateway: Option<u64>,
    #[command(flatten)]
    server: ServerArgs,
}

/// Calls measured when neither `--requests` nor `--duration` is given.
const DEFAULT_REQUESTS: u64 = 10_000;
/// The default `echo` text.
const DEFAULT_TEXT: &str = "hello";

pub(crate) fn run(args: Args) -> ExitCode {
    match bench(&args) {
        Ok(()) => ExitCode::from(exit::OK),
        Err(f) => f.report(),
    }
}

/// The validated plan of a run.
struct Plan {
    arguments: Value,
    payload_bytes: Option<u64>,
    requests: Option<u64>,
    duration: Option<Duration>,
    report: Option<(PathBuf, plot::Format)>,
}

fn plan(args: &Args) -> Result<Plan, Failure> {
    let (arguments, payload_bytes) = arguments(&args.tool, args.args.as_deref(), args.payload)?;
    let duration = args.duration.map(|d| positive_secs("--duration", d)).transpose()?;
    let requests = match duration {
        Some(_) => None,
        None => Some(args.requests.unwrap_or(DEFAULT_REQUESTS)),
    };
    positive_secs("--idle-seconds", args.idle_seconds)?;
    positive_secs("--sample-every", args.sample_every)?;
    if let Some(rate) = args.faults.filter(|r| !(*r > 0.0 && *r <= 1.0)) {
        return Err(Failure::usage(format!(
            "--faults must be a share of the calls, 0 < RATE ≤ 1, got {rate}"
        )));
    }
    let report = match &args.report {
        Some(path) => Some((path.clone(), plot::Format::of(path).map_err(Failure::usage)?)),
        None => None,
    };
    Ok(Plan { arguments, payload_bytes, requests, duration, report })
}

fn positive_secs(flag: &str, secs: f64) -> Result<Duration, Failure> {
    Duration::try_from_secs_f64(secs)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| Failure::usage(format!("{flag} must be a positive number of seconds")))
}

/// The tool's arguments and the payload size they carry.
fn arguments(
    tool: &str,
    args: Option<&str>,
    payload: Option<u64>,
) -> Result<(Value, Option<u64>), Failure> {
    if let Some(text) = args {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| Failure::usage(format!("--args is not JSON: {e}")))?;
        if !value.is_object() {
            return Err(Failure::usage(format!("--args must be a JSON object, got {value}")));
        }
        return Ok((value, None));
    }
    match (tool, payload) {
        ("echo", Some(n)) => {
            let len = usize::try_from(n)
                .map_err(|_| Failure::usage(format!("--payload {n} does not fit in memory")))?;
            Ok((json!({ "text": "x".repeat(len) }), Some(n)))
        }
        ("echo", None) => Ok((json!({ "text": DEFAULT_TEXT }), Some(DEFAULT_TEXT.len() as u64))),
        ("blob", Some(n)) => Ok((json!({ "bytes": n }), Some(n))),
        (_, Some(_)) => Err(Failure::usage(format!(
            "--payload applies to the echo and blob tools; give --args for {tool:?}"
        ))),
        (_, None) => Ok((json!({}), None)),
    }
}

/// `--spawn-only`: start-up latency, spawn → initialized.
fn spawn_bench(
    args: &Args,
    host: &ringmcp::host::Host,
    spec: &ringmcp::host::ServerSpec,
) -> Result<(), Failure> {
    let runs = args.requests.unwrap_or(20);
    let mut latencies = Latencies::new();
    for i in 0..args.warmup.min(5) + runs {
        let started = Instant::now();
        let client = host.spawn_blocking(spec.clone())?;
        let took = started.elapsed();
        client.blocking().shutdown();
        if i >= args.warmup.min(5) {
            latencies.record(took);
        }
    }
    let s = latencies.summary();
    let report = json!({
        "mode": "spawn",
        "sandboxed": spec.sandboxed(),
        "spawns": s.count,
        "latency_us": {"min": s.min, "p50": s.p50, "p90": s.p90, "max": s.max, "mean": s.mean},
    });
    if args.json {
        println!("{report}");
    } else {
        println!(
            "{} spawns ({}): p50 {:.0} µs, p90 {:.0} µs, min {:.0} µs, max {:.0} µs",
            s.count,
            if spec.sandboxed() { "sandboxed" } else { "not sandboxed" },
            s.p50,
            s.p90,
            s.min,
            s.max
        );
    }
    Ok(())
}

fn bench(args: &Args) -> Result<(), Failure> {
    let plan = plan(args)?;
    let before = soak::baseline();
    let mut spec = args.server.spec()?;
    if args.faults.is_some() {
        // The built-in reference server, with the tools the faults call.
        if spec.name == "ringmcp-serve" {
            spec = spec.arg("--fault-tools");
        }
        spec = spec.restart(soak::restart_policy());
    }
    let servers = args.servers as usize;
    let concurrency = args.concurrency as usize;
    let idle_count = args.idle_servers as usize;
    let fd_limit = match servers::raise_fd_limit(args.servers + args.idle_servers) {
        Ok(limit) => Some(limit),
        Err(e) => {
            note!("ringmcp: warning: could not raise RLIMIT_NOFILE: {e}");
            None
        }
    };
    let host = args.server.host_with(args.policy.then(ringmcp::host::PolicySettings::default))?;
    if args.spawn_only {
        return spawn_bench(args, &host, &spec);
    }
    let through = match args.gateway {
        Some(_) => Some(gateway::Gateway::start(&spec, servers).map_err(Failure::usage)?),
        None => None,
    };
    let watched = match &through {
        Some(g) => soak::Watched::gateway(g.pid(), g.port()),
        None => soak::Watched::this_process(),
    };
    let (clients, prefixes) = match (&through, args.gateway) {
        (Some(g), Some(n)) => {
            let specs = (0..n as usize).map(|i| g.client_spec(i));
            let clients = specs.map(|s| host.spawn_blocking(s)).collect::<Result<Vec<_>, _>>()?;
            (clients, gateway::prefixes(servers))
        }
        _ => (servers::spawn_copies(&host, &spec, 0, servers)?, vec![String::new()]),
    };
    if args.faults.is_some() {
        soak::check_tools(&clients[0], &prefixes[0]).map_err(Failure::usage)?;
    }

    let mut idle = None;
    let mut idle_clients = Vec::new();
    if idle_count > 0 {
        let started = Instant::now();
        idle_clients = servers::spawn_copies(&host, &spec, servers, idle_count)?;
        let window = Duration::from_secs_f64(args.idle_seconds);
        idle = Some(servers::measure_idle(idle_count, started.elapsed(), window));
    }

    let load = Load {
        clients: &clients,
        prefixes: &prefixes,
        tool: &args.tool,
        arguments: &plan.arguments,
        concurrency,
        faults: args.faults,
    };
    if args.warmup > 0 {
        // Without faults: every server is up and has answered once it is over.
        drive(&Load { faults: None, ..load }, Stop::After(args.warmup), None);
    }
    // Through the gateway, the point of comparison is the gateway serving these clients
    // once warm (2026-07-28 clients share backends that live as long as the gateway).
    let before = if through.is_some() { watched.sample(Instant::now()) } else { before };
    let bytes_before = host_bytes(&clients);
    let stop = match (plan.requests, plan.duration) {
        (_, Some(d)) => Stop::At(Instant::now() + d),
        (n, None) => Stop::After(n.unwrap_or(DEFAULT_REQUESTS)),
    };
    let bar = progress(plan.requests, "calls");
    let sampler = match args.faults {
        Some(_) => {
            let every = Duration::from_secs_f64(args.sample_every);
            Some(soak::Sampler::start(every, watched.clone()).map_err(|e| Failure {
                code: exit::TRANSPORT,
                message: format!("starting the sampler: {e}"),
                json: None,
            })?)
        }
        None => None,
    };
    let cpu_before = CpuTime::now();
    let outcome = drive(&load, stop, bar.as_ref());
    let cpu = CpuTime::now().since(cpu_before);
    let samples = sampler.map(soak::Sampler::finish);
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    // A restarted server's count starts again with its new connection (the soak): what it
    // read before then is not counted, and the sum may even fall.
    let bytes =
        host_bytes(&clients).zip(bytes_before).map(|(after, before)| after.saturating_sub(before));

    let estimated_id = (args.warmup + outcome.calls()) / args.servers + 1;
    let line = baseline::request_line(estimated_id as i64, &args.tool, &plan.arguments);
    let raw = if args.baseline {
        let bar = progress(Some(outcome.calls()), "raw pipe");
        let raw = baseline::run(&line, args.warmup, outcome.calls(), bar.as_ref())
            .map_err(|e| Failure { code: exit::TRANSPORT, message: e.to_string(), json: None })?;
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        Some(raw)
    } else {
        None
    };

    let report = Report {
        setup: Setup {
            servers,
            concurrency,
            requests: plan.requests,
            duration: plan.duration,
            warmup: args.warmup,
            tool: args.tool.clone(),
            payload_bytes: plan.payload_bytes,
            request_bytes: line.len(),
        },
        ok: outcome.ok,
        elapsed: outcome.elapsed,
        latency: outcome.latencies.summary(),
        cpu,
        peak_rss_bytes: peak_rss_bytes(),
        errors: outcome.errors.clone(),
        host_bytes_received: bytes,
        baseline: raw.as_ref().map(|b| BaselineResult {
            latency: b.latencies.summary(),
            writer_thread: b.writer_thread,
        }),
        idle,
        fd_limit,
        soak: None,
    };
    let mut report = report;
    if let (Some(rate), Some(samples)) = (args.faults, samples) {
        // Directly, nothing may be left once the servers and the host are gone; through the
        // gateway, once the faults are over, with its clients still connected (then they
        // leave, and it must exit cleanly).
        let soak = || soak::report(rate, &outcome.accounts, samples, before, &watched);
        match through {
            None => {
                drop((idle_clients, clients, host));
                report.soak = Some(soak());
            }
            Some(g) => {
                report.soak = Some(soak());
                drop((clients, host));
                g.stop().map_err(|e| Failure { code: exit::TRANSPORT, message: e, json: None })?;
            }
        }
        return print_report(args, &plan, &report, &outcome, raw.as_ref());
    }
    print_report(args, &plan, &report, &outcome, raw.as_ref())?;
    drop(idle_clients);
    drop(clients);
    drop(host);
    match through {
        Some(g) => g.stop().map_err(|e| Failure { code: exit::TRANSPORT, message: e, json: None }),
        None => Ok(()),
    }
}

/// Prints the report (and writes its plot, and the soak's).
fn print_report(
    args: &Args,
    plan: &Plan,
    report: &Report,
    outcome: &drive::Outcome,
    raw: Option<&baseline::Baseline>,
) -> Result<(), Failure> {
    if args.json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.to_text());
        if let Some(soak) = &report.soak {
            print!("{}", soak.to_text());
        }
    }
    if let Some((path, format)) = &plan.report {
        write_plot(path, *format, report, &outcome.latencies, raw.map(|b| &b.latencies))?;
        if let Some(soak) = &report.soak {
            soak::write_plot(path, soak, &report.setup.shape()).map_err(|e| Failure {
                code: exit::TRANSPORT,
                message: e,
                json: None,
            })?;
        }
    }
    Ok(())
}

/// Bytes the host has read from these servers' stdout so far (`None` if a server is gone).
fn host_bytes(clients: &[Client]) -> Option<u64> {
    clients.iter().map(|c| c.blocking().stats().ok().map(|s| s.stdout_bytes)).sum()
}

/// A progress bar on stderr, only when stderr is a terminal.
fn progress(len: Option<u64>, what: &'static str) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(len, ProgressDrawTarget::stderr());
    let template = if len.is_some() {
        "{prefix:>8} [{bar:30}] {pos}/{len} {rate} eta {eta}"
    } else {
        "{prefix:>8} {spinner} {pos} {rate} {elapsed}"
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        let rate = |state: &ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = write!(w, "{:.0}/s", state.per_sec());
        };
        bar.set_style(style.progress_chars("=> ").with_key("rate", rate));
    }
    bar.set_prefix(what);
    Some(bar)
}

fn write_plot(
    path: &std::path::Path,
    format: plot::Format,
    report: &Report,
    ringmcp: &Latencies,
    raw: Option<&Latencies>,
) -> Result<(), Failure> {
    let s = &report.setup;
    let title = format!("ringmcp bench: {} on {}, {} calls", s.tool, s.shape(), report.calls());
    let mut curves = vec![plot::Curve { label: "ringmcp tools/call", latencies: ringmcp }];
    if let Some(raw) = raw {
        curves.push(plot::Curve { label: "raw pipe ping-pong (cat)", latencies: raw });
    }
    let svg = plot::svg(&title, &curves).map_err(|e| Failure {
        code: exit::TRANSPORT,
        message: format!("drawing {}: {e}", path.display()),
        json: None,
    })?;
    let text = match format {
        plot::Format::Svg => svg,
        plot::Format::Html => plot::html(&title, &report.to_text(), &svg),
    };
    std::fs::write(path, text)
        .map_err(|e| Failure::usage(format!("writing --report {}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_sets_the_reference_tools_arguments() {
        let (v, p) = arguments("echo", None, Some(4)).unwrap();
        assert_eq!((v, p), (json!({"text": "xxxx"}), Some(4)));
        let (v, p) = arguments("blob", None, Some(10_000_000)).unwrap();
        assert_eq!((v, p), (json!({"bytes": 10_000_000}), Some(10_000_000)));
        let (v, p) = arguments("echo", None, None).unwrap();
        assert_eq!((v, p), (json!({"text": "hello"}), Some(5)));
        let (v, p) = arguments("add", Some(r#"{"a":1,"b":2}"#), None).unwrap();
        assert_eq!((v, p), (json!({"a": 1, "b": 2}), None));
        assert_eq!(arguments("fail", None, None).unwrap().0, json!({}));
    }

    #[test]
    fn bad_arguments_are_usage_errors() {
        for (tool, args, payload) in
            [("add", None, Some(5)), ("echo", Some("[1]"), None), ("echo", Some("{"), None)]
        {
            let f = arguments(tool, args, payload).unwrap_err();
            assert_eq!(f.code, exit::USAGE, "{}", f.message);
        }
    }
}
