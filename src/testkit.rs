//! Test support shared by the unit tests and the integration tests: skips that are loud,
//! counted and, for test dependencies in CI, failures.
//!
//! A test that cannot run here calls [`skip`] and returns. libtest has no run-time "ignored",
//! so a skip is also appended to the file named by `RINGMCP_SKIP_LOG` (`scripts/test.sh` sets
//! it) and the script reports those tests as skipped, not passed, in its totals. With
//! `RINGMCP_REQUIRE_DEPS=1` (also set by `scripts/test.sh`, which installs every dependency
//! first) a [`SkipKind::Dependency`] skip panics instead: a missing server, SDK or corpus is
//! then a failure, never a silent pass. Under `CI=true` (CI runs as root on a full kernel) a
//! [`SkipKind::Machine`] skip panics too.

use std::io::Write;

/// Why a test cannot run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipKind {
    /// A test dependency `scripts/deps.sh` installs (npm servers, the Python SDK, python3,
    /// node, the JSONTestSuite corpus).
    Dependency,
    /// A kernel feature or a permission this machine does not offer (root, io_uring, user
    /// namespaces, IA32 emulation, a cgroup controller), found by a probe independent of the
    /// code under test.
    Machine,
    /// A test dependency `scripts/deps.sh` installs only when asked (the all-mpnet-base-v2
    /// weights, `RINGMCP_MPNET=1`); CI always asks.
    OptIn,
}

impl SkipKind {
    fn as_str(self) -> &'static str {
        match self {
            SkipKind::Dependency => "dependency",
            SkipKind::Machine => "machine",
            SkipKind::OptIn => "opt-in",
        }
    }
}

/// Records that the current test skips (all of it, or the part that needed what is missing).
///
/// # Panics
/// For a [`SkipKind::Dependency`] when `RINGMCP_REQUIRE_DEPS=1`, and for a
/// [`SkipKind::Machine`] or [`SkipKind::OptIn`] when `CI=true`.
pub fn skip(kind: SkipKind, reason: impl std::fmt::Display) {
    // libtest runs each test on a thread named after it.
    let test = std::thread::current().name().unwrap_or("<unnamed>").to_owned();
    let required = std::env::var_os("RINGMCP_REQUIRE_DEPS").is_some_and(|v| v == "1");
    if kind == SkipKind::Dependency && required {
        panic!(
            "{test}: a required test dependency is missing: {reason} \
             (RINGMCP_REQUIRE_DEPS=1; run scripts/deps.sh)"
        );
    }
    // CI runs as root on a kernel that has every feature the suite probes for: a machine skip
    // there means the machine or the probe changed, and hides a test; it fails the run.
    let ci = std::env::var_os("CI").is_some_and(|v| v == "true");
    if kind == SkipKind::Machine && ci {
        panic!(
            "{test}: cannot run on this machine: {reason} (CI=true: a machine skip is a failure)"
        );
    }
    if kind == SkipKind::OptIn && ci {
        panic!("{test}: {reason} (CI=true: scripts/deps.sh installs every opt-in dependency)");
    }
    eprintln!("\n*** SKIPPED {test} ({}): {reason} ***\n", kind.as_str());
    if let Some(log) = std::env::var_os("RINGMCP_SKIP_LOG") {
        let line =
            format!("{test}\t{}\t{}\n", kind.as_str(), reason.to_string().replace('\n', " "));
        // One write per line on an O_APPEND file: concurrent tests do not interleave.
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .and_then(|mut f| f.write_all(line.as_bytes()));
        if let Err(e) = written {
            panic!("{test}: cannot record the skip in {}: {e}", log.to_string_lossy());
        }
    }
}

/// Whether the running kernel is at least `major.minor` (its release, as `uname -r` says): what a test knows of
/// the machine without asking the code it tests.
pub fn kernel_at_least(major: u32, minor: u32) -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut parts =
        release.split(|c: char| !c.is_ascii_digit()).filter_map(|p| p.parse::<u32>().ok());
    let (have_major, have_minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (have_major, have_minor) >= (major, minor)
}

/// The real `python3` executable on `PATH` (resolved through pyenv-style shims, so it can be
/// run inside a sandbox), or `None` after a [`SkipKind::Dependency`] skip.
pub fn python3() -> Option<std::path::PathBuf> {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output();
    match out {
        Ok(o) if o.status.success() => {
            let exe = std::path::PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
            Some(std::fs::canonicalize(&exe).unwrap_or(exe))
        }
        other => {
            skip(SkipKind::Dependency, format!("no working python3 on PATH ({other:?})"));
            None
        }
    }
}

/// The egress proxy's OS hooks for tests: a resolver that maps test names, and a dialer that
/// dials loopback only. Both record what they were asked.
pub mod egress {
    use std::collections::HashMap;
    use std::net::{IpAddr, SocketAddr};
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU16, Ordering};
    use std::time::Duration;

    use crate::egress::{BoxFuture, Dial, Resolve};

    /// Names mapped to addresses; every name asked is recorded.
    #[derive(Debug, Default)]
    pub struct MapResolver {
        /// The map.
        pub map: HashMap<String, Vec<IpAddr>>,
        /// Every name asked, in order.
        pub asked: Mutex<Vec<String>>,
    }

    impl MapResolver {
        /// A resolver for `names` (each with its addresses, as text).
        ///
        /// # Panics
        /// On an address that does not parse.
        pub fn new(names: &[(&str, &[&str])]) -> MapResolver {
            let map = names
                .iter()
                .map(|(n, a)| {
                    (n.to_string(), a.iter().map(|s| s.parse().expect("an address")).collect())
                })
                .collect();
            MapResolver { map, ..Default::default() }
        }
    }

    impl Resolve for MapResolver {
        fn resolve(&self, name: &str) -> BoxFuture<'_, std::io::Result<Vec<IpAddr>>> {
            self.asked
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(name.to_owned());
            let found = self.map.get(name).cloned();
            Box::pin(async move {
                found.ok_or_else(|| {
                    std::io::Error::new(std::io::ErrorKind::NotFound, "unknown test name")
                })
            })
        }
    }

    /// Dials loopback only (anything else is recorded and refused, never dialled). The first
    /// dial to `stall_port` blocks the proxy's thread for 500 ms, so that connections pile up
    /// in the sandbox's init meanwhile.
    #[derive(Debug, Default)]
    pub struct LoopbackDialer {
        /// Every address asked, in order.
        pub asked: Mutex<Vec<SocketAddr>>,
        /// A port whose first dial stalls (0: none).
        pub stall_port: AtomicU16,
    }

    impl Dial for LoopbackDialer {
        fn dial(&self, addr: SocketAddr) -> BoxFuture<'_, std::io::Result<tokio::net::TcpStream>> {
            self.asked.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(addr);
            // SeqCst: set by the test thread, taken once here; the order needs no argument.
            let stall = addr.port() != 0
                && self
                    .stall_port
                    .compare_exchange(addr.port(), 0, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok();
            if stall {
                // Deliberately blocks the proxy's one thread: nothing drains the channel.
                std::thread::sleep(Duration::from_millis(500));
            }
            Box::pin(async move {
                if !addr.ip().is_loopback() {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::PermissionDenied,
                        "the test dialer dials loopback only",
                    ));
                }
                tokio::net::TcpStream::connect(addr).await
            })
        }
    }
}

/// Characters that read as a slash: the look-alikes a server's normalisation may turn into `/`,
/// and `\` (which Node's URL parser reads as `/`).
const SLASHES: [char; 7] =
    ['\\', '\u{2215}', '\u{2044}', '\u{29F8}', '\u{2571}', '\u{FF0F}', '\u{1735}'];

/// Whether some reading of the path argument `text` leaves `root`: an oracle for the policy's
/// path confinement written apart from `policy::paths`, so a test of that code does not check it
/// with itself. The readings: as given and percent-decoded (a `file:` scheme in any case taken
/// off), each also in Unicode compatibility form (NFKC: `．．` is `..`) with every look-alike
/// slash and `\` as `/`; each made absolute against `root` and normalised lexically (`.` and
/// empty parts dropped, `..` taking one part off, never above `/`).
pub fn path_escapes(root: &str, text: &str) -> bool {
    use unicode_normalization::UnicodeNormalization;
    let body = match text.get(..5) {
        Some(scheme) if scheme.eq_ignore_ascii_case("file:") => {
            let rest = &text[5..];
            rest.strip_prefix("//").map_or(rest, |r| r.find('/').map_or("", |i| &r[i..]))
        }
        _ => text,
    };
    let decoded = percent_encoding::percent_decode_str(body).decode_utf8_lossy().into_owned();
    let mut readings = vec![body.to_owned(), decoded.clone()];
    for r in [body.to_owned(), decoded] {
        let folded: String = r.nfkc().map(|c| if SLASHES.contains(&c) { '/' } else { c }).collect();
        readings.push(folded);
    }
    let root_parts: Vec<&str> = root.split('/').filter(|p| !p.is_empty()).collect();
    readings.iter().any(|reading| {
        let mut parts: Vec<&str> =
            if reading.starts_with('/') { Vec::new() } else { root_parts.clone() };
        for part in reading.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    parts.pop();
                }
                p => parts.push(p),
            }
        }
        !parts.starts_with(&root_parts)
    })
}

#[cfg(test)]
mod tests {
    use super::path_escapes;

    #[test]
    fn the_path_oracle_reads_every_way_a_server_might() {
        for inside in ["a/b", "/srv/root/x", "./x/../y", "file:///srv/root/a", "%2e%2ex"] {
            assert!(!path_escapes("/srv/root", inside), "{inside}");
        }
        for outside in [
            "../etc",
            "/etc/passwd",
            "%2e%2e/etc",
            "\u{FF0E}\u{FF0E}/etc",
            "..\u{2215}..\u{2215}etc",
            "..\\..\\etc",
            "FILE:///etc/passwd",
            "file://host/etc",
            "/srv/rootkit",
        ] {
            assert!(path_escapes("/srv/root", outside), "{outside}");
        }
    }
}
