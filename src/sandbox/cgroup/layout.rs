//! Finding the cgroup hierarchies: which backend carries each controller, where each hierarchy is
//! mounted and where the host's own cgroup is in it, from `/proc/self/mountinfo`
//! ([proc_pid_mountinfo(5)]) and `/proc/self/cgroup` ([cgroups(7)] "/proc files").
//!
//! [proc_pid_mountinfo(5)]: https://man7.org/linux/man-pages/man5/proc_pid_mountinfo.5.html
//! [cgroups(7)]: https://man7.org/linux/man-pages/man7/cgroups.7.html

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::fs::{CgroupFs, RealFs, describe};
use super::setup::limit_writes;
use super::{LimitReport, LimitStatus, Limits, PARENT_DIR, signal_loop_status};

/// A controller whose limit the sandbox sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Controller {
    /// Memory (`memory.max` / `memory.limit_in_bytes`).
    Memory,
    /// CPU bandwidth (`cpu.max` / `cpu.cfs_quota_us`).
    Cpu,
    /// Number of tasks (`pids.max`).
    Pids,
}

impl Controller {
    /// Every controller, in report order.
    pub const ALL: [Controller; 3] = [Controller::Memory, Controller::Cpu, Controller::Pids];

    /// The kernel's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Controller::Memory => "memory",
            Controller::Cpu => "cpu",
            Controller::Pids => "pids",
        }
    }
}

impl fmt::Display for Controller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The cgroup version that enforces something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Backend {
    /// A cgroup v1 hierarchy (one per controller or co-mounted group).
    V1,
    /// The unified cgroup v2 hierarchy.
    V2,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::V1 => "cgroup v1",
            Backend::V2 => "cgroup v2",
        })
    }
}

/// v1 controller names as they appear in super options and `/proc/self/cgroup`; any other
/// option (`rw`, `name=systemd`, `clone_children`, ...) is not a controller.
const V1_CONTROLLERS: &[&str] = &[
    "blkio",
    "cpu",
    "cpuacct",
    "cpuset",
    "devices",
    "freezer",
    "hugetlb",
    "memory",
    "misc",
    "net_cls",
    "net_prio",
    "perf_event",
    "pids",
    "rdma",
];

/// The v1 controllers this module uses: the limits, and the freezer for killing.
const V1_USED: &[&str] = &["memory", "cpu", "pids", "freezer"];

/// One mounted cgroup hierarchy.
#[derive(Debug, Clone)]
pub(super) struct Hierarchy {
    pub(super) backend: Backend,
    /// v1: the controllers in the super options; v2: the host cgroup's `cgroup.controllers`.
    pub(super) controllers: Vec<String>,
    /// Where it is mounted (re-rooted under the layout's root prefix).
    pub(super) mount_point: PathBuf,
    /// The host's own cgroup directory in it, or why it cannot be used.
    pub(super) own: Result<PathBuf, String>,
    /// Mounted read-only.
    pub(super) read_only: bool,
}

impl Hierarchy {
    fn has(&self, controller: &str) -> bool {
        self.controllers.iter().any(|c| c == controller)
    }
}

/// The cgroup hierarchies of this host as seen by this process: which backend carries each
/// controller, where it is mounted, and the host's own cgroup in it.
///
/// Probe once at start-up ([`Layout::probe`]) and share it; [`SandboxCgroup::create`] and
/// [`Layout::report`] consult it. Backend choice per controller (hybrid hosts mix both): cgroup v2
/// when the host's own v2 cgroup lists the controller in `cgroup.controllers`, else the v1
/// hierarchy whose super options name it. v2, even without controllers, carries the lifecycle.
///
/// [`SandboxCgroup::create`]: super::SandboxCgroup::create
#[derive(Debug, Clone)]
pub struct Layout {
    pub(super) hierarchies: Vec<Hierarchy>,
    pub(super) fs: Arc<dyn CgroupFs>,
    /// Why the sources could not be read, if they could not.
    problem: Option<String>,
}

impl Layout {
    /// Probes this process's cgroup layout from `/proc/self/mountinfo` and `/proc/self/cgroup`.
    /// Never fails: what cannot be read becomes the reason in every `Unavailable` status.
    pub fn probe() -> Layout {
        let read = |p: &str| std::fs::read_to_string(p).map_err(|e| (p.to_owned(), e));
        match read("/proc/self/mountinfo").and_then(|m| Ok((m, read("/proc/self/cgroup")?))) {
            Ok((mountinfo, cgroup)) => Layout::from_sources(&mountinfo, &cgroup, Path::new("/")),
            Err((path, e)) => Layout {
                hierarchies: Vec::new(),
                fs: Arc::new(RealFs),
                problem: Some(format!("reading {path}: {}", describe(&e))),
            },
        }
    }

    /// Builds a layout from the texts of `/proc/self/mountinfo` and `/proc/self/cgroup`, with
    /// every mount point re-rooted under `root_prefix` (`/` for the real system, a temp dir for a
    /// fake cgroupfs tree). Reads the host v2 cgroup's `cgroup.controllers` under that prefix.
    pub fn from_sources(mountinfo: &str, proc_self_cgroup: &str, root_prefix: &Path) -> Layout {
        let memberships = parse_proc_cgroup(proc_self_cgroup);
        let mut hierarchies: Vec<Hierarchy> = Vec::new();
        for mount in mountinfo.lines().filter_map(parse_mountinfo_line) {
            let (backend, v1) = match mount.fstype {
                "cgroup2" => (Backend::V2, Vec::new()),
                "cgroup" => {
                    let v1: Vec<String> = mount
                        .super_options
                        .split(',')
                        .filter(|o| V1_CONTROLLERS.contains(o))
                        .map(String::from)
                        .collect();
                    if !v1.iter().any(|c| V1_USED.contains(&c.as_str())) {
                        // name=systemd, cpuset, devices, ...: nothing we use. (Never a fallback
                        // either: cpuset refuses tasks until cpus and mems are set.)
                        continue;
                    }
                    (Backend::V1, v1)
                }
                _ => continue,
            };
            let mount_point = root_prefix.join(mount.mount_point.trim_start_matches('/'));
            let membership = memberships.iter().find(|m| match backend {
                Backend::V2 => m.hierarchy_id == "0" && m.controllers.is_empty(),
                Backend::V1 => m.controllers.iter().any(|c| *c == v1[0]),
            });
            let own = match membership {
                None => Err(format!(
                    "/proc/self/cgroup has no entry for the {backend} hierarchy at {}",
                    mount_point.display()
                )),
                Some(m) => match relative_to_mount_root(&mount.root, m.path) {
                    Some(rel) if rel.as_os_str().is_empty() => Ok(mount_point.clone()),
                    Some(rel) => Ok(mount_point.join(rel)),
                    None => Err(format!(
                        "our {backend} cgroup {} is outside the part mounted at {} (root {})",
                        m.path,
                        mount_point.display(),
                        mount.root
                    )),
                },
            };
            let controllers = match (backend, &own) {
                (Backend::V2, Ok(dir)) => std::fs::read_to_string(dir.join("cgroup.controllers"))
                    .map(|s| s.split_whitespace().map(String::from).collect())
                    .unwrap_or_default(),
                _ => v1,
            };
            let read_only = [mount.options, mount.super_options]
                .iter()
                .any(|opts| opts.split(',').any(|o| o == "ro"));
            // A later mount at the same place hides the earlier one.
            hierarchies.retain(|h| h.mount_point != mount_point);
            hierarchies.push(Hierarchy { backend, controllers, mount_point, own, read_only });
        }
        Layout { hierarchies, fs: Arc::new(RealFs), problem: None }
    }

    /// Replaces the operating-system seam (tests use a recording fake over a temp dir).
    pub fn with_fs(mut self, fs: Arc<dyn CgroupFs>) -> Layout {
        self.fs = fs;
        self
    }

    /// The backend that would carry `controller`, whether or not we may write there.
    pub fn backend(&self, controller: Controller) -> Option<Backend> {
        self.choose(controller).ok().map(|i| self.hierarchies[i].backend)
    }

    /// The host's own cgroup directory in the hierarchy that would carry `controller`.
    pub fn cgroup_dir(&self, controller: Controller) -> Option<&Path> {
        let i = self.choose(controller).ok()?;
        self.hierarchies[i].own.as_deref().ok()
    }

    /// The host's own cgroup directory in the hierarchy used for placement and killing when no
    /// limit needs one: v2 when usable, else the v1 freezer.
    pub fn lifecycle_dir(&self) -> Option<&Path> {
        self.lifecycle().map(|(_, own)| own)
    }

    /// What [`SandboxCgroup::create`](super::SandboxCgroup::create) would enforce for `limits`,
    /// without creating anything (for `ringmcp sandbox check`). `create` returns the definitive
    /// report, from the writes it actually made.
    pub fn report(&self, limits: &Limits) -> LimitReport {
        let status = |c: Controller| {
            if !limits.requests(c) {
                return LimitStatus::NotRequested;
            }
            let (i, own) = match self.usable_for(c) {
                Ok(found) => found,
                Err(reason) => return LimitStatus::Unavailable { reason },
            };
            let h = &self.hierarchies[i];
            // Optional files (swap limits) can be checked where the host cgroup has the same
            // files a new child would have: any v1 directory, a non-root v2 one.
            let knowable = h.backend == Backend::V1 || own.join("cgroup.events").exists();
            let writes = limit_writes(c, h.backend, limits);
            let mut done = Vec::new();
            let mut caveats = Vec::new();
            for w in &writes {
                if w.caveat.is_some() && knowable && !own.join(w.file).exists() {
                    caveats.push(format!("no {}: {}", w.file, w.caveat.unwrap_or_default()));
                } else {
                    done.push(format!("{}={}", w.file, w.value));
                }
            }
            LimitStatus::enforced(h.backend, &done, &caveats)
        };
        LimitReport {
            memory: status(Controller::Memory),
            cpu: status(Controller::Cpu),
            pids: status(Controller::Pids),
            kill: self.predict_kill(),
        }
    }

    /// Index of the hierarchy carrying `c`: v2 if the host's v2 cgroup lists it, else v1.
    fn choose(&self, c: Controller) -> Result<usize, String> {
        let find =
            |b: Backend| self.hierarchies.iter().position(|h| h.backend == b && h.has(c.name()));
        find(Backend::V2).or_else(|| find(Backend::V1)).ok_or_else(|| self.missing(c))
    }

    fn missing(&self, c: Controller) -> String {
        if let Some(problem) = &self.problem {
            return problem.clone();
        }
        let v2: Vec<String> = self
            .hierarchies
            .iter()
            .filter(|h| h.backend == Backend::V2)
            .map(|h| match &h.own {
                Ok(own) => {
                    format!("cgroup v2 at {} offers [{}]", own.display(), h.controllers.join(" "))
                }
                Err(why) => format!("cgroup v2 unusable: {why}"),
            })
            .collect();
        let v2 = if v2.is_empty() { "no cgroup v2 mount".to_owned() } else { v2.join(", ") };
        format!("no cgroup hierarchy carries the {c} controller ({v2}; no cgroup v1 mount has it)")
    }

    /// Ok(own dir) if we may create cgroups below the host's cgroup in hierarchy `i`.
    pub(super) fn usable(&self, i: usize) -> Result<&Path, String> {
        let h = &self.hierarchies[i];
        let own = h.own.as_deref().map_err(Clone::clone)?;
        if h.read_only {
            return Err(format!(
                "{} ({}) is mounted read-only",
                h.mount_point.display(),
                h.backend
            ));
        }
        let parent = own.join(PARENT_DIR);
        let target = if parent.is_dir() { parent.as_path() } else { own };
        self.fs.check_writable(target).map_err(|e| {
            format!(
                "cannot create cgroups in {} ({}): {}",
                target.display(),
                h.backend,
                describe(&e)
            )
        })?;
        Ok(own)
    }

    /// The hierarchy for `c` and the host's cgroup in it, if we can expect to enforce `c` there;
    /// else why not.
    pub(super) fn usable_for(&self, c: Controller) -> Result<(usize, &Path), String> {
        let i = self.choose(c)?;
        let own = self.usable(i)?;
        if self.hierarchies[i].backend == Backend::V2
            && let Some(why) = v2_enable_blocked(own, c)
        {
            return Err(why);
        }
        Ok((i, own))
    }

    /// The hierarchy that carries placement and killing, and the host's cgroup in it: a usable
    /// v2 one (even with zero controllers), else a usable v1 freezer.
    pub(super) fn lifecycle(&self) -> Option<(usize, &Path)> {
        let usable = |b: Backend, ctl: Option<&str>| {
            self.hierarchies.iter().enumerate().find_map(|(i, h)| {
                let fits = h.backend == b && ctl.is_none_or(|c| h.has(c));
                if fits { self.usable(i).ok().map(|own| (i, own)) } else { None }
            })
        };
        usable(Backend::V2, None).or_else(|| usable(Backend::V1, Some("freezer")))
    }

    fn predict_kill(&self) -> LimitStatus {
        if let Some((i, own)) = self.lifecycle() {
            let h = &self.hierarchies[i];
            // The root cgroup has neither file; a non-root one (ours, or the ringmcp parent)
            // tells us what the kernel has.
            let parent = own.join(PARENT_DIR);
            let v2_dir = if parent.join("cgroup.events").exists() { parent.as_path() } else { own };
            let mechanism = match h.backend {
                Backend::V1 => "freezer: freeze, SIGKILL every member, thaw",
                Backend::V2 if v2_dir.join("cgroup.kill").exists() => "cgroup.kill",
                Backend::V2 if v2_dir.join("cgroup.events").exists() => {
                    "cgroup.freeze: freeze, SIGKILL every member, thaw (no cgroup.kill: kernel < 5.14)"
                }
                Backend::V2 => "cgroup.kill (kernel 5.14+; else cgroup.freeze and SIGKILL)",
            };
            return LimitStatus::Enforced { backend: h.backend, value: mechanism.to_owned() };
        }
        let usable: Vec<_> =
            (0..self.hierarchies.len()).filter(|&i| self.usable(i).is_ok()).collect();
        if usable.is_empty() {
            LimitStatus::Unavailable { reason: self.unusable_summary() }
        } else {
            signal_loop_status()
        }
    }

    /// Why no hierarchy at all can be used.
    pub(super) fn unusable_summary(&self) -> String {
        if let Some(problem) = &self.problem {
            return problem.clone();
        }
        if self.hierarchies.is_empty() {
            return "no cgroup filesystem with a usable controller is mounted".to_owned();
        }
        let reasons: Vec<String> =
            (0..self.hierarchies.len()).filter_map(|i| self.usable(i).err()).collect();
        format!("no writable cgroup hierarchy: {}", reasons.join("; "))
    }
}

impl fmt::Display for Layout {
    /// One line per controller and one for the lifecycle: backend and the host's cgroup dir.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in Controller::ALL {
            match self.choose(c) {
                Ok(i) => {
                    let h = &self.hierarchies[i];
                    match &h.own {
                        Ok(own) => writeln!(f, "{c}: {} at {}", h.backend, own.display())?,
                        Err(why) => writeln!(f, "{c}: {} ({why})", h.backend)?,
                    }
                }
                Err(why) => writeln!(f, "{c}: none ({why})")?,
            }
        }
        match self.lifecycle() {
            Some((i, own)) => {
                write!(f, "lifecycle: {} at {}", self.hierarchies[i].backend, own.display())
            }
            None => write!(f, "lifecycle: none"),
        }
    }
}

/// Why `c`, listed in the host's v2 `cgroup.controllers`, cannot be enabled for child cgroups,
/// if that is predictable: outside the root cgroup, enabling a controller in `subtree_control`
/// of a cgroup that holds processes fails with `EBUSY` (the "no internal processes" rule,
/// Documentation/admin-guide/cgroup-v2.rst), and the host's own cgroup holds the host.
fn v2_enable_blocked(own: &Path, c: Controller) -> Option<String> {
    let subtree = std::fs::read_to_string(own.join("cgroup.subtree_control")).unwrap_or_default();
    if subtree.split_whitespace().any(|s| s == c.name()) {
        return None;
    }
    // Only non-root cgroups have cgroup.events; the root is exempt from the rule.
    if !own.join("cgroup.events").exists() {
        return None;
    }
    let procs = std::fs::read_to_string(own.join("cgroup.procs")).unwrap_or_default();
    if procs.trim().is_empty() {
        return None;
    }
    Some(format!(
        "{c} is available on cgroup v2 but cannot be enabled below {}: that cgroup holds \
         processes (the host), and cgroup v2 refuses controllers in the subtree_control of a \
         non-root cgroup with processes (EBUSY); run the host in the root cgroup or in a \
         cgroup whose subtree_control already enables {c}",
        own.display()
    ))
}

/// One line of `/proc/self/cgroup`: `hierarchy-ID:controller-list:cgroup-path`.
struct Membership<'a> {
    hierarchy_id: &'a str,
    controllers: Vec<&'a str>,
    path: &'a str,
}

fn parse_proc_cgroup(text: &str) -> Vec<Membership<'_>> {
    text.lines()
        .filter_map(|line| {
            let mut it = line.splitn(3, ':');
            let hierarchy_id = it.next()?;
            let controllers = it.next()?;
            let path = it.next()?;
            let controllers = controllers.split(',').filter(|c| !c.is_empty()).collect();
            Some(Membership { hierarchy_id, controllers, path })
        })
        .collect()
}

/// The fields of one mountinfo line that matter here.
struct Mount<'a> {
    root: String,
    mount_point: String,
    options: &'a str,
    fstype: &'a str,
    super_options: &'a str,
}

/// `36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue`: fields 4
/// and 5 are the root within the filesystem and the mount point (octal-escaped), 6 the mount
/// options, then optional fields up to `-`, then fstype, source and super options.
fn parse_mountinfo_line(line: &str) -> Option<Mount<'_>> {
    let fields: Vec<&str> = line.split(' ').collect();
    let sep = fields.iter().skip(6).position(|f| *f == "-")? + 6;
    Some(Mount {
        root: unescape(fields.get(3)?),
        mount_point: unescape(fields.get(4)?),
        options: fields.get(5)?,
        fstype: fields.get(sep + 1)?,
        super_options: fields.get(sep + 3).copied().unwrap_or(""),
    })
}

/// Undoes mountinfo's `\ooo` escapes (space, tab, newline, backslash).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let oct = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match oct {
            Some(d) => {
                out.push(((d[0] - b'0') << 6) | ((d[1] - b'0') << 3) | (d[2] - b'0'));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `path` (from /proc/self/cgroup) relative to the mount's `root`, if it lies below it. A path
/// with `..` (our cgroup is outside our cgroup namespace's root) is not reachable.
fn relative_to_mount_root(root: &str, path: &str) -> Option<PathBuf> {
    let rel = Path::new(path).strip_prefix(root).ok()?;
    let inside = rel.components().all(|c| matches!(c, std::path::Component::Normal(_)));
    inside.then(|| rel.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_fields_and_escapes() {
        let m = parse_mountinfo_line(
            "41 31 0:38 /a\\040b /sys/fs/cgroup/uni\\134fied rw,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate",
        )
        .unwrap();
        assert_eq!(m.root, "/a b");
        assert_eq!(m.mount_point, "/sys/fs/cgroup/uni\\fied");
        assert_eq!(
            (m.options, m.fstype, m.super_options),
            ("rw,relatime", "cgroup2", "rw,nsdelegate")
        );
        assert!(parse_mountinfo_line("garbage").is_none());
    }

    #[test]
    fn cgroup_paths_relative_to_mount_root() {
        assert_eq!(relative_to_mount_root("/", "/a/b"), Some(PathBuf::from("a/b")));
        assert_eq!(relative_to_mount_root("/docker/x", "/docker/x"), Some(PathBuf::new()));
        assert_eq!(relative_to_mount_root("/docker/x", "/docker/x/y"), Some(PathBuf::from("y")));
        assert_eq!(relative_to_mount_root("/docker/x", "/docker/xy"), None);
        assert_eq!(relative_to_mount_root("/", "/../x"), None);
    }
}
