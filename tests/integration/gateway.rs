//! `ringmcp gateway` driven by clients nobody here wrote: the official TypeScript SDK's
//! `Client` and the official Python SDK's `ClientSession`, in front of real backends
//! (server-everything, server-filesystem, a Python SDK server and the reference server).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::util::{TempDir, deps_dir, require, ringmcp_bin};

/// The backends every client scenario runs against: four implementations, the filesystem
/// server confined to `root`, its `write_file` denied by policy, pages of ten.
fn config(dir: &Path, root: &Path) -> Option<PathBuf> {
    let npm = deps_dir().join("npm/node_modules/@modelcontextprotocol");
    let everything = require(npm.join("server-everything/dist/index.js"), "server-everything")?;
    let fs = require(npm.join("server-filesystem/dist/index.js"), "server-filesystem")?;
    let python = require(deps_dir().join("venv/bin/python"), "Python venv with the mcp SDK")?;
    let py_server =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers/py_echo_server.py");
    std::fs::write(root.join("hello.txt"), "hello").unwrap();
    let config = json!({
        "gateway": {"pageSize": 10},
        "mcpServers": {
            "ref": {"command": ringmcp_bin(), "args": ["serve", "--fault-tools"]},
            "everything": {"command": "node", "args": [everything]},
            "fs": {"command": "node", "args": [fs, root],
                   "policy": {"tools": {"write_file": "deny"}}},
            "py": {"command": python, "args": [py_server]},
        },
    });
    let path = dir.join("gateway.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
    Some(path)
}

fn run_client(mut cmd: Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("starting the {what}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{stdout}\n--- stderr ---\n{stderr}",
        out.status
    );
    assert!(stdout.contains("ok closed"), "{what} did not finish:\n{stdout}\n{stderr}");
}

/// The TypeScript SDK over stdio: namespaced paginated lists, calls on four backends, a
/// resource, a prompt, progress, cancellation, sampling and elicitation answered by the
/// client, a policy denial, and a 100 MB result read back in chunks.
#[test]
fn the_typescript_sdk_client_over_stdio() {
    let Some(sdk) = require(
        deps_dir().join("npm/node_modules/@modelcontextprotocol/sdk"),
        "the TypeScript MCP SDK",
    ) else {
        return;
    };
    let dir = TempDir::new("gw-ts");
    let root = dir.0.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let Some(config) = config(&dir.0, &root) else { return };
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/clients/ts-client.mjs");
    let mut cmd = Command::new("node");
    cmd.arg(script).arg(sdk).arg("stdio").arg(ringmcp_bin()).arg(&config);
    cmd.args(["--spill-threshold", "1MiB"]).env("GW_ROOT", &root);
    run_client(cmd, "TypeScript SDK client");
}

/// The Python SDK's `ClientSession` over stdio: the same scenario.
#[test]
fn the_python_sdk_client_over_stdio() {
    let Some(python) = require(deps_dir().join("venv/bin/python"), "Python venv with the mcp SDK")
    else {
        return;
    };
    let dir = TempDir::new("gw-py");
    let root = dir.0.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let Some(config) = config(&dir.0, &root) else { return };
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/clients/py_client.py");
    let mut cmd = Command::new(python);
    cmd.arg(script).arg(ringmcp_bin()).arg(&config);
    cmd.args(["--spill-threshold", "1MiB"]).env("GW_ROOT", &root);
    run_client(cmd, "Python SDK client");
}
