//! In-process tests of the handler and of the I/O loop (no child process).

use std::io::{self, BufWriter, Read, Write};
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use ringmcp::frame::Oversized;
use ringmcp::jsonrpc::Id;
use serde_json::{Value, json};

use super::handler::{Config, Deferred, Server, slept};
use super::tools::NOISE_LINE;
use super::wire::blob_byte;
use super::{Ended, serve};

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#;

fn fresh(config: Config) -> Server<Vec<u8>> {
    Server::new(config, Vec::new())
}

fn ready(config: Config) -> Server<Vec<u8>> {
    let mut server = fresh(config);
    let (answers, _) = send(&mut server, INIT);
    assert!(answers[0]["result"].is_object(), "initialize failed: {answers:?}");
    server
}

fn faulty() -> Server<Vec<u8>> {
    ready(Config { fault_tools: true, ..Config::default() })
}

/// Handles one frame; returns the raw output and what was deferred.
fn send_raw(server: &mut Server<Vec<u8>>, frame: &str) -> (Vec<u8>, Vec<Deferred>) {
    let mut out = Vec::new();
    let later = server.handle(frame.as_bytes(), &mut out).expect("writing to a Vec");
    (out, later)
}

/// Handles one frame; returns each output line parsed as JSON, and what was deferred.
fn send(server: &mut Server<Vec<u8>>, frame: &str) -> (Vec<Value>, Vec<Deferred>) {
    let (out, later) = send_raw(server, frame);
    (lines(&out), later)
}

fn lines(out: &[u8]) -> Vec<Value> {
    assert!(out.is_empty() || out.ends_with(b"\n"), "output does not end with a newline");
    out.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("every output line is JSON"))
        .collect()
}

/// The single answer to a request.
fn ask(server: &mut Server<Vec<u8>>, id: i64, method: &str, params: Value) -> Value {
    let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let (answers, later) = send(server, &frame.to_string());
    assert!(later.is_empty(), "unexpected deferred work {later:?}");
    assert_eq!(answers.len(), 1, "expected one answer to {method}, got {answers:?}");
    assert_eq!(answers[0]["id"], id);
    answers.into_iter().next().unwrap()
}

fn call(server: &mut Server<Vec<u8>>, tool: &str, arguments: Value) -> Value {
    ask(server, 7, "tools/call", json!({"name": tool, "arguments": arguments}))
}

fn error_code(answer: &Value) -> i64 {
    answer["error"]["code"].as_i64().unwrap_or_else(|| panic!("not an error: {answer}"))
}

fn text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text: {answer}"))
}

#[test]
fn only_initialize_and_ping_before_initialize() {
    let mut server = fresh(Config::default());
    assert_eq!(error_code(&ask(&mut server, 1, "tools/list", json!({}))), -32600);
    assert_eq!(error_code(&ask(&mut server, 1, "no/such", json!({}))), -32600);
    assert_eq!(ask(&mut server, 2, "ping", json!({}))["result"], json!({}));
    let (answers, _) =
        send(&mut server, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert!(answers.is_empty(), "a notification was answered");
    let (answers, _) = send(&mut server, INIT);
    let result = &answers[0]["result"];
    assert_eq!(result["protocolVersion"], "2025-06-18");
    assert_eq!(result["serverInfo"]["name"], "ringmcp-reference");
    assert_eq!(result["capabilities"]["tools"], json!({"listChanged": false}));
    assert_eq!(
        result["capabilities"]["resources"],
        json!({"subscribe": true, "listChanged": false})
    );
    assert_eq!(
        (&result["capabilities"]["logging"], &result["capabilities"]["completions"]),
        (&json!({}), &json!({}))
    );
    assert_eq!(ask(&mut server, 3, "tools/list", json!({}))["result"]["tools"][0]["name"], "echo");
    assert_eq!(error_code(&ask(&mut server, 4, "initialize", json!({}))), -32600);
}

#[test]
fn negotiates_versions() {
    for (asked, answered) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-11-25", "2025-11-25"),
        ("2026-07-28", ringmcp::protocol::ProtocolVersion::LATEST.as_str()),
        ("1999-01-01", ringmcp::protocol::ProtocolVersion::LATEST.as_str()),
    ] {
        let mut server = fresh(Config::default());
        let params = json!({"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
        let answer = ask(&mut server, 1, "initialize", params);
        assert_eq!(answer["result"]["protocolVersion"], answered, "asked {asked}");
    }
}

#[test]
fn malformed_initialize_says_what_is_wrong() {
    let mut server = fresh(Config::default());
    let answer = ask(
        &mut server,
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}}),
    );
    assert_eq!(error_code(&answer), -32602);
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("clientInfo"), "{message}");
    // Still not initialized.
    assert_eq!(error_code(&ask(&mut server, 2, "tools/list", json!({}))), -32600);
}

#[test]
fn bad_frames_get_errors_with_the_best_id_available() {
    let mut server = ready(Config::default());
    let (answers, _) = send(&mut server, "this is not json");
    assert_eq!(answers, [json!({"jsonrpc":"2.0","id":null,"error":answers[0]["error"].clone()})]);
    assert_eq!(error_code(&answers[0]), -32700);
    let (answers, _) = send(&mut server, r#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#);
    assert_eq!((error_code(&answers[0]), &answers[0]["id"]), (-32600, &json!(9)));
    let (answers, _) = send(&mut server, "[]");
    assert_eq!((error_code(&answers[0]), &answers[0]["id"]), (-32600, &Value::Null));
    assert_eq!(error_code(&ask(&mut server, 1, "no/such/method", json!({}))), -32601);
    assert_eq!(error_code(&ask(&mut server, 1, "tools/list", json!([1]))), -32602);
}

#[test]
fn batch_elements_are_answered_one_line_each() {
    let mut server = ready(Config::default());
    let (answers, _) = send(
        &mut server,
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"bogus":1},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}]"#,
    );
    assert_eq!(answers.len(), 3, "{answers:?}");
    assert_eq!(answers[0]["id"], 1);
    assert_eq!((error_code(&answers[1]), &answers[1]["id"]), (-32600, &Value::Null));
    assert_eq!((&answers[2]["id"], text(&answers[2])), (&json!("b"), "x"));
}

#[test]
fn oversized_lines_are_answered_by_their_id() {
    let mut server = ready(Config::default());
    let mut out = Vec::new();
    let o = Oversized { len: 1 << 30, id: Some(b"\"big\"".to_vec()) };
    server.handle_oversized(&o, &mut out).unwrap();
    let answers = lines(&out);
    assert_eq!((error_code(&answers[0]), &answers[0]["id"]), (-32600, &json!("big")));
}

#[test]
fn tools_list_has_schemas_and_fault_tools_only_on_request() {
    let names = |server: &mut Server<Vec<u8>>| -> Vec<String> {
        let answer = ask(server, 1, "tools/list", json!({}));
        assert!(answer["result"].get("nextCursor").is_none());
        let tools = answer["result"]["tools"].as_array().unwrap().clone();
        for tool in &tools {
            assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
            assert!(tool["description"].as_str().is_some_and(|d| !d.is_empty()), "{tool}");
        }
        tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(
        names(&mut ready(Config::default())),
        ["echo", "blob", "slow", "fail", "export", "add"]
    );
    assert_eq!(
        names(&mut faulty()),
        [
            "echo",
            "blob",
            "slow",
            "fail",
            "export",
            "add",
            "stall_blob",
            "cancelled",
            "calls",
            "fds",
            "freeze",
            "children",
            "touch",
            "exit",
            "noise",
            "hang",
            "stderr",
            "notify",
            "ask_roots"
        ]
    );
    let answer = call(&mut ready(Config::default()), "exit", json!({"code": 1}));
    assert_eq!(answer["error"]["message"], "Unknown tool: exit");
}

#[test]
fn lists_paginate_with_opaque_cursors() {
    let config = Config { page_size: NonZeroUsize::new(2), fault_tools: true, ..Config::default() };
    let mut server = ready(config);
    let mut names = Vec::new();
    let mut cursor = None::<Value>;
    let mut pages = 0;
    loop {
        let params = cursor.map_or(json!({}), |c| json!({"cursor": c}));
        let result = ask(&mut server, 1, "tools/list", params)["result"].clone();
        let page = result["tools"].as_array().unwrap();
        assert!(page.len() <= 2);
        names.extend(page.iter().map(|t| t["name"].clone()));
        pages += 1;
        match result.get("nextCursor") {
            Some(next) => cursor = Some(next.clone()),
            None => break,
        }
    }
    assert_eq!((names.len(), pages), (19, 10));
    let answer = ask(&mut server, 1, "tools/list", json!({"cursor": "bogus"}));
    assert_eq!(error_code(&answer), -32602);
    let resources = ask(&mut server, 2, "resources/list", json!({}))["result"].clone();
    assert_eq!(resources["resources"].as_array().unwrap().len(), 1);
    assert!(resources.get("nextCursor").is_none());
}

#[test]
fn echo_fail_and_argument_errors() {
    let mut server = ready(Config::default());
    let answer = call(&mut server, "echo", json!({"text": "héllo\n\"world\""}));
    assert_eq!(
        answer["result"],
        json!({"content": [{"type": "text", "text": "héllo\n\"world\""}]})
    );
    let answer = call(&mut server, "fail", json!({}));
    assert_eq!(answer["result"]["isError"], true);
    assert!(!text(&answer).is_empty());
    for (tool, arguments) in [
        ("echo", json!({})),
        ("echo", json!({"text": 1})),
        ("echo", json!({"text": "a", "extra": 1})),
        ("blob", json!({"bytes": -1})),
        ("slow", json!({"ms": 1.5})),
        ("add", json!({"a": "1", "b": 2})),
    ] {
        let answer = call(&mut server, tool, arguments.clone());
        assert_eq!(error_code(&answer), -32602, "{tool} {arguments}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.starts_with(&format!("Invalid arguments for tool {tool}: ")), "{message}");
    }
    let answer = ask(&mut server, 1, "tools/call", json!({"arguments": {}}));
    assert!(answer["error"]["message"].as_str().unwrap().contains("name"), "{answer}");
    assert_eq!(call(&mut server, "nope", json!({}))["error"]["message"], "Unknown tool: nope");
}

#[test]
fn add_is_exact_for_integers() {
    let mut server = ready(Config::default());
    for (a, b, sum) in [
        (json!(2), json!(3), json!(5)),
        (json!(-2), json!(0.5), json!(-1.5)),
        (json!(0.1), json!(0.2), json!(0.30000000000000004)),
        (json!(i64::MAX), json!(1), json!(9223372036854775808.0)),
    ] {
        let answer = call(&mut server, "add", json!({"a": a, "b": b}));
        assert_eq!(answer["result"]["structuredContent"], json!({"sum": sum}), "{a} + {b}");
        assert_eq!(text(&answer), sum.to_string());
    }
    let answer = call(&mut server, "add", json!({"a": 1e308, "b": 1e308}));
    assert_eq!(answer["result"]["isError"], true);
}

#[test]
fn blob_is_exactly_the_pattern() {
    let mut server = ready(Config::default());
    for len in [0usize, 1, 35, 36, 37, 65_519, 65_520, 65_521, 300_001] {
        let frame = json!({"jsonrpc": "2.0", "id": "blob", "method": "tools/call",
            "params": {"name": "blob", "arguments": {"bytes": len}}});
        let (out, later) = send_raw(&mut server, &frame.to_string());
        assert!(later.is_empty());
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1, "one line");
        let answer = &lines(&out)[0];
        assert_eq!(answer["id"], "blob");
        let text = text(answer).as_bytes();
        assert_eq!(text.len(), len);
        assert!(text.iter().enumerate().all(|(i, &b)| b == blob_byte(i)), "pattern at {len}");
        assert_eq!(answer["result"]["content"].as_array().unwrap().len(), 1);
    }
}

#[test]
fn slow_is_deferred() {
    let mut server = ready(Config::default());
    let frame = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{"ms":20}}}"#;
    let (answers, later) = send(&mut server, frame);
    assert!(answers.is_empty());
    assert_eq!(later, [Deferred::Sleep { id: Id::Number(5), ms: 20 }]);
    let answer = &lines(&slept(&Id::Number(5), 20))[0];
    assert_eq!((&answer["id"], text(answer)), (&json!(5), "slept 20 ms"));
}

#[test]
fn resources_and_prompts() {
    let mut server = ready(Config::default());
    let list = ask(&mut server, 1, "resources/list", json!({}));
    let uri = list["result"]["resources"][0]["uri"].clone();
    assert_eq!(uri, "ringmcp://reference/readme");
    let read = ask(&mut server, 2, "resources/read", json!({"uri": uri}));
    assert_eq!(read["result"]["contents"][0]["mimeType"], "text/plain");
    assert!(read["result"]["contents"][0]["text"].as_str().unwrap().contains("ringmcp"));
    let missing = ask(&mut server, 3, "resources/read", json!({"uri": "ringmcp://nope"}));
    assert_eq!(
        (error_code(&missing), &missing["error"]["message"]),
        (-32002, &json!("Resource not found"))
    );
    assert_eq!(error_code(&ask(&mut server, 3, "resources/read", json!({}))), -32602);
    let templates = ask(&mut server, 4, "resources/templates/list", json!({}));
    assert_eq!(templates["result"], json!({"resourceTemplates": []}));

    let prompts = ask(&mut server, 5, "prompts/list", json!({}));
    let greet = &prompts["result"]["prompts"][0];
    assert_eq!(
        (&greet["name"], &greet["arguments"][0]["required"]),
        (&json!("greet"), &json!(true))
    );
    let got =
        ask(&mut server, 6, "prompts/get", json!({"name": "greet", "arguments": {"name": "Ada"}}));
    assert_eq!(
        got["result"]["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Hello, Ada!"}}])
    );
    let missing_arg = ask(&mut server, 7, "prompts/get", json!({"name": "greet"}));
    assert_eq!(missing_arg["error"]["message"], "Missing required argument: name");
    assert_eq!(error_code(&ask(&mut server, 8, "prompts/get", json!({"name": "x"}))), -32602);
}

#[test]
fn fault_exit_and_hang_do_not_answer() {
    let mut server = faulty();
    let frame = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"exit","arguments":{"code":3}}}"#;
    assert_eq!(send(&mut server, frame), (vec![], vec![Deferred::Exit(3)]));
    // In a batch, nothing after the exit call runs.
    let batch = format!(
        r#"[{{"jsonrpc":"2.0","id":0,"method":"ping"}},{frame},{{"jsonrpc":"2.0","id":2,"method":"ping"}}]"#
    );
    let (answers, later) = send(&mut server, &batch);
    assert_eq!((answers.len(), later), (1, vec![Deferred::Exit(3)]));
    let frame = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hang"}}"#;
    assert_eq!(send(&mut server, frame), (vec![], vec![]));
    assert_eq!(ask(&mut server, 2, "ping", json!({}))["result"], json!({}));
}

#[test]
fn fault_noise_and_notify_write_extra_lines_first() {
    let mut server = faulty();
    let frame = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"noise","arguments":{}}}"#;
    let (out, _) = send_raw(&mut server, frame);
    let (noise, rest) = out.split_at(NOISE_LINE.len());
    assert_eq!(noise, NOISE_LINE);
    assert_eq!(text(&lines(rest)[0]), "noise");

    let frame = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"notify"}}"#;
    let (answers, _) = send(&mut server, frame);
    assert_eq!(answers[0], json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
    assert_eq!(
        answers[1],
        json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hello"}})
    );
    assert_eq!(answers[2]["id"], 2);
}

#[test]
fn fault_stderr_writes_exactly_n_bytes_of_lines() {
    for len in [0usize, 1, 2, 99, 100, 101, 65_500, 65_501, 200_000] {
        let mut server = faulty();
        let answer = call(&mut server, "stderr", json!({"bytes": len}));
        assert_eq!(text(&answer), format!("wrote {len} bytes to stderr"));
        let err = &server.stderr;
        assert_eq!(err.len(), len);
        assert!(err.iter().all(|&b| b == b'e' || b == b'\n'));
        assert!(len == 0 || err.ends_with(b"\n"), "ends with a newline at {len}");
        assert!(err.split(|&b| b == b'\n').all(|line| line.len() < 100));
    }
}

#[test]
fn fault_ask_roots_relays_the_clients_answer() {
    let mut server = faulty();
    let ask_frame = |id: i64| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"ask_roots"}}}}"#
        )
    };
    let (sent, _) = send(&mut server, &ask_frame(10));
    // The session numbers the server's own requests.
    assert_eq!(sent, [json!({"jsonrpc": "2.0", "id": 1, "method": "roots/list"})]);
    let (sent, _) = send(&mut server, &ask_frame(11));
    assert_eq!(sent[0]["id"], 2);
    // Other requests are served while the roots requests are pending.
    assert_eq!(ask(&mut server, 12, "ping", json!({}))["result"], json!({}));
    let (answers, _) = send(
        &mut server,
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no roots"}}"#,
    );
    assert_eq!((&answers[0]["id"], &answers[0]["result"]["isError"]), (&json!(11), &json!(true)));
    let relayed: Value = serde_json::from_str(text(&answers[0])).unwrap();
    assert_eq!(relayed, json!({"code": -32601, "message": "no roots"}));
    let (answers, _) =
        send(&mut server, r#"{"jsonrpc":"2.0","id":1,"result":{"roots":[{"uri":"file:///tmp"}]}}"#);
    assert_eq!(answers[0]["id"], 10);
    assert!(answers[0]["result"].get("isError").is_none());
    let relayed: Value = serde_json::from_str(text(&answers[0])).unwrap();
    assert_eq!(relayed, json!({"roots": [{"uri": "file:///tmp"}]}));
    // A repeated or unknown response is ignored.
    let again = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    assert_eq!(send(&mut server, again), (vec![], vec![]));
}

/// A writer that records the size of every write it receives.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Vec<u8>>>>);

impl Write for Recorder {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().push(buf.to_vec());
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn pipelined_requests_are_answered_in_one_write() {
    let mut input = format!("{INIT}\n");
    for i in 1..=500 {
        input.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/call\",\"params\":{{\"name\":\"echo\",\"arguments\":{{\"text\":\"m{i}\"}}}}}}\n"
        ));
    }
    let recorder = Recorder::default();
    let output = Arc::new(Mutex::new(BufWriter::with_capacity(1 << 20, recorder.clone())));
    let ended = serve(input.as_bytes(), &output, fresh(Config::default())).unwrap();
    assert_eq!(ended, Ended::Eof);
    let writes = recorder.0.lock().unwrap();
    assert_eq!(writes.len(), 1, "answers were written in {} writes", writes.len());
    let answers = lines(&writes[0]);
    assert_eq!(answers.len(), 501);
    assert_eq!(text(&answers[500]), "m500");
}

#[test]
fn exit_flushes_earlier_answers_and_stops() {
    let input = format!(
        "{INIT}\n{}\n{}\n{}\n",
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"exit","arguments":{"code":42}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
    );
    let output = Arc::new(Mutex::new(Vec::new()));
    let server = fresh(Config { fault_tools: true, ..Config::default() });
    assert_eq!(serve(input.as_bytes(), &output, server).unwrap(), Ended::Exit(42));
    let answers = lines(&output.lock().unwrap());
    let ids: Vec<_> = answers.iter().map(|a| a["id"].clone()).collect();
    assert_eq!(ids, [json!(0), json!(1)]);
}

/// Input that arrives in pieces over time; EOF when the sender is dropped.
struct ChannelReader {
    chunks: mpsc::Receiver<Vec<u8>>,
    pending: Vec<u8>,
}

impl Read for ChannelReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pending.is_empty() {
            match self.chunks.recv() {
                Ok(chunk) => self.pending = chunk,
                Err(mpsc::RecvError) => return Ok(0),
            }
        }
        let n = buf.len().min(self.pending.len());
        buf[..n].copy_from_slice(&self.pending[..n]);
        self.pending.drain(..n);
        Ok(n)
    }
}

fn wait_for(output: &Mutex<Vec<u8>>, what: &str, pred: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let answers = lines(&output.lock().unwrap());
        if pred(&answers) {
            return answers;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}: {answers:?}");
        thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn slow_calls_do_not_block_other_requests() {
    let (tx, rx) = mpsc::channel();
    let output = Arc::new(Mutex::new(Vec::new()));
    let loop_output = Arc::clone(&output);
    let looping = thread::spawn(move || {
        let input = ChannelReader { chunks: rx, pending: Vec::new() };
        serve(input, &loop_output, fresh(Config::default()))
    });
    tx.send(format!("{INIT}\n").into_bytes()).unwrap();
    // The ping is sent after the slow call: a server that blocks on `slow` answers it second,
    // one that does not answers it first (unless it stalls for the whole 2 s).
    let slow = r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"slow","arguments":{"ms":2000}}}"#;
    tx.send(format!("{slow}\n").into_bytes()).unwrap();
    let started = Instant::now();
    tx.send(b"{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}\n".to_vec()).unwrap();
    let answers = wait_for(&output, "both answers", |a| {
        a.iter().any(|a| a["id"] == "p") && a.iter().any(|a| a["id"] == "s")
    });
    let at = |id: &str| answers.iter().position(|a| a["id"] == id).unwrap();
    assert!(at("p") < at("s"), "the ping waited for the slow call: {answers:?}");
    assert!(started.elapsed() >= Duration::from_millis(2000), "slow returned early");
    assert_eq!(text(&answers[at("s")]), "slept 2000 ms");
    drop(tx);
    assert_eq!(looping.join().unwrap().unwrap(), Ended::Eof);
}

#[test]
fn export_links_to_a_streamed_resource_of_exact_size() {
    let mut server = ready(Config::default());
    let answer = call(&mut server, "export", json!({"bytes": 100_000}));
    let link = &answer["result"]["content"][0];
    assert_eq!(link["type"], "resource_link");
    assert_eq!(link["size"], 100_000);
    let uri = link["uri"].as_str().unwrap().to_owned();
    let read = ask(&mut server, 8, "resources/read", json!({"uri": uri}));
    let text = read["result"]["contents"][0]["text"].as_str().unwrap();
    assert_eq!(text.len(), 100_000);
    assert!(text.bytes().enumerate().all(|(i, b)| b == super::wire::blob_byte(i)));
    let bad = ask(&mut server, 9, "resources/read", json!({"uri": "ringmcp://reference/export/x"}));
    assert_eq!(bad["error"]["code"], -32002);
}

#[test]
fn blob_as_link_answers_like_export() {
    let mut server = ready(Config::default());
    let linked = call(&mut server, "blob", json!({"bytes": 5000, "as_link": true}));
    let exported = call(&mut server, "export", json!({"bytes": 5000}));
    assert_eq!(linked["result"], exported["result"]);
    assert_eq!(linked["result"]["content"][0]["type"], "resource_link");
    let inline = call(&mut server, "blob", json!({"bytes": 5000, "as_link": false}));
    assert_eq!(inline["result"]["content"][0]["text"].as_str().unwrap().len(), 5000);
    let bad = call(&mut server, "blob", json!({"bytes": 1, "as_link": "yes"}));
    assert_eq!(bad["error"]["code"], -32602);
}

#[test]
fn subscriptions_logging_and_completion() {
    let mut server = ready(Config { page_size: None, fault_tools: true, ..Config::default() });
    let uri = "ringmcp://reference/readme";
    assert_eq!(
        ask(&mut server, 1, "resources/subscribe", json!({"uri": uri}))["result"],
        json!({})
    );
    let mut out = Vec::new();
    let frame = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "touch", "arguments": {"times": 2}}});
    server.handle(frame.to_string().as_bytes(), &mut out).unwrap();
    let lines: Vec<Value> = out
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    for update in &lines[..2] {
        assert_eq!(update["method"], "notifications/resources/updated");
        assert_eq!(update["params"]["uri"], uri);
    }
    assert_eq!(lines[2]["id"], 2);
    ask(&mut server, 3, "resources/unsubscribe", json!({"uri": uri}));
    assert_eq!(
        text(&call(&mut server, "touch", json!({"times": 5}))),
        "touched 0 resources 5 times"
    );
    assert_eq!(
        ask(&mut server, 4, "logging/setLevel", json!({"level": "warning"}))["result"],
        json!({})
    );
    assert_eq!(
        error_code(&ask(&mut server, 5, "logging/setLevel", json!({"level": "loud"}))),
        -32602
    );
    let done = ask(
        &mut server,
        6,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "b"}}),
    );
    assert_eq!(done["result"]["completion"]["values"], json!(["bob"]));
}

/// `_meta` of a 2026-07-28 request at `version`.
fn modern_params(version: &str, mut params: Value) -> Value {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": version,
                             "io.modelcontextprotocol/clientCapabilities": {}});
    params
}

#[test]
fn a_modern_server_checks_meta_and_serves_statelessly() {
    use super::handler::ServeEra;
    let mut server = fresh(Config { era: ServeEra::Modern, ..Config::default() });
    // No initialize in 2026-07-28, and every request must carry `_meta`.
    let answer = ask(&mut server, 1, "tools/list", json!({}));
    assert_eq!(error_code(&answer), -32602);
    let answer = ask(&mut server, 2, "server/discover", modern_params("2099-01-01", json!({})));
    assert_eq!(error_code(&answer), -32022);
    assert_eq!(answer["error"]["data"]["supported"], json!(["2026-07-28"]));
    let mut no_caps = modern_params("2026-07-28", json!({}));
    no_caps["_meta"].as_object_mut().unwrap().remove("io.modelcontextprotocol/clientCapabilities");
    assert_eq!(error_code(&ask(&mut server, 3, "tools/list", no_caps)), -32602);
    let discover = ask(&mut server, 4, "server/discover", modern_params("2026-07-28", json!({})));
    let result = &discover["result"];
    assert_eq!(result["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(
        (result["resultType"].as_str(), result["ttlMs"].as_i64()),
        (Some("complete"), Some(0))
    );
    let tools = ask(&mut server, 5, "tools/list", modern_params("2026-07-28", json!({})));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"confirm"), "{names:?}");
    // The MRTR tool: input_required with an opaque state, then the answer with it.
    let call =
        modern_params("2026-07-28", json!({"name": "confirm", "arguments": {"action": "x"}}));
    let first = ask(&mut server, 6, "tools/call", call.clone())["result"].clone();
    assert_eq!(first["resultType"], "input_required");
    assert_eq!(first["inputRequests"]["ok"]["method"], "elicitation/create");
    let mut retry = call;
    retry["inputResponses"] = json!({"ok": {"action": "accept", "content": {"sure": true}}});
    retry["requestState"] = first["requestState"].clone();
    let done = ask(&mut server, 7, "tools/call", retry.clone())["result"].clone();
    assert_eq!(done["content"][0]["text"], "x: accept (requestState intact)");
    // A state replayed (or forged) is not intact.
    let again = ask(&mut server, 8, "tools/call", retry)["result"].clone();
    assert_eq!(again["isError"], true);
    // A legacy server in dual mode still does initialize.
    let mut dual = fresh(Config { era: ServeEra::Dual, ..Config::default() });
    let (answers, _) = send(&mut dual, INIT);
    assert_eq!(answers[0]["result"]["protocolVersion"], "2025-06-18");
}

#[test]
fn a_silent_legacy_server_ignores_the_probe() {
    use super::handler::ServeEra;
    let mut server = fresh(Config { era: ServeEra::Silent, ..Config::default() });
    let probe = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                       "params": modern_params("2026-07-28", json!({}))});
    let (answers, _) = send(&mut server, &probe.to_string());
    assert!(answers.is_empty(), "{answers:?}");
    let (answers, _) = send(&mut server, INIT);
    assert!(answers[0]["result"].is_object());
}
