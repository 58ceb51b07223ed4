//! `ServerSpec` and `Config`: how servers are described, always through the engine's own
//! `mcpServers` reader, so every key of a config file means the same here.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use ringmcp::host;
use serde_json::{Map, Value, json};

use crate::errors;
use crate::host::{Host, HostOptions};
use crate::json;

/// How to start (or reach) one MCP server: any `mcpServers` entry.
#[pyclass(module = "ringmcp._native", name = "ServerSpec", frozen)]
#[derive(Clone)]
pub(crate) struct ServerSpec {
    pub(crate) spec: host::ServerSpec,
}

/// The spec of `name` from one `mcpServers` entry, read as a config file's would be.
fn from_entry(name: &str, entry: Value) -> PyResult<host::ServerSpec> {
    let config = json!({ "mcpServers": { name: entry } });
    let bytes = serde_json::to_vec(&config).map_err(|e| errors::config(e.to_string()))?;
    let parsed =
        host::Config::parse(&bytes).map_err(|e| errors::config(format!("server {name:?}: {e}")))?;
    parsed.server(name).map_err(|e| errors::to_py(e.into()))
}

/// Puts the options every kind of entry shares into `entry`.
fn common(
    entry: &mut Map<String, Value>,
    policy: Option<&Bound<'_, PyAny>>,
    era: Option<&str>,
    restart: Option<&Bound<'_, PyAny>>,
    description: Option<String>,
) -> PyResult<()> {
    if let Some(policy) = json::optional(policy)? {
        entry.insert("policy".into(), policy);
    }
    if let Some(era) = era {
        entry.insert("era".into(), json!(era));
    }
    match restart.map(json::value).transpose()? {
        None | Some(Value::Null) | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => {
            entry.insert("restart".into(), json!({}));
        }
        Some(policy) => {
            entry.insert("restart".into(), policy);
        }
    }
    if let Some(d) = description {
        entry.insert("description".into(), json!(d));
    }
    Ok(())
}

#[pymethods]
impl ServerSpec {
    #[new]
    #[pyo3(signature = (name, command, args = Vec::new(), *, env = None, cwd = None, sandbox = None,
                        policy = None, era = None, restart = None, description = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        name: &str,
        command: &str,
        args: Vec<String>,
        env: Option<std::collections::BTreeMap<String, String>>,
        cwd: Option<PathBuf>,
        sandbox: Option<&Bound<'_, PyAny>>,
        policy: Option<&Bound<'_, PyAny>>,
        era: Option<&str>,
        restart: Option<&Bound<'_, PyAny>>,
        description: Option<String>,
    ) -> PyResult<Self> {
        let mut entry = Map::new();
        entry.insert("command".into(), json!(command));
        entry.insert("args".into(), json!(args));
        if let Some(env) = env {
            entry.insert("env".into(), json!(env));
        }
        if let Some(cwd) = cwd {
            entry.insert("cwd".into(), json!(cwd));
        }
        match sandbox.map(json::value).transpose()? {
            None | Some(Value::Null) | Some(Value::Bool(true)) => {}
            Some(Value::Bool(false)) => {
                entry.insert("sandbox".into(), json!({"profile": "off"}));
            }
            Some(config) => {
                entry.insert("sandbox".into(), config);
            }
        }
        common(&mut entry, policy, era, restart, description)?;
        Ok(ServerSpec { spec: from_entry(name, Value::Object(entry))? })
    }

    /// A server reached over Streamable HTTP (or legacy HTTP+SSE).
    #[staticmethod]
    #[pyo3(signature = (name, url, *, headers = None, oauth = None, policy = None, era = None,
                        restart = None, description = None))]
    #[allow(clippy::too_many_arguments)]
    fn http(
        name: &str,
        url: &str,
        headers: Option<std::collections::BTreeMap<String, String>>,
        oauth: Option<&Bound<'_, PyAny>>,
        policy: Option<&Bound<'_, PyAny>>,
        era: Option<&str>,
        restart: Option<&Bound<'_, PyAny>>,
        description: Option<String>,
    ) -> PyResult<Self> {
        let mut entry = Map::new();
        entry.insert("url".into(), json!(url));
        if let Some(headers) = headers {
            entry.insert("headers".into(), json!(headers));
        }
        if let Some(oauth) = json::optional(oauth)? {
            entry.insert("oauth".into(), oauth);
        }
        common(&mut entry, policy, era, restart, description)?;
        Ok(ServerSpec { spec: from_entry(name, Value::Object(entry))? })
    }

    /// A server from one `mcpServers` entry, every key as in a config file.
    #[staticmethod]
    fn from_entry(name: &str, entry: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(ServerSpec { spec: from_entry(name, json::value(entry)?)? })
    }

    #[getter]
    fn name(&self) -> String {
        self.spec.name.to_string()
    }

    #[getter]
    fn sandboxed(&self) -> bool {
        self.spec.sandboxed()
    }

    fn __repr__(&self) -> String {
        match (self.spec.launch(), self.spec.remote()) {
            (Some(l), _) => format!(
                "ServerSpec(name={:?}, command={:?}, sandboxed={})",
                &*self.spec.name,
                l.program,
                if self.spec.sandboxed() { "True" } else { "False" }
            ),
            (None, Some(r)) => {
                format!("ServerSpec.http(name={:?}, url={:?})", &*self.spec.name, r.url)
            }
            (None, None) => format!("ServerSpec(name={:?})", &*self.spec.name),
        }
    }
}

/// A parsed `{"mcpServers": {...}}` configuration.
#[pyclass(module = "ringmcp._native", name = "Config", frozen)]
pub(crate) struct Config {
    pub(crate) config: host::Config,
}

#[pymethods]
impl Config {
    /// Reads and parses a config file.
    #[staticmethod]
    fn load(path: PathBuf) -> PyResult<Self> {
        host::Config::load(&path)
            .map(|config| Config { config })
            .map_err(|e| errors::to_py(e.into()))
    }

    /// Parses a config: a dict, or its JSON text.
    #[staticmethod]
    fn parse(config: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = if let Ok(s) = config.cast::<PyString>() {
            s.to_str()?.as_bytes().to_vec()
        } else if let Ok(b) = config.cast::<PyBytes>() {
            b.as_bytes().to_vec()
        } else {
            serde_json::to_vec(&json::value(config)?).map_err(|e| errors::config(e.to_string()))?
        };
        host::Config::parse(&bytes)
            .map(|config| Config { config })
            .map_err(|e| errors::config(format!("not an mcpServers config: {e}")))
    }

    /// The server names, sorted.
    fn names(&self) -> Vec<String> {
        self.config.names()
    }

    /// The spec of server `name`.
    fn server(&self, name: &str) -> PyResult<ServerSpec> {
        self.config
            .server(name)
            .map(|spec| ServerSpec { spec })
            .map_err(|e| errors::to_py(e.into()))
    }

    /// A host with this config's top-level `policy` and `audit`, the keyword options on top.
    #[pyo3(signature = (**options))]
    fn host(
        &self,
        py: Python<'_>,
        options: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<Host> {
        let mut opts = HostOptions::from_kwargs(options)?;
        opts.config_policy = Some(self.config.policy().clone());
        if opts.audit.is_none() {
            opts.audit_config = self.config.audit().cloned();
        }
        Host::build(py, opts)
    }
}
