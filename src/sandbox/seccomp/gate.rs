//! The supervisor side of the strict profile's exec gate (seccomp user notification).
//!
//! See the module docs of [`super`] for the hand-off of the listener. Reference:
//! seccomp_unotify(2).

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};

use crate::syscall::{cvt, retry};

/// What [`ExecGate`] did with one event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExecDecision {
    /// Answered `SECCOMP_USER_NOTIF_FLAG_CONTINUE`: the kernel performs the `execve`.
    Allow {
        /// The caller's pid (in the supervisor's pid namespace).
        pid: u32,
    },
    /// Answered `EPERM`: the budget of allowed execs is spent.
    Deny {
        /// The caller's pid (in the supervisor's pid namespace).
        pid: u32,
    },
    /// The caller was killed, or interrupted by a signal, before the answer arrived
    /// (`SECCOMP_IOCTL_NOTIF_SEND` failed with `ENOENT`). Nothing was counted; an interrupted
    /// `execve` that the kernel restarts arrives again as a new notification.
    Vanished {
        /// The caller's pid (in the supervisor's pid namespace).
        pid: u32,
    },
    /// No process uses the filter any more (the listener reports `POLLHUP`): nothing left
    /// to serve.
    Closed,
}

/// Answers the `execve`/`execveat` notifications of a strict-profile filter: the first
/// `allowed` execs continue, every later one fails with `EPERM`.
///
/// Decides from the count only. It never reads the target's memory (the path and argv live in
/// memory the target controls, the TOCTOU problem of seccomp_unotify(2)), and never uses the
/// target's pid for anything but reporting. That is also why it does not call
/// `SECCOMP_IOCTL_NOTIF_ID_VALID`: that ioctl guards a supervisor that, between RECV and SEND,
/// reads `/proc/<pid>/mem` or opens `/proc/<pid>/…` and must know the pid still names the same
/// task. We look at nothing in between; a response to a notification whose target is gone is
/// simply refused by the kernel (`ENOENT`, reported as [`ExecDecision::Vanished`]).
///
/// An exec is counted only when the `CONTINUE` answer was accepted by the kernel, so a
/// first exec interrupted by a signal and restarted is still allowed. (That is why the filter
/// does not need `SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV`, 5.19+, which would only make such
/// interruptions rarer.)
///
/// Allocates in [`new`](Self::new) only; [`serve_one`](Self::serve_one) does not allocate.
#[derive(Debug)]
pub struct ExecGate {
    listener: OwnedFd,
    allowed: u32,
    continued: u32,
    /// Receive buffer of at least the kernel's `sizeof(struct seccomp_notif)`, 8-byte aligned.
    notif: Vec<u64>,
    /// Response buffer of at least the kernel's `sizeof(struct seccomp_notif_resp)`.
    resp: Vec<u64>,
}

impl ExecGate {
    /// Wraps the listener returned by [`super::install`] (received with [`super::recv_fd`]).
    /// `allowed` is how many execs continue; 1 = the server's own exec.
    ///
    /// Sizes the buffers with `SECCOMP_GET_NOTIF_SIZES`, because the kernel's structs may be
    /// larger than the ones we were compiled against (seccomp_unotify(2)).
    ///
    /// # Errors
    /// The OS error of `seccomp(SECCOMP_GET_NOTIF_SIZES)` (e.g. `EINVAL` before Linux 5.0).
    pub fn new(listener: OwnedFd, allowed: u32) -> io::Result<Self> {
        let mut sizes =
            libc::seccomp_notif_sizes { seccomp_notif: 0, seccomp_notif_resp: 0, seccomp_data: 0 };
        // SAFETY: SECCOMP_GET_NOTIF_SIZES writes one `struct seccomp_notif_sizes` to the
        // pointer, which points to a live, writable local of that type.
        cvt(unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_GET_NOTIF_SIZES,
                0,
                &mut sizes as *mut libc::seccomp_notif_sizes,
            )
        })?;
        let words = |kernel: u16, ours: usize| usize::from(kernel).max(ours).div_ceil(8);
        Ok(Self {
            listener,
            allowed,
            continued: 0,
            notif: vec![0; words(sizes.seccomp_notif, size_of::<libc::seccomp_notif>())],
            resp: vec![0; words(sizes.seccomp_notif_resp, size_of::<libc::seccomp_notif_resp>())],
        })
    }

    /// How many execs were allowed so far.
    pub fn execs_allowed(&self) -> u32 {
        self.continued
    }

    /// Waits for the next notification and answers it. Blocks without a time limit.
    ///
    /// # Errors
    /// OS errors of `poll` and the `SECCOMP_IOCTL_NOTIF_*` ioctls, other than the expected
    /// `EINTR`/`ENOENT` races.
    pub fn serve_one(&mut self) -> io::Result<ExecDecision> {
        loop {
            if let Some(decision) = self.serve_one_within(None)? {
                return Ok(decision);
            }
        }
    }

    /// Like [`serve_one`](Self::serve_one), but gives up after `timeout` (`Ok(None)`).
    /// `None` waits forever.
    ///
    /// # Errors
    /// As [`serve_one`](Self::serve_one).
    pub fn serve_one_within(
        &mut self,
        timeout: Option<Duration>,
    ) -> io::Result<Option<ExecDecision>> {
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            let wait_ms = match deadline {
                None => -1,
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    // Round up: a 0 ms poll for a sub-millisecond remainder would spin.
                    i32::try_from(left.as_nanos().div_ceil(1_000_000)).unwrap_or(i32::MAX)
                }
            };
            let mut pfd =
                libc::pollfd { fd: self.listener.as_raw_fd(), events: libc::POLLIN, revents: 0 };
            // SAFETY: one valid pollfd on the stack.
            let ready = unsafe { libc::poll(&mut pfd, 1, wait_ms) };
            match cvt(ready) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
                Ok(0) => return Ok(None),
                Ok(_) => {}
            }
            if pfd.revents & libc::POLLIN == 0 {
                if pfd.revents & (libc::POLLHUP | libc::POLLERR) != 0 {
                    return Ok(Some(ExecDecision::Closed));
                }
                continue;
            }
            match self.answer_one()? {
                Some(decision) => return Ok(Some(decision)),
                None => continue, // the notification vanished between poll and RECV
            }
        }
    }

    /// RECV one notification and SEND the answer. `None` if it vanished before RECV.
    fn answer_one(&mut self) -> io::Result<Option<ExecDecision>> {
        // The kernel rejects a RECV buffer that is not zeroed (EINVAL, since 5.9).
        self.notif.fill(0);
        // SAFETY: `notif` is writable, 8-byte aligned and at least the kernel's
        // sizeof(struct seccomp_notif) bytes (sized in `new`).
        let ret = unsafe {
            libc::ioctl(
                self.listener.as_raw_fd(),
                libc::SECCOMP_IOCTL_NOTIF_RECV,
                self.notif.as_mut_ptr(),
            )
        };
        match cvt(libc::c_long::from(ret)) {
            Ok(_) => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::EINTR)) => {
                return Ok(None);
            }
            Err(e) => return Err(e),
        }
        // SAFETY: the buffer is aligned for and at least as large as `seccomp_notif`, and the
        // kernel filled it (plain integers: every bit pattern is valid).
        let req = unsafe { self.notif.as_ptr().cast::<libc::seccomp_notif>().read() };
        let is_exec =
            [libc::SYS_execve, libc::SYS_execveat].contains(&libc::c_long::from(req.data.nr));
        // Only exec rules notify; anything else would be a foreign program: refuse it.
        let allow = is_exec && self.continued < self.allowed;
        let resp = libc::seccomp_notif_resp {
            id: req.id,
            val: 0,
            error: if allow { 0 } else { -libc::EPERM },
            flags: if allow { libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32 } else { 0 },
        };
        self.resp.fill(0);
        // SAFETY: `resp` is 8-byte aligned and at least sizeof(seccomp_notif_resp) bytes.
        unsafe { self.resp.as_mut_ptr().cast::<libc::seccomp_notif_resp>().write(resp) };
        let (fd, resp) = (self.listener.as_raw_fd(), self.resp.as_mut_ptr());
        // SAFETY: `resp` holds an initialized response of at least the kernel's size.
        let sent = retry(|| cvt(unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_SEND, resp) }));
        let pid = req.pid;
        match sent {
            Ok(_) if allow => {
                self.continued += 1;
                Ok(Some(ExecDecision::Allow { pid }))
            }
            Ok(_) => Ok(Some(ExecDecision::Deny { pid })),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                Ok(Some(ExecDecision::Vanished { pid }))
            }
            Err(e) => Err(e),
        }
    }
}

impl AsFd for ExecGate {
    /// The listener, for the supervisor's own poll loop (readable: a notification is waiting;
    /// `POLLHUP`: no process uses the filter any more).
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.listener.as_fd()
    }
}
