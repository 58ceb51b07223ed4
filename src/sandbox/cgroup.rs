//! Per-sandbox cgroups: resource limits, placement, killing the whole tree, statistics, cleanup.
//!
//! Each sandboxed server gets one cgroup named `ringmcp-sbx.<host pid>.<n>`, in a shared
//! `ringmcp` directory below the host's own cgroup, in every hierarchy used (docs/sandbox.md,
//! "Layers", 1):
//!
//! ```text
//! <v2 mount>/<host cgroup>/ringmcp/ringmcp-sbx.4242.0       lifecycle: cgroup.kill, clone3 target
//! <v1 memory>/<host cgroup>/ringmcp/ringmcp-sbx.4242.0      memory.limit_in_bytes, ...
//! <v1 pids>/<host cgroup>/ringmcp/ringmcp-sbx.4242.0        pids.max
//! ```
//!
//! * Each limit uses cgroup v2 when the host's v2 cgroup lists its controller in
//!   `cgroup.controllers`, else the v1 hierarchy that carries it, so hybrid hosts mix both
//!   ([`Layout`]).
//! * cgroup v2, even with no controller at all, carries the lifecycle: it is the
//!   `clone3(CLONE_INTO_CGROUP)` target ([`SandboxCgroup::v2_dir_fd`]) and `cgroup.kill` kills the
//!   whole tree. Without v2, the v1 freezer freezes the tree while each member gets SIGKILL.
//! * Every limit is reported as a [`LimitStatus`]: a write that fails makes that limit
//!   `Unavailable` with the file and the errno, never a panic and never a silent success. rlimits
//!   are not memory limits (`RLIMIT_AS` breaks node and WebAssembly, `RLIMIT_DATA` misses
//!   `MAP_SHARED` memory; docs/sandbox.md, item 43): this module never reports them as one.
//! * [`SandboxCgroup`] is RAII: dropping it kills what is left and removes its directories;
//!   [`remove_stale`] cleans up after hosts that died without dropping theirs.
//!
//! Every filesystem and signal operation goes through [`CgroupFs`], so the same code runs against
//! a fake cgroupfs tree in tests.

mod fs;
mod layout;
mod report;
mod setup;

pub use fs::{CgroupFs, RealFs};
pub use layout::{Backend, Controller, Layout};
pub use report::{CgroupError, CgroupStats, LimitReport, LimitStatus};

use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fs::{describe, parse_pids, subdirs};
use setup::{limit_writes, make_dirs};

/// The shared directory, below the host's own cgroup, that holds every sandbox cgroup. It is
/// created on demand and never removed (another sandbox may be being created in it).
pub const PARENT_DIR: &str = "ringmcp";

/// Prefix of a sandbox cgroup's name, `ringmcp-sbx.<host pid>.<n>`.
pub const NAME_PREFIX: &str = "ringmcp-sbx.";

/// How long [`SandboxCgroup::kill`] tries before giving up.
const KILL_TIMEOUT: Duration = Duration::from_secs(2);
/// How long `cgroup.kill` alone may take before the signal loop helps.
const CGROUP_KILL_GRACE: Duration = Duration::from_secs(1);
/// How long to wait for a freeze to complete before signalling anyway.
const FREEZE_TIMEOUT: Duration = Duration::from_millis(100);
/// How long `rmdir` is retried while the kernel still counts dying processes.
const RMDIR_TIMEOUT: Duration = Duration::from_secs(1);
/// Longest pause between polls.
const MAX_POLL: Duration = Duration::from_millis(20);

/// CPU bandwidth: `quota_us` of CPU time per `period_us` of wall time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuMax {
    /// CPU time allowed per period, in µs (`50000` of `100000` is half a CPU).
    pub quota_us: u64,
    /// The period, in µs (the kernel accepts 1 ms to 1 s).
    pub period_us: u64,
}

/// The limits of one sandbox; `None` leaves a resource unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Memory, in bytes; swap is limited to nothing on top of it where the kernel allows.
    pub memory_max: Option<u64>,
    /// CPU bandwidth.
    pub cpu_max: Option<CpuMax>,
    /// Number of tasks (processes and threads).
    pub pids_max: Option<u64>,
}

impl Default for Limits {
    /// The defaults of docs/sandbox.md: 256 MiB, half a CPU (`50000 100000`), 256 tasks.
    fn default() -> Limits {
        Limits {
            memory_max: Some(256 << 20),
            cpu_max: Some(CpuMax { quota_us: 50_000, period_us: 100_000 }),
            pids_max: Some(256),
        }
    }
}

impl Limits {
    /// No limit at all (the cgroup then serves only to place and kill the tree).
    pub const NONE: Limits = Limits { memory_max: None, cpu_max: None, pids_max: None };

    /// Whether a limit on `c` is requested.
    fn requests(&self, c: Controller) -> bool {
        match c {
            Controller::Memory => self.memory_max.is_some(),
            Controller::Cpu => self.cpu_max.is_some(),
            Controller::Pids => self.pids_max.is_some(),
        }
    }
}

/// One cgroup directory of a sandbox, in one hierarchy.
#[derive(Debug)]
struct CgDir {
    path: PathBuf,
    backend: Backend,
    /// A v1 hierarchy carrying the freezer.
    freezer: bool,
}

/// How the tree is killed, chosen from what the sandbox's directories offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KillMethod {
    /// v2 `cgroup.kill` in `dirs[.0]` (Linux 5.14+).
    CgroupKill(usize),
    /// Freeze `dirs[dir]` (v2 `cgroup.freeze` or the v1 freezer), SIGKILL each member, thaw.
    Freeze { dir: usize },
    /// SIGKILL each member in rounds; nothing stops a member from forking meanwhile.
    Signal,
    /// No directory at all.
    Nothing,
}

impl KillMethod {
    fn detect(dirs: &[CgDir]) -> KillMethod {
        if let Some(i) = dirs.iter().position(|d| d.backend == Backend::V2) {
            if dirs[i].path.join("cgroup.kill").exists() {
                return KillMethod::CgroupKill(i);
            }
            if dirs[i].path.join("cgroup.freeze").exists() {
                return KillMethod::Freeze { dir: i };
            }
        }
        if let Some(dir) = dirs.iter().position(|d| d.freezer) {
            return KillMethod::Freeze { dir };
        }
        if dirs.is_empty() { KillMethod::Nothing } else { KillMethod::Signal }
    }
}

/// The cgroups of one sandboxed server: one directory per hierarchy used.
///
/// Dropping it kills every process still inside and removes the directories (retrying while the
/// kernel still counts dying processes); it never panics, failures are logged.
#[derive(Debug)]
pub struct SandboxCgroup {
    name: String,
    fs: Arc<dyn CgroupFs>,
    /// v2 first, so placement starts with the lifecycle hierarchy.
    dirs: Vec<CgDir>,
    /// Index in `dirs` of the directory carrying memory, cpu, pids (for stats).
    controller_dirs: [Option<usize>; 3],
    kill_method: KillMethod,
    v2_fd: Option<OwnedFd>,
}

impl SandboxCgroup {
    /// Creates the sandbox cgroup in every hierarchy it needs (those carrying a requested limit,
    /// plus v2 or else the v1 freezer for the lifecycle) and writes the limits:
    ///
    /// * v2: `memory.max`, `memory.swap.max=0`, `cpu.max`, `pids.max` (enabling each controller in
    ///   `cgroup.subtree_control` of the host's cgroup and of `ringmcp/` first);
    /// * v1: `memory.limit_in_bytes` then `memory.memsw.limit_in_bytes`, `memory.oom_control=0`
    ///   (the OOM killer on, so the limit kills instead of stalling), `cpu.cfs_period_us` then
    ///   `cpu.cfs_quota_us`, `pids.max`.
    ///
    /// A failed step makes that limit `Unavailable` in the returned report (the caller's policy
    /// decides: the strict profile refuses to start without memory and pids); a failed optional
    /// write (the swap limit) leaves it `Enforced` with a caveat.
    ///
    /// # Errors
    /// [`CgroupError::NoHierarchy`] when no hierarchy is usable, [`CgroupError::Mkdir`] when the
    /// directory could be created in none, [`CgroupError::OpenDir`] when the v2 directory cannot
    /// be opened. Nothing is left behind on error.
    pub fn create(
        layout: &Layout,
        limits: &Limits,
    ) -> Result<(SandboxCgroup, LimitReport), CgroupError> {
        let mut status: [Option<LimitStatus>; 3] = Default::default();
        let mut wanted: Vec<(Controller, usize)> = Vec::new();
        for c in Controller::ALL {
            if !limits.requests(c) {
                status[slot(c)] = Some(LimitStatus::NotRequested);
                continue;
            }
            match layout.usable_for(c) {
                Ok((i, _)) => wanted.push((c, i)),
                Err(reason) => status[slot(c)] = Some(LimitStatus::Unavailable { reason }),
            }
        }
        let lifecycle = layout.lifecycle().map(|(i, _)| i);
        let mut hierarchies: Vec<usize> = wanted.iter().map(|&(_, i)| i).chain(lifecycle).collect();
        if hierarchies.is_empty() {
            // Nothing needed one: any usable hierarchy still lets us find and kill the tree.
            let any = (0..layout.hierarchies.len()).find(|&i| layout.usable(i).is_ok());
            hierarchies.extend(any);
        }
        if hierarchies.is_empty() {
            return Err(CgroupError::NoHierarchy { reason: layout.unusable_summary() });
        }
        // v2 first: placement starts there, so a failed v2 placement leaves nothing half-placed.
        hierarchies.sort_by_key(|&i| (layout.hierarchies[i].backend != Backend::V2, i));
        hierarchies.dedup();

        let made = make_dirs(layout, &hierarchies, &wanted)?;
        let dirs: Vec<CgDir> = made
            .created
            .iter()
            .map(|(i, path)| {
                let h = &layout.hierarchies[*i];
                let freezer =
                    h.backend == Backend::V1 && h.controllers.iter().any(|c| c == "freezer");
                CgDir { path: path.clone(), backend: h.backend, freezer }
            })
            .collect();
        let mut cg = SandboxCgroup {
            name: made.name,
            fs: Arc::clone(&layout.fs),
            kill_method: KillMethod::detect(&dirs),
            dirs,
            controller_dirs: [None; 3],
            v2_fd: None,
        };
        for (c, i) in wanted {
            if let Some((_, why)) = made.enable_failures.iter().find(|(f, _)| *f == c) {
                status[slot(c)] = Some(LimitStatus::Unavailable { reason: why.clone() });
            } else if let Some(d) = made.created.iter().position(|(j, _)| *j == i) {
                cg.controller_dirs[slot(c)] = Some(d);
                status[slot(c)] = Some(cg.apply(c, d, limits));
            } else if let Some((_, path, e)) = made.failed.iter().find(|(j, ..)| *j == i) {
                let reason = format!("creating {}: {}", path.display(), describe(e));
                status[slot(c)] = Some(LimitStatus::Unavailable { reason });
            }
        }
        if let Some(d) = cg.dirs.iter().find(|d| d.backend == Backend::V2) {
            // O_RDONLY on a directory: enough for CLONE_INTO_CGROUP, and close-on-exec.
            match File::open(&d.path) {
                Ok(f) => cg.v2_fd = Some(f.into()),
                Err(source) => return Err(CgroupError::OpenDir { path: d.path.clone(), source }),
            }
        }
        let [memory, cpu, pids] = status.map(|s| {
            s.unwrap_or(LimitStatus::Unavailable { reason: "internal: no status".to_owned() })
        });
        let report = LimitReport { memory, cpu, pids, kill: cg.kill_status() };
        Ok((cg, report))
    }

    /// The cgroup's name, `ringmcp-sbx.<host pid>.<n>`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Every directory of this sandbox, with its backend.
    pub fn dirs(&self) -> impl Iterator<Item = (Backend, &Path)> + '_ {
        self.dirs.iter().map(|d| (d.backend, d.path.as_path()))
    }

    /// Moves `pid` (all its threads) into this sandbox in every hierarchy used: the v1 way, done
    /// by the parent while the child waits for it (docs/sandbox.md, "Layers"). Writing a pid already
    /// placed by `clone3(CLONE_INTO_CGROUP)` is harmless.
    ///
    /// # Errors
    /// [`CgroupError::Place`] for the first `cgroup.procs` write that fails (v2 is written
    /// first); the caller should kill the child.
    pub fn place(&self, pid: i32) -> Result<(), CgroupError> {
        for d in &self.dirs {
            let path = d.path.join("cgroup.procs");
            self.fs.write(&path, &pid.to_string()).map_err(|source| CgroupError::Place {
                pid,
                path,
                source,
            })?;
        }
        Ok(())
    }

    /// The v2 directory, for `clone3(CLONE_INTO_CGROUP)` (Linux 5.7+), so the child is born inside
    /// (v2 may carry no controller: the v1 directories still need [`place`](Self::place)).
    pub fn v2_dir_fd(&self) -> Option<BorrowedFd<'_>> {
        self.v2_fd.as_ref().map(AsFd::as_fd)
    }

    /// Kills every process of the sandbox, including double-forked `setsid` daemons, and waits
    /// (bounded) until none is left: v2 `cgroup.kill`; else freeze, SIGKILL each member, thaw, in
    /// rounds. Killing an empty sandbox is a no-op.
    ///
    /// # Errors
    /// [`CgroupError::Write`] if `cgroup.kill` cannot be written, [`CgroupError::Signal`] if a
    /// member cannot be signalled, [`CgroupError::KillTimeout`] if processes remain after 2 s.
    pub fn kill(&self) -> Result<(), CgroupError> {
        let start = Instant::now();
        match self.kill_method {
            KillMethod::Nothing => Ok(()),
            KillMethod::CgroupKill(d) => {
                let path = self.dirs[d].path.join("cgroup.kill");
                if self.members().is_empty() {
                    return Ok(());
                }
                self.fs.write(&path, "1").map_err(|source| CgroupError::Write {
                    path,
                    value: "1".to_owned(),
                    source,
                })?;
                let mut pause = Duration::from_millis(1);
                while start.elapsed() < CGROUP_KILL_GRACE {
                    if self.members().is_empty() {
                        return Ok(());
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(MAX_POLL);
                }
                // Members outside the v2 cgroup (a placement that failed half-way) or a kernel
                // that is slow to reap: signal them one by one.
                self.kill_loop(start)
            }
            KillMethod::Freeze { .. } | KillMethod::Signal => self.kill_loop(start),
        }
    }

    /// Counters of the sandbox (see [`CgroupStats`]).
    pub fn stats(&self) -> CgroupStats {
        let file = |c: Controller, name: &str| -> Option<(Backend, String)> {
            let d = &self.dirs[self.controller_dirs[slot(c)]?];
            Some((d.backend, std::fs::read_to_string(d.path.join(name)).ok()?))
        };
        let number = |c: Controller, name: &str| file(c, name)?.1.trim().parse().ok();
        let mut stats = CgroupStats { procs: self.members().len(), ..CgroupStats::default() };
        match self.backend_of(Controller::Memory) {
            Some(Backend::V1) => {
                stats.oom_kills = file(Controller::Memory, "memory.oom_control")
                    .and_then(|(_, t)| keyed(&t, "oom_kill"));
                stats.memory_peak_bytes = number(Controller::Memory, "memory.max_usage_in_bytes");
            }
            Some(Backend::V2) => {
                stats.oom_kills = file(Controller::Memory, "memory.events")
                    .and_then(|(_, t)| keyed(&t, "oom_kill"));
                stats.memory_peak_bytes = number(Controller::Memory, "memory.peak");
            }
            None => {}
        }
        stats.pids_max_hits =
            file(Controller::Pids, "pids.events").and_then(|(_, t)| keyed(&t, "max"));
        if let Some((backend, text)) = file(Controller::Cpu, "cpu.stat") {
            stats.nr_throttled = keyed(&text, "nr_throttled");
            stats.throttled_usec = match backend {
                Backend::V1 => keyed(&text, "throttled_time").map(|ns| ns / 1000),
                Backend::V2 => keyed(&text, "throttled_usec"),
            };
        }
        stats
    }

    /// The pids in the sandbox now (every directory and sub-cgroup, deduplicated, sorted).
    pub fn pids(&self) -> Vec<i32> {
        self.members().into_keys().collect()
    }

    fn backend_of(&self, c: Controller) -> Option<Backend> {
        Some(self.dirs[self.controller_dirs[slot(c)]?].backend)
    }

    /// Writes the limit on `c` into `dirs[d]`.
    fn apply(&self, c: Controller, d: usize, limits: &Limits) -> LimitStatus {
        let dir = &self.dirs[d];
        let mut done = Vec::new();
        let mut caveats = Vec::new();
        for w in limit_writes(c, dir.backend, limits) {
            let path = dir.path.join(w.file);
            match (self.fs.write(&path, &w.value), w.caveat) {
                (Ok(()), _) => done.push(format!("{}={}", w.file, w.value)),
                (Err(e), Some(caveat)) => {
                    caveats.push(format!("{} not set ({}): {caveat}", w.file, describe(&e)));
                }
                (Err(e), None) => {
                    let reason =
                        format!("writing {:?} to {}: {}", w.value, path.display(), describe(&e));
                    return LimitStatus::Unavailable { reason };
                }
            }
        }
        LimitStatus::enforced(dir.backend, &done, &caveats)
    }

    fn kill_status(&self) -> LimitStatus {
        match self.kill_method {
            KillMethod::CgroupKill(_) => {
                LimitStatus::Enforced { backend: Backend::V2, value: "cgroup.kill".to_owned() }
            }
            KillMethod::Freeze { dir } => {
                let backend = self.dirs[dir].backend;
                let how = match backend {
                    Backend::V1 => "freezer: freeze, SIGKILL every member, thaw",
                    Backend::V2 => "cgroup.freeze: freeze, SIGKILL every member, thaw",
                };
                LimitStatus::Enforced { backend, value: how.to_owned() }
            }
            KillMethod::Signal => signal_loop_status(),
            KillMethod::Nothing => {
                LimitStatus::Unavailable { reason: "no cgroup directory was created".to_owned() }
            }
        }
    }

    /// Every member pid, with the `cgroup.procs` that lists it.
    fn members(&self) -> BTreeMap<i32, PathBuf> {
        fn walk(dir: &Path, out: &mut BTreeMap<i32, PathBuf>) {
            let procs = dir.join("cgroup.procs");
            if let Ok(text) = std::fs::read_to_string(&procs) {
                for pid in parse_pids(&text) {
                    out.entry(pid).or_insert_with(|| procs.clone());
                }
            }
            for sub in subdirs(dir) {
                walk(&sub, out);
            }
        }
        let mut out = BTreeMap::new();
        for d in &self.dirs {
            walk(&d.path, &mut out);
        }
        out
    }

    /// Rounds of: freeze (if we can), list members, SIGKILL each, thaw; until none is left.
    /// While frozen no member can fork or exit, so the list is complete and no pid is recycled.
    fn kill_loop(&self, start: Instant) -> Result<(), CgroupError> {
        let mut pause = Duration::from_millis(1);
        loop {
            let members = self.members();
            if members.is_empty() {
                return Ok(());
            }
            if start.elapsed() > KILL_TIMEOUT {
                return Err(CgroupError::KillTimeout {
                    path: self.dirs[0].path.clone(),
                    remaining: members.len(),
                    waited: start.elapsed(),
                });
            }
            let frozen = self.freeze(true);
            let members = if frozen { self.members() } else { members };
            let mut failure = None;
            for (&pid, procs) in &members {
                if let Err(source) = self.fs.kill_member(pid, procs) {
                    failure.get_or_insert(CgroupError::Signal { pid, path: procs.clone(), source });
                }
            }
            if frozen {
                // Killed tasks die once thawed.
                self.freeze(false);
            }
            if let Some(e) = failure {
                return Err(e);
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(MAX_POLL);
        }
    }

    /// Freezes (`on`) or thaws the tree if the kill method has a freezer; when freezing, waits
    /// (bounded) for it to complete. Returns whether a freeze was requested (so: thaw later).
    fn freeze(&self, on: bool) -> bool {
        let KillMethod::Freeze { dir } = self.kill_method else { return false };
        let d = &self.dirs[dir];
        let (file, value) = match (d.backend, on) {
            (Backend::V1, true) => ("freezer.state", "FROZEN"),
            (Backend::V1, false) => ("freezer.state", "THAWED"),
            (Backend::V2, true) => ("cgroup.freeze", "1"),
            (Backend::V2, false) => ("cgroup.freeze", "0"),
        };
        if let Err(e) = self.fs.write(&d.path.join(file), value) {
            tracing::warn!(cgroup = %self.name, "writing {value} to {file}: {}", describe(&e));
            return false;
        }
        if !on {
            return false;
        }
        // v1 reads FREEZING until every task is frozen; v2 reports "frozen 1" in cgroup.events.
        let deadline = Instant::now() + FREEZE_TIMEOUT;
        while Instant::now() < deadline {
            let frozen = match d.backend {
                Backend::V1 => std::fs::read_to_string(d.path.join("freezer.state"))
                    .is_ok_and(|s| s.trim() == "FROZEN"),
                Backend::V2 => std::fs::read_to_string(d.path.join("cgroup.events"))
                    .is_ok_and(|s| keyed(&s, "frozen") == Some(1)),
            };
            if frozen {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        // Even a freeze still in progress narrows the window; signal anyway.
        true
    }
}

impl Drop for SandboxCgroup {
    fn drop(&mut self) {
        if let Err(e) = self.kill() {
            tracing::warn!(cgroup = %self.name, "killing the sandbox's processes: {e}");
        }
        let deadline = Instant::now() + RMDIR_TIMEOUT;
        for d in &self.dirs {
            if let Err((path, e)) = remove_tree(&*self.fs, &d.path, deadline) {
                tracing::warn!(cgroup = %self.name, "removing {}: {}", path.display(), describe(&e));
            }
        }
    }
}

/// Removes the sandbox cgroups of hosts that are gone: every `ringmcp-sbx.<pid>.<n>` directory in
/// the `ringmcp` directory of each hierarchy whose host pid is no longer alive, after killing
/// whatever still runs in it. Call it once at start-up. Returns how many directories it removed.
///
/// A live pid is left alone even if it was recycled for another program (conservative). Hosts in
/// other pid namespaces that share the host's cgroup are not told apart: give each its own cgroup.
pub fn remove_stale(layout: &Layout) -> usize {
    let me = std::process::id();
    let mut stale: BTreeMap<String, Vec<CgDir>> = BTreeMap::new();
    for h in &layout.hierarchies {
        let Ok(own) = &h.own else { continue };
        for dir in subdirs(&own.join(PARENT_DIR)) {
            let Some(name) = dir.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
                continue;
            };
            let Some(pid) = host_pid_of(&name) else { continue };
            if u32::try_from(pid) == Ok(me) || layout.fs.is_alive(pid) {
                continue;
            }
            let freezer = h.backend == Backend::V1 && h.controllers.iter().any(|c| c == "freezer");
            stale.entry(name).or_default().push(CgDir { path: dir, backend: h.backend, freezer });
        }
    }
    let mut removed = 0;
    for (name, mut dirs) in stale {
        dirs.sort_by_key(|d| d.backend != Backend::V2);
        let paths: Vec<PathBuf> = dirs.iter().map(|d| d.path.clone()).collect();
        tracing::info!(cgroup = %name, "removing the stale sandbox cgroup of a dead host");
        // Dropping it kills what is left and removes the directories.
        drop(SandboxCgroup {
            name,
            fs: Arc::clone(&layout.fs),
            kill_method: KillMethod::detect(&dirs),
            dirs,
            controller_dirs: [None; 3],
            v2_fd: None,
        });
        removed += paths.iter().filter(|p| !p.exists()).count();
    }
    removed
}

/// The kill status without v2 and without a v1 freezer.
fn signal_loop_status() -> LimitStatus {
    LimitStatus::BestEffort {
        mechanism: "SIGKILL every pid in cgroup.procs until none is left".to_owned(),
        caveat: "no cgroup v2 and no v1 freezer: a tree that forks faster than it is killed can \
                 outlast the bounded loop"
            .to_owned(),
    }
}

/// The host pid in a sandbox cgroup name `ringmcp-sbx.<pid>.<n>`.
fn host_pid_of(name: &str) -> Option<i32> {
    let (pid, n) = name.strip_prefix(NAME_PREFIX)?.split_once('.')?;
    n.parse::<u64>().ok()?;
    pid.parse().ok().filter(|&p: &i32| p > 0)
}

fn slot(c: Controller) -> usize {
    match c {
        Controller::Memory => 0,
        Controller::Cpu => 1,
        Controller::Pids => 2,
    }
}

/// Removes `dir` after its sub-cgroups, retrying `EBUSY` until `deadline`.
fn remove_tree(
    fs: &dyn CgroupFs,
    dir: &Path,
    deadline: Instant,
) -> Result<(), (PathBuf, io::Error)> {
    for sub in subdirs(dir) {
        remove_tree(fs, &sub, deadline)?;
    }
    let mut pause = Duration::from_millis(1);
    loop {
        match fs.rmdir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(MAX_POLL);
            }
            Err(e) => return Err((dir.to_path_buf(), e)),
        }
    }
}

/// The value of `key` in a flat-keyed cgroup file (`key value` per line).
fn keyed(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

#[cfg(test)]
mod real_tests;
#[cfg(test)]
mod tests;
