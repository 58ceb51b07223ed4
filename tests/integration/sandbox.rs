//! The sandbox, for real: the threat list of docs/sandbox.md run from inside by our probe, real
//! servers working confined, limits enforced, and nothing left behind. Tests that need a kernel
//! feature or root print why they skip.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ringmcp::host::{Host, ServerSpec};
use ringmcp::sandbox::{self, Launch, SandboxConfig};
use serde_json::{Value, json};

use crate::util::{
    TempDir, deps_dir, python3, reference, require, ringmcp_bin, skip_machine, stray_fd_numbers,
    with_stray_fds,
};

/// Whether this machine offers what a sandbox is made of (user, mount, pid, net, IPC, UTS and
/// cgroup namespaces), asked of util-linux's `unshare` as `as_user` (a `setpriv` prefix) or as
/// ourselves: a probe that shares no code with the sandbox under test, so a broken sandbox
/// fails its tests instead of skipping them. Skips (counted) when the machine says no.
fn namespaces_work(as_user: &[&str]) -> bool {
    let mut cmd = match as_user.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg("unshare");
            c
        }
        None => Command::new("unshare"),
    };
    let out = cmd
        .args(["--user", "--map-root-user", "--mount", "--pid", "--net", "--ipc", "--uts"])
        .args(["--cgroup", "--fork", "/bin/true"])
        .current_dir("/")
        .stdin(Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => true,
        Ok(o) => {
            skip_machine(format!(
                "this machine cannot make the sandbox's namespaces{}: unshare said {}",
                if as_user.is_empty() { String::new() } else { format!(" as {as_user:?}") },
                String::from_utf8_lossy(&o.stderr).trim()
            ));
            false
        }
        Err(e) => {
            skip_machine(format!("cannot run util-linux unshare to probe namespaces: {e}"));
            false
        }
    }
}

/// The machine probe for every sandbox test (the name is the skip's, from the test thread).
fn sandbox_works(_test: &str) -> bool {
    namespaces_work(&[])
}

fn is_root() -> bool {
    // SAFETY: getuid takes no arguments.
    unsafe { libc::getuid() == 0 }
}

/// Runs `ringmcp sandbox run ARGS -- CMD...` and returns (exit code, stdout, stderr). The
/// `ringmcp` process holds stray fds open (not close-on-exec), as an embedding application
/// would: none may reach the command.
fn sandbox_run(args: &[&str], cmd: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let out = with_stray_fds(&mut Command::new(ringmcp_bin()))
        .arg("sandbox")
        .arg("run")
        .args(args)
        .arg("--")
        .args(cmd)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("run ringmcp");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every attempt of the attack list, made from inside the default sandbox, is blocked with the
/// expected errno — with a fake cloud secret in the host's environment, a TCP listener on the
/// host's loopback, an abstract unix socket and a SysV shm segment of the host's.
#[test]
fn the_attack_list_is_blocked_from_inside() {
    if !sandbox_works("the_attack_list_is_blocked_from_inside") {
        return;
    }
    attack_list(false);
}

/// The same list with network on (any public host, through the egress proxy): every attempt
/// still blocked, and the network ones answered by the capture (blocked ranges by literal
/// address reset, other UDP refused, DNS answered by the stub and never forwarded).
#[test]
fn the_attack_list_is_blocked_with_network_on() {
    if !sandbox_works("the_attack_list_is_blocked_with_network_on") {
        return;
    }
    attack_list(true);
}

fn attack_list(network: bool) {
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = tcp.local_addr().unwrap().port();
    let name = format!("ringmcp-probe-{}-{network}", std::process::id());
    let addr = {
        use std::os::linux::net::SocketAddrExt;
        std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap()
    };
    let _abstract = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    let key = 0x5e00_0000 | (i32::from(network) << 16) | (std::process::id() as i32 & 0xffff);
    // SAFETY: integers only; the segment is removed below.
    let shm = unsafe { libc::shmget(key, 4096, libc::IPC_CREAT | 0o600) };
    assert!(shm >= 0, "shmget: {}", std::io::Error::last_os_error());
    let me = ringmcp_bin();
    let bin = me.to_str().unwrap();
    let (pid, port_s, key_s) = (std::process::id().to_string(), port.to_string(), key.to_string());
    let ws = TempDir::new(if network { "attackws-net" } else { "attackws" });
    let ws_path = ws.0.to_str().unwrap();
    let probe = [
        "--host-pid",
        &pid,
        "--port",
        &port_s,
        "--abstract-name",
        &name,
        "--shm-key",
        &key_s,
        "--secret-env",
        "AWS_ACCESS_KEY_ID",
        "--workspace",
        ws_path,
        "--nofile",
        "4096",
    ];
    let secret = [("AWS_ACCESS_KEY_ID", "AKIAFAKEFAKEFAKE")];
    let mut cmd: Vec<&str> = [bin, "__sandbox-probe"].into_iter().chain(probe).collect();
    let mut run_args = vec!["--workspace", ws_path, "--writable"];
    if network {
        cmd.push("--network");
        run_args.push("--network");
    }
    let (code, out, err) = sandbox_run(&run_args, &cmd, &secret);
    // The same probe outside any sandbox (as root, with the same stray fds and secret), minus
    // what would harm the host: each attempt classed `differs` must get another answer there,
    // or its expected errno proves nothing about the sandbox.
    let probe_all: Vec<&str> =
        probe.iter().copied().chain(network.then_some("--network")).collect();
    let baseline = root_only_baseline(bin, &probe_all, &secret);
    // SAFETY: removing the segment created above.
    unsafe { libc::shmctl(shm, libc::IPC_RMID, std::ptr::null_mut()) };
    assert_eq!(code, 0, "probe failed: {err}");
    let results: Vec<Value> =
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    let mut open = Vec::new();
    let mut undiscriminating = Vec::new();
    for r in &results {
        let outside = baseline
            .as_ref()
            .and_then(|b| b.iter().find(|o| o["item"] == r["item"] && o["what"] == r["what"]));
        let outside_got = outside.map_or("-", |o| o["got"].as_str().unwrap());
        eprintln!(
            "{:>2} {:<48} {:<14} {:<11} unconfined: {} ({})",
            r["item"],
            r["what"].as_str().unwrap(),
            r["got"].as_str().unwrap(),
            if r["blocked"] == true { "blocked" } else { "NOT BLOCKED" },
            outside_got,
            r["unconfined"].as_str().unwrap(),
        );
        if r["blocked"] != true {
            open.push(r.clone());
        }
        if let Some(o) = outside
            && r["unconfined"] == "differs"
            && r["want"].as_array().unwrap().contains(&o["got"])
        {
            undiscriminating.push((r["what"].clone(), o["got"].clone()));
        }
    }
    if let Some(b) = &baseline {
        let differs = results.iter().filter(|r| r["unconfined"] == "differs").count();
        assert!(differs >= 45, "only {differs} attempts are checked against the baseline");
        assert_eq!(b.len(), results.len(), "the baseline ran another list");
    }
    assert!(
        undiscriminating.is_empty(),
        "expected answers that an unconfined process gets too: {undiscriminating:?}"
    );
    assert!(results.len() >= 70, "only {} attempts ran", results.len());
    let items: std::collections::BTreeSet<u64> =
        results.iter().filter_map(|r| r["item"].as_u64()).collect();
    for item in [
        1, 3, 4, 5, 7, 8, 9, 10, 12, 13, 14, 15, 16, 17, 19, 20, 22, 24, 25, 26, 27, 28, 30, 32,
        33, 35, 36, 37, 38, 39, 40, 41, 46, 47, 49, 52, 53,
    ] {
        assert!(items.contains(&item), "attack {item} was not attempted");
    }
    assert!(open.is_empty(), "attempts not blocked: {open:#?}");
}

/// The attack probe run outside any sandbox with `--baseline`, as root (the baseline's
/// classes are a root's view); `None` with a counted skip otherwise.
fn root_only_baseline(bin: &str, probe: &[&str], env: &[(&str, &str)]) -> Option<Vec<Value>> {
    if !is_root() {
        skip_machine("the attack probe's unconfined baseline is classed for a root host");
        return None;
    }
    let out = with_stray_fds(&mut Command::new(bin))
        .arg("__sandbox-probe")
        .args(probe)
        .arg("--baseline")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .expect("run the unconfined probe");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    Some(serde_json::from_slice(&out.stdout).expect("the baseline's JSON"))
}

/// No fd of the host process reaches a server, sandboxed (standard and strict, whose exec
/// gate has an fd of its own) or not: `ringmcp call` is started with pipes open, not
/// close-on-exec, at 3..=64 and 1000, and the reference server reports what it found open at
/// start. The sandboxed command of `sandbox run` is checked by the attack list (item 52).
#[test]
fn host_fds_never_reach_a_server() {
    if !sandbox_works("host_fds_never_reach_a_server") {
        return;
    }
    let me = ringmcp_bin();
    for mode in [&["--no-sandbox"][..], &[], &["--sandbox-profile", "strict"]] {
        let out = with_stray_fds(&mut Command::new(&me))
            .arg("call")
            .args(mode)
            .args(["fds", "{}", "--"])
            .arg(&me)
            .args(["serve", "--fault-tools"])
            .stdin(Stdio::null())
            .output()
            .expect("run ringmcp call");
        let (stdout, stderr) =
            (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{mode:?}: {stderr}");
        assert_eq!(
            stdout.trim(),
            "[]",
            "{mode:?}: the server found host fds open at start (the host held {:?})",
            stray_fd_numbers()
        );
    }
}

/// The server's fd ceiling is 4096 soft and hard by default, and `nofile` sets it.
#[test]
fn the_fd_ceiling_is_4096_and_configurable() {
    if !sandbox_works("the_fd_ceiling_is_4096_and_configurable") {
        return;
    }
    let limits =
        "read -r _ _ _ soft hard _ < <(grep 'Max open files' /proc/self/limits); echo $soft $hard";
    for (args, want) in [(&[][..], "4096 4096"), (&["--nofile", "256"], "256 256")] {
        let (code, out, err) = sandbox_run(args, &["/bin/bash", "-c", limits], &[]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(out.trim(), want, "{args:?}: {err}");
    }
}

/// `ringmcp sandbox check` judges the code-written-at-run-time layers by trying them inside a
/// real sandbox: on a machine that runs sandboxes, each is enforced (the sysctl only from a
/// root host).
#[test]
fn sandbox_check_tries_the_exec_layers_inside_a_sandbox() {
    if !sandbox_works("sandbox_check_tries_the_exec_layers_inside_a_sandbox") {
        return;
    }
    let out = Command::new(ringmcp_bin())
        .args(["sandbox", "check", "--json"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["works"], true, "{report}");
    let status = |name: &str| {
        let layers = report["layers"].as_array().unwrap();
        let layer = layers.iter().find(|l| l["name"] == name);
        layer.unwrap_or_else(|| panic!("no {name:?} row: {report}"))["status"].clone()
    };
    for name in ["exec of written files", "memfd exec", "execveat(AT_EMPTY_PATH)"] {
        assert_eq!(status(name), "enforced", "{name}: {report}");
    }
    // The sysctl exists from Linux 6.3, and only a root host can set it.
    let settable = is_root() && Path::new("/proc/sys/vm/memfd_noexec").exists();
    let noexec = status("memfd_noexec");
    assert_eq!(noexec, if settable { "enforced" } else { "best-effort" }, "{report}");
}

/// A sandbox setup failure names the step, and a missing program is a precise error.
#[test]
fn setup_failures_are_precise() {
    if !sandbox_works("setup_failures_are_precise") {
        return;
    }
    let launch = Launch {
        program: "/nonexistent/server".into(),
        sandbox: Some(SandboxConfig::standard()),
        ..Launch::default()
    };
    let err = sandbox::spawn(&launch).unwrap_err().to_string();
    assert!(err.contains("/nonexistent/server") && err.contains("not found"), "{err}");
    let ws = TempDir::new("linkws");
    std::os::unix::fs::symlink("/root", ws.0.join("link")).unwrap();
    let launch = Launch {
        program: "/bin/true".into(),
        sandbox: Some(SandboxConfig {
            workspace: Some(ws.0.join("link")),
            ..SandboxConfig::standard()
        }),
        ..Launch::default()
    };
    let err = sandbox::spawn(&launch).unwrap_err().to_string();
    assert!(err.contains("symlink"), "a symlinked workspace is refused: {err}");
}

/// Our own server, server-everything, server-filesystem and a Python SDK server all work in the
/// standard sandbox (the default); the filesystem server can write its workspace and nothing
/// outside it.
#[test]
fn real_servers_work_inside_the_standard_sandbox() {
    if !sandbox_works("real_servers_work_inside_the_standard_sandbox") {
        return;
    }
    let host = Host::builder().request_timeout(Duration::from_secs(60)).build().unwrap();
    let ours = host.spawn_blocking(reference("confined", &[])).unwrap();
    assert_eq!(ours.blocking().call_tool("echo", json!({"text": "hi"})).unwrap().text(), "hi");
    let stats = ours.blocking().stats().unwrap();
    let sb = stats.sandbox.expect("sandboxed by default");
    eprintln!("limits: {}", sb.limits);
    assert_eq!(sb.nofile, 4096, "the default fd ceiling, reported in stats()");
    if let Some(entry) = require(
        deps_dir().join("npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
        "@modelcontextprotocol/server-everything",
    ) {
        let every = host.spawn_blocking(ServerSpec::new("everything", "node").arg(entry)).unwrap();
        let r = every.blocking().call_tool("echo", json!({"message": "boxed"})).unwrap();
        assert!(r.text().contains("boxed"), "{}", r.text());
    }
    let py = deps_dir().join("venv/bin/python");
    if let Some(py) = require(py, "the Python mcp SDK venv") {
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers/py_echo_server.py");
        let c = host.spawn_blocking(ServerSpec::new("py", py).arg(script)).unwrap();
        let tools = c.blocking().list_tools().unwrap();
        assert!(!tools.is_empty());
    }
    if let Some(entry) = require(
        deps_dir().join("npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"),
        "@modelcontextprotocol/server-filesystem",
    ) {
        let ws = TempDir::new("fsws");
        std::fs::write(ws.0.join("hello.txt"), "from the host").unwrap();
        let ws_path = ws.0.to_str().unwrap().to_owned();
        let config = SandboxConfig {
            workspace: Some(ws.0.clone()),
            workspace_writable: true,
            ..SandboxConfig::standard()
        };
        let fs = host
            .spawn_blocking(
                ServerSpec::new("fs", "node").arg(&entry).arg(&ws_path).sandbox(Some(config)),
            )
            .unwrap();
        let read = fs
            .blocking()
            .call_tool("read_text_file", json!({"path": format!("{ws_path}/hello.txt")}))
            .unwrap();
        assert!(read.text().contains("from the host"), "{}", read.text());
        let wrote = fs
            .blocking()
            .call_tool(
                "write_file",
                json!({"path": format!("{ws_path}/new.txt"), "content": "boxed write"}),
            )
            .unwrap();
        assert!(!wrote.is_error, "{}", wrote.text());
        assert_eq!(std::fs::read_to_string(ws.0.join("new.txt")).unwrap(), "boxed write");
        let outside =
            fs.blocking().call_tool("read_text_file", json!({"path": "/etc/passwd"})).unwrap();
        assert!(outside.is_error, "a path outside the workspace is refused: {}", outside.text());
    }
}

/// A server allocating 1 GiB under a 128 MiB limit is OOM-killed and the host says so.
#[test]
fn an_oom_kill_is_reported_as_such() {
    if !sandbox_works("an_oom_kill_is_reported_as_such") {
        return;
    }
    let Some(python) = python3() else { return };
    if !is_root() {
        skip_machine("needs root (cgroup v1 limits)");
        return;
    }
    let (code, _, err) = sandbox_run(
        &["--memory", "128MiB"],
        &[
            python.to_str().unwrap(),
            "-c",
            "b = bytearray(1 << 30)\nfor i in range(0, len(b), 4096): b[i] = 1",
        ],
        &[],
    );
    assert_eq!(code, 128 + 9, "{err}");
    assert!(err.contains("OOM-killed"), "{err}");
    // Through the host: the handshake fails with the OOM as the reason.
    let host = Host::builder().build().unwrap();
    let config = SandboxConfig { memory: Some(128 << 20), ..SandboxConfig::standard() };
    let spec = ServerSpec::new("hog", &python)
        .args(["-c", "import sys\nsys.stdin.readline()\nb = bytearray(1 << 30)\nfor i in range(0, len(b), 4096): b[i] = 1"])
        .sandbox(Some(config));
    let err = host.spawn_blocking(spec).expect_err("the hog dies").to_string();
    assert!(err.contains("OOM-killed"), "{err}");
}

/// Shared anonymous memory (`MAP_SHARED|MAP_ANONYMOUS`, shmem underneath) is charged to the
/// memory cgroup like private memory: 1 GiB of it under a 128 MiB limit is OOM-killed.
#[test]
fn shared_anonymous_memory_counts_against_the_limit() {
    if !sandbox_works("shared_anonymous_memory_counts_against_the_limit") {
        return;
    }
    let Some(python) = python3() else { return };
    if !is_root() {
        skip_machine("needs root (cgroup v1 limits)");
        return;
    }
    let hog = "import mmap\nm = mmap.mmap(-1, 1 << 30, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)\nfor i in range(0, len(m), 4096): m[i] = 1\nprint('survived')";
    let (code, out, err) =
        sandbox_run(&["--memory", "128MiB"], &[python.to_str().unwrap(), "-c", hog], &[]);
    assert_eq!(code, 128 + 9, "stdout {out:?}, stderr {err}");
    assert!(err.contains("OOM-killed"), "{err}");
}

/// A fork bomb stops at pids.max while the host stays responsive; a busy loop is throttled.
#[test]
fn pids_and_cpu_limits_hold() {
    if !sandbox_works("pids_and_cpu_limits_hold") {
        return;
    }
    let Some(python) = python3() else { return };
    let python = python.to_str().unwrap();
    if !is_root() {
        skip_machine("needs root (cgroup v1 limits)");
        return;
    }
    let host = Host::builder().build().unwrap();
    let other = host.spawn_blocking(reference("bystander", &[])).unwrap();
    let threads = "import threading, time\nn = 0\ntry:\n    for _ in range(100):\n        threading.Thread(target=time.sleep, args=(3,), daemon=True).start(); n += 1\nexcept RuntimeError:\n    pass\nprint(n)";
    let started = Instant::now();
    let (code, out, err) = sandbox_run(&["--pids", "16"], &[python, "-c", threads], &[]);
    assert_eq!(code, 0, "{err}");
    let n: u32 = out.trim().parse().unwrap_or_else(|_| panic!("{out} {err}"));
    assert!(n < 16, "pids.max=16 let {n} threads start");
    assert_eq!(
        other.blocking().call_tool("echo", json!({"text": "alive"})).unwrap().text(),
        "alive"
    );
    eprintln!("fork bomb stopped at {n} threads in {:?}", started.elapsed());
    let busy = "import time, resource\nt = time.time()\nwhile time.time() - t < 1.5: pass\nprint(resource.getrusage(resource.RUSAGE_SELF).ru_utime)";
    let (code, out, err) = sandbox_run(&["--cpus", "0.2", "--stats"], &[python, "-c", busy], &[]);
    assert_eq!(code, 0, "{err}");
    let cpu: f64 = out.trim().parse().unwrap();
    assert!(cpu < 1.0, "a 20 % quota let a 1.5 s busy loop use {cpu} s of CPU");
    // Little CPU could also be a busy machine's doing: the quota must have throttled it.
    let stats = err
        .lines()
        .find_map(|l| l.strip_prefix("ringmcp: sandbox stats "))
        .unwrap_or_else(|| panic!("no stats: {err}"));
    let stats: serde_json::Value = serde_json::from_str(stats).unwrap();
    let throttled = stats["nrThrottled"].as_u64().unwrap_or(0);
    assert!(throttled > 0, "the quota never throttled the busy loop: {stats}");
    eprintln!(
        "busy loop under a 20 % quota used {cpu:.2} s of CPU in 1.5 s, throttled {throttled} times"
    );
}

/// The strict profile forbids exec after the server's own, and sockets other than AF_UNIX.
#[test]
fn the_strict_profile_allows_one_exec_only() {
    if !sandbox_works("the_strict_profile_allows_one_exec_only") {
        return;
    }
    let (code, out, err) = sandbox_run(
        &["--profile", "strict"],
        &["/bin/sh", "-c", "echo started; /bin/true; echo $?"],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().collect::<Vec<_>>(), ["started", "126"], "{err}");
    assert!(err.contains("Operation not permitted"), "{err}");
    let host = Host::builder().build().unwrap();
    let strict = host
        .spawn_blocking(reference("strict", &[]).sandbox(Some(SandboxConfig::strict())))
        .unwrap();
    assert_eq!(strict.blocking().call_tool("echo", json!({"text": "ok"})).unwrap().text(), "ok");
}

/// SIGKILL of the host takes every sandbox process with it (parent-death signals and the pid
/// namespace).
#[test]
fn killing_the_host_kills_the_sandbox() {
    if !sandbox_works("killing_the_host_kills_the_sandbox") {
        return;
    }
    let mut cli = Command::new(ringmcp_bin())
        .args(["sandbox", "run", "--", "/bin/sh", "-c", "sleep 60 & sleep 60 & echo ready; wait"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut buf = [0u8; 6];
    cli.stdout.as_mut().unwrap().read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"ready\n");
    let descendants = |root: u32| {
        let mut all = vec![root];
        let mut i = 0;
        while i < all.len() {
            let p = all[i];
            for t in std::fs::read_dir(format!("/proc/{p}/task")).into_iter().flatten().flatten() {
                if let Ok(c) = std::fs::read_to_string(t.path().join("children")) {
                    all.extend(c.split_whitespace().filter_map(|x| x.parse::<u32>().ok()));
                }
            }
            i += 1;
        }
        all.split_off(1)
    };
    let tree = descendants(cli.id());
    assert!(tree.len() >= 5, "helper, init, sh and two sleeps: {tree:?}");
    cli.kill().unwrap();
    cli.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    let alive = |p: &u32| {
        std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| !s.contains(") Z "))
    };
    while tree.iter().any(alive) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let left: Vec<_> = tree.iter().filter(|p| alive(p)).collect();
    assert!(left.is_empty(), "still running after the host died: {left:?}");
}

/// As an unprivileged host (uid 65534 via setpriv): the sandbox still starts, with the limits it
/// cannot enforce reported as such, and the strict profile refuses to start without them.
#[test]
fn an_unprivileged_host_sandboxes_and_reports_what_it_cannot_enforce() {
    let setpriv = Path::new("/usr/bin/setpriv");
    if !is_root() || !setpriv.exists() {
        skip_machine("needs root and setpriv to drop to uid 65534");
        return;
    }
    let nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"];
    if !namespaces_work(&nobody) {
        return;
    }
    // A copy uid 65534 can reach (the checkout may sit in a 0700 folder, as in CI).
    let dir = TempDir::new("nonroot");
    std::fs::set_permissions(&dir.0, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let bin = dir.0.join("ringmcp");
    std::fs::copy(ringmcp_bin(), &bin).unwrap();
    let run = |profile: &str| {
        // Another test's child, forked while the copy was open for writing, may still hold
        // it until it execs: the exec then fails with "Text file busy" for a moment.
        for _ in 0..20 {
            let out = Command::new(setpriv)
                .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(&bin)
                .args(["sandbox", "run", "--profile", profile, "--", "/bin/sh", "-c"])
                .arg("id -u; grep -E '^(CapEff|Seccomp|NoNewPrivs):' /proc/self/status")
                .current_dir("/")
                .stdin(Stdio::null())
                .output()
                .unwrap();
            if !String::from_utf8_lossy(&out.stderr).contains("Text file busy") {
                return out;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("{} stayed busy (ETXTBSY) for 2 s", bin.display());
    };
    let out = run("standard");
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "1000", "{stdout}");
    assert!(
        stdout.contains("CapEff:\t0000000000000000") && stdout.contains("Seccomp:\t2"),
        "{stdout}"
    );
    assert!(stderr.contains("memory: NOT enforced"), "the missing limit is reported: {stderr}");
    let strict = run("strict");
    assert!(!strict.status.success());
    let why = String::from_utf8_lossy(&strict.stderr);
    assert!(why.contains("strict profile needs enforced memory and pids limits"), "{why}");
    // Network needs nothing the unprivileged host lacks: init routes, captures and answers
    // DNS inside the sandbox's own user namespace.
    let net = Command::new(setpriv)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&bin)
        .args(["sandbox", "run", "--allow-host", "api.example.com", "--network-log", "--"])
        .args(["/usr/bin/getent", "ahostsv4", "api.example.com"])
        .current_dir("/")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (out, err) = (String::from_utf8_lossy(&net.stdout), String::from_utf8_lossy(&net.stderr));
    assert!(net.status.success() && out.starts_with("198.18."), "{out}\n{err}");
    assert!(err.contains("lookup  api.example.com  answered"), "{err}");
}

/// Forks refused at the pids limit during a server's life are reported as a typed event when it
/// ends (and live in `stats()`); the server itself carries on.
#[test]
fn refused_forks_are_reported_as_a_typed_event() {
    if !sandbox_works("refused_forks_are_reported_as_a_typed_event") {
        return;
    }
    if !is_root() {
        skip_machine("needs root (cgroup v1)");
        return;
    }
    let host = Host::builder().build().unwrap();
    let config = SandboxConfig { pids: Some(12), ..SandboxConfig::standard() };
    let client = host.spawn_blocking(crate::util::faulty("forker").sandbox(Some(config))).unwrap();
    let r = client.blocking().call_tool("children", json!({"times": 40})).unwrap();
    let started: u32 = r.text().split(' ').nth(1).unwrap().parse().unwrap();
    assert!(started < 40, "{}", r.text());
    let live = client.blocking().stats().unwrap().sandbox.unwrap().counters.unwrap();
    assert!(live.pids_max_hits.unwrap_or(0) > 0, "{live:?}");
    assert_eq!(
        client.blocking().call_tool("echo", json!({"text": "still here"})).unwrap().text(),
        "still here"
    );
    let events = client.events();
    client.blocking().shutdown();
    let until = Instant::now() + Duration::from_secs(30);
    let seen: Vec<_> = std::iter::from_fn(|| crate::util::recv_until(&events, until)).collect();
    assert!(
        seen.iter().any(|e| matches!(e, ringmcp::host::ServerEvent::SandboxLimits { refused_forks, .. } if *refused_forks > 0)),
        "{seen:?}"
    );
}
