//! Nothing outlives its server: no process or zombie, fd, thread, cgroup, mount or spill
//! folder. Each check runs in a child test process of its own (`--exact`, one thread), so the
//! counts see only its own servers, never another test's.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ringmcp::host::{Host, SpillConfig};
use ringmcp::sandbox::{self, Launch, SandboxConfig};
use ringmcp::spill::store::StoreConfig;
use serde_json::json;

use crate::util::{child_pids, open_fds, reference};

const CHILD_ENV: &str = "RINGMCP_LEAK_TEST_CHILD";

/// Runs the ignored test `name` alone in a child test process and asserts it passed.
///
/// The child's output is quoted indented in a failure, so that its own `test … FAILED` and
/// `test result:` lines are not counted again in the suite's totals (scripts/test.sh counts
/// lines that start with them).
pub(crate) fn isolated(name: &str) {
    isolated_with(name, CHILD_ENV);
}

/// [`isolated`], with `env` set in the child (its test checks it).
pub(crate) fn isolated_with(name: &str, env: &str) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--include-ignored", "--test-threads=1", "--nocapture"])
        .env(env, "1")
        .output()
        .unwrap();
    let quoted = |bytes: &[u8]| -> String {
        String::from_utf8_lossy(bytes).lines().map(|l| format!("    | {l}\n")).collect()
    };
    let (stdout, stderr) = (quoted(&out.stdout), quoted(&out.stderr));
    assert!(out.status.success(), "{name} failed ({}):\n{stdout}{stderr}", out.status);
    let ran = String::from_utf8_lossy(&out.stdout).contains("1 passed");
    assert!(ran, "{name} did not run:\n{stdout}");
}

pub(crate) fn in_isolation() {
    assert!(std::env::var_os(CHILD_ENV).is_some(), "run through its wrapper test");
}

/// Sandbox cgroups of this process still on the machine (`ringmcp-sbx.<pid>.<n>`).
fn our_cgroups() -> Vec<PathBuf> {
    let prefix = format!("ringmcp-sbx.{}.", std::process::id());
    let mut found = Vec::new();
    let mut stack = vec![PathBuf::from("/sys/fs/cgroup")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                if e.file_name().to_string_lossy().starts_with(&prefix) {
                    found.push(e.path());
                } else if stack.len() < 10_000 {
                    stack.push(e.path());
                }
            }
        }
    }
    found
}

/// Mount points that could be this process's: named `ringmcp`, and not another test
/// process's folder (`ringmcp-test-PID-…`; the spill tests mount a tmpfs in theirs, in this
/// same namespace, while these checks count).
fn mounts() -> Vec<String> {
    let own = format!("ringmcp-test-{}-", std::process::id());
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let mut points: Vec<String> = info
        .lines()
        .filter_map(|l| l.split(' ').nth(4))
        .filter(|p| p.contains("ringmcp") && (!p.contains("ringmcp-test-") || p.contains(&own)))
        .map(str::to_owned)
        .collect();
    points.sort();
    points
}

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").map(|d| d.count()).unwrap_or(0)
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default()
}

/// Everything these checks count, at one moment.
#[derive(Debug, PartialEq, Eq)]
struct Footprint {
    children: Vec<u32>,
    fds: usize,
    threads: usize,
    cgroups: Vec<PathBuf>,
    mounts: Vec<String>,
}

fn footprint() -> Footprint {
    Footprint {
        children: child_pids(),
        fds: open_fds(),
        threads: threads(),
        cgroups: our_cgroups(),
        mounts: mounts(),
    }
}

/// The footprint once two reads 50 ms apart agree (bounded): not one caught while a thread
/// of the host is still starting (a file it reads once, open for a moment).
fn steady() -> Footprint {
    let mut last = footprint();
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(50));
        let now = footprint();
        if now == last {
            return now;
        }
        last = now;
    }
    last
}

/// Waits (bounded) until `want` holds, then returns the last footprint.
fn settle(want: impl Fn(&Footprint) -> bool) -> Footprint {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let now = footprint();
        if want(&now) || Instant::now() > deadline {
            return now;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn two_hundred_spawn_shutdown_cycles_leak_nothing() {
    if std::env::var_os(CHILD_ENV).is_none() {
        isolated("leaks::cycles_in_isolation");
    }
}

/// 200 sandboxed servers (the default) started, called and shut down (half explicitly, half
/// by drop, some with a spilled answer), then the host dropped with one still running.
#[test]
#[ignore = "run by two_hundred_spawn_shutdown_cycles_leak_nothing in a process of its own"]
fn cycles_in_isolation() {
    in_isolation();
    let spill_base =
        std::env::temp_dir().join(format!("ringmcp-leak-spill-{}", std::process::id()));
    let before = footprint();
    {
        let spill = SpillConfig {
            line_threshold: 64 << 10,
            string_threshold: 16 << 10,
            store: StoreConfig::new().base_dir(spill_base.clone()),
        };
        let host = Host::builder()
            .request_timeout(Duration::from_secs(30))
            .spill(Some(spill))
            .build()
            .unwrap();
        let with_host = steady();
        assert!(with_host.threads > before.threads, "the host's threads are counted");
        for i in 0..200 {
            let client = host.spawn_blocking(reference(&format!("cycle{i}"), &[])).unwrap();
            assert!(client.blocking().stats().unwrap().sandbox.is_some(), "sandboxed by default");
            client.blocking().call_tool("echo", json!({"text": "x"})).unwrap();
            if i % 20 == 0 {
                // A spilled answer whose file is released with the call's result.
                let r = client.blocking().call_tool("blob", json!({"bytes": 256 << 10})).unwrap();
                assert!(client.blocking().stats().unwrap().answers_spilled > 0, "spilled");
                drop(r);
            }
            if i % 2 == 0 {
                client.blocking().shutdown();
            } else {
                drop(client); // shutdown through Drop, without waiting
            }
        }
        // Dropped clients shut down asynchronously; wait for the reactor to reap them.
        let after = settle(|f| *f == with_host);
        assert_eq!(after, with_host, "left behind while the host lives");
        // A server still running when the host is dropped is shut down by the drop.
        let _running = host.spawn_blocking(reference("at-drop", &[])).unwrap();
    }
    let after = settle(|f| *f == before);
    assert_eq!(after, before, "left behind after the host");
    assert_eq!(entries(&spill_base), Vec::<PathBuf>::new(), "spill folders left behind");
    let _ = std::fs::remove_dir_all(&spill_base);
}

#[test]
fn sandboxed_spawn_kill_cycles_leave_nothing() {
    if std::env::var_os(CHILD_ENV).is_none() {
        isolated("leaks::sandbox_cycles_in_isolation");
    }
}

/// 200 sandboxed `cat`s through the bare spawn API, half ended by EOF and half by SIGKILL of
/// their group: no process, cgroup, mount or fd remains.
#[test]
#[ignore = "run by sandboxed_spawn_kill_cycles_leave_nothing in a process of its own"]
fn sandbox_cycles_in_isolation() {
    in_isolation();
    let before = footprint();
    // Marked, so that only this process's cats are counted (other tests run cats too).
    let mark = format!("RINGMCP_LEAK_MARK={}", std::process::id());
    let launch = Launch {
        program: "/bin/cat".into(),
        env: vec![("RINGMCP_LEAK_MARK".into(), std::process::id().to_string().into())],
        sandbox: Some(SandboxConfig::standard()),
        ..Launch::default()
    };
    for i in 0..200 {
        let mut s = sandbox::spawn(&launch).unwrap_or_else(|e| panic!("cycle {i}: {e}"));
        assert_eq!(child_pids(), vec![s.child.id()], "cycle {i}: one child, the helper");
        if i == 0 {
            // The mark is seen on a live one (the count below is not vacuous).
            let deadline = Instant::now() + Duration::from_secs(10);
            while marked_cats(&mark) != 1 {
                assert!(Instant::now() < deadline, "the marked cat is not seen");
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        if i % 2 == 0 {
            drop(s.stdin); // EOF: cat exits by itself
        } else {
            sandbox::signal_group(s.child.id(), sandbox::Signal::Kill).unwrap();
        }
        s.child.wait().unwrap();
        drop(s.sandbox.take());
        drop((s.stdout, s.stderr, s.pidfd));
    }
    let after = settle(|f| *f == before);
    assert_eq!(after, before, "left behind");
    let lingering = marked_cats(&mark);
    assert_eq!(lingering, 0, "a sandboxed cat outlived its cycle");
}

/// Live `/bin/cat`s carrying `mark` in their environment.
fn marked_cats(mark: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            let cat = std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| c.starts_with(b"/bin/cat\0") && c.len() == 9);
            let environ = std::fs::read(e.path().join("environ")).unwrap_or_default();
            cat && environ.split(|b| *b == 0).any(|v| v == mark.as_bytes())
        })
        .count()
}
