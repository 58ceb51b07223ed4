//! What a sandbox's cgroups enforce ([`LimitStatus`], [`LimitReport`]), what they counted
//! ([`CgroupStats`]), and how a cgroup step fails ([`CgroupError`]).

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

use super::fs::describe;
use super::{Backend, Controller};

/// How (and whether) one limit is enforced.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LimitStatus {
    /// The kernel enforces it.
    Enforced {
        /// Which cgroup version.
        backend: Backend,
        /// What was written (`memory.max=268435456, memory.swap.max=0`), then any caveat.
        value: String,
    },
    /// Something weaker than a cgroup limit applies (for callers that add one, e.g. an rlimit
    /// as defence in depth; this module never claims one).
    BestEffort {
        /// What applies.
        mechanism: String,
        /// What it does not cover.
        caveat: String,
    },
    /// Not enforced at all.
    Unavailable {
        /// Why, naming the file and errno where a step failed.
        reason: String,
    },
    /// No limit was asked for.
    NotRequested,
}

impl LimitStatus {
    /// Whether the kernel enforces it.
    pub fn is_enforced(&self) -> bool {
        matches!(self, LimitStatus::Enforced { .. })
    }

    pub(super) fn enforced(backend: Backend, done: &[String], caveats: &[String]) -> LimitStatus {
        let mut value = done.join(", ");
        for caveat in caveats {
            value.push_str("; ");
            value.push_str(caveat);
        }
        LimitStatus::Enforced { backend, value }
    }
}

impl fmt::Display for LimitStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LimitStatus::Enforced { backend, value } => {
                write!(f, "enforced by {backend} ({value})")
            }
            LimitStatus::BestEffort { mechanism, caveat } => {
                write!(f, "best effort: {mechanism} (caveat: {caveat})")
            }
            LimitStatus::Unavailable { reason } => write!(f, "NOT enforced: {reason}"),
            LimitStatus::NotRequested => f.write_str("not requested"),
        }
    }
}

/// The status of every limit of a sandbox, and of killing its tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitReport {
    /// Memory.
    pub memory: LimitStatus,
    /// CPU bandwidth.
    pub cpu: LimitStatus,
    /// Number of tasks.
    pub pids: LimitStatus,
    /// How the whole process tree is killed (`Enforced` = no process can escape it).
    pub kill: LimitStatus,
}

impl LimitReport {
    /// The status of the limit on `c`.
    pub fn status(&self, c: Controller) -> &LimitStatus {
        match c {
            Controller::Memory => &self.memory,
            Controller::Cpu => &self.cpu,
            Controller::Pids => &self.pids,
        }
    }

    /// The limits among `required` that the kernel does not enforce, with their status: what a
    /// strict profile refuses to start with (memory and pids there). `BestEffort` counts as not
    /// enforced.
    pub fn unenforced<'a>(
        &'a self,
        required: &'a [Controller],
    ) -> impl Iterator<Item = (Controller, &'a LimitStatus)> + 'a {
        required.iter().map(|&c| (c, self.status(c))).filter(|(_, s)| !s.is_enforced())
    }
}

impl fmt::Display for LimitReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "memory: {}", self.memory)?;
        writeln!(f, "cpu: {}", self.cpu)?;
        writeln!(f, "pids: {}", self.pids)?;
        write!(f, "kill: {}", self.kill)
    }
}

/// Counters harvested from a sandbox's cgroups; `None` where the file is missing or unreadable.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CgroupStats {
    /// Processes killed by the OOM killer at the memory limit (v2 `memory.events` `oom_kill`,
    /// v1 `memory.oom_control` `oom_kill`).
    pub oom_kills: Option<u64>,
    /// Forks refused at the pids limit (`pids.events` `max`).
    pub pids_max_hits: Option<u64>,
    /// CPU periods in which the sandbox was throttled (`cpu.stat` `nr_throttled`).
    pub nr_throttled: Option<u64>,
    /// Total time throttled, in µs (v2 `throttled_usec`, v1 `throttled_time` / 1000).
    pub throttled_usec: Option<u64>,
    /// Peak memory use in bytes (v2 `memory.peak`, v1 `memory.max_usage_in_bytes`).
    pub memory_peak_bytes: Option<u64>,
    /// Processes in the sandbox now.
    pub procs: usize,
}

/// A cgroup step that failed; each names the file or directory and carries the OS error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CgroupError {
    /// No hierarchy can be used at all (nothing mounted, read-only, no permission, ...).
    #[error("no usable cgroup hierarchy: {reason}")]
    NoHierarchy {
        /// Why, per hierarchy.
        reason: String,
    },
    /// The sandbox's directory could not be created in any hierarchy.
    #[error("creating cgroup {}: {}", .path.display(), describe(.source))]
    Mkdir {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The v2 directory could not be opened for `clone3(CLONE_INTO_CGROUP)`.
    #[error("opening cgroup {}: {}", .path.display(), describe(.source))]
    OpenDir {
        /// The directory.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// Writing a pid to a `cgroup.procs` failed.
    #[error("placing pid {pid} into {}: {}", .path.display(), describe(.source))]
    Place {
        /// The process.
        pid: i32,
        /// The `cgroup.procs` file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// A control file write needed to kill the tree failed.
    #[error("writing {value:?} to {}: {}", .path.display(), describe(.source))]
    Write {
        /// The control file.
        path: PathBuf,
        /// What was written.
        value: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// `SIGKILL` to a member failed.
    #[error("SIGKILL to pid {pid} (listed in {}): {}", .path.display(), describe(.source))]
    Signal {
        /// The process.
        pid: i32,
        /// The `cgroup.procs` that listed it.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// Processes were still alive when the kill gave up.
    #[error("{remaining} process(es) still in {} after {waited:?} of killing", .path.display())]
    KillTimeout {
        /// A directory of the sandbox.
        path: PathBuf,
        /// How many.
        remaining: usize,
        /// How long it tried.
        waited: Duration,
    },
}
