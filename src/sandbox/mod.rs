//! Launching server processes.
//!
//! Today: a clean environment (allowlist), a process group of its own, every pipe grown to the
//! system maximum, and a pidfd to observe the exit without a signal handler. The namespace,
//! cgroup and seccomp layers of `SANDBOX.md` build on this module.

pub mod cgroup;
mod spawn;
mod sys;

pub use spawn::{ENV_ALLOWLIST, Launch, SpawnError, Spawned, spawn};
pub use sys::{Signal, signal_group};
