//! Naming a host process so that a reused pid is told apart, and removing the folders that
//! processes which are gone left behind.

use std::ffi::OsStr;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use super::SpillError;

/// A process as `<pid>-<starttime>`: the pid plus its start time in clock ticks since boot
/// (field 22 of [`proc_pid_stat(5)`]), which a later process reusing the pid cannot share.
///
/// [`proc_pid_stat(5)`]: https://man7.org/linux/man-pages/man5/proc_pid_stat.5.html
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ProcessTag {
    pub(super) pid: u32,
    pub(super) start: u64,
}

impl ProcessTag {
    /// This process, as `/proc` sees it. The pid is taken from `/proc/self/stat` rather than
    /// `getpid()` so that it is the one `/proc/<pid>` knows even when `/proc` belongs to another
    /// pid namespace.
    pub(super) fn current() -> Result<ProcessTag, SpillError> {
        let path = PathBuf::from("/proc/self/stat");
        let stat = std::fs::read_to_string(&path)
            .map_err(|source| SpillError::ProcStat { path: path.clone(), source })?;
        let pid = stat.split(' ').next().and_then(parse_digits).and_then(|p| u32::try_from(p).ok());
        match (pid, start_time(&stat)) {
            (Some(pid), Some(start)) => Ok(ProcessTag { pid, start }),
            _ => Err(SpillError::ProcStat {
                path,
                source: io::Error::new(io::ErrorKind::InvalidData, "no pid or start time in it"),
            }),
        }
    }

    /// `spill-<pid>-<starttime>`.
    pub(super) fn folder_name(self) -> String {
        format!("spill-{self}")
    }

    /// The tag a folder name `spill-<pid>-<starttime>` carries (decimal digits only, nothing
    /// around them), or `None` for any other name.
    pub(super) fn from_folder_name(name: &OsStr) -> Option<ProcessTag> {
        let (pid, start) = name.to_str()?.strip_prefix("spill-")?.split_once('-')?;
        let pid = u32::try_from(parse_digits(pid)?).ok()?;
        Some(ProcessTag { pid, start: parse_digits(start)? })
    }
}

impl fmt::Display for ProcessTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.pid, self.start)
    }
}

/// What `/proc` says about a pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Liveness {
    /// No such process.
    Gone,
    /// A process started at this time.
    Alive {
        /// Field 22 of its `stat`.
        start: u64,
    },
    /// Could not tell (unreadable or unparsable `stat`): the folder is kept.
    Unknown,
}

/// Reads `/proc/<pid>/stat`.
pub(super) fn proc_liveness(pid: u32) -> Liveness {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => start_time(&stat).map_or(Liveness::Unknown, |start| Liveness::Alive { start }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Liveness::Gone,
        Err(_) => Liveness::Unknown,
    }
}

/// Field 22 (`starttime`) of a `/proc/<pid>/stat` line. Field 2 is the command name in
/// parentheses and may itself hold spaces and `)`, so counting starts after the last `)`, where
/// field 3 begins.
pub(super) fn start_time(stat: &str) -> Option<u64> {
    let after_comm = &stat[stat.rfind(')')? + 1..];
    parse_digits(after_comm.split_ascii_whitespace().nth(22 - 3)?)
}

/// Removes every folder of `base` named `spill-<pid>-<starttime>` whose process is gone, or whose
/// pid now belongs to a process with another start time; `own` is never removed. Anything else
/// (other names, files, symlinks, live or unknown processes) is left alone. Failures are logged
/// and skipped. Returns how many folders were removed.
pub(super) fn remove_stale(
    base: &Path,
    own: ProcessTag,
    liveness: impl Fn(u32) -> Liveness,
) -> usize {
    let entries = match std::fs::read_dir(base) {
        Ok(entries) => entries,
        Err(e) => {
            tracing::warn!("listing {} for stale spill folders: {e}", base.display());
            return 0;
        }
    };
    let mut removed = 0;
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                tracing::warn!("listing {} for stale spill folders: {e}", base.display());
                continue;
            }
        };
        let Some(tag) = ProcessTag::from_folder_name(&entry.file_name()) else { continue };
        // `file_type` does not follow symlinks: a link named like a folder is not ours.
        if tag == own || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let stale = match liveness(tag.pid) {
            Liveness::Gone => true,
            Liveness::Alive { start } => start != tag.start,
            Liveness::Unknown => false,
        };
        if !stale {
            continue;
        }
        let path = entry.path();
        // `remove_dir_all` removes symlinks inside without following them, and a folder swapped
        // for a symlink since `file_type` is unlinked, not followed.
        match std::fs::remove_dir_all(&path) {
            Ok(()) => {
                tracing::debug!("removed the stale spill folder {}", path.display());
                removed += 1;
            }
            // Another host opening at the same moment got there first.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!("removing the stale spill folder {}: {e}", path.display()),
        }
    }
    removed
}

/// A non-empty run of ASCII digits as a number (`str::parse` would also take a leading `+`).
fn parse_digits(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_time_is_field_22_even_with_parens_in_the_name() {
        let fields: Vec<String> = (3..=52).map(|n| n.to_string()).collect();
        let stat = format!("1234 (a) (b c) {}\n", fields.join(" "));
        assert_eq!(start_time(&stat), Some(22));
        assert_eq!(start_time("1234 (short) S 1 2"), None);
        assert_eq!(start_time("no parens at all"), None);
    }

    #[test]
    fn current_matches_this_process() {
        let tag = ProcessTag::current().unwrap();
        assert_eq!(tag.pid, std::process::id());
        assert_eq!(proc_liveness(tag.pid), Liveness::Alive { start: tag.start });
    }

    #[test]
    fn folder_names_parse_strictly() {
        let tag = ProcessTag { pid: 42, start: 7 };
        assert_eq!(tag.folder_name(), "spill-42-7");
        assert_eq!(ProcessTag::from_folder_name(OsStr::new("spill-42-7")), Some(tag));
        for name in [
            "spill-42",
            "spill-42-",
            "spill--7",
            "spill-+42-7",
            "spill-42-+7",
            "spill-42-7-1",
            "spill-42-7x",
            "Spill-42-7",
            "xspill-42-7",
            "spill-99999999999-7",
        ] {
            assert_eq!(ProcessTag::from_folder_name(OsStr::new(name)), None, "{name}");
        }
    }
}
