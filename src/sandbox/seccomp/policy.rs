//! The filter's content (docs/sandbox.md, "Profiles"): the deny table as data, the argument-level rules, and
//! their translation into libseccomp calls.
//!
//! Every rule carries **one** comparison per argument: libseccomp 2.5.4 rejects two comparisons
//! of the same argument in one rule with `-EINVAL`, so "A or B" becomes two rules and
//! "A and not B" is rewritten as a union of single-comparison rules (see [`personality`]). Every
//! libseccomp result is propagated; nothing is added "best effort" except syscalls that the
//! running libseccomp cannot name, which are skipped and recorded.

use libseccomp::{ScmpAction, ScmpArgCompare, ScmpCompareOp, ScmpFilterContext, ScmpSyscall};

use super::{FilterOptions, SeccompError, SeccompProfile};

/// A group of syscalls denied unconditionally with one errno.
pub(super) struct Group {
    /// What the group is about (for notes and docs).
    pub(super) name: &'static str,
    /// The errno returned (or logged, in `log_denials` mode).
    pub(super) errno: i32,
    /// Syscall names, resolved by libseccomp for the native architecture.
    pub(super) syscalls: &'static [&'static str],
}

/// The unconditional part of the deny table, in table order.
pub(super) const GROUPS: &[Group] = &[
    Group {
        name: "namespaces/mounts",
        errno: libc::EPERM,
        syscalls: &["unshare", "setns", "mount", "umount2", "pivot_root", "chroot"],
    },
    Group {
        // ENOSYS: userspace falls back (glibc's clone3 -> clone; the new mount API -> mount(2),
        // which is denied above). clone3's flags live in user memory that seccomp cannot read,
        // so it cannot get clone's per-flag rules.
        name: "un-inspectable/new APIs",
        errno: libc::ENOSYS,
        syscalls: &[
            "clone3",
            "open_tree",
            "move_mount",
            "fsopen",
            "fsconfig",
            "fsmount",
            "fspick",
            "mount_setattr",
        ],
    },
    Group {
        // ENOSYS: libuv and tokio fall back to epoll/threads. io_uring ops are invisible to
        // seccomp and would bypass every argument rule here.
        name: "io_uring",
        errno: libc::ENOSYS,
        syscalls: &["io_uring_setup", "io_uring_enter", "io_uring_register"],
    },
    Group {
        // ENOSYS: runtimes fall back to /dev/shm or an anonymous mapping. A memfd is the one
        // file a server can write and then map executable that no mount flag covers: `ld.so
        // /proc/self/fd/N` runs a memfd ELF even when it was sealed MFD_NOEXEC_SEAL (which
        // only stops execve), and vm.memfd_noexec cannot be set from an unprivileged host.
        // See docs/sandbox.md, "Code written at run time".
        name: "memfd",
        errno: libc::ENOSYS,
        syscalls: &["memfd_create", "memfd_secret"],
    },
    Group { name: "keyring", errno: libc::EPERM, syscalls: &["add_key", "keyctl", "request_key"] },
    Group {
        name: "tracing/cross-process",
        errno: libc::EPERM,
        syscalls: &["ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd"],
    },
    Group {
        name: "kernel attack surface",
        errno: libc::EPERM,
        syscalls: &[
            "bpf",
            "perf_event_open",
            "userfaultfd",
            "fanotify_init",
            "lookup_dcookie",
            "open_by_handle_at",
            "name_to_handle_at",
        ],
    },
    Group {
        name: "admin",
        errno: libc::EPERM,
        syscalls: &[
            "kexec_load",
            "kexec_file_load",
            "init_module",
            "finit_module",
            "delete_module",
            "reboot",
            "swapon",
            "swapoff",
            "acct",
            "syslog",
            "quotactl",
            "quotactl_fd",
            "vhangup",
            "iopl",
            "ioperm",
            "settimeofday",
            "clock_settime",
            "clock_adjtime",
            "adjtimex",
        ],
    },
    Group {
        // vm86/vm86old exist on i386 only: on other architectures they resolve to a
        // pseudo-syscall and are skipped with a note.
        name: "legacy/NUMA",
        errno: libc::EPERM,
        syscalls: &[
            "uselib",
            "ustat",
            "sysfs",
            "_sysctl",
            "modify_ldt",
            "move_pages",
            "migrate_pages",
            "mbind",
            "set_mempolicy",
            "vm86",
            "vm86old",
        ],
    },
    Group {
        // Mount-table information (6.8+); /proc/self/mountinfo stays the only view (docs/sandbox.md, item 16).
        name: "mount info",
        errno: libc::EPERM,
        syscalls: &["statmount", "listmount"],
    },
];

/// The `CLONE_NEW*` bits `clone(2)` may not carry (Docker masks the same set, `0x7E020000`).
/// `CLONE_NEWTIME` is absent on purpose: in `clone(2)` bit 0x80 is part of the exit signal;
/// time namespaces can only be made with `unshare`/`clone3`, both denied outright.
pub(super) const CLONE_NS_FLAGS: &[(&str, u64)] = &[
    ("CLONE_NEWNS", libc::CLONE_NEWNS as u64),
    ("CLONE_NEWCGROUP", libc::CLONE_NEWCGROUP as u64),
    ("CLONE_NEWUTS", libc::CLONE_NEWUTS as u64),
    ("CLONE_NEWIPC", libc::CLONE_NEWIPC as u64),
    ("CLONE_NEWUSER", libc::CLONE_NEWUSER as u64),
    ("CLONE_NEWPID", libc::CLONE_NEWPID as u64),
    ("CLONE_NEWNET", libc::CLONE_NEWNET as u64),
];

/// `personality(2)` flags that weaken memory protections of the next exec or of `mmap`.
pub(super) const PERSONA_FLAGS: &[(&str, u64)] = &[
    ("READ_IMPLIES_EXEC", libc::READ_IMPLIES_EXEC as u64),
    ("ADDR_NO_RANDOMIZE", libc::ADDR_NO_RANDOMIZE as u64),
    ("MMAP_PAGE_ZERO", libc::MMAP_PAGE_ZERO as u64),
];

/// Terminal ioctls that inject input or talk to the console (TIOCSTI: CVE-2017-5226 class).
// `Ioctl` is u64 here but u32/i32 on other targets: the cast is needed there.
#[allow(clippy::unnecessary_cast)]
pub(super) const TTY_IOCTLS: &[(&str, u64)] =
    &[("TIOCSTI", libc::TIOCSTI as u64), ("TIOCLINUX", libc::TIOCLINUX as u64)];

/// Socket families the standard profile always allows.
const AF_ALWAYS: &[i32] = &[libc::AF_UNIX, libc::AF_NETLINK];
/// Socket families the standard profile allows when `network` is granted.
const AF_NETWORK: &[i32] = &[libc::AF_INET, libc::AF_INET6];

/// Syscalls that a libseccomp older than the kernel may not know by name (2.5.4 predates
/// Linux 6.8), with their number. Syscalls added since Linux 5.1 share one number on the
/// architectures listed here (the unified table that starts at 424); alpha and MIPS add an
/// offset, so there the names are skipped with a note instead.
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "aarch64",
    target_arch = "arm",
    target_arch = "riscv64",
    target_arch = "loongarch64",
    target_arch = "powerpc64",
    target_arch = "s390x"
))]
const LATE_SYSCALLS: &[(&str, i32)] = &[("statmount", 457), ("listmount", 458)];
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "aarch64",
    target_arch = "arm",
    target_arch = "riscv64",
    target_arch = "loongarch64",
    target_arch = "powerpc64",
    target_arch = "s390x"
)))]
const LATE_SYSCALLS: &[(&str, i32)] = &[];

/// Low 32 bits: the kernel reads `int`/`unsigned int` arguments from the low half of the
/// register, so a comparison must ignore the high half or garbage there bypasses it
/// (CVE-2019-10063 for `ioctl`).
const LOW32: u64 = 0xFFFF_FFFF;

/// Builds the filter: one libseccomp context, every rule through [`Builder::add`].
pub(super) struct Builder {
    ctx: ScmpFilterContext,
    log_denials: bool,
    /// Rules successfully added.
    pub(super) rules: usize,
    /// Syscalls skipped, with the reason (unknown to libseccomp, or absent on this arch).
    pub(super) skipped: Vec<String>,
    /// The deny-table group being added, for skip notes.
    group: &'static str,
}

impl Builder {
    /// A default-allow context for the native architecture whose bad-arch action kills the
    /// process (i386 `int 0x80` and x32 syscalls on x86_64).
    pub(super) fn new(log_denials: bool) -> Result<Self, SeccompError> {
        let step = |what: &'static str| move |source| SeccompError::Context { what, source };
        let mut ctx = ScmpFilterContext::new(ScmpAction::Allow).map_err(step("seccomp_init"))?;
        ctx.set_act_badarch(ScmpAction::KillProcess)
            .map_err(step("setting the bad-arch action to KILL_PROCESS"))?;
        Ok(Self { ctx, log_denials, rules: 0, skipped: Vec::new(), group: "" })
    }

    /// Adds every rule for `opts` (whose profile is not `Off`).
    pub(super) fn add_policy(&mut self, opts: &FilterOptions) -> Result<(), SeccompError> {
        for group in GROUPS {
            self.group = group.name;
            for &name in group.syscalls {
                self.deny(name, group.errno, None)?;
            }
        }
        self.group = "";
        // clone: one masked rule per namespace bit (libseccomp cannot OR masks in one rule).
        for &(_, bit) in CLONE_NS_FLAGS {
            self.deny("clone", libc::EPERM, Some(masked(0, bit, bit)))?;
        }
        for &(_, req) in TTY_IOCTLS {
            self.deny("ioctl", libc::EPERM, Some(masked(1, LOW32, req)))?;
        }
        self.personality()?;
        match opts.profile {
            SeccompProfile::Standard => {
                // execveat(fd, "", AT_EMPTY_PATH) (fexecve) runs whatever an fd refers to:
                // nothing a server needs, and a way around path-based exec rules.
                let empty_path = libc::AT_EMPTY_PATH as u64;
                self.deny("execveat", libc::EACCES, Some(masked(4, empty_path, empty_path)))?;
                self.socket_families(opts.network)
            }
            SeccompProfile::Strict => self.strict(opts.network),
            SeccompProfile::Off => Ok(()),
        }
    }

    /// `personality(2)`: deny the three dangerous flags, but keep the query
    /// `personality(0xffffffff)` working (runtimes and `setarch` use it).
    ///
    /// "flag set and value != 0xffffffff" needs two comparisons of arg0, which libseccomp 2.5.4
    /// rejects. Legitimate personas never use bit 31 (the highest flag is 0x8000000), so the
    /// rule is split into single masked comparisons of the low 32 bits:
    /// * for each flag F: `(x & (F | 1<<31)) == F` (flag set, bit 31 clear), and
    /// * for each other bit k: `(x & (1<<31 | 1<<k)) == 1<<31` (bit 31 set, not all-ones).
    ///
    /// Together: every value with bit 31 set except the query, and every value carrying a
    /// dangerous flag, is denied; the high half of the register is ignored like the kernel
    /// ignores it. 3 + 31 rules, evaluated only for `personality` calls.
    fn personality(&mut self) -> Result<(), SeccompError> {
        const TOP: u64 = 1 << 31;
        for &(_, flag) in PERSONA_FLAGS {
            self.deny("personality", libc::EPERM, Some(masked(0, flag | TOP, flag)))?;
        }
        for k in 0..31 {
            self.deny("personality", libc::EPERM, Some(masked(0, TOP | 1 << k, TOP)))?;
        }
        Ok(())
    }

    /// `socket(2)` families in the standard profile: AF_UNIX, AF_NETLINK with NETLINK_ROUTE
    /// (getifaddrs), AF_INET/AF_INET6 only with `network`; everything else `EAFNOSUPPORT`.
    ///
    /// Families are enumerated up to the highest allowed one (AF_NETLINK = 16) as low-32 masked
    /// equality rules, and one 64-bit `> 16` rule covers every higher family (AF_PACKET,
    /// AF_ALG, AF_VSOCK, ... and families the kernel adds later) as well as any value with
    /// garbage in the high half, so nothing above 16 needs to be listed.
    fn socket_families(&mut self, network: bool) -> Result<(), SeccompError> {
        let allowed = |af: i32| AF_ALWAYS.contains(&af) || (network && AF_NETWORK.contains(&af));
        let top = AF_ALWAYS.iter().chain(AF_NETWORK).copied().max().unwrap_or(libc::AF_UNIX);
        for af in (0..=top).filter(|&af| !allowed(af)) {
            self.deny("socket", libc::EAFNOSUPPORT, Some(masked(0, LOW32, af as u64)))?;
        }
        let above = Cmp { arg: 0, op: Op::Gt, value: top as u64 };
        self.deny("socket", libc::EAFNOSUPPORT, Some(above))?;
        // AF_NETLINK with any protocol but NETLINK_ROUTE (0): two comparisons, different args.
        let netlink = masked(0, LOW32, libc::AF_NETLINK as u64);
        let not_route = Cmp { arg: 2, op: Op::Ne, value: 0 };
        self.add("socket", self.denial(libc::EAFNOSUPPORT), &[netlink, not_route])
    }

    /// The strict profile's additions.
    ///
    /// * `socket(2)`: only `AF_UNIX`; any other family is `EPERM` (a policy denial, not an
    ///   unsupported family). One 64-bit `!= AF_UNIX` rule, so high-half garbage is denied too.
    ///   `socketpair(2)` stays allowed: it only makes connected AF_UNIX pairs, which node and
    ///   python use for child stdio and event-loop wake-ups.
    /// * `connect`, `bind`, `listen`, `accept`, `accept4`: `EPERM` for every family, AF_UNIX
    ///   included: the server talks over its stdio pipes and socketpairs and needs no
    ///   rendezvous. Residual: `sendto`/`sendmsg` with an address on an AF_UNIX datagram
    ///   socket still reach a bound socket that is visible in the sandbox's mount and network
    ///   namespaces; those layers bound it.
    /// * `execve`/`execveat`: `SECCOMP_RET_USER_NOTIF`, answered by [`super::ExecGate`]
    ///   ("no exec after the server's first exec"). Not turned into a log in
    ///   `log_denials` mode: it is a gate, not a denial.
    ///
    /// With `network`, sockets follow the standard profile's families (`AF_INET`/`AF_INET6`
    /// included) and `connect` is allowed: the egress capture decides where a connection
    /// leads. `bind`, `listen` and `accept` stay denied.
    fn strict(&mut self, network: bool) -> Result<(), SeccompError> {
        if network {
            self.socket_families(true)?;
        } else {
            let not_unix = Cmp { arg: 0, op: Op::Ne, value: libc::AF_UNIX as u64 };
            self.deny("socket", libc::EPERM, Some(not_unix))?;
            self.deny("connect", libc::EPERM, None)?;
        }
        for name in ["bind", "listen", "accept", "accept4"] {
            self.deny(name, libc::EPERM, None)?;
        }
        for name in ["execve", "execveat"] {
            self.add(name, ScmpAction::Notify, &[])?;
        }
        Ok(())
    }

    /// The action for a denial: the errno, or `SECCOMP_RET_LOG` (allow and log) in debug mode.
    fn denial(&self, errno: i32) -> ScmpAction {
        if self.log_denials { ScmpAction::Log } else { ScmpAction::Errno(errno) }
    }

    fn deny(
        &mut self,
        name: &'static str,
        errno: i32,
        cmp: Option<Cmp>,
    ) -> Result<(), SeccompError> {
        let action = self.denial(errno);
        self.add(name, action, cmp.as_slice())
    }

    /// Adds one rule with `seccomp_rule_add_exact_array` (exact: libseccomp may not silently
    /// rewrite it, e.g. into a multiplexed `socketcall`), after resolving `name` for the native
    /// architecture. A name libseccomp does not know is looked up in [`LATE_SYSCALLS`]; if it is
    /// not there either, or it is a pseudo-syscall (absent on this architecture), the rule is
    /// skipped and recorded in `skipped`, not an error.
    fn add(
        &mut self,
        name: &'static str,
        action: ScmpAction,
        cmps: &[Cmp],
    ) -> Result<(), SeccompError> {
        let syscall = match ScmpSyscall::from_name(name) {
            Ok(s) if s.as_raw_syscall() >= 0 => s,
            Ok(_) => {
                self.skip(name, "not a syscall on this architecture");
                return Ok(());
            }
            Err(_) => match LATE_SYSCALLS.iter().find(|(n, _)| *n == name) {
                Some(&(_, nr)) => ScmpSyscall::from(nr),
                None => {
                    self.skip(name, "unknown to this libseccomp");
                    return Ok(());
                }
            },
        };
        let scmp: Vec<ScmpArgCompare> = cmps.iter().copied().map(Cmp::to_scmp).collect();
        self.ctx
            .add_rule_conditional_exact(action, syscall, &scmp)
            .map_err(|source| SeccompError::Rule { rule: describe(name, action, cmps), source })?;
        self.rules += 1;
        Ok(())
    }

    fn skip(&mut self, name: &str, why: &str) {
        let note = if self.group.is_empty() {
            format!("{name}: {why}")
        } else {
            format!("{name} ({}): {why}", self.group)
        };
        if !self.skipped.contains(&note) {
            self.skipped.push(note);
        }
    }

    /// Exports the raw BPF program (an array of `struct sock_filter`, native endianness).
    pub(super) fn export(&self) -> Result<Vec<u8>, SeccompError> {
        use std::io::{Read, Seek};
        let memfd = super::memfd("ringmcp-seccomp-bpf")
            .map_err(|source| SeccompError::Export { what: "memfd_create", source })?;
        self.ctx
            .export_bpf(&memfd)
            .map_err(|source| SeccompError::Context { what: "seccomp_export_bpf", source })?;
        let mut file = std::fs::File::from(memfd);
        let mut bytes = Vec::new();
        file.rewind()
            .and_then(|()| file.read_to_end(&mut bytes))
            .map_err(|source| SeccompError::Export { what: "reading the exported BPF", source })?;
        Ok(bytes)
    }
}

/// One comparison of one syscall argument (the subset of libseccomp's operators we use).
#[derive(Debug, Clone, Copy)]
struct Cmp {
    arg: u32,
    op: Op,
    value: u64,
}

#[derive(Debug, Clone, Copy)]
enum Op {
    /// `(arg & mask) == value`
    Masked(u64),
    /// `arg != value` (all 64 bits)
    Ne,
    /// `arg > value` (all 64 bits, unsigned)
    Gt,
}

impl Cmp {
    fn to_scmp(self) -> ScmpArgCompare {
        let op = match self.op {
            Op::Masked(mask) => ScmpCompareOp::MaskedEqual(mask),
            Op::Ne => ScmpCompareOp::NotEqual,
            Op::Gt => ScmpCompareOp::Greater,
        };
        ScmpArgCompare::new(self.arg, op, self.value)
    }
}

impl std::fmt::Display for Cmp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (arg, v) = (self.arg, self.value);
        match self.op {
            Op::Masked(mask) => write!(f, "arg{arg} & {mask:#x} == {v:#x}"),
            Op::Ne => write!(f, "arg{arg} != {v:#x}"),
            Op::Gt => write!(f, "arg{arg} > {v:#x}"),
        }
    }
}

/// `(arg & mask) == value`.
fn masked(arg: u32, mask: u64, value: u64) -> Cmp {
    Cmp { arg, op: Op::Masked(mask), value }
}

/// A rule in words, for error messages: `personality(arg0 & 0x80400000 == 0x400000) -> Errno(1)`.
fn describe(name: &str, action: ScmpAction, cmps: &[Cmp]) -> String {
    let cmps: Vec<String> = cmps.iter().map(Cmp::to_string).collect();
    format!("{name}({}) -> {action:?}", cmps.join(" && "))
}
