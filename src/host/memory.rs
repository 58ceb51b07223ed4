//! The host's own memory limit (docs/host.md, "Memory"): when the process runs in a memory
//! cgroup with a limit, the reactor watches how much of it anonymous memory takes (what
//! reclaim cannot give back: the spill store's page cache can be) and, past half of it, spills
//! every answer longer than [`PRESSED_THRESHOLD`] instead of holding it, until the use falls
//! back under three eighths. Without a limit there is nothing to watch and nothing is read.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The spill threshold while memory is short.
pub(crate) const PRESSED_THRESHOLD: usize = 64 << 10;

/// How often the use is read again (at most; only while answers arrive).
const EVERY: Duration = Duration::from_millis(20);

/// The memory cgroup this process runs in, and its limit.
#[derive(Debug)]
pub(crate) struct MemoryWatch {
    /// Its `memory.stat`.
    stat: PathBuf,
    /// The keys of `memory.stat` whose sum is its anonymous memory.
    anon: &'static [&'static str],
    limit: u64,
    pressed: bool,
    next: Instant,
}

impl MemoryWatch {
    /// This process's memory cgroup, when it has a limit (cgroup v2, or v1's memory
    /// controller).
    pub(crate) fn of_this_process() -> Option<MemoryWatch> {
        let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        Self::from_cgroups(&cgroups, Path::new("/sys/fs/cgroup"))
    }

    /// From the text of `/proc/self/cgroup` and where the hierarchies are mounted.
    fn from_cgroups(cgroups: &str, root: &Path) -> Option<MemoryWatch> {
        let read = |p: &Path| std::fs::read_to_string(p).ok();
        for line in cgroups.lines() {
            let mut fields = line.splitn(3, ':');
            let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
            let path = path.trim_start_matches('/');
            let (dir, limit_file, anon): (PathBuf, &str, &'static [&'static str]) =
                if controllers.split(',').any(|c| c == "memory") {
                    (root.join("memory").join(path), "memory.limit_in_bytes", &["total_rss"])
                } else if controllers.is_empty() {
                    // v2: mounted at the root, or beside v1 as "unified".
                    let dir = [root.join(path), root.join("unified").join(path)]
                        .into_iter()
                        .find(|d| d.join("memory.max").exists());
                    let Some(dir) = dir else { continue };
                    (dir, "memory.max", &["anon"])
                } else {
                    continue;
                };
            let Some(text) = read(&dir.join(limit_file)) else { continue };
            // "max" (v2) or a page-rounded i64::MAX (v1): no limit.
            let Ok(limit) = text.trim().parse::<u64>() else { continue };
            if limit >= 1 << 62 {
                continue;
            }
            let stat = dir.join("memory.stat");
            if read(&stat).is_none() {
                continue;
            }
            return Some(MemoryWatch { stat, anon, limit, pressed: false, next: Instant::now() });
        }
        None
    }

    /// The limit, in bytes.
    pub(crate) fn limit(&self) -> u64 {
        self.limit
    }

    /// Whether memory is short now; `Some` only when that changed since the last call
    /// (read at most every [`EVERY`]).
    pub(crate) fn poll(&mut self, now: Instant) -> Option<bool> {
        if now < self.next {
            return None;
        }
        self.next = now + EVERY;
        let anon = self.anon_bytes()?;
        let pressed = if self.pressed { anon > self.limit / 8 * 3 } else { anon > self.limit / 2 };
        (pressed != std::mem::replace(&mut self.pressed, pressed)).then_some(pressed)
    }

    /// Whether memory was short at the last reading.
    pub(crate) fn pressed(&self) -> bool {
        self.pressed
    }

    /// Anonymous memory in use in the cgroup now.
    pub(crate) fn anon_bytes(&self) -> Option<u64> {
        let stat = std::fs::read_to_string(&self.stat).ok()?;
        let sum = stat
            .lines()
            .filter_map(|l| l.split_once(' '))
            .filter(|(k, _)| self.anon.contains(k))
            .filter_map(|(_, v)| v.trim().parse::<u64>().ok())
            .sum();
        Some(sum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_limit_in_v1_or_v2_and_none_without_one() {
        let dir = std::env::temp_dir().join(format!("ringmcp-memwatch-{}", std::process::id()));
        let v1 = dir.join("memory/box");
        let v2 = dir.join("unified/other");
        std::fs::create_dir_all(&v1).unwrap();
        std::fs::create_dir_all(&v2).unwrap();
        std::fs::write(v1.join("memory.limit_in_bytes"), "104857600\n").unwrap();
        std::fs::write(v1.join("memory.stat"), "cache 5\nrss 1\ntotal_rss 60000000\n").unwrap();
        std::fs::write(v2.join("memory.max"), "max\n").unwrap();
        std::fs::write(v2.join("memory.stat"), "anon 1\n").unwrap();
        let mut w = MemoryWatch::from_cgroups("4:memory:/box\n0::/other\n", &dir).unwrap();
        assert_eq!(w.limit(), 100 << 20);
        assert_eq!(w.poll(Instant::now()), Some(true), "60 MB of 100 MiB: over half");
        assert_eq!(w.poll(Instant::now() + EVERY), None, "no change");
        std::fs::write(v1.join("memory.stat"), "total_rss 41000000\n").unwrap();
        assert_eq!(w.poll(Instant::now() + EVERY * 2), None, "over three eighths: still short");
        std::fs::write(v1.join("memory.stat"), "total_rss 30000000\n").unwrap();
        assert_eq!(w.poll(Instant::now() + EVERY * 3), Some(false));
        // v2 with "max", and no memory line at all: nothing to watch.
        assert!(MemoryWatch::from_cgroups("0::/other\n", &dir).is_none());
        std::fs::write(v2.join("memory.max"), "2000000\n").unwrap();
        let w = MemoryWatch::from_cgroups("0::/other\n", &dir).unwrap();
        assert_eq!((w.limit(), w.anon_bytes()), (2_000_000, Some(1)));
        assert!(MemoryWatch::from_cgroups("3:cpu:/x\n", &dir).is_none());
        std::fs::remove_dir_all(dir).unwrap();
    }
}
