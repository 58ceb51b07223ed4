//! `ringmcp sandbox check|run`, and the hidden probe that runs the attack list from inside.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use ringmcp::sandbox::{self, Launch, Profile, SandboxConfig, plan::BindSpec};

use crate::target::{Failure, exit};

/// Show what this machine can enforce, or run a command confined.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, clap::Subcommand)]
enum Cmd {
    /// Which sandbox layers this machine can enforce, and why not.
    Check {
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
        /// Also show how each server of this `mcpServers` config is sandboxed: its profile
        /// and its network (off, any public host, or its allow and deny lists).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Run any command in the sandbox, with its stdio connected to this terminal (for finding
    /// out what a server needs).
    Run(Box<RunArgs>),
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// standard (default) or strict.
    #[arg(long, default_value = "standard", value_parser = ["standard", "strict"])]
    profile: String,
    /// memory.max (e.g. 256M).
    #[arg(long, value_name = "BYTES", value_parser = crate::size::parse_size)]
    memory: Option<u64>,
    /// CPU quota in cores (e.g. 0.5).
    #[arg(long, value_name = "CORES")]
    cpus: Option<f64>,
    /// pids.max.
    #[arg(long, value_name = "N")]
    pids: Option<u64>,
    /// A folder bound at the same path and used as the working directory.
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Make the workspace writable.
    #[arg(long, requires = "workspace")]
    writable: bool,
    /// More read-only binds.
    #[arg(long, value_name = "PATH")]
    bind: Vec<PathBuf>,
    /// Let it reach any public host on ports 80 and 443, through the host's egress proxy
    /// (private, loopback, link-local and metadata addresses stay refused).
    #[arg(long)]
    network: bool,
    /// Let it reach this host (repeatable): `api.github.com`, `*.example.com`,
    /// `registry.npmjs.org:443`, `127.0.0.1:5432`, `10.0.0.0/8`, `@npm`, `@pypi`
    /// (docs/egress.md). Implies network through the egress proxy.
    #[arg(long = "allow-host", value_name = "HOST")]
    allow_host: Vec<String>,
    /// Refuse this host even when an allow entry matches (repeatable).
    #[arg(long = "deny-host", value_name = "HOST")]
    deny_host: Vec<String>,
    /// Print the names the command looked up and the connections it opened, with the
    /// verdict on each, when it ends (to write an allowlist from a trial run).
    #[arg(long)]
    network_log: bool,
    /// Print the sandbox's cgroup counters when the command ends, as one JSON line on stderr
    /// (`ringmcp: sandbox stats {...}`: OOM kills, pids.max hits, CPU periods throttled and
    /// time throttled, peak memory).
    #[arg(long)]
    stats: bool,
    /// Host environment variables to pass through, by name.
    #[arg(long, value_name = "NAME")]
    env: Vec<String>,
    /// RLIMIT_NOFILE, soft and hard (default 4096).
    #[arg(long, value_name = "N")]
    nofile: Option<u64>,
    /// The command, after `--`.
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<OsString>,
}

pub(crate) fn run(args: Args) -> ExitCode {
    match args.command {
        Cmd::Check { json, config } => check(json, config.as_deref()),
        Cmd::Run(run) => match run_confined(*run) {
            Ok(code) => code,
            Err(f) => f.report(),
        },
    }
}

fn check(json: bool, config: Option<&std::path::Path>) -> ExitCode {
    let servers = match config.map(servers_of) {
        Some(Err(f)) => return f.report(),
        Some(Ok(s)) => s,
        None => Vec::new(),
    };
    let report = sandbox::check::report();
    if json {
        let mut value = serde_json::to_value(&report).expect("report serialises");
        if config.is_some() {
            value["servers"] = servers
                .iter()
                .map(|(name, profile, network)| {
                    serde_json::json!({"name": name, "profile": profile, "network": network})
                })
                .collect();
        }
        println!("{}", serde_json::to_string_pretty(&value).expect("report serialises"));
    } else {
        for layer in &report.layers {
            println!("{:<24} {:<12} {}", layer.name, layer.status, layer.detail);
        }
        if !servers.is_empty() {
            println!();
        }
        for (name, profile, network) in &servers {
            println!("server {name:<17} {profile:<12} network: {network}");
        }
    }
    ExitCode::from(if report.works { exit::OK } else { exit::TRANSPORT })
}

/// Each server of an `mcpServers` config: its name, sandbox profile and network, in words.
fn servers_of(file: &std::path::Path) -> Result<Vec<(String, String, String)>, Failure> {
    let config = ringmcp::host::Config::load(file).map_err(|e| Failure::usage(e.to_string()))?;
    let mut out = Vec::new();
    for name in config.names() {
        let spec = config.server(&name).map_err(|e| Failure::usage(e.to_string()))?;
        let (profile, network) = sandboxing(&spec);
        out.push((name, profile, network));
    }
    Ok(out)
}

/// A server's sandbox profile and network, in words (`sandbox check --config`, `inspect`).
pub(crate) fn sandboxing(spec: &ringmcp::host::ServerSpec) -> (String, String) {
    match spec.launch() {
        None => ("remote".into(), "remote (HTTP): not sandboxed here".into()),
        Some(l) => match &l.sandbox {
            Some(s) if s.profile != Profile::Off => {
                (format!("{:?}", s.profile).to_lowercase(), s.network.describe())
            }
            _ => ("off".into(), "unrestricted (not sandboxed)".into()),
        },
    }
}

/// The `network` setting the CLI flags ask for: `--allow-host`/`--deny-host` lists, or
/// `--network` (any public host), or none.
fn network_from_flags(
    any: bool,
    allow: &[String],
    deny: &[String],
) -> Result<ringmcp::policy::egress::Network, Failure> {
    use ringmcp::policy::egress::{Network, NetworkPolicy};
    let usage = |message: String| Failure { code: exit::USAGE, message, json: None };
    if allow.is_empty() && !deny.is_empty() && !any {
        return Err(usage("--deny-host needs --network or --allow-host".into()));
    }
    let mut allow = allow.to_vec();
    if any {
        allow.push("*".into());
    }
    if allow.is_empty() {
        return Ok(Network::Off);
    }
    NetworkPolicy::new(&allow, deny).map(Network::Proxied).map_err(usage)
}

fn run_confined(args: RunArgs) -> Result<ExitCode, Failure> {
    let (program, rest) = args.command.split_first().expect("clap requires a command");
    let network = network_from_flags(args.network, &args.allow_host, &args.deny_host)?;
    let config = SandboxConfig {
        profile: if args.profile == "strict" { Profile::Strict } else { Profile::Standard },
        memory: args.memory,
        cpus: args.cpus.map(sandbox::plan::Cores),
        pids: args.pids,
        workspace: args.workspace.clone(),
        workspace_writable: args.writable,
        binds: args.bind.into_iter().map(BindSpec::Path).collect(),
        env: args.env,
        network: network.clone(),
        tmp_size: None,
        nofile: args.nofile,
    };
    let launch = Launch {
        program: program.clone(),
        args: rest.to_vec(),
        env: Vec::new(),
        cwd: None,
        sandbox: Some(config),
    };
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let proxy = match network.is_on() {
        true => Some(crate::egress::start(log.clone()).map_err(|e| Failure {
            code: exit::TRANSPORT,
            message: format!("the egress proxy could not start ({e}); the command asked for network, so it was not started"),
            json: None,
        })?),
        false => None,
    };
    let mut spawned = sandbox::spawn(&launch).map_err(|e| Failure {
        code: exit::TRANSPORT,
        message: e.to_string(),
        json: None,
    })?;
    if let Some(guard) = &spawned.sandbox {
        note!("ringmcp: sandbox limits: {}\nnofile: {}", guard.limits, guard.nofile);
        note!("ringmcp: network: {}", network.describe());
    }
    if let (Some(proxy), Some(channel)) = (&proxy, spawned.egress.take()) {
        proxy.attach("sandbox", &network, channel).map_err(|e| Failure {
            code: exit::TRANSPORT,
            message: format!("attaching the sandbox to the egress proxy: {e}"),
            json: None,
        })?;
    }
    let mut stdin = std::fs::File::from(spawned.stdin);
    let stdout = std::fs::File::from(spawned.stdout);
    let stderr = std::fs::File::from(spawned.stderr);
    std::thread::spawn(move || {
        let mut buf = [0u8; 65536];
        let mut input = std::io::stdin();
        while let Ok(n) = input.read(&mut buf) {
            if n == 0 || stdin.write_all(&buf[..n]).is_err() {
                break;
            }
        }
    });
    let pump = |mut from: std::fs::File, to: fn() -> Box<dyn Write>| {
        std::thread::spawn(move || {
            let mut out = to();
            let mut buf = [0u8; 65536];
            while let Ok(n) = from.read(&mut buf) {
                if n == 0 || out.write_all(&buf[..n]).is_err() {
                    break;
                }
                let _ = out.flush();
            }
        })
    };
    let a = pump(stdout, || Box::new(std::io::stdout()));
    let b = pump(stderr, || Box::new(std::io::stderr()));
    let status = spawned.child.wait().map_err(|e| Failure {
        code: exit::TRANSPORT,
        message: e.to_string(),
        json: None,
    })?;
    let _ = a.join();
    let _ = b.join();
    let stats = spawned.sandbox.as_ref().and_then(|guard| guard.stats());
    if stats.as_ref().is_some_and(|s| s.oom_kills.unwrap_or(0) > 0) {
        note!("ringmcp: the command was OOM-killed at its memory limit");
    }
    if args.stats {
        let s = stats.unwrap_or_default();
        let line = serde_json::json!({
            "oomKills": s.oom_kills, "pidsMaxHits": s.pids_max_hits,
            "nrThrottled": s.nr_throttled, "throttledUsec": s.throttled_usec,
            "memoryPeakBytes": s.memory_peak_bytes,
        });
        note!("ringmcp: sandbox stats {line}");
    }
    drop(spawned.sandbox.take());
    drop(proxy);
    if args.network_log {
        crate::egress::print_log(&log.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    }
    Ok(ExitCode::from(status.code().map_or(128, |c| c as u8)))
}

/// Hidden: runs the threat list of docs/sandbox.md from inside a sandbox and prints the results as JSON.
#[derive(Debug, clap::Args)]
pub(crate) struct ProbeArgs {
    #[arg(long)]
    host_pid: Option<i32>,
    #[arg(long)]
    port: Option<u16>,
    #[arg(long)]
    abstract_name: Option<String>,
    #[arg(long)]
    shm_key: Option<i32>,
    #[arg(long)]
    secret_env: Option<String>,
    #[arg(long)]
    workspace: Option<String>,
    #[arg(long)]
    nofile: Option<u64>,
    /// Only the attempts to run code written at run time (for `sandbox check`).
    #[arg(long)]
    code_written_only: bool,
    /// The baseline run, outside any sandbox: attempts that would harm the host are skipped.
    #[arg(long)]
    baseline: bool,
    /// The sandbox has network: expect the egress capture's answers.
    #[arg(long)]
    network: bool,
    /// Only the network attempts, with network on (for `sandbox check`).
    #[arg(long)]
    network_only: bool,
}

pub(crate) fn probe(args: ProbeArgs) -> ExitCode {
    let probe_args = sandbox::attack::ProbeArgs {
        host_pid: args.host_pid,
        host_port: args.port,
        abstract_name: args.abstract_name,
        shm_key: args.shm_key,
        secret_env: args.secret_env,
        workspace: args.workspace,
        nofile: args.nofile,
        baseline: args.baseline,
        network: args.network,
    };
    let results = if args.code_written_only {
        sandbox::attack::run_code_written_only(&probe_args)
    } else if args.network_only {
        sandbox::attack::run_network_only(&probe_args)
    } else {
        sandbox::attack::run(&probe_args)
    };
    println!("{}", serde_json::to_string(&results).expect("results serialise"));
    ExitCode::SUCCESS
}
