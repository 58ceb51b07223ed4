//! The host side of a sandboxed spawn: resolve the plan, compile the seccomp filter, create the
//! cgroup, exec the helper with an empty environment and only its fds, place it in the cgroup,
//! hand it the plan, and wait for the server's `execve` (or the precise failure).

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::cgroup::{self, LimitReport, LimitStatus, SandboxCgroup};
use super::helper::{EGRESS_FD, HELPER_ARG, PLAN_FD, STATUS_FD};
use super::plan::{self, MountStep, Plan, Profile, SandboxConfig};
use super::seccomp::{BpfProgram, FilterOptions, SeccompProfile};
use super::spawn::{Launch, SandboxGuard, SpawnError, Spawned};
use super::sys;
use crate::syscall::{cvt, retry};

/// The uid and gid the server sees inside.
pub const INNER_ID: u32 = 1000;
/// Host id a sandbox runs as when the host is root and nothing else is asked: `nobody`.
pub(crate) const NOBODY: u32 = 65534;
/// Longest wait for the helper to reach the server's `execve`.
const SETUP_TIMEOUT: Duration = Duration::from_secs(20);
/// Environment variables of the host passed to a sandboxed server by default.
pub const SANDBOX_ENV_ALLOWLIST: &[&str] = &["LANG", "TZ"];

static HELPER: OnceLock<PathBuf> = OnceLock::new();

/// Names the binary that runs the sandbox helper (one whose `main` calls
/// [`helper_main`](super::helper_main) when its first argument is
/// [`HELPER_ARG`](super::HELPER_ARG)), e.g. the application itself. Only the first call
/// counts; returns whether it was taken.
pub fn set_helper_path(path: PathBuf) -> bool {
    HELPER.set(path).is_ok()
}

/// Where the helper binary is: the one set by [`set_helper_path`], else
/// `RINGMCP_SANDBOX_HELPER`, else this executable when it is
/// `ringmcp`, else a `ringmcp` next to it or one folder up (test binaries live in
/// `target/*/deps`), else `ringmcp` in `PATH`.
pub fn helper_path() -> Option<PathBuf> {
    if let Some(p) = HELPER.get() {
        return Some(p.clone());
    }
    if let Some(p) = std::env::var_os("RINGMCP_SANDBOX_HELPER") {
        return Some(PathBuf::from(p));
    }
    let exe = std::env::current_exe().ok()?;
    if exe.file_name() == Some(OsStr::new("ringmcp")) {
        return Some(exe);
    }
    let dir = exe.parent()?;
    for cand in [dir.join("ringmcp"), dir.parent()?.join("ringmcp")] {
        if cand.is_file() {
            return Some(cand);
        }
    }
    plan::find_program(OsStr::new("ringmcp"), std::env::var_os("PATH").as_deref())
}

/// Builds the plan for `launch` under `config`.
pub(crate) fn make_plan(launch: &Launch, config: &SandboxConfig) -> Result<Plan, SpawnError> {
    let host_path = launch
        .env
        .iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var_os("PATH"));
    let program = plan::find_program(&launch.program, host_path.as_deref())
        .ok_or_else(|| plan::PlanError::ProgramNotFound(launch.program.clone()))?;
    let program = std::path::absolute(&program).unwrap_or(program);
    let mut dirs = plan::program_binds(&program, host_path.as_deref());
    for arg in &launch.args {
        let p = Path::new(arg);
        if p.is_absolute() && p.exists() {
            dirs.extend(plan::program_binds(p, host_path.as_deref()));
        }
    }
    let cwd = match (&launch.cwd, &config.workspace) {
        (Some(c), _) => {
            let real = c
                .canonicalize()
                .map_err(|source| plan::PlanError::Resolve { path: c.clone(), source })?;
            if config.workspace.as_deref() != Some(real.as_path()) {
                dirs.insert(real.clone());
            }
            real
        }
        (None, Some(ws)) => ws.clone(),
        (None, None) => PathBuf::from("/tmp"),
    };
    let mounts = plan::mount_steps(config, &dirs, INNER_ID)?;
    // SAFETY: getuid takes no arguments.
    let uid = unsafe { libc::getuid() };
    let (host_uid, host_gid, deny_setgroups) = identity(uid, config)?;
    let (argv, envp) = command_line(launch, &program, config);
    let filter = FilterOptions {
        profile: match config.profile {
            Profile::Strict => SeccompProfile::Strict,
            _ => SeccompProfile::Standard,
        },
        network: config.network.is_on(),
        log_denials: false,
    };
    let prog = compiled(&filter)?;
    let exec_gate = prog.as_ref().filter(|p| p.needs_exec_supervisor()).map(|_| 1);
    let (mut landlock_exec, mut landlock_write) = landlock_paths(&mounts);
    // A package runner runs the code it downloads: its cache is the one place where files
    // written at run time may be executed (docs/egress.md, "Package runners").
    let exec_dirs: Vec<PathBuf> = super::runner::Runner::detect(&launch.program, &launch.args)
        .filter(|r| r.reachable(&config.network))
        .map(|r| r.cache_dirs().iter().map(|d| Path::new("/tmp").join(d)).collect())
        .unwrap_or_default();
    landlock_exec.extend(exec_dirs.iter().cloned());
    landlock_write.extend(exec_dirs.iter().cloned());
    Ok(Plan {
        program,
        argv,
        envp,
        cwd,
        mounts,
        root_size: 1 << 20,
        tmp_size: config.tmp_size.unwrap_or(plan::DEFAULT_TMP_SIZE),
        hostname: "sandbox".into(),
        host_uid,
        host_gid,
        inner_id: INNER_ID,
        deny_setgroups,
        network: plan::egress_plan(&config.network),
        rlimits: rlimits(uid, config),
        seccomp: prog.map(|p| p.to_bytes()),
        exec_gate,
        landlock_exec,
        landlock_write,
        landlock_read: vec![PathBuf::from("/etc")],
        host_pid: std::process::id(),
        exec_dirs,
    })
}

/// The host ids the sandbox's user maps to (uid, gid) and whether `setgroups` is denied.
/// Never the host's root: the workspace owner when it is writable (so the server can write
/// there), else nobody; an unprivileged host maps its own ids.
fn identity(uid: u32, config: &SandboxConfig) -> Result<(u32, u32, bool), SpawnError> {
    // SAFETY: getgid takes no arguments.
    let gid = unsafe { libc::getgid() };
    Ok(if uid == 0 {
        // Never the host's root: the workspace owner when it is writable (so the server can
        // write there), else nobody.
        match (&config.workspace, config.workspace_writable) {
            (Some(ws), true) => {
                use std::os::unix::fs::MetadataExt;
                let m = ws
                    .metadata()
                    .map_err(|source| plan::PlanError::Resolve { path: ws.clone(), source })?;
                (m.uid(), m.gid(), false)
            }
            _ => (NOBODY, NOBODY, false),
        }
    } else {
        (uid, gid, true)
    })
}

/// The server's argv and scrubbed environment (`KEY=value`), PATH pointing at the program's
/// folder and the usual bin folders.
fn command_line(
    launch: &Launch,
    program: &Path,
    config: &SandboxConfig,
) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let mut path_dirs: Vec<PathBuf> = Vec::new();
    if let Some(d) = program.parent() {
        path_dirs.push(d.to_path_buf());
    }
    for d in ["/usr/local/bin", "/usr/bin", "/bin"] {
        path_dirs.push(d.into());
    }
    let base = vec![
        ("PATH".into(), std::env::join_paths(&path_dirs).unwrap_or_default()),
        ("HOME".into(), "/tmp".into()),
        ("TMPDIR".into(), "/tmp".into()),
    ];
    // A convenience for clients that honour them; the capture holds without them.
    let proxy = format!("http://127.0.0.1:{}", super::capture::PROXY_PORT);
    let proxy_vars = ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"];
    let no_proxy =
        [("NO_PROXY", "localhost,127.0.0.1,::1"), ("no_proxy", "localhost,127.0.0.1,::1")];
    let mut base = base;
    if config.network.is_on() {
        base.extend(proxy_vars.iter().map(|k| (k.into(), proxy.clone().into())));
        base.extend(no_proxy.iter().map(|(k, v)| (k.into(), v.into())));
    }
    let env = super::spawn::scrubbed_env(base, SANDBOX_ENV_ALLOWLIST, &config.env, &launch.env);
    let envp: Vec<Vec<u8>> =
        env.iter().map(|(k, v)| [k.as_bytes(), b"=", v.as_bytes()].concat()).collect();
    let mut argv = vec![argv0(launch, program).as_bytes().to_vec()];
    argv.extend(launch.args.iter().map(|a| a.as_bytes().to_vec()));
    (argv, envp)
}

/// The server's `argv[0]`: as given, unless it is a relative path (`.venv/bin/python`), which
/// inside the sandbox would be read from its working directory (`/tmp`, not the host's): then
/// the absolute path the plan found. A Python venv's interpreter finds its `pyvenv.cfg` (and so
/// its packages) from `argv[0]`.
fn argv0<'a>(launch: &'a Launch, program: &'a Path) -> &'a OsStr {
    let given = Path::new(&launch.program);
    if given.is_relative() && given.components().count() > 1 {
        program.as_os_str()
    } else {
        &launch.program
    }
}

/// What Landlock lets the server execute (the read-only binds) and write (the writable
/// binds, /tmp and /dev/shm).
fn landlock_paths(mounts: &[MountStep]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut landlock_exec = Vec::new();
    let mut landlock_write = vec![PathBuf::from("/tmp"), PathBuf::from("/dev/shm")];
    for step in mounts {
        match step {
            MountStep::Bind { path, writable: true } => landlock_write.push(path.clone()),
            MountStep::Bind { path, writable: false } => landlock_exec.push(path.clone()),
            _ => {}
        }
    }
    (landlock_exec, landlock_write)
}

/// The resource limits: open files, no core dumps, 4 GiB files, and (not as root, where the
/// cgroup's pids limit does it) processes; each held to the host's own hard limit, which the
/// sandbox cannot raise (a host started under `ulimit -n 1024` gives its servers 1024 fds, not
/// an `EPERM` at every spawn).
fn rlimits(uid: u32, config: &SandboxConfig) -> Vec<(libc::__rlimit_resource_t, u64, u64)> {
    let nofile = config.nofile_max();
    let mut rlimits = vec![
        (libc::RLIMIT_NOFILE, nofile, nofile),
        (libc::RLIMIT_CORE, 0, 0),
        (libc::RLIMIT_FSIZE, 4 << 30, 4 << 30),
    ];
    if uid != 0 {
        let n = config.pids_max();
        rlimits.push((libc::RLIMIT_NPROC, n, n));
    }
    for (resource, soft, hard) in &mut rlimits {
        if let Some(host) = super::sys::hard_limit(*resource) {
            *soft = (*soft).min(host);
            *hard = (*hard).min(host);
        }
    }
    rlimits
}

/// The filter for `options`, compiled once per process (libseccomp takes milliseconds; the
/// program never changes for the same options).
fn compiled(options: &FilterOptions) -> Result<Option<BpfProgram>, SpawnError> {
    type Cache = Mutex<Vec<((SeccompProfile, bool, bool), Option<BpfProgram>)>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let key = (options.profile, options.network, options.log_denials);
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, prog)) = cache.iter().find(|(k, _)| *k == key) {
        return Ok(prog.clone());
    }
    let prog = BpfProgram::compile(options).map_err(SpawnError::Seccomp)?;
    cache.push((key, prog.clone()));
    Ok(prog)
}

/// The cgroup limits a config asks for.
pub(crate) fn limits_of(config: &SandboxConfig) -> cgroup::Limits {
    let period = 100_000u64;
    cgroup::Limits {
        memory_max: Some(config.memory_max()),
        cpu_max: Some(cgroup::CpuMax {
            quota_us: (config.cpu_cores() * period as f64).round().max(1000.0) as u64,
            period_us: period,
        }),
        pids_max: Some(config.pids_max()),
    }
}

fn enforced(s: &LimitStatus) -> bool {
    matches!(s, LimitStatus::Enforced { .. })
}

/// A package runner whose registry is allowed keeps the package it downloads in the
/// sandbox's memory (its cache is a tmpfs): unless the config says otherwise, it gets 1 GiB of
/// memory and 512 MiB for `/tmp` and the cache, where 256 MiB and 64 MiB would end `npx -y`
/// in an OOM kill before the server starts.
fn runner_defaults(launch: &Launch, config: &SandboxConfig) -> Option<SandboxConfig> {
    let runner = super::runner::Runner::detect(&launch.program, &launch.args)?;
    if !runner.reachable(&config.network) || (config.memory.is_some() && config.tmp_size.is_some())
    {
        return None;
    }
    let mut c = config.clone();
    c.memory.get_or_insert(super::runner::RUNNER_MEMORY);
    c.tmp_size.get_or_insert(super::runner::RUNNER_TMP);
    Some(c)
}

/// Spawns `launch` confined by `config`.
pub(crate) fn spawn_sandboxed(
    launch: &Launch,
    config: &SandboxConfig,
) -> Result<Spawned, SpawnError> {
    let helper = helper_path().ok_or(SpawnError::HelperMissing)?;
    let runner_config = runner_defaults(launch, config);
    let config = runner_config.as_ref().unwrap_or(config);
    let plan = make_plan(launch, config)?;
    let layout = cgroup::Layout::probe();
    let (cgroup, limits) = match SandboxCgroup::create(&layout, &limits_of(config)) {
        Ok((cg, report)) => (Some(cg), report),
        Err(e) => {
            let reason = e.to_string();
            let un = || LimitStatus::Unavailable { reason: reason.clone() };
            (None, LimitReport { memory: un(), cpu: un(), pids: un(), kill: un() })
        }
    };
    if config.profile == Profile::Strict && !(enforced(&limits.memory) && enforced(&limits.pids)) {
        return Err(SpawnError::LimitsNotEnforced { memory: limits.memory, pids: limits.pids });
    }
    for (what, s) in [("memory", &limits.memory), ("cpu", &limits.cpu), ("pids", &limits.pids)] {
        if !enforced(s) {
            tracing::warn!(program = ?launch.program, "sandbox: {what} limit not enforced: {s:?}");
        }
    }
    let (plan_r, plan_w) = pipe_high()?;
    let (status_r, status_w) = pipe_high()?;
    let (plan_raw, status_raw) = (plan_r.as_raw_fd(), status_w.as_raw_fd());
    // The egress channel: init's end becomes the helper's fd 5, the host keeps the other.
    let egress = match plan.network {
        Some(_) => Some(seqpacket_high()?),
        None => None,
    };
    let egress_raw = egress.as_ref().map_or(-1, |(_, theirs)| theirs.as_raw_fd());
    let mut cmd = Command::new(&helper);
    cmd.arg(HELPER_ARG)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let dup_fds = move || {
        for (from, to) in [(plan_raw, PLAN_FD), (status_raw, STATUS_FD), (egress_raw, EGRESS_FD)] {
            if from < 0 {
                continue;
            }
            // SAFETY: dup2 between fds that exist in the child (inherited from us).
            cvt(unsafe { libc::dup2(from, to) })?;
        }
        // The helper gets exactly 0-2, the plan, the status pipe and the egress channel:
        // nothing else the host process holds open without O_CLOEXEC survives the exec.
        sys::cloexec_from(if egress_raw < 0 { STATUS_FD + 1 } else { EGRESS_FD + 1 })
    };
    // SAFETY: the closure only makes raw syscalls (dup2, close_range, fcntl), which are
    // async-signal-safe; every source fd is >= 10 (pipe_high, seqpacket_high), so no dup2
    // onto 3, 4 or 5 can clobber the source of another.
    unsafe { cmd.pre_exec(dup_fds) };
    let mut child = cmd
        .spawn()
        .map_err(|source| SpawnError::Exec { program: helper.clone().into_os_string(), source })?;
    drop(plan_r);
    drop(status_w);
    let egress = egress.map(|(ours, theirs)| {
        drop(theirs);
        ours
    });
    let pid = child.id();
    let fail = |child: &mut std::process::Child, error: SpawnError| {
        let _ = sys::signal_group(pid, sys::Signal::Kill);
        let _ = child.wait();
        error
    };
    let host = |step, source| SpawnError::Host { step, source };
    if let Some(cg) = &cgroup
        && let Err(e) = cg.place(pid as i32)
    {
        return Err(fail(&mut child, SpawnError::Cgroup(e)));
    }
    let bytes = serde_json::to_vec(&plan).expect("a plan serialises");
    let mut plan_w = std::fs::File::from(plan_w);
    if let Err(e) = plan_w.write_all(&bytes) {
        return Err(fail(&mut child, host("sending the plan", e)));
    }
    drop(plan_w);
    let status = match read_status(status_r, SETUP_TIMEOUT) {
        Ok(s) => s,
        Err(e) => return Err(fail(&mut child, host("waiting for the server to start", e))),
    };
    if let Some(error) = super::helper::decode_status(&status) {
        return Err(fail(&mut child, error));
    }
    let mut spawned = super::spawn::into_spawned(
        child,
        Some(SandboxGuard { limits, cgroup, nofile: config.nofile_max() }),
    )?;
    spawned.egress = egress;
    Ok(spawned)
}

/// Reads the status pipe until EOF (the server exec'd) or a deadline.
fn read_status(fd: OwnedFd, timeout: Duration) -> std::io::Result<Vec<u8>> {
    let deadline = Instant::now() + timeout;
    let mut out = Vec::new();
    let mut file = std::fs::File::from(fd);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "timed out"));
        }
        let mut pfd = libc::pollfd { fd: file.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        let ms = left.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd.
        if retry(|| cvt(unsafe { libc::poll(&mut pfd, 1, ms) }))? == 0 {
            continue;
        }
        let mut buf = [0u8; 4096];
        match retry(|| file.read(&mut buf))? {
            0 => return Ok(out),
            n => out.extend_from_slice(&buf[..n]),
        }
    }
}

/// An egress channel ([`capture::channel`](super::capture::channel)) whose both ends are
/// numbered 10 or more.
fn seqpacket_high() -> Result<(OwnedFd, OwnedFd), SpawnError> {
    let err = |source: std::io::Error| SpawnError::Host {
        step: "socketpair for the egress channel",
        source,
    };
    let (a, b) = super::capture::channel().map_err(err)?;
    let [a, b] = [a, b].map(|fd| high(fd.into_raw_fd())).map(|r| r.map_err(err));
    Ok((a?, b?))
}

/// `fd` moved to a number of 10 or more (close-on-exec); the original is closed.
fn high(fd: RawFd) -> std::io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC on an fd we own; then we close the original (errno is read
    // before the close can change it).
    let high = cvt(unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10 as RawFd) });
    // SAFETY: closing the original fd we own.
    unsafe { libc::close(fd) };
    // SAFETY: a fresh fd we own.
    Ok(unsafe { OwnedFd::from_raw_fd(high?) })
}

/// A close-on-exec pipe whose both ends are numbered 10 or more.
fn pipe_high() -> Result<(OwnedFd, OwnedFd), SpawnError> {
    let err = |source: std::io::Error| SpawnError::Host { step: "pipe", source };
    let mut fds = [0; 2];
    // SAFETY: valid out-array.
    cvt(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }).map_err(err)?;
    let [r, w] = fds.map(high).map(|r| r.map_err(err));
    Ok((r?, w?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(program: &str) -> Launch {
        Launch {
            program: program.into(),
            args: vec!["server.py".into()],
            env: Vec::new(),
            cwd: None,
            sandbox: None,
        }
    }

    /// A relative program path becomes the absolute one the plan found (the sandbox's working
    /// directory is not the host's); a bare name or an absolute path stays as given.
    #[test]
    fn argv0_is_absolute_for_a_relative_path_only() {
        let found = Path::new("/work/.venv/bin/python");
        assert_eq!(argv0(&launch(".venv/bin/python"), found), found.as_os_str());
        assert_eq!(argv0(&launch("./python"), found), found.as_os_str());
        assert_eq!(argv0(&launch("python3"), found), "python3");
        assert_eq!(argv0(&launch("/usr/bin/python3"), found), "/usr/bin/python3");
    }
}
