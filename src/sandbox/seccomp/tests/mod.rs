//! Tests of the seccomp layer. Filters are only ever installed in forked children, never in the
//! test process (they are irreversible and would leak into every later test).
//!
//! Probe convention (docs/sandbox.md, "The threat list"; bwrap's `try-syscall`): each syscall gets harmless wrong
//! arguments, so an allowed call fails with EFAULT/EBADF/EINVAL/ESRCH and a denied one with
//! EPERM/ENOSYS/EAFNOSUPPORT. The same probes also run in an unfiltered child (the "baseline")
//! to prove they can tell the two apart on this machine: a probe whose baseline result equals
//! the expected denial would pass even with the rule missing.
//!
//! After `fork` in this multi-threaded harness the child uses only raw syscalls and `_exit`:
//! every buffer it touches is allocated before the fork or lives on its stack.

use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use libc::{ENOSYS, c_long};

use super::policy::{CLONE_NS_FLAGS, GROUPS};
use super::*;

mod probes;
use probes::{LOGGED, STANDARD, STANDARD_NETWORK, STRICT, STRICT_NETWORK, check};

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

/// Forks a child that leaves its session (no controlling tty, like the server's `setsid`), arms an alarm,
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
        crate::testkit::skip(
            crate::testkit::SkipKind::Machine,
            format!("int 0x80: IA32 emulation unavailable here (unfiltered result {base_ret})"),
        );
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
fn strict_with_network_allows_ip_sockets_and_connect_only() {
    check(&compile(SeccompProfile::Strict, true), STRICT_NETWORK);
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
