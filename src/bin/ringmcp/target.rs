//! Which server a client subcommand talks to, the host it runs on, and the exit codes.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use ringmcp::frame::DEFAULT_MAX_FRAME;
use ringmcp::host::{Config, Endpoint, Error, Host, HostBuilder, ServerSpec, SpillConfig};
use ringmcp::protocol::Era;
use ringmcp::sandbox::Profile;
use ringmcp::transport::oauth::Authorizer;

/// Exit codes of the client subcommands.
pub(crate) mod exit {
    /// Success.
    pub(crate) const OK: u8 = 0;
    /// The tool ran and returned `isError: true`.
    pub(crate) const TOOL_ERROR: u8 = 1;
    /// Bad usage or configuration.
    pub(crate) const USAGE: u8 = 2;
    /// The server could not be started or broke the protocol, or a request failed.
    pub(crate) const TRANSPORT: u8 = 3;
    /// The host's policy refused the call (it was not sent).
    pub(crate) const POLICY: u8 = 4;
}

/// How to pick the server: `--config FILE --server NAME`, or `-- CMD ARGS...`, or neither
/// (the built-in `ringmcp serve`).
#[derive(Debug, clap::Args)]
pub(crate) struct ServerArgs {
    /// An `mcpServers` JSON config file (Claude Desktop / Cursor format).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The server's name in the config file.
    #[arg(long, value_name = "NAME", requires = "config")]
    server: Option<String>,
    /// Per-request timeout in seconds (also bounds the initialize handshake).
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    timeout: f64,
    /// Answers longer than this (B, KB, MB, KiB, MiB, ...) are streamed to the spill store
    /// and their large strings handed over as ringmcp-spill:// links (default 4 MiB).
    #[arg(long, value_name = "BYTES", value_parser = crate::size::parse_size)]
    spill_threshold: Option<u64>,
    /// Deliver every answer inline, up to the 16 MiB frame limit, instead of spilling.
    #[arg(long, conflicts_with = "spill_threshold")]
    no_spill: bool,
    /// Send every request through the reactor thread: by default a request to an idle server
    /// is written to its stdin on the calling thread (docs/host.md, "The direct write").
    #[arg(long)]
    no_direct_write: bool,
    /// Run the server as a plain child process (servers are sandboxed by default: namespaces,
    /// read-only root, cgroup limits, seccomp, Landlock).
    #[arg(long)]
    no_sandbox: bool,
    /// The sandbox profile (default: the config's, else standard).
    #[arg(long, value_name = "PROFILE", value_parser = ["standard", "strict", "off"], conflicts_with = "no_sandbox")]
    sandbox_profile: Option<String>,
    /// Let the sandboxed server reach this host (repeatable), on top of its config's
    /// `sandbox.network.allow`: `api.github.com`, `*.example.com`, `registry.npmjs.org:443`,
    /// `127.0.0.1:5432`, `@npm`, `@pypi` (docs/egress.md).
    #[arg(long = "allow-host", value_name = "HOST")]
    allow_host: Vec<String>,
    /// How the MCP revision is found: auto (probe with the 2026-07-28 server/discover, fall
    /// back to initialize), legacy (initialize only), modern (2026-07-28 only).
    #[arg(long, value_enum, default_value_t = EraArg::Auto)]
    era: EraArg,
    /// The server command and its arguments, after `--`.
    #[arg(last = true, value_name = "CMD")]
    command: Vec<OsString>,
}

/// The OAuth step that needs a person: print the authorization URL, read back the URL the
/// browser was sent to.
fn ask_the_user(url: &str) -> Result<String, String> {
    note!("Authorize ringmcp with the MCP server's authorization server: open\n\n  {url}\n");
    note!(
        "then paste the full URL your browser was redirected to (it fails to load; that is fine):"
    );
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).map_err(|e| format!("reading stdin: {e}"))?;
    let line = line.trim();
    if line.is_empty() { Err("no redirect URL given".into()) } else { Ok(line.to_owned()) }
}

/// `--era`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum EraArg {
    Auto,
    Legacy,
    Modern,
}

/// A failure with the exit code it maps to.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) code: u8,
    pub(crate) message: String,
    /// The error as JSON, for `--json` output (a policy refusal: its JSON-RPC error).
    pub(crate) json: Option<serde_json::Value>,
}

impl Failure {
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Failure { code: exit::USAGE, message: message.into(), json: None }
    }

    pub(crate) fn report(self) -> ExitCode {
        note!("ringmcp: {}", self.message);
        ExitCode::from(self.code)
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let code = match e {
            Error::Config(_) | Error::InvalidArgument(_) => exit::USAGE,
            Error::Policy { .. } => exit::POLICY,
            _ => exit::TRANSPORT,
        };
        let json = matches!(e, Error::Policy { .. })
            .then(|| serde_json::json!({ "error": ringmcp::jsonrpc::ErrorObject::from(&e) }));
        Failure { code, message: e.to_string(), json }
    }
}

impl ServerArgs {
    /// The server names of the config, when `--config` is given without `--server` (the
    /// whole config is meant).
    pub(crate) fn whole_config(&self) -> Option<&std::path::Path> {
        self.config.as_deref().filter(|_| self.server.is_none() && self.command.is_empty())
    }

    /// This invocation with `--server name` chosen from its config.
    pub(crate) fn with_server(&self, name: &str) -> ServerArgs {
        ServerArgs {
            config: self.config.clone(),
            server: Some(name.to_owned()),
            timeout: self.timeout,
            spill_threshold: self.spill_threshold,
            no_spill: self.no_spill,
            no_direct_write: self.no_direct_write,
            no_sandbox: self.no_sandbox,
            sandbox_profile: self.sandbox_profile.clone(),
            allow_host: self.allow_host.clone(),
            era: self.era,
            command: Vec::new(),
        }
    }

    /// The config file, when the server comes from one.
    pub(crate) fn config_file(&self) -> Option<&std::path::Path> {
        self.config.as_deref()
    }

    /// The spec of the chosen server.
    pub(crate) fn spec(&self) -> Result<ServerSpec, Failure> {
        self.spec_in(None)
    }

    /// [`spec`](Self::spec), from `loaded`, the config file already read (a gateway of many
    /// servers reads it once, not once a server).
    pub(crate) fn spec_in(&self, loaded: Option<&Config>) -> Result<ServerSpec, Failure> {
        if !(self.timeout.is_finite() && self.timeout > 0.0) {
            return Err(Failure::usage(format!(
                "--timeout must be a positive number of seconds, got {}",
                self.timeout
            )));
        }
        let spec = match (&self.config, &self.server, self.command.split_first()) {
            (Some(_), _, Some(_)) => {
                return Err(Failure::usage("give either --config/--server or -- CMD, not both"));
            }
            (Some(file), Some(name), None) => match loaded {
                Some(config) => config.server(name),
                None => Config::load(file).and_then(|c| c.server(name)),
            }
            .map_err(|e| Failure::usage(e.to_string()))?,
            (Some(file), None, None) => {
                let names = Config::load(file).map(|c| c.names()).unwrap_or_default();
                return Err(Failure::usage(format!(
                    "--config needs --server NAME (the config has: {})",
                    names.join(", ")
                )));
            }
            (_, _, Some((program, args))) => {
                let name = PathBuf::from(program).file_name().map_or_else(
                    || program.to_string_lossy().into_owned(),
                    |n| n.to_string_lossy().into_owned(),
                );
                ServerSpec::new(name, program).args(args)
            }
            _ => {
                let me = std::env::current_exe()
                    .map_err(|e| Failure::usage(format!("locating ringmcp itself: {e}")))?;
                ServerSpec::new("ringmcp-serve", me).arg("serve")
            }
        };
        let mut spec = spec;
        // OAuth from the config: on a terminal, the user visits the authorization URL.
        if let Endpoint::Http(remote) = &mut spec.endpoint
            && let Some(oauth) = &mut remote.oauth
            && std::io::IsTerminal::is_terminal(&std::io::stdin())
        {
            oauth.authorizer = Authorizer::Callback(std::sync::Arc::new(ask_the_user));
        }
        let Some(launch) = spec.launch() else {
            return Ok(spec); // an HTTP server runs elsewhere: nothing to confine
        };
        let mut sandbox = launch.sandbox.clone().unwrap_or_default();
        if let Some(p) = &self.sandbox_profile {
            sandbox.profile = match p.as_str() {
                "strict" => Profile::Strict,
                "off" => Profile::Off,
                _ => Profile::Standard,
            };
        }
        if !self.allow_host.is_empty() {
            use ringmcp::policy::egress::{Network, NetworkPolicy};
            let extra = NetworkPolicy::new(&self.allow_host, [] as [&str; 0])
                .map_err(|e| Failure::usage(format!("--allow-host: {e}")))?;
            sandbox.network = match std::mem::take(&mut sandbox.network) {
                Network::Off => Network::Proxied(extra),
                Network::Proxied(mut p) => {
                    p.allow.extend(extra.allow);
                    Network::Proxied(p)
                }
            };
        }
        Ok(spec.sandbox((!self.no_sandbox).then_some(sandbox)))
    }

    /// A host with this invocation's timeout and spill settings. Answers past the spill
    /// threshold are streamed to a spill store rather than buffered, so `call` and `bench`
    /// handle results of any size in flat memory.
    pub(crate) fn host(&self) -> Result<Host, Failure> {
        self.host_with(None)
    }

    /// [`host`](Self::host), with the policy gate's settings when given.
    pub(crate) fn host_with(
        &self,
        policy: Option<ringmcp::host::PolicySettings>,
    ) -> Result<Host, Failure> {
        Ok(self.builder_with(policy)?.build()?)
    }

    /// The builder [`host_with`](Self::host_with) builds, for callers that add to it.
    pub(crate) fn builder_with(
        &self,
        policy: Option<ringmcp::host::PolicySettings>,
    ) -> Result<HostBuilder, Failure> {
        let spill = match (self.no_spill, self.spill_threshold) {
            (true, _) => None,
            (false, threshold) => {
                let mut config = SpillConfig::default();
                if let Some(t) = threshold {
                    config.line_threshold = usize::try_from(t).map_err(|_| {
                        Failure::usage(format!("--spill-threshold {t} does not fit in memory"))
                    })?;
                }
                Some(config)
            }
        };
        let era = match self.era {
            EraArg::Auto => Era::Auto,
            EraArg::Legacy => Era::Legacy,
            EraArg::Modern => Era::Modern,
        };
        let mut builder = Host::builder()
            .era(era)
            .request_timeout(Duration::from_secs_f64(self.timeout))
            .max_frame(DEFAULT_MAX_FRAME)
            .direct_write(!self.no_direct_write)
            .spill(spill);
        if let Some(policy) = policy {
            builder = builder.policy(policy);
        }
        Ok(builder)
    }

    /// This invocation, its servers' requests written by their callers when idle or not.
    pub(crate) fn direct_write(mut self, on: bool) -> ServerArgs {
        self.no_direct_write = !on;
        self
    }

    /// The settings `ringmcp gateway` starts every backend with: the config file, its options
    /// for each server.
    pub(crate) fn for_config(
        config: PathBuf,
        timeout: f64,
        spill_threshold: Option<u64>,
        no_sandbox: bool,
        sandbox_profile: Option<String>,
    ) -> ServerArgs {
        ServerArgs {
            config: Some(config),
            server: None,
            timeout,
            spill_threshold,
            no_spill: false,
            no_direct_write: false,
            no_sandbox,
            sandbox_profile,
            allow_host: Vec::new(),
            era: EraArg::Auto,
            command: Vec::new(),
        }
    }
}
