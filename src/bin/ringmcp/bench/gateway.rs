//! `--gateway CLIENTS`: the load through one `ringmcp gateway --http` on loopback, with
//! CLIENTS upstream clients (Streamable HTTP sessions) in front of it. Each session runs its
//! own copies of the `--servers` backends (`s0`, `s1`, ...), restarted by the gateway's
//! supervision when they die; the calls are spread over every client and backend. The gateway
//! is the process sampled by the soak (its RSS, fds, threads and children), and it must end
//! the run as it started: once the clients are gone, no backend, fd or thread of theirs left.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ringmcp::host::ServerSpec;
use serde_json::{Map, Value, json};

use super::soak;

/// How long the gateway may take to listen.
const START: Duration = Duration::from_secs(30);
/// How long it may take to exit on SIGTERM.
const STOP: Duration = Duration::from_secs(15);

/// A `ringmcp gateway --http` child, its config and log in a folder of their own.
pub(crate) struct Gateway {
    child: Child,
    pub(crate) url: String,
    dir: PathBuf,
}

impl Gateway {
    /// Starts a gateway of `servers` copies of `spec` (a command: the gateway launches them),
    /// each restarted as the soak's are.
    pub(crate) fn start(spec: &ServerSpec, servers: usize) -> Result<Gateway, String> {
        let launch = spec.launch().ok_or_else(|| {
            "--gateway runs the server as the gateway's backend: give a command (or a config entry with one), not a remote URL".to_owned()
        })?;
        let dir = std::env::temp_dir().join(format!(
            "ringmcp-bench-gateway-{}-{}",
            std::process::id(),
            nanos()
        ));
        std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let mut entry = Map::new();
        entry.insert("command".into(), json!(launch.program.to_string_lossy()));
        let args: Vec<_> = launch.args.iter().map(|a| a.to_string_lossy()).collect();
        entry.insert("args".into(), json!(args));
        let env: Map<String, Value> = (launch.env.iter())
            .map(|(k, v)| (k.to_string_lossy().into_owned(), json!(v.to_string_lossy())))
            .collect();
        entry.insert("env".into(), Value::Object(env));
        let restart = soak::restart_policy();
        entry.insert(
            "restart".into(),
            json!({"initialDelayMs": restart.initial_delay_ms, "maxDelayMs": restart.max_delay_ms}),
        );
        let servers: Map<String, Value> =
            (0..servers).map(|k| (format!("s{k}"), Value::Object(entry.clone()))).collect();
        let config = dir.join("mcp.json");
        let text = json!({ "mcpServers": servers }).to_string();
        std::fs::write(&config, text).map_err(|e| format!("writing {}: {e}", config.display()))?;
        let log = dir.join("gateway.log");
        let stderr =
            std::fs::File::create(&log).map_err(|e| format!("creating {}: {e}", log.display()))?;
        let me = std::env::current_exe().map_err(|e| format!("locating ringmcp itself: {e}"))?;
        let mut command = Command::new(me);
        command.args(["gateway", "--http", "127.0.0.1:0", "--no-auth", "--config"]).arg(&config);
        if !spec.sandboxed() {
            command.arg("--no-sandbox");
        }
        // A bench killed outright must not leave its gateway (and the gateway's backends).
        ringmcp::sandbox::stop_with_parent(&mut command);
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("starting ringmcp gateway: {e}"))?;
        let mut gateway = Gateway { child, url: String::new(), dir };
        gateway.url = gateway.wait_for_url(&log)?;
        Ok(gateway)
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The port it listens on.
    pub(crate) fn port(&self) -> u16 {
        let authority = self.url.trim_start_matches("http://").split('/').next().unwrap_or("");
        authority.rsplit(':').next().and_then(|p| p.parse().ok()).unwrap_or(0)
    }

    /// The URL from the line the gateway prints once it listens.
    fn wait_for_url(&mut self, log: &std::path::Path) -> Result<String, String> {
        let deadline = Instant::now() + START;
        loop {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            if let Some(url) = text
                .lines()
                .filter(|l| l.contains("/mcp"))
                .flat_map(str::split_whitespace)
                .find(|w| w.starts_with("http://"))
            {
                return Ok(url.trim_end_matches(';').to_owned());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!("ringmcp gateway exited at start ({status}):\n{text}"));
            }
            if Instant::now() >= deadline {
                return Err(format!("ringmcp gateway did not listen within {START:?}:\n{text}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The upstream clients' specs: Streamable HTTP sessions to it, not restarted (the
    /// gateway is what stays up).
    pub(crate) fn client_spec(&self, i: usize) -> ServerSpec {
        ServerSpec::http(format!("gateway#{i}"), self.url.clone())
    }

    /// SIGTERM, and its exit: `Err` if it did not exit cleanly within [`STOP`].
    pub(crate) fn stop(mut self) -> Result<(), String> {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let deadline = Instant::now() + STOP;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(()),
                Ok(Some(status)) => return Err(format!("the gateway exited with {status}")),
                Ok(None) if Instant::now() >= deadline => {
                    return Err(format!("the gateway did not exit within {STOP:?} of SIGTERM"));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(format!("waiting for the gateway: {e}")),
            }
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn nanos() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
}

/// The tool-name prefixes of the gateway's backends.
pub(crate) fn prefixes(servers: usize) -> Vec<String> {
    (0..servers).map(|k| format!("s{k}__")).collect()
}
