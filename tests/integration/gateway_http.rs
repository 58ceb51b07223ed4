//! `ringmcp gateway --http` on its own: raw HTTP/1.1 on loopback, for what the SDK clients
//! (tests/integration/gateway.rs) do not show: the ids of stateless answers, the refusals, and
//! a client that stops reading.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::util::{TempDir, open_session, post_raw, ringmcp_bin, rss};

/// A `ringmcp gateway --http` child: its URL and token, read from its first stderr line.
pub(crate) struct HttpGateway {
    pub(crate) child: std::process::Child,
    pub(crate) url: String,
    pub(crate) token: Option<String>,
}

impl HttpGateway {
    pub(crate) fn start(config: &Path, extra: &[&str]) -> HttpGateway {
        use std::io::BufRead;
        let mut child = Command::new(ringmcp_bin())
            .args(["gateway", "--http", "0", "--config"])
            .arg(config)
            .args(extra)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("starting ringmcp gateway --http");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains("/mcp") {
                    let _ = tx.send(line.clone());
                }
                eprintln!("{line}");
            }
        });
        let line = rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("the gateway prints its URL when it listens");
        let url = line.split_whitespace().find(|w| w.starts_with("http://")).unwrap();
        let url = url.trim_end_matches(';').to_owned();
        let token = line.split("Bearer ").nth(1).map(|t| t.trim().to_owned());
        HttpGateway { child, url, token }
    }
}

impl Drop for HttpGateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The gateway of one reference server over HTTP, and a stateless `tools/call` of its `echo`.
fn http_echo(label: &str) -> (TempDir, HttpGateway, String) {
    let dir = TempDir::new(label);
    let config = dir.0.join("gateway.json");
    let servers = json!({"mcpServers": {"ref": {"command": ringmcp_bin(), "args": ["serve"]}}});
    std::fs::write(&config, serde_json::to_vec(&servers).unwrap()).unwrap();
    let gateway = HttpGateway::start(&config, &[]);
    let address = gateway.url.trim_start_matches("http://").split('/').next().unwrap().to_owned();
    (dir, gateway, address)
}

fn echo_body(text: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "ref__echo", "arguments": {"text": text},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string()
}

const STATELESS_HEADERS: [(&str, &str); 3] = [
    ("MCP-Protocol-Version", "2026-07-28"),
    ("Mcp-Method", "tools/call"),
    ("Mcp-Name", "ref__echo"),
];

/// A stateless (2026-07-28) `tools/call` POSTed to `ringmcp gateway --http` gets its answer
/// with the id it was sent with, whatever the answer's text holds (an answer holding `data: `
/// used to come back with the gateway's own id).
#[test]
fn a_stateless_answer_keeps_the_clients_id_whatever_its_text() {
    let (_dir, gateway, address) = http_echo("gw-stateless-id");
    let bearer = format!("Bearer {}", gateway.token.clone().expect("a token by default"));
    for text in ["plain text", "metadata: 1", "id: 3\ndata: {\"id\":\"h0\"}\n\n"] {
        let mut headers = STATELESS_HEADERS.to_vec();
        headers.push(("Authorization", &bearer));
        let answer = post_raw(&address, &headers, &echo_body(text));
        let json_body = answer.split("\r\n\r\n").nth(1).unwrap_or("");
        // A JSON answer (the answer came first): its one JSON line.
        let line = json_body.lines().find(|l| l.starts_with('{')).unwrap_or_else(|| {
            panic!("no JSON answer for {text:?}: {answer}");
        });
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["id"], json!(7), "{text:?}: {answer}");
        assert!(v["result"].to_string().contains(&json!(text).to_string()[1..5]), "{answer}");
    }
}

/// A JSON-RPC error answer is HTTP 200 for a 2025-11-25 session (its clients take any other
/// status for a failed transport, and lose the error: the bench counted one as an unexplained
/// `closed`), and the status 2026-07-28 gives it (400 for -32602) for a stateless request.
#[test]
fn an_error_answer_is_200_for_a_legacy_session_and_400_when_stateless() {
    let (_dir, gateway, address) = http_echo("gw-error-status");
    let bearer = format!("Bearer {}", gateway.token.clone().expect("a token by default"));
    let auth = [("Authorization", bearer.as_str())];
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "legacy", "version": "1"}}});
    let answer = post_raw(&address, &auth, &init.to_string());
    let session = answer
        .lines()
        .find_map(|l| l.to_ascii_lowercase().strip_prefix("mcp-session-id: ").map(str::to_owned))
        .unwrap_or_else(|| panic!("no session id: {answer}"));
    let with_session = [auth[0], ("Mcp-Session-Id", session.trim())];
    let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post_raw(&address, &with_session, &done.to_string());
    let status = |answer: &str| answer.split(' ').nth(1).unwrap_or("").to_owned();

    let unknown = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "ref__nope", "arguments": {}}});
    let answer = post_raw(&address, &with_session, &unknown.to_string());
    assert_eq!(status(&answer), "200", "{answer}");
    let v = body_of(&answer);
    assert_eq!((v["id"].clone(), v["error"]["code"].clone()), (json!(5), json!(-32602)), "{v}");

    let mut stateless = STATELESS_HEADERS.to_vec();
    stateless[2] = ("Mcp-Name", "ref__nope");
    stateless.push(auth[0]);
    let body = echo_body("x").replace("ref__echo", "ref__nope");
    let answer = post_raw(&address, &stateless, &body);
    assert_eq!(status(&answer), "400", "{answer}");
    assert_eq!(body_of(&answer)["error"]["code"], json!(-32602), "{answer}");
}

/// The HTTP gateway's doors: a missing or wrong bearer token is 401 with a challenge; a `Host`
/// that is not loopback (DNS rebinding) and a foreign `Origin` are 403; a loopback `Origin`
/// with the token gets through.
#[test]
fn the_http_gateway_refuses_wrong_tokens_hosts_and_origins() {
    let (_dir, gateway, address) = http_echo("gw-http-doors");
    let token = gateway.token.clone().expect("a token by default");
    let bearer = format!("Bearer {token}");
    // The same length, one character off.
    let last = if token.ends_with('x') { 'y' } else { 'x' };
    let wrong = format!("Bearer {}{last}", &token[..token.len() - 1]);
    let status = |answer: &str| answer.split(' ').nth(1).unwrap_or("").to_owned();
    let with = |extra: &[(&str, &str)]| {
        let mut headers = STATELESS_HEADERS.to_vec();
        headers.extend_from_slice(extra);
        post_raw(&address, &headers, &echo_body("hi"))
    };
    let none = with(&[]);
    assert_eq!(status(&none), "401", "{none}");
    assert!(none.to_ascii_lowercase().contains("www-authenticate: bearer"), "{none}");
    assert!(none.contains("bearer token"), "says what to send: {none}");
    let bad = with(&[("Authorization", &wrong)]);
    assert_eq!(status(&bad), "401", "{bad}");
    let rebinding = with(&[("Authorization", &bearer), ("Host", "evil.example:80")]);
    assert_eq!(status(&rebinding), "403", "{rebinding}");
    assert!(rebinding.contains("DNS rebinding"), "{rebinding}");
    let foreign = with(&[("Authorization", &bearer), ("Origin", "https://evil.example")]);
    assert_eq!(status(&foreign), "403", "{foreign}");
    assert!(foreign.contains("may not use this server"), "{foreign}");
    let fine = with(&[("Authorization", &bearer), ("Origin", "http://localhost:5173")]);
    assert_eq!(status(&fine), "200", "{fine}");
    assert!(fine.contains("\"hi\""), "{fine}");
}

/// The JSON body of a raw answer (a JSON answer, or the first `data:` of an SSE one).
fn body_of(answer: &str) -> serde_json::Value {
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    let json = body.lines().find_map(|l| l.strip_prefix("data: ").filter(|d| !d.is_empty()));
    serde_json::from_str(json.unwrap_or(body).trim()).unwrap_or_else(|e| panic!("{e}: {answer}"))
}

/// A client that opens its GET stream and never reads it, while its backend floods the stream
/// with notifications (four floods of 300,000 resource updates, about 40 MB each): the
/// gateway's memory stays flat after the first (the stream's lane and the session's history
/// are bounded; the stream is dropped), and that session and another one carry on.
#[test]
fn a_client_that_stops_reading_its_get_stream_costs_bounded_memory() {
    use std::io::Write;
    let dir = TempDir::new("gw-slow-reader");
    let config = dir.0.join("gateway.json");
    let servers = json!({"mcpServers": {
        "ref": {"command": ringmcp_bin(), "args": ["serve", "--fault-tools"]}}});
    std::fs::write(&config, serde_json::to_vec(&servers).unwrap()).unwrap();
    let gateway = HttpGateway::start(&config, &["--no-auth"]);
    let address = gateway.url.trim_start_matches("http://").split('/').next().unwrap().to_owned();
    let session = open_session(&address);
    let with = [("Mcp-Session-Id", session.as_str())];
    let call = |id: u64, name: &str, arguments: serde_json::Value| {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": name, "arguments": arguments}});
        body_of(&post_raw(&address, &with, &body.to_string()))
    };
    let subscribe = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
                           "params": {"uri": "ringmcp://reference/readme"}});
    let subscribed = body_of(&post_raw(&address, &with, &subscribe.to_string()));
    assert!(subscribed.get("result").is_some(), "{subscribed}");
    // The GET stream, opened and never read.
    let mut get = std::net::TcpStream::connect(&address).unwrap();
    write!(
        get,
        "GET /mcp HTTP/1.1\r\nHost: {address}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n"
    )
    .unwrap();
    // One flood first: what the allocator keeps of it (freed, not returned) is not a queue.
    // Three more must then cost little more (the allocator may still take a step of some
    // 30 MiB, measured): a queue would hold all three, over 100 MiB.
    let flood = |id: u64| {
        let touched = call(id, "ref__touch", json!({"times": 300_000}));
        assert!(touched.get("result").is_some(), "{touched}");
        // The updates cross the gateway on their own time: a call on the same backend
        // answers after them.
        let echo = call(id + 1, "ref__echo", json!({"text": "after"}));
        assert_eq!(echo["result"]["content"][0]["text"], "after", "the session carries on");
        rss(gateway.child.id())
    };
    let before = flood(3);
    let after = [5, 7, 9].map(flood);
    let grown = after[2].saturating_sub(before);
    eprintln!("gateway RSS {} KiB after one flood, then {after:?} bytes", before >> 10);
    assert!(grown < 64 << 20, "the gateway grew by {} MiB for a reader that stopped", grown >> 20);
    // Another session is served as usual.
    let other = open_session(&address);
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                      "params": {"name": "ref__echo", "arguments": {"text": "other"}}});
    let answer = body_of(&post_raw(&address, &[("Mcp-Session-Id", &other)], &body.to_string()));
    assert_eq!(answer["result"]["content"][0]["text"], "other", "{answer}");
    drop(get);
}
