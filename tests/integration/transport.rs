//! The HTTP transports (`ringmcp::transport`): against the official server-everything over
//! Streamable HTTP and legacy HTTP+SSE, and against a scripted local hyper server for what the
//! real one does not do (session expiry, SSE resumption, JSON responses, 2026-07-28 headers).

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use ringmcp::jsonrpc::Id;
use ringmcp::transport::{
    GetStream, HttpConfig, HttpMode, HttpTransport, Incoming, TransportError,
};
use serde_json::{Value, json};

use crate::util::{deps_dir, require};

/// How long any single wait may take before the test fails (generous: never a timing check).
const WAIT: Duration = Duration::from_secs(15);

// ---------------------------------------------------------------------------------------------
// Helpers

fn msg(v: Value) -> Vec<u8> {
    serde_json::to_vec(&v).unwrap()
}

fn request(id: i64, method: &str, params: Value) -> Vec<u8> {
    msg(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
}

fn notification(method: &str) -> Vec<u8> {
    msg(json!({"jsonrpc": "2.0", "method": method}))
}

fn initialize(id: i64, version: &str) -> Vec<u8> {
    request(
        id,
        "initialize",
        json!({"protocolVersion": version, "capabilities": {},
               "clientInfo": {"name": "ringmcp-transport-test", "version": "0"}}),
    )
}

/// The next item on `incoming`, polling (the tests are synchronous; the transport has its own
/// thread).
fn next(rx: &async_channel::Receiver<Incoming>) -> Incoming {
    let deadline = Instant::now() + WAIT;
    loop {
        match rx.try_recv() {
            Ok(item) => return item,
            Err(async_channel::TryRecvError::Closed) => panic!("incoming closed"),
            Err(async_channel::TryRecvError::Empty) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(_) => panic!("nothing arrived within {WAIT:?}"),
        }
    }
}

/// The next message, as JSON (panics on a transport event).
fn next_message(rx: &async_channel::Receiver<Incoming>) -> Value {
    match next(rx) {
        Incoming::Message(bytes) => serde_json::from_slice(&bytes).expect("message is JSON"),
        other => panic!("expected a message, got {other:?}"),
    }
}

/// Messages up to and including the response with `id`: (the ones before, the response).
fn until_response(rx: &async_channel::Receiver<Incoming>, id: i64) -> (Vec<Value>, Value) {
    let mut before = Vec::new();
    loop {
        let m = next_message(rx);
        if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
            return (before, m);
        }
        before.push(m);
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

// ---------------------------------------------------------------------------------------------
// The real server: @modelcontextprotocol/server-everything

fn everything_js() -> Option<PathBuf> {
    let entry =
        deps_dir().join("npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let entry = require(entry, "@modelcontextprotocol/server-everything")?;
    if Command::new("node").arg("--version").output().is_err() {
        ringmcp::testkit::skip(ringmcp::testkit::SkipKind::Dependency, "node not on PATH");
        return None;
    }
    Some(entry)
}

/// `node dist/index.js <mode>` on a free port, its output collected.
struct NodeServer {
    child: Child,
    port: u16,
    log: Arc<Mutex<String>>,
}

impl NodeServer {
    /// Starts the server on a free port. The port is only known to be free when we asked, so
    /// the server counts as ours once it *says* it listens on it; if it exits first (another
    /// process took the port meanwhile), it is started again on another.
    fn start(entry: &PathBuf, mode: &str) -> NodeServer {
        let mut last = String::new();
        for _ in 0..5 {
            match Self::try_start(entry, mode) {
                Ok(server) => return server,
                Err(log) => last = log,
            }
        }
        panic!("server-everything {mode} did not start on any of 5 ports: {last}");
    }

    fn try_start(entry: &PathBuf, mode: &str) -> Result<NodeServer, String> {
        let port = free_port();
        let mut child = Command::new("node")
            .arg(entry)
            .arg(mode)
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn node");
        let log = Arc::new(Mutex::new(String::new()));
        let out: Box<dyn std::io::Read + Send> = Box::new(child.stdout.take().unwrap());
        let err: Box<dyn std::io::Read + Send> = Box::new(child.stderr.take().unwrap());
        for pipe in [out, err] {
            let log = Arc::clone(&log);
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    let mut log = log.lock().unwrap();
                    log.push_str(&line);
                    log.push('\n');
                }
            });
        }
        let mut server = NodeServer { child, port, log };
        let deadline = Instant::now() + WAIT;
        // "… listening on port N" (streamableHttp), "… running on port N" (sse).
        let listening = format!("on port {port}");
        while !server.log().contains(&listening) {
            if let Ok(Some(status)) = server.child.try_wait() {
                return Err(format!("exited ({status}): {}", server.log()));
            }
            assert!(
                Instant::now() < deadline,
                "server-everything never listened: {}",
                server.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(TcpStream::connect(("127.0.0.1", port)).is_ok(), "{}", server.log());
        Ok(server)
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }
}

impl Drop for NodeServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn transport_everything_streamable_http() {
    let Some(entry) = everything_js() else { return };
    let server = NodeServer::start(&entry, "streamableHttp");
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let t = HttpTransport::connect(HttpConfig::new(url).timeout(WAIT)).unwrap();
    let rx = t.incoming();

    t.send_blocking(initialize(1, "2025-11-25")).unwrap();
    let (_, init) = until_response(&rx, 1);
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    assert_eq!(t.mode(), HttpMode::Streamable);
    let session = t.session_id().expect("server-everything assigns a session id");
    t.set_protocol_version("2025-11-25");
    t.send_blocking(notification("notifications/initialized")).unwrap();

    t.send_blocking(request(2, "tools/list", json!({}))).unwrap();
    let (_, list) = until_response(&rx, 2);
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for want in ["echo", "trigger-long-running-operation"] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }

    t.send_blocking(request(
        3,
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "hi"}}),
    ))
    .unwrap();
    let (_, echo) = until_response(&rx, 3);
    assert_eq!(echo["result"]["content"][0]["text"], "Echo: hi", "{echo}");

    // Progress notifications ride the POST's SSE stream, before the result.
    t.send_blocking(request(
        4,
        "tools/call",
        json!({"name": "trigger-long-running-operation", "arguments": {"duration": 0.6, "steps": 3},
               "_meta": {"progressToken": "p-4"}}),
    ))
    .unwrap();
    let (before, done) = until_response(&rx, 4);
    let progress: Vec<f64> = before
        .iter()
        .filter(|m| {
            m["method"] == "notifications/progress" && m["params"]["progressToken"] == "p-4"
        })
        .map(|m| m["params"]["progress"].as_f64().unwrap())
        .collect();
    assert_eq!(progress, vec![1.0, 2.0, 3.0], "before the result: {before:?}");
    assert!(done["result"]["content"][0]["text"].as_str().unwrap().contains("completed"), "{done}");

    assert_eq!(t.open_get_stream_blocking().unwrap(), GetStream::Opened);
    t.close_blocking().unwrap();
    let deadline = Instant::now() + WAIT;
    let want = format!("Received session termination request for session {session}");
    while !server.log().contains(&want) {
        assert!(Instant::now() < deadline, "no DELETE seen by the server: {}", server.log());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn transport_everything_legacy_sse_fallback() {
    let Some(entry) = everything_js() else { return };
    let server = NodeServer::start(&entry, "sse");
    // The user's URL is the SSE endpoint: POSTing initialize there gets 404, so the transport
    // GETs it, reads the `endpoint` event and POSTs to /message?sessionId=… from then on.
    let url = format!("http://127.0.0.1:{}/sse", server.port);
    let t = HttpTransport::connect(HttpConfig::new(url).timeout(WAIT)).unwrap();
    let rx = t.incoming();
    t.send_blocking(initialize(1, "2024-11-05")).unwrap();
    assert_eq!(t.mode(), HttpMode::LegacySse);
    let (_, init) = until_response(&rx, 1);
    assert_eq!(init["result"]["protocolVersion"], "2024-11-05", "{init}");
    assert_eq!(t.session_id(), None);
    t.send_blocking(notification("notifications/initialized")).unwrap();
    t.send_blocking(request(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"message": "old"}}),
    ))
    .unwrap();
    let (_, echo) = until_response(&rx, 2);
    assert_eq!(echo["result"]["content"][0]["text"], "Echo: old", "{echo}");
    assert_eq!(t.open_get_stream_blocking().unwrap(), GetStream::Unsupported);
    t.close_blocking().unwrap();
    assert!(server.log().contains("Client Message from"), "{}", server.log());
}

// ---------------------------------------------------------------------------------------------
// A scripted local server

/// One request the local server received.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    headers: HashMap<String, String>,
    body: Value,
    at: Instant,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
    fn rpc_method(&self) -> &str {
        self.body["method"].as_str().unwrap_or("")
    }
}

/// What the handler answers.
struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: String,
}

fn json_reply(v: Value) -> Reply {
    Reply {
        status: 200,
        headers: vec![("content-type", "application/json".into())],
        body: v.to_string(),
    }
}

fn sse_reply(body: &str) -> Reply {
    Reply {
        status: 200,
        headers: vec![("content-type", "text/event-stream".into())],
        body: body.into(),
    }
}

fn status(code: u16) -> Reply {
    Reply { status: code, headers: vec![], body: String::new() }
}

fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

type Handler = Arc<dyn Fn(&Seen) -> Reply + Send + Sync>;

struct LocalServer {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl LocalServer {
    /// A hyper HTTP/1 server on 127.0.0.1 (its own thread and runtime), answering with
    /// `handler` and recording every request.
    fn start(handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> LocalServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let handler: Handler = Arc::new(handler);
        let log = Arc::clone(&seen);
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                loop {
                    let Ok((stream, _)) = listener.accept().await else { return };
                    let (handler, log) = (Arc::clone(&handler), Arc::clone(&log));
                    let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        let (handler, log) = (Arc::clone(&handler), Arc::clone(&log));
                        async move {
                            let (parts, body) = req.into_parts();
                            let body = body.collect().await?.to_bytes();
                            let seen = Seen {
                                method: parts.method.to_string(),
                                path: parts.uri.to_string(),
                                headers: parts
                                    .headers
                                    .iter()
                                    .map(|(k, v)| {
                                        (
                                            k.as_str().to_owned(),
                                            v.to_str().unwrap_or("?").to_owned(),
                                        )
                                    })
                                    .collect(),
                                body: serde_json::from_slice(&body).unwrap_or(Value::Null),
                                at: Instant::now(),
                            };
                            let reply = handler(&seen);
                            log.lock().unwrap().push(seen);
                            let mut response = hyper::Response::builder().status(reply.status);
                            for (k, v) in reply.headers {
                                response = response.header(k, v);
                            }
                            Ok::<_, hyper::Error>(
                                response.body(Full::new(Bytes::from(reply.body))).unwrap(),
                            )
                        }
                    });
                    tokio::spawn(
                        http1::Builder::new().serve_connection(TokioIo::new(stream), service),
                    );
                }
            });
        });
        LocalServer { url, seen }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn connect(&self) -> HttpTransport {
        let config = HttpConfig::new(&self.url)
            .timeout(WAIT)
            .bearer_token("secret-token")
            .default_retry(Duration::from_millis(50));
        HttpTransport::connect(config).unwrap()
    }
}

/// `initialize` answered with JSON and a session id; everything else by `rest`.
fn with_session(
    session: &'static str,
    rest: impl Fn(&Seen) -> Reply + Send + Sync + 'static,
) -> impl Fn(&Seen) -> Reply + Send + Sync + 'static {
    move |seen| {
        if seen.method == "POST" && seen.rpc_method() == "initialize" {
            let mut reply = json_reply(result(
                &seen.body["id"],
                json!({"protocolVersion": "2025-11-25",
                "capabilities": {}, "serverInfo": {"name": "local", "version": "0"}}),
            ));
            reply.headers.push(("mcp-session-id", session.into()));
            return reply;
        }
        rest(seen)
    }
}

#[test]
fn transport_local_json_202_session_headers_and_expiry() {
    let generation = Arc::new(Mutex::new(1));
    let g = Arc::clone(&generation);
    let server = LocalServer::start(move |seen| {
        let current = format!("s{}", g.lock().unwrap());
        match (seen.method.as_str(), seen.rpc_method()) {
            ("POST", "initialize") => {
                let mut reply =
                    json_reply(result(&seen.body["id"], json!({"protocolVersion": "2025-11-25"})));
                reply.headers.push(("mcp-session-id", current));
                reply
            }
            ("POST", "notifications/initialized") => status(202),
            // The session "expires" on the server: 404 to its id, next initialize gets s2.
            ("POST", "tools/call") => {
                *g.lock().unwrap() += 1;
                status(404)
            }
            ("POST", _) => Reply {
                status: 200,
                headers: vec![("content-type", "Application/JSON; charset=utf-8".into())],
                body: result(&seen.body["id"], json!({"tools": []})).to_string(),
            },
            ("DELETE", _) => status(405),
            _ => status(400),
        }
    });
    let t = server.connect();
    let rx = t.incoming();
    t.send_blocking(initialize(1, "2025-11-25")).unwrap();
    assert_eq!(next_message(&rx)["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(t.session_id().as_deref(), Some("s1"));
    t.set_protocol_version("2025-11-25");
    t.send_blocking(notification("notifications/initialized")).unwrap();
    t.send_blocking(request(2, "tools/list", json!({}))).unwrap();
    assert_eq!(next_message(&rx)["id"], 2);

    let err = t.send_blocking(request(3, "tools/call", json!({"name": "x"}))).unwrap_err();
    assert!(matches!(err, TransportError::SessionExpired), "{err:?}");
    assert!(matches!(next(&rx), Incoming::SessionExpired));
    assert_eq!(t.session_id(), None);
    t.send_blocking(initialize(4, "2025-11-25")).unwrap();
    assert_eq!(next_message(&rx)["id"], 4);
    assert_eq!(t.session_id().as_deref(), Some("s2"));
    t.close_blocking().unwrap(); // DELETE answered 405: fine
    match next(&rx) {
        Incoming::Closed => {}
        other => panic!("expected Closed, got {other:?}"),
    }
    assert!(rx.recv_blocking().is_err(), "nothing after Closed; the channel is closed");

    let seen = server.seen();
    let posts: Vec<&Seen> = seen.iter().filter(|s| s.method == "POST").collect();
    assert_eq!(posts.len(), 5, "{seen:#?}");
    for p in &posts {
        assert_eq!(p.header("accept"), Some("application/json, text/event-stream"));
        assert_eq!(p.header("content-type"), Some("application/json"));
        assert_eq!(p.header("authorization"), Some("Bearer secret-token"));
    }
    let session: Vec<Option<&str>> = posts.iter().map(|p| p.header("mcp-session-id")).collect();
    assert_eq!(session, [None, Some("s1"), Some("s1"), Some("s1"), None]);
    let version: Vec<Option<&str>> =
        posts.iter().map(|p| p.header("mcp-protocol-version")).collect();
    let v = Some("2025-11-25");
    assert_eq!(version, [None, v, v, v, None], "never on initialize, always after");
    assert!(posts.iter().all(|p| p.header("mcp-method").is_none()), "no 2026 headers before 2026");
    let delete = seen.iter().find(|s| s.method == "DELETE").expect("DELETE on close");
    assert_eq!(
        (delete.header("mcp-session-id"), delete.header("mcp-protocol-version")),
        (Some("s2"), v)
    );
}

#[test]
fn transport_local_sse_resumes_with_last_event_id_after_retry() {
    let server = LocalServer::start(with_session("s1", |seen| match seen.method.as_str() {
        // The POST's stream: a comment, a priming event (id, empty data, retry), a progress
        // notification, then the connection closes before the response.
        "POST" if seen.rpc_method() == "tools/call" => sse_reply(
            ": hello\n\nid: e0\nretry: 150\ndata:\n\n\
             id: e1\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\r\n\
             data: \"params\":{\"progressToken\":\"t\",\"progress\":1}}\r\n\r\nid: e2\ndata: {\"trunc",
        ),
        "POST" => status(202),
        // The resumed stream: a server request, then the response.
        "GET" if seen.header("last-event-id") == Some("e1") => sse_reply(
            "id: e3\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"ping\"}\n\n\
             event: message\nid: e4\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[]}}\n\n",
        ),
        "DELETE" => status(200),
        _ => status(400),
    }));
    let t = server.connect();
    let rx = t.incoming();
    t.send_blocking(initialize(1, "2025-11-25")).unwrap();
    next_message(&rx);
    t.set_protocol_version("2025-11-25");
    t.send_blocking(request(7, "tools/call", json!({"name": "slow"}))).unwrap();
    let progress = next_message(&rx);
    assert_eq!(progress["params"]["progress"], 1, "multi-line data joined: {progress}");
    let ping = next_message(&rx);
    assert_eq!((ping["method"].as_str(), &ping["id"]), (Some("ping"), &json!("srv-1")));
    // The caller answers the server's request with a POST.
    t.send_blocking(msg(json!({"jsonrpc": "2.0", "id": "srv-1", "result": {}}))).unwrap();
    let done = next_message(&rx);
    assert_eq!(done["id"], 7, "{done}");
    assert!(rx.is_empty(), "nothing else (no StreamLost): {:?}", rx.try_recv());

    let seen = server.seen();
    let post = seen.iter().find(|s| s.rpc_method() == "tools/call").unwrap();
    let get = seen.iter().find(|s| s.method == "GET").expect("resumed with GET");
    assert_eq!(get.header("last-event-id"), Some("e1"));
    assert_eq!(get.header("accept"), Some("text/event-stream"));
    assert_eq!(get.header("mcp-session-id"), Some("s1"));
    assert_eq!(get.header("mcp-protocol-version"), Some("2025-11-25"));
    let waited = get.at - post.at;
    assert!(waited >= Duration::from_millis(140), "retry: 150 honoured (waited {waited:?})");
    let answer = seen.iter().find(|s| s.body["id"] == "srv-1").expect("answer POSTed");
    assert_eq!(answer.header("mcp-session-id"), Some("s1"));
    t.close_blocking().unwrap();
}

#[test]
fn transport_local_stream_lost_without_event_id_and_get_stream() {
    let gets = Arc::new(Mutex::new(0));
    let g = Arc::clone(&gets);
    let server = LocalServer::start(with_session("s1", move |seen| match seen.method.as_str() {
        // No event id: nothing to resume from.
        "POST" if seen.rpc_method() == "tools/call" => sse_reply(
            "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n",
        ),
        "POST" => status(202),
        "GET" => {
            *g.lock().unwrap() += 1;
            if *g.lock().unwrap() == 1 {
                // A server request on the GET stream; then it closes and the reconnection
                // gets 405, which ends the GET stream.
                sse_reply(
                    "retry: 20\nid: g1\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"method\":\"roots/list\"}\n\n",
                )
            } else {
                status(405)
            }
        }
        "DELETE" => status(200),
        _ => status(400),
    }));
    let t = server.connect();
    let rx = t.incoming();
    t.send_blocking(initialize(1, "2025-11-25")).unwrap();
    next_message(&rx);
    t.send_blocking(request(5, "tools/call", json!({"name": "x"}))).unwrap();
    assert_eq!(next_message(&rx)["method"], "notifications/message");
    match next(&rx) {
        Incoming::StreamLost {
            request: Some(Id::Number(5)),
            error: TransportError::StreamEnded { .. },
        } => {}
        other => panic!("expected StreamLost for 5, got {other:?}"),
    }

    assert_eq!(t.open_get_stream_blocking().unwrap(), GetStream::Opened);
    assert_eq!(next_message(&rx)["method"], "roots/list");
    t.send_blocking(msg(json!({"jsonrpc": "2.0", "id": "r1", "result": {"roots": []}}))).unwrap();
    match next(&rx) {
        Incoming::StreamLost { request: None, .. } => {}
        other => panic!("expected the GET stream's end, got {other:?}"),
    }
    let seen = server.seen();
    let resumed = seen.iter().filter(|s| s.method == "GET").nth(1).expect("GET reconnected");
    assert_eq!(resumed.header("last-event-id"), Some("g1"));
    assert!(seen.iter().any(|s| s.body["id"] == "r1" && s.body["result"].is_object()));
    // Once the GET stream is gone, a second open gets the 405.
    assert_eq!(t.open_get_stream_blocking().unwrap(), GetStream::Unsupported);
    // Dropping the transport (no close) still DELETEs the session, from its thread.
    drop(t);
    let deadline = Instant::now() + WAIT;
    while !server
        .seen()
        .iter()
        .any(|s| s.method == "DELETE" && s.header("mcp-session-id") == Some("s1"))
    {
        assert!(Instant::now() < deadline, "no DELETE after drop");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn transport_local_cancel_stream_stops_resuming() {
    let server = LocalServer::start(with_session("s1", |seen| match seen.method.as_str() {
        // The stream closes at once, asking for a (long) wait before the resumption.
        "POST" if seen.rpc_method() == "tools/call" => sse_reply("id: c0\nretry: 400\ndata:\n\n"),
        "GET" => sse_reply("data: {\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{}}\n\n"),
        _ => status(202),
    }));
    let t = server.connect();
    let rx = t.incoming();
    t.send_blocking(initialize(1, "2025-11-25")).unwrap();
    next_message(&rx);
    t.send_blocking(request(8, "tools/call", json!({"name": "x"}))).unwrap();
    t.cancel_stream(&Id::Number(8));
    std::thread::sleep(Duration::from_millis(900));
    assert!(server.seen().iter().all(|s| s.method != "GET"), "a cancelled stream is not resumed");
    assert!(rx.is_empty(), "and not reported: {:?}", rx.try_recv());
    // Without the cancel, the same exchange resumes and completes.
    t.send_blocking(request(9, "tools/call", json!({"name": "x"}))).unwrap();
    assert_eq!(next_message(&rx)["id"], 9);
    assert!(
        server.seen().iter().any(|s| s.method == "GET" && s.header("last-event-id") == Some("c0"))
    );
    t.close_blocking().unwrap();
}

#[test]
fn transport_local_2026_headers_and_no_resumption() {
    let server = LocalServer::start(|seen| match seen.rpc_method() {
        "tools/call" if seen.body["params"]["name"] == "slow" => {
            sse_reply("id: p0\nretry: 10\ndata:\n\n")
        }
        "notifications/cancelled" => status(202),
        _ => {
            // A stateless server must not hand out sessions; if one does, it is ignored.
            let mut reply = json_reply(result(&seen.body["id"], json!({"resultType": "complete"})));
            reply.headers.push(("mcp-session-id", "ignored".into()));
            reply
        }
    });
    let t = server.connect();
    let rx = t.incoming();
    t.set_protocol_version("2026-07-28");
    t.send_blocking(request(1, "server/discover", json!({}))).unwrap();
    next_message(&rx);
    t.send_blocking(request(2, "tools/call", json!({"name": "get-weather", "arguments": {}})))
        .unwrap();
    next_message(&rx);
    t.send_blocking(request(3, "resources/read", json!({"uri": "file:///données/ü.txt"}))).unwrap();
    next_message(&rx);
    t.send_blocking(request(4, "prompts/get", json!({"name": "=?base64?literal?="}))).unwrap();
    next_message(&rx);
    let region = ringmcp::transport::encode_header_value("Zürich").into_owned();
    futures::executor::block_on(t.send_with_headers(
        request(5, "tools/call", json!({"name": "weather", "arguments": {"region": "Zürich"}})),
        vec![("Mcp-Param-Region".into(), region)],
    ))
    .unwrap();
    next_message(&rx);
    t.send_blocking(notification("notifications/cancelled")).unwrap();
    // An SSE stream that ends early is not resumed in 2026-07-28: the request is reported.
    t.send_blocking(request(6, "tools/call", json!({"name": "slow"}))).unwrap();
    match next(&rx) {
        Incoming::StreamLost {
            request: Some(Id::Number(6)),
            error: TransportError::StreamEnded { .. },
        } => {}
        other => panic!("expected StreamLost for 6, got {other:?}"),
    }
    assert_eq!(t.session_id(), None);
    assert_eq!(t.open_get_stream_blocking().unwrap(), GetStream::Unsupported);
    t.close_blocking().unwrap();

    let seen = server.seen();
    assert!(seen.iter().all(|s| s.method == "POST"), "no GET, no DELETE: {seen:#?}");
    let headers: Vec<(Option<&str>, Option<&str>)> =
        seen.iter().map(|s| (s.header("mcp-method"), s.header("mcp-name"))).collect();
    assert_eq!(
        headers,
        [
            (Some("server/discover"), None),
            (Some("tools/call"), Some("get-weather")),
            (Some("resources/read"), Some("=?base64?ZmlsZTovLy9kb25uw6llcy/DvC50eHQ=?=")),
            (Some("prompts/get"), Some("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=")),
            (Some("tools/call"), Some("weather")),
            (Some("notifications/cancelled"), None),
            (Some("tools/call"), Some("slow")),
        ]
    );
    for s in &seen {
        assert_eq!(s.header("mcp-protocol-version"), Some("2026-07-28"), "{s:?}");
        assert_eq!(s.header("mcp-session-id"), None, "{s:?}");
    }
    assert_eq!(seen[4].header("mcp-param-region"), Some("=?base64?WsO8cmljaA==?="));
}

#[test]
fn transport_local_legacy_endpoint_on_another_origin_is_refused() {
    let server = LocalServer::start(|seen| match seen.method.as_str() {
        "POST" => status(405),
        "GET" => Reply {
            status: 200,
            headers: vec![("content-type", "text/event-stream".into())],
            body: "event: endpoint\ndata: http://elsewhere.invalid/messages\n\n".into(),
        },
        _ => status(400),
    });
    let t = server.connect();
    let err = t.send_blocking(initialize(1, "2024-11-05")).unwrap_err();
    assert!(
        matches!(&err, TransportError::LegacyHandshake { reason } if reason.contains("origin")),
        "{err:?}"
    );
    assert_eq!(t.mode(), HttpMode::Streamable);
    // Nothing was POSTed anywhere but the configured URL.
    assert!(server.seen().iter().all(|s| s.path == "/mcp"));
    drop(t);
}

#[test]
fn transport_local_errors_carry_status_and_body() {
    let server = LocalServer::start(|seen| match seen.rpc_method() {
        "initialize" => with_session("s1", |_| status(500))(seen),
        "tools/list" => Reply {
            status: 400,
            headers: vec![("content-type", "application/json".into())],
            body: r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32020,"message":"header mismatch"}}"#
                .into(),
        },
        "tools/call" => Reply {
            status: 200,
            headers: vec![("content-type", "text/html".into())],
            body: "<html>".into(),
        },
        _ => json_reply(result(&seen.body["id"], json!({"big": "x".repeat(4096)}))),
    });
    let t =
        HttpTransport::connect(HttpConfig::new(&server.url).timeout(WAIT).max_message_size(1024))
            .unwrap();
    let rx = t.incoming();
    t.send_blocking(initialize(1, "2025-11-25")).unwrap();
    next_message(&rx);
    let err = t.send_blocking(request(2, "tools/list", json!({}))).unwrap_err();
    match &err {
        TransportError::Status { method: "POST", status: 400, body } => {
            assert!(body.contains("-32020"), "{body}")
        }
        other => panic!("{other:?}"),
    }
    let err = t.send_blocking(request(3, "tools/call", json!({"name": "x"}))).unwrap_err();
    assert!(
        matches!(&err, TransportError::ContentType { content_type, .. } if content_type == "text/html"),
        "{err:?}"
    );
    let err = t.send_blocking(request(4, "resources/list", json!({}))).unwrap_err();
    assert!(matches!(err, TransportError::MessageTooLarge { limit: 1024 }), "{err:?}");
    let err = t.send_blocking(&b"not json"[..]).unwrap_err();
    assert!(matches!(err, TransportError::InvalidMessage { .. }), "{err:?}");
    t.close_blocking().unwrap();
    let bad = HttpTransport::connect(HttpConfig::new("ftp://x/")).unwrap_err();
    assert!(matches!(bad, TransportError::InvalidUrl { .. }), "{bad:?}");
    let bad =
        HttpTransport::connect(HttpConfig::new("http://x/").header("bad header", "v")).unwrap_err();
    assert!(matches!(bad, TransportError::InvalidHeader { .. }), "{bad:?}");
}

/// The same `Client` API over Streamable HTTP: `ServerSpec::http` (and a `url` entry in an
/// `mcpServers` config) reach server-everything; tools, calls, progress, events and shutdown.
#[test]
fn host_client_over_streamable_http() {
    use ringmcp::host::{Config, Host, ServerSpec};
    let Some(entry) = everything_js() else { return };
    let server = NodeServer::start(&entry, "streamableHttp");
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let host = Host::builder().request_timeout(Duration::from_secs(30)).build().unwrap();
    let client = host.spawn_blocking(ServerSpec::http("everything-http", &url)).unwrap();
    assert_eq!(client.server_info().server_info.name, "mcp-servers/everything");
    let tools = client.blocking().list_tools().unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    let r =
        client.blocking().call_tool("echo", serde_json::json!({"message": "over http"})).unwrap();
    assert!(r.text().contains("over http"), "{}", r.text());
    let (call, progress) = client.call_tool_with_progress(
        "trigger-long-running-operation",
        serde_json::json!({"duration": 0.3, "steps": 3}),
        None,
    );
    futures::executor::block_on(call).unwrap();
    let steps: Vec<f64> =
        std::iter::from_fn(|| progress.try_recv().ok()).map(|p| p.progress).collect();
    assert_eq!(steps, [1.0, 2.0, 3.0]);
    crate::everything::subscriptions_and_logs(&client);
    assert_eq!(client.blocking().shutdown(), ringmcp::protocol::CloseReason::Shutdown);
    // A `url` entry of an mcpServers config.
    let config = format!(
        r#"{{"mcpServers": {{"remote": {{"url": "{url}", "headers": {{"X-Test": "1"}}}}}}}}"#
    );
    let spec = Config::parse(config.as_bytes()).unwrap().server("remote").unwrap();
    let client = host.spawn_blocking(spec).unwrap();
    assert!(!client.blocking().list_tools().unwrap().is_empty());
}

/// A `ClientHandler` over HTTP: the capability is declared in `initialize`, the GET stream is
/// opened once the handshake is done (and `spawn` waits for it), a server request arriving on
/// it goes to the handler (on its own thread) and the answer is POSTed back with the session's
/// headers. Also: the `notifications/initialized` POST already carries the negotiated version.
#[test]
fn host_handler_answers_server_requests_from_the_get_stream() {
    use ringmcp::host::{ClientHandler, Host, ServerSpec};
    use ringmcp::jsonrpc::ErrorObject;
    use ringmcp::protocol::ClientFeatures;
    struct Accept;
    impl ClientHandler for Accept {
        fn features(&self) -> ClientFeatures {
            ClientFeatures { elicitation_form: true, ..ClientFeatures::default() }
        }
        fn elicit(&self, server: &str, params: Value) -> Result<Value, ErrorObject> {
            assert_eq!(server, "scripted");
            Ok(json!({"action": "accept", "content": {"asked": params["message"]}}))
        }
    }
    let server = LocalServer::start(with_session("s1", |seen| match seen.method.as_str() {
        // The first GET (no Last-Event-ID) carries a server request; the stream then ends and
        // its resumption is refused (405: no more GET stream).
        "GET" if seen.header("last-event-id").is_none() => sse_reply(
            "id: g1\nretry: 10\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\
             \"method\":\"elicitation/create\",\"params\":{\"message\":\"name?\",\
             \"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}}\n\n",
        ),
        "GET" => status(405),
        "POST" if seen.rpc_method() == "tools/list" => {
            json_reply(result(&seen.body["id"], json!({"tools": []})))
        }
        "POST" | "DELETE" => status(202),
        _ => status(400),
    }));
    let host = Host::builder().handler(Arc::new(Accept)).build().unwrap();
    let client = host.spawn_blocking(ServerSpec::http("scripted", &server.url)).unwrap();
    let deadline = Instant::now() + WAIT;
    let answer = loop {
        if let Some(s) = server.seen().into_iter().find(|s| s.body["id"] == "srv-1") {
            break s;
        }
        assert!(Instant::now() < deadline, "no answer POSTed: {:#?}", server.seen());
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(
        answer.body,
        json!({"jsonrpc": "2.0", "id": "srv-1",
               "result": {"action": "accept", "content": {"asked": "name?"}}})
    );
    assert_eq!(answer.header("mcp-session-id"), Some("s1"));
    assert_eq!(answer.header("mcp-protocol-version"), Some("2025-11-25"));
    // The connection goes on as before.
    assert!(client.blocking().list_tools().unwrap().is_empty());
    client.blocking().shutdown();

    let seen = server.seen();
    let init = seen.iter().find(|s| s.rpc_method() == "initialize").unwrap();
    assert_eq!(init.body["params"]["capabilities"], json!({"elicitation": {}}));
    let initialized = seen.iter().find(|s| s.rpc_method() == "notifications/initialized");
    let initialized = initialized.expect("notifications/initialized POSTed");
    assert_eq!(initialized.header("mcp-protocol-version"), Some("2025-11-25"));
    let get = seen.iter().find(|s| s.method == "GET").unwrap();
    assert!(get.at >= initialized.at, "the GET stream opens after the handshake");
    assert_eq!(get.header("mcp-session-id"), Some("s1"));
    // With a handler, `spawn` resolved only once the GET stream was open: nothing the server
    // sends there right after the handshake can be missed.
    let list = seen.iter().find(|s| s.rpc_method() == "tools/list").unwrap();
    assert!(list.at >= get.at, "spawn waited for the GET stream");
}

/// The same handler answers server-everything's elicitation and sampling requests over
/// Streamable HTTP (sent on the tools/call's own SSE stream), as it does over stdio.
#[test]
fn host_handler_answers_everything_over_streamable_http() {
    use ringmcp::host::{ClientHandler, Host, ServerSpec};
    use ringmcp::jsonrpc::ErrorObject;
    use ringmcp::protocol::ClientFeatures;
    struct Canned;
    impl ClientHandler for Canned {
        fn features(&self) -> ClientFeatures {
            ClientFeatures { sampling: true, elicitation_form: true, elicitation_url: false }
        }
        fn create_message(&self, _: &str, params: Value) -> Result<Value, ErrorObject> {
            let asked = params["messages"][0]["content"]["text"].as_str().unwrap_or("").to_owned();
            Ok(json!({"role": "assistant", "model": "canned-1", "stopReason": "endTurn",
                      "content": {"type": "text", "text": format!("canned answer to: {asked}")}}))
        }
        fn elicit(&self, _: &str, _: Value) -> Result<Value, ErrorObject> {
            Ok(json!({"action": "decline"}))
        }
    }
    let Some(entry) = everything_js() else { return };
    let server = NodeServer::start(&entry, "streamableHttp");
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let host = Host::builder()
        .request_timeout(Duration::from_secs(30))
        .handler(Arc::new(Canned))
        .build()
        .unwrap();
    let client = host.spawn_blocking(ServerSpec::http("everything-http", &url)).unwrap();
    let r = client
        .blocking()
        .call_tool("trigger-sampling-request", json!({"prompt": "2+2?", "maxTokens": 10}))
        .unwrap();
    assert!(r.text().contains("canned answer to:") && r.text().contains("2+2?"), "{}", r.text());
    let r = client.blocking().call_tool("trigger-elicitation-request", json!({})).unwrap();
    assert!(r.text().to_lowercase().contains("decline"), "{}", r.text());
    client.blocking().shutdown();
}
