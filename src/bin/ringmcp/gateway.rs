//! `ringmcp gateway`: every server of an `mcpServers` config behind one MCP server on stdio,
//! sandboxed and policy-checked (docs/gateway.md).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use ringmcp::gateway::{self, BackendSpec, Gateway, GatewayApprover, GatewayHandler};
use ringmcp::host::Config;

use crate::target::{Failure, ServerArgs};

/// Options of `ringmcp gateway`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The `mcpServers` JSON config (Claude Desktop / Cursor / VS Code format) whose servers
    /// the gateway runs.
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// Serve Streamable HTTP on this address (`127.0.0.1:8080`, `:8080` or `8080` for
    /// loopback) at /mcp instead of stdio.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// The bearer token HTTP clients must send (default: a random one, printed at start).
    #[arg(long, value_name = "TOKEN", requires = "http", conflicts_with_all = ["token_file", "no_auth"])]
    token: Option<String>,
    /// Read the bearer token from this file (its first line).
    #[arg(long, value_name = "FILE", requires = "http", conflicts_with = "no_auth")]
    token_file: Option<PathBuf>,
    /// No bearer token (local testing; only on a loopback address).
    #[arg(long, requires = "http")]
    no_auth: bool,
    /// Serve only `ringmcp__find_tools` (and the gateway's status): tools are found by what the
    /// model wants to do and join the list as found (config: `gateway.toolSearch`).
    #[arg(long)]
    tool_search: bool,
    /// Cut `tools/list` to this many tokens (o200k_base) of tool definitions, in config order,
    /// with `ringmcp__find_tools` for the rest (config: `gateway.toolBudget`).
    #[arg(long, value_name = "TOKENS")]
    tool_budget: Option<usize>,
    /// The tool router's embedder in those modes: a static table file, or a model folder for
    /// the full encoder, e.g. .deps/embed/all-MiniLM-L6-v2 or .deps/embed/all-mpnet-base-v2
    /// (config: `gateway.embeddings`; default $RINGMCP_EMBED_TABLE, else the static table
    /// scripts/deps.sh builds).
    #[arg(long, value_name = "FILE|DIR")]
    embeddings: Option<PathBuf>,
    /// Keep tool and prompt names unchanged (one backend only): no `server__` prefix.
    #[arg(long)]
    no_prefix: bool,
    /// Per-request timeout towards the backends, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    timeout: f64,
    /// Backend answers longer than this (B, KB, MB, KiB, MiB, ...) are kept by the gateway
    /// and handed upstream as resource_links, read back with resources/read (default 4 MiB).
    #[arg(long, value_name = "BYTES", value_parser = crate::size::parse_size)]
    spill_threshold: Option<u64>,
    /// Run the backends as plain child processes (they are sandboxed by default).
    #[arg(long)]
    no_sandbox: bool,
    /// Let the thread that sends a request to an idle backend write it to the backend's stdin
    /// itself (docs/host.md, "The direct write"). Off by default here: measured slower at c=1
    /// through the gateway on a 2-vCPU VM (PERFORMANCE.md, "The direct write").
    #[arg(long)]
    direct_write: bool,
    /// On stdio, run the backends' reactor on a thread of its own instead of the session's
    /// thread (docs/host.md, "A reactor hosted on the caller's thread"): the way the gateway
    /// ran before; each answer then crosses from one thread to the other. Over HTTP it always
    /// has its own thread.
    #[arg(long)]
    reactor_thread: bool,
    /// The sandbox profile of every backend (default: each entry's, else standard).
    #[arg(long, value_name = "PROFILE", value_parser = ["standard", "strict", "off"], conflicts_with = "no_sandbox")]
    sandbox_profile: Option<String>,
    /// Also write the gateway's log to this file (the config's "gateway.logFile" otherwise).
    #[arg(long, value_name = "FILE")]
    log_file: Option<PathBuf>,
    #[command(flatten)]
    policy: crate::policy::PolicyArgs,
}

impl Args {
    /// Where the log goes besides stderr: the flag, else the config's `gateway.logFile`.
    pub(crate) fn log_file(&self) -> Option<PathBuf> {
        self.log_file.clone().or_else(|| {
            let config = Config::load(&self.config).ok()?;
            gateway::settings_from(config.gateway()).ok()?.log_file
        })
    }
}

pub(crate) fn run(args: Args) -> ExitCode {
    match start(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => f.report(),
    }
}

fn start(args: &Args) -> Result<(), Failure> {
    let config = Config::load(&args.config).map_err(|e| Failure::usage(e.to_string()))?;
    let mut settings =
        gateway::settings_from(config.gateway()).map_err(|e| Failure::usage(e.to_string()))?;
    settings.tool_search |= args.tool_search;
    if args.tool_budget.is_some() {
        settings.tool_budget = args.tool_budget;
    }
    if args.embeddings.is_some() {
        settings.embeddings = args.embeddings.clone();
    }
    if let Some(path) = &settings.embeddings
        && settings.routes_tools()
    {
        // A wrong path is refused at start, not found out at the first search.
        gateway::preload_embedder(path)
            .map_err(|e| Failure::usage(format!("--embeddings / gateway.embeddings: {e}")))?;
    }
    let servers = ServerArgs::for_config(
        args.config.clone(),
        args.timeout,
        args.spill_threshold,
        args.no_sandbox,
        args.sandbox_profile.clone(),
    )
    .direct_write(args.direct_write);
    let mut backends = Vec::new();
    for name in config.names() {
        if config.disabled(&name) {
            tracing::info!(server = %name, "disabled in the config: not started");
            continue;
        }
        let spec = servers.with_server(&name).spec_in(Some(&config))?;
        let filter = gateway::filter_from(&name, config.tools_filter(&name))
            .map_err(|e| Failure::usage(e.to_string()))?;
        backends.push(BackendSpec { spec, filter });
    }
    // One audit trail and one pin store for every session.
    let mut policy = args.policy.settings(&servers)?;
    // A backend's sampling request is forwarded to the upstream client, whose own person in
    // the loop answers it (MCP asks clients to let the user review and deny it): the gateway
    // does not ask a second time unless the config says so (docs/gateway.md, "Forwarding").
    policy.global.sampling.get_or_insert(ringmcp::policy::Action::Allow);
    let globs = args.policy.approve_globs();
    let prefix = !args.no_prefix;
    let count = backends.len();
    // `hosted`: the host's reactor runs on the calling thread, beside the session.
    let make = move |hosted: bool| -> Result<(Gateway, gateway::Inbox), Failure> {
        let (outbox, inbox) = Gateway::outbox();
        let mut policy = policy.clone();
        // Approvals are asked of the user through the upstream client.
        policy.approver = Some(Arc::new(GatewayApprover::new(outbox.clone(), globs.clone())));
        let builder = servers
            .builder_with(Some(policy))?
            .handler(Arc::new(GatewayHandler::new(outbox.clone())));
        let (host, reactor) = if hosted {
            let (host, reactor) = builder.build_hosted()?;
            (host, Some(reactor))
        } else {
            (builder.build()?, None)
        };
        let gw = Gateway::new(host, backends.clone(), settings.clone(), prefix, outbox)
            .map_err(|e| Failure::usage(e.to_string()))?;
        let gw = match reactor {
            Some(reactor) => gw.with_reactor(reactor),
            None => gw,
        };
        Ok((gw, inbox))
    };
    let io = |e: gateway::GatewayError| Failure {
        code: crate::target::exit::TRANSPORT,
        message: e.to_string(),
        json: None,
    };
    let Some(addr) = &args.http else {
        let (gw, inbox) = make(!args.reactor_thread)?;
        tracing::info!("serving {count} server(s) from {} on stdio", args.config.display());
        return gateway::serve_stdio(gw, inbox).map_err(io);
    };
    let addr = parse_addr(addr)?;
    let token = token(args, &addr)?;
    // The first gateway is made now, so that a config that cannot work fails at start.
    drop(make(false)?);
    let factory: Box<gateway::Factory> =
        Box::new(move || make(false).map_err(|f| gateway::GatewayError::Settings(f.message)));
    let shown = token.clone();
    let options = gateway::HttpOptions::new(addr, token);
    let config = args.config.display().to_string();
    gateway::serve_http(factory, options, move |bound| {
        let auth = match &shown {
            Some(t) => format!("send Authorization: Bearer {t}"),
            None => "no authentication (--no-auth)".to_owned(),
        };
        note!(
            "ringmcp gateway: serving {count} server(s) from {config} at http://{bound}/mcp; {auth}"
        );
    })
    .map_err(io)
}

/// `--http`'s address: `HOST:PORT`, `:PORT` or `PORT` (loopback).
fn parse_addr(addr: &str) -> Result<std::net::SocketAddr, Failure> {
    let full = if addr.bytes().all(|b| b.is_ascii_digit()) {
        format!("127.0.0.1:{addr}")
    } else if let Some(port) = addr.strip_prefix(':') {
        format!("127.0.0.1:{port}")
    } else {
        addr.to_owned()
    };
    full.parse().map_err(|e| {
        Failure::usage(format!(
            "--http {addr:?} is not an address (127.0.0.1:8080, :8080 or 8080): {e}"
        ))
    })
}

/// The bearer token: `--token`, `--token-file`, none with `--no-auth` (loopback only), or a
/// new random one.
fn token(args: &Args, addr: &std::net::SocketAddr) -> Result<Option<String>, Failure> {
    if args.no_auth {
        if !addr.ip().is_loopback() {
            return Err(Failure::usage(format!(
                "--no-auth is for local testing: {addr} is not a loopback address; give a --token or --token-file"
            )));
        }
        return Ok(None);
    }
    if let Some(t) = &args.token {
        return Ok(Some(t.clone()));
    }
    if let Some(f) = &args.token_file {
        let text = std::fs::read_to_string(f)
            .map_err(|e| Failure::usage(format!("reading --token-file {}: {e}", f.display())))?;
        let t = text.lines().next().unwrap_or_default().trim().to_owned();
        if t.is_empty() {
            return Err(Failure::usage(format!("--token-file {} is empty", f.display())));
        }
        return Ok(Some(t));
    }
    let mut bytes = [0u8; 24];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
        .map_err(|_| Failure::usage("no random source for a token: give --token"))?;
    Ok(Some(bytes.iter().map(|b| format!("{b:02x}")).collect()))
}
