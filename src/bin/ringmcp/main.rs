//! `ringmcp`: the command-line face of the ringmcp host engine.
//!
//! Subcommands: `inspect` and `call` (a server of a config file or a command), `serve` (the
//! reference MCP server on stdio, the peer of the tests and benchmarks), `bench`, `sandbox
//! check|run`, `conformance-client` (for the official suite); the hidden `__sandbox-init` (the
//! sandbox helper) and `__sandbox-probe` (the attack probe).

#![forbid(unsafe_code)]

/// `eprintln!` that never panics: a message for a closed stderr (`ringmcp ... 2>&1 | head`)
/// is lost, and the command still ends with its own exit code.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod bench;
mod call;
mod conformance;
mod egress;
mod gateway;
mod inspect;
mod policy;
mod route;
mod sandbox;
mod serve;
mod size;
mod target;

use std::process::ExitCode;

use std::sync::Arc;

use clap::{Parser, Subcommand};

/// Run and inspect Model Context Protocol servers.
#[derive(Debug, Parser)]
#[command(name = "ringmcp", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Show a server's info, negotiated version, capabilities, tools, resources and prompts.
    Inspect(inspect::Args),
    /// Call one tool and print its result.
    Call(call::Args),
    /// Rank the tools of a config's servers (or of a catalog file) for a request: the few that
    /// fit, why, and the tokens they cost against injecting them all.
    Route(route::Args),
    /// Serve every server of an mcpServers config as one sandboxed, policy-checked MCP server
    /// on stdio (point Claude Desktop, Cursor or VS Code at it).
    Gateway(gateway::Args),
    /// Run the reference MCP server on stdin/stdout.
    Serve(serve::Args),
    /// Measure calls/s, latency, CPU per call and memory against one or more servers.
    Bench(bench::Args),
    /// Verify or show an audit trail.
    Audit(policy::AuditArgs),
    /// Show, diff or accept a server's pinned tool definitions.
    Pins(policy::PinsArgs),
    /// Look for tool poisoning in tool definitions, or (--results) for instructions aimed at
    /// the model and credentials in tool results (exit 1 if any).
    Scan(policy::ScanArgs),
    /// Check which sandbox layers this machine can enforce, or run a command confined.
    Sandbox(sandbox::Args),
    /// Run one scenario of the official MCP conformance suite against URL (scripts/conformance.sh).
    #[command(name = "conformance-client")]
    ConformanceClient(conformance::Args),
    /// Runs the threat list of docs/sandbox.md from inside a sandbox (used by the tests).
    #[command(name = "__sandbox-probe", hide = true)]
    SandboxProbe(sandbox::ProbeArgs),
}

/// A report piped into a reader that stops early (`ringmcp scan FILE | head`) ends the
/// command quietly, as a Unix tool does on SIGPIPE, rather than with a panic: Rust ignores
/// SIGPIPE, so `println!` panics when stdout's reader has gone.
fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to stdout") && message.contains("Broken pipe") {
            // 128 + SIGPIPE, what a shell reports for a tool killed by it.
            std::process::exit(141);
        }
        default(info);
    }));
}

fn main() -> ExitCode {
    // The sandbox helper runs before anything else (single-threaded, empty environment).
    if std::env::args_os().nth(1).is_some_and(|a| a == ringmcp::sandbox::HELPER_ARG) {
        ringmcp::sandbox::helper_main();
    }
    // This binary is its own sandbox helper, whatever it is called.
    if let Ok(me) = std::env::current_exe() {
        ringmcp::sandbox::set_helper_path(me);
    }
    quiet_on_closed_stdout();
    let cli = Cli::parse();
    match &cli.command {
        // The gateway reports its backends' comings and goings (stderr is what desktop
        // clients show).
        Command::Gateway(args) => init_tracing("warn,ringmcp::gateway=info", args.log_file()),
        _ => init_tracing("warn", None),
    }
    let result = match cli.command {
        Command::Inspect(args) => return inspect::run(args),
        Command::Call(args) => return call::run(args),
        Command::Route(args) => return route::run(args),
        Command::Bench(args) => return bench::run(args),
        Command::Audit(args) => return policy::audit(args),
        Command::Pins(args) => return policy::pins(args),
        Command::Scan(args) => return policy::scan(args),
        Command::Sandbox(args) => return sandbox::run(args),
        Command::SandboxProbe(args) => return sandbox::probe(args),
        Command::ConformanceClient(args) => return conformance::run(args),
        Command::Gateway(args) => return gateway::run(args),
        Command::Serve(args) => serve::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            note!("ringmcp: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Logs to stderr, and to `file` when given, filtered by `RUST_LOG` (default: `default`;
/// `RUST_LOG=info` shows every server's stderr lines tagged with its name).
fn init_tracing(default: &str, file: Option<std::path::PathBuf>) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let file = file.and_then(|path| {
        match std::fs::OpenOptions::new().create(true).append(true).open(&path) {
            Ok(f) => Some(Arc::new(f)),
            Err(e) => {
                note!("ringmcp: cannot open the log file {}: {e}", path.display());
                None
            }
        }
    });
    let writer = move || Tee { file: file.clone() };
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

/// stderr, and a file when there is one.
struct Tee {
    file: Option<Arc<std::fs::File>>,
}

impl std::io::Write for Tee {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Some(f) = &self.file {
            let _ = (&**f).write_all(buf);
        }
        // A log line that cannot be written is lost, never an error: tracing-subscriber reports
        // a writer's error with eprintln!, which panics on a closed stderr (`ringmcp ... |
        // head`), killing whichever thread logged (the reactor's, a restart's).
        let _ = std::io::stderr().write_all(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = std::io::stderr().flush();
        Ok(())
    }
}
