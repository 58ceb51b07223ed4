//! Path confinement: a path argument must stay beneath one of the server's roots, however it is
//! written. Every reading a server might make of the text is checked, and the call is denied
//! when any of them leaves every root:
//!
//! - the text as given, made absolute against the first root when relative;
//! - a `file://` URI's path, percent-decoded (and the text percent-decoded, for a server that
//!   decodes it);
//! - its Unicode compatibility form (NFKC), and slash look-alikes read as `/`, for a server that
//!   normalises (`／etc／passwd`, `..∕..∕etc`);
//!
//! each normalised lexically (`.` and `..`, as `openat2(RESOLVE_BENEATH)` would refuse to climb)
//! and then resolved by a [`Resolve`] the host supplies (every symlink of the part that exists),
//! so a symlink planted inside a root that points out is caught. A NUL byte is refused outright.
//! The policy itself touches no file system: the resolver is its only window on one.

use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

use unicode_normalization::UnicodeNormalization;

/// Resolves symlinks: the host's view of the file system, passed into the policy.
pub trait Resolve: Send + Sync {
    /// `path` (absolute, lexically normal) with every symlink of its longest existing prefix
    /// resolved and the rest appended; `path` itself when nothing of it exists.
    fn resolve(&self, path: &Path) -> PathBuf;
}

/// Resolves nothing: the lexical checks alone (for tests, or a host that cannot see the
/// server's file system).
#[derive(Debug, Clone, Copy, Default)]
pub struct Lexical;

impl Resolve for Lexical {
    fn resolve(&self, path: &Path) -> PathBuf {
        path.to_path_buf()
    }
}

/// The real file system of the host (where the server's files are, for an unsandboxed server
/// or one whose binds show the host's paths).
#[derive(Debug, Clone, Copy, Default)]
pub struct HostFs;

impl Resolve for HostFs {
    fn resolve(&self, path: &Path) -> PathBuf {
        let mut existing = path.to_path_buf();
        let mut rest = Vec::new();
        loop {
            if let Ok(real) = std::fs::canonicalize(&existing) {
                let mut out = real;
                for part in rest.iter().rev() {
                    out.push(part);
                }
                return normalise(&out);
            }
            match (existing.file_name().map(ToOwned::to_owned), existing.parent()) {
                (Some(name), Some(parent)) => {
                    rest.push(name);
                    existing = parent.to_path_buf();
                }
                _ => return path.to_path_buf(),
            }
        }
    }
}

/// Characters that read as `/` to a server that maps look-alikes (NFKC leaves these alone).
const SLASH_LOOKALIKES: [char; 6] =
    ['\u{2215}', '\u{2044}', '\u{29F8}', '\u{2571}', '\u{FF0F}', '\u{1735}'];

/// `path` lexically normal: `.` dropped, `..` taking off one component (never above `/`).
pub fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::RootDir | Component::Prefix(_) | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(part) => out.push(part),
        }
    }
    out
}

/// The readings of `text` a server might make (see the module docs), deduplicated.
fn readings(text: &str) -> Vec<String> {
    let mut out: Vec<String> = vec![text.to_owned()];
    let push = |s: String, out: &mut Vec<String>| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    if let Some(rest) = text.strip_prefix("file://") {
        // `file:///p`, `file://localhost/p`; another host is not a local path.
        let path = rest.strip_prefix("localhost").unwrap_or(rest);
        push(path.to_owned(), &mut out);
    }
    for s in out.clone() {
        if s.contains('%') {
            let decoded = percent_encoding::percent_decode_str(&s).decode_utf8_lossy().into_owned();
            push(decoded, &mut out);
        }
    }
    for s in out.clone() {
        let nfkc: String = s.nfkc().collect();
        let slashes: String =
            nfkc.chars().map(|c| if SLASH_LOOKALIKES.contains(&c) { '/' } else { c }).collect();
        push(nfkc, &mut out);
        push(slashes, &mut out);
    }
    out
}

/// Why a path argument is refused, or `None` when it stays beneath a root. `roots` are
/// resolved already; no roots means no confinement.
pub fn outside_roots(text: &str, roots: &[PathBuf], resolver: &dyn Resolve) -> Option<String> {
    if roots.is_empty() {
        return None;
    }
    if text.contains('\0') {
        return Some(format!("the path {text:?} holds a NUL byte"));
    }
    if text.starts_with("file://")
        && !text.starts_with("file:///")
        && !text.starts_with("file://localhost/")
    {
        return Some(format!("{text:?} names a file on another host"));
    }
    for reading in readings(text) {
        let path: Cow<'_, Path> = if Path::new(&reading).is_absolute() {
            Cow::Borrowed(Path::new(&reading))
        } else {
            Cow::Owned(roots[0].join(&reading))
        };
        let lexical = normalise(&path);
        let real = resolver.resolve(&lexical);
        let beneath = |p: &Path| roots.iter().any(|r| p.starts_with(r));
        if !beneath(&lexical) || !beneath(&real) {
            let shown = if real == lexical {
                format!("{}", lexical.display())
            } else {
                format!("{} (which resolves to {})", lexical.display(), real.display())
            };
            let read =
                if reading == text { String::new() } else { format!(", read as {reading:?},") };
            let allowed: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
            return Some(format!(
                "the path {text:?}{read} is {shown}, outside the allowed roots ({})",
                allowed.join(", ")
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Links(Vec<(PathBuf, PathBuf)>);
    impl Resolve for Links {
        fn resolve(&self, path: &Path) -> PathBuf {
            for (link, target) in &self.0 {
                if let Ok(rest) = path.strip_prefix(link) {
                    return normalise(&target.join(rest));
                }
            }
            path.to_path_buf()
        }
    }

    fn roots() -> Vec<PathBuf> {
        vec![PathBuf::from("/srv/project"), PathBuf::from("/tmp/scratch")]
    }

    #[test]
    fn inside_is_allowed_and_every_escape_is_refused() {
        let ok = [
            "/srv/project/a.txt",
            "a.txt",
            "./sub/../b",
            "/tmp/scratch",
            "file:///srv/project/x",
            "file://localhost/srv/project/x",
            "/srv/project/%41",
            "notes/日本.txt",
        ];
        for p in ok {
            assert_eq!(outside_roots(p, &roots(), &Lexical), None, "{p}");
        }
        let bad = [
            "/etc/passwd",
            "../../etc/passwd",
            "/srv/project/../../etc/passwd",
            "/srv/projectx/a",
            "file:///etc/passwd",
            "file://evil.example/srv/project/a",
            "/srv/project/%2e%2e/%2e%2e/etc/passwd",
            "%2E%2E%2F%2E%2E%2Fetc",
            "/srv/project/a\0/etc",
            "..／..／etc／passwd",
            "..∕..∕..∕etc",
            "/srv/project/\u{FF0E}\u{FF0E}/\u{FF0E}\u{FF0E}/etc",
            "/srv/project/\u{2025}/\u{2025}/etc",
        ];
        for p in bad {
            assert!(outside_roots(p, &roots(), &Lexical).is_some(), "{p:?} was allowed");
        }
    }

    #[test]
    fn a_symlink_inside_a_root_that_points_out_is_refused() {
        let links = Links(vec![(PathBuf::from("/srv/project/link"), PathBuf::from("/etc"))]);
        let why = outside_roots("/srv/project/link/shadow", &roots(), &links).unwrap();
        assert!(why.contains("resolves to /etc/shadow"), "{why}");
        assert_eq!(outside_roots("/srv/project/other", &roots(), &links), None);
    }

    #[test]
    fn no_roots_no_confinement() {
        assert_eq!(outside_roots("/etc/passwd", &[], &Lexical), None);
    }

    #[test]
    fn the_host_resolver_follows_real_symlinks() {
        let dir = std::env::temp_dir().join(format!("ringmcp-paths-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("root")).unwrap();
        std::os::unix::fs::symlink("/etc", dir.join("root/out")).unwrap();
        let root = std::fs::canonicalize(dir.join("root")).unwrap();
        let roots = vec![root.clone()];
        let escape = root.join("out/passwd");
        assert!(outside_roots(escape.to_str().unwrap(), &roots, &HostFs).is_some());
        let new_file = root.join("new/deeper/file.txt");
        assert_eq!(outside_roots(new_file.to_str().unwrap(), &roots, &HostFs), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
