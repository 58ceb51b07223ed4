//! ringmcp against the official `@modelcontextprotocol/server-everything` (npm, pinned in
//! tests/servers/npm).

use std::time::{Duration, Instant};

use ringmcp::host::{Host, ServerEvent, ServerSpec};
use ringmcp::protocol::{CloseReason, ProtocolVersion, Root};
use serde_json::json;

use crate::util::{deps_dir, require};

fn everything() -> Option<ServerSpec> {
    let entry =
        deps_dir().join("npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let entry = require(entry, "@modelcontextprotocol/server-everything")?;
    Some(ServerSpec::new("everything", "node").arg(entry).arg("stdio"))
}

#[test]
fn handshake_tools_echo_roots_and_notifications() {
    let Some(spec) = everything() else { return };
    let host = Host::builder()
        .roots(vec![Root { uri: "file:///tmp".into(), name: Some("tmp".into()) }])
        .request_timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let client = host.spawn_blocking(spec).unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    assert_eq!(client.server_info().server_info.name, "mcp-servers/everything");

    let tools = client.list_tools_blocking().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for want in ["echo", "get-sum", "get-roots-list"] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    // Schemas are kept exactly as sent (draft-07 $schema included).
    let echo = tools.iter().find(|t| t.name == "echo").unwrap();
    assert_eq!(echo.input_schema["$schema"], "http://json-schema.org/draft-07/schema#");

    let r = client.call_tool_blocking("echo", json!({"message": "hello from ringmcp"})).unwrap();
    assert_eq!(r.text(), "Echo: hello from ringmcp");
    let r = client.call_tool_blocking("get-sum", json!({"a": 2, "b": 40})).unwrap();
    assert!(r.text().contains("42"), "{}", r.text());

    // After `initialized` it sends tools/list_changed, then asks roots/list; answering it
    // makes it log "Roots updated" through notifications/message.
    let events = client.events();
    let deadline = Instant::now() + Duration::from_secs(15);
    let (mut list_changed, mut roots_logged) = (false, false);
    while !(list_changed && roots_logged) && Instant::now() < deadline {
        match events.try_recv() {
            Ok(ServerEvent::Notification(n)) => {
                list_changed |= n.method == "notifications/tools/list_changed";
                roots_logged |= n.method == "notifications/message"
                    && n.params
                        .as_ref()
                        .is_some_and(|p| p.to_string().contains("Roots updated: 1 root"));
            }
            Ok(other) => panic!("unexpected event {other:?}"),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    assert!(list_changed, "no notifications/tools/list_changed");
    assert!(roots_logged, "the server never confirmed our roots/list answer");
    let stats = client.stats_blocking().unwrap();
    assert!(stats.session.server_requests >= 1, "{stats:?}");
    assert_eq!(stats.session.violations, 0, "{stats:?}");
    assert_eq!(client.shutdown_blocking(), CloseReason::Exited(0));
}
