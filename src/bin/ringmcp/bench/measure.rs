//! What the bench measures about itself: latency histograms, process CPU time, peak RSS.

use std::time::Duration;

use hdrhistogram::Histogram;
use nix::sys::resource::{UsageWho, getrusage};
use nix::sys::time::TimeValLike;

/// Highest latency the histogram tracks exactly (one hour); longer ones are clamped to it.
const MAX_TRACKED_NS: u64 = 3_600 * 1_000_000_000;

/// Latencies of one series of calls, kept in nanoseconds with three significant digits (so a
/// 20 µs round trip is resolved to 10 ns and p50 ratios are not quantised to whole µs).
#[derive(Debug, Clone)]
pub(crate) struct Latencies {
    hist: Histogram<u64>,
}

/// The percentiles the report shows, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct LatencySummary {
    pub(crate) count: u64,
    pub(crate) min: f64,
    pub(crate) mean: f64,
    pub(crate) p50: f64,
    pub(crate) p90: f64,
    pub(crate) p99: f64,
    pub(crate) p999: f64,
    pub(crate) max: f64,
}

impl Latencies {
    pub(crate) fn new() -> Self {
        let hist =
            Histogram::new_with_bounds(1, MAX_TRACKED_NS, 3).expect("valid histogram bounds");
        Latencies { hist }
    }

    pub(crate) fn record(&mut self, latency: Duration) {
        let ns = u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX).clamp(1, MAX_TRACKED_NS);
        self.hist.saturating_record(ns);
    }

    pub(crate) fn count(&self) -> u64 {
        self.hist.len()
    }

    /// The latency at quantile `q` (0..=1), in microseconds; 0 when nothing was recorded.
    pub(crate) fn quantile_us(&self, q: f64) -> f64 {
        if self.hist.is_empty() {
            return 0.0;
        }
        self.hist.value_at_quantile(q) as f64 / 1_000.0
    }

    pub(crate) fn summary(&self) -> LatencySummary {
        let empty = self.hist.is_empty();
        let us = |ns: u64| if empty { 0.0 } else { ns as f64 / 1_000.0 };
        LatencySummary {
            count: self.hist.len(),
            min: us(self.hist.min()),
            mean: if empty { 0.0 } else { self.hist.mean() / 1_000.0 },
            p50: self.quantile_us(0.50),
            p90: self.quantile_us(0.90),
            p99: self.quantile_us(0.99),
            p999: self.quantile_us(0.999),
            max: us(self.hist.max()),
        }
    }
}

/// CPU time this process (every thread, the reactor included; not its children) has used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CpuTime {
    pub(crate) user: Duration,
    pub(crate) system: Duration,
}

impl CpuTime {
    /// `getrusage(RUSAGE_SELF)`; zero if the call fails (it cannot for `RUSAGE_SELF`).
    pub(crate) fn now() -> Self {
        let Ok(usage) = getrusage(UsageWho::RUSAGE_SELF) else { return Self::default() };
        let micros = |t: nix::sys::time::TimeVal| {
            Duration::from_micros(u64::try_from(t.num_microseconds()).unwrap_or(0))
        };
        CpuTime { user: micros(usage.user_time()), system: micros(usage.system_time()) }
    }

    pub(crate) fn total(self) -> Duration {
        self.user + self.system
    }

    /// Time used since `earlier`.
    pub(crate) fn since(self, earlier: CpuTime) -> CpuTime {
        CpuTime {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
        }
    }
}

/// The process's peak resident set size in bytes (`ru_maxrss`, which Linux gives in KiB).
pub(crate) fn peak_rss_bytes() -> u64 {
    getrusage(UsageWho::RUSAGE_SELF)
        .map(|u| u64::try_from(u.max_rss()).unwrap_or(0) * 1024)
        .unwrap_or(0)
}

/// The process's current resident set size in bytes (`VmRSS` in /proc/self/status).
pub(crate) fn current_rss_bytes() -> Option<u64> {
    rss_bytes_of(std::path::Path::new("/proc/self"))
}

/// The resident set size of the process whose /proc directory is `proc`.
pub(crate) fn rss_bytes_of(proc: &std::path::Path) -> Option<u64> {
    let status = std::fs::read_to_string(proc.join("status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_ordered_and_in_microseconds() {
        let mut l = Latencies::new();
        for us in 1..=1000 {
            l.record(Duration::from_micros(us));
        }
        let s = l.summary();
        assert_eq!(s.count, 1000);
        assert!((s.p50 - 500.0).abs() < 1.0, "{s:?}");
        assert!((s.p99 - 990.0).abs() < 1.0, "{s:?}");
        assert!(s.min <= s.p50 && s.p50 <= s.p90 && s.p90 <= s.p99);
        assert!(s.p99 <= s.p999 && s.p999 <= s.max);
        assert!((s.max - 1000.0).abs() < 1.0, "{s:?}");
    }

    #[test]
    fn empty_and_extreme_values() {
        let mut l = Latencies::new();
        assert_eq!(l.summary().p50, 0.0);
        assert_eq!(l.summary().max, 0.0);
        l.record(Duration::ZERO);
        l.record(Duration::from_secs(10 * 3600));
        assert_eq!(l.count(), 2);
        assert!(l.summary().max >= 3_599_000_000.0);
    }

    #[test]
    fn cpu_time_moves_forward() {
        // Spin until the meter shows 20 ms of CPU: a meter stuck at zero spins to the 30 s
        // bound and fails; under load the spin just lasts longer.
        let before = CpuTime::now();
        let started = std::time::Instant::now();
        let mut x = 0u64;
        let used = loop {
            for i in 0..100_000u64 {
                x = x.wrapping_mul(31).wrapping_add(i);
            }
            let used = CpuTime::now().since(before);
            if used.total() >= Duration::from_millis(20)
                || started.elapsed() > Duration::from_secs(30)
            {
                break used;
            }
        };
        std::hint::black_box(x);
        assert!(used.total() >= Duration::from_millis(20), "the CPU meter did not move: {used:?}");
        // RUSAGE_SELF counts every thread of this test process: at most every core, busy.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        let most = started.elapsed() * cores + Duration::from_millis(10);
        assert!(used.total() <= most, "{used:?}: more CPU than {cores} cores could give");
        assert!(peak_rss_bytes() > 0);
        assert!(current_rss_bytes().unwrap_or(1) > 0);
    }
}
