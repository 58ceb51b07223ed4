//! The cgroup logic against fake cgroupfs trees in a temp dir (Firecracker `MockCgroupFs` style):
//! backend choice, the exact files and values written, reports, stats, kill, cleanup.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;

mod layouts;

/// A temp dir, removed on drop.
struct TempTree {
    root: PathBuf,
}

impl TempTree {
    fn new() -> TempTree {
        static N: AtomicUsize = AtomicUsize::new(0);
        let root = std::env::temp_dir().join(format!(
            "ringmcp-cgtest.{}.{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        TempTree { root }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.root.join(p.trim_start_matches('/'))
    }

    /// Creates `p` (and its parents) with `content`.
    fn put(&self, p: &str, content: &str) {
        let path = self.path(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
}

impl Drop for TempTree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

type Files = &'static [(&'static str, &'static str)];

const V2_CORE: Files = &[
    ("cgroup.procs", ""),
    ("cgroup.events", "populated 0\nfrozen 0\n"),
    ("cgroup.kill", ""),
    ("cgroup.freeze", "0\n"),
    ("cgroup.subtree_control", ""),
    ("cgroup.controllers", ""),
];
const V2_CONTROLLERS: Files = &[
    ("memory.max", "max\n"),
    ("memory.swap.max", "max\n"),
    ("memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n"),
    ("memory.peak", "0\n"),
    ("cpu.max", "max 100000\n"),
    ("cpu.stat", "usage_usec 0\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n"),
    ("pids.max", "max\n"),
    ("pids.events", "max 0\n"),
];
const V1_MEMORY: Files = &[
    ("cgroup.procs", ""),
    ("memory.limit_in_bytes", "9223372036854771712\n"),
    ("memory.memsw.limit_in_bytes", "9223372036854771712\n"),
    ("memory.oom_control", "oom_kill_disable 1\nunder_oom 0\noom_kill 0\n"),
    ("memory.max_usage_in_bytes", "0\n"),
];
const V1_MEMORY_NO_SWAP_ACCOUNTING: Files = &[
    ("cgroup.procs", ""),
    ("memory.limit_in_bytes", "9223372036854771712\n"),
    ("memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n"),
    ("memory.max_usage_in_bytes", "0\n"),
];
const V1_CPU: Files = &[
    ("cgroup.procs", ""),
    ("cpu.cfs_period_us", "100000\n"),
    ("cpu.cfs_quota_us", "-1\n"),
    ("cpu.stat", "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n"),
];
const V1_PIDS: Files = &[("cgroup.procs", ""), ("pids.max", "max\n"), ("pids.events", "max 0\n")];
const V1_FREEZER: Files = &[("cgroup.procs", ""), ("freezer.state", "THAWED\n")];
const V1_PLAIN: Files = &[("cgroup.procs", "")];

/// A recording fake of cgroupfs over a temp dir: new directories get the control files of their
/// hierarchy, writes are logged (relative to the root) and simulate the kernel where a test
/// needs it (`cgroup.procs`, `cgroup.kill`, `cgroup.subtree_control`); failures are injected by
/// file name or path substring. It never sends a real signal.
#[derive(Debug, Default)]
struct FakeFs {
    root: PathBuf,
    /// (mount point, files) a new directory below the mount point gets.
    templates: Vec<(PathBuf, Vec<Files>)>,
    /// Writes to a file with this name fail with this errno.
    fail_writes: Vec<(&'static str, i32)>,
    /// mkdir of a path containing this substring fails with this errno.
    fail_mkdir: Vec<(&'static str, i32)>,
    /// Like `fail_mkdir`, once each.
    fail_mkdir_once: Mutex<Vec<(&'static str, i32)>>,
    /// `check_writable` fails with this errno.
    deny: Option<i32>,
    /// Pids that are alive.
    alive: Vec<i32>,
    writes: Mutex<Vec<(String, String)>>,
    killed: Mutex<Vec<i32>>,
}

fn errno(code: i32) -> io::Error {
    io::Error::from_raw_os_error(code)
}

impl FakeFs {
    fn rel(&self, p: &Path) -> String {
        p.strip_prefix(&self.root).unwrap_or(p).display().to_string()
    }

    /// The logged writes whose path contains `needle`.
    fn writes_to(&self, needle: &str) -> Vec<(String, String)> {
        let writes = self.writes.lock().unwrap();
        writes.iter().filter(|(p, _)| p.contains(needle)).cloned().collect()
    }

    fn killed(&self) -> Vec<i32> {
        self.killed.lock().unwrap().clone()
    }

    /// Removes `pids` from every `cgroup.procs` of the tree (they died).
    fn reap(&self, pids: &[i32]) {
        fn walk(dir: &Path, pids: &[i32]) {
            let procs = dir.join("cgroup.procs");
            if let Ok(text) = std::fs::read_to_string(&procs) {
                let left: String = parse_pids(&text)
                    .into_iter()
                    .filter(|p| !pids.contains(p))
                    .map(|p| format!("{p}\n"))
                    .collect();
                std::fs::write(&procs, left).unwrap();
            }
            for sub in subdirs(dir) {
                walk(&sub, pids);
            }
        }
        walk(&self.root, pids);
    }
}

impl CgroupFs for FakeFs {
    fn mkdir(&self, dir: &Path) -> io::Result<()> {
        let s = dir.display().to_string();
        if let Some(&(_, e)) = self.fail_mkdir.iter().find(|(n, _)| s.contains(n)) {
            return Err(errno(e));
        }
        {
            let mut once = self.fail_mkdir_once.lock().unwrap();
            if let Some(i) = once.iter().position(|(n, _)| s.contains(n)) {
                return Err(errno(once.remove(i).1));
            }
        }
        std::fs::create_dir(dir)?;
        let template = self
            .templates
            .iter()
            .filter(|(mount, _)| dir.starts_with(mount))
            .max_by_key(|(mount, _)| mount.as_os_str().len());
        for files in template.map(|(_, f)| f.as_slice()).unwrap_or_default() {
            for (name, content) in *files {
                std::fs::write(dir.join(name), content)?;
            }
        }
        Ok(())
    }

    fn rmdir(&self, dir: &Path) -> io::Result<()> {
        if !dir.exists() {
            return Err(errno(libc::ENOENT));
        }
        if !subdirs(dir).is_empty() {
            return Err(errno(libc::EBUSY));
        }
        let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
        if !parse_pids(&procs).is_empty() {
            return Err(errno(libc::EBUSY));
        }
        std::fs::remove_dir_all(dir)
    }

    fn write(&self, file: &Path, value: &str) -> io::Result<()> {
        let name = file.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if let Some(&(_, e)) = self.fail_writes.iter().find(|(n, _)| *n == name) {
            return Err(errno(e));
        }
        if !file.is_file() {
            return Err(errno(libc::ENOENT));
        }
        self.writes.lock().unwrap().push((self.rel(file), value.to_owned()));
        let old = std::fs::read_to_string(file)?;
        match name {
            "cgroup.procs" => std::fs::write(file, format!("{old}{value}\n")),
            "cgroup.subtree_control" => {
                let mut set: BTreeSet<&str> = old.split_whitespace().collect();
                set.insert(value.trim_start_matches('+'));
                std::fs::write(file, set.into_iter().collect::<Vec<_>>().join(" "))
            }
            "cgroup.kill" => {
                let dir = file.parent().unwrap();
                let procs = std::fs::read_to_string(dir.join("cgroup.procs"))?;
                self.reap(&parse_pids(&procs));
                std::fs::write(dir.join("cgroup.events"), "populated 0\nfrozen 0\n")
            }
            _ => std::fs::write(file, value),
        }
    }

    fn check_writable(&self, dir: &Path) -> io::Result<()> {
        match self.deny {
            Some(e) => Err(errno(e)),
            None if !dir.is_dir() => Err(errno(libc::ENOENT)),
            None => Ok(()),
        }
    }

    fn kill_member(&self, pid: i32, _procs: &Path) -> io::Result<()> {
        self.killed.lock().unwrap().push(pid);
        self.reap(&[pid]);
        Ok(())
    }

    fn is_alive(&self, pid: i32) -> bool {
        self.alive.contains(&pid)
    }
}

/// A fake host: the tree, the fake fs and the layout probed from it.
struct Fake {
    tree: TempTree,
    fs: Arc<FakeFs>,
    layout: Layout,
}

/// Builds a fake host from mountinfo and /proc/self/cgroup texts; `setup` creates the host's
/// own cgroup files and configures the fake (templates are given relative to the root).
fn fake(
    mountinfo: &str,
    cgroup: &str,
    templates: &[(&str, &[Files])],
    setup: impl FnOnce(&TempTree, &mut FakeFs),
) -> Fake {
    let tree = TempTree::new();
    let mut fs = FakeFs {
        root: tree.root.clone(),
        templates: templates.iter().map(|(m, f)| (tree.path(m), f.to_vec())).collect(),
        ..FakeFs::default()
    };
    setup(&tree, &mut fs);
    let fs = Arc::new(fs);
    let layout = Layout::from_sources(mountinfo, cgroup, &tree.root).with_fs(fs.clone());
    Fake { tree, fs, layout }
}

// ---- (b) hybrid, like our CI machines: v2 without controllers, everything on v1 ----

const HYBRID_MOUNTINFO: &str = "\
22 1 253:1 / / rw,relatime - ext4 /dev/vda rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
const HYBRID_CGROUP: &str = "\
9:name=systemd:/
8:pids:/
6:freezer:/
4:memory:/process_api/abc
3:cpuset:/
2:cpuacct:/
1:cpu:/
0::/
";
const MEM: &str = "sys/fs/cgroup/memory/process_api/abc";

fn hybrid(setup: impl FnOnce(&TempTree, &mut FakeFs)) -> Fake {
    fake(
        HYBRID_MOUNTINFO,
        HYBRID_CGROUP,
        &[
            ("/sys/fs/cgroup/unified", &[V2_CORE]),
            ("/sys/fs/cgroup/memory", &[V1_MEMORY]),
            ("/sys/fs/cgroup/cpu", &[V1_CPU]),
            ("/sys/fs/cgroup/cpuacct", &[V1_PLAIN]),
            ("/sys/fs/cgroup/pids", &[V1_PIDS]),
            ("/sys/fs/cgroup/freezer", &[V1_FREEZER]),
        ],
        |tree, fs| {
            // The v2 root: no cgroup.events (only non-root cgroups have one), controllers: hugetlb.
            tree.put("sys/fs/cgroup/unified/cgroup.controllers", "hugetlb\n");
            tree.put("sys/fs/cgroup/unified/cgroup.subtree_control", "");
            tree.put("sys/fs/cgroup/unified/cgroup.procs", "1\n");
            tree.put(&format!("{MEM}/memory.memsw.limit_in_bytes"), "9223372036854771712\n");
            tree.put(&format!("{MEM}/memory.oom_control"), "oom_kill_disable 0\n");
            tree.put(&format!("{MEM}/cgroup.procs"), "1\n");
            for h in ["cpu", "cpuacct", "pids", "freezer"] {
                tree.put(&format!("sys/fs/cgroup/{h}/cgroup.procs"), "1\n");
            }
            setup(tree, fs);
        },
    )
}

/// The directory of `cg` whose path contains `needle`.
fn dir_of<'a>(cg: &'a SandboxCgroup, needle: &str) -> &'a Path {
    cg.dirs().map(|(_, p)| p).find(|p| p.display().to_string().contains(needle)).unwrap()
}

fn enforced(backend: Backend, value: &str) -> LimitStatus {
    LimitStatus::Enforced { backend, value: value.to_owned() }
}

fn reason(status: &LimitStatus) -> &str {
    match status {
        LimitStatus::Unavailable { reason } => reason,
        other => panic!("expected Unavailable, got {other:?}"),
    }
}

#[test]
fn hybrid_chooses_v1_per_controller_and_v2_for_the_lifecycle() {
    let f = hybrid(|_, _| {});
    let l = &f.layout;
    assert_eq!(l.backend(Controller::Memory), Some(Backend::V1));
    assert_eq!(l.backend(Controller::Cpu), Some(Backend::V1));
    assert_eq!(l.backend(Controller::Pids), Some(Backend::V1));
    assert_eq!(l.cgroup_dir(Controller::Memory), Some(f.tree.path(MEM).as_path()));
    assert_eq!(l.cgroup_dir(Controller::Cpu), Some(f.tree.path("sys/fs/cgroup/cpu").as_path()));
    assert_eq!(l.lifecycle_dir(), Some(f.tree.path("sys/fs/cgroup/unified").as_path()));
    let kept: Vec<String> = l.hierarchies.iter().map(|h| f.fs.rel(&h.mount_point)).collect();
    assert_eq!(
        kept,
        ["cpu", "memory", "freezer", "pids", "unified"].map(|h| format!("sys/fs/cgroup/{h}")),
        "hierarchies we never use (cpuacct, cpuset, name=systemd) are left out"
    );

    let report = l.report(&Limits::default());
    assert_eq!(
        report.memory,
        enforced(
            Backend::V1,
            "memory.limit_in_bytes=268435456, memory.memsw.limit_in_bytes=268435456, \
             memory.oom_control=0"
        )
    );
    assert_eq!(
        report.cpu,
        enforced(Backend::V1, "cpu.cfs_period_us=100000, cpu.cfs_quota_us=50000")
    );
    assert_eq!(report.pids, enforced(Backend::V1, "pids.max=256"));
    // The v2 root has no cgroup.kill to look at: the prediction says what it depends on.
    assert!(
        matches!(&report.kill, LimitStatus::Enforced { backend: Backend::V2, value } if value.starts_with("cgroup.kill")),
        "{report}"
    );
    assert_eq!(l.report(&Limits::NONE).memory, LimitStatus::NotRequested);
}

#[test]
fn hybrid_create_writes_exactly_the_v1_files() {
    let f = hybrid(|_, _| {});
    let limits = Limits {
        memory_max: Some(128 << 20),
        cpu_max: Some(CpuMax { quota_us: 20_000, period_us: 100_000 }),
        pids_max: Some(16),
    };
    let (cg, report) = SandboxCgroup::create(&f.layout, &limits).unwrap();
    let name = cg.name().to_owned();
    assert!(name.starts_with(&format!("ringmcp-sbx.{}.", std::process::id())), "{name}");

    let dirs: Vec<(Backend, PathBuf)> = cg.dirs().map(|(b, p)| (b, p.to_path_buf())).collect();
    let expect = |h: &str| f.tree.path(&format!("{h}/ringmcp/{name}"));
    assert_eq!(
        dirs,
        vec![
            (Backend::V2, expect("sys/fs/cgroup/unified")),
            (Backend::V1, expect("sys/fs/cgroup/cpu")),
            (Backend::V1, expect(MEM)),
            (Backend::V1, expect("sys/fs/cgroup/pids")),
        ],
        "v2 first; no freezer or cpuacct directory when v2 carries the lifecycle"
    );

    let w = |h: &str, file: &str, v: &str| (format!("{h}/ringmcp/{name}/{file}"), v.to_owned());
    let all = f.fs.writes_to("");
    assert_eq!(
        all,
        vec![
            w(MEM, "memory.limit_in_bytes", "134217728"),
            w(MEM, "memory.memsw.limit_in_bytes", "134217728"),
            w(MEM, "memory.oom_control", "0"),
            w("sys/fs/cgroup/cpu", "cpu.cfs_period_us", "100000"),
            w("sys/fs/cgroup/cpu", "cpu.cfs_quota_us", "20000"),
            w("sys/fs/cgroup/pids", "pids.max", "16"),
        ],
        "no subtree_control write: v2 carries no controller here"
    );
    assert_eq!(
        report.memory,
        enforced(
            Backend::V1,
            "memory.limit_in_bytes=134217728, memory.memsw.limit_in_bytes=134217728, \
             memory.oom_control=0"
        )
    );
    assert_eq!(
        report.cpu,
        enforced(Backend::V1, "cpu.cfs_period_us=100000, cpu.cfs_quota_us=20000")
    );
    assert_eq!(report.pids, enforced(Backend::V1, "pids.max=16"));
    assert_eq!(report.kill, enforced(Backend::V2, "cgroup.kill"));
    assert!(cg.v2_dir_fd().is_some());

    // Placement: every hierarchy, v2 first.
    cg.place(4242).unwrap();
    let procs: Vec<String> = f.fs.writes_to("cgroup.procs").into_iter().map(|(p, _)| p).collect();
    assert_eq!(
        procs,
        dirs.iter().map(|(_, d)| f.fs.rel(&d.join("cgroup.procs"))).collect::<Vec<_>>()
    );
    assert_eq!(cg.pids(), vec![4242]);

    // Kill: cgroup.kill, no per-pid signal needed.
    cg.kill().unwrap();
    assert_eq!(f.fs.writes_to("cgroup.kill"), vec![w("sys/fs/cgroup/unified", "cgroup.kill", "1")]);
    assert!(f.fs.killed().is_empty());
    assert!(cg.pids().is_empty());

    drop(cg);
    for (_, d) in &dirs {
        assert!(!d.exists(), "{} left behind", d.display());
        assert!(d.parent().unwrap().is_dir(), "the shared ringmcp parent stays");
    }
}

#[test]
fn hybrid_stats_are_parsed_from_the_v1_files() {
    let f = hybrid(|_, _| {});
    let (cg, _) = SandboxCgroup::create(&f.layout, &Limits::default()).unwrap();
    let mem = dir_of(&cg, "/memory/");
    std::fs::write(mem.join("memory.oom_control"), "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n")
        .unwrap();
    std::fs::write(mem.join("memory.max_usage_in_bytes"), "134217728\n").unwrap();
    std::fs::write(mem.join("cgroup.procs"), "10\n").unwrap();
    std::fs::write(dir_of(&cg, "/pids/").join("pids.events"), "max 7\n").unwrap();
    std::fs::write(
        dir_of(&cg, "/cpu/").join("cpu.stat"),
        "nr_periods 10\nnr_throttled 4\nthrottled_time 2500000\n",
    )
    .unwrap();
    std::fs::write(dir_of(&cg, "/unified/").join("cgroup.procs"), "10\n11\n").unwrap();
    assert_eq!(
        cg.stats(),
        CgroupStats {
            oom_kills: Some(3),
            pids_max_hits: Some(7),
            nr_throttled: Some(4),
            throttled_usec: Some(2500),
            memory_peak_bytes: Some(134217728),
            procs: 2,
        }
    );
    assert_eq!(cg.pids(), vec![10, 11]);
}

#[test]
fn failed_writes_make_that_limit_unavailable_with_file_and_errno() {
    let f = hybrid(|_, fs| {
        fs.fail_writes = vec![("pids.max", libc::EINVAL), ("memory.oom_control", libc::EACCES)];
    });
    let (cg, report) = SandboxCgroup::create(&f.layout, &Limits::default()).unwrap();
    let why = reason(&report.pids);
    assert!(why.contains("pids.max") && why.contains("EINVAL") && why.contains(cg.name()), "{why}");
    let strict = [Controller::Memory, Controller::Pids];
    let refused: Vec<Controller> = report.unenforced(&strict).map(|(c, _)| c).collect();
    assert_eq!(refused, [Controller::Pids], "what a strict profile refuses to start with");
    // An optional write failing keeps the limit, with a caveat naming it.
    let LimitStatus::Enforced { value, .. } = &report.memory else { panic!("{report}") };
    assert!(value.contains("memory.oom_control not set (EACCES"), "{value}");
    assert!(report.cpu.is_enforced());
}

#[test]
fn a_hierarchy_that_cannot_be_created_only_loses_its_limits() {
    let f = hybrid(|_, fs| fs.fail_mkdir = vec![("/memory/", libc::EACCES)]);
    let (cg, report) = SandboxCgroup::create(&f.layout, &Limits::default()).unwrap();
    let why = reason(&report.memory);
    assert!(why.contains("creating") && why.contains("ringmcp") && why.contains("EACCES"), "{why}");
    assert!(report.cpu.is_enforced() && report.pids.is_enforced());
    assert_eq!(cg.dirs().count(), 3);
}

#[test]
fn nothing_created_anywhere_is_an_error_and_leaves_nothing() {
    let f = hybrid(|_, fs| fs.fail_mkdir = vec![("ringmcp-sbx.", libc::ENOSPC)]);
    let err = SandboxCgroup::create(&f.layout, &Limits::default()).unwrap_err();
    assert!(matches!(&err, CgroupError::Mkdir { .. }), "{err}");
    assert!(err.to_string().contains("ENOSPC"), "{err}");
}

#[test]
fn a_name_collision_takes_the_next_name_and_undoes_the_first() {
    let f = hybrid(|_, fs| {
        fs.fail_mkdir_once = Mutex::new(vec![("pids/ringmcp/ringmcp-sbx.", libc::EEXIST)]);
    });
    let (cg, _) = SandboxCgroup::create(&f.layout, &Limits::default()).unwrap();
    for (_, dir) in cg.dirs() {
        let siblings: Vec<PathBuf> = subdirs(dir.parent().unwrap());
        assert_eq!(siblings, vec![dir.to_path_buf()], "only the final name exists");
    }
}

// ---- small pieces ----

#[test]
fn sandbox_cgroups_can_move_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<SandboxCgroup>();
    send_sync::<Layout>();
}

#[test]
fn names_and_flat_keyed_files() {
    assert_eq!(host_pid_of("ringmcp-sbx.123.4"), Some(123));
    assert_eq!(host_pid_of("ringmcp-sbx.123"), None);
    assert_eq!(host_pid_of("ringmcp-sbx.0.1"), None);
    assert_eq!(host_pid_of("ringmcp-sbx.1.x"), None);
    assert_eq!(host_pid_of("other.1.2"), None);
    let text = "oom_kill_disable 0\nunder_oom 0\noom_kill 5\n";
    assert_eq!(keyed(text, "oom_kill"), Some(5));
    assert_eq!(keyed(text, "oom"), None);
    assert_eq!(parse_pids("1\n\n 22 \nx\n-3\n"), vec![1, 22]);
}

#[test]
fn defaults_and_display() {
    let d = Limits::default();
    assert_eq!(d.memory_max, Some(256 << 20));
    assert_eq!(d.cpu_max, Some(CpuMax { quota_us: 50_000, period_us: 100_000 }));
    assert_eq!(d.pids_max, Some(256));
    let report = LimitReport {
        memory: LimitStatus::Unavailable { reason: "no memory controller".into() },
        cpu: LimitStatus::NotRequested,
        pids: enforced(Backend::V1, "pids.max=16"),
        kill: LimitStatus::BestEffort { mechanism: "loop".into(), caveat: "races".into() },
    };
    assert_eq!(
        report.to_string(),
        "memory: NOT enforced: no memory controller\ncpu: not requested\n\
         pids: enforced by cgroup v1 (pids.max=16)\nkill: best effort: loop (caveat: races)"
    );
    let err = CgroupError::Place {
        pid: 7,
        path: "/x/cgroup.procs".into(),
        source: io::Error::from_raw_os_error(libc::EBUSY),
    };
    assert_eq!(
        err.to_string(),
        "placing pid 7 into /x/cgroup.procs: EBUSY (Device or resource busy)"
    );
}
