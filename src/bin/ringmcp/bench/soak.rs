//! `--faults RATE`: the soak. A share of the calls are faults of the reference server's
//! `--fault-tools` (a crash, a hang, a garbage line), the servers are restarted by the host's
//! supervision when they die, and the process's RSS, fds and threads are sampled every few
//! seconds. Every call is accounted for: an ordinary call may fail only because a fault hit
//! its server (it was in flight when the server died, or was sent while it restarted); any
//! other failure is counted as unexplained. After the run the servers and the host are
//! dropped and the fds and threads counted again against the count before they started.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use plotters::prelude::*;
use serde_json::{Value, json};

use std::path::{Path, PathBuf};

use super::measure::rss_bytes_of;

/// How long a hang fault waits before its call gives up.
pub(crate) const HANG_DEADLINE: Duration = Duration::from_secs(2);

/// The faults, in the order the draw picks them: the tool and its arguments.
pub(crate) const FAULTS: [(&str, &str); 3] =
    [("crash", "exit"), ("hang", "hang"), ("garbage", "noise")];

/// Whether call `i` is a fault at `rate`, and which ([`FAULTS`] index): a fixed draw per call
/// (splitmix64), so that two runs inject the same faults.
pub(crate) fn draw(i: u64, rate: f64) -> Option<usize> {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    let unit = (z >> 11) as f64 / (1u64 << 53) as f64;
    (unit < rate).then(|| (z % FAULTS.len() as u64) as usize)
}

/// How the soak's servers are restarted: quickly, and never given up on.
pub(crate) fn restart_policy() -> ringmcp::host::RestartPolicy {
    ringmcp::host::RestartPolicy { initial_delay_ms: 100, max_delay_ms: 500, max_restarts: None }
}

/// Whether the server has the fault tools (named with `prefix` through a gateway).
pub(crate) fn check_tools(client: &ringmcp::host::Client, prefix: &str) -> Result<(), String> {
    let tools = client.blocking().list_tools().map_err(|e| format!("listing its tools: {e}"))?;
    let missing: Vec<&str> = FAULTS
        .iter()
        .map(|(_, tool)| *tool)
        .filter(|t| !tools.iter().any(|tool| tool.name.strip_prefix(prefix) == Some(*t)))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(format!(
        "--faults calls the tools {missing:?}, which this server does not have: run it on the reference server (the default: `ringmcp bench --faults 0.01`), or one with tools of those names"
    ))
}

/// The soak's report once the servers and the host are gone: `after` is taken once the fds
/// and threads settled (up to 10 s), or as they are then.
pub(crate) fn report(
    rate: f64,
    accounts: &super::drive::Accounts,
    samples: Vec<Sample>,
    before: Sample,
    watched: &Watched,
) -> SoakReport {
    let start = Instant::now();
    let deadline = start + Duration::from_secs(10);
    let mut after = watched.sample(start);
    while before.left_in(&after) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        after = watched.sample(start);
    }
    SoakReport {
        process: watched.label.clone(),
        rate,
        injected: accounts.injected.clone(),
        fault_outcomes: accounts.fault_outcomes.clone(),
        collateral: accounts.collateral.clone(),
        unexplained: accounts.unexplained.clone(),
        first_unexplained: accounts.first_unexplained.clone(),
        samples,
        before,
        after,
    }
}

/// Writes the samples' plot beside `--report FILE`: `FILE`'s stem with `-soak.svg`.
pub(crate) fn write_plot(
    report: &std::path::Path,
    soak: &SoakReport,
    shape: &str,
) -> Result<(), String> {
    let stem = report.file_stem().and_then(|s| s.to_str()).unwrap_or("bench");
    let path = report.with_file_name(format!("{stem}-soak.svg"));
    let svg = soak.svg(&format!("ringmcp bench --faults {}: {shape}", soak.rate))?;
    std::fs::write(&path, svg).map_err(|e| format!("writing {}: {e}", path.display()))
}

/// The error kinds an ordinary call may get when a fault hit its server.
pub(crate) fn explained(kind: &str) -> bool {
    matches!(kind, "restarted" | "unavailable")
}

/// One sample of the process.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Sample {
    pub(crate) secs: f64,
    pub(crate) rss_bytes: u64,
    pub(crate) fds: usize,
    pub(crate) threads: usize,
    /// Its child processes (the servers).
    pub(crate) children: usize,
    /// A gateway's upstream connections (its clients' pools decide how many; not in `fds`).
    pub(crate) connections: usize,
}

impl Sample {
    /// Whether `after` holds more fds, threads or children than this sample.
    fn left_in(&self, after: &Sample) -> bool {
        after.fds > self.fds || after.threads > self.threads || after.children > self.children
    }
}

fn count(dir: &Path) -> usize {
    std::fs::read_dir(dir).map(|d| d.count()).unwrap_or(0)
}

/// The process sampled: the bench itself, or the gateway the load goes through.
#[derive(Debug, Clone)]
pub(crate) struct Watched {
    proc: PathBuf,
    /// A gateway's port: its connections there are counted apart from its fds.
    port: Option<u16>,
    /// What the report calls it.
    pub(crate) label: String,
}

impl Watched {
    pub(crate) fn this_process() -> Watched {
        Watched { proc: PathBuf::from("/proc/self"), port: None, label: "bench".into() }
    }

    pub(crate) fn gateway(pid: u32, port: u16) -> Watched {
        let proc = PathBuf::from(format!("/proc/{pid}"));
        Watched { proc, port: Some(port), label: format!("gateway {pid}") }
    }

    /// The process now.
    pub(crate) fn sample(&self, since: Instant) -> Sample {
        let connections = self.port.map_or(0, |port| self.connections(port));
        Sample {
            secs: since.elapsed().as_secs_f64(),
            rss_bytes: rss_bytes_of(&self.proc).unwrap_or(0),
            fds: count(&self.proc.join("fd")).saturating_sub(connections),
            threads: count(&self.proc.join("task")),
            children: self.children(),
            connections,
        }
    }

    /// Its fds that are TCP connections accepted on `port` (the listening socket is one of
    /// its own fds, not a connection).
    fn connections(&self, port: u16) -> usize {
        let mut inodes = std::collections::HashSet::new();
        for table in ["net/tcp", "net/tcp6"] {
            let Ok(text) = std::fs::read_to_string(self.proc.join(table)) else { continue };
            for line in text.lines().skip(1) {
                let f: Vec<&str> = line.split_whitespace().collect();
                // local_address is HEX_IP:HEX_PORT, st 0A is LISTEN, the inode is field 9.
                let local = f.get(1).and_then(|a| a.rsplit(':').next());
                let local = local.and_then(|p| u16::from_str_radix(p, 16).ok());
                if local == Some(port) && f.get(3) != Some(&"0A") {
                    inodes.extend(f.get(9).map(|i| format!("socket:[{i}]")));
                }
            }
        }
        let Ok(fds) = std::fs::read_dir(self.proc.join("fd")) else { return 0 };
        fds.flatten()
            .filter_map(|fd| std::fs::read_link(fd.path()).ok())
            .filter(|link| inodes.contains(&*link.to_string_lossy()))
            .count()
    }

    /// Its children, from every thread's `children` list.
    fn children(&self) -> usize {
        let Ok(tasks) = std::fs::read_dir(self.proc.join("task")) else { return 0 };
        tasks
            .flatten()
            .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
            .map(|c| c.split_whitespace().count())
            .sum()
    }
}

/// The process before the run: what lives for the process once started (the shared timer
/// thread a restarting server's callers wait on) started first, so that it is not counted
/// as left behind.
pub(crate) fn baseline() -> Sample {
    futures::executor::block_on(futures_timer::Delay::new(Duration::from_millis(1)));
    Watched::this_process().sample(Instant::now())
}

/// Samples the process every `every` on a thread of its own until stopped.
pub(crate) struct Sampler {
    stop: Arc<AtomicBool>,
    samples: Arc<Mutex<Vec<Sample>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sampler {
    pub(crate) fn start(every: Duration, watched: Watched) -> std::io::Result<Sampler> {
        let stop = Arc::new(AtomicBool::new(false));
        let samples = Arc::new(Mutex::new(Vec::new()));
        let (s, out) = (stop.clone(), samples.clone());
        let thread = std::thread::Builder::new().name("bench-sampler".into()).spawn(move || {
            let start = Instant::now();
            let mut next = start;
            while !s.load(Ordering::Acquire) {
                if Instant::now() >= next {
                    out.lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push(watched.sample(start));
                    next += every;
                }
                std::thread::sleep(Duration::from_millis(50).min(every));
            }
        })?;
        Ok(Sampler { stop, samples, thread: Some(thread) })
    }

    /// Stops it; the samples taken.
    pub(crate) fn finish(mut self) -> Vec<Sample> {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        std::mem::take(&mut *self.samples.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
    }
}

/// What the soak adds to the report.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SoakReport {
    /// The process sampled.
    pub(crate) process: String,
    pub(crate) rate: f64,
    /// Faults injected, by kind.
    pub(crate) injected: BTreeMap<String, u64>,
    /// Outcomes of the fault calls: `kind → outcome → count`.
    pub(crate) fault_outcomes: BTreeMap<String, BTreeMap<String, u64>>,
    /// Failures of ordinary calls a fault explains (by kind), and those it does not.
    pub(crate) collateral: BTreeMap<String, u64>,
    pub(crate) unexplained: BTreeMap<String, u64>,
    /// What the first of each kind of unexplained failure said.
    pub(crate) first_unexplained: BTreeMap<String, String>,
    pub(crate) samples: Vec<Sample>,
    /// fds and threads before the servers started, and once they and the host were gone.
    pub(crate) before: Sample,
    pub(crate) after: Sample,
}

impl SoakReport {
    /// RSS of the last fifth of the samples against the second fifth (the first is warm-up),
    /// as a ratio (1.0: flat).
    pub(crate) fn rss_growth(&self) -> Option<f64> {
        let n = self.samples.len();
        if n < 10 {
            return None;
        }
        let median = |s: &[Sample]| {
            let mut v: Vec<u64> = s.iter().map(|s| s.rss_bytes).collect();
            v.sort_unstable();
            v[v.len() / 2] as f64
        };
        let early = median(&self.samples[n / 5..2 * n / 5]);
        let late = median(&self.samples[4 * n / 5..]);
        (early > 0.0).then(|| late / early)
    }

    /// Whether nothing was left: fds and threads back where they were.
    pub(crate) fn leaked(&self) -> Vec<String> {
        let mut leaks = Vec::new();
        if self.after.fds > self.before.fds {
            leaks.push(format!("{} fds ({} before)", self.after.fds, self.before.fds));
        }
        if self.after.threads > self.before.threads {
            leaks.push(format!("{} threads ({} before)", self.after.threads, self.before.threads));
        }
        if self.after.children > self.before.children {
            let (after, before) = (self.after.children, self.before.children);
            leaks.push(format!("{after} child processes ({before} before)"));
        }
        leaks
    }

    pub(crate) fn to_json(&self) -> Value {
        let samples: Vec<Value> = (self.samples.iter())
            .map(|s| {
                let secs = (s.secs * 10.0).round() / 10.0;
                json!([secs, s.rss_bytes, s.fds, s.threads, s.children, s.connections])
            })
            .collect();
        json!({
            "process": self.process,
            "rate": self.rate,
            "injected": self.injected,
            "faultOutcomes": self.fault_outcomes,
            "collateral": self.collateral,
            "unexplained": self.unexplained,
            "firstUnexplained": self.first_unexplained,
            "rssGrowth": self.rss_growth(),
            "leaks": self.leaked(),
            "before": {"fds": self.before.fds, "threads": self.before.threads, "children": self.before.children},
            "after": {"fds": self.after.fds, "threads": self.after.threads, "children": self.after.children},
            "samples": {"columns": ["secs", "rssBytes", "fds", "threads", "children", "connections"], "rows": samples},
        })
    }

    pub(crate) fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let mut t = String::new();
        let _ = writeln!(t, "soak: faults at rate {}, {} sampled", self.rate, self.process);
        for (kind, n) in &self.injected {
            let outcomes = self
                .fault_outcomes
                .get(kind)
                .map(|o| o.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", "));
            let _ = writeln!(t, "  {kind:<8} {n:>7} injected: {}", outcomes.unwrap_or_default());
        }
        let list = |m: &BTreeMap<String, u64>| {
            if m.is_empty() {
                "none".to_owned()
            } else {
                m.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", ")
            }
        };
        let _ = writeln!(t, "  ordinary calls failed by a fault: {}", list(&self.collateral));
        let _ = writeln!(t, "  unexplained failures: {}", list(&self.unexplained));
        for (kind, message) in &self.first_unexplained {
            let _ = writeln!(t, "    first {kind}: {message}");
        }
        if let Some(g) = self.rss_growth() {
            let _ = writeln!(t, "  RSS, last fifth against second fifth: ×{g:.3}");
        }
        let leaks = self.leaked();
        let (a, b) = (&self.after, &self.before);
        let _ = writeln!(
            t,
            "  afterwards: {} fds, {} threads, {} children ({}, {}, {} before): {}",
            a.fds,
            a.threads,
            a.children,
            b.fds,
            b.threads,
            b.children,
            if leaks.is_empty() { "nothing left".to_owned() } else { leaks.join(", ") }
        );
        t
    }

    /// RSS (MiB), fds and threads over time, as an SVG.
    pub(crate) fn svg(&self, title: &str) -> Result<String, String> {
        let e = |e: DrawingAreaErrorKind<_>| e.to_string();
        let secs = self.samples.last().map_or(1.0, |s| s.secs.max(1.0));
        let mib = |s: &Sample| s.rss_bytes as f64 / f64::from(1 << 20);
        let top = self.samples.iter().map(|s| mib(s).max(s.fds as f64).max(s.threads as f64));
        let top = top.fold(1.0, f64::max) * 1.2;
        let mut out = String::new();
        {
            let root = SVGBackend::with_string(&mut out, (960, 560)).into_drawing_area();
            root.fill(&WHITE).map_err(e)?;
            let mut chart = ChartBuilder::on(&root)
                .caption(title, ("sans-serif", 20))
                .margin(20)
                .x_label_area_size(45)
                .y_label_area_size(70)
                .build_cartesian_2d(0f64..secs, 0f64..top)
                .map_err(e)?;
            chart.configure_mesh().x_desc("seconds").y_desc("MiB / count").draw().map_err(e)?;
            type Series<'a> = (&'a str, RGBColor, &'a dyn Fn(&Sample) -> f64);
            let series: [Series<'_>; 3] = [
                ("RSS (MiB)", BLUE, &mib),
                ("fds", RED, &|s: &Sample| s.fds as f64),
                ("threads", GREEN, &|s: &Sample| s.threads as f64),
            ];
            let series = (series.into_iter())
                .map(|(label, colour, y)| {
                    (label, colour, self.samples.iter().map(|s| (s.secs, y(s))).collect())
                })
                .collect();
            super::plot::lines(&mut chart, series, SeriesLabelPosition::UpperRight)?;
            root.present().map_err(e)?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_draw_injects_about_the_rate_and_every_kind() {
        let n = 100_000;
        let mut kinds = [0u64; 3];
        for i in 0..n {
            if let Some(k) = draw(i, 0.01) {
                kinds[k] += 1;
            }
        }
        let total: u64 = kinds.iter().sum();
        assert!((800..1200).contains(&total), "{total}");
        assert!(kinds.iter().all(|&k| k > 200), "{kinds:?}");
        assert_eq!(draw(7, 0.0), None);
        assert!(draw(7, 1.0).is_some());
    }
}
