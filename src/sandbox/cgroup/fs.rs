//! The operating-system seam of the cgroup layer.
//!
//! Every directory creation, control-file write, removal and signal goes through [`CgroupFs`], so
//! the logic above it runs unchanged against a fake cgroupfs tree in a temp dir (tests) or the real
//! one ([`RealFs`]). Reads of control files and directory listings use `std::fs` directly: a fake
//! tree is made of real files, so there is nothing to fake there.

use std::fmt;
use std::fs::OpenOptions;
use std::io::{self, Write as _};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::sys::signal;
use nix::unistd::{self, AccessFlags, Pid};

use crate::sandbox::sys;

/// The operations on cgroupfs (and the one signal) the cgroup layer performs.
///
/// Cgroupfs semantics the implementation must keep: a new cgroup directory comes with its control
/// files; a control file is written with one `write(2)` that the kernel takes as one command, and
/// is never created or truncated (a missing file means a missing feature).
pub trait CgroupFs: fmt::Debug + Send + Sync {
    /// Creates the directory `dir`, whose parent exists.
    ///
    /// # Errors
    /// `mkdir(2)` errors (`EEXIST`, `EACCES`, `ENOSPC` past `cgroup.max.descendants`, ...).
    fn mkdir(&self, dir: &Path) -> io::Result<()>;

    /// Removes the cgroup directory `dir` (which has no sub-cgroups left).
    ///
    /// # Errors
    /// `rmdir(2)` errors; `EBUSY` while processes remain.
    fn rmdir(&self, dir: &Path) -> io::Result<()>;

    /// Writes `value` to the existing control file `file` in one `write(2)`.
    ///
    /// # Errors
    /// `ENOENT` when the file (the feature) does not exist, `EINVAL` for a value the kernel
    /// rejects, `EBUSY`, `EACCES`, ...
    fn write(&self, file: &Path, value: &str) -> io::Result<()>;

    /// Checks that cgroups may be created in `dir` (`access(2)` with `W_OK | X_OK`).
    ///
    /// # Errors
    /// Why not: `EACCES`, `EROFS`, `ENOENT`, ...
    fn check_writable(&self, dir: &Path) -> io::Result<()>;

    /// Sends `SIGKILL` to `pid`, but only if it is (still) listed in `procs`, a `cgroup.procs`
    /// file: a pid read earlier may have been recycled for an unrelated process since. A process
    /// that is already gone is not an error.
    ///
    /// # Errors
    /// Errors of the signal (`EPERM`) or of reading `procs`.
    fn kill_member(&self, pid: i32, procs: &Path) -> io::Result<()>;

    /// Whether a process with this pid exists (in our pid namespace).
    fn is_alive(&self, pid: i32) -> bool;
}

/// The real cgroupfs, through `std::fs`, `access(2)`, `pidfd_open(2)` and `pidfd_send_signal(2)`.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealFs;

impl CgroupFs for RealFs {
    fn mkdir(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir(dir)
    }

    fn rmdir(&self, dir: &Path) -> io::Result<()> {
        std::fs::remove_dir(dir)
    }

    fn write(&self, file: &Path, value: &str) -> io::Result<()> {
        // No create, no truncate: cgroupfs files exist or the kernel lacks the feature.
        let mut f = OpenOptions::new().write(true).open(file)?;
        let n = f.write(value.as_bytes())?;
        if n == value.len() {
            Ok(())
        } else {
            Err(io::Error::new(io::ErrorKind::WriteZero, format!("short write ({n} bytes)")))
        }
    }

    fn check_writable(&self, dir: &Path) -> io::Result<()> {
        unistd::access(dir, AccessFlags::W_OK | AccessFlags::X_OK).map_err(io::Error::from)
    }

    fn kill_member(&self, pid: i32, procs: &Path) -> io::Result<()> {
        let Ok(upid) = u32::try_from(pid) else { return Ok(()) };
        let pidfd = match sys::pidfd_open(upid) {
            Ok(fd) => fd,
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return Ok(()),
            Err(e) => return Err(e),
        };
        // The pidfd pins the process that held `pid` when it was opened. If `pid` is still a
        // member now, that process (if alive) is the member: a live process keeps its pid. If it
        // died and the pid went to a newcomer, the signal below fails with ESRCH and the caller's
        // next round sees the newcomer. So no unrelated process is ever signalled.
        if !parse_pids(&std::fs::read_to_string(procs)?).contains(&pid) {
            return Ok(());
        }
        match pidfd_send_sigkill(&pidfd) {
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(()),
            other => other,
        }
    }

    fn is_alive(&self, pid: i32) -> bool {
        // EPERM means it exists but is not ours to signal; only ESRCH means gone.
        !matches!(signal::kill(Pid::from_raw(pid), None), Err(Errno::ESRCH))
    }
}

/// `pidfd_send_signal(pidfd, SIGKILL, NULL, 0)` (Linux 5.1+).
fn pidfd_send_sigkill(pidfd: &OwnedFd) -> io::Result<()> {
    // SAFETY: the fd is a live pidfd borrowed for the call; a null siginfo is allowed (the kernel
    // then fills one in as kill(2) would); no other pointers are passed.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            libc::SIGKILL,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    crate::syscall::cvt(ret).map(drop)
}

/// The pids listed in a `cgroup.procs` text (one per line; malformed lines are skipped).
pub(super) fn parse_pids(text: &str) -> Vec<i32> {
    text.lines().filter_map(|l| l.trim().parse().ok()).filter(|&p: &i32| p > 0).collect()
}

/// The sub-directories of `dir` (empty when it cannot be listed).
pub(super) fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect()
}

/// `EBUSY (Device or resource busy)`: the errno's name first, since that is what people search.
pub(super) fn describe(err: &io::Error) -> String {
    match err.raw_os_error() {
        Some(code) => {
            let errno = Errno::from_raw(code);
            format!("{errno:?} ({})", errno.desc())
        }
        None => err.to_string(),
    }
}
