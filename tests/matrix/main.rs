//! The fault matrix: every fault of tests/servers/faults.py, over stdio and Streamable HTTP
//! where it applies, at 1 and 64 calls at once, straight to the server and through `ringmcp
//! gateway`. For each cell:
//! - every call gets an answer or a typed error within its deadline (4 s, plus 4 s of grace);
//! - a healthy server beside the faulty one answers throughout, and the faulty server's other
//!   calls answer too unless the fault kills or blocks its connection;
//! - afterwards nothing is left: this process's fds and threads, the cell's processes (found
//!   by a token in their command lines, grandchildren in sessions of their own included), the
//!   sandbox's cgroups, this process's mounts, the spill store's files.
//!
//! The last rows are the upstream client's own fault: one that stops reading the gateway's
//! HTTP front (slow_reader.rs). `RINGMCP_MATRIX_ONLY=hang,slowreader` runs those rows only.
//!
//! A test binary of its own, so that the counts of fds, threads and children are this
//! matrix's alone. The table is printed (to stderr, not captured) and written to
//! target/fault-matrix.txt.

#![allow(unreachable_pub)]

#[path = "../integration/util.rs"]
#[allow(dead_code)]
mod util;

mod slow_reader;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ringmcp::host::{Error, Host, ServerSpec, SpillConfig};
use ringmcp::protocol::RequestError;
use ringmcp::sandbox::SandboxConfig;
use serde_json::json;

use util::{TempDir, ringmcp_bin};

/// Each call's own deadline.
const DEADLINE: Duration = Duration::from_secs(4);
/// What a call may take past its deadline before the cell fails (a loaded 2-core machine).
const GRACE: Duration = Duration::from_secs(4);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Transport {
    Stdio,
    Http,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Route {
    Direct,
    Gateway,
}

/// One fault: where it applies, and whether the faulty server's other calls must still be
/// answered (`false`: the fault ends or blocks its connection).
struct Fault {
    tool: &'static str,
    stdio: bool,
    http: bool,
    others_answered: bool,
}

const FAULTS: &[Fault] = &[
    Fault { tool: "crash", stdio: true, http: true, others_answered: false },
    Fault { tool: "hang", stdio: true, http: true, others_answered: true },
    Fault { tool: "garbage", stdio: true, http: true, others_answered: true },
    Fault { tool: "partial", stdio: true, http: false, others_answered: true },
    Fault { tool: "endless", stdio: true, http: false, others_answered: false },
    Fault { tool: "badutf8", stdio: true, http: true, others_answered: true },
    // The same server's other answers wait behind its 200 MiB line (one pipe, in order):
    // through the gateway that takes longer than their deadline on 2 cores.
    Fault { tool: "huge", stdio: true, http: false, others_answered: false },
    Fault { tool: "deaf", stdio: true, http: false, others_answered: true },
    Fault { tool: "closein", stdio: true, http: false, others_answered: false },
    Fault { tool: "ignoreterm", stdio: true, http: false, others_answered: true },
    Fault { tool: "grandchild", stdio: true, http: false, others_answered: true },
    Fault { tool: "unknownid", stdio: true, http: true, others_answered: true },
    Fault { tool: "duplicate", stdio: true, http: true, others_answered: true },
    Fault { tool: "aftercancel", stdio: true, http: false, others_answered: true },
    Fault { tool: "storm", stdio: true, http: true, others_answered: true },
    Fault { tool: "dropsse", stdio: false, http: true, others_answered: true },
    Fault { tool: "status500", stdio: false, http: true, others_answered: true },
    Fault { tool: "stall", stdio: false, http: true, others_answered: true },
];

/// What one cell saw.
struct Outcome {
    answered: usize,
    errors: BTreeMap<String, usize>,
    slowest: Duration,
    problems: Vec<String>,
}

fn faults_py() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers/faults.py")
}

/// A short name for an error's kind (the table's).
fn kind(e: &Error) -> String {
    match e {
        Error::Server { source, .. } => match source {
            RequestError::Rpc(obj) => format!("rpc {}", obj.code),
            RequestError::Timeout { .. } => "timeout".into(),
            RequestError::Closed(_) => "closed".into(),
            RequestError::FrameTooLarge { .. } => "frame".into(),
            RequestError::SpillFailed { .. } => "spill".into(),
            RequestError::MalformedResult { .. } => "malformed".into(),
            other => format!("{other:?}").split([' ', '{', '(']).next().unwrap_or("?").into(),
        },
        Error::Restarted { .. } => "restarted".into(),
        Error::Unavailable { .. } => "unavailable".into(),
        other => format!("{other:?}").split([' ', '{', '(']).next().unwrap_or("?").into(),
    }
}

/// The pids whose command line holds `token`.
fn pids_with(token: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline"))
            && String::from_utf8_lossy(&cmd).contains(token)
        {
            pids.push(pid);
        }
    }
    pids
}

fn count(path: &str) -> usize {
    std::fs::read_dir(path).map(|d| d.count()).unwrap_or(0)
}

/// Regular files anywhere under `dir`.
fn files_under(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => files_under(&e.path()),
            Ok(t) if t.is_file() => 1,
            _ => 0,
        })
        .sum()
}

fn mounts() -> usize {
    std::fs::read_to_string("/proc/self/mountinfo").map(|m| m.lines().count()).unwrap_or(0)
}

/// The cgroup folders of `pids` (while they run).
fn cgroups(pids: &[u32]) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for pid in pids {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/cgroup")) else { continue };
        for line in text.lines() {
            if let Some(path) = line.strip_prefix("0::")
                && path.contains("ringmcp")
            {
                dirs.push(Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/')));
            }
        }
    }
    dirs
}

/// Waits up to 10 s for `done`; its last reading when it never came true.
fn settle<T: std::fmt::Debug>(
    mut read: impl FnMut() -> T,
    done: impl Fn(&T) -> bool,
) -> Result<(), T> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let value = read();
        if done(&value) {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(value);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A free port on 127.0.0.1.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The faulty server's spec (stdio: sandboxed, as by default; HTTP: started here) and the
/// HTTP server's process.
fn fault_server(
    python: &Path,
    transport: Transport,
    dir: &Path,
    token: &str,
) -> (ServerSpec, Option<std::process::Child>, Option<String>) {
    let pid_file = dir.join(format!("{token}.pids"));
    let args =
        [faults_py().display().to_string(), "--pid-file".into(), pid_file.display().to_string()];
    match transport {
        Transport::Stdio => {
            let sandbox = SandboxConfig {
                workspace: Some(dir.to_owned()),
                workspace_writable: true,
                binds: Vec::new(),
                ..SandboxConfig::standard()
            };
            let spec = ServerSpec::new("f", python).args(args).sandbox(Some(sandbox));
            (spec, None, None)
        }
        Transport::Http => {
            let port = free_port();
            let child = std::process::Command::new(python)
                .args(args)
                .args(["--http", &port.to_string()])
                .stdin(std::process::Stdio::null())
                .spawn()
                .expect("starting the HTTP fault server");
            let url = format!("http://127.0.0.1:{port}/mcp");
            let deadline = Instant::now() + Duration::from_secs(10);
            while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
                assert!(Instant::now() < deadline, "the HTTP fault server did not listen");
                std::thread::sleep(Duration::from_millis(20));
            }
            (ServerSpec::http("f", url.clone()), Some(child), Some(url))
        }
    }
}

/// Runs one cell; its outcome.
fn cell(python: &Path, fault: &Fault, transport: Transport, c: usize, route: Route) -> Outcome {
    let dir = TempDir::new("matrix");
    let token =
        format!("cell-{}-{}-{:?}-{c}-{:?}", std::process::id(), fault.tool, transport, route);
    let (fault_spec, mut http_child, url) = fault_server(python, transport, &dir.0, &token);
    let spill_dir = dir.0.join("spill");
    let host = Host::builder()
        .request_timeout(DEADLINE)
        .spill(Some(SpillConfig {
            store: ringmcp::spill::store::StoreConfig {
                base_dir: Some(spill_dir.clone()),
                ..Default::default()
            },
            ..SpillConfig::default()
        }))
        .build()
        .expect("io_uring host");
    let healthy_spec = ServerSpec::new("ref", ringmcp_bin()).arg("serve");
    let (faulty, healthy) = match route {
        Route::Direct => {
            let faulty = host.spawn_blocking(fault_spec).expect("the fault server starts");
            let healthy = host.spawn_blocking(healthy_spec).expect("the reference server starts");
            (faulty, healthy)
        }
        Route::Gateway => {
            // The config's name carries the token, and so the gateway's command line.
            let config = gateway_config(&fault_spec, url.as_deref(), &dir.0, &token);
            let spec = ServerSpec::new("gw", ringmcp_bin())
                .args(["gateway", "--config", &config.display().to_string(), "--timeout", "4"])
                .sandbox(None);
            let gw = host.spawn_blocking(spec).expect("the gateway starts");
            (gw.clone(), gw)
        }
    };
    let (f, r) = match route {
        Route::Direct => (String::new(), String::new()),
        Route::Gateway => ("f__".to_owned(), "ref__".to_owned()),
    };
    let started = pids_with(&token);
    let groups = cgroups(&started);
    // The calls: the fault, c - 1 companions on the faulty server (100 kB each, so that 64 of
    // them fill a pipe), and one on the healthy server.
    let filler = "z".repeat(100_000);
    let t0 = Instant::now();
    let mut calls = vec![(
        true,
        faulty.call(&format!("{f}{}", fault.tool), json!({})).timeout(Some(DEADLINE)).send(),
    )];
    for _ in 1..c {
        let call = faulty.call(&format!("{f}echo"), json!({"pad": filler})).timeout(Some(DEADLINE));
        calls.push((false, call.send()));
    }
    let healthy_call =
        healthy.call(&format!("{r}echo"), json!({"text": "fine"})).timeout(Some(DEADLINE)).send();
    let mut outcome = Outcome {
        answered: 0,
        errors: BTreeMap::new(),
        slowest: Duration::ZERO,
        problems: Vec::new(),
    };
    let results = futures::executor::block_on(futures::future::join_all(
        calls
            .into_iter()
            .map(|(is_fault, call)| async move { (is_fault, call.await, t0.elapsed()) }),
    ));
    let (mut companions_failed, mut first_failure) = (0, None);
    for (is_fault, result, took) in results {
        outcome.slowest = outcome.slowest.max(took);
        match result {
            Ok(_) => outcome.answered += 1,
            Err(e) => {
                *outcome.errors.entry(kind(&e)).or_default() += 1;
                if !is_fault && fault.others_answered {
                    companions_failed += 1;
                    first_failure.get_or_insert_with(|| e.to_string());
                }
            }
        }
    }
    if let Some(first) = first_failure {
        outcome
            .problems
            .push(format!("{companions_failed} companion calls failed, first: {first}"));
    }
    match futures::executor::block_on(healthy_call) {
        Ok(r) if r.text() == "fine" || r.text().contains("fine") => {}
        other => outcome.problems.push(format!("the healthy server: {other:?}")),
    }
    if outcome.slowest > DEADLINE + GRACE {
        outcome.problems.push(format!("a call took {:?}", outcome.slowest));
    }
    drop((faulty, healthy));
    drop(host);
    if let Some(child) = &mut http_child {
        let _ = child.kill();
        let _ = child.wait();
    }
    left_behind(&token, &groups, &spill_dir, &mut outcome.problems);
    outcome
}

/// What a cell left behind once its host is gone: its processes (killed, so that the next
/// cell starts clean), its servers' cgroups, spill files.
fn left_behind(token: &str, groups: &[PathBuf], spill_dir: &Path, problems: &mut Vec<String>) {
    if let Err(left) = settle(|| pids_with(token), Vec::is_empty) {
        problems.push(format!("processes left: {left:?}"));
        for pid in left {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
    if let Err(left) =
        settle(|| groups.iter().filter(|g| g.exists()).cloned().collect::<Vec<_>>(), Vec::is_empty)
    {
        problems.push(format!("cgroups left: {left:?}"));
    }
    if let Err(left) = settle(|| files_under(spill_dir), |n| *n == 0) {
        problems.push(format!("{left} spill files left"));
    }
}

/// A gateway config with the fault server and a healthy one.
fn gateway_config(fault: &ServerSpec, url: Option<&str>, dir: &Path, token: &str) -> PathBuf {
    let entry = match fault.launch() {
        Some(l) => json!({
            "command": l.program.to_string_lossy(),
            "args": l.args.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>(),
            "sandbox": {"workspace": dir, "workspaceWritable": true},
        }),
        None => json!({"url": url.expect("an HTTP server's URL")}),
    };
    let config = json!({
        "gateway": {"restart": {"initialDelayMs": 200, "maxDelayMs": 1000}},
        "mcpServers": {"f": entry, "ref": {"command": ringmcp_bin(), "args": ["serve"]}},
    });
    let path = dir.join(format!("{token}.json"));
    std::fs::write(&path, serde_json::to_vec(&config).unwrap()).unwrap();
    path
}

#[test]
fn the_fault_matrix() {
    let Some(python) = util::python3() else {
        ringmcp::testkit::skip(
            ringmcp::testkit::SkipKind::Dependency,
            "python3 not found: the fault server needs it",
        );
        return;
    };
    // A first cell of each route and transport, not counted, so that what lives for the
    // process once started (the parse pool, the timer thread, the socket pair of the HTTP
    // client's runtime) is in the baseline.
    for (transport, route) in [
        (Transport::Stdio, Route::Direct),
        (Transport::Http, Route::Direct),
        (Transport::Stdio, Route::Gateway),
    ] {
        cell(&python, &FAULTS[2], transport, 1, route);
    }
    let baseline = (util::open_fds(), count("/proc/self/task"), mounts());
    let mut table = String::new();
    let _ = writeln!(
        table,
        "{:<12} {:<5} {:>3} {:<7} {:>8}  {:<34} {:>7}  result",
        "fault", "via", "c", "route", "answered", "typed errors", "slowest"
    );
    let mut failures = Vec::new();
    let only = std::env::var("RINGMCP_MATRIX_ONLY").ok();
    let wanted = |name: &str| only.as_ref().is_none_or(|o| o.split(',').any(|f| f == name));
    for fault in FAULTS.iter().filter(|f| wanted(f.tool)) {
        for transport in [Transport::Stdio, Transport::Http] {
            if !(if transport == Transport::Stdio { fault.stdio } else { fault.http }) {
                continue;
            }
            for c in [1, 64] {
                for route in [Route::Direct, Route::Gateway] {
                    let started = Instant::now();
                    let o = cell(&python, fault, transport, c, route);
                    let via = if transport == Transport::Stdio { "stdio" } else { "http" };
                    let row = Row { fault: fault.tool, via, c, route };
                    row.record(o, started, &baseline, &mut table, &mut failures);
                }
            }
        }
    }
    // The upstream client's own fault: one that stops reading the gateway's HTTP front.
    for c in [1, 64].into_iter().filter(|_| wanted("slowreader")) {
        let started = Instant::now();
        let o = slow_reader::cell(c);
        let row = Row { fault: "slowreader", via: "http", c, route: Route::Gateway };
        row.record(o, started, &baseline, &mut table, &mut failures);
    }
    let _ = std::io::stderr().write_all(format!("\nthe fault matrix\n{table}\n").as_bytes());
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/fault-matrix.txt");
    let _ = std::fs::write(target, &table);
    assert!(failures.is_empty(), "{} cells failed:\n{}", failures.len(), failures.join("\n"));
}

/// One row of the table.
struct Row {
    fault: &'static str,
    via: &'static str,
    c: usize,
    route: Route,
}

impl Row {
    /// Checks what the cell left in this process against `baseline` (fds, threads, mounts),
    /// and writes the row and any failure.
    fn record(
        &self,
        mut o: Outcome,
        started: Instant,
        &(fds, threads, mounted): &(usize, usize, usize),
        table: &mut String,
        failures: &mut Vec<String>,
    ) {
        if let Err(n) = settle(util::open_fds, |n| *n <= fds) {
            let open: Vec<String> = (std::fs::read_dir("/proc/self/fd").into_iter().flatten())
                .flatten()
                .filter_map(|e| std::fs::read_link(e.path()).ok())
                .map(|p| p.display().to_string())
                .collect();
            o.problems.push(format!("fds: {n}, {fds} before: {open:?}"));
        }
        if let Err(n) = settle(|| count("/proc/self/task"), |n| *n <= threads) {
            o.problems.push(format!("threads: {n}, {threads} before"));
        }
        if mounts() != mounted {
            o.problems.push(format!("mounts: {}, {mounted} before", mounts()));
        }
        let errors: Vec<String> = o.errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let verdict = if o.problems.is_empty() {
            "ok".to_owned()
        } else {
            format!("FAIL: {}", o.problems.join("; "))
        };
        let Row { fault, via, c, route } = self;
        let route_name = if *route == Route::Direct { "direct" } else { "gateway" };
        let _ = writeln!(
            table,
            "{fault:<12} {via:<5} {c:>3} {route_name:<7} {:>8}  {:<34} {:>6.2}s  {verdict}",
            o.answered,
            errors.join(", "),
            o.slowest.as_secs_f64()
        );
        let line = format!(
            "  {fault} {via} c={c} {route_name}: {:.1} s, {}\n",
            started.elapsed().as_secs_f64(),
            if o.problems.is_empty() { "ok".into() } else { o.problems.join("; ") }
        );
        let _ = std::io::stderr().write_all(line.as_bytes());
        if !o.problems.is_empty() {
            failures.push(format!("{fault} {via} c={c} {route_name}: {}", o.problems.join("; ")));
        }
    }
}
