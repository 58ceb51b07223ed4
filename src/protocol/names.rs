//! The gateway's namespace (here, below host/ and gateway/, which both name tools so): how a
//! backend's tool or prompt is named upstream, and the table that takes an upstream name back
//! to its backend (docs/gateway.md, "Names").
//!
//! Upstream names are `server` + separator + `tool`, kept within `^[A-Za-z0-9_-]{1,64}$` (what
//! the model APIs accept): a name with other characters, or longer than 64, is cut and ends
//! with `_` and eight hex digits of a SHA-256 over the original pair, so it stays unique. A
//! call is resolved by exact lookup in the [`NameTable`], never by splitting the string: a
//! tool named `a__b` on server `x` and a tool `b` on server `x__a` cannot be confused, because
//! server names containing the separator are refused when the config is loaded.

#![forbid(unsafe_code)]

use std::collections::HashMap;

/// Longest upstream name.
pub const MAX_NAME: usize = 64;

/// Hex digits of the hash that marks a shortened or sanitised name.
const HASH_DIGITS: usize = 8;

/// The default separator between server and tool.
pub const DEFAULT_SEPARATOR: &str = "__";

/// Whether `c` may appear in an upstream name.
fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Whether `name` is a valid upstream name as it is.
pub fn is_valid(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_NAME && name.chars().all(allowed)
}

/// Why a server name cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// The name contains the separator: `a__b` + `__` + `c` would read two ways.
    #[error(
        "server name {server:?} contains the separator {separator:?}: rename it in the config, or choose another separator (\"gateway\": {{\"separator\": ...}})"
    )]
    ContainsSeparator {
        /// The server.
        server: String,
        /// The separator.
        separator: String,
    },
    /// The name is the gateway's own.
    #[error("server name {0:?} is reserved for the gateway's own tools and resources: rename it")]
    Reserved(String),
    /// An empty name.
    #[error("a server name is empty")]
    Empty,
    /// The separator is unusable.
    #[error(
        "the separator {0:?} must be 1 to 8 characters of A-Z, a-z, 0-9, _ and -, not starting with a letter or digit"
    )]
    BadSeparator(String),
}

/// The name the gateway's own tools and resources live under (`ringmcp__status`).
pub const RESERVED: &str = "ringmcp";

/// Checks a server name against the separator.
///
/// # Errors
/// When the name is empty, reserved or contains the separator.
pub fn check_server(server: &str, separator: &str) -> Result<(), NameError> {
    if server.is_empty() {
        return Err(NameError::Empty);
    }
    if server == RESERVED {
        return Err(NameError::Reserved(server.into()));
    }
    if server.contains(separator) {
        return Err(NameError::ContainsSeparator {
            server: server.into(),
            separator: separator.into(),
        });
    }
    Ok(())
}

/// Checks a separator: short, in the name alphabet, and not starting with a letter or digit
/// (so that it cannot run into the server name).
///
/// # Errors
/// [`NameError::BadSeparator`].
pub fn check_separator(separator: &str) -> Result<(), NameError> {
    let ok = (1..=8).contains(&separator.len())
        && separator.chars().all(allowed)
        && !separator.starts_with(|c: char| c.is_ascii_alphanumeric());
    if ok { Ok(()) } else { Err(NameError::BadSeparator(separator.into())) }
}

/// The upstream name of `server`'s item `name` (`None` prefix: the name alone, as
/// `--no-prefix` keeps it, still made valid).
pub fn upstream_name(prefix: Option<(&str, &str)>, name: &str) -> String {
    let joined = match prefix {
        Some((server, separator)) => format!("{server}{separator}{name}"),
        None => name.to_owned(),
    };
    if is_valid(&joined) {
        return joined;
    }
    marked(&joined, prefix.map_or("", |p| p.0), name)
}

/// Whether `upstream` can be a name of one of `server`'s items (its prefix, as
/// [`upstream_name`] makes it, starts the name): a cheap filter before the exact lookup.
pub fn may_be_from(upstream: &str, server: &str, separator: &str) -> bool {
    let prefix: String =
        format!("{server}{separator}").chars().map(|c| if allowed(c) { c } else { '_' }).collect();
    let kept = MAX_NAME - HASH_DIGITS - 1;
    upstream.starts_with(&prefix)
        || (upstream.len() == MAX_NAME
            && upstream.get(..kept).is_some_and(|u| prefix.starts_with(u)))
}

/// `joined` made valid: other characters become `_`, cut to leave room for `_` and the hash.
fn marked(joined: &str, server: &str, name: &str) -> String {
    let keep = MAX_NAME - HASH_DIGITS - 1;
    let mut out: String = joined.chars().map(|c| if allowed(c) { c } else { '_' }).collect();
    if out.len() > keep {
        out.truncate(keep); // ASCII only by now: any index is a boundary
    }
    out.push('_');
    out.push_str(&hash_hex(server, name)[..HASH_DIGITS]);
    out
}

fn hash_hex(server: &str, name: &str) -> String {
    let mut input = Vec::with_capacity(server.len() + name.len() + 1);
    input.extend_from_slice(server.as_bytes());
    input.push(0);
    input.extend_from_slice(name.as_bytes());
    let digest = ring::digest::digest(&ring::digest::SHA256, &input);
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Where an upstream name leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The backend's index in the gateway's list.
    pub backend: usize,
    /// The item's name on that backend.
    pub name: String,
}

/// Upstream names → backend items, built from every backend's list in one pass.
#[derive(Debug, Default, Clone)]
pub struct NameTable {
    by_name: HashMap<String, Target>,
    /// Upstream names in listing order (backends in config order, each in its own order).
    order: Vec<String>,
}

impl NameTable {
    /// An empty table.
    pub fn new() -> Self {
        NameTable::default()
    }

    /// Adds `backend`'s item `name`; returns the upstream name, or `None` when no unique name
    /// could be made (a backend listing the same name twice).
    pub fn insert(
        &mut self,
        prefix: Option<(&str, &str)>,
        backend: usize,
        name: &str,
    ) -> Option<String> {
        let target = Target { backend, name: name.to_owned() };
        let mut upstream = upstream_name(prefix, name);
        if let Some(existing) = self.by_name.get(&upstream) {
            if *existing == target {
                return None; // listed twice
            }
            // A plain name that a marked one happens to equal: mark this one too.
            upstream = marked(&upstream, prefix.map_or("", |p| p.0), name);
            if self.by_name.contains_key(&upstream) {
                return None;
            }
        }
        self.by_name.insert(upstream.clone(), target);
        self.order.push(upstream.clone());
        Some(upstream)
    }

    /// The backend item an upstream name stands for.
    pub fn get(&self, upstream: &str) -> Option<&Target> {
        self.by_name.get(upstream)
    }

    /// The upstream names, in listing order.
    pub fn names(&self) -> &[String] {
        &self.order
    }

    /// How many names.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEP: &str = DEFAULT_SEPARATOR;

    #[test]
    fn plain_names_are_joined() {
        assert_eq!(upstream_name(Some(("fs", SEP)), "read_file"), "fs__read_file");
        assert_eq!(upstream_name(None, "read_file"), "read_file");
    }

    #[test]
    fn long_or_odd_names_are_cut_and_marked_and_stay_unique() {
        let long = "x".repeat(80);
        let a = upstream_name(Some(("server", SEP)), &long);
        let b = upstream_name(Some(("server", SEP)), &format!("{long}y"));
        assert_eq!(a.len(), MAX_NAME);
        assert!(is_valid(&a) && is_valid(&b));
        assert_ne!(a, b);
        let dotted = upstream_name(Some(("gh", SEP)), "repo.list");
        assert!(is_valid(&dotted) && dotted.starts_with("gh__repo_list_"), "{dotted}");
        // The marked form of `repo.list` does not collide with a tool really named `repo_list`.
        assert_ne!(dotted, upstream_name(Some(("gh", SEP)), "repo_list"));
        let unicode = upstream_name(Some(("s", SEP)), "créer");
        assert!(is_valid(&unicode), "{unicode}");
    }

    #[test]
    fn the_table_resolves_by_exact_name_never_by_splitting() {
        let mut t = NameTable::new();
        // Server "x" with tool "a__b" and server "x__a"'s tool "b" would both read "x__a__b";
        // the second server is refused at load, so the first is the only reading.
        assert!(check_server("x__a", SEP).is_err());
        let up = t.insert(Some(("x", SEP)), 0, "a__b").unwrap();
        assert_eq!(up, "x__a__b");
        assert_eq!(t.get("x__a__b"), Some(&Target { backend: 0, name: "a__b".into() }));
        assert_eq!(t.get("x__a"), None);
        assert_eq!(t.get("a__b"), None);
    }

    #[test]
    fn duplicates_are_dropped_and_collisions_marked() {
        let mut t = NameTable::new();
        assert!(t.insert(Some(("s", SEP)), 0, "t").is_some());
        assert_eq!(t.insert(Some(("s", SEP)), 0, "t"), None);
        // A tool whose plain name equals another's marked name gets marked as well.
        let marked = upstream_name(Some(("s", SEP)), "a.b");
        let plain_tool = marked.strip_prefix("s__").unwrap().to_owned();
        let mut t = NameTable::new();
        let first = t.insert(Some(("s", SEP)), 0, "a.b").unwrap();
        let second = t.insert(Some(("s", SEP)), 0, &plain_tool).unwrap();
        assert_ne!(first, second);
        assert!(is_valid(&second));
        assert_eq!(t.get(&second).unwrap().name, plain_tool);
        assert_eq!(t.names(), [first, second]);
    }

    #[test]
    fn candidates_are_found_by_prefix() {
        assert!(may_be_from("fs__read_file", "fs", SEP));
        assert!(!may_be_from("fs__read_file", "f", SEP));
        let long_server = "s".repeat(70);
        let up = upstream_name(Some((&long_server, SEP)), "t");
        assert!(may_be_from(&up, &long_server, SEP));
        assert!(may_be_from(&upstream_name(Some(("my.srv", SEP)), "t"), "my.srv", SEP));
    }

    #[test]
    fn server_names_and_separators_are_checked() {
        assert!(check_server("github", SEP).is_ok());
        assert_eq!(check_server("ringmcp", SEP), Err(NameError::Reserved("ringmcp".into())));
        assert_eq!(check_server("", SEP), Err(NameError::Empty));
        assert!(check_separator("__").is_ok());
        assert!(check_separator("-").is_ok());
        assert!(check_separator("x").is_err());
        assert!(check_separator(".").is_err());
        assert!(check_separator("").is_err());
        assert!(check_server("my-server", "-").is_err());
    }
}
