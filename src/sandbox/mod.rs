//! Launching server processes, confined (docs/sandbox.md).
//!
//! Every server gets a clean environment (allowlist), a process group of its own, every pipe
//! grown to the system maximum, and a pidfd to observe its exit. With a [`SandboxConfig`] (the
//! default in the CLI) it also runs in user, mount, pid, net, ipc, uts and cgroup namespaces on
//! a pivot_root'ed read-only tmpfs root with only the folders it needs bound read-only, under
//! cgroup limits ([`cgroup`]), a seccomp filter ([`seccomp`]), Landlock, no capabilities,
//! no_new_privs and a parent-death signal. The host never forks itself into a server: it execs
//! the small single-threaded helper [`helper_main`] (`ringmcp __sandbox-init`) with an empty
//! environment and hands it the [`plan::Plan`] over a pipe.

pub mod attack;
pub mod capture;
pub mod cgroup;

pub mod check;
mod helper;
mod landlock;
mod launch;
pub mod plan;
pub mod runner;
pub mod seccomp;
mod spawn;
mod sys;

pub use helper::{HELPER_ARG, helper_main};
pub use launch::{INNER_ID, SANDBOX_ENV_ALLOWLIST, helper_path, set_helper_path};
pub use plan::{Profile, SandboxConfig};
pub use spawn::{ENV_ALLOWLIST, Launch, SandboxGuard, SpawnError, Spawned};
pub use sys::{Signal, open_fds_beyond_stdio, open_file_limit, signal_group, stop_with_parent};

/// Starts `launch` with piped stdio in a new process group, and opens its pidfd: in its
/// sandbox when it has one (not the `off` profile), else as a plain child.
///
/// # Errors
/// One [`SpawnError`] variant per failed step; on error no process is left running.
pub fn spawn(launch: &Launch) -> Result<Spawned, SpawnError> {
    match &launch.sandbox {
        Some(config) if config.profile != Profile::Off => launch::spawn_sandboxed(launch, config),
        _ => spawn::spawn_plain(launch),
    }
}
