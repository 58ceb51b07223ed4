//! Spawning one server process with a scrubbed environment in its own process group.

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use super::cgroup::{self, LimitReport, SandboxCgroup};
use super::plan::SandboxConfig;
use super::sys;

/// Environment variables passed through from the host by default (everything else is
/// dropped; the server's own `env` from its config is added on top).
pub const ENV_ALLOWLIST: &[&str] =
    &["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TZ"];

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct Launch {
    /// The program (a path, or a name looked up in the child's `PATH`).
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Extra environment, applied after the allowlist.
    pub env: Vec<(OsString, OsString)>,
    /// Working directory, if not the host's.
    pub cwd: Option<PathBuf>,
    /// The sandbox to run it in (`None`, or the `off` profile: a plain child process).
    pub sandbox: Option<SandboxConfig>,
}

/// What the sandbox of one server enforces, and the cgroup that holds it (removed on drop,
/// after killing whatever is left in it).
#[derive(Debug)]
pub struct SandboxGuard {
    /// How each limit is enforced.
    pub limits: LimitReport,
    /// The cgroup, when one could be made.
    pub cgroup: Option<SandboxCgroup>,
    /// The server's `RLIMIT_NOFILE` (soft = hard).
    pub nofile: u64,
}

impl SandboxGuard {
    /// OOM kills and pid-limit hits so far, from the cgroup's counters.
    pub fn stats(&self) -> Option<cgroup::CgroupStats> {
        self.cgroup.as_ref().map(SandboxCgroup::stats)
    }
}

/// A running server: its process and the host's ends of its pipes.
#[derive(Debug)]
pub struct Spawned {
    /// The process (kept for reaping).
    pub child: Child,
    /// Readable when the process exits.
    pub pidfd: OwnedFd,
    /// The server's stdin (we write).
    pub stdin: OwnedFd,
    /// The server's stdout (we read).
    pub stdout: OwnedFd,
    /// The server's stderr (we read).
    pub stderr: OwnedFd,
    /// What its sandbox enforces, and its cgroup (killed and removed when dropped).
    pub sandbox: Option<SandboxGuard>,
    /// The host's end of the sandbox's egress channel, when the server has network
    /// ([`capture`](super::capture)): hand it to an egress proxy. Dropped, every connection
    /// the server opens is reset.
    pub egress: Option<OwnedFd>,
}

/// A setup step that failed; each names the step and carries the OS error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// The program could not be started (not found, not executable, bad cwd, ...).
    #[error("starting {program:?}: {source}{}", super::sys::fd_advice(source))]
    Exec {
        /// The program.
        program: OsString,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The sandbox could not be planned: the program, a bind, the workspace or the working
    /// directory (each names the path and why).
    #[error(transparent)]
    Plan(#[from] super::plan::PlanError),
    /// The ringmcp binary that runs as the sandbox helper was not found.
    #[error("sandbox: the ringmcp helper binary was not found (set RINGMCP_SANDBOX_HELPER)")]
    HelperMissing,
    /// The seccomp filter could not be built.
    #[error("sandbox: seccomp: {0}")]
    Seccomp(#[source] super::seccomp::SeccompError),
    /// The strict profile refuses to start without enforced memory and pids limits.
    #[error(
        "sandbox: the strict profile needs enforced memory and pids limits: memory {memory:?}, pids {pids:?}"
    )]
    LimitsNotEnforced {
        /// How the memory limit stands.
        memory: super::cgroup::LimitStatus,
        /// How the pids limit stands.
        pids: super::cgroup::LimitStatus,
    },
    /// A host-side step of starting the sandbox failed (a pipe, placing the helper in its
    /// cgroup, sending the plan, waiting for the server's exec).
    #[error("sandbox: {step}: {source}{}", super::sys::fd_advice(source))]
    Host {
        /// The step.
        step: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The helper could not be placed in the sandbox's cgroup.
    #[error("sandbox: placing the helper in its cgroup: {0}")]
    Cgroup(#[source] super::cgroup::CgroupError),
    /// A setup step inside the sandbox failed, as the helper reported it over its status
    /// pipe (the step, and the errno as an OS error).
    #[error("sandbox setup failed: {step}: {source}")]
    Setup {
        /// The step, e.g. `binding /opt/tool` or `pivot_root`.
        step: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The server asked for network and the egress proxy could not start; under the strict
    /// profile it is not started without it (the standard profile starts it with no
    /// network instead).
    #[error(
        "sandbox: the server asked for network, but the egress proxy could not start ({reason}); the strict profile does not start it without one"
    )]
    EgressUnavailable {
        /// Why the proxy could not start.
        reason: String,
    },
    /// A package runner (`npx`, `uvx`, …) whose registry the sandbox cannot reach: it could
    /// only fail, after its own retries.
    #[error("sandbox: {advice}")]
    RegistryUnreachable {
        /// What to do, in words ([`Runner::advice`](super::runner::Runner::advice)).
        advice: String,
    },
    /// `pidfd_open` failed (kernel older than 5.3?).
    #[error("pidfd_open for pid {pid}: {source}")]
    Pidfd {
        /// The child's pid.
        pid: u32,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

/// The one environment scrubber, for plain and sandboxed servers alike: `base` first, then
/// the host's variables named in `allowlist` or `pass` (and every `LC_*`), then `extra`; a
/// later entry replaces an earlier one of the same name. Nothing else of the host's
/// environment reaches a server.
pub(crate) fn scrubbed_env(
    base: Vec<(OsString, OsString)>,
    allowlist: &[&str],
    pass: &[String],
    extra: &[(OsString, OsString)],
) -> Vec<(OsString, OsString)> {
    let host = std::env::vars_os().filter(|(k, _)| {
        k.to_str().is_some_and(|k| {
            allowlist.contains(&k) || k.starts_with("LC_") || pass.iter().any(|p| p == k)
        })
    });
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    for (k, v) in base.into_iter().chain(host).chain(extra.iter().cloned()) {
        env.retain(|(old, _)| *old != k);
        env.push((k, v));
    }
    env
}

/// Starts `launch` unconfined, with piped stdio in a new process group, and opens its pidfd.
///
/// # Errors
/// One [`SpawnError`] variant per failed step; on error no process is left running.
pub(crate) fn spawn_plain(launch: &Launch) -> Result<Spawned, SpawnError> {
    let mut cmd = Command::new(&launch.program);
    cmd.args(&launch.args)
        .env_clear()
        .envs(scrubbed_env(Vec::new(), ENV_ALLOWLIST, &[], &launch.env))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Own process group: the shutdown sequence signals the whole group, grandchildren too.
        .process_group(0);
    if let Some(cwd) = &launch.cwd {
        cmd.current_dir(cwd);
    }
    // SAFETY: the hook only makes raw syscalls (async-signal-safe, no allocation). It runs after
    // std has dup2'ed the pipes onto 0-2, so the server gets exactly those three.
    unsafe { cmd.pre_exec(|| sys::cloexec_from(3)) };
    let child = cmd
        .spawn()
        .map_err(|source| SpawnError::Exec { program: launch.program.clone(), source })?;
    into_spawned(child, None)
}

/// Opens the pidfd of a started `child` (spawned with piped stdio) and takes its pipes; kills
/// and reaps it if that fails.
pub(crate) fn into_spawned(
    mut child: Child,
    sandbox: Option<SandboxGuard>,
) -> Result<Spawned, SpawnError> {
    let pid = child.id();
    let pidfd = match sys::pidfd_open(pid) {
        Ok(fd) => fd,
        Err(source) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(SpawnError::Pidfd { pid, source });
        }
    };
    let stdin = child.stdin.take().expect("stdin was piped").into();
    let stdout = child.stdout.take().expect("stdout was piped").into();
    let stderr = child.stderr.take().expect("stderr was piped").into();
    Ok(Spawned { child, pidfd, stdin, stdout, stderr, sandbox, egress: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_is_scrubbed() {
        let extra = [("EXTRA".into(), "1".into()), ("PATH".into(), "/override".into())];
        let base = vec![("HOME".into(), "/base".into())];
        let env = scrubbed_env(base, ENV_ALLOWLIST, &["CARGO".to_owned()], &extra);
        assert!(env.iter().all(|(k, _)| {
            let k = k.to_str().unwrap();
            ENV_ALLOWLIST.contains(&k) || k.starts_with("LC_") || ["EXTRA", "CARGO"].contains(&k)
        }));
        assert!(env.iter().any(|(k, v)| k == "EXTRA" && v == "1"));
        let one = |name: &str| env.iter().filter(|(k, _)| k == name).count();
        assert_eq!((one("PATH"), one("HOME")), (1, 1), "later entries replace earlier ones");
        assert!(env.iter().any(|(k, v)| k == "PATH" && v == "/override"));
        // HOME is allowlisted, so the host's (when set) replaces the base's.
        if let Some(home) = std::env::var_os("HOME") {
            assert!(env.iter().any(|(k, v)| k == "HOME" && *v == home));
        }
    }

    #[test]
    fn missing_program_is_a_typed_error() {
        let err = super::super::spawn(&Launch {
            program: "/nonexistent/ringmcp-test".into(),
            ..Default::default()
        })
        .unwrap_err();
        assert!(matches!(err, SpawnError::Exec { .. }), "{err}");
        assert!(err.to_string().contains("/nonexistent/ringmcp-test"));
    }
}
