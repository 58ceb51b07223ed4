//! The probe tables: one row per syscall (and argument) the filters must deny or keep
//! allowed, the child that runs them, and the check against the unfiltered baseline.

use libc::{EAFNOSUPPORT, ENOSYS, EPERM, c_long};

use super::*;

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

pub(super) struct Probe {
    pub(super) name: &'static str,
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

/// Every group of the deny table (docs/sandbox.md, "Profiles"), plus the argument-level rules, in the standard profile
/// without network.
pub(super) const STANDARD: &[Probe] = &[
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
    // memfd_create and memfd_secret: ENOSYS whatever the flags (a sealed memfd still maps
    // executable through `ld.so /proc/self/fd/N`)
    p("memfd_create(MFD_EXEC)", memfd, (libc::MFD_EXEC | libc::MFD_CLOEXEC) as u64, NOSYS, Differs),
    p("memfd_create(0)", memfd, 0, NOSYS, Differs),
    p(
        "memfd_create(MFD_NOEXEC_SEAL)",
        memfd,
        (libc::MFD_NOEXEC_SEAL | libc::MFD_CLOEXEC) as u64,
        NOSYS,
        Differs,
    ),
    p(
        "memfd_secret(bad flags)",
        call!(libc::SYS_memfd_secret, u32::MAX),
        0,
        NOSYS,
        DiffersIfSupported,
    ),
    // execveat(AT_EMPTY_PATH): fexecve of whatever an fd refers to
    p(
        "execveat(-1, \"\", AT_EMPTY_PATH)",
        call!(libc::SYS_execveat, -1i64, c"".as_ptr() as u64, 0, 0, libc::AT_EMPTY_PATH),
        0,
        Expect::Err(libc::EACCES),
        Differs,
    ),
    p(
        "execveat(-1, \"x\", 0) still allowed",
        call!(libc::SYS_execveat, -1i64, c"x".as_ptr() as u64, 0, 0, 0),
        0,
        Expect::Err(libc::EBADF),
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
pub(super) const STANDARD_NETWORK: &[Probe] = &[
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
pub(super) const STRICT: &[Probe] = &[
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
    p("memfd_create(0)", memfd, 0, NOSYS, Differs),
    p("personality(READ_IMPLIES_EXEC)", personality, RIE, DENY, Differs),
    p("clone(CLONE_NEWUSER)", clone_invalid, libc::CLONE_NEWUSER as u64, DENY, Differs),
    p("pipe/read/write/mmap/fork/getpid", ordinary, 0, OK, Same),
];

/// The strict profile with network (the egress capture decides where connections go):
/// IP sockets and `connect` allowed, no rendezvous, other families unsupported.
pub(super) const STRICT_NETWORK: &[Probe] = &[
    p("socket(AF_UNIX)", |_| socket(1, libc::SOCK_STREAM, 0), 0, OK, Same),
    p("socket(AF_INET)", |_| socket(2, libc::SOCK_STREAM, 0), 0, OK, Same),
    p("socket(AF_INET6)", |_| socket(10, libc::SOCK_STREAM, 0), 0, OK, Same),
    p("socket(AF_PACKET)", |_| socket(17, libc::SOCK_RAW, 0), 0, NOAF, Differs),
    p("connect(-1)", call!(libc::SYS_connect, -1i64, 0, 0), 0, Expect::Err(libc::EBADF), Same),
    p("bind(-1)", call!(libc::SYS_bind, -1i64, 0, 0), 0, DENY, Differs),
    p("listen(-1)", call!(libc::SYS_listen, -1i64, 0), 0, DENY, Differs),
    p("accept(-1)", call!(libc::SYS_accept, -1i64, 0, 0), 0, DENY, Differs),
    p("accept4(-1)", call!(libc::SYS_accept4, -1i64, 0, 0, 0), 0, DENY, Differs),
    p("io_uring_setup(1, NULL)", call!(libc::SYS_io_uring_setup, 1, 0), 0, NOSYS, Differs),
    p("pipe/read/write/mmap/fork/getpid", ordinary, 0, OK, Same),
];

/// Debug mode: denials are logged, not enforced (the probes behave as without a filter).
pub(super) const LOGGED: &[Probe] = &[
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
pub(super) fn check(prog: &BpfProgram, probes: &'static [Probe]) {
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
