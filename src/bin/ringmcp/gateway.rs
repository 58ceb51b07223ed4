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
    let settings =
        gateway::settings_from(config.gateway()).map_err(|e| Failure::usage(e.to_string()))?;
    let servers = ServerArgs::for_config(
        args.config.clone(),
        args.timeout,
        args.spill_threshold,
        args.no_sandbox,
        args.sandbox_profile.clone(),
    );
    let (outbox, inbox) = Gateway::outbox();
    let mut policy = args.policy.settings(&servers)?;
    // Approvals are asked of the user through the upstream client (stdin is the protocol).
    policy.approver =
        Some(Arc::new(GatewayApprover::new(outbox.clone(), args.policy.approve_globs())));
    let host = servers
        .builder_with(Some(policy))?
        .handler(Arc::new(GatewayHandler::new(outbox.clone())))
        .build()?;
    let mut backends = Vec::new();
    for name in config.names() {
        if config.disabled(&name) {
            tracing::info!(server = %name, "disabled in the config: not started");
            continue;
        }
        let spec = servers.with_server(&name).spec()?;
        let filter = gateway::filter_from(&name, config.tools_filter(&name))
            .map_err(|e| Failure::usage(e.to_string()))?;
        backends.push(BackendSpec { spec, filter });
    }
    let count = backends.len();
    let gw = Gateway::new(host, backends, settings, !args.no_prefix, outbox)
        .map_err(|e| Failure::usage(e.to_string()))?;
    tracing::info!("serving {count} server(s) from {} on stdio", args.config.display());
    gateway::serve_stdio(gw, inbox).map_err(|e| Failure {
        code: crate::target::exit::TRANSPORT,
        message: e.to_string(),
        json: None,
    })
}
