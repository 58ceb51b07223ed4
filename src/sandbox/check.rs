//! `ringmcp sandbox check`: which layers this machine can enforce, and why not — each probed,
//! and the whole proven by starting `/bin/true` in a real sandbox.

use serde::Serialize;

use super::attack::Attempt;
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

/// The layers that stop code a server wrote at run time from running, each judged by trying
/// it inside a real standard sandbox (our probe, with a writable workspace), not by reading a
/// setting back.
fn code_written_layers(config: &SandboxConfig) -> Vec<Layer> {
    match probe_code_written(config) {
        Ok(attempts) => {
            let row = |name: &str, pick: &dyn Fn(&Attempt) -> bool, what: &str| {
                let picked: Vec<&Attempt> = attempts.iter().filter(|a| pick(a)).collect();
                let open: Vec<String> = picked
                    .iter()
                    .filter(|a| !a.blocked)
                    .map(|a| format!("{}: {}", a.what, a.got))
                    .collect();
                if picked.is_empty() {
                    layer(name, "unavailable", "not tried")
                } else if open.is_empty() {
                    layer(name, "enforced", format!("tried inside a sandbox: {what}"))
                } else {
                    layer(name, "unavailable", format!("NOT blocked: {}", open.join("; ")))
                }
            };
            let noexec = attempts.iter().find(|a| a.what.starts_with("vm.memfd_noexec"));
            vec![
                row(
                    "exec of written files",
                    &|a| a.item == 9,
                    "execve and `ld.so FILE` refused in /tmp, /dev/shm and a writable workspace \
                     (noexec mounts, Landlock execute right)",
                ),
                row(
                    "memfd exec",
                    &|a| a.what.starts_with("memfd_"),
                    "memfd_create and memfd_secret answer ENOSYS (seccomp): a sealed memfd \
                     would still run through `ld.so /proc/self/fd/N`",
                ),
                row(
                    "execveat(AT_EMPTY_PATH)",
                    &|a| a.what.starts_with("execveat"),
                    "fexecve of an fd refused with EACCES (seccomp)",
                ),
                match noexec {
                    Some(a) if a.blocked => layer(
                        "memfd_noexec",
                        "enforced",
                        "vm.memfd_noexec = 2 read inside the sandbox's pid namespace",
                    ),
                    Some(a) => layer(
                        "memfd_noexec",
                        "best-effort",
                        format!(
                            "vm.memfd_noexec inside the sandbox: {} (only a root host on Linux \
                             6.3+ can set it; the seccomp memfd denial covers it)",
                            a.got
                        ),
                    ),
                    None => layer("memfd_noexec", "unavailable", "not tried"),
                },
            ]
        }
        Err(e) => vec![layer("exec of written files", "unavailable", e)],
    }
}

/// The egress capture, tried inside a sandbox with network and no proxy behind it: every
/// connection the probe opens lands on the sandbox's own capture and is reset there, so
/// nothing leaves the machine while the row is made.
fn egress_layer(config: &SandboxConfig) -> Layer {
    let config = SandboxConfig {
        network: crate::policy::egress::Network::allow(["check.invalid"]).expect("a valid entry"),
        ..config.clone()
    };
    match probe_in_sandbox(&config, &["--network-only"], None) {
        Ok(attempts) => {
            let open: Vec<String> = attempts
                .iter()
                .filter(|a| !a.blocked)
                .map(|a| format!("{}: {}", a.what, a.got))
                .collect();
            if attempts.is_empty() {
                layer("egress capture", "unavailable", "not tried")
            } else if open.is_empty() {
                layer(
                    "egress capture",
                    "enforced",
                    "with network on, every TCP connect lands on the sandbox's own capture \
                     (metadata, private and mapped addresses tried), DNS is answered by a stub \
                     that never forwards, other UDP is refused",
                )
            } else {
                layer("egress capture", "unavailable", format!("NOT blocked: {}", open.join("; ")))
            }
        }
        Err(e) => layer("egress capture", "unavailable", e),
    }
}

/// Runs `ringmcp __sandbox-probe --code-written-only` in a standard sandbox with a writable
/// temporary workspace, and returns its attempts.
fn probe_code_written(config: &SandboxConfig) -> Result<Vec<Attempt>, String> {
    let ws = std::env::temp_dir().join(format!("ringmcp-check-{}", std::process::id()));
    std::fs::create_dir_all(&ws).map_err(|e| format!("creating {}: {e}", ws.display()))?;
    // A root host runs a sandbox with a writable workspace as the workspace's owner: make that
    // nobody, as for any server without one.
    // SAFETY: geteuid takes no arguments.
    if unsafe { libc::geteuid() } == 0 {
        let nobody = Some(launch::NOBODY);
        std::os::unix::fs::chown(&ws, nobody, nobody)
            .map_err(|e| format!("chown {} to nobody: {e}", ws.display()))?;
    }
    let config =
        SandboxConfig { workspace: Some(ws.clone()), workspace_writable: true, ..config.clone() };
    let result = probe_in_sandbox(&config, &["--code-written-only"], Some(&ws));
    let _ = std::fs::remove_dir_all(&ws);
    result
}

/// Runs `ringmcp __sandbox-probe ARGS [--workspace WS]` sandboxed by `config` and returns its
/// attempts. A sandbox with network gets no proxy: its channel is closed at once.
fn probe_in_sandbox(
    config: &SandboxConfig,
    args: &[&str],
    workspace: Option<&std::path::Path>,
) -> Result<Vec<Attempt>, String> {
    use std::io::Read;
    let helper = launch::helper_path().ok_or("the ringmcp binary (the probe) was not found")?;
    let mut argv: Vec<std::ffi::OsString> = vec!["__sandbox-probe".into()];
    argv.extend(args.iter().map(Into::into));
    if let Some(ws) = workspace {
        argv.push("--workspace".into());
        argv.push(ws.as_os_str().to_owned());
    }
    let launch = Launch {
        program: helper.into_os_string(),
        args: argv,
        sandbox: Some(config.clone()),
        ..Launch::default()
    };
    super::spawn(&launch).map_err(|e| e.to_string()).and_then(|mut s| {
        drop(s.egress.take());
        let mut out = Vec::new();
        let read = std::fs::File::from(s.stdout).read_to_end(&mut out);
        let status = s.child.wait();
        read.map_err(|e| e.to_string())?;
        match status {
            Ok(st) if st.success() => {
                serde_json::from_slice(&out).map_err(|e| format!("the probe's answer: {e}"))
            }
            other => Err(format!("the probe ended with {other:?}")),
        }
    })
}

/// Probes every layer (and runs `/bin/true` confined).
pub fn report() -> Report {
    let config = SandboxConfig::standard();
    let (works, end_to_end) = end_to_end(&config);
    let mut layers = vec![end_to_end];
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
    layers.extend(filter_layers());
    if works {
        layers.extend(code_written_layers(&config));
        layers.push(egress_layer(&config));
    }
    layers.push(io_uring_layer());
    layers.push(identity_layer());
    Report { works, layers }
}

/// Whether a sandboxed `/bin/true` runs and exits 0, and the row saying so.
fn end_to_end(config: &SandboxConfig) -> (bool, Layer) {
    let run = std::process::Command::new("/bin/true").status().is_ok();
    if !run {
        return (false, layer("end to end", "unavailable", "/bin/true cannot be run"));
    }
    let launch =
        Launch { program: "/bin/true".into(), sandbox: Some(config.clone()), ..Launch::default() };
    match super::spawn(&launch).map(|mut s| s.child.wait()) {
        Ok(Ok(st)) if st.success() => {
            (true, layer("end to end", "enforced", "a sandboxed /bin/true ran and exited 0"))
        }
        Ok(Ok(st)) => (
            false,
            layer("end to end", "unavailable", format!("a sandboxed /bin/true exited with {st}")),
        ),
        Ok(Err(e)) => (false, layer("end to end", "unavailable", e.to_string())),
        Err(e) => (false, layer("end to end", "unavailable", e.to_string())),
    }
}

/// The rows of the kernel's filters: seccomp, the exec gate, Landlock.
fn filter_layers() -> Vec<Layer> {
    let mut layers = Vec::new();
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
    layers
}

/// io_uring, which seccomp denies.
fn io_uring_layer() -> Layer {
    let uring = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled").ok();
    layer(
        "io_uring",
        "enforced",
        format!(
            "denied by seccomp (ENOSYS); kernel.io_uring_disabled = {}",
            uring.as_deref().map_or("absent", str::trim)
        ),
    )
}

/// Who the sandboxed server runs as.
fn identity_layer() -> Layer {
    // SAFETY: getuid takes no arguments.
    let uid = unsafe { libc::getuid() };
    layer(
        "identity",
        "info",
        if uid == 0 {
            "host is root: sandboxes run as nobody (65534), or as the owner of a writable workspace"
                .to_owned()
        } else {
            format!("host uid {uid}: sandboxes run as it, seen as uid {} inside", launch::INNER_ID)
        },
    )
}
