//! Shared helpers: the reference server, the external test servers, loud skips.

use std::path::PathBuf;
use std::time::Duration;

use ringmcp::host::{Host, ServerSpec};

/// The `ringmcp` binary built for this test run.
pub fn ringmcp_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_ringmcp"))
}

/// `ringmcp serve` with extra arguments.
pub fn reference(name: &str, extra: &[&str]) -> ServerSpec {
    ServerSpec::new(name, ringmcp_bin()).arg("serve").args(extra.iter().copied())
}

/// `ringmcp serve --fault-tools`.
pub fn faulty(name: &str) -> ServerSpec {
    reference(name, &["--fault-tools"])
}

/// A host with a short default timeout, so a broken test fails fast instead of hanging.
pub fn host() -> Host {
    Host::builder().request_timeout(Duration::from_secs(30)).build().expect("io_uring host")
}

/// Where `scripts/deps.sh` installed the npm packages and the Python venv.
pub fn deps_dir() -> PathBuf {
    std::env::var_os("RINGMCP_DEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".deps"))
}

/// Returns the path if it exists; otherwise prints a loud skip message (CI installs the
/// dependencies first, so there a missing one fails `deps.sh` long before this).
pub fn require(path: PathBuf, what: &str) -> Option<PathBuf> {
    if path.exists() {
        Some(path)
    } else {
        eprintln!(
            "\n*** SKIPPED: {what} not installed at {} — run scripts/deps.sh ***\n",
            path.display()
        );
        None
    }
}

/// Pids of this process's children (zombies included), from /proc.
pub fn child_pids() -> Vec<u32> {
    let me = std::process::id();
    let mut pids = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{me}/task")).into_iter().flatten().flatten() {
        if let Ok(list) = std::fs::read_to_string(task.path().join("children")) {
            pids.extend(list.split_whitespace().filter_map(|p| p.parse::<u32>().ok()));
        }
    }
    pids
}

/// Number of open fds of this process.
pub fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map(|d| d.count()).unwrap_or(0)
}
