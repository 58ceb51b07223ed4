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

impl Resolve for HostFs {
    /// Walks the path one component at a time, following every symlink by its text, so a
    /// symlink whose target does not exist yet (which a write would create) is followed too.
    fn resolve(&self, path: &Path) -> PathBuf {
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
                Ok(m) if m.file_type().is_symlink() && hops < 40 => {
                    hops += 1;
                    let Ok(target) = std::fs::read_link(&next) else { return normalise(&next) };
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
        out
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
}
