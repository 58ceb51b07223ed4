//! Server specifications and the `mcpServers` configuration file (the format of Claude
//! Desktop, Cursor and VS Code: `{"mcpServers": {"name": {"command", "args", "env", "cwd"}}}`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::sandbox::{Launch, SandboxConfig};

/// How to start one server.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// The name used in errors, logs and events.
    pub name: String,
    /// Program, arguments, environment and working directory.
    pub launch: Launch,
    /// Deadline for this server's requests, if not the host's default.
    pub request_timeout: Option<Duration>,
    /// Largest request this server is sent, if not the host's default.
    pub max_request_bytes: Option<usize>,
    /// Set for a server reached over HTTP (then `launch` is unused).
    pub remote: Option<super::RemoteSpec>,
    /// How its revision is found, if not as the host says ([`HostBuilder::era`]).
    ///
    /// [`HostBuilder::era`]: super::HostBuilder::era
    pub era: Option<crate::protocol::Era>,
}

impl ServerSpec {
    /// A server named `name` that runs `program`, confined by the `standard` sandbox (see
    /// [`sandbox`](Self::sandbox) to change or turn it off).
    pub fn new(name: impl Into<String>, program: impl Into<OsString>) -> Self {
        ServerSpec {
            name: name.into(),
            launch: Launch {
                program: program.into(),
                sandbox: Some(SandboxConfig::standard()),
                ..Launch::default()
            },
            request_timeout: None,
            max_request_bytes: None,
            remote: None,
            era: None,
        }
    }

    /// What identifies "the same server" across starts (the era cache's key): the URL of an
    /// HTTP server, the program, arguments and working directory of a stdio one.
    pub fn identity(&self) -> String {
        match &self.remote {
            Some(remote) => format!("url {}", remote.url),
            None => {
                let l = &self.launch;
                format!("cmd {:?} {:?} {:?}", l.program, l.args, l.cwd)
            }
        }
    }

    /// Finds the revision this way instead of the host's ([`Era::Legacy`] to skip the
    /// 2026-07-28 probe, [`Era::Modern`] to refuse legacy servers).
    ///
    /// [`Era::Legacy`]: crate::protocol::Era::Legacy
    /// [`Era::Modern`]: crate::protocol::Era::Modern
    pub fn era(mut self, era: crate::protocol::Era) -> Self {
        self.era = Some(era);
        self
    }

    /// A server reached over Streamable HTTP (or legacy HTTP+SSE, detected) at `url`.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        let url = url.into();
        let mut spec = ServerSpec::new(name, url.clone()).sandbox(None);
        spec.remote = Some(super::RemoteSpec { url, headers: Vec::new(), oauth: None });
        spec
    }

    /// Authorizes with OAuth when the server answers 401 (only for [`http`](Self::http)
    /// servers): discovery, registration, the authorization-code flow with PKCE, and the
    /// token on every request after.
    pub fn oauth(mut self, config: crate::transport::oauth::OAuthConfig) -> Self {
        if let Some(remote) = &mut self.remote {
            remote.oauth = Some(config);
        }
        self
    }

    /// Adds a header to every HTTP request (e.g. `Authorization: Bearer …`); only for
    /// [`http`](Self::http) servers.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Some(remote) = &mut self.remote {
            remote.headers.push((name.into(), value.into()));
        }
        self
    }

    /// Adds one argument.
    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.launch.args.push(arg.into());
        self
    }

    /// Adds arguments.
    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, args: I) -> Self {
        self.launch.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable for the server (on top of the allowlisted host ones).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.launch.env.push((key.into(), value.into()));
        self
    }

    /// Sets the working directory.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.launch.cwd = Some(dir.into());
        self
    }

    /// Sets the largest request this server is sent (a larger one fails before sending with
    /// [`RequestError::RequestTooLarge`](crate::protocol::RequestError::RequestTooLarge)).
    pub fn max_request_bytes(mut self, bytes: usize) -> Self {
        self.max_request_bytes = Some(bytes);
        self
    }

    /// Confines the server in a sandbox (namespaces, read-only root, cgroup limits, seccomp,
    /// Landlock; see [`SandboxConfig`]), or runs it as a plain child process with `None`.
    pub fn sandbox(mut self, sandbox: Option<SandboxConfig>) -> Self {
        self.launch.sandbox = sandbox;
        self
    }

    /// Whether a sandbox was set for this server.
    pub fn sandboxed(&self) -> bool {
        self.launch.sandbox.as_ref().is_some_and(|s| s.profile != crate::sandbox::Profile::Off)
    }

    /// Sets the deadline for this server's requests.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = Some(timeout);
        self
    }
}

/// A configuration file could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// Reading the file failed.
    #[error("reading config {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid `mcpServers` JSON.
    #[error("parsing config {path}: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        source: serde_json::Error,
    },
    /// No server of that name.
    #[error("no server named {name:?} in the config (it has: {})", available.join(", "))]
    UnknownServer {
        /// The name asked for.
        name: String,
        /// The names present.
        available: Vec<String>,
    },
    /// The entry has no `command` (e.g. an HTTP `url` entry, not supported yet).
    #[error("server {0:?} has no \"command\" (remote \"url\" servers are not supported yet)")]
    NoCommand(String),
}

#[derive(Debug, Clone, Deserialize)]
struct Entry {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    /// The server's sandbox settings (absent: the host's default).
    sandbox: Option<SandboxConfig>,
    /// An HTTP server's endpoint.
    url: Option<String>,
    /// HTTP headers for it.
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// How its MCP revision is found: `"auto"`, `"legacy"` or `"modern"` (absent: the
    /// host's default).
    era: Option<crate::protocol::Era>,
    /// OAuth for an HTTP server (`{}` for dynamic registration and the defaults).
    oauth: Option<OAuthEntry>,
    /// Other keys (`url`, `type`, `disabled`, ...), kept for later layers.
    #[serde(flatten)]
    _other: BTreeMap<String, Value>,
}

/// The `oauth` object of an HTTP server's entry (every key optional).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct OAuthEntry {
    client_id: Option<String>,
    client_secret: Option<String>,
    client_metadata_url: Option<String>,
    redirect_uri: Option<String>,
}

impl OAuthEntry {
    /// The OAuth settings, with the headless authorizer (an application, or the CLI on a
    /// terminal, puts its own in).
    fn config(&self) -> crate::transport::oauth::OAuthConfig {
        use crate::transport::oauth::{Authorizer, OAuthConfig};
        let mut config = OAuthConfig::new(Authorizer::Headless);
        if let Some(id) = &self.client_id {
            config = config.client(id, self.client_secret.clone());
        }
        if let Some(url) = &self.client_metadata_url {
            config = config.client_metadata_url(url);
        }
        if let Some(uri) = &self.redirect_uri {
            config.redirect_uri = uri.clone();
        }
        config
    }
}

/// A parsed `mcpServers` configuration.
#[derive(Debug, Clone, Deserialize)]
pub struct Config {
    #[serde(rename = "mcpServers")]
    servers: BTreeMap<String, Entry>,
}

impl Config {
    /// Reads and parses a config file.
    ///
    /// # Errors
    /// [`ConfigError::Read`] or [`ConfigError::Parse`].
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read(path)
            .map_err(|source| ConfigError::Read { path: path.to_owned(), source })?;
        Config::parse(&text).map_err(|source| ConfigError::Parse { path: path.to_owned(), source })
    }

    /// Parses config JSON.
    ///
    /// # Errors
    /// When the JSON does not have the `mcpServers` shape.
    pub fn parse(json: &[u8]) -> Result<Config, serde_json::Error> {
        serde_json::from_slice(json)
    }

    /// The server names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.servers.keys().cloned().collect()
    }

    /// The spec of server `name`.
    ///
    /// # Errors
    /// [`ConfigError::UnknownServer`] or [`ConfigError::NoCommand`].
    pub fn server(&self, name: &str) -> Result<ServerSpec, ConfigError> {
        let entry = self.servers.get(name).ok_or_else(|| ConfigError::UnknownServer {
            name: name.to_owned(),
            available: self.names(),
        })?;
        if let Some(url) = &entry.url {
            let mut spec = ServerSpec::http(name, url);
            for (k, v) in &entry.headers {
                spec = spec.header(k, v);
            }
            spec.era = entry.era;
            if let Some(oauth) = &entry.oauth {
                spec = spec.oauth(oauth.config());
            }
            return Ok(spec);
        }
        let command =
            entry.command.as_ref().ok_or_else(|| ConfigError::NoCommand(name.to_owned()))?;
        let mut spec = ServerSpec::new(name, command).args(&entry.args);
        for (k, v) in &entry.env {
            spec = spec.env(k, v);
        }
        if let Some(cwd) = &entry.cwd {
            spec = spec.cwd(cwd);
        }
        if let Some(sandbox) = &entry.sandbox {
            spec = spec.sandbox(Some(sandbox.clone()));
        }
        spec.era = entry.era;
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_claude_desktop_format() {
        let cfg = Config::parse(
            br#"{"mcpServers": {
                "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
                       "env": {"DEBUG": "1"}, "cwd": "/"},
                "remote": {"url": "https://example.invalid/mcp", "era": "modern",
                           "oauth": {"clientId": "c1", "redirectUri": "http://127.0.0.1:9/cb"}}
            }, "otherTopLevel": true}"#,
        )
        .unwrap();
        assert_eq!(cfg.names(), ["fs", "remote"]);
        let remote = cfg.server("remote").unwrap();
        assert_eq!(remote.era, Some(crate::protocol::Era::Modern));
        let oauth = remote.remote.unwrap().oauth.unwrap();
        assert_eq!(oauth.client_id.as_deref(), Some("c1"));
        assert_eq!(oauth.redirect_uri, "http://127.0.0.1:9/cb");
        assert_eq!(cfg.server("fs").unwrap().era, None);
        let fs = cfg.server("fs").unwrap();
        assert_eq!(fs.launch.program, "npx");
        assert_eq!(fs.launch.args.len(), 3);
        assert_eq!(fs.launch.env, vec![("DEBUG".into(), "1".into())]);
        assert_eq!(fs.launch.cwd.as_deref(), Some(Path::new("/")));
        let remote = cfg.server("remote").unwrap();
        assert_eq!(remote.remote.unwrap().url, "https://example.invalid/mcp");
        assert!(fs.sandboxed(), "sandboxed by default");
        assert!(!fs.clone().sandbox(None).sandboxed());
        let boxed = Config::parse(
            br#"{"mcpServers": {"s": {"command": "x", "sandbox": {"profile": "strict", "memory": "128M"}}}}"#,
        )
        .unwrap()
        .server("s")
        .unwrap();
        let sb = boxed.launch.sandbox.clone().unwrap();
        assert_eq!((sb.profile, sb.memory_max()), (crate::sandbox::Profile::Strict, 128 << 20));
        assert!(
            Config::parse(br#"{"mcpServers": {"s": {"command": "x", "sandbox": {"nope": 1}}}}"#)
                .is_err()
        );
        let err = cfg.server("nope").unwrap_err();
        assert!(err.to_string().contains("fs, remote"), "{err}");
    }
}
