//! What [`Client::stats`](super::Client::stats) reports about one server.

use crate::protocol::SessionStats;

/// Counters and tail of one server, for `Client::stats`.
#[derive(Debug, Clone, Default)]
pub struct ServerStats {
    /// The server's process id.
    pub pid: u32,
    /// Session counters (requests, frames, violations, timeouts, ...).
    pub session: SessionStats,
    /// Bytes read from stdout.
    pub stdout_bytes: u64,
    /// Bytes read from stderr.
    pub stderr_bytes: u64,
    /// The last bytes the server wrote to stderr.
    pub stderr_tail: Vec<u8>,
    /// Events dropped because the event stream was full.
    pub events_dropped: u64,
    /// Frames parsed on the worker pool rather than the reactor thread.
    pub frames_offloaded: u64,
    /// Answers streamed to the spill store.
    pub answers_spilled: u64,
    /// Requests their callers wrote to stdin themselves (docs/host.md, "The direct write");
    /// the rest of `session.requests` went through the reactor.
    pub direct_writes: u64,
    /// The sandbox's limits and counters (OOM kills, pid-limit hits, CPU throttling), when
    /// the server is sandboxed.
    pub sandbox: Option<SandboxStats>,
}

/// What a server's sandbox enforces and what it has stopped so far.
#[derive(Debug, Clone)]
pub struct SandboxStats {
    /// How each limit is enforced (or why not).
    pub limits: crate::sandbox::cgroup::LimitReport,
    /// The cgroup's counters, when the server has a cgroup.
    pub counters: Option<crate::sandbox::cgroup::CgroupStats>,
    /// The server's `RLIMIT_NOFILE` (soft = hard: the most fds it can hold open).
    pub nofile: u64,
}

impl ServerStats {
    /// The last lines of [`stderr_tail`](Self::stderr_tail), as
    /// [`Error::Handshake`](super::Error::Handshake) shows them: at most
    /// [`STDERR_LINES`](super::STDERR_LINES),
    /// each cut at [`STDERR_LINE_MAX`](super::STDERR_LINE_MAX) characters, oldest first.
    pub fn stderr_lines(&self) -> Vec<String> {
        super::error::last_lines(&self.stderr_tail)
    }
}
