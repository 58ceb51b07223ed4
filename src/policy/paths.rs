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
//! The policy itself touches no file system: the resolver is its only window on one (the
//! host's is `host::resolve::HostFs`).

use std::path::{Component, Path, PathBuf};

use unicode_normalization::UnicodeNormalization;

/// Resolves symlinks: the host's view of the file system, passed into the policy.
pub trait Resolve: Send + Sync {
    /// `path` (absolute, lexically normal) with every symlink of its longest existing prefix
    /// resolved and the rest appended; `path` itself when nothing of it exists.
    ///
    /// # Errors
    /// Why it cannot be resolved (more symlinks to follow than a kernel would: a loop).
    fn resolve(&self, path: &Path) -> Result<PathBuf, String>;
}

/// Resolves nothing: the lexical checks alone (for tests, or a host that cannot see the
/// server's file system).
#[derive(Debug, Clone, Copy, Default)]
pub struct Lexical;

impl Resolve for Lexical {
    fn resolve(&self, path: &Path) -> Result<PathBuf, String> {
        Ok(path.to_path_buf())
    }
}

/// Characters that read as `/` to a server that maps look-alikes (NFKC leaves these alone),
/// and `\`, which NFKC makes of a fullwidth `＼` and a URL parser reads as `/`.
const SLASH_LOOKALIKES: [char; 7] =
    ['\u{2215}', '\u{2044}', '\u{29F8}', '\u{2571}', '\u{FF0F}', '\u{1735}', '\\'];

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

/// Whether `text` is a `file:` URL (the scheme in any case).
pub fn is_file_url(text: &str) -> bool {
    text.get(..5).is_some_and(|s| s.eq_ignore_ascii_case("file:"))
}

/// The path of a `file:` URL as a URL parser reads it, or why it is refused (another host, a
/// query or fragment, which a parser would drop and this check would not).
fn file_url_path(text: &str) -> Result<String, String> {
    let url =
        url::Url::parse(text).map_err(|e| format!("{text:?} is not a usable file URL: {e}"))?;
    if url.host_str().is_some_and(|h| !h.is_empty() && h != "localhost") {
        return Err(format!("{text:?} names a file on another host"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!("{text:?} has a query or fragment, which a file URL must not"));
    }
    Ok(percent_encoding::percent_decode_str(url.path()).decode_utf8_lossy().into_owned())
}

/// The readings of `text` a server might make (see the module docs), deduplicated.
fn readings(text: &str) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = vec![text.to_owned()];
    let push = |s: String, out: &mut Vec<String>| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    if is_file_url(text) {
        push(file_url_path(text)?, &mut out);
        // The text after the scheme, as a naive reader would take it.
        let rest = &text[5..];
        let rest = rest.strip_prefix("//").unwrap_or(rest);
        push(rest.strip_prefix("localhost").unwrap_or(rest).to_owned(), &mut out);
        out.remove(0);
    }
    for s in out.clone() {
        // A WHATWG URL parser (Node's), and Windows-minded code, read `\` as `/`.
        if s.contains('\\') {
            push(s.replace('\\', "/"), &mut out);
        }
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
    Ok(out)
}

/// The roots paths are confined to: as configured (lexically normal) and resolved (their
/// symlinks followed), so a path written through a symlinked root is accepted, and one whose
/// resolution leaves every resolved root is not. `None`: no confinement.
#[derive(Debug, Clone, Default)]
pub struct Roots {
    lexical: Vec<PathBuf>,
    resolved: Vec<PathBuf>,
    /// Where the server resolves relative paths, when known.
    cwd: Option<PathBuf>,
}

impl Roots {
    /// `roots` (each made absolute and normal), resolved through `resolver`; `cwd` is where
    /// the server resolves relative paths (checked too, besides the first root).
    pub fn new(roots: &[PathBuf], cwd: Option<PathBuf>, resolver: &dyn Resolve) -> Roots {
        let lexical: Vec<PathBuf> = roots.iter().map(|r| normalise(r)).collect();
        // A root that cannot be resolved (a loop) is kept as written: nothing resolves into it.
        let resolved =
            lexical.iter().map(|r| resolver.resolve(r).unwrap_or_else(|_| r.clone())).collect();
        Roots { lexical, resolved, cwd }
    }

    /// The roots, as configured.
    pub fn paths(&self) -> &[PathBuf] {
        &self.lexical
    }

    fn beneath_lexical(&self, p: &Path) -> bool {
        self.lexical.iter().chain(&self.resolved).any(|r| p.starts_with(r))
    }

    fn beneath_resolved(&self, p: &Path) -> bool {
        self.resolved.iter().any(|r| p.starts_with(r))
    }
}

/// Why a path argument is refused, or `None` when it stays beneath a root. With no roots at
/// all there is no confinement; an empty list of roots allows no path.
pub fn outside_roots(text: &str, roots: Option<&Roots>, resolver: &dyn Resolve) -> Option<String> {
    let roots = roots?;
    let allowed: Vec<String> = roots.lexical.iter().map(|r| r.display().to_string()).collect();
    if roots.lexical.is_empty() {
        return Some(format!("the path {text:?} is refused: the policy allows no roots"));
    }
    if text.contains('\0') {
        return Some(format!("the path {text:?} holds a NUL byte"));
    }
    if text.starts_with('~') {
        return Some(format!(
            "the path {text:?} is relative to a home folder, which cannot be confined: give an absolute path under {}",
            allowed.join(", ")
        ));
    }
    let readings = match readings(text) {
        Ok(r) => r,
        Err(why) => return Some(why),
    };
    for reading in readings {
        let bases: Vec<PathBuf> = if Path::new(&reading).is_absolute() {
            vec![PathBuf::from(&reading)]
        } else {
            // The server resolves it against its own working directory: both must hold.
            std::iter::once(&roots.lexical[0]).chain(&roots.cwd).map(|b| b.join(&reading)).collect()
        };
        for path in bases {
            let lexical = normalise(&path);
            let real = match resolver.resolve(&lexical) {
                Ok(real) => real,
                Err(why) => return Some(format!("the path {text:?} cannot be confined: {why}")),
            };
            if !roots.beneath_lexical(&lexical) || !roots.beneath_resolved(&real) {
                let shown = if real == lexical {
                    format!("{}", lexical.display())
                } else {
                    format!("{} (which resolves to {})", lexical.display(), real.display())
                };
                let read =
                    if reading == text { String::new() } else { format!(", read as {reading:?},") };
                return Some(format!(
                    "the path {text:?}{read} is {shown}, outside the allowed roots ({})",
                    allowed.join(", ")
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Links(Vec<(PathBuf, PathBuf)>);
    impl Resolve for Links {
        fn resolve(&self, path: &Path) -> Result<PathBuf, String> {
            for (link, target) in &self.0 {
                if let Ok(rest) = path.strip_prefix(link) {
                    return Ok(normalise(&target.join(rest)));
                }
            }
            Ok(path.to_path_buf())
        }
    }

    fn roots() -> Roots {
        Roots::new(&[PathBuf::from("/srv/project"), PathBuf::from("/tmp/scratch")], None, &Lexical)
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
            assert_eq!(outside_roots(p, Some(&roots()), &Lexical), None, "{p}");
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
            "file:///etc/passwd?/../../srv/project/x",
            "file:///etc/passwd#/../../srv/project/x",
            "FILE:///etc/passwd",
            "file:/etc/passwd",
            "/srv/project/..\\..\\etc/passwd",
            "~/.ssh/id_rsa",
        ];
        for p in bad {
            assert!(outside_roots(p, Some(&roots()), &Lexical).is_some(), "{p:?} was allowed");
        }
    }

    #[test]
    fn a_symlink_inside_a_root_that_points_out_is_refused() {
        let links = Links(vec![(PathBuf::from("/srv/project/link"), PathBuf::from("/etc"))]);
        let why = outside_roots("/srv/project/link/shadow", Some(&roots()), &links).unwrap();
        assert!(why.contains("resolves to /etc/shadow"), "{why}");
        assert_eq!(outside_roots("/srv/project/other", Some(&roots()), &links), None);
    }

    #[test]
    fn relative_paths_are_checked_against_the_servers_directory_too() {
        let roots =
            Roots::new(&[PathBuf::from("/srv/project")], Some(PathBuf::from("/home/u")), &Lexical);
        assert!(outside_roots(".ssh/id_rsa", Some(&roots), &Lexical).is_some());
        let inside = Roots::new(
            &[PathBuf::from("/srv/project")],
            Some(PathBuf::from("/srv/project")),
            &Lexical,
        );
        assert_eq!(outside_roots("notes/a.txt", Some(&inside), &Lexical), None);
    }

    #[test]
    fn no_roots_no_confinement() {
        assert_eq!(outside_roots("/etc/passwd", None, &Lexical), None);
        let none = Roots::new(&[], None, &Lexical);
        assert!(
            outside_roots("/srv/project/a", Some(&none), &Lexical).is_some(),
            "no root allowed"
        );
    }
}
