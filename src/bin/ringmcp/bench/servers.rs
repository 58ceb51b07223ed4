//! Starting many servers on one host, the fd limit that needs, and the idle-CPU measurement.

use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::executor::block_on;
use futures::stream::FuturesUnordered;
use nix::sys::resource::{Resource, getrlimit, setrlimit};
use ringmcp::host::{Client, Error, Host, ServerSpec};

use super::measure::{CpuTime, current_rss_bytes};

/// Handshakes in flight at once while starting many servers: enough to overlap process start
/// with initialize, few enough that a slow server's handshake does not queue behind hundreds.
const SPAWN_WINDOW: usize = 32;

/// Host-side fds per server: stdin, stdout and stderr pipes plus the pidfd, with slack for
/// whatever the host opens while spawning.
const FDS_PER_SERVER: u64 = 6;

/// `RLIMIT_NOFILE` before and after [`raise_fd_limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FdLimit {
    pub(crate) soft_before: u64,
    pub(crate) soft: u64,
    pub(crate) hard: u64,
}

/// Raises the soft `RLIMIT_NOFILE` to the hard limit when `servers` servers would not fit
/// under it. Children inherit the raised limit.
///
/// # Errors
/// When the limit cannot be read or set.
pub(crate) fn raise_fd_limit(servers: u64) -> nix::Result<FdLimit> {
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE)?;
    let needed = servers.saturating_mul(FDS_PER_SERVER).saturating_add(64);
    if needed <= soft || soft >= hard {
        return Ok(FdLimit { soft_before: soft, soft, hard });
    }
    setrlimit(Resource::RLIMIT_NOFILE, hard, hard)?;
    Ok(FdLimit { soft_before: soft, soft: hard, hard })
}

/// Starts `count` copies of `spec` named `<name>#<first + i>`, a window of them at a time.
///
/// # Errors
/// The first spawn or handshake failure (the servers already started are shut down when the
/// returned clients would have been dropped).
pub(crate) fn spawn_copies(
    host: &Host,
    spec: &ServerSpec,
    first: usize,
    count: usize,
) -> Result<Vec<Client>, Error> {
    let copy = |i: usize| {
        let mut spec = spec.clone();
        spec.name = format!("{}#{}", spec.name, first + i);
        host.spawn(spec)
    };
    block_on(async {
        let mut clients = Vec::with_capacity(count);
        let mut pending = FuturesUnordered::new();
        let mut next = 0;
        while next < count.min(SPAWN_WINDOW) {
            pending.push(copy(next));
            next += 1;
        }
        while let Some(result) = pending.next().await {
            clients.push(result?);
            if next < count {
                pending.push(copy(next));
                next += 1;
            }
        }
        Ok(clients)
    })
}

/// The host process's CPU use while every server sits idle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Idle {
    pub(crate) servers: usize,
    pub(crate) spawn_time: Duration,
    pub(crate) window: Duration,
    /// CPU time of this process (all threads) over the window, as % of one core.
    pub(crate) host_cpu_percent: f64,
    pub(crate) rss_bytes: Option<u64>,
}

/// Sleeps through `window` and reports how much CPU this process used meanwhile. Only the
/// reactor thread can run then, so this is what the idle servers cost the host.
pub(crate) fn measure_idle(servers: usize, spawn_time: Duration, window: Duration) -> Idle {
    // Let the handshakes' stragglers (initialized notifications, first stderr lines) settle.
    std::thread::sleep(Duration::from_millis(200));
    let cpu = CpuTime::now();
    let start = Instant::now();
    std::thread::sleep(window);
    let used = CpuTime::now().since(cpu).total();
    let wall = start.elapsed();
    Idle {
        servers,
        spawn_time,
        window: wall,
        host_cpu_percent: 100.0 * used.as_secs_f64() / wall.as_secs_f64(),
        rss_bytes: current_rss_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fd_limit_is_left_alone_when_it_suffices() {
        let limit = raise_fd_limit(1).unwrap();
        assert_eq!(limit.soft, limit.soft_before);
        assert!(limit.soft <= limit.hard);
    }
}
