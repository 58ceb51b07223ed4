//! The host's side of path confinement: [`HostFs`] resolves a path argument's symlinks on the
//! host's file system for the sans-IO policy (`policy::paths`).

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use crate::policy::paths::{Resolve, normalise};

/// The real file system of the host (where the server's files are, for an unsandboxed server
/// or one whose binds show the host's paths).
#[derive(Debug, Clone, Copy, Default)]
pub struct HostFs;

/// The named and `..` components of `path` (the root and `.` dropped).
fn parts(path: &Path) -> impl DoubleEndedIterator<Item = OsString> + '_ {
    path.components().filter_map(|c| match c {
        Component::Normal(p) => Some(p.to_owned()),
        Component::ParentDir => Some("..".into()),
        _ => None,
    })
}

/// Symlinks one lookup follows at most, as Linux does (`MAXSYMLINKS`): past them the kernel
/// says `ELOOP`, and the policy refuses rather than guess what a server would do.
const MAX_HOPS: usize = 40;

impl Resolve for HostFs {
    /// Walks the path one component at a time, following every symlink by its text, so a
    /// symlink whose target does not exist yet (which a write would create) is followed too.
    fn resolve(&self, path: &Path) -> Result<PathBuf, String> {
        let mut todo: std::collections::VecDeque<OsString> = parts(path).collect();
        let mut out = PathBuf::from("/");
        let mut hops = 0;
        while let Some(part) = todo.pop_front() {
            if part == ".." {
                out.pop();
                continue;
            }
            let next = out.join(&part);
            match std::fs::symlink_metadata(&next) {
                Ok(m) if m.file_type().is_symlink() => {
                    hops += 1;
                    if hops > MAX_HOPS {
                        return Err(format!(
                            "{} has more than {MAX_HOPS} symbolic links to follow (a loop?)",
                            path.display()
                        ));
                    }
                    let Ok(target) = std::fs::read_link(&next) else {
                        return Ok(normalise(&next));
                    };
                    if target.is_absolute() {
                        out = PathBuf::from("/");
                    }
                    for p in parts(&target).rev() {
                        todo.push_front(p);
                    }
                }
                _ => out = next,
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::paths::{Roots, outside_roots};

    #[test]
    fn the_host_resolver_follows_real_symlinks() {
        let dir = std::env::temp_dir().join(format!("ringmcp-paths-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("root")).unwrap();
        std::os::unix::fs::symlink("/etc", dir.join("root/out")).unwrap();
        let root = std::fs::canonicalize(dir.join("root")).unwrap();
        let roots = Roots::new(std::slice::from_ref(&root), None, &HostFs);
        let escape = root.join("out/passwd");
        assert!(outside_roots(escape.to_str().unwrap(), Some(&roots), &HostFs).is_some());
        let new_file = root.join("new/deeper/file.txt");
        assert_eq!(outside_roots(new_file.to_str().unwrap(), Some(&roots), &HostFs), None);
        // A dangling symlink (its target not created yet) is followed by its text.
        std::os::unix::fs::symlink(dir.join("elsewhere/keys"), root.join("dangling")).unwrap();
        let dangling = root.join("dangling");
        assert!(outside_roots(dangling.to_str().unwrap(), Some(&roots), &HostFs).is_some());
        // A root given through a symlink accepts paths written through it.
        std::os::unix::fs::symlink(&root, dir.join("alias")).unwrap();
        let aliased = Roots::new(&[dir.join("alias")], None, &HostFs);
        let through = dir.join("alias/new.txt");
        assert_eq!(outside_roots(through.to_str().unwrap(), Some(&aliased), &HostFs), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A symlink loop, and a chain longer than a kernel follows whose end is outside, are
    /// refused (past 40 hops the last link used to be taken for a plain name inside the
    /// root); a chain of exactly 40 inside the root is followed to its end.
    #[test]
    fn symlink_loops_and_chains_past_forty_hops_are_refused() {
        let dir = std::env::temp_dir().join(format!("ringmcp-loops-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("root/inside")).unwrap();
        let root = std::fs::canonicalize(dir.join("root")).unwrap();
        let roots = Roots::new(std::slice::from_ref(&root), None, &HostFs);
        let check = |p: &Path| outside_roots(p.to_str().unwrap(), Some(&roots), &HostFs);
        std::os::unix::fs::symlink(root.join("b"), root.join("a")).unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("b")).unwrap();
        let looped = check(&root.join("a/file")).expect("a loop is refused");
        assert!(looped.contains("symbolic links") && looped.contains("loop"), "{looped}");
        // A chain l0 → l1 → … → l41, and l41 pointing out of the root: from l2, 40 links are
        // followed and the path is outside; from l1, 41 is one more than a kernel follows.
        std::os::unix::fs::symlink("/etc", root.join("l41")).unwrap();
        for i in (0..41).rev() {
            let link = root.join(format!("l{i}"));
            std::os::unix::fs::symlink(root.join(format!("l{}", i + 1)), link).unwrap();
        }
        let out = check(&root.join("l2/passwd")).expect("40 hops, then out");
        assert!(out.contains("outside") && out.contains("/etc/passwd"), "{out}");
        let long = check(&root.join("l1/passwd")).expect("41 hops");
        assert!(long.contains("more than 40 symbolic links"), "{long}");
        // l41 pointing inside: 40 hops are followed and allowed; 41 are refused, not guessed.
        std::fs::remove_file(root.join("l41")).unwrap();
        std::os::unix::fs::symlink(root.join("inside"), root.join("l41")).unwrap();
        assert_eq!(check(&root.join("l2/new.txt")), None);
        assert!(check(&root.join("l1/new.txt")).is_some());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
