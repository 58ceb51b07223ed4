//! ringmcp against a server written on the official Python `mcp` SDK (pinned in
//! tests/servers/requirements.txt).

use std::path::PathBuf;

use ringmcp::host::ServerSpec;
use ringmcp::protocol::ProtocolVersion;
use serde_json::json;

use crate::util::{deps_dir, host, require};

#[test]
fn handshake_and_calls() {
    let Some(python) = require(deps_dir().join("venv/bin/python"), "Python venv with the mcp SDK")
    else {
        return;
    };
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers/py_echo_server.py");
    let host = host();
    let client = host.spawn_blocking(ServerSpec::new("python", python).arg(script)).unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    let tools = client.list_tools_blocking().unwrap();
    assert!(tools.iter().any(|t| t.name == "echo") && tools.iter().any(|t| t.name == "add"));
    let r = client.call_tool_blocking("echo", json!({"text": "héllo"})).unwrap();
    assert_eq!(r.text(), "héllo");
    let r = client.call_tool_blocking("add", json!({"a": 2, "b": 40})).unwrap();
    assert_eq!(r.text(), "42");
    assert_eq!(r.structured_content, Some(json!({"result": 42})));
    let r = client.call_tool_blocking("add", json!({"a": "x"})).unwrap();
    assert!(r.is_error, "validation failures come back as isError results");
    // Capabilities the server did not declare are refused before anything is sent.
    if !client.server_info().capabilities["resources"]["subscribe"].as_bool().unwrap_or(false) {
        let err = client.subscribe_resource_blocking("file:///x").unwrap_err();
        assert!(err.to_string().contains("resources.subscribe"), "{err}");
    }
    if client.server_info().capabilities.get("completions").is_none() {
        let err =
            client.complete_blocking(json!({"type": "ref/prompt", "name": "p"}), "a", "", None);
        assert!(err.unwrap_err().to_string().contains("completions"));
    }
}
