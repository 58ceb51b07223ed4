//! The seccomp-bpf layer (docs/sandbox.md, "Profiles").
//!
//! ```text
//!  host (multi-threaded)                 sandbox helper (single-threaded, exec'd clean)
//!  ─────────────────────                 ───────────────────────────────────────────────
//!  BpfProgram::compile(&opts)  ─ libseccomp builds the filter, exports raw BPF
//!  prog.to_bytes() ── policy pipe ──▶    BpfProgram::from_bytes(&bytes)
//!                                        ... namespaces, mounts, rlimits, uid drop,
//!                                        Landlock (steps 7–26) ...
//!                                        install(&prog)   ◀─ last syscall-affecting step
//!                                        execve(server)
//! ```
//!
//! libseccomp runs **only in the host**: after `fork` in a multi-threaded process, and in the
//! helper, only raw syscalls are used. [`install`], [`send_fd`] and [`recv_fd`] are
//! async-signal-safe: no allocation, no locks, only syscalls on caller-provided memory.
//!
//! # Profiles
//! * [`SeccompProfile::Standard`] (default): default-allow plus the deny list of docs/sandbox.md, "Profiles", native
//!   architecture only, any other architecture (i386 `int 0x80`, x32) kills the process.
//! * [`SeccompProfile::Strict`]: adds "no networking" (only AF_UNIX sockets, no
//!   connect/bind/listen/accept) and "no exec after the server's first exec".
//! * [`SeccompProfile::Off`]: no filter ([`BpfProgram::compile`] returns `Ok(None)`).
//!
//! # The strict profile's exec gate
//! A filter is installed *before* our own `execve` of the server, so it cannot simply deny
//! `execve`. Strict makes `execve`/`execveat` return `SECCOMP_RET_USER_NOTIF` instead, and a
//! supervisor answers each one:
//!
//! 1. The sandbox's init process (pid 1 of the sandbox pid namespace, our code, single-threaded)
//!    makes a `socketpair(AF_UNIX, SOCK_SEQPACKET)` and forks the server child.
//! 2. The server child finishes its setup and calls [`install`]; because the program has
//!    `USER_NOTIF` rules ([`BpfProgram::needs_exec_supervisor`]), it is installed with
//!    `SECCOMP_FILTER_FLAG_NEW_LISTENER` and `install` returns the listener fd.
//! 3. The child passes the listener to init with [`send_fd`] (`SCM_RIGHTS`), closes its own copy
//!    (it is close-on-exec anyway), and calls `execve(server)`. That `execve` blocks in the
//!    kernel until the listener answers.
//! 4. Init wraps the received fd in [`ExecGate::new`]`(listener, 1)` and calls
//!    [`ExecGate::serve_one`] in its loop (or polls the gate's fd with its other fds): the first
//!    exec is answered `SECCOMP_USER_NOTIF_FLAG_CONTINUE` (the kernel runs the real `execve`),
//!    every later exec by the server or any descendant gets `EPERM`.
//!
//! The gate decides from the count only, never from the target's memory (path, argv), so the
//! TOCTOU warning of seccomp_unotify(2) does not apply: what we "check" (nothing in the target)
//! cannot change between the check and the kernel's use. Before the first exec the only process
//! under the filter is our own server child, so the first notification is necessarily the
//! server's exec.
//!
//! **Fail-closed:** if no process holds the listener (init died, or the fd was never passed),
//! the kernel fails every `USER_NOTIF` syscall with `ENOSYS`, so the exec does not happen.
//!
//! # Cost
//! 248 BPF instructions for the standard profile with libseccomp 2.5.4 on x86_64 (the filter
//! is a default-allow list; [`BpfProgram::len`] reports the exact number). Since Linux 5.11 the
//! kernel caches, per syscall number, verdicts that do not depend on arguments, so hot syscalls
//! such as `read`, `write` and `epoll_wait` skip the filter entirely; only the syscalls with
//! rules here run it.
//!
//! # Example
//! ```no_run
//! use ringmcp::sandbox::seccomp::{BpfProgram, FilterOptions, install};
//!
//! // Host: compile once, send the bytes over the policy pipe.
//! let prog = BpfProgram::compile(&FilterOptions::default())?.expect("standard profile");
//! let bytes = prog.to_bytes();
//!
//! // Sandbox helper, after every other setup step, right before execve(server):
//! let prog = BpfProgram::from_bytes(&bytes)?;
//! let listener = install(&prog)?;
//! assert!(listener.is_none(), "the standard profile needs no exec supervisor");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Errors
//! [`SeccompError`] names the failing step; a rule that libseccomp rejects is always an error
//! (an unchecked `seccomp_rule_add` once left `personality` unfiltered).

use crate::syscall::{cvt, retry};
use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

mod gate;
mod policy;
mod probe;

pub use gate::{ExecDecision, ExecGate};
pub use probe::{SeccompSupport, probe};

/// Which filter the sandbox installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SeccompProfile {
    /// Default-allow plus the deny list of docs/sandbox.md, "Profiles".
    #[default]
    Standard,
    /// Standard plus:
    /// * `socket(2)` for any family but AF_UNIX fails with `EPERM` (a policy denial; the
    ///   standard profile's `EAFNOSUPPORT` says "family unsupported"); `socketpair` stays;
    /// * `connect`, `bind`, `listen`, `accept`, `accept4` fail with `EPERM` for every family;
    /// * no exec after the server's first exec: `execve`/`execveat` go to an [`ExecGate`].
    ///
    /// With [`FilterOptions::network`], `AF_INET`/`AF_INET6` sockets and `connect` are
    /// allowed too (the egress capture still decides where they lead); `bind`, `listen` and
    /// `accept` stay denied.
    Strict,
    /// No seccomp filter at all.
    Off,
}

/// What to compile.
#[derive(Debug, Clone, Copy, Default)]
pub struct FilterOptions {
    /// The profile.
    pub profile: SeccompProfile,
    /// Allow `AF_INET`/`AF_INET6` sockets (and, in the strict profile, `connect`).
    pub network: bool,
    /// Debug mode: denials become `SECCOMP_RET_LOG` (the call runs and the kernel logs it)
    /// instead of an errno. The bad-arch kill and the strict exec gate are unchanged.
    pub log_denials: bool,
}

/// A seccomp step that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SeccompError {
    /// A libseccomp call on the filter context failed (init, attribute, export).
    #[error("libseccomp: {what}: {source}")]
    Context {
        /// The call.
        what: &'static str,
        /// libseccomp's error.
        #[source]
        source: libseccomp::error::SeccompError,
    },
    /// libseccomp rejected a rule. Never ignored: a missing rule is a hole in the sandbox.
    #[error("libseccomp rejected the rule {rule}: {source}")]
    Rule {
        /// The rule, e.g. `personality(arg0 & 0x80400000 == 0x400000) -> Errno(1)`.
        rule: String,
        /// libseccomp's error.
        #[source]
        source: libseccomp::error::SeccompError,
    },
    /// Moving the exported program out of libseccomp failed.
    #[error("exporting the BPF program: {what}: {source}")]
    Export {
        /// The step.
        what: &'static str,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The options contradict each other (caller misuse).
    #[error("invalid seccomp options: {0}")]
    Options(&'static str),
    /// Bytes given to [`BpfProgram::from_bytes`] are not a BPF program we could install.
    #[error("invalid BPF program: {0}")]
    Program(&'static str),
}

/// The kernel's limit on a classic BPF program (`BPF_MAXINSNS`).
pub const MAX_INSNS: usize = 4096;

/// A compiled seccomp filter: classic BPF instructions, ready for `seccomp(2)`.
///
/// Built in the host by [`compile`](Self::compile) (libseccomp), moved to the sandbox helper as
/// bytes ([`to_bytes`](Self::to_bytes) / [`from_bytes`](Self::from_bytes)), installed there with
/// [`install`] using raw syscalls only.
#[derive(Clone)]
pub struct BpfProgram {
    insns: Vec<libc::sock_filter>,
    /// Some instruction returns `SECCOMP_RET_USER_NOTIF` (derived from the instructions).
    user_notif: bool,
    /// Rules added by `compile` (0 after `from_bytes`).
    rules: usize,
    /// Syscalls `compile` skipped, with the reason (empty after `from_bytes`).
    skipped: Vec<String>,
}

impl BpfProgram {
    /// Compiles the filter for `opts` with libseccomp, for the native architecture.
    /// `Ok(None)` for [`SeccompProfile::Off`].
    ///
    /// Call it in the host, never after `fork`: libseccomp allocates.
    ///
    /// # Errors
    /// [`SeccompError::Options`] for strict + `network`; [`SeccompError::Rule`] if libseccomp
    /// rejects any rule; [`SeccompError::Context`]/[`SeccompError::Export`] for the other steps.
    pub fn compile(opts: &FilterOptions) -> Result<Option<BpfProgram>, SeccompError> {
        match opts.profile {
            SeccompProfile::Off => return Ok(None),
            SeccompProfile::Standard | SeccompProfile::Strict => {}
        }
        let mut builder = policy::Builder::new(opts.log_denials)?;
        builder.add_policy(opts)?;
        let bytes = builder.export()?;
        let mut prog = Self::from_bytes(&bytes)?;
        prog.rules = builder.rules;
        prog.skipped = std::mem::take(&mut builder.skipped);
        Ok(Some(prog))
    }

    /// Number of BPF instructions.
    pub fn len(&self) -> usize {
        self.insns.len()
    }

    /// Never true for a program from `compile` or `from_bytes`; here for API completeness.
    pub fn is_empty(&self) -> bool {
        self.insns.is_empty()
    }

    /// Number of libseccomp rules `compile` added (0 for a program made by `from_bytes`).
    pub fn rules(&self) -> usize {
        self.rules
    }

    /// Syscalls `compile` left out, each with the reason ("unknown to this libseccomp", "not a
    /// syscall on this architecture"). Empty for a program made by `from_bytes`.
    pub fn skipped(&self) -> &[String] {
        &self.skipped
    }

    /// True if the program contains `SECCOMP_RET_USER_NOTIF` rules (the strict exec gate):
    /// [`install`] then creates a listener and somebody must serve it with an [`ExecGate`],
    /// or every gated syscall fails with `ENOSYS`.
    pub fn needs_exec_supervisor(&self) -> bool {
        self.user_notif
    }

    /// The program as bytes: each `struct sock_filter` as `code: u16, jt: u8, jf: u8, k: u32`
    /// in native byte order (the format libseccomp's `seccomp_export_bpf` writes). Meant for a
    /// pipe to the sandbox helper on the same machine.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.insns.len() * INSN_SIZE);
        for insn in &self.insns {
            out.extend_from_slice(&insn.code.to_ne_bytes());
            out.push(insn.jt);
            out.push(insn.jf);
            out.extend_from_slice(&insn.k.to_ne_bytes());
        }
        out
    }

    /// Parses bytes written by [`to_bytes`](Self::to_bytes).
    ///
    /// # Errors
    /// [`SeccompError::Program`] if the length is not a positive multiple of 8 bytes or exceeds
    /// [`MAX_INSNS`] instructions. (The kernel verifies the instructions themselves.)
    pub fn from_bytes(bytes: &[u8]) -> Result<BpfProgram, SeccompError> {
        if bytes.is_empty() {
            return Err(SeccompError::Program("empty"));
        }
        if !bytes.len().is_multiple_of(INSN_SIZE) {
            return Err(SeccompError::Program("length is not a multiple of 8 bytes"));
        }
        if bytes.len() / INSN_SIZE > MAX_INSNS {
            return Err(SeccompError::Program("more than BPF_MAXINSNS (4096) instructions"));
        }
        let insns: Vec<libc::sock_filter> = bytes
            .chunks_exact(INSN_SIZE)
            .map(|c| libc::sock_filter {
                code: u16::from_ne_bytes([c[0], c[1]]),
                jt: c[2],
                jf: c[3],
                k: u32::from_ne_bytes([c[4], c[5], c[6], c[7]]),
            })
            .collect();
        let user_notif = insns.iter().any(|i| {
            i.code == BPF_RET_K
                && i.k & libc::SECCOMP_RET_ACTION_FULL == libc::SECCOMP_RET_USER_NOTIF
        });
        Ok(BpfProgram { insns, user_notif, rules: 0, skipped: Vec::new() })
    }

    /// The distinct `SECCOMP_RET_*` actions the program can return (for tests and reports).
    pub fn actions(&self) -> Vec<u32> {
        let mut out: Vec<u32> = self
            .insns
            .iter()
            .filter(|i| i.code == BPF_RET_K)
            .map(|i| i.k & libc::SECCOMP_RET_ACTION_FULL)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

impl fmt::Debug for BpfProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BpfProgram")
            .field("insns", &self.insns.len())
            .field("rules", &self.rules)
            .field("user_notif", &self.user_notif)
            .field("skipped", &self.skipped)
            .finish()
    }
}

impl PartialEq for BpfProgram {
    /// Same instructions (the bookkeeping from `compile` is not compared).
    fn eq(&self, other: &Self) -> bool {
        self.to_bytes() == other.to_bytes()
    }
}

impl Eq for BpfProgram {}

/// `sizeof(struct sock_filter)`.
const INSN_SIZE: usize = 8;
/// `BPF_RET | BPF_K`: return the constant `k`.
const BPF_RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;

/// Installs `prog` on the calling thread: `prctl(PR_SET_NO_NEW_PRIVS, 1)` (idempotent;
/// without it `seccomp(2)` would need `CAP_SYS_ADMIN`), then
/// `seccomp(SECCOMP_SET_MODE_FILTER, flags, &prog)`.
///
/// If the program [needs an exec supervisor](BpfProgram::needs_exec_supervisor) it is installed
/// with `SECCOMP_FILTER_FLAG_NEW_LISTENER` and the listener (close-on-exec) is returned: hand it
/// to the supervisor with [`send_fd`]. Otherwise `Ok(None)`.
///
/// No `SECCOMP_FILTER_FLAG_TSYNC`: call it where only one thread exists (between `fork` and
/// `execve`, or in the single-threaded helper). The filter is irreversible and inherited by
/// every child and across `execve`.
///
/// Async-signal-safe: no allocation, only `prctl` and `seccomp` on memory `prog` owns.
///
/// # Errors
/// The OS error of `prctl` or `seccomp` (`EINVAL` for a program the kernel's verifier rejects
/// or an empty/oversized one, `EBUSY` if an inherited filter already has a listener, `EFAULT`,
/// `ENOMEM`).
pub fn install(prog: &BpfProgram) -> io::Result<Option<OwnedFd>> {
    let Ok(len) = u16::try_from(prog.insns.len()) else {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    };
    if len == 0 || usize::from(len) > MAX_INSNS {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: prctl(PR_SET_NO_NEW_PRIVS) takes integers only.
    cvt(libc::c_long::from(unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) }))?;
    let fprog = libc::sock_fprog { len, filter: prog.insns.as_ptr().cast_mut() };
    let flags = if prog.user_notif { libc::SECCOMP_FILTER_FLAG_NEW_LISTENER } else { 0 };
    // SAFETY: `fprog` points to `len` initialized instructions owned by `prog`, which outlives
    // the call; the kernel copies the program and never writes through the pointer.
    let ret = cvt(unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            flags,
            &fprog as *const libc::sock_fprog,
        )
    })?;
    if prog.user_notif {
        // SAFETY: with NEW_LISTENER the kernel returned a fresh fd (O_CLOEXEC) that nobody else
        // owns.
        Ok(Some(unsafe { OwnedFd::from_raw_fd(ret as libc::c_int) }))
    } else {
        Ok(None)
    }
}

/// Sends `fd` over the AF_UNIX socket `sock` as `SCM_RIGHTS`, with one byte of payload.
///
/// Async-signal-safe (only `sendmsg` on stack memory). `EINTR` is retried.
///
/// # Errors
/// The OS error of `sendmsg`.
pub fn send_fd(sock: BorrowedFd<'_>, fd: BorrowedFd<'_>) -> io::Result<()> {
    send_msg(sock, &[0], Some(fd), 0).map(drop)
}

/// Sends `payload` over the AF_UNIX socket `sock`, with `fd` as `SCM_RIGHTS` when given;
/// `flags` are `sendmsg`'s (`MSG_NOSIGNAL` is always added). Returns the bytes sent.
///
/// Async-signal-safe (only `sendmsg` on stack memory). `EINTR` is retried.
///
/// # Errors
/// The OS error of `sendmsg` (`EAGAIN` with `MSG_DONTWAIT` on a full socket).
pub fn send_msg(
    sock: BorrowedFd<'_>,
    payload: &[u8],
    fd: Option<BorrowedFd<'_>>,
    flags: libc::c_int,
) -> io::Result<usize> {
    let mut iov =
        libc::iovec { iov_base: payload.as_ptr().cast_mut().cast(), iov_len: payload.len() };
    let mut cbuf = CmsgBuf::new();
    // SAFETY: zeroed msghdr is valid (null pointers, zero lengths); fields are set below.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    if let Some(fd) = fd {
        msg.msg_control = cbuf.0.as_mut_ptr().cast();
        msg.msg_controllen = CMSG_SPACE_FD as _;
        // SAFETY: msg_control points to CMSG_SPACE_FD bytes, suitably aligned (u64 array), so
        // CMSG_FIRSTHDR returns a non-null pointer to room for one cmsghdr plus one int.
        let cmsg = unsafe { libc::CMSG_FIRSTHDR(&msg) };
        // SAFETY: zeroed cmsghdr is valid (integers, and padding on some libcs).
        let mut hdr: libc::cmsghdr = unsafe { std::mem::zeroed() };
        hdr.cmsg_level = libc::SOL_SOCKET;
        hdr.cmsg_type = libc::SCM_RIGHTS;
        hdr.cmsg_len = CMSG_LEN_FD as _;
        // SAFETY: `cmsg` points into `cbuf`, aligned for cmsghdr, with room for it (see above).
        unsafe { cmsg.write(hdr) };
        // SAFETY: `cmsg` is a valid header inside `cbuf`; CMSG_DATA is pointer arithmetic.
        let data = unsafe { libc::CMSG_DATA(cmsg) };
        // SAFETY: CMSG_SPACE_FD leaves room for one c_int after the header, inside `cbuf`.
        unsafe { data.cast::<libc::c_int>().write_unaligned(fd.as_raw_fd()) };
    }
    let sock = sock.as_raw_fd();
    // SAFETY: `msg` and everything it points to live on this stack frame (the payload is only
    // read: sendmsg takes a const msghdr).
    let sent = retry(|| cvt(unsafe { libc::sendmsg(sock, &msg, flags | libc::MSG_NOSIGNAL) }));
    sent.map(|n| n as usize)
}

/// Receives one fd sent by [`send_fd`] over `sock` (close-on-exec: `MSG_CMSG_CLOEXEC`).
///
/// Async-signal-safe (only `recvmsg` on stack memory). `EINTR` is retried.
///
/// # Errors
/// The OS error of `recvmsg`; `UnexpectedEof` if the peer closed without sending; `EPROTO`
/// if the message carried no fd or was truncated (any fds that arrived are closed).
pub fn recv_fd(sock: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    let mut byte = [0u8; 1];
    match recv_msg(sock, &mut byte, 0)? {
        (_, Some(fd)) => Ok(fd),
        (0, None) => Err(io::ErrorKind::UnexpectedEof.into()),
        (_, None) => Err(io::Error::from_raw_os_error(libc::EPROTO)),
    }
}

/// Receives one message into `buf` over `sock`, with the fd it carried, if any
/// (close-on-exec: `MSG_CMSG_CLOEXEC`); `flags` are `recvmsg`'s. `(0, None)` is the peer's
/// end of stream (or an empty datagram).
///
/// Async-signal-safe (only `recvmsg` on stack memory). `EINTR` is retried.
///
/// # Errors
/// The OS error of `recvmsg`; `EPROTO` if the control data was truncated (any fd that
/// arrived is closed); `EMSGSIZE` if the payload was truncated.
pub fn recv_msg(
    sock: BorrowedFd<'_>,
    buf: &mut [u8],
    flags: libc::c_int,
) -> io::Result<(usize, Option<OwnedFd>)> {
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    let mut cbuf = CmsgBuf::new();
    // SAFETY: zeroed msghdr is valid (null pointers, zero lengths); fields are set below.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf.0.as_mut_ptr().cast();
    msg.msg_controllen = CMSG_SPACE_FD as _;
    let from = sock.as_raw_fd();
    // SAFETY: `msg` points to buffers of the sizes it declares (`buf`, `cbuf`).
    let n = retry(|| cvt(unsafe { libc::recvmsg(from, &mut msg, flags | libc::MSG_CMSG_CLOEXEC) }))?
        as usize;
    // SAFETY: `msg` was filled by recvmsg; CMSG_FIRSTHDR only reads msg_control/_controllen.
    let cmsg = unsafe { libc::CMSG_FIRSTHDR(&msg) };
    let fd = if cmsg.is_null() {
        None
    } else {
        // SAFETY: a non-null header returned by CMSG_FIRSTHDR lies inside `cbuf`, aligned.
        let hdr = unsafe { cmsg.read() };
        if hdr.cmsg_level == libc::SOL_SOCKET
            && hdr.cmsg_type == libc::SCM_RIGHTS
            && hdr.cmsg_len as usize >= CMSG_LEN_FD as usize
        {
            // SAFETY: as above; CMSG_DATA is pointer arithmetic within the message.
            let data = unsafe { libc::CMSG_DATA(cmsg) };
            // SAFETY: the header says at least one int of data follows, inside `cbuf`.
            let raw = unsafe { data.cast::<libc::c_int>().read_unaligned() };
            // SAFETY: SCM_RIGHTS installed a fresh fd in our table that nobody else owns.
            Some(unsafe { OwnedFd::from_raw_fd(raw) })
        } else {
            None
        }
    };
    if msg.msg_flags & libc::MSG_CTRUNC != 0 {
        // More fds may have been lost; refuse (dropping closes ours).
        return Err(io::Error::from_raw_os_error(libc::EPROTO));
    }
    if msg.msg_flags & libc::MSG_TRUNC != 0 {
        return Err(io::Error::from_raw_os_error(libc::EMSGSIZE));
    }
    Ok((n, fd))
}

/// `sizeof(int)`, the payload of one `SCM_RIGHTS` fd.
const FD_SIZE: libc::c_uint = std::mem::size_of::<libc::c_int>() as libc::c_uint;
/// `CMSG_SPACE(sizeof(int))`.
// SAFETY: CMSG_SPACE is arithmetic on its argument (unsafe only for historical reasons).
const CMSG_SPACE_FD: libc::c_uint = unsafe { libc::CMSG_SPACE(FD_SIZE) };
/// `CMSG_LEN(sizeof(int))`.
// SAFETY: CMSG_LEN is arithmetic on its argument.
const CMSG_LEN_FD: libc::c_uint = unsafe { libc::CMSG_LEN(FD_SIZE) };

/// Control-message buffer for one fd, aligned for `cmsghdr` (whose alignment is that of
/// `size_t`).
struct CmsgBuf([u64; 4]);

impl CmsgBuf {
    const fn new() -> Self {
        // 32 bytes >= CMSG_SPACE(sizeof(int)) = 24 on 64-bit, 16 on 32-bit.
        const _: () = assert!(CMSG_SPACE_FD as usize <= std::mem::size_of::<CmsgBuf>());
        CmsgBuf([0; 4])
    }
}

/// An anonymous in-memory file (close-on-exec), for libseccomp's fd-based export.
fn memfd(name: &str) -> io::Result<OwnedFd> {
    let name = std::ffi::CString::new(name).map_err(|_| io::ErrorKind::InvalidInput)?;
    // SAFETY: `name` is a valid NUL-terminated string for the duration of the call.
    let fd =
        cvt(libc::c_long::from(unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) }))?;
    // SAFETY: memfd_create returned a fresh fd that nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

/// The one place that turns a raw `-1`/errno into `io::Error` (no allocation).
#[cfg(test)]
mod tests;
