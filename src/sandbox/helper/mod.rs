//! The sandbox helper: `ringmcp __sandbox-init`, exec'd by the host with an empty environment
//! and only the fds it needs (0–2 = the server's stdio, 3 = the [`Plan`], 4 = the status pipe).
//! It is single-threaded, so it may fork freely. Three processes result:
//!
//! ```text
//! host ──exec──▶ outer (host namespaces)   writes the child's uid/gid maps, forwards signals,
//!                  │                         exits with the server's status
//!                  └─clone(NEW*)─▶ init (pid 1 of the sandbox)   builds the root, pivots,
//!                                    │                            reaps, answers the exec gate
//!                                    └─fork─▶ server              rlimits, nested userns, fds,
//!                                                                 setsid, caps, NNP, PDEATHSIG,
//!                                                                 Landlock, seccomp, execve
//! ```
//!
//! The order is that of docs/sandbox.md, "Layers". Any failing step writes `step: error` to the status pipe and
//! exits with 126; the host reads the pipe until EOF, which comes when the server's `execve`
//! succeeds (the pipe is close-on-exec) — so the host learns of every setup failure precisely,
//! and of success without a timeout.

use std::ffi::CString;
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::plan::{MountStep, Plan};
use super::seccomp;

mod capture;
mod privs;
mod root;
use crate::syscall::{cvt, retry};
use capture::Capture;
use privs::drop_capabilities;
use root::{build_root, clone_tree, open_no_symlinks};

/// The hidden subcommand that runs [`helper_main`].
pub const HELPER_ARG: &str = "__sandbox-init";
/// The helper reads its plan from this fd.
pub(crate) const PLAN_FD: RawFd = 3;
/// The helper reports setup failures on this fd (close-on-exec in the server).
pub(crate) const STATUS_FD: RawFd = 4;
/// In the helper and init, the egress channel to the host (a `SOCK_SEQPACKET` socket), when
/// the server has network.
pub(crate) const EGRESS_FD: RawFd = 5;
/// In the server child, the exec-gate socket to init.
const GATE_FD: RawFd = 5;
/// Signals forwarded from the host to the server (SIGKILL cannot be caught: the host's SIGKILL
/// of the helper's group kills outer and init, and init's death empties the pid namespace).
const FORWARDED: [libc::c_int; 6] =
    [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT, libc::SIGUSR1, libc::SIGUSR2];

/// A failed setup step.
struct StepError {
    step: String,
    source: io::Error,
}

type Step<T> = Result<T, StepError>;

trait Context<T> {
    fn step(self, step: impl FnOnce() -> String) -> Step<T>;
}

impl<T> Context<T> for io::Result<T> {
    fn step(self, step: impl FnOnce() -> String) -> Step<T> {
        self.map_err(|source| StepError { step: step(), source })
    }
}

fn cstr(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

/// Entry point of the helper process. Call it first thing in `main` when `argv[1]` is
/// [`HELPER_ARG`], before any thread is started. Never returns.
pub fn helper_main() -> ! {
    // The fd table is exactly {0, 1, 2, plan, status, egress} before anything else runs: the host
    // marks everything else close-on-exec, and whatever still got through (a host built
    // without that hook, an fd opened by the runtime's start-up) is closed here.
    let code = match close_fds_from(STATUS_FD + 1, &[EGRESS_FD])
        .step(|| "closing the fds inherited past the status pipe".into())
        .and_then(|()| outer())
    {
        Ok(code) => code,
        Err(e) => fail(&e),
    };
    // SAFETY: _exit takes an int; nothing needs flushing (no stdio buffers in use).
    unsafe { libc::_exit(code) }
}

/// Reports `e` on the status pipe and returns the exit code for a setup failure: the errno
/// (4 bytes, native order; 0 when the error has none) then the step's name, in one write.
fn fail(e: &StepError) -> libc::c_int {
    let errno = e.source.raw_os_error().unwrap_or(0);
    let mut msg = errno.to_ne_bytes().to_vec();
    msg.extend_from_slice(e.step.as_bytes());
    if errno == 0 {
        msg.extend_from_slice(format!(" ({})", e.source).as_bytes());
    }
    // SAFETY: writes a valid buffer to an fd we own (or a closed one: the error is ignored).
    unsafe { libc::write(STATUS_FD, msg.as_ptr().cast(), msg.len()) };
    126
}

/// What the host read from the status pipe: nothing when the server exec'd, else the failed
/// step ([`fail`]'s format) as a [`SpawnError::Setup`](super::SpawnError::Setup).
pub(crate) fn decode_status(status: &[u8]) -> Option<super::SpawnError> {
    if status.is_empty() {
        return None;
    }
    let (errno, step) = match status.split_first_chunk::<4>() {
        Some((errno, step)) => (i32::from_ne_bytes(*errno), step),
        None => (0, status),
    };
    let source =
        if errno > 0 { io::Error::from_raw_os_error(errno) } else { io::Error::other("failed") };
    let step = String::from_utf8_lossy(step).into_owned();
    Some(super::SpawnError::Setup { step, source })
}

fn outer() -> Step<libc::c_int> {
    // The helper dies with the host thread that spawned it.
    set_pdeathsig().step(|| "prctl(PR_SET_PDEATHSIG) in the helper".into())?;
    let mut raw = Vec::new();
    // SAFETY: fd 3 is the plan pipe the host set up for us; we take ownership once.
    let mut plan_file = unsafe { std::fs::File::from_raw_fd(PLAN_FD) };
    plan_file.read_to_end(&mut raw).step(|| "reading the sandbox plan".into())?;
    drop(plan_file);
    let plan: Plan = serde_json::from_slice(&raw)
        .map_err(io::Error::other)
        .step(|| "decoding the sandbox plan".into())?;
    // The egress channel is owned from here on (and its number closed when the server has no
    // network), before anything else can be given fd 5: a bare close of that number later
    // would close whatever took it (the sync pipe, on an unprivileged host).
    let egress = match plan.network {
        Some(_) => Some(owned(EGRESS_FD)),
        None => {
            // SAFETY: closing an fd number nobody here uses (EBADF when the host passed none).
            unsafe { libc::close(EGRESS_FD) };
            None
        }
    };
    // SAFETY: getppid has no arguments.
    if unsafe { libc::getppid() } as u32 != plan.host_pid {
        return Err(StepError {
            step: "checking the parent".into(),
            source: io::Error::other("the host exited before the sandbox started"),
        });
    }
    // Bind sources, opened now without following any symlink, and cloned into detached mount
    // trees while we still have the host's permissions (as root, the sandbox's own id could not
    // even look up a source under a 0700 folder such as /root). Without the privilege to clone
    // (an unprivileged host), init opens them itself: it has the same access as we do then.
    let mut sources = Vec::new();
    for step in &plan.mounts {
        sources.push(match step {
            MountStep::Bind { path, .. } => {
                let fd = open_no_symlinks(path)
                    .step(|| format!("opening bind source {}", path.display()))?;
                match clone_tree(&fd) {
                    Ok(tree) => Some(tree),
                    Err(e) if matches!(e.raw_os_error(), Some(libc::EPERM | libc::ENOSYS)) => None,
                    Err(e) => {
                        return Err(StepError {
                            step: format!("open_tree {}", path.display()),
                            source: e,
                        });
                    }
                }
            }
            _ => None,
        });
    }
    block_forwarded().step(|| "sigprocmask".into())?;
    let (sync_r, sync_w) = pipe().step(|| "pipe".into())?;
    let flags = libc::CLONE_NEWUSER
        | libc::CLONE_NEWNS
        | libc::CLONE_NEWPID
        | libc::CLONE_NEWNET
        | libc::CLONE_NEWIPC
        | libc::CLONE_NEWUTS
        | libc::CLONE_NEWCGROUP;
    // SAFETY: a raw clone without CLONE_VM and with a NULL stack behaves like fork: the child
    // gets a copy of this single-threaded process's memory and continues from here.
    let pid = cvt(unsafe {
        libc::syscall(
            libc::SYS_clone,
            (flags | libc::SIGCHLD) as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    })
    .step(|| "clone(CLONE_NEWUSER|NEWNS|NEWPID|NEWNET|NEWIPC|NEWUTS|NEWCGROUP)".into())?
        as libc::pid_t;
    if pid == 0 {
        drop(sync_w);
        let code = match init(&plan, sources, sync_r, egress) {
            Ok(code) => code,
            Err(e) => fail(&e),
        };
        // SAFETY: as in helper_main.
        unsafe { libc::_exit(code) }
    }
    drop(sync_r);
    drop(sources);
    // Only init speaks to the egress proxy.
    drop(egress);
    write_id_maps(pid, &plan).step(|| format!("writing the uid/gid maps of {pid}"))?;
    // Best effort: only a root host can (reported by `ringmcp sandbox check`, which tries a
    // memfd exec inside); seccomp's memfd_create denial is the layer that always holds.
    let _ = set_memfd_noexec(pid);
    write_all(sync_w.as_raw_fd(), b"1").step(|| "releasing the sandbox init".into())?;
    drop(sync_w);
    // From here on, failures are the sandbox's to report; ours is only to forward and wait.
    close_status_and_stdio();
    Ok(supervise(pid, None, None))
}

/// `/proc/<pid>/{setgroups,uid_map,gid_map}`: the sandbox's root is `plan.host_uid`.
fn write_id_maps(pid: libc::pid_t, plan: &Plan) -> io::Result<()> {
    if plan.deny_setgroups {
        std::fs::write(format!("/proc/{pid}/setgroups"), "deny")?;
    }
    std::fs::write(format!("/proc/{pid}/uid_map"), format!("0 {} 1\n", plan.host_uid))?;
    std::fs::write(format!("/proc/{pid}/gid_map"), format!("0 {} 1\n", plan.host_gid))
}

/// `vm.memfd_noexec = 2` in the sandbox's pid namespace (Linux 6.3+): memfds are created
/// sealed non-executable and `MFD_EXEC` is refused.
///
/// The sysctl is per pid namespace and applies to the *writer's* namespace, while its file
/// is owned by the host's root: init cannot write it (its root is an unprivileged host uid,
/// so `/proc/sys` answers EACCES), and a write from here would change the host's own value.
/// So a child of ours enters the sandbox's pid namespace with our (host) credentials and
/// writes it there, before init is released to start the server.
fn set_memfd_noexec(init: libc::pid_t) -> io::Result<()> {
    let path = CString::new(format!("/proc/{init}/ns/pid")).map_err(io::Error::other)?;
    // SAFETY: a valid C string.
    let ns = owned(cvt(unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) })?);
    // SAFETY: a pid-namespace fd we own; only our future children are moved into it.
    cvt(unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWPID) })?;
    drop(ns);
    // SAFETY: single-threaded process: fork is safe; the child only writes a file and exits.
    let child = cvt(unsafe { libc::fork() })?;
    if child == 0 {
        let code = match std::fs::write("/proc/sys/vm/memfd_noexec", "2") {
            Ok(()) => 0,
            Err(e) => e.raw_os_error().unwrap_or(libc::EIO),
        };
        // SAFETY: as in helper_main.
        unsafe { libc::_exit(code) }
    }
    let mut status = 0;
    // SAFETY: valid out-pointer; our own child.
    retry(|| cvt(unsafe { libc::waitpid(child, &mut status, 0) }))?;
    match exit_code(status) {
        0 => Ok(()),
        errno => Err(io::Error::from_raw_os_error(errno)),
    }
}

/// Pid 1 of the sandbox: builds the root, starts the server, reaps, exits with its status.
fn init(
    plan: &Plan,
    sources: Vec<Option<OwnedFd>>,
    sync_r: OwnedFd,
    egress: Option<OwnedFd>,
) -> Step<libc::c_int> {
    set_pdeathsig().step(|| "prctl(PR_SET_PDEATHSIG) in init".into())?;
    let mut byte = [0u8; 1];
    // SAFETY: reads into a valid 1-byte buffer from our pipe.
    let n = unsafe { libc::read(sync_r.as_raw_fd(), byte.as_mut_ptr().cast(), 1) };
    if n != 1 {
        return Err(StepError {
            step: "waiting for the uid/gid maps".into(),
            source: io::Error::other("the helper exited"),
        });
    }
    drop(sync_r);
    // SAFETY: plain id syscalls; the maps written by the parent make 0 valid here.
    cvt(unsafe { libc::setresgid(0, 0, 0) }).step(|| "setresgid(0) in the sandbox".into())?;
    // SAFETY: as above.
    cvt(unsafe { libc::setresuid(0, 0, 0) }).step(|| "setresuid(0) in the sandbox".into())?;
    if !plan.deny_setgroups {
        // SAFETY: an empty group list (NULL, 0) is valid.
        cvt(unsafe { libc::setgroups(0, std::ptr::null()) }).step(|| "setgroups([])".into())?;
    }
    // The id change cleared the parent-death signal set above: set it again.
    set_pdeathsig().step(|| "prctl(PR_SET_PDEATHSIG) in init after the id change".into())?;
    build_root(plan, &sources)?;
    drop(sources);
    let capture = match (&plan.network, egress) {
        (Some(net), Some(channel)) => Some(Capture::setup(net, channel)?),
        _ => None,
    };
    let gate = match plan.exec_gate {
        Some(_) => Some(socketpair().step(|| "socketpair for the exec gate".into())?),
        None => None,
    };
    // SAFETY: single-threaded process: fork is safe and the child may allocate.
    let child = cvt(unsafe { libc::fork() }).step(|| "fork of the server".into())?;
    if child == 0 {
        let gate_fd = gate.map(|(_, child_end)| child_end);
        let Err(e) = server(plan, gate_fd);
        let code = fail(&e);
        // SAFETY: as in helper_main.
        unsafe { libc::_exit(code) }
    }
    // Not before the fork: a non-dumpable server child could not write its own /proc/self maps.
    // SAFETY: prctl with integer arguments.
    cvt(unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) })
        .step(|| "prctl(PR_SET_DUMPABLE)".into())?;
    let gate = match (gate, plan.exec_gate) {
        (Some((ours, theirs)), Some(allowed)) => {
            drop(theirs);
            let listener = seccomp::recv_fd(ours.as_fd())
                .step(|| "receiving the exec-gate listener".into())?;
            Some(
                seccomp::ExecGate::new(listener, allowed)
                    .step(|| "setting up the exec gate".into())?,
            )
        }
        _ => None,
    };
    close_status_and_stdio();
    Ok(supervise(child, gate, capture))
}

/// Closes our copy of the status pipe (so the host sees EOF when the server execs) and points
/// stdin/stdout at /dev/null (so only the server holds the host's pipes).
fn close_status_and_stdio() {
    // Failures below leave fds as they were, which only delays EOFs.
    // SAFETY: closing an fd we own.
    unsafe { libc::close(STATUS_FD) };
    // SAFETY: a valid C string.
    let null = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    if null >= 0 {
        for fd in [0, 1] {
            // SAFETY: dup2 between fds we own.
            unsafe { libc::dup2(null, fd) };
        }
        // SAFETY: closing the fd we opened.
        unsafe { libc::close(null) };
    }
}

/// Forwards host signals to `child`, answers the exec gate, runs the egress capture, reaps
/// every child, and returns the exit code mirroring `child`'s end (128 + signal when it was
/// killed).
fn supervise(
    child: libc::pid_t,
    mut gate: Option<seccomp::ExecGate>,
    mut capture: Option<Capture>,
) -> libc::c_int {
    let sfd = match signalfd() {
        Ok(fd) => fd,
        Err(_) => return wait_plain(child),
    };
    loop {
        let mut fds = vec![
            libc::pollfd { fd: sfd.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd {
                fd: gate.as_ref().map_or(-1, |g| g.as_fd().as_raw_fd()),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        fds.extend(capture.as_ref().map(Capture::pollfds).unwrap_or_default());
        // SAFETY: polls `fds.len()` valid pollfd entries (a negative fd is ignored by poll).
        let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if r < 0 {
            continue;
        }
        if let Some(c) = capture.as_mut() {
            for p in fds[2..].iter().filter(|p| p.revents != 0) {
                c.ready(p.fd);
            }
        }
        if fds[1].revents != 0
            && let Some(g) = gate.as_mut()
            && g.serve_one().is_err()
        {
            gate = None;
        }
        if fds[0].revents & libc::POLLIN != 0 {
            // SAFETY: signalfd_siginfo is plain data; we read exactly its size.
            let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
            let size = std::mem::size_of::<libc::signalfd_siginfo>();
            // SAFETY: reads into a buffer of the right size.
            let n = unsafe { libc::read(sfd.as_raw_fd(), (&raw mut info).cast(), size) };
            if n as usize != size {
                continue;
            }
            let sig = info.ssi_signo as libc::c_int;
            if sig != libc::SIGCHLD {
                // SAFETY: kill with integers.
                unsafe { libc::kill(child, sig) };
                continue;
            }
            // Reap everything that has exited; stop when the server has.
            loop {
                let mut status = 0;
                // SAFETY: valid out-pointer.
                let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
                if pid <= 0 {
                    break;
                }
                if pid == child {
                    return exit_code(status);
                }
            }
        }
    }
}

fn wait_plain(child: libc::pid_t) -> libc::c_int {
    loop {
        let mut status = 0;
        // SAFETY: valid out-pointer.
        match retry(|| cvt(unsafe { libc::waitpid(-1, &mut status, 0) })) {
            Ok(pid) if pid == child => return exit_code(status),
            Ok(_) => {}
            Err(_) => return 126,
        }
    }
}

fn exit_code(status: libc::c_int) -> libc::c_int {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        126
    }
}

/// The server child: the last steps (docs/sandbox.md, "Layers", 5), then `execve`.
fn server(plan: &Plan, gate: Option<OwnedFd>) -> Step<std::convert::Infallible> {
    let set = signal_set(&[]);
    // SAFETY: an empty, initialised signal set.
    unsafe { libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut()) };
    // init's id change made it (and so us) non-dumpable, which would give our /proc/self files
    // to root and forbid writing our own id maps below; execve sets the flag anew.
    // SAFETY: prctl with integer arguments.
    cvt(unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) })
        .step(|| "prctl(PR_SET_DUMPABLE, 1)".into())?;
    for &(resource, soft, hard) in &plan.rlimits {
        let lim = libc::rlimit { rlim_cur: soft, rlim_max: hard };
        // SAFETY: a valid rlimit struct.
        cvt(unsafe { libc::setrlimit(resource as _, &lim) })
            .step(|| format!("setrlimit({resource}, {soft}, {hard})"))?;
    }
    // A nested user namespace maps the server's id to our root, leaving 0 unmapped in it.
    // SAFETY: unshare with flags only.
    cvt(unsafe { libc::unshare(libc::CLONE_NEWUSER) })
        .step(|| "unshare(CLONE_NEWUSER) for the server's id".into())?;
    std::fs::write("/proc/self/setgroups", "deny").step(|| "/proc/self/setgroups".into())?;
    let id = plan.inner_id;
    std::fs::write("/proc/self/uid_map", format!("{id} 0 1\n"))
        .step(|| "/proc/self/uid_map".into())?;
    std::fs::write("/proc/self/gid_map", format!("{id} 0 1\n"))
        .step(|| "/proc/self/gid_map".into())?;
    // SAFETY: plain id syscalls; `id` is mapped now.
    cvt(unsafe { libc::setresgid(id, id, id) }).step(|| format!("setresgid({id})"))?;
    // SAFETY: as above.
    cvt(unsafe { libc::setresuid(id, id, id) }).step(|| format!("setresuid({id})"))?;
    // Only 0, 1, 2, the status pipe and (strict profile) the gate socket survive; with no
    // gate, GATE_FD's number is closed like every other.
    let gate_fd = match gate {
        Some(fd) => {
            if fd.as_raw_fd() != GATE_FD {
                // SAFETY: dup2 onto a fixed number; the old fd is closed with the range below.
                cvt(unsafe { libc::dup2(fd.as_raw_fd(), GATE_FD) })
                    .step(|| "dup2 of the exec-gate socket".into())?;
            }
            std::mem::forget(fd);
            Some(GATE_FD)
        }
        None => None,
    };
    let keep: &[RawFd] = if gate_fd.is_some() { &[STATUS_FD, GATE_FD] } else { &[STATUS_FD] };
    close_fds_from(3, keep).step(|| "close_range".into())?;
    // SAFETY: fcntl on our own fd: the status pipe closes when execve succeeds.
    cvt(unsafe { libc::fcntl(STATUS_FD, libc::F_SETFD, libc::FD_CLOEXEC) })
        .step(|| "marking the status pipe close-on-exec".into())?;
    // SAFETY: setsid has no arguments.
    cvt(unsafe { libc::setsid() }).step(|| "setsid".into())?;
    let cwd = cstr(&plan.cwd).step(|| "cwd".into())?;
    // SAFETY: a valid C string.
    cvt(unsafe { libc::chdir(cwd.as_ptr()) }).step(|| format!("chdir {}", plan.cwd.display()))?;
    drop_capabilities().step(|| "dropping capabilities".into())?;
    // SAFETY: prctl with integer arguments.
    cvt(unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) })
        .step(|| "prctl(PR_SET_NO_NEW_PRIVS)".into())?;
    // After the id change, which clears it.
    set_pdeathsig().step(|| "prctl(PR_SET_PDEATHSIG) in the server".into())?;
    // SAFETY: getppid has no arguments.
    if unsafe { libc::getppid() } != 1 {
        return Err(StepError {
            step: "checking the parent".into(),
            source: io::Error::other("sandbox init exited"),
        });
    }
    super::landlock::restrict(plan).step(|| "landlock".into())?;
    if let Some(bytes) = &plan.seccomp {
        let prog = seccomp::BpfProgram::from_bytes(bytes)
            .map_err(io::Error::other)
            .step(|| "seccomp program".into())?;
        let listener =
            seccomp::install(&prog).step(|| "seccomp(SECCOMP_SET_MODE_FILTER)".into())?;
        if let (Some(listener), Some(gate)) = (listener, gate_fd) {
            // SAFETY: GATE_FD is the socket dup'ed above, open until the close below.
            let gate_sock = unsafe { BorrowedFd::borrow_raw(gate) };
            seccomp::send_fd(gate_sock, listener.as_fd())
                .step(|| "handing the exec-gate listener to init".into())?;
            drop(listener);
            // SAFETY: closing our gate socket.
            unsafe { libc::close(gate) };
        }
    }
    let program = cstr(&plan.program).step(|| "program".into())?;
    let argv: Vec<CString> =
        plan.argv.iter().map(|a| CString::new(a.clone()).unwrap_or_default()).collect();
    let envp: Vec<CString> =
        plan.envp.iter().filter_map(|e| CString::new(e.clone()).ok()).collect();
    let mut argv_p: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_p.push(std::ptr::null());
    let mut envp_p: Vec<*const libc::c_char> = envp.iter().map(|e| e.as_ptr()).collect();
    envp_p.push(std::ptr::null());
    // SAFETY: NULL-terminated arrays of valid C strings that outlive the call.
    let failed = cvt(unsafe { libc::execve(program.as_ptr(), argv_p.as_ptr(), envp_p.as_ptr()) });
    let source = failed.err().unwrap_or_else(|| io::Error::other("execve returned"));
    Err(StepError { step: format!("execve {}", plan.program.display()), source })
}

fn set_pdeathsig() -> io::Result<()> {
    super::sys::set_pdeathsig(libc::SIGKILL)
}

/// A signal set holding `signals`.
fn signal_set(signals: &[libc::c_int]) -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigemptyset initialises it next.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: a set we own.
    unsafe { libc::sigemptyset(&mut set) };
    for &sig in signals {
        // SAFETY: a set we own and a valid signal number.
        unsafe { libc::sigaddset(&mut set, sig) };
    }
    set
}

fn forwarded_set() -> libc::sigset_t {
    let mut all = FORWARDED.to_vec();
    all.push(libc::SIGCHLD);
    signal_set(&all)
}

fn block_forwarded() -> io::Result<()> {
    let set = forwarded_set();
    // SAFETY: a valid, initialised set.
    cvt(unsafe { libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) }).map(drop)
}

fn signalfd() -> io::Result<OwnedFd> {
    let set = forwarded_set();
    // SAFETY: a valid set; -1 asks for a new fd.
    let fd = cvt(unsafe { libc::signalfd(-1, &set, libc::SFD_CLOEXEC) })?;
    // SAFETY: a fresh fd we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: valid out-array of two ints.
    cvt(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    Ok((owned(fds[0]), owned(fds[1])))
}

fn socketpair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: valid out-array of two ints.
    cvt(unsafe {
        libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr())
    })?;
    Ok((owned(fds[0]), owned(fds[1])))
}

fn write_all(fd: RawFd, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        // SAFETY: a valid buffer.
        let n = retry(|| cvt(unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) }))?;
        buf = &buf[n as usize..];
    }
    Ok(())
}

/// Closes every fd from `from` up, except those in `keep`.
fn close_fds_from(from: RawFd, keep: &[RawFd]) -> io::Result<()> {
    let mut keep: Vec<RawFd> = keep.iter().copied().filter(|&k| k >= from).collect();
    keep.sort_unstable();
    let mut lo = from as libc::c_uint;
    for k in keep {
        let k = k as libc::c_uint;
        if k > lo {
            // SAFETY: close_range with integer bounds.
            cvt(unsafe { libc::syscall(libc::SYS_close_range, lo, k - 1, 0) })?;
        }
        lo = k + 1;
    }
    // SAFETY: as above.
    cvt(unsafe { libc::syscall(libc::SYS_close_range, lo, libc::c_uint::MAX, 0) }).map(drop)
}

/// Takes ownership of a fresh fd the kernel just returned.
fn owned(fd: RawFd) -> OwnedFd {
    // SAFETY: callers pass fds just returned by a successful syscall, owned by nobody else.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_step_crosses_the_status_pipe_as_errno_and_name() {
        let e = StepError {
            step: "binding /opt/tool".into(),
            source: io::Error::from_raw_os_error(libc::ENOENT),
        };
        let mut msg = libc::ENOENT.to_ne_bytes().to_vec();
        msg.extend_from_slice(e.step.as_bytes());
        let Some(super::super::SpawnError::Setup { step, source }) = decode_status(&msg) else {
            panic!("not a setup error");
        };
        assert_eq!((step.as_str(), source.raw_os_error()), ("binding /opt/tool", Some(2)));
        assert_eq!(
            decode_status(&msg).unwrap().to_string(),
            "sandbox setup failed: binding /opt/tool: No such file or directory (os error 2)"
        );
        assert!(decode_status(&[]).is_none(), "EOF without a word: the server exec'd");
        let short = decode_status(b"ab").unwrap().to_string();
        assert!(short.contains("ab"), "{short}");
    }
}
