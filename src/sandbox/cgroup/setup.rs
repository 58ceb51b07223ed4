//! Creating a sandbox's directories and the control-file writes that apply each limit.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::fs::{CgroupFs, describe};
use super::{Backend, CgroupError, Controller, CpuMax, Layout, Limits, NAME_PREFIX, PARENT_DIR};

/// Names tried when `ringmcp-sbx.<pid>.<n>` already exists (a dead host that had our pid).
const NAME_ATTEMPTS: usize = 8;

/// Suffix counter of sandbox names. Relaxed: it only has to hand out distinct numbers; no other
/// memory is published through it.
static NEXT_SUFFIX: AtomicU64 = AtomicU64::new(0);

/// One control-file write that applies a limit.
pub(super) struct LimitWrite {
    pub(super) file: &'static str,
    pub(super) value: String,
    /// `Some(what is lost)` if failing it still leaves the limit enforced.
    pub(super) caveat: Option<&'static str>,
}

/// The writes that apply the limit on `c` with `backend`, in order.
pub(super) fn limit_writes(c: Controller, backend: Backend, limits: &Limits) -> Vec<LimitWrite> {
    let req = |file, value: String| LimitWrite { file, value, caveat: None };
    let opt = |file, value: String, caveat| LimitWrite { file, value, caveat: Some(caveat) };
    const NO_SWAP_LIMIT: &str = "swap is not limited";
    match (c, backend) {
        (Controller::Memory, _) if limits.memory_max.is_none() => Vec::new(),
        (Controller::Memory, Backend::V2) => {
            let max = limits.memory_max.unwrap_or_default().to_string();
            vec![req("memory.max", max), opt("memory.swap.max", "0".into(), NO_SWAP_LIMIT)]
        }
        (Controller::Memory, Backend::V1) => {
            // limit_in_bytes first: memsw may never be below it.
            let max = limits.memory_max.unwrap_or_default().to_string();
            vec![
                req("memory.limit_in_bytes", max.clone()),
                opt("memory.memsw.limit_in_bytes", max, NO_SWAP_LIMIT),
                opt(
                    "memory.oom_control",
                    "0".into(),
                    "the OOM killer may be disabled (inherited): tasks would stall at the limit",
                ),
            ]
        }
        (Controller::Cpu, backend) => match (limits.cpu_max, backend) {
            (None, _) => Vec::new(),
            (Some(CpuMax { quota_us, period_us }), Backend::V2) => {
                vec![req("cpu.max", format!("{quota_us} {period_us}"))]
            }
            (Some(CpuMax { quota_us, period_us }), Backend::V1) => vec![
                req("cpu.cfs_period_us", period_us.to_string()),
                req("cpu.cfs_quota_us", quota_us.to_string()),
            ],
        },
        (Controller::Pids, _) => {
            limits.pids_max.map(|n| vec![req("pids.max", n.to_string())]).unwrap_or_default()
        }
    }
}

/// What happened while creating the directories.
pub(super) struct MadeDirs {
    pub(super) name: String,
    /// (hierarchy, directory), in the order created.
    pub(super) created: Vec<(usize, PathBuf)>,
    /// (hierarchy, directory, error) for each hierarchy where creation failed.
    pub(super) failed: Vec<(usize, PathBuf, io::Error)>,
    /// v2 controllers that could not be enabled for child cgroups, and why.
    pub(super) enable_failures: Vec<(Controller, String)>,
}

/// Creates `<own>/ringmcp/<name>` in each hierarchy, picking a fresh name on `EEXIST`.
pub(super) fn make_dirs(
    layout: &Layout,
    hierarchies: &[usize],
    wanted: &[(Controller, usize)],
) -> Result<MadeDirs, CgroupError> {
    let fs = &*layout.fs;
    let mut collision = None;
    'attempt: for _ in 0..NAME_ATTEMPTS {
        let n = NEXT_SUFFIX.fetch_add(1, Ordering::Relaxed);
        let name = format!("{NAME_PREFIX}{}.{n}", std::process::id());
        let mut made =
            MadeDirs { name, created: Vec::new(), failed: Vec::new(), enable_failures: Vec::new() };
        for &i in hierarchies {
            let h = &layout.hierarchies[i];
            let Ok(own) = &h.own else { continue };
            let parent = own.join(PARENT_DIR);
            match fs.mkdir(&parent) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    made.failed.push((i, parent, e));
                    continue;
                }
            }
            if h.backend == Backend::V2 {
                for &(c, _) in wanted.iter().filter(|&&(_, j)| j == i) {
                    if let Err(why) = enable_v2_controller(fs, own, &parent, c) {
                        made.enable_failures.push((c, why));
                    }
                }
            }
            let dir = parent.join(&made.name);
            match fs.mkdir(&dir) {
                Ok(()) => made.created.push((i, dir)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    // Left by a dead host that had our pid: not ours to touch (remove_stale's
                    // job); undo and take the next name.
                    for (_, d) in &made.created {
                        let _ = fs.rmdir(d);
                    }
                    collision = Some((dir, e));
                    continue 'attempt;
                }
                Err(e) => made.failed.push((i, dir, e)),
            }
        }
        if made.created.is_empty() {
            return Err(match made.failed.into_iter().next() {
                Some((_, path, source)) => CgroupError::Mkdir { path, source },
                None => CgroupError::NoHierarchy { reason: layout.unusable_summary() },
            });
        }
        return Ok(made);
    }
    Err(match collision {
        Some((path, source)) => CgroupError::Mkdir { path, source },
        None => CgroupError::NoHierarchy { reason: layout.unusable_summary() },
    })
}

/// Makes `c` available in `parent`'s children: `+c` into the `cgroup.subtree_control` of the
/// host's cgroup and then of `parent`, where not already enabled.
fn enable_v2_controller(
    fs: &dyn CgroupFs,
    own: &Path,
    parent: &Path,
    c: Controller,
) -> Result<(), String> {
    for dir in [own, parent] {
        let file = dir.join("cgroup.subtree_control");
        let enabled = std::fs::read_to_string(&file)
            .is_ok_and(|s| s.split_whitespace().any(|x| x == c.name()));
        if !enabled {
            let value = format!("+{c}");
            fs.write(&file, &value).map_err(|e| {
                format!(
                    "enabling {c} for child cgroups: writing {value:?} to {}: {}",
                    file.display(),
                    describe(&e)
                )
            })?;
        }
    }
    Ok(())
}
