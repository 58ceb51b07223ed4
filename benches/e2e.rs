//! End to end: ringmcp against the official Rust SDK client (`rmcp`), both driving the same
//! `ringmcp serve` reference server over stdio, calling its `echo` tool.
//!
//! Two parts, in one run:
//!
//! 1. **Latency at c=1** (criterion): one `echo` call at a time on one server.
//!    * `ringmcp_blocking`: [`Client::call_tool_blocking`] (the reactor thread does the I/O);
//!    * `ringmcp_async`: [`Client::call_tool`] awaited on `futures`' executor;
//!    * `rmcp_mt`: `Peer::call_tool` awaited on a tokio multi-thread runtime (how rmcp is
//!      normally run, `#[tokio::main]`);
//!    * `rmcp_ct`: the same on a tokio current-thread runtime.
//! 2. **Throughput at c=64 over 4 servers** (custom measurement, printed as a table): 64 calls in
//!    flight, spread evenly over 4 servers of each kind, `CALLS` calls per round, `ROUNDS`
//!    rounds with the kinds rotated in each round. Reports calls/s and the client process's CPU
//!    time per call (`getrusage(RUSAGE_SELF)` user+sys delta, so every thread of this process
//!    — ringmcp's reactor, tokio's workers — and none of the servers), then ringmcp/rmcp ratios.
//!    ringmcp's 64 calls are plain futures on one thread (`futures::executor::block_on`);
//!    rmcp's are 64 tokio tasks. A c=1 row (sequential calls) is measured the same way.
//!
//! The machine's cores are shared by the client, the reactor and the servers, so calls/s is a
//! whole-system number; cpu/call is the client's own cost.
//!
//! Run with `cargo bench --bench e2e` (the release `ringmcp` binary is built by cargo). Under
//! `cargo test --benches` everything runs a handful of calls only.

use std::path::Path;
use std::time::{Duration, Instant};

use criterion::Criterion;
use criterion::async_executor::FuturesExecutor;
use futures::stream::{FuturesUnordered, StreamExt};
use nix::sys::resource::{UsageWho, getrusage};
use nix::sys::time::TimeValLike;
use ringmcp::host::{Client, Host, ServerSpec};
use rmcp::model::CallToolRequestParams;
use rmcp::service::{Peer, RunningService};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::runtime::Runtime;

/// The reference server binary, built by cargo for benches in the same profile.
const BIN: &str = env!("CARGO_BIN_EXE_ringmcp");

/// Servers per client kind in the throughput part.
const SERVERS: usize = 4;
/// Calls in flight in the throughput part.
const CONCURRENCY: usize = 64;
/// Calls per kind per round at c=64 (bench mode).
const CALLS: usize = 20_000;
/// Calls per kind per round at c=1 (bench mode).
const SEQUENTIAL_CALLS: usize = 5_000;
/// Measured rounds (bench mode); one warm-up round precedes them.
const ROUNDS: usize = 5;

const ECHO_TEXT: &str = "hello from the benchmark";

fn echo_args() -> Value {
    json!({ "text": ECHO_TEXT })
}

fn rmcp_params() -> CallToolRequestParams {
    let Value::Object(map) = echo_args() else { unreachable!("echo_args is an object") };
    CallToolRequestParams::new("echo").with_arguments(map)
}

/// Which client drives the calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ringmcp,
    RmcpMultiThread,
    RmcpCurrentThread,
}

impl Kind {
    const ALL: [Kind; 3] = [Kind::Ringmcp, Kind::RmcpMultiThread, Kind::RmcpCurrentThread];

    fn label(self) -> &'static str {
        match self {
            Kind::Ringmcp => "ringmcp",
            Kind::RmcpMultiThread => "rmcp (tokio multi-thread)",
            Kind::RmcpCurrentThread => "rmcp (tokio current-thread)",
        }
    }
}

/// `SERVERS` rmcp clients on one tokio runtime.
struct RmcpSide {
    runtime: Runtime,
    services: Vec<RunningService<RoleClient, ()>>,
}

impl RmcpSide {
    fn start(runtime: Runtime, servers: usize) -> RmcpSide {
        let services = runtime.block_on(async {
            let mut services = Vec::new();
            for _ in 0..servers {
                let command = tokio::process::Command::new(BIN).configure(|c| {
                    c.arg("serve");
                });
                let transport = TokioChildProcess::new(command).expect("spawn ringmcp serve");
                services.push(().serve(transport).await.expect("rmcp initialize"));
            }
            services
        });
        RmcpSide { runtime, services }
    }

    fn peers(&self) -> Vec<Peer<RoleClient>> {
        self.services.iter().map(|s| s.peer().clone()).collect()
    }

    /// One `echo` call on the first server; poll it on `self.runtime`.
    async fn call(&self) {
        let peer = self.services[0].peer();
        let result = peer.call_tool(rmcp_params()).await.expect("rmcp echo");
        assert_ne!(result.is_error, Some(true), "echo failed: {result:?}");
    }

    /// `calls` calls split over `concurrency` tasks, round-robin over the servers.
    fn run(&self, calls: usize, concurrency: usize) {
        let peers = self.peers();
        let per_task = calls / concurrency;
        self.runtime.block_on(async move {
            let tasks: Vec<_> = (0..concurrency)
                .map(|t| {
                    let peer = peers[t % peers.len()].clone();
                    tokio::spawn(async move {
                        for _ in 0..per_task {
                            let r = peer.call_tool(rmcp_params()).await.expect("rmcp echo");
                            assert_ne!(r.is_error, Some(true));
                        }
                    })
                })
                .collect();
            for task in tasks {
                task.await.expect("rmcp task");
            }
        });
    }

    fn stop(self) {
        let RmcpSide { runtime, services } = self;
        runtime.block_on(async {
            for service in services {
                // Closes the server's stdin; `ringmcp serve` exits on EOF.
                let _ = service.cancel().await;
            }
        });
    }
}

/// `SERVERS` ringmcp clients on one host.
struct RingSide {
    clients: Vec<Client>,
    // Dropped last: shuts the servers down and joins the reactor.
    _host: Host,
}

impl RingSide {
    fn start(servers: usize) -> RingSide {
        let host = Host::builder().build().expect("ringmcp host (io_uring available?)");
        let clients = (0..servers)
            .map(|i| {
                host.spawn_blocking(
                    ServerSpec::new(format!("echo{i}"), BIN).arg("serve").sandbox(None),
                )
                .expect("ringmcp spawn + initialize")
            })
            .collect();
        RingSide { clients, _host: host }
    }

    fn call_blocking(&self) {
        let result =
            self.clients[0].blocking().call_tool("echo", echo_args()).expect("ringmcp echo");
        assert!(!result.is_error, "echo failed: {result:?}");
    }

    async fn call(&self) {
        let result = self.clients[0].call_tool("echo", echo_args()).await.expect("ringmcp echo");
        assert!(!result.is_error, "echo failed: {result:?}");
    }

    /// `calls` calls split over `concurrency` futures on this thread, round-robin over servers.
    fn run(&self, calls: usize, concurrency: usize) {
        let per_task = calls / concurrency;
        let mut tasks: FuturesUnordered<_> = (0..concurrency)
            .map(|t| {
                let client = &self.clients[t % self.clients.len()];
                async move {
                    for _ in 0..per_task {
                        let r = client.call_tool("echo", echo_args()).await.expect("ringmcp echo");
                        assert!(!r.is_error);
                    }
                }
            })
            .collect();
        futures::executor::block_on(async { while tasks.next().await.is_some() {} });
    }
}

struct Fixture {
    ring: RingSide,
    rmcp_mt: RmcpSide,
    rmcp_ct: RmcpSide,
}

impl Fixture {
    fn start(servers: usize) -> Fixture {
        assert!(
            Path::new(BIN).exists(),
            "{BIN} is missing: run `cargo build --release` (cargo bench normally builds it)"
        );
        let mt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("rt");
        let ct = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("rt");
        Fixture {
            ring: RingSide::start(servers),
            rmcp_mt: RmcpSide::start(mt, servers),
            rmcp_ct: RmcpSide::start(ct, servers),
        }
    }

    fn run(&self, kind: Kind, calls: usize, concurrency: usize) {
        match kind {
            Kind::Ringmcp => self.ring.run(calls, concurrency),
            Kind::RmcpMultiThread => self.rmcp_mt.run(calls, concurrency),
            Kind::RmcpCurrentThread => self.rmcp_ct.run(calls, concurrency),
        }
    }

    fn stop(self) {
        self.rmcp_mt.stop();
        self.rmcp_ct.stop();
        drop(self.ring);
    }
}

/// User + system CPU time of this whole process so far.
fn cpu_time() -> Duration {
    let usage = getrusage(UsageWho::RUSAGE_SELF).expect("getrusage");
    let micros = usage.user_time().num_microseconds() + usage.system_time().num_microseconds();
    Duration::from_micros(u64::try_from(micros).unwrap_or(0))
}

/// One measured round of one kind.
#[derive(Debug, Clone, Copy)]
struct Sample {
    calls_per_sec: f64,
    cpu_us_per_call: f64,
    wall_us_per_call: f64,
}

fn measure(fixture: &Fixture, kind: Kind, calls: usize, concurrency: usize) -> Sample {
    let calls = calls / concurrency * concurrency;
    let (cpu0, t0) = (cpu_time(), Instant::now());
    fixture.run(kind, calls, concurrency);
    let (wall, cpu) = (t0.elapsed(), cpu_time() - cpu0);
    Sample {
        calls_per_sec: calls as f64 / wall.as_secs_f64(),
        cpu_us_per_call: cpu.as_secs_f64() * 1e6 / calls as f64,
        wall_us_per_call: wall.as_secs_f64() * 1e6 / calls as f64,
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Runs `rounds` rounds of every kind (order rotated per round) and prints a table of medians.
fn throughput_table(fixture: &Fixture, calls: usize, concurrency: usize, rounds: usize) {
    for kind in Kind::ALL {
        measure(fixture, kind, calls / 4, concurrency); // warm-up
    }
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); Kind::ALL.len()];
    for round in 0..rounds {
        for k in 0..Kind::ALL.len() {
            let idx = (k + round) % Kind::ALL.len();
            samples[idx].push(measure(fixture, Kind::ALL[idx], calls, concurrency));
        }
    }
    let med = |i: usize, f: fn(&Sample) -> f64| median(samples[i].iter().map(f).collect());
    println!(
        "\n== c={concurrency} over {} server(s) each, {calls} calls x {rounds} rounds (median) ==",
        if concurrency == 1 { 1 } else { SERVERS }
    );
    println!("{:<30} {:>12} {:>14} {:>14}", "client", "calls/s", "wall_us/call", "cpu_us/call");
    for (i, kind) in Kind::ALL.iter().enumerate() {
        println!(
            "{:<30} {:>12.0} {:>14.2} {:>14.2}   rounds: {}",
            kind.label(),
            med(i, |s| s.calls_per_sec),
            med(i, |s| s.wall_us_per_call),
            med(i, |s| s.cpu_us_per_call),
            samples[i]
                .iter()
                .map(|s| format!("{:.0}/s {:.1}us", s.calls_per_sec, s.cpu_us_per_call))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    for (i, kind) in Kind::ALL.iter().enumerate().skip(1) {
        println!(
            "ringmcp / {:<26} calls/s x{:.2}   cpu/call x{:.2}",
            kind.label(),
            med(0, |s| s.calls_per_sec) / med(i, |s| s.calls_per_sec),
            med(0, |s| s.cpu_us_per_call) / med(i, |s| s.cpu_us_per_call),
        );
    }
}

/// Each async variant runs its whole timing loop inside one `block_on` (criterion's `to_async`),
/// as an application's `#[tokio::main]` would.
fn latency(c: &mut Criterion, fixture: &Fixture) {
    let mut group = c.benchmark_group("e2e/c1_echo");
    group.bench_function("ringmcp_blocking", |b| b.iter(|| fixture.ring.call_blocking()));
    group.bench_function("ringmcp_async", |b| {
        b.to_async(FuturesExecutor).iter(|| fixture.ring.call());
    });
    group.bench_function("rmcp_mt", |b| {
        b.to_async(&fixture.rmcp_mt.runtime).iter(|| fixture.rmcp_mt.call());
    });
    group.bench_function("rmcp_ct", |b| {
        b.to_async(&fixture.rmcp_ct.runtime).iter(|| fixture.rmcp_ct.call());
    });
    group.finish();
}

fn main() {
    // Criterion's own rule: benchmark only under `--bench` without `--test`; otherwise (cargo
    // test) run each benchmark once.
    let args: Vec<String> = std::env::args().collect();
    let has = |flag: &str| args.iter().any(|a| a == flag);
    let bench_mode = has("--bench") && !has("--test") && !has("--list");

    let mut criterion = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let fixture = Fixture::start(SERVERS);
    latency(&mut criterion, &fixture);
    criterion.final_summary();

    if has("--list") {
        // Listing only names criterion's benchmarks; the throughput table is not one.
    } else if bench_mode {
        throughput_table(&fixture, SEQUENTIAL_CALLS, 1, ROUNDS);
        throughput_table(&fixture, CALLS, CONCURRENCY, ROUNDS);
    } else {
        throughput_table(&fixture, 8, 1, 1);
        throughput_table(&fixture, CONCURRENCY, CONCURRENCY, 1);
    }
    fixture.stop();
}
