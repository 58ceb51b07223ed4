//! Server specifications and the `mcpServers` configuration file (the format of Claude
//! Desktop, Cursor and VS Code: `{"mcpServers": {"name": {"command", "args", "env", "cwd"}}}`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::sandbox::{Launch, SandboxConfig};

/// Where a server is and how it is reached.
#[derive(Debug, Clone)]
pub enum Endpoint {
    /// A process the host starts and speaks to over its stdio pipes.
    Stdio(Launch),
    /// A server reached over Streamable HTTP (or legacy HTTP+SSE, detected).
    Http(super::RemoteSpec),
}

/// How to start one server: [`new`](Self::new) for a command, [`http`](Self::http) for a URL.
///
/// A builder method that does not apply to the kind of server (`header` on a command, `arg`
/// on a URL, ...) is not ignored: [`Host::spawn`](super::Host::spawn) refuses the spec with
/// [`Error::InvalidArgument`](super::Error::InvalidArgument) naming it.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// The name used in errors, logs and events.
    pub name: String,
    /// The command to run, or the URL to reach.
    pub endpoint: Endpoint,
    /// Deadline for this server's requests, if not the host's default.
    pub request_timeout: Option<Duration>,
    /// Largest request this server is sent, if not the host's default.
    pub max_request_bytes: Option<usize>,
    /// How its revision is found, if not as the host says ([`HostBuilder::era`]).
    ///
    /// [`HostBuilder::era`]: super::HostBuilder::era
    pub era: Option<crate::protocol::Era>,
    /// The policy gate's rules for this server (its `"policy"` config), applied when the
    /// host has a policy ([`HostBuilder::policy`](super::HostBuilder::policy)).
    pub policy: Option<crate::policy::PolicyConfig>,
    /// What the server is for, in a few words (its config's `"description"`): how tool
    /// search names it to the model ([`route::find`](crate::route::find)).
    pub description: Option<String>,
    /// How it is restarted when it goes away (its config's `"restart"`; absent: it is not).
    pub restart: Option<super::RestartPolicy>,
    /// The first builder call that did not apply to this kind of server.
    misuse: Option<&'static str>,
}

impl ServerSpec {
    /// A server named `name` that runs `program`, confined by the `standard` sandbox (see
    /// [`sandbox`](Self::sandbox) to change or turn it off).
    pub fn new(name: impl Into<String>, program: impl Into<OsString>) -> Self {
        ServerSpec::with_endpoint(
            name,
            Endpoint::Stdio(Launch {
                program: program.into(),
                sandbox: Some(SandboxConfig::standard()),
                ..Launch::default()
            }),
        )
    }

    /// What the server is for, in a few words: how tool search names it to the model
    /// ([`HostRouter::find_tools_definition`](super::HostRouter::find_tools_definition)).
    #[must_use]
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.description = Some(text.into());
        self
    }

    /// A server reached over Streamable HTTP (or legacy HTTP+SSE, detected) at `url`.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        let remote = super::RemoteSpec { url: url.into(), headers: Vec::new(), oauth: None };
        ServerSpec::with_endpoint(name, Endpoint::Http(remote))
    }

    fn with_endpoint(name: impl Into<String>, endpoint: Endpoint) -> Self {
        ServerSpec {
            name: name.into(),
            endpoint,
            request_timeout: None,
            max_request_bytes: None,
            era: None,
            policy: None,
            description: None,
            restart: None,
            misuse: None,
        }
    }

    /// This server's policy rules (see [`PolicyConfig`](crate::policy::PolicyConfig)).
    pub fn policy(mut self, policy: crate::policy::PolicyConfig) -> Self {
        self.policy = Some(policy);
        self
    }

    /// The command line, for a server the host starts.
    pub fn launch(&self) -> Option<&Launch> {
        match &self.endpoint {
            Endpoint::Stdio(launch) => Some(launch),
            Endpoint::Http(_) => None,
        }
    }

    /// The endpoint, for a server reached over HTTP.
    pub fn remote(&self) -> Option<&super::RemoteSpec> {
        match &self.endpoint {
            Endpoint::Http(remote) => Some(remote),
            Endpoint::Stdio(_) => None,
        }
    }

    /// Why [`Host::spawn`](super::Host::spawn) must refuse this spec: a builder call that does
    /// not apply to its kind of server.
    pub(crate) fn misuse(&self) -> Option<String> {
        let (what, kind) = match &self.endpoint {
            Endpoint::Stdio(_) => (self.misuse?, "runs a command (ServerSpec::new)"),
            Endpoint::Http(_) => (self.misuse?, "is reached over HTTP (ServerSpec::http)"),
        };
        Some(format!("server {:?}: {what} does not apply to a server that {kind}", self.name))
    }

    /// Applies `f` to the launch of a stdio server; records `what` as misuse otherwise.
    fn stdio(mut self, what: &'static str, f: impl FnOnce(&mut Launch)) -> Self {
        match &mut self.endpoint {
            Endpoint::Stdio(launch) => f(launch),
            Endpoint::Http(_) => {
                self.misuse.get_or_insert(what);
            }
        }
        self
    }

    /// Applies `f` to the endpoint of an HTTP server; records `what` as misuse otherwise.
    fn http_only(mut self, what: &'static str, f: impl FnOnce(&mut super::RemoteSpec)) -> Self {
        match &mut self.endpoint {
            Endpoint::Http(remote) => f(remote),
            Endpoint::Stdio(_) => {
                self.misuse.get_or_insert(what);
            }
        }
        self
    }

    /// What identifies "the same server" across starts (the era cache's key): the URL of an
    /// HTTP server, the program, arguments and working directory of a stdio one.
    pub fn identity(&self) -> String {
        match &self.endpoint {
            Endpoint::Http(remote) => format!("url {}", remote.url),
            Endpoint::Stdio(l) => format!("cmd {:?} {:?} {:?}", l.program, l.args, l.cwd),
        }
    }

    /// Restarts the server when it goes away, as `policy` says (docs/host.md,
    /// "Supervision"): the [`Client`](super::Client) stays the same, its requests in flight
    /// fail with [`Error::Restarted`](super::Error::Restarted), and its events tell of each
    /// restart.
    #[must_use]
    pub fn restart(mut self, policy: super::RestartPolicy) -> Self {
        self.restart = Some(policy);
        self
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

    /// Authorizes with OAuth when the server answers 401 (only for [`http`](Self::http)
    /// servers): discovery, registration, the authorization-code flow with PKCE, and the
    /// token on every request after.
    pub fn oauth(self, config: crate::transport::oauth::OAuthConfig) -> Self {
        self.http_only("oauth()", |remote| remote.oauth = Some(config))
    }

    /// Adds a header to every HTTP request (e.g. `Authorization: Bearer …`); only for
    /// [`http`](Self::http) servers.
    pub fn header(self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.http_only("header()", |remote| remote.headers.push((name.into(), value.into())))
    }

    /// Adds one argument (a stdio server's).
    pub fn arg(self, arg: impl Into<OsString>) -> Self {
        self.stdio("arg()", |launch| launch.args.push(arg.into()))
    }

    /// Adds arguments (a stdio server's).
    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(self, args: I) -> Self {
        self.stdio("args()", |launch| launch.args.extend(args.into_iter().map(Into::into)))
    }

    /// Sets an environment variable for the server (on top of the allowlisted host ones).
    pub fn env(self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.stdio("env()", |launch| launch.env.push((key.into(), value.into())))
    }

    /// Sets the working directory (a stdio server's).
    pub fn cwd(self, dir: impl Into<PathBuf>) -> Self {
        self.stdio("cwd()", |launch| launch.cwd = Some(dir.into()))
    }

    /// Sets the largest request this server is sent (a larger one fails before sending with
    /// [`RequestError::RequestTooLarge`](crate::protocol::RequestError::RequestTooLarge)).
    pub fn max_request_bytes(mut self, bytes: usize) -> Self {
        self.max_request_bytes = Some(bytes);
        self
    }

    /// Confines the server in a sandbox (namespaces, read-only root, cgroup limits, seccomp,
    /// Landlock; see [`SandboxConfig`]), or runs it as a plain child process with `None`. An
    /// HTTP server runs elsewhere: `None` is all it takes.
    pub fn sandbox(self, sandbox: Option<SandboxConfig>) -> Self {
        if sandbox.is_none() && self.remote().is_some() {
            return self;
        }
        self.stdio("sandbox(Some(..))", |launch| launch.sandbox = sandbox)
    }

    /// Whether a sandbox was set for this server.
    pub fn sandboxed(&self) -> bool {
        self.launch()
            .and_then(|l| l.sandbox.as_ref())
            .is_some_and(|s| s.profile != crate::sandbox::Profile::Off)
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
    /// The entry has neither a `command` nor a `url`.
    #[error("server {0:?} has neither a \"command\" to run nor a \"url\" to reach")]
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
    /// The policy gate's rules for this server.
    policy: Option<crate::policy::PolicyConfig>,
    /// `ringmcp gateway`: which of its tools are exposed (parsed by the gateway).
    tools: Option<Value>,
    /// What the server is for, in a few words (tool search names it so).
    description: Option<String>,
    /// How it is restarted when it goes away (`{}` for the defaults).
    restart: Option<super::RestartPolicy>,
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
    /// The top-level `"policy"`: defaults for every server.
    #[serde(default)]
    policy: crate::policy::GlobalPolicy,
    /// The top-level `"audit"`: where the audit trail goes.
    #[serde(default)]
    audit: Option<crate::policy::AuditConfig>,
    /// The top-level `"gateway"`: `ringmcp gateway`'s settings (parsed by the gateway).
    #[serde(default)]
    gateway: Option<Value>,
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

    /// The top-level `"policy"`.
    pub fn policy(&self) -> &crate::policy::GlobalPolicy {
        &self.policy
    }

    /// The top-level `"audit"`, when the config keeps an audit trail.
    pub fn audit(&self) -> Option<&crate::policy::AuditConfig> {
        self.audit.as_ref()
    }

    /// The top-level `"gateway"` object, as written.
    pub fn gateway(&self) -> Option<&Value> {
        self.gateway.as_ref()
    }

    /// Whether server `name`'s entry says `"disabled": true` (as Cursor and Cline write it).
    pub fn disabled(&self, name: &str) -> bool {
        self.servers
            .get(name)
            .and_then(|e| e._other.get("disabled"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// Server `name`'s `"tools"` filter, as written.
    pub fn tools_filter(&self, name: &str) -> Option<&Value> {
        self.servers.get(name).and_then(|e| e.tools.as_ref())
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
            spec.restart = entry.restart.clone();
            spec.policy = entry.policy.clone();
            spec.description = entry.description.clone();
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
        spec.restart = entry.restart.clone();
        spec.policy = entry.policy.clone();
        spec.description = entry.description.clone();
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
        let oauth = remote.remote().unwrap().oauth.clone().unwrap();
        assert_eq!(oauth.client_id.as_deref(), Some("c1"));
        assert_eq!(oauth.redirect_uri, "http://127.0.0.1:9/cb");
        assert_eq!(cfg.server("fs").unwrap().era, None);
        let fs = cfg.server("fs").unwrap();
        assert_eq!(fs.launch().unwrap().program, "npx");
        assert_eq!(fs.launch().unwrap().args.len(), 3);
        assert_eq!(fs.launch().unwrap().env, vec![("DEBUG".into(), "1".into())]);
        assert_eq!(fs.launch().unwrap().cwd.as_deref(), Some(Path::new("/")));
        let remote = cfg.server("remote").unwrap();
        assert_eq!(remote.remote().unwrap().url, "https://example.invalid/mcp");
        assert!(fs.sandboxed(), "sandboxed by default");
        assert!(!fs.clone().sandbox(None).sandboxed());
        let boxed = Config::parse(
            br#"{"mcpServers": {"s": {"command": "x", "sandbox": {"profile": "strict", "memory": "128M"}}}}"#,
        )
        .unwrap()
        .server("s")
        .unwrap();
        let sb = boxed.launch().unwrap().sandbox.clone().unwrap();
        assert_eq!((sb.profile, sb.memory_max()), (crate::sandbox::Profile::Strict, 128 << 20));
        assert!(
            Config::parse(br#"{"mcpServers": {"s": {"command": "x", "sandbox": {"nope": 1}}}}"#)
                .is_err()
        );
        let err = cfg.server("nope").unwrap_err();
        assert!(err.to_string().contains("fs, remote"), "{err}");
    }

    #[test]
    fn a_builder_call_for_the_other_kind_of_server_is_recorded() {
        let stdio = ServerSpec::new("s", "x").arg("a");
        assert_eq!(stdio.misuse(), None);
        let e = stdio.header("Authorization", "Bearer t").arg("b").misuse().unwrap();
        assert!(e.contains("header() does not apply") && e.contains("runs a command"), "{e}");
        let http = ServerSpec::http("h", "http://127.0.0.1:1/mcp").header("A", "b").sandbox(None);
        assert_eq!(http.misuse(), None);
        assert!(!http.sandboxed() && http.launch().is_none());
        assert_eq!(http.remote().unwrap().headers, [("A".to_owned(), "b".to_owned())]);
        let e = http.clone().arg("x").misuse().unwrap();
        assert!(e.contains("arg() does not apply") && e.contains("over HTTP"), "{e}");
        let e = http.sandbox(Some(SandboxConfig::standard())).misuse().unwrap();
        assert!(e.contains("sandbox(Some(..))"), "{e}");
    }
}
