//! Which server a client subcommand talks to, the host it runs on, and the exit codes.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use ringmcp::frame::DEFAULT_MAX_FRAME;
use ringmcp::host::{Config, Error, Host, ServerSpec, SpillConfig};

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
}

/// How to pick the server: `--config FILE --server NAME`, or `-- CMD ARGS...`, or neither
/// (the built-in `ringmcp serve`).
#[derive(Debug, clap::Args)]
pub(crate) struct ServerArgs {
    /// An `mcpServers` JSON config file (Claude Desktop / Cursor format).
    #[arg(long, value_name = "FILE", requires = "server")]
    config: Option<PathBuf>,
    /// The server's name in the config file.
    #[arg(long, value_name = "NAME", requires = "config")]
    server: Option<String>,
    /// Per-request timeout in seconds (also bounds the initialize handshake).
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    timeout: f64,
    /// The server command and its arguments, after `--`.
    #[arg(last = true, value_name = "CMD")]
    command: Vec<OsString>,
}

/// A failure with the exit code it maps to.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) code: u8,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Failure { code: exit::USAGE, message: message.into() }
    }

    pub(crate) fn report(self) -> ExitCode {
        eprintln!("ringmcp: {}", self.message);
        ExitCode::from(self.code)
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let code = match e {
            Error::Config(_) | Error::InvalidArgument(_) => exit::USAGE,
            _ => exit::TRANSPORT,
        };
        Failure { code, message: e.to_string() }
    }
}

impl ServerArgs {
    /// The spec of the chosen server.
    pub(crate) fn spec(&self) -> Result<ServerSpec, Failure> {
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
            (Some(file), Some(name), None) => Config::load(file)
                .and_then(|c| c.server(name))
                .map_err(|e| Failure::usage(e.to_string()))?,
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
        Ok(spec)
    }

    /// A host with this invocation's timeout.
    /// Answers longer than the frame limit (16 MiB) are streamed to a spill store rather than
    /// refused, so `call` and `bench` handle results of any size in flat memory.
    pub(crate) fn host(&self) -> Result<Host, Failure> {
        let spill = SpillConfig { line_threshold: DEFAULT_MAX_FRAME, ..SpillConfig::default() };
        Ok(Host::builder()
            .request_timeout(Duration::from_secs_f64(self.timeout))
            .spill(Some(spill))
            .build()?)
    }
}
