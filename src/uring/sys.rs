//! The few raw syscalls the reactor needs, each through [`cvt`](crate::syscall::cvt).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::syscall::cvt;

/// A non-blocking, close-on-exec eventfd.
pub(crate) fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: eventfd(2) takes no pointers; the returned fd is fresh and owned by nobody else.
    let fd = cvt(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) })?;
    // SAFETY: `fd` was just returned by eventfd and is not owned elsewhere.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Adds one to an eventfd's counter (wakes a reader). A full counter (`EAGAIN`) already means
/// "wake up", so it is not an error.
pub(crate) fn eventfd_signal(fd: &impl AsRawFd) {
    let one: u64 = 1;
    // SAFETY: writes 8 bytes from a live local u64 to an fd the caller keeps open.
    let _ = unsafe { libc::write(fd.as_raw_fd(), (&raw const one).cast(), 8) };
}

/// Writes what fits of `buf` to a pipe without ever blocking (`pwritev2` with `RWF_NOWAIT`):
/// `Ok(n)` bytes went in (possibly fewer than asked, or none when it is full:
/// `ErrorKind::WouldBlock`). A kernel without `RWF_NOWAIT` for pipes (before 5.8) answers
/// `EOPNOTSUPP`.
pub(crate) fn write_nowait(fd: &impl AsRawFd, buf: &[u8]) -> io::Result<usize> {
    let iov = libc::iovec { iov_base: buf.as_ptr().cast_mut().cast(), iov_len: buf.len() };
    // SAFETY: `iov` points into `buf`, which outlives the call; the kernel only reads it
    // (the `cast_mut` is for the iovec type alone). Offset -1: the file position (a pipe has
    // none).
    let n = unsafe { libc::pwritev2(fd.as_raw_fd(), &raw const iov, 1, -1, libc::RWF_NOWAIT) };
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}

/// `/proc/sys/fs/pipe-max-size`, or 1 MiB if it cannot be read.
pub(crate) fn pipe_max_size() -> usize {
    std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(1 << 20)
}

/// Grows a pipe's kernel buffer with `F_SETPIPE_SZ`; returns the size granted.
pub(crate) fn set_pipe_size(fd: &impl AsRawFd, size: usize) -> io::Result<usize> {
    let size = libc::c_int::try_from(size).unwrap_or(libc::c_int::MAX);
    // SAFETY: fcntl(F_SETPIPE_SZ) takes an integer argument, no pointers.
    cvt(unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, size) }).map(|n| n as usize)
}

/// Blocks `SIGPIPE` on the calling thread: a write to a pipe whose reader exited then fails
/// with `EPIPE` instead of killing the host process (io_uring writes run in our thread's
/// context, so the signal would otherwise be delivered to us).
pub(crate) fn block_sigpipe_on_this_thread() {
    // SAFETY: sigset_t is a plain bit array for which all-zero is a valid (empty) value.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a live, initialised local; sigemptyset/sigaddset only write into it.
    unsafe { libc::sigemptyset(&raw mut set) };
    // SAFETY: as above.
    unsafe { libc::sigaddset(&raw mut set, libc::SIGPIPE) };
    // SAFETY: pthread_sigmask reads `set` and, with a null old-set pointer, writes nothing.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &raw const set, std::ptr::null_mut()) };
}
