//! What this machine offers for the seccomp layer (for `ringmcp sandbox check`).

use std::fmt;

/// The seccomp facts of this machine. Gathered by [`probe`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SeccompSupport {
    /// The `Seccomp:` field of `/proc/self/status` (0 none, 1 strict, 2 filter) for the
    /// calling process; `None` if the field is absent (kernel without `CONFIG_SECCOMP`).
    pub status_mode: Option<u8>,
    /// `prctl(PR_GET_SECCOMP)`; `None` if it failed (`EINVAL`: no `CONFIG_SECCOMP`).
    pub prctl_mode: Option<u8>,
    /// The kernel can run our filters: both sources above agree seccomp exists and it reports
    /// `SECCOMP_RET_KILL_PROCESS` (our bad-arch action, 4.14+) as available.
    pub filter: bool,
    /// `SECCOMP_RET_USER_NOTIF` is available (5.0+).
    pub user_notif: bool,
    /// User notification can answer "continue" (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`, 5.5+): the
    /// strict profile's exec gate works.
    pub user_notif_continue: bool,
    /// The libseccomp library loaded at run time, `(major, minor, micro)`.
    pub libseccomp_version: Option<(u32, u32, u32)>,
    /// libseccomp's API level for this kernel (seccomp_api_get(3)); 0 if unknown.
    pub libseccomp_api: u32,
    /// The running kernel's version from `uname(2)`.
    pub kernel: Option<(u32, u32, u32)>,
    /// `kernel.io_uring_disabled` (6.6+): 0 allowed, 1 restricted, 2 disabled. `None` if the
    /// sysctl does not exist. The filter denies io_uring regardless.
    pub io_uring_disabled: Option<u8>,
}

impl SeccompSupport {
    /// The standard profile can be installed.
    pub fn usable(&self) -> bool {
        self.filter && self.libseccomp_version.is_some()
    }
}

impl fmt::Display for SeccompSupport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let opt = |v: Option<u8>| v.map_or_else(|| "absent".to_owned(), |v| v.to_string());
        let ver = |v: Option<(u32, u32, u32)>| {
            v.map_or_else(|| "unknown".to_owned(), |(a, b, c)| format!("{a}.{b}.{c}"))
        };
        writeln!(f, "seccomp filter:        {}", if self.filter { "available" } else { "NO" })?;
        writeln!(f, "  /proc status mode:   {}", opt(self.status_mode))?;
        writeln!(f, "  PR_GET_SECCOMP:      {}", opt(self.prctl_mode))?;
        writeln!(
            f,
            "  user notification:   {} (continue: {})",
            self.user_notif, self.user_notif_continue
        )?;
        writeln!(
            f,
            "libseccomp:            {} (API level {})",
            ver(self.libseccomp_version),
            self.libseccomp_api
        )?;
        writeln!(f, "kernel:                {}", ver(self.kernel))?;
        write!(f, "io_uring_disabled:     {}", opt(self.io_uring_disabled))
    }
}

/// Probes seccomp support without installing anything.
pub fn probe() -> SeccompSupport {
    let status_mode = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| status_field(&s, "Seccomp:")?.parse().ok());
    // SAFETY: prctl(PR_GET_SECCOMP) takes integers only.
    let prctl = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    let prctl_mode = u8::try_from(prctl).ok();
    let kernel = kernel_version();
    let filter = status_mode.is_some()
        && prctl_mode.is_some()
        && action_available(libc::SECCOMP_RET_KILL_PROCESS);
    let user_notif = filter && action_available(libc::SECCOMP_RET_USER_NOTIF);
    let libseccomp_version =
        libseccomp::ScmpVersion::current().ok().map(|v| (v.major, v.minor, v.micro));
    SeccompSupport {
        status_mode,
        prctl_mode,
        filter,
        user_notif,
        user_notif_continue: user_notif && kernel.is_some_and(|k| k >= (5, 5, 0)),
        libseccomp_version,
        libseccomp_api: libseccomp::get_api(),
        kernel,
        io_uring_disabled: std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
            .ok()
            .and_then(|s| s.trim().parse().ok()),
    }
}

/// `seccomp(SECCOMP_GET_ACTION_AVAIL, 0, &action)` succeeded.
fn action_available(action: u32) -> bool {
    // SAFETY: the kernel reads one u32 from the pointer, which points to a live local.
    let ret = unsafe {
        libc::syscall(libc::SYS_seccomp, libc::SECCOMP_GET_ACTION_AVAIL, 0, &action as *const u32)
    };
    ret == 0
}

/// The value of `name` (e.g. `"Seccomp:"`) in a `/proc/<pid>/status` text.
pub(super) fn status_field<'a>(status: &'a str, name: &str) -> Option<&'a str> {
    status.lines().find_map(|l| l.strip_prefix(name)).map(str::trim)
}

/// `uname -r` as numbers: `6.18.44-fc-v669` -> (6, 18, 44); missing parts are 0.
fn kernel_version() -> Option<(u32, u32, u32)> {
    // SAFETY: utsname is plain arrays of c_char; all-zero is a valid value.
    let mut uts: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: uname writes one utsname to the pointer, a live local.
    if unsafe { libc::uname(&mut uts) } != 0 {
        return None;
    }
    let release: Vec<u8> = uts.release.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    parse_release(std::str::from_utf8(&release).ok()?)
}

pub(super) fn parse_release(release: &str) -> Option<(u32, u32, u32)> {
    let mut nums = release.split(['.', '-', '+', '_']).map(|p| {
        let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
        digits.parse::<u32>().ok()
    });
    let major = nums.next()??;
    let minor = nums.next().flatten().unwrap_or(0);
    let micro = nums.next().flatten().unwrap_or(0);
    Some((major, minor, micro))
}
