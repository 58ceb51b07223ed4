//! Package runners (`npx`, `uvx`, `pipx run`, `bunx`, `pnpm dlx`, `yarn dlx`): commands that
//! download the server from a registry when they start. In a sandbox their cache is empty
//! (`HOME` is the sandbox's own `/tmp`), so without the registry among the allowed hosts they
//! cannot start; the host says so at once instead of waiting for the runner's retries.

use std::ffi::OsStr;
use std::path::Path;

use crate::policy::egress::{Dest, Matcher, Network, Verdict};

/// The memory limit of a server started by a package runner when its config sets none.
pub const RUNNER_MEMORY: u64 = 1 << 30;
/// The size of its `/tmp` (and of each cache folder) when its config sets none.
pub const RUNNER_TMP: u64 = 512 << 20;

/// A recognised package runner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runner {
    /// The runner as typed (`npx`, `uvx`, `pipx run`, …).
    pub name: &'static str,
    /// The registry preset it needs (`npm`, `pypi`).
    pub preset: &'static str,
    /// The registry's host.
    pub registry: &'static str,
    /// The package it runs, when it can be told from the arguments.
    pub package: Option<String>,
    /// How to install the package instead.
    pub install: &'static str,
}

impl Runner {
    /// Recognises `program args`.
    pub fn detect(program: &OsStr, args: &[impl AsRef<OsStr>]) -> Option<Runner> {
        let base = Path::new(program).file_name()?.to_str()?;
        let words: Vec<&str> = args.iter().filter_map(|a| a.as_ref().to_str()).collect();
        let (name, preset, registry, install, rest): (_, _, _, _, &[&str]) =
            match (base, words.first().copied()) {
                ("npx", _) => ("npx", "npm", "registry.npmjs.org", "npm install -g", &words[..]),
                ("bunx", _) => ("bunx", "npm", "registry.npmjs.org", "npm install -g", &words[..]),
                ("pnpm", Some("dlx")) => {
                    ("pnpm dlx", "npm", "registry.npmjs.org", "npm install -g", &words[1..])
                }
                ("yarn", Some("dlx")) => {
                    ("yarn dlx", "npm", "registry.npmjs.org", "npm install -g", &words[1..])
                }
                ("uvx", _) => ("uvx", "pypi", "pypi.org", "uv tool install", &words[..]),
                ("uv", Some("tool")) if words.get(1) == Some(&"run") => {
                    ("uv tool run", "pypi", "pypi.org", "uv tool install", &words[2..])
                }
                ("pipx", Some("run")) => {
                    ("pipx run", "pypi", "pypi.org", "pipx install", &words[1..])
                }
                _ => return None,
            };
        // The first word that is not an option (options with a value: --from, --package, -p).
        let mut package = None;
        let mut skip_value = false;
        for w in rest {
            if skip_value {
                skip_value = false;
                continue;
            }
            if matches!(*w, "--from" | "--package" | "-p" | "--with" | "--python") {
                skip_value = true;
                continue;
            }
            if !w.starts_with('-') {
                package = Some((*w).to_owned());
                break;
            }
        }
        Some(Runner { name, preset, registry, package, install })
    }

    /// Whether `network` lets the runner reach its registry.
    pub fn reachable(&self, network: &Network) -> bool {
        network.policy().is_some_and(|p| {
            matches!(
                Matcher::new(p).judge(&Dest::Name(self.registry.into()), 443),
                Verdict::Allow { .. }
            )
        })
    }

    /// Where the runner keeps what it downloads, relative to `HOME` (the sandbox's `/tmp`):
    /// these folders are the only place in a sandbox where files written at run time may be
    /// executed, because the code the runner downloads *is* the server.
    pub fn cache_dirs(&self) -> &'static [&'static str] {
        match self.name {
            "npx" => &[".npm"],
            "bunx" => &[".bun"],
            "pnpm dlx" => &[".cache/pnpm", ".local/share/pnpm"],
            "yarn dlx" => &[".yarn", ".cache/yarn"],
            "pipx run" => &[".local/pipx", ".cache/pipx"],
            _ => &[".cache/uv", ".local/share/uv"],
        }
    }

    /// What to do, in words.
    pub fn advice(&self) -> String {
        let package = self.package.as_deref().unwrap_or("the package");
        format!(
            "`{}` downloads {package} from {} when it starts, and the sandbox cannot reach it: allow the registry with \"sandbox\": {{\"network\": {{\"allow\": [\"@{}\"]}}}} (or --allow-host @{}), or install the package ({} {package}) and point \"command\" at the installed program",
            self.name, self.registry, self.preset, self.preset, self.install
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runners_and_their_packages() {
        let r = Runner::detect(
            OsStr::new("/usr/bin/npx"),
            &["-y", "@modelcontextprotocol/server-github"],
        )
        .unwrap();
        assert_eq!(
            (r.name, r.preset, r.package.as_deref()),
            ("npx", "npm", Some("@modelcontextprotocol/server-github"))
        );
        let u = Runner::detect(
            OsStr::new("uvx"),
            &["--from", "mcp-server-fetch==1.0", "mcp-server-fetch"],
        )
        .unwrap();
        assert_eq!((u.name, u.package.as_deref()), ("uvx", Some("mcp-server-fetch")));
        let p = Runner::detect(OsStr::new("pipx"), &["run", "mcp-server-time"]).unwrap();
        assert_eq!((p.name, p.package.as_deref()), ("pipx run", Some("mcp-server-time")));
        assert!(Runner::detect(OsStr::new("pipx"), &["install", "x"]).is_none());
        assert_eq!(Runner::detect(OsStr::new("pnpm"), &["dlx", "x"]).unwrap().name, "pnpm dlx");
        assert!(Runner::detect(OsStr::new("node"), &["server.js"]).is_none());
        assert!(!r.reachable(&Network::Off));
        assert!(!r.reachable(&Network::allow(["api.github.com"]).unwrap()));
        assert!(r.reachable(&Network::allow(["@npm"]).unwrap()));
        assert!(r.reachable(&Network::any()));
        assert!(!u.reachable(&Network::allow(["@npm"]).unwrap()));
        assert_eq!(r.cache_dirs(), [".npm"]);
        assert_eq!(u.cache_dirs(), [".cache/uv", ".local/share/uv"]);
        let advice = r.advice();
        assert!(
            advice.contains("\"@npm\"")
                && advice.contains("npm install -g @modelcontextprotocol/server-github"),
            "{advice}"
        );
    }
}
