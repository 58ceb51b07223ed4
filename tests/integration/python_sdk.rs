//! ringmcp against a server written on the official Python `mcp` SDK (pinned in
//! tests/servers/requirements.txt).

use std::path::PathBuf;

use ringmcp::host::ServerSpec;
use ringmcp::protocol::{Era, ProtocolVersion};
use serde_json::json;

use crate::util::{deps_dir, host, require};

/// The SDK's server speaks both eras: the host's probe finds the stateless 2026-07-28 one
/// (`server/discover`, `_meta` on every request), and a host told to skip the probe gets the
/// legacy `initialize` handshake. The same `Client` calls give the same answers either way.
#[test]
fn handshake_and_calls_in_both_eras() {
    let Some(python) = require(deps_dir().join("venv/bin/python"), "Python venv with the mcp SDK")
    else {
        return;
    };
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers/py_echo_server.py");
    let host = host();
    for (era, version) in
        [(None, ProtocolVersion::V2026_07_28), (Some(Era::Legacy), ProtocolVersion::V2025_11_25)]
    {
        let mut spec = ServerSpec::new("python", &python).arg(&script);
        if let Some(era) = era {
            spec = spec.era(era);
        }
        let client = host.spawn_blocking(spec).unwrap();
        assert_eq!(client.protocol_version(), version);
        assert_eq!(client.server_info().server_info.name, "py-echo-server", "{version}");
        let tools = client.blocking().list_tools().unwrap();
        assert!(tools.iter().any(|t| t.name == "echo") && tools.iter().any(|t| t.name == "add"));
        let r = client.blocking().call_tool("echo", json!({"text": "héllo"})).unwrap();
        assert_eq!(r.text(), "héllo");
        let r = client.blocking().call_tool("add", json!({"a": 2, "b": 40})).unwrap();
        assert_eq!(r.text(), "42");
        assert_eq!(r.structured_content, Some(json!({"result": 42})));
        let r = client.blocking().call_tool("add", json!({"a": "x"})).unwrap();
        assert!(r.is_error, "validation failures come back as isError results ({version})");
        // `ping` (a `server/discover` in 2026-07-28, where ping is gone) and the log level
        // (per-request `_meta` there) work in both.
        client.blocking().ping().unwrap();
        if client.has_capability("logging") {
            client.blocking().set_log_level("debug").unwrap();
        }
        assert_eq!(client.blocking().call_tool("echo", json!({"text": "x"})).unwrap().text(), "x");
        // Capabilities the server did not declare are refused before anything is sent.
        if !client.server_info().capabilities["resources"]["subscribe"].as_bool().unwrap_or(false) {
            let err = client.blocking().subscribe_resource("file:///x").unwrap_err();
            assert!(err.to_string().contains("resources.subscribe"), "{err}");
        }
        if client.server_info().capabilities.get("completions").is_none() {
            let err = client.blocking().complete(
                json!({"type": "ref/prompt", "name": "p"}),
                "a",
                "",
                None,
            );
            assert!(err.unwrap_err().to_string().contains("completions"));
        }
        assert_eq!(client.blocking().stats().unwrap().session.violations, 0);
        client.blocking().shutdown();
    }
}
