//! Raw process syscalls, each through one error-converting helper.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

fn cvt(ret: libc::c_long) -> io::Result<libc::c_long> {
    if ret == -1 { Err(io::Error::last_os_error()) } else { Ok(ret) }
}

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
