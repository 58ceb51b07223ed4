//! `ringmcp sandbox check`: which layers this machine can enforce, and why not — each probed,
//! and the whole proven by starting `/bin/true` in a real sandbox.

use serde::Serialize;

use super::cgroup::{Layout, LimitStatus};
use super::plan::SandboxConfig;
use super::{Launch, landlock, launch, seccomp};

/// One layer's verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Layer {
    /// The layer.
    pub name: String,
    /// `enforced`, `best-effort`, `unavailable`, `info`.
    pub status: String,
    /// Why, or the value.
    pub detail: String,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// A sandboxed `/bin/true` started and exited 0.
    pub works: bool,
    /// Every layer.
    pub layers: Vec<Layer>,
}

fn layer(name: &str, status: &str, detail: impl Into<String>) -> Layer {
    Layer { name: name.into(), status: status.into(), detail: detail.into() }
}

fn limit(name: &str, s: &LimitStatus) -> Layer {
    let status = match s {
        LimitStatus::Enforced { .. } => "enforced",
        LimitStatus::BestEffort { .. } => "best-effort",
        _ => "unavailable",
    };
    layer(name, status, s.to_string())
}

/// Probes every layer (and runs `/bin/true` confined).
pub fn report() -> Report {
    let mut layers = Vec::new();
    let config = SandboxConfig::standard();
    let run = std::process::Command::new("/bin/true").status().is_ok();
    let works = if run {
        let launch = Launch {
            program: "/bin/true".into(),
            sandbox: Some(config.clone()),
            ..Launch::default()
        };
        match super::spawn(&launch) {
            Ok(mut s) => match s.child.wait() {
                Ok(st) if st.success() => {
                    layers.push(layer(
                        "end to end",
                        "enforced",
                        "a sandboxed /bin/true ran and exited 0",
                    ));
                    true
                }
                Ok(st) => {
                    layers.push(layer(
                        "end to end",
                        "unavailable",
                        format!("a sandboxed /bin/true exited with {st}"),
                    ));
                    false
                }
                Err(e) => {
                    layers.push(layer("end to end", "unavailable", e.to_string()));
                    false
                }
            },
            Err(e) => {
                layers.push(layer("end to end", "unavailable", e.to_string()));
                false
            }
        }
    } else {
        layers.push(layer("end to end", "unavailable", "/bin/true cannot be run"));
        false
    };
    let userns = std::fs::read_to_string("/proc/sys/user/max_user_namespaces").unwrap_or_default();
    let userns_ok = userns.trim().parse::<u64>().is_ok_and(|n| n > 0);
    layers.push(layer(
        "user namespaces",
        if userns_ok { "enforced" } else { "unavailable" },
        format!("user.max_user_namespaces = {}", userns.trim()),
    ));
    layers.push(layer(
        "namespaces",
        if works { "enforced" } else { "unavailable" },
        "mount, pid, net (no interfaces), ipc, uts, cgroup; pivot_root into a read-only tmpfs root",
    ));
    let report = Layout::probe().report(&launch::limits_of(&config));
    layers.push(limit("memory limit", &report.memory));
    layers.push(limit("cpu limit", &report.cpu));
    layers.push(limit("pids limit", &report.pids));
    layers.push(limit("tree kill", &report.kill));
    let sc = seccomp::probe();
    layers.push(layer(
        "seccomp",
        if sc.usable() { "enforced" } else { "unavailable" },
        sc.to_string().replace('\n', "; "),
    ));
    layers.push(layer(
        "exec gate (strict)",
        if sc.user_notif_continue { "enforced" } else { "unavailable" },
        "seccomp user notification with SECCOMP_USER_NOTIF_FLAG_CONTINUE (5.5+)",
    ));
    let abi = landlock::abi_version();
    layers.push(layer(
        "landlock",
        match abi {
            0 => "unavailable",
            1..=4 => "best-effort",
            _ => "enforced",
        },
        format!(
            "ABI {abi} (exec only beneath read-only runtime folders; ioctl on devices from ABI 5)"
        ),
    ));
    let memfd = std::fs::read_to_string("/proc/sys/vm/memfd_noexec").ok();
    layers.push(layer(
        "memfd_noexec",
        if memfd.is_some() { "enforced" } else { "unavailable" },
        memfd.map_or("vm.memfd_noexec absent (Linux < 6.3)".into(), |v| {
            format!("set to 2 in each sandbox (host value {})", v.trim())
        }),
    ));
    let uring = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled").ok();
    layers.push(layer(
        "io_uring",
        "enforced",
        format!(
            "denied by seccomp (ENOSYS); kernel.io_uring_disabled = {}",
            uring.as_deref().map_or("absent", str::trim)
        ),
    ));
    // SAFETY: getuid takes no arguments.
    let uid = unsafe { libc::getuid() };
    layers.push(layer(
        "identity",
        "info",
        if uid == 0 {
            "host is root: sandboxes run as nobody (65534), or as the owner of a writable workspace"
                .to_owned()
        } else {
            format!("host uid {uid}: sandboxes run as it, seen as uid {} inside", launch::INNER_ID)
        },
    ));
    Report { works, layers }
}
