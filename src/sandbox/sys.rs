//! Raw process syscalls, each through one error-converting helper.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

use crate::syscall::cvt;

/// `pidfd_open(2)`: an fd that becomes readable when the process exits (Linux 5.3+).
pub(crate) fn pidfd_open(pid: u32) -> io::Result<OwnedFd> {
    let pid = libc::pid_t::try_from(pid).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: pidfd_open takes a pid and flags, no pointers.
    let fd = cvt(unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) })?;
    // SAFETY: the kernel returned a fresh fd that nobody else owns. Its O_CLOEXEC is implied:
    // pidfd_open always sets close-on-exec.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

/// Signals the shutdown sequence sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Polite request to stop.
    Term,
    /// Forced stop.
    Kill,
}

/// Sends `signal` to every process of the group `pgid`. A group that no longer exists
/// (`ESRCH`) is not an error.
///
/// # Errors
/// `EPERM` and other errors of `kill(2)`.
pub fn signal_group(pgid: u32, signal: Signal) -> io::Result<()> {
    let pgid =
        libc::pid_t::try_from(pgid).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    if pgid <= 1 {
        // Never signal "every process" (-1) or our own group (0) by accident.
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    let sig = match signal {
        Signal::Term => libc::SIGTERM,
        Signal::Kill => libc::SIGKILL,
    };
    // SAFETY: kill(2) takes integers only; a negative pid addresses the process group.
    match cvt(libc::c_long::from(unsafe { libc::kill(-pgid, sig) })) {
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(()),
        other => other.map(drop),
    }
}

/// Makes the child `cmd` starts receive SIGTERM when the thread that spawns it exits: a
/// harness killed without a chance to clean up (SIGKILL, an unhandled SIGTERM) then does not
/// leave its children running. `PR_SET_PDEATHSIG` follows the spawning *thread*, not the
/// process, so spawn from a thread that lives as long as the child should.
pub fn stop_with_parent(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the hook makes one raw syscall: async-signal-safe, no allocation, no lock.
    unsafe { cmd.pre_exec(|| set_pdeathsig(libc::SIGTERM)) };
}

/// `prctl(PR_SET_PDEATHSIG, signal)`: this process gets `signal` when the thread that
/// created it exits. Async-signal-safe (one raw syscall).
pub(crate) fn set_pdeathsig(signal: libc::c_int) -> io::Result<()> {
    // SAFETY: prctl with integer arguments.
    cvt(unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, signal, 0, 0, 0) }).map(drop)
}

/// Marks every fd from `first` up close-on-exec, so that an `execve` that follows hands the
/// new program only the fds below `first`: whatever the embedding process holds open without
/// `O_CLOEXEC` (a database socket, a credentials pipe) never reaches a server.
///
/// Async-signal-safe (raw syscalls, no allocation): meant for a `pre_exec` hook, after the
/// fds the child must keep have been `dup2`'ed below `first` (`dup2` clears their flag).
/// `close_range(CLOSE_RANGE_CLOEXEC)` (Linux 5.11+) does it in one call; older kernels get
/// `F_SETFD` on every number below the `RLIMIT_NOFILE` hard limit.
///
/// Not *closing* them: `std::process::Command` reports a failed `execve` over a close-on-exec
/// pipe of its own, which must stay open until the exec.
pub(crate) fn cloexec_from(first: libc::c_int) -> io::Result<()> {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    let first_u = first as libc::c_uint;
    // SAFETY: close_range takes integers only; with CLOSE_RANGE_CLOEXEC it closes nothing.
    let r = unsafe {
        libc::syscall(libc::SYS_close_range, first_u, libc::c_uint::MAX, CLOSE_RANGE_CLOEXEC)
    };
    match cvt(r) {
        Ok(_) => return Ok(()),
        Err(e) if !matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EINVAL)) => return Err(e),
        Err(_) => {}
    }
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: a valid out-pointer.
    cvt(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) })?;
    let top = lim.rlim_max.min(1 << 20) as libc::c_int;
    for fd in first..top {
        // SAFETY: fcntl on a number that may or may not be open; EBADF is ignored.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    Ok(())
}

/// This process's hard limit for `resource` (`None` when unlimited or unreadable): a sandbox
/// can only lower a limit, never raise it past the host's own (no capability of the server's
/// user namespace counts for the host's limits).
pub(crate) fn hard_limit(resource: libc::__rlimit_resource_t) -> Option<u64> {
    limits(resource).and_then(|(_, hard)| hard)
}

/// This process's soft and hard limits for `resource` (`None` for unlimited).
pub(crate) fn limits(resource: libc::__rlimit_resource_t) -> Option<(Option<u64>, Option<u64>)> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: a valid out-pointer.
    cvt(unsafe { libc::getrlimit(resource, &mut lim) }).ok()?;
    let finite = |v: libc::rlim_t| (v != libc::RLIM_INFINITY).then_some(v);
    Some((finite(lim.rlim_cur), finite(lim.rlim_max)))
}

/// How many files this process may open (its soft `RLIMIT_NOFILE`; `None`: unlimited or
/// unreadable).
pub fn open_file_limit() -> Option<u64> {
    limits(libc::RLIMIT_NOFILE).and_then(|(soft, _)| soft)
}

/// What to do about an error that ran out of file descriptors (empty for any other): the
/// process's own limit (`EMFILE`, with its value) or the system's table (`ENFILE`).
pub(crate) fn fd_advice(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EMFILE) => {
            let soft = limits(libc::RLIMIT_NOFILE)
                .and_then(|(soft, _)| soft)
                .map_or_else(String::new, |n| format!(" of {n}"));
            format!(
                " (this process reached its open-file limit{soft}, RLIMIT_NOFILE: each server \
                 holds a few fds; raise the limit, e.g. `ulimit -n 65536` or systemd's \
                 LimitNOFILE=, or run fewer servers)"
            )
        }
        Some(libc::ENFILE) => " (the system's open-file table is full, fs.file-max: close \
                                 other programs' files or raise fs.file-max)"
            .into(),
        _ => String::new(),
    }
}

/// The fds this process has open beyond 0-2 (the listing's own fd left out): what a server
/// finds at start is checked with it (the attack probe, the reference server's `fds` tool).
pub fn open_fds_beyond_stdio() -> Vec<i32> {
    let listed: Vec<i32> = std::fs::read_dir("/proc/self/fd").map_or_else(
        |_| Vec::new(),
        |d| d.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect(),
    );
    listed
        .into_iter()
        // SAFETY: F_GETFD on a number only asks whether it is open (the listing's fd is
        // closed by now).
        .filter(|&fd| fd > 2 && unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0)
        .collect()
}
