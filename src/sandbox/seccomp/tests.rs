//! Tests of the seccomp layer. Filters are only ever installed in forked children, never in the
//! test process (they are irreversible and would leak into every later test).
//!
//! Probe convention (SANDBOX.md §4, bwrap's `try-syscall`): each syscall gets harmless wrong
//! arguments, so an allowed call fails with EFAULT/EBADF/EINVAL/ESRCH and a denied one with
//! EPERM/ENOSYS/EAFNOSUPPORT. The same probes also run in an unfiltered child (the "baseline")
//! to prove they can tell the two apart on this machine: a probe whose baseline result equals
//! the expected denial would pass even with the rule missing.
//!
//! After `fork` in this multi-threaded harness the child uses only raw syscalls and `_exit`:
//! every buffer it touches is allocated before the fork or lives on its stack.

use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use libc::{EAFNOSUPPORT, ENOSYS, EPERM, c_long};

use super::policy::{CLONE_NS_FLAGS, GROUPS};
use super::*;

// ----------------------------------------------------------------------------- child runner

/// An unmapped address (below `vm.mmap_min_addr`): allowed syscalls fail with EFAULT on it.
const BAD: u64 = 8;
/// A pid that cannot exist (`pid_max` is at most 2^22).
const NO_PID: u64 = 0x7fff_ffff;
/// Seconds a forked child may live before SIGALRM kills it (no test hangs forever).
const CHILD_ALARM: libc::c_uint = 20;
/// Exit code of a child whose `install` failed (its errno follows on the pipe).
const INSTALL_FAILED: i32 = 90;

/// A probe result: `-errno` on failure, the return value (>= 0) on success.
type Outcome = i64;

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// A raw syscall with up to six integer arguments.
fn sys(nr: c_long, a: &[u64]) -> Outcome {
    let mut v = [0u64; 6];
    v[..a.len()].copy_from_slice(a);
    // SAFETY: probes pass integers, NULL, unmapped addresses, or pointers to live locals the
    // syscall may write (sized for it); the kernel validates the rest.
    let r = unsafe { libc::syscall(nr, v[0], v[1], v[2], v[3], v[4], v[5]) };
    if r == -1 { -i64::from(errno()) } else { r }
}

/// The pipe a child reports through (one i64 per value, native endianness).
struct Sink(libc::c_int);

impl Sink {
    fn put(&mut self, v: i64) {
        // SAFETY: writes 8 bytes from a live local to a pipe fd we own.
        unsafe { libc::write(self.0, (&v as *const i64).cast(), 8) };
    }
    fn put_bytes(&mut self, b: &[u8]) {
        // SAFETY: writes `b` to a pipe fd we own.
        unsafe { libc::write(self.0, b.as_ptr().cast(), b.len()) };
    }
}

/// How a forked child ended, and what it wrote.
#[derive(Debug)]
struct Ended {
    status: libc::c_int,
    out: Vec<u8>,
}

impl Ended {
    fn exit_code(&self) -> Option<i32> {
        libc::WIFEXITED(self.status).then(|| libc::WEXITSTATUS(self.status))
    }
    fn signal(&self) -> Option<i32> {
        libc::WIFSIGNALED(self.status).then(|| libc::WTERMSIG(self.status))
    }
    fn values(&self) -> Vec<i64> {
        self.out.chunks_exact(8).map(|c| i64::from_ne_bytes(c.try_into().unwrap())).collect()
    }
    /// Panics with a clear message unless the child exited 0.
    fn assert_clean(&self) {
        if self.exit_code() == Some(INSTALL_FAILED) {
            panic!("install() failed in the child: errno {:?}", self.values().first());
        }
        assert_eq!(self.exit_code(), Some(0), "child ended abnormally: {self:?}");
    }
}

fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two fds into the array.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    (own(fds[0]), own(fds[1]))
}

fn socketpair() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    let kind = libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC;
    // SAFETY: socketpair writes two fds into the array.
    assert_eq!(unsafe { libc::socketpair(libc::AF_UNIX, kind, 0, fds.as_mut_ptr()) }, 0);
    (own(fds[0]), own(fds[1]))
}

/// Takes ownership of a fresh fd returned by the kernel.
fn own(fd: libc::c_int) -> OwnedFd {
    assert!(fd >= 0);
    // SAFETY: callers pass fds the kernel just created for us, owned by nobody else.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

fn fork() -> libc::pid_t {
    // SAFETY: the child only makes raw syscalls and leaves with `_exit` (see the callers).
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
    pid
}

fn exit_now(code: i32) -> ! {
    // SAFETY: _exit ends the process without running atexit handlers or destructors.
    unsafe { libc::_exit(code) }
}

fn wait(pid: libc::pid_t) -> libc::c_int {
    let mut status = 0;
    loop {
        // SAFETY: waits for our own child; writes the status to a local.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return status;
        }
        assert_eq!(errno(), libc::EINTR, "waitpid");
    }
}

/// Everything already in the pipe (the writer has exited), without waiting for EOF: copies of
/// the write end may live on in children that other tests forked meanwhile.
fn drain(fd: &OwnedFd) -> Vec<u8> {
    // SAFETY: fcntl on an fd we own.
    unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        // SAFETY: reads into a local buffer of the given size.
        let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            return out;
        }
        out.extend_from_slice(&buf[..n as usize]);
    }
}

/// Forks a child that leaves its session (no controlling tty, like §2 step 22), arms an alarm,
/// installs `prog` if given (closing any listener), runs `body`, and exits 0.
fn in_child(prog: Option<&BpfProgram>, body: impl FnOnce(&mut Sink)) -> Ended {
    let (rd, wr) = pipe();
    let pid = fork();
    if pid == 0 {
        drop(rd);
        let mut sink = Sink(wr.as_raw_fd());
        // SAFETY: setsid and alarm take integers only.
        unsafe {
            libc::setsid();
        }
        // SAFETY: as above.
        unsafe { libc::alarm(CHILD_ALARM) };
        if let Some(prog) = prog {
            match install(prog) {
                Ok(listener) => drop(listener),
                Err(e) => {
                    sink.put(i64::from(e.raw_os_error().unwrap_or(0)));
                    exit_now(INSTALL_FAILED);
                }
            }
        }
        body(&mut sink);
        exit_now(0);
    }
    drop(wr);
    let status = wait(pid);
    Ended { status, out: drain(&rd) }
}

fn compile(profile: SeccompProfile, network: bool) -> BpfProgram {
    let opts = FilterOptions { profile, network, log_denials: false };
    BpfProgram::compile(&opts).expect("compile").expect("a profile other than Off")
}

fn is_root() -> bool {
    // SAFETY: geteuid has no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

// ----------------------------------------------------------------------------- probe tables

/// Expected outcome under the filter.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Expect {
    /// Fails with this errno.
    Err(i32),
    /// Succeeds (any value >= 0).
    Ok,
}

/// What the unfiltered baseline must show.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Baseline {
    /// Must differ from the expected denial (as root: without the rule the probe would fail).
    Differs,
    /// Like `Differs`, but the kernel may lack the feature and answer the same errno itself
    /// (a socket family that is not built in): then the probe is reported as not discriminating.
    DiffersIfSupported,
    /// Allowed call: same class of result (success, or the same errno) with and without filter.
    Same,
    /// Not run unfiltered (it would change the child: unshare(CLONE_NEWUSER)).
    Skip,
}

struct Probe {
    name: &'static str,
    call: fn(u64) -> Outcome,
    arg: u64,
    expect: Expect,
    baseline: Baseline,
}

const fn p(
    name: &'static str,
    call: fn(u64) -> Outcome,
    arg: u64,
    expect: Expect,
    baseline: Baseline,
) -> Probe {
    Probe { name, call, arg, expect, baseline }
}

use Baseline::{Differs, DiffersIfSupported, Same, Skip};

const DENY: Expect = Expect::Err(EPERM);
const NOSYS: Expect = Expect::Err(ENOSYS);
const NOAF: Expect = Expect::Err(EAFNOSUPPORT);
const OK: Expect = Expect::Ok;

/// Syscalls newer than the `libc` crate's tables (unified numbers, every architecture).
const SYS_STATMOUNT: c_long = 457;
const SYS_LISTMOUNT: c_long = 458;

fn socket(family: u64, kind: libc::c_int, proto: libc::c_int) -> Outcome {
    let kind = (kind | libc::SOCK_CLOEXEC) as u64;
    let r = sys(libc::SYS_socket, &[family, kind, proto as u64]);
    if r >= 0 {
        // SAFETY: closes the socket the probe just created.
        unsafe { libc::close(r as libc::c_int) };
    }
    r
}

fn socketpair_probe(_: u64) -> Outcome {
    let mut fds = [-1 as libc::c_int; 2];
    let kind = (libc::SOCK_STREAM | libc::SOCK_CLOEXEC) as u64;
    let r = sys(libc::SYS_socketpair, &[libc::AF_UNIX as u64, kind, 0, fds.as_mut_ptr() as u64]);
    for fd in fds.into_iter().filter(|&fd| fd >= 0) {
        // SAFETY: closes fds the probe just created.
        unsafe { libc::close(fd) };
    }
    r
}

/// `personality(x)`, restoring PER_LINUX if it took effect.
fn personality(x: u64) -> Outcome {
    let r = sys(libc::SYS_personality, &[x]);
    if r >= 0 {
        sys(libc::SYS_personality, &[0]);
    }
    r
}

/// `clone(flags | CLONE_THREAD)` without `CLONE_SIGHAND`: the kernel rejects the combination
/// with EINVAL, so an allowed call never creates a process.
fn clone_invalid(flags: u64) -> Outcome {
    sys(libc::SYS_clone, &[flags | libc::CLONE_THREAD as u64, 0, 0, 0, 0])
}

fn memfd(flags: u64) -> Outcome {
    let r = sys(libc::SYS_memfd_create, &[c"probe".as_ptr() as u64, flags]);
    if r >= 0 {
        // SAFETY: closes the memfd the probe just created.
        unsafe { libc::close(r as libc::c_int) };
    }
    r
}

/// Ordinary work that must keep working: pipe, write, read, mmap, munmap, fork + wait.
fn ordinary(_: u64) -> Outcome {
    let mut fds = [0 as libc::c_int; 2];
    if sys(libc::SYS_pipe2, &[fds.as_mut_ptr() as u64, libc::O_CLOEXEC as u64]) < 0 {
        return -1000;
    }
    let msg = *b"ping";
    let mut back = [0u8; 4];
    let w = sys(libc::SYS_write, &[fds[1] as u64, msg.as_ptr() as u64, 4]);
    let r = sys(libc::SYS_read, &[fds[0] as u64, back.as_mut_ptr() as u64, 4]);
    sys(libc::SYS_close, &[fds[0] as u64]);
    sys(libc::SYS_close, &[fds[1] as u64]);
    if w != 4 || r != 4 || back != msg {
        return -1001;
    }
    let prot = (libc::PROT_READ | libc::PROT_WRITE) as u64;
    let flags = (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS) as u64;
    let addr = sys(libc::SYS_mmap, &[0, 4096, prot, flags, u64::MAX, 0]);
    if addr < 0 {
        return -1002;
    }
    // SAFETY: `addr` is a fresh private anonymous read-write page of 4096 bytes.
    unsafe { (addr as *mut u8).write(7) };
    if sys(libc::SYS_munmap, &[addr as u64, 4096]) != 0 {
        return -1003;
    }
    // fork via clone(SIGCHLD): the namespace rules must not catch plain process creation.
    let child = sys(libc::SYS_clone, &[libc::SIGCHLD as u64, 0, 0, 0, 0]);
    if child == 0 {
        exit_now(7);
    }
    if child < 0 {
        return -1004;
    }
    let mut status = 0;
    // SAFETY: waits for the child just created; writes the status to a local.
    unsafe { libc::waitpid(child as libc::pid_t, &mut status, 0) };
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 7) {
        return -1005;
    }
    if sys(libc::SYS_getpid, &[]) <= 0 {
        return -1006;
    }
    0
}

macro_rules! call {
    ($nr:expr $(, $a:expr)* $(,)?) => {
        |_| sys($nr, &[$($a as u64),*])
    };
}

#[allow(clippy::unnecessary_cast)] // `Ioctl` is not u64 on every target
const TIOCSTI: u64 = libc::TIOCSTI as u64;
const RIE: u64 = libc::READ_IMPLIES_EXEC as u64;
const NL_ROUTE: libc::c_int = libc::NETLINK_ROUTE;
const NL_UEVENT: libc::c_int = libc::NETLINK_KOBJECT_UEVENT;

/// Every group of the §3.2 deny table, plus the argument-level rules, in the standard profile
/// without network.
const STANDARD: &[Probe] = &[
    // namespaces / mounts (EPERM)
    p("unshare(CLONE_NEWUSER)", call!(libc::SYS_unshare, libc::CLONE_NEWUSER), 0, DENY, Skip),
    p("unshare(invalid 0x1)", call!(libc::SYS_unshare, 1), 0, DENY, Differs),
    p("setns(-1, 0)", call!(libc::SYS_setns, -1i64, 0), 0, DENY, Differs),
    p("mount(BAD..)", call!(libc::SYS_mount, BAD, BAD, BAD, 0, 0), 0, DENY, Differs),
    p("umount2(BAD, bad flags)", call!(libc::SYS_umount2, BAD, 0x8000_0000u32), 0, DENY, Differs),
    p("pivot_root(BAD, BAD)", call!(libc::SYS_pivot_root, BAD, BAD), 0, DENY, Differs),
    p("chroot(BAD)", call!(libc::SYS_chroot, BAD), 0, DENY, Differs),
    p("clone(CLONE_NEWNS)", clone_invalid, libc::CLONE_NEWNS as u64, DENY, Differs),
    p("clone(CLONE_NEWCGROUP)", clone_invalid, libc::CLONE_NEWCGROUP as u64, DENY, Differs),
    p("clone(CLONE_NEWUTS)", clone_invalid, libc::CLONE_NEWUTS as u64, DENY, Differs),
    p("clone(CLONE_NEWIPC)", clone_invalid, libc::CLONE_NEWIPC as u64, DENY, Differs),
    p("clone(CLONE_NEWUSER)", clone_invalid, libc::CLONE_NEWUSER as u64, DENY, Differs),
    p("clone(CLONE_NEWPID)", clone_invalid, libc::CLONE_NEWPID as u64, DENY, Differs),
    p("clone(CLONE_NEWNET)", clone_invalid, libc::CLONE_NEWNET as u64, DENY, Differs),
    p("clone(no namespace flag)", clone_invalid, 0, Expect::Err(libc::EINVAL), Same),
    // un-inspectable / new APIs (ENOSYS)
    p("clone3(NULL, 0)", call!(libc::SYS_clone3, 0, 0), 0, NOSYS, Differs),
    p("open_tree(bad flags)", call!(libc::SYS_open_tree, -1i64, BAD, u32::MAX), 0, NOSYS, Differs),
    p(
        "move_mount(bad flags)",
        call!(libc::SYS_move_mount, -1i64, BAD, -1i64, BAD, u32::MAX),
        0,
        NOSYS,
        Differs,
    ),
    p("fsopen(bad flags)", call!(libc::SYS_fsopen, BAD, u32::MAX), 0, NOSYS, Differs),
    p("fsconfig(-1)", call!(libc::SYS_fsconfig, -1i64, 0, 0, 0, 0), 0, NOSYS, Differs),
    p("fsmount(bad flags)", call!(libc::SYS_fsmount, -1i64, u32::MAX, 0), 0, NOSYS, Differs),
    p("fspick(bad flags)", call!(libc::SYS_fspick, -1i64, BAD, u32::MAX), 0, NOSYS, Differs),
    p(
        "mount_setattr(bad flags)",
        call!(libc::SYS_mount_setattr, -1i64, BAD, u32::MAX, 0, 0),
        0,
        NOSYS,
        Differs,
    ),
    // io_uring (ENOSYS)
    p("io_uring_setup(1, NULL)", call!(libc::SYS_io_uring_setup, 1, 0), 0, NOSYS, Differs),
    p(
        "io_uring_enter(-1)",
        call!(libc::SYS_io_uring_enter, -1i64, 0, 0, 0, 0, 0),
        0,
        NOSYS,
        Differs,
    ),
    p(
        "io_uring_register(-1)",
        call!(libc::SYS_io_uring_register, -1i64, 0, 0, 0),
        0,
        NOSYS,
        Differs,
    ),
    // keyring (EPERM)
    p(
        "keyctl(GET_KEYRING_ID, session)",
        call!(libc::SYS_keyctl, libc::KEYCTL_GET_KEYRING_ID, libc::KEY_SPEC_SESSION_KEYRING, 0),
        0,
        DENY,
        Differs,
    ),
    p("add_key(BAD..)", call!(libc::SYS_add_key, BAD, BAD, 0, 0, 0), 0, DENY, Differs),
    p("request_key(BAD..)", call!(libc::SYS_request_key, BAD, BAD, 0, 0), 0, DENY, Differs),
    // tracing / cross-process (EPERM)
    p(
        "ptrace(bad request, no pid)",
        call!(libc::SYS_ptrace, 0x7fff_ffff, NO_PID),
        0,
        DENY,
        Differs,
    ),
    p(
        "process_vm_readv(bad flags)",
        call!(libc::SYS_process_vm_readv, 1, 0, 0, 0, 0, 1),
        0,
        DENY,
        Differs,
    ),
    p(
        "process_vm_writev(bad flags)",
        call!(libc::SYS_process_vm_writev, 1, 0, 0, 0, 0, 1),
        0,
        DENY,
        Differs,
    ),
    p("kcmp(no pid)", call!(libc::SYS_kcmp, NO_PID, NO_PID, 0, 0, 0), 0, DENY, Differs),
    p("pidfd_getfd(-1)", call!(libc::SYS_pidfd_getfd, -1i64, 0, 0), 0, DENY, Differs),
    // kernel attack surface (EPERM)
    p("bpf(BPF_MAP_CREATE, NULL, 0)", call!(libc::SYS_bpf, 0, 0, 0), 0, DENY, Differs),
    p(
        "perf_event_open(NULL)",
        call!(libc::SYS_perf_event_open, 0, 0, -1i64, -1i64, 0),
        0,
        DENY,
        Differs,
    ),
    p("userfaultfd(bad flags)", call!(libc::SYS_userfaultfd, u32::MAX), 0, DENY, Differs),
    p("fanotify_init(bad flags)", call!(libc::SYS_fanotify_init, u32::MAX, 0), 0, DENY, Differs),
    p("lookup_dcookie(BAD)", call!(libc::SYS_lookup_dcookie, 0, BAD, 0), 0, DENY, Differs),
    p(
        "open_by_handle_at(-1, BAD)",
        call!(libc::SYS_open_by_handle_at, -1i64, BAD, 0),
        0,
        DENY,
        Differs,
    ),
    p(
        "name_to_handle_at(bad flags)",
        call!(libc::SYS_name_to_handle_at, -1i64, BAD, BAD, BAD, u32::MAX),
        0,
        DENY,
        Differs,
    ),
    // admin (EPERM)
    p("kexec_load(bad flags)", call!(libc::SYS_kexec_load, 0, 0, 0, u32::MAX), 0, DENY, Differs),
    p(
        "kexec_file_load(bad flags)",
        call!(libc::SYS_kexec_file_load, -1i64, -1i64, 0, 0, u32::MAX),
        0,
        DENY,
        Differs,
    ),
    p("init_module(len 0)", call!(libc::SYS_init_module, BAD, 0, BAD), 0, DENY, Differs),
    p(
        "finit_module(bad flags)",
        call!(libc::SYS_finit_module, -1i64, BAD, u32::MAX),
        0,
        DENY,
        Differs,
    ),
    p("delete_module(BAD)", call!(libc::SYS_delete_module, BAD, 0), 0, DENY, Differs),
    p("reboot(bad magic)", call!(libc::SYS_reboot, 0, 0, 0, 0), 0, DENY, Differs),
    p("swapon(BAD)", call!(libc::SYS_swapon, BAD, 0), 0, DENY, Differs),
    p("swapoff(BAD)", call!(libc::SYS_swapoff, BAD), 0, DENY, Differs),
    p("acct(BAD)", call!(libc::SYS_acct, BAD), 0, DENY, Differs),
    p("syslog(bad type)", call!(libc::SYS_syslog, -1i64, 0, 0), 0, DENY, Differs),
    p("quotactl(NULL special)", call!(libc::SYS_quotactl, 0, 0, 0, 0), 0, DENY, Differs),
    p("quotactl_fd(-1)", call!(libc::SYS_quotactl_fd, -1i64, 0, 0, 0), 0, DENY, Differs),
    p("vhangup() without a tty", call!(libc::SYS_vhangup), 0, DENY, Differs),
    p("iopl(4)", call!(libc::SYS_iopl, 4), 0, DENY, Differs),
    p("ioperm(out of range)", call!(libc::SYS_ioperm, u32::MAX, 1, 0), 0, DENY, Differs),
    p("settimeofday(BAD)", call!(libc::SYS_settimeofday, BAD, 0), 0, DENY, Differs),
    p(
        "clock_settime(bad clock)",
        call!(libc::SYS_clock_settime, 0x7fff_ffff, BAD),
        0,
        DENY,
        Differs,
    ),
    p(
        "clock_adjtime(bad clock)",
        call!(libc::SYS_clock_adjtime, 0x7fff_ffff, BAD),
        0,
        DENY,
        Differs,
    ),
    p("adjtimex(BAD)", call!(libc::SYS_adjtimex, BAD), 0, DENY, Differs),
    // legacy / NUMA (EPERM)
    p("uselib(BAD)", call!(libc::SYS_uselib, BAD), 0, DENY, Differs),
    p("ustat(0, BAD)", call!(libc::SYS_ustat, 0, BAD), 0, DENY, Differs),
    p("sysfs(bad option)", call!(libc::SYS_sysfs, 99, 0, 0), 0, DENY, Differs),
    p("_sysctl(BAD)", call!(libc::SYS__sysctl, BAD), 0, DENY, Differs),
    p("modify_ldt(bad func)", call!(libc::SYS_modify_ldt, 99, 0, 0), 0, DENY, Differs),
    p(
        "move_pages(bad flags)",
        call!(libc::SYS_move_pages, 0, 0, 0, 0, 0, 0xffff),
        0,
        DENY,
        Differs,
    ),
    p("migrate_pages(no pid)", call!(libc::SYS_migrate_pages, NO_PID, 0, 0, 0), 0, DENY, Differs),
    p("mbind(bad mode)", call!(libc::SYS_mbind, 0, 0, 99, 0, 0, 0), 0, DENY, Differs),
    p("set_mempolicy(bad mode)", call!(libc::SYS_set_mempolicy, 99, 0, 0), 0, DENY, Differs),
    // mount info (EPERM)
    p("statmount(BAD)", call!(SYS_STATMOUNT, BAD, BAD, 0, u32::MAX), 0, DENY, Differs),
    p("listmount(BAD)", call!(SYS_LISTMOUNT, BAD, BAD, 0, u32::MAX), 0, DENY, Differs),
    // TTY injection: ioctl masked to 32 bits (CVE-2019-10063)
    p("ioctl(-1, TIOCSTI)", call!(libc::SYS_ioctl, -1i64, TIOCSTI, 0), 0, DENY, Differs),
    p(
        "ioctl(-1, 0xdeadbeef_00005412)",
        call!(libc::SYS_ioctl, -1i64, 0xdead_beef_0000_0000 | TIOCSTI, 0),
        0,
        DENY,
        Differs,
    ),
    p("ioctl(-1, TIOCLINUX)", call!(libc::SYS_ioctl, -1i64, libc::TIOCLINUX, 0), 0, DENY, Differs),
    p(
        "ioctl(-1, TCGETS)",
        call!(libc::SYS_ioctl, -1i64, libc::TCGETS, 0),
        0,
        Expect::Err(libc::EBADF),
        Same,
    ),
    // personality: dangerous flags denied, query and plain personas allowed
    p("personality(0xffffffff) query", personality, 0xffff_ffff, OK, Same),
    p("personality(-1 as u64) query", personality, u64::MAX, OK, Same),
    p("personality(PER_LINUX)", personality, 0, OK, Same),
    p("personality(PER_LINUX32)", personality, 0x0008, OK, Same),
    p("personality(UNAME26)", personality, 0x0020000, OK, Same),
    p("personality(READ_IMPLIES_EXEC)", personality, RIE, DENY, Differs),
    p("personality(ADDR_NO_RANDOMIZE)", personality, libc::ADDR_NO_RANDOMIZE as u64, DENY, Differs),
    p("personality(MMAP_PAGE_ZERO)", personality, libc::MMAP_PAGE_ZERO as u64, DENY, Differs),
    p("personality(RIE | high-half garbage)", personality, 0x1_0000_0000 | RIE, DENY, Differs),
    p("personality(RIE | bit 31)", personality, 0x8000_0000 | RIE, DENY, Differs),
    p("personality(0xfffffffe)", personality, 0xffff_fffe, DENY, Differs),
    p("personality(bit 31 only)", personality, 0x8000_0000, DENY, Differs),
    // sockets
    p("socket(AF_UNIX)", |_| socket(1, libc::SOCK_STREAM, 0), 0, OK, Same),
    p("socketpair(AF_UNIX)", socketpair_probe, 0, OK, Same),
    p("socket(AF_INET) without network", |_| socket(2, libc::SOCK_STREAM, 0), 0, NOAF, Differs),
    p("socket(AF_INET6) without network", |_| socket(10, libc::SOCK_STREAM, 0), 0, NOAF, Differs),
    p("socket(AF_NETLINK, NETLINK_ROUTE)", |_| socket(16, libc::SOCK_RAW, NL_ROUTE), 0, OK, Same),
    p(
        "socket(AF_NETLINK, KOBJECT_UEVENT)",
        |_| socket(16, libc::SOCK_RAW, NL_UEVENT),
        0,
        NOAF,
        Differs,
    ),
    p("socket(AF_PACKET)", |_| socket(17, libc::SOCK_RAW, 0), 0, NOAF, Differs),
    p("socket(AF_VSOCK)", |_| socket(40, libc::SOCK_STREAM, 0), 0, NOAF, DiffersIfSupported),
    p("socket(AF_ALG)", |_| socket(38, libc::SOCK_SEQPACKET, 0), 0, NOAF, DiffersIfSupported),
    p("socket(AF_KEY)", |_| socket(15, libc::SOCK_RAW, 2), 0, NOAF, DiffersIfSupported),
    p(
        "socket(AF_UNIX | high-half garbage)",
        |_| socket(0x1_0000_0001, libc::SOCK_STREAM, 0),
        0,
        NOAF,
        Differs,
    ),
    p(
        "connect(-1) still allowed",
        call!(libc::SYS_connect, -1i64, 0, 0),
        0,
        Expect::Err(libc::EBADF),
        Same,
    ),
    // memfd_create(MFD_EXEC)
    p("memfd_create(MFD_EXEC)", memfd, (libc::MFD_EXEC | libc::MFD_CLOEXEC) as u64, DENY, Differs),
    p(
        "memfd_create(MFD_NOEXEC_SEAL)",
        memfd,
        (libc::MFD_NOEXEC_SEAL | libc::MFD_CLOEXEC) as u64,
        OK,
        Same,
    ),
    // stays allowed
    p("pipe/read/write/mmap/fork/getpid", ordinary, 0, OK, Same),
    p(
        "seccomp(GET_ACTION_AVAIL) (stacking allowed)",
        |_| {
            let action = libc::SECCOMP_RET_LOG;
            sys(
                libc::SYS_seccomp,
                &[libc::SECCOMP_GET_ACTION_AVAIL as u64, 0, &action as *const u32 as u64],
            )
        },
        0,
        OK,
        Same,
    ),
    p(
        "prctl(PR_GET_NO_NEW_PRIVS)",
        call!(libc::SYS_prctl, libc::PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0),
        0,
        OK,
        Same,
    ),
];

/// The standard profile with `network`: INET families open, the rest unchanged.
const STANDARD_NETWORK: &[Probe] = &[
    p("socket(AF_INET) with network", |_| socket(2, libc::SOCK_STREAM, 0), 0, OK, Same),
    p("socket(AF_INET6) with network", |_| socket(10, libc::SOCK_DGRAM, 0), 0, OK, Same),
    p("socket(AF_UNIX)", |_| socket(1, libc::SOCK_STREAM, 0), 0, OK, Same),
    p("socket(AF_NETLINK, NETLINK_ROUTE)", |_| socket(16, libc::SOCK_RAW, NL_ROUTE), 0, OK, Same),
    p(
        "socket(AF_NETLINK, KOBJECT_UEVENT)",
        |_| socket(16, libc::SOCK_RAW, NL_UEVENT),
        0,
        NOAF,
        Differs,
    ),
    p("socket(AF_PACKET)", |_| socket(17, libc::SOCK_RAW, 0), 0, NOAF, Differs),
    p(
        "socket(AF_INET | high-half garbage)",
        |_| socket(0x1_0000_0002, libc::SOCK_STREAM, 0),
        0,
        NOAF,
        Differs,
    ),
    p("io_uring_setup(1, NULL)", call!(libc::SYS_io_uring_setup, 1, 0), 0, NOSYS, Differs),
];

/// The strict profile's additions (its exec gate is tested separately).
const STRICT: &[Probe] = &[
    p("socket(AF_UNIX)", |_| socket(1, libc::SOCK_STREAM, 0), 0, OK, Same),
    p("socketpair(AF_UNIX)", socketpair_probe, 0, OK, Same),
    p("socket(AF_INET)", |_| socket(2, libc::SOCK_STREAM, 0), 0, DENY, Differs),
    p(
        "socket(AF_NETLINK, NETLINK_ROUTE)",
        |_| socket(16, libc::SOCK_RAW, NL_ROUTE),
        0,
        DENY,
        Differs,
    ),
    p("socket(AF_PACKET)", |_| socket(17, libc::SOCK_RAW, 0), 0, DENY, Differs),
    p(
        "socket(AF_UNIX | high-half garbage)",
        |_| socket(0x1_0000_0001, libc::SOCK_STREAM, 0),
        0,
        DENY,
        Differs,
    ),
    p("connect(-1)", call!(libc::SYS_connect, -1i64, 0, 0), 0, DENY, Differs),
    p("bind(-1)", call!(libc::SYS_bind, -1i64, 0, 0), 0, DENY, Differs),
    p("listen(-1)", call!(libc::SYS_listen, -1i64, 0), 0, DENY, Differs),
    p("accept(-1)", call!(libc::SYS_accept, -1i64, 0, 0), 0, DENY, Differs),
    p("accept4(-1)", call!(libc::SYS_accept4, -1i64, 0, 0, 0), 0, DENY, Differs),
    // the standard rules are still there
    p("io_uring_setup(1, NULL)", call!(libc::SYS_io_uring_setup, 1, 0), 0, NOSYS, Differs),
    p("personality(READ_IMPLIES_EXEC)", personality, RIE, DENY, Differs),
    p("clone(CLONE_NEWUSER)", clone_invalid, libc::CLONE_NEWUSER as u64, DENY, Differs),
    p("pipe/read/write/mmap/fork/getpid", ordinary, 0, OK, Same),
];

/// Debug mode: denials are logged, not enforced (the probes behave as without a filter).
const LOGGED: &[Probe] = &[
    p(
        "io_uring_setup(1, NULL) logged",
        call!(libc::SYS_io_uring_setup, 1, 0),
        0,
        Expect::Err(libc::EFAULT),
        Same,
    ),
    p(
        "unshare(invalid 0x1) logged",
        call!(libc::SYS_unshare, 1),
        0,
        Expect::Err(libc::EINVAL),
        Same,
    ),
    p("socket(AF_UNIX)", |_| socket(1, libc::SOCK_STREAM, 0), 0, OK, Same),
];

/// Marker for "not run" in the baseline.
const NOT_RUN: i64 = i64::MIN;

fn run_probes(prog: Option<&BpfProgram>, probes: &'static [Probe]) -> Vec<Outcome> {
    let ended = in_child(prog, |sink| {
        for probe in probes {
            let skip = prog.is_none() && probe.baseline == Skip;
            sink.put(if skip { NOT_RUN } else { (probe.call)(probe.arg) });
        }
    });
    ended.assert_clean();
    let values = ended.values();
    assert_eq!(
        values.len(),
        probes.len(),
        "child reported {} of {} probes",
        values.len(),
        probes.len()
    );
    values
}

fn show(o: Outcome) -> String {
    match o {
        NOT_RUN => "not run".to_owned(),
        o if o >= 0 => format!("ok ({o})"),
        o => format!("{} ({})", std::io::Error::from_raw_os_error(-o as i32), -o),
    }
}

/// Runs `probes` under `prog` and unfiltered; fails listing every mismatch.
fn check(prog: &BpfProgram, probes: &'static [Probe]) {
    let filtered = run_probes(Some(prog), probes);
    let baseline = run_probes(None, probes);
    let class = |o: Outcome| if o >= 0 { 0 } else { o };
    let mut failures = Vec::new();
    for ((probe, &got), &base) in probes.iter().zip(&filtered).zip(&baseline) {
        // Shown with --nocapture (and on failure): the evidence behind each verdict.
        eprintln!("{:<44} filtered: {:<36} unfiltered: {}", probe.name, show(got), show(base));
        let ok = match probe.expect {
            Expect::Ok => got >= 0,
            Expect::Err(e) => got == -i64::from(e),
        };
        if !ok {
            failures.push(format!(
                "{}: expected {:?}, got {} (unfiltered: {})",
                probe.name,
                probe.expect,
                show(got),
                show(base)
            ));
            continue;
        }
        match probe.baseline {
            Differs | DiffersIfSupported if class(base) == class(got) => {
                if probe.baseline == DiffersIfSupported {
                    eprintln!(
                        "note: {}: kernel answers {} itself; probe not discriminating",
                        probe.name,
                        show(base)
                    );
                } else if is_root() {
                    failures.push(format!(
                        "{}: unfiltered result {} equals the expected denial: the probe cannot tell",
                        probe.name,
                        show(base)
                    ));
                } else {
                    eprintln!("note (not root): {}: unfiltered also {}", probe.name, show(base));
                }
            }
            Same if class(base) != class(got) => failures.push(format!(
                "{}: allowed call changed: {} under the filter, {} without",
                probe.name,
                show(got),
                show(base)
            )),
            _ => {}
        }
    }
    assert!(failures.is_empty(), "{} probe failures:\n  {}", failures.len(), failures.join("\n  "));
}

// ----------------------------------------------------------------------------- the profiles

#[test]
fn standard_profile_denies_the_whole_table() {
    check(&compile(SeccompProfile::Standard, false), STANDARD);
}

#[test]
fn standard_profile_with_network_allows_inet_only() {
    check(&compile(SeccompProfile::Standard, true), STANDARD_NETWORK);
}

#[test]
fn strict_profile_allows_only_unix_sockets_without_rendezvous() {
    check(&compile(SeccompProfile::Strict, false), STRICT);
}

#[test]
fn log_mode_logs_instead_of_denying() {
    let opts = FilterOptions { log_denials: true, ..FilterOptions::default() };
    let prog = BpfProgram::compile(&opts).unwrap().unwrap();
    let actions = prog.actions();
    assert!(actions.contains(&libc::SECCOMP_RET_LOG), "{actions:x?}");
    assert!(!actions.contains(&libc::SECCOMP_RET_ERRNO), "{actions:x?}");
    assert!(
        actions.contains(&libc::SECCOMP_RET_KILL_PROCESS),
        "bad arch still kills: {actions:x?}"
    );
    check(&prog, LOGGED);
}

#[test]
fn every_deny_group_and_namespace_flag_has_a_probe() {
    let names: Vec<&str> = STANDARD.iter().map(|p| p.name).collect();
    for group in GROUPS {
        for &sc in group.syscalls {
            let probed = names.iter().any(|n| n.starts_with(&format!("{sc}(")));
            let i386_only = matches!(sc, "vm86" | "vm86old");
            assert!(probed || i386_only, "no probe for {sc} ({})", group.name);
        }
    }
    for (flag, _) in CLONE_NS_FLAGS {
        assert!(names.contains(&format!("clone({flag})").as_str()), "no probe for clone({flag})");
    }
}

// ----------------------------------------------------------------------------- architecture

/// `int 0x80` (the i386 syscall ABI) with eax = 20 (`getpid` on i386).
#[cfg(target_arch = "x86_64")]
fn int80_getpid() -> i64 {
    let mut rax: i64 = 20;
    // SAFETY: `int 0x80` enters the kernel's i386 compat path; getpid takes no arguments and
    // returns in eax. The compat entry zeroes r8-r15, declared clobbered.
    unsafe {
        std::arch::asm!(
            "int 0x80",
            inout("rax") rax,
            out("r8") _, out("r9") _, out("r10") _, out("r11") _,
            out("r12") _, out("r13") _, out("r14") _, out("r15") _,
        )
    };
    rax
}

#[cfg(target_arch = "x86_64")]
#[test]
fn i386_and_x32_syscalls_kill_the_process() {
    let prog = compile(SeccompProfile::Standard, false);

    let base = in_child(None, |sink| sink.put(int80_getpid()));
    base.assert_clean();
    let base_ret = base.values()[0];
    if base_ret <= 0 {
        eprintln!("SKIP int 0x80: IA32 emulation unavailable here (unfiltered result {base_ret})");
    } else {
        let ended = in_child(Some(&prog), |sink| sink.put(int80_getpid()));
        assert_eq!(ended.signal(), Some(libc::SIGSYS), "int 0x80 under the filter: {ended:?}");
        assert!(ended.values().is_empty(), "the syscall returned instead of killing: {ended:?}");
    }

    // x32 ABI: syscall numbers with bit 30 set, arch still AUDIT_ARCH_X86_64.
    const X32_GETPID: c_long = 0x4000_0000 | libc::SYS_getpid;
    let ended = in_child(Some(&prog), |sink| sink.put(sys(X32_GETPID, &[])));
    assert_eq!(ended.signal(), Some(libc::SIGSYS), "x32 getpid under the filter: {ended:?}");
}

#[test]
fn filtered_child_reports_seccomp_mode_2() {
    let prog = compile(SeccompProfile::Standard, false);
    let ended = in_child(Some(&prog), |sink| {
        let fd = sys(
            libc::SYS_openat,
            &[libc::AT_FDCWD as u64, c"/proc/self/status".as_ptr() as u64, libc::O_RDONLY as u64],
        );
        let mut buf = [0u8; 8192];
        let n = sys(libc::SYS_read, &[fd as u64, buf.as_mut_ptr() as u64, buf.len() as u64]);
        if n > 0 {
            sink.put_bytes(&buf[..n as usize]);
        }
    });
    ended.assert_clean();
    let status = String::from_utf8_lossy(&ended.out);
    assert_eq!(probe::status_field(&status, "Seccomp:"), Some("2"), "{status}");
    assert_eq!(probe::status_field(&status, "NoNewPrivs:"), Some("1"), "{status}");
    assert_eq!(probe::status_field(&status, "Seccomp_filters:"), Some("1"), "{status}");
}

// ----------------------------------------------------------------------------- exec gate

/// Receives the listener a child sends, waiting at most 10 s.
fn recv_listener(sock: &OwnedFd) -> OwnedFd {
    let mut pfd = libc::pollfd { fd: sock.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: one pollfd on the stack.
    let ready = unsafe { libc::poll(&mut pfd, 1, 10_000) };
    assert_eq!(ready, 1, "the child sent no listener within 10 s");
    recv_fd(sock.as_fd()).expect("recv_fd")
}

#[test]
fn strict_allows_the_first_exec_and_denies_the_next() {
    let prog = compile(SeccompProfile::Strict, false);
    assert!(prog.needs_exec_supervisor());
    let (out_rd, out_wr) = pipe();
    let (init_sock, child_sock) = socketpair();
    // Built before fork: the child must not allocate.
    let argv = [c"sh".as_ptr(), c"-c".as_ptr(), c"/bin/true; echo $?".as_ptr(), std::ptr::null()];
    let envp = [c"PATH=/usr/bin:/bin".as_ptr(), std::ptr::null()];

    let pid = fork();
    if pid == 0 {
        // The server child: stdout/stderr to the pipe, filter, hand the listener to "init"
        // (this test thread), close it, exec.
        // SAFETY: setsid/alarm/dup2 take integers; the fds are ours.
        unsafe { libc::setsid() };
        // SAFETY: as above.
        unsafe { libc::alarm(CHILD_ALARM) };
        // SAFETY: as above.
        unsafe { libc::dup2(out_wr.as_raw_fd(), 1) };
        // SAFETY: as above.
        unsafe { libc::dup2(out_wr.as_raw_fd(), 2) };
        let Ok(Some(listener)) = install(&prog) else { exit_now(INSTALL_FAILED) };
        if send_fd(child_sock.as_fd(), listener.as_fd()).is_err() {
            exit_now(91);
        }
        drop(listener);
        // SAFETY: argv/envp are NULL-terminated arrays of pointers to static C strings.
        unsafe { libc::execve(c"/bin/sh".as_ptr(), argv.as_ptr(), envp.as_ptr()) };
        exit_now(92);
    }
    drop(out_wr);
    drop(child_sock);

    let mut gate = ExecGate::new(recv_listener(&init_sock), 1).expect("ExecGate::new");
    let first = gate.serve_one_within(Some(Duration::from_secs(10))).unwrap();
    assert_eq!(first, Some(ExecDecision::Allow { pid: pid as u32 }), "the server's own exec");
    let second = gate.serve_one_within(Some(Duration::from_secs(10))).unwrap();
    assert!(
        matches!(second, Some(ExecDecision::Deny { pid: p }) if p != pid as u32),
        "the shell's exec of /bin/true: {second:?}"
    );
    assert_eq!(gate.execs_allowed(), 1);

    let status = wait(pid);
    let out = String::from_utf8_lossy(&drain(&out_rd)).into_owned();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "sh status {status:#x}: {out}"
    );
    assert!(out.contains("Operation not permitted"), "EPERM from the gate, sh output: {out:?}");
    assert_eq!(out.lines().last(), Some("126"), "exit status of the denied /bin/true: {out:?}");

    // Everything under the filter is gone: the gate says so instead of blocking.
    let last = gate.serve_one_within(Some(Duration::from_secs(10))).unwrap();
    assert_eq!(last, Some(ExecDecision::Closed));
}

#[test]
fn strict_exec_without_a_supervisor_fails_closed_with_enosys() {
    let prog = compile(SeccompProfile::Strict, false);
    let argv = [c"true".as_ptr(), std::ptr::null()];
    let envp = [std::ptr::null()];
    // in_child drops the listener right after install: nobody can answer.
    let ended = in_child(Some(&prog), |sink| {
        // SAFETY: argv/envp are NULL-terminated arrays of pointers to static C strings.
        unsafe { libc::execve(c"/bin/true".as_ptr(), argv.as_ptr(), envp.as_ptr()) };
        sink.put(i64::from(errno()));
    });
    ended.assert_clean();
    assert_eq!(ended.values(), [i64::from(ENOSYS)], "execve must fail, not run /bin/true");
}

#[test]
fn exec_gate_reports_closed_when_nobody_uses_the_filter() {
    let prog = compile(SeccompProfile::Strict, false);
    let (init_sock, child_sock) = socketpair();
    let pid = fork();
    if pid == 0 {
        // SAFETY: alarm takes an integer.
        unsafe { libc::alarm(CHILD_ALARM) };
        let Ok(Some(listener)) = install(&prog) else { exit_now(INSTALL_FAILED) };
        let sent = send_fd(child_sock.as_fd(), listener.as_fd());
        exit_now(if sent.is_ok() { 0 } else { 91 });
    }
    drop(child_sock);
    let listener = recv_listener(&init_sock);
    let status = wait(pid);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "{status:#x}");
    let mut gate = ExecGate::new(listener, 1).unwrap();
    let decision = gate.serve_one_within(Some(Duration::from_secs(10))).unwrap();
    assert_eq!(decision, Some(ExecDecision::Closed));
}

#[test]
fn fds_pass_over_a_socketpair() {
    let (a, b) = socketpair();
    let (rd, wr) = pipe();
    send_fd(a.as_fd(), wr.as_fd()).unwrap();
    drop(wr);
    let got = recv_fd(b.as_fd()).unwrap();
    // SAFETY: fcntl on an fd we own.
    let fdflags = unsafe { libc::fcntl(got.as_raw_fd(), libc::F_GETFD) };
    assert_eq!(fdflags & libc::FD_CLOEXEC, libc::FD_CLOEXEC, "received fds are close-on-exec");
    let mut file = std::fs::File::from(got);
    std::io::Write::write_all(&mut file, b"via SCM_RIGHTS").unwrap();
    drop(file);
    assert_eq!(drain(&rd), b"via SCM_RIGHTS");

    drop(a);
    let eof = recv_fd(b.as_fd()).unwrap_err();
    assert_eq!(eof.kind(), std::io::ErrorKind::UnexpectedEof);
}

#[test]
fn a_message_without_an_fd_is_a_protocol_error() {
    let (a, b) = socketpair();
    // SAFETY: sends one byte from a static buffer.
    assert_eq!(unsafe { libc::send(a.as_raw_fd(), b"x".as_ptr().cast(), 1, 0) }, 1);
    let err = recv_fd(b.as_fd()).unwrap_err();
    assert_eq!(err.raw_os_error(), Some(libc::EPROTO));
}

// ----------------------------------------------------------------------------- the program

#[test]
fn off_compiles_to_nothing() {
    let opts = FilterOptions { profile: SeccompProfile::Off, ..FilterOptions::default() };
    assert!(BpfProgram::compile(&opts).unwrap().is_none());
}

#[test]
fn strict_with_network_is_a_contradiction() {
    let opts = FilterOptions { profile: SeccompProfile::Strict, network: true, log_denials: false };
    assert!(matches!(BpfProgram::compile(&opts), Err(SeccompError::Options(_))));
}

#[test]
fn bytes_round_trip() {
    for (profile, network) in [
        (SeccompProfile::Standard, false),
        (SeccompProfile::Standard, true),
        (SeccompProfile::Strict, false),
    ] {
        let prog = compile(profile, network);
        let bytes = prog.to_bytes();
        assert_eq!(bytes.len(), prog.len() * 8);
        let back = BpfProgram::from_bytes(&bytes).unwrap();
        assert_eq!(back, prog);
        assert_eq!(back.to_bytes(), bytes);
        assert_eq!(back.needs_exec_supervisor(), prog.needs_exec_supervisor());
        assert_eq!(back.actions(), prog.actions());
    }
}

#[test]
fn from_bytes_rejects_what_is_not_a_program() {
    assert!(matches!(BpfProgram::from_bytes(&[]), Err(SeccompError::Program(_))));
    assert!(matches!(BpfProgram::from_bytes(&[0; 7]), Err(SeccompError::Program(_))));
    assert!(matches!(
        BpfProgram::from_bytes(&[0; 8 * (MAX_INSNS + 1)]),
        Err(SeccompError::Program(_))
    ));
    assert!(BpfProgram::from_bytes(&[0; 8 * MAX_INSNS]).is_ok());
}

#[test]
fn the_kernel_verifier_rejects_a_bad_program() {
    // One instruction with an undefined opcode: from_bytes accepts it, the kernel must not.
    let bad = BpfProgram::from_bytes(&[0xff, 0xff, 0, 0, 0, 0, 0, 0]).unwrap();
    let ended = in_child(None, |sink| {
        let r = install(&bad);
        sink.put(r.err().and_then(|e| e.raw_os_error()).map_or(0, i64::from));
    });
    ended.assert_clean();
    assert_eq!(ended.values(), [i64::from(libc::EINVAL)]);
}

#[test]
fn program_shape_per_profile() {
    let standard = compile(SeccompProfile::Standard, false);
    let network = compile(SeccompProfile::Standard, true);
    let strict = compile(SeccompProfile::Strict, false);
    for (name, prog) in
        [("standard", &standard), ("standard+network", &network), ("strict", &strict)]
    {
        eprintln!(
            "{name}: {} rules, {} BPF instructions, skipped {:?}",
            prog.rules(),
            prog.len(),
            prog.skipped()
        );
        assert!(prog.len() <= MAX_INSNS);
        let actions = prog.actions();
        assert!(actions.contains(&libc::SECCOMP_RET_ALLOW), "{name}: default allow");
        assert!(actions.contains(&libc::SECCOMP_RET_KILL_PROCESS), "{name}: bad arch kills");
        assert!(actions.contains(&libc::SECCOMP_RET_ERRNO), "{name}: denials");
    }
    assert!(!standard.needs_exec_supervisor());
    assert!(!network.needs_exec_supervisor());
    assert!(strict.needs_exec_supervisor());
    assert!(strict.actions().contains(&libc::SECCOMP_RET_USER_NOTIF));
    // Two fewer socket-family rules with network (AF_INET, AF_INET6).
    assert_eq!(standard.rules(), network.rules() + 2);
    // vm86/vm86old are i386-only: recorded, not an error.
    #[cfg(target_arch = "x86_64")]
    assert!(
        standard.skipped().iter().any(|s| s.starts_with("vm86 ") && s.contains("not a syscall")),
        "{:?}",
        standard.skipped()
    );
}

#[test]
fn probe_reports_this_machine() {
    let support = probe();
    eprintln!("{support}");
    assert!(support.usable(), "{support:?}");
    // The test process itself never installs a filter (a parent, e.g. a container runtime,
    // may have: mode 2 then).
    assert!(matches!(support.status_mode, Some(0 | 2)), "{support:?}");
    assert_eq!(support.status_mode, support.prctl_mode);
    let (major, minor, _) = support.libseccomp_version.unwrap();
    assert!((major, minor) >= (2, 5), "{support:?}");
    assert!(support.kernel.is_some());
    assert!(support.io_uring_disabled.is_none_or(|v| v <= 2));
}

#[test]
fn kernel_release_parsing() {
    assert_eq!(probe::parse_release("6.18.44-fc-v669"), Some((6, 18, 44)));
    assert_eq!(probe::parse_release("5.15.0-105-generic"), Some((5, 15, 0)));
    assert_eq!(probe::parse_release("6.8"), Some((6, 8, 0)));
    assert_eq!(probe::parse_release("6.1.0+"), Some((6, 1, 0)));
    assert_eq!(probe::parse_release("garbage"), None);
}
