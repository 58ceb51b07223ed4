//! The cgroup layer against this machine's real cgroupfs (root; on our CI hosts memory, cpu and
//! pids are on cgroup v1 and v2 has no controller). Each test probes what it needs and skips
//! with a counted skip (`crate::testkit::skip`) otherwise. They run one at a time: they measure throttling,
//! and the last checks that no sandbox directory of this process is left.

use std::io::{BufRead, BufReader, Write as _};
use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::*;

use crate::testkit::{SkipKind::Machine, skip};

static SERIAL: Mutex<()> = Mutex::new(());

fn euid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

/// What this machine's cgroup mounts offer, read from `/proc/self/mountinfo` apart from the
/// code under test: the v2 mount point (with its controllers and whether it has
/// `cgroup.kill`), and the v1 controllers mounted. Skips are decided by this, never by what
/// the tested layout found, so that a probe that misses a controller fails instead of
/// skipping.
#[derive(Debug, Default)]
struct Mounts {
    v2: Option<PathBuf>,
    v2_controllers: Vec<String>,
    v2_kill: bool,
    v1: Vec<String>,
}

impl Mounts {
    fn read() -> Mounts {
        let mut m = Mounts::default();
        let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        for line in info.lines() {
            let Some((left, right)) = line.split_once(" - ") else { continue };
            let mut fields = right.split_whitespace();
            let (fstype, options) = (fields.next(), fields.nth(1).unwrap_or(""));
            match fstype {
                Some("cgroup2") if m.v2.is_none() => {
                    let point = PathBuf::from(left.split_whitespace().nth(4).unwrap_or("/"));
                    let listed = std::fs::read_to_string(point.join("cgroup.controllers"));
                    m.v2_controllers =
                        listed.unwrap_or_default().split_whitespace().map(str::to_owned).collect();
                    m.v2_kill = point.join("cgroup.kill").exists()
                        || std::fs::read_dir(&point)
                            .into_iter()
                            .flatten()
                            .flatten()
                            .any(|e| e.path().join("cgroup.kill").exists());
                    m.v2 = Some(point);
                }
                Some("cgroup") => m.v1.extend(options.split(',').map(str::to_owned)),
                _ => {}
            }
        }
        m
    }

    fn offers(&self, c: Controller) -> bool {
        self.v2_controllers.iter().chain(&self.v1).any(|n| n == c.name())
    }
}

/// The lock and the layout, or `None` after printing why `test` cannot run here.
fn setup(
    test: &str,
    layout: impl FnOnce() -> Layout,
    needs: &[Controller],
) -> Option<(MutexGuard<'static, ()>, Layout)> {
    let guard = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    if euid() != Some(0) {
        skip(Machine, format!("{test}: needs root to create cgroups (euid {:?})", euid()));
        return None;
    }
    crate::testkit::python3()?;
    let layout = layout();
    let machine = Mounts::read();
    for &c in needs {
        match (layout.backend(c), machine.offers(c)) {
            (Some(_), _) => {}
            (None, false) => {
                skip(Machine, format!("{test}: no cgroup hierarchy carries {c} here: {machine:?}"));
                return None;
            }
            (None, true) => {
                panic!(
                    "{test}: the machine mounts {c} ({machine:?}) but the layout found none: {layout}"
                )
            }
        }
    }
    Some((guard, layout))
}

/// This machine's layout without cgroup v2, to exercise the v1 lifecycle (freezer).
fn v1_only_layout() -> Layout {
    let mountinfo: String = std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter(|l| !l.contains(" - cgroup2 "))
        .map(|l| format!("{l}\n"))
        .collect();
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    Layout::from_sources(&mountinfo, &cgroup, Path::new("/"))
}

/// A python child blocked reading one byte of stdin, so it can be placed before it does
/// anything (the parent-places-while-child-waits pattern; docs/sandbox.md, "Layers").
fn python_waiting(script: &str) -> Child {
    Command::new(crate::testkit::python3().expect("checked by setup"))
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn pid_of(child: &Child) -> i32 {
    i32::try_from(child.id()).unwrap()
}

fn release(child: &mut Child) {
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"x").unwrap();
}

fn finish(child: Child) -> (Output, String) {
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (out, stdout)
}

fn dirs_of(cg: &SandboxCgroup) -> Vec<PathBuf> {
    cg.dirs().map(|(_, p)| p.to_path_buf()).collect()
}

/// docs/sandbox.md, item 42.
#[test]
fn real_memory_limit_oom_kills_the_allocation() {
    let test = "real_memory_limit_oom_kills_the_allocation";
    let Some((_serial, layout)) = setup(test, Layout::probe, &[Controller::Memory]) else {
        return;
    };
    let limits = Limits { memory_max: Some(128 << 20), ..Limits::NONE };
    let (cg, report) = SandboxCgroup::create(&layout, &limits).unwrap();
    eprintln!("{test}: memory {}", report.memory);
    assert!(report.memory.is_enforced(), "{report}");
    // 1 GiB of touched pages (bytes repetition memsets) against a 128 MiB limit without swap.
    let mut child =
        python_waiting("import sys\nsys.stdin.read(1)\nb = b'\\x01' * (1 << 30)\nprint(len(b))");
    cg.place(pid_of(&child)).unwrap();
    release(&mut child);
    let (out, stdout) = finish(child);
    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{out:?}");
    assert!(stdout.is_empty(), "the allocation completed: {stdout}");
    let stats = cg.stats();
    eprintln!("{test}: {stats:?}");
    assert!(stats.oom_kills >= Some(1), "{stats:?}");
    let peak = stats.memory_peak_bytes.unwrap();
    assert!(peak > 64 << 20 && peak <= 128 << 20, "peak {peak}");
}

/// docs/sandbox.md, item 44.
#[test]
fn real_pids_limit_refuses_threads_past_the_limit() {
    let test = "real_pids_limit_refuses_threads_past_the_limit";
    let Some((_serial, layout)) = setup(test, Layout::probe, &[Controller::Pids]) else {
        return;
    };
    let limits = Limits { pids_max: Some(16), ..Limits::NONE };
    let (cg, report) = SandboxCgroup::create(&layout, &limits).unwrap();
    eprintln!("{test}: pids {}", report.pids);
    assert!(report.pids.is_enforced(), "{report}");
    let script = "\
import sys, threading
sys.stdin.read(1)
ev = threading.Event()
n = 0
for _ in range(100):
    try:
        threading.Thread(target=ev.wait).start()
    except RuntimeError:
        break
    n += 1
print(n, flush=True)
ev.set()
";
    let mut child = python_waiting(script);
    cg.place(pid_of(&child)).unwrap();
    release(&mut child);
    let (out, stdout) = finish(child);
    assert!(out.status.success(), "{out:?}");
    let started: u32 = stdout.parse().unwrap();
    eprintln!("{test}: {started} threads started besides the main one");
    assert!((1..=15).contains(&started), "{started} threads started under pids.max=16");
    let stats = cg.stats();
    assert!(stats.pids_max_hits > Some(0), "{stats:?}");
    // The host is unaffected: it can still start threads and processes.
    assert_eq!(std::thread::spawn(|| 7).join().unwrap(), 7);
    assert!(Command::new("/bin/true").status().unwrap().success());
}

/// docs/sandbox.md, item 45.
#[test]
fn real_cpu_quota_throttles_a_busy_loop() {
    let test = "real_cpu_quota_throttles_a_busy_loop";
    let Some((_serial, layout)) = setup(test, Layout::probe, &[Controller::Cpu]) else {
        return;
    };
    let limits =
        Limits { cpu_max: Some(CpuMax { quota_us: 20_000, period_us: 100_000 }), ..Limits::NONE };
    let (cg, report) = SandboxCgroup::create(&layout, &limits).unwrap();
    eprintln!("{test}: cpu {}", report.cpu);
    assert!(report.cpu.is_enforced(), "{report}");
    let script = "\
import sys, time
sys.stdin.read(1)
t0 = time.monotonic()
c0 = time.process_time()
while time.monotonic() - t0 < 1.5:
    pass
print(time.process_time() - c0, flush=True)
";
    let mut child = python_waiting(script);
    cg.place(pid_of(&child)).unwrap();
    release(&mut child);
    let (out, stdout) = finish(child);
    assert!(out.status.success(), "{out:?}");
    let cpu: f64 = stdout.parse().unwrap();
    let stats = cg.stats();
    eprintln!("{test}: {cpu:.3} s of CPU in 1.5 s at 20 %; {stats:?}");
    assert!(stats.nr_throttled > Some(0), "{stats:?}");
    assert!(stats.throttled_usec > Some(0), "{stats:?}");
    assert!(cpu < 0.6, "{cpu} s of CPU: not throttled to 20 %");
}

/// Runs docs/sandbox.md, item 47 with `layout`: a double-forked `setsid` grandchild dies too, and
/// every directory is gone after drop.
fn kill_reaches_a_setsid_grandchild(
    test: &str,
    layout: impl FnOnce() -> Layout,
    expect_kill: &str,
) {
    let Some((_serial, layout)) = setup(test, layout, &[]) else { return };
    let (cg, report) = SandboxCgroup::create(&layout, &Limits::default()).unwrap();
    eprintln!("{test}:\n{report}");
    // Whether the machine offers the kill method is read apart from the code under test.
    let machine = Mounts::read();
    let offered = match expect_kill {
        "cgroup.kill" => machine.v2_kill,
        _ => machine.v1.iter().any(|c| c == "freezer"),
    };
    match &report.kill {
        LimitStatus::Enforced { value, .. } if value.starts_with(expect_kill) => {}
        other if offered => {
            panic!("{test}: the machine offers {expect_kill} ({machine:?}) but kill is {other}")
        }
        other => {
            skip(Machine, format!("{test}: kill is {other}, this machine has no {expect_kill}"));
            return;
        }
    }
    let script = "\
import os, sys, time
sys.stdin.read(1)
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.write(w, b'%d\\n' % os.getpid())
        time.sleep(1000)
    os._exit(0)
os.wait()
print(os.read(r, 64).decode().strip(), flush=True)
time.sleep(1000)
";
    let mut child = python_waiting(script);
    let pid = pid_of(&child);
    cg.place(pid).unwrap();
    release(&mut child);
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap()).read_line(&mut line).unwrap();
    let grandchild: i32 = line.trim().parse().unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{grandchild}/stat")).unwrap();
    let ppid: i32 =
        stat.rsplit(')').next().unwrap().split_whitespace().nth(1).unwrap().parse().unwrap();
    assert_ne!(ppid, pid, "the grandchild should be re-parented (double fork)");
    let members = cg.pids();
    assert!(members.contains(&pid) && members.contains(&grandchild), "{members:?}");

    cg.kill().unwrap();
    assert!(cg.pids().is_empty());
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
    // Reaped by its new parent, or at least dead (a zombie).
    let gone = |p: i32| match std::fs::read_to_string(format!("/proc/{p}/stat")) {
        Err(_) => true,
        Ok(s) => s.rsplit(')').next().unwrap().split_whitespace().next() == Some("Z"),
    };
    let deadline = Instant::now() + Duration::from_secs(2);
    while !gone(grandchild) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(gone(grandchild), "grandchild {grandchild} survived the kill");

    let dirs = dirs_of(&cg);
    eprintln!("{test}: created {dirs:#?}");
    drop(cg);
    for d in dirs {
        assert!(!d.exists(), "{} left behind", d.display());
    }
}

#[test]
fn real_kill_with_cgroup_kill_reaches_a_setsid_grandchild() {
    kill_reaches_a_setsid_grandchild(
        "real_kill_with_cgroup_kill_reaches_a_setsid_grandchild",
        Layout::probe,
        "cgroup.kill",
    );
}

#[test]
fn real_kill_with_the_v1_freezer_reaches_a_setsid_grandchild() {
    kill_reaches_a_setsid_grandchild(
        "real_kill_with_the_v1_freezer_reaches_a_setsid_grandchild",
        v1_only_layout,
        "freezer",
    );
}

/// docs/sandbox.md, item 50: create, place, drop, 50 times; nothing is left.
#[test]
fn real_create_drop_cycles_leave_nothing() {
    let test = "real_create_drop_cycles_leave_nothing";
    let Some((_serial, layout)) = setup(test, Layout::probe, &[]) else { return };
    for _ in 0..50 {
        let (cg, _) = SandboxCgroup::create(&layout, &Limits::default()).unwrap();
        let mut child = Command::new("/bin/sleep").arg("100").spawn().unwrap();
        cg.place(pid_of(&child)).unwrap();
        let dirs = dirs_of(&cg);
        drop(cg);
        assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
        for d in dirs {
            assert!(!d.exists(), "{} left behind", d.display());
        }
    }
    let mine = format!("{NAME_PREFIX}{}.", std::process::id());
    for h in &layout.hierarchies {
        let Ok(own) = &h.own else { continue };
        for d in subdirs(&own.join(PARENT_DIR)) {
            let name = d.file_name().unwrap().to_string_lossy().into_owned();
            assert!(!name.starts_with(&mine), "{} left behind", d.display());
        }
    }
}

/// `clone3(CLONE_INTO_CGROUP)` with [`SandboxCgroup::v2_dir_fd`]: the child is born inside.
#[test]
fn real_clone3_into_the_v2_directory() {
    let test = "real_clone3_into_the_v2_directory";
    let Some((_serial, layout)) = setup(test, Layout::probe, &[]) else { return };
    let (cg, _) = SandboxCgroup::create(&layout, &Limits::NONE).unwrap();
    let Some(fd) = cg.v2_dir_fd() else {
        let machine = Mounts::read();
        assert!(
            machine.v2.is_none(),
            "{test}: cgroup v2 is mounted ({machine:?}) but no v2 directory was made: {layout}"
        );
        skip(Machine, format!("{test}: no cgroup v2 here: {layout}"));
        return;
    };
    /// `struct clone_args` up to `cgroup` (CLONE_ARGS_SIZE_VER2), linux/sched.h.
    #[repr(C)]
    #[derive(Default)]
    struct CloneArgs {
        flags: u64,
        pidfd: u64,
        child_tid: u64,
        parent_tid: u64,
        exit_signal: u64,
        stack: u64,
        stack_size: u64,
        tls: u64,
        set_tid: u64,
        set_tid_size: u64,
        cgroup: u64,
    }
    const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;
    let args = CloneArgs {
        flags: CLONE_INTO_CGROUP,
        exit_signal: libc::SIGCHLD as u64,
        cgroup: u64::try_from(fd.as_raw_fd()).unwrap(),
        ..CloneArgs::default()
    };
    // SAFETY: `args` is a valid clone_args of the size passed; without CLONE_VM and with no stack
    // this is a fork. The child (a copy of this multi-threaded process) only calls pause(2), which
    // is async-signal-safe, until it is killed.
    let ret = unsafe {
        libc::syscall(libc::SYS_clone3, &raw const args, std::mem::size_of::<CloneArgs>())
    };
    if ret == 0 {
        loop {
            // SAFETY: pause(2) takes no arguments and is async-signal-safe.
            unsafe { libc::pause() };
        }
    }
    assert!(ret > 0, "clone3: {}", io::Error::last_os_error());
    let child = i32::try_from(ret).unwrap();
    let in_cgroup = cg.pids().contains(&child);
    let own_view = std::fs::read_to_string(format!("/proc/{child}/cgroup")).unwrap_or_default();
    cg.kill().unwrap();
    let mut status = 0;
    // SAFETY: waitpid on our own child with a valid out-pointer.
    let waited = unsafe { libc::waitpid(child, &raw mut status, 0) };
    assert_eq!(waited, child);
    assert!(
        in_cgroup,
        "child not in {:?}; its /proc/pid/cgroup:\n{own_view}",
        cg.dirs().collect::<Vec<_>>()
    );
    assert!(own_view.contains(&format!("0::/{PARENT_DIR}/{}", cg.name())), "{own_view}");
    assert!(libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGKILL);
}

/// [`remove_stale`] kills what runs in a dead host's sandbox cgroup and removes it.
#[test]
fn real_remove_stale_cleans_up_after_a_dead_host() {
    let test = "real_remove_stale_cleans_up_after_a_dead_host";
    let Some((_serial, layout)) = setup(test, Layout::probe, &[Controller::Pids]) else {
        return;
    };
    // pid_max itself is never handed out: a host pid that is certainly dead.
    let dead: i32 =
        std::fs::read_to_string("/proc/sys/kernel/pid_max").unwrap().trim().parse().unwrap();
    let name = format!("{NAME_PREFIX}{dead}.0");
    let mut dirs = vec![layout.cgroup_dir(Controller::Pids).unwrap().join(PARENT_DIR).join(&name)];
    dirs.extend(layout.lifecycle_dir().map(|d| d.join(PARENT_DIR).join(&name)));
    dirs.dedup();
    let mut child = Command::new("/bin/sleep").arg("100").spawn().unwrap();
    for d in &dirs {
        std::fs::create_dir_all(d).unwrap();
        std::fs::write(d.join("cgroup.procs"), child.id().to_string()).unwrap();
    }
    let removed = remove_stale(&layout);
    eprintln!("{test}: removed {removed} directories ({dirs:#?})");
    assert!(removed >= dirs.len());
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
    for d in dirs {
        assert!(!d.exists(), "{} left behind", d.display());
    }
}

/// docs/sandbox.md, item 51: what `ringmcp sandbox check` predicts is what `create` does, for
/// root and for an unprivileged uid without delegation (then: not enforced, with the errno).
#[test]
fn real_report_predicts_what_create_does() {
    let test = "real_report_predicts_what_create_does";
    let _serial = SERIAL.lock().unwrap_or_else(PoisonError::into_inner);
    let layout = Layout::probe();
    let predicted = layout.report(&Limits::default());
    eprintln!("{test} (euid {:?}):\n{layout}\n{predicted}", euid());
    match SandboxCgroup::create(&layout, &Limits::default()) {
        Ok((cg, created)) => {
            for c in Controller::ALL {
                assert_eq!(created.status(c), predicted.status(c), "{c}");
            }
            assert_eq!(created.kill.is_enforced(), predicted.kill.is_enforced());
            drop(cg);
        }
        Err(e) => {
            eprintln!("{test}: create: {e}");
            for c in Controller::ALL {
                assert!(!predicted.status(c).is_enforced(), "{c} predicted enforced, but {e}");
            }
            assert!(matches!(e, CgroupError::NoHierarchy { .. }), "{e}");
        }
    }
}
