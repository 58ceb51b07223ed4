//! A `ringmcp gateway` child driven line by line by the tests, as an upstream client.

use std::path::Path;
use std::process::Command;

use serde_json::json;

use crate::util::ringmcp_bin;

/// A `ringmcp gateway` child driven line by line: requests, their answers, and the
/// notifications in between.
pub(crate) struct Upstream {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    /// What the gateway wrote, line by line (a line that is not JSON as its error: a panic on
    /// the reader thread would be lost, and the test would only see no answer).
    lines: std::sync::mpsc::Receiver<Result<serde_json::Value, String>>,
    next_id: u64,
    pub(crate) notifications: Vec<serde_json::Value>,
    /// The gateway's own requests (elicitation, sampling) seen so far, answered by `answerer`.
    pub(crate) asked: Vec<serde_json::Value>,
    answerer: Option<Answerer>,
    /// The answer to its `initialize`.
    pub(crate) init: serde_json::Value,
}

/// Answers the gateway's requests (elicitation, sampling): the `result` to send back.
pub(crate) type Answerer = Box<dyn FnMut(&serde_json::Value) -> serde_json::Value>;

impl Upstream {
    pub(crate) fn start(config: &Path, extra: &[&str]) -> Upstream {
        Upstream::start_env(config, extra, &[])
    }

    pub(crate) fn start_env(config: &Path, extra: &[&str], env: &[(&str, &Path)]) -> Upstream {
        Upstream::start_with(config, extra, env, json!({}), None)
    }

    /// Started declaring `capabilities`; `answerer` answers the gateway's requests.
    pub(crate) fn start_with(
        config: &Path,
        extra: &[&str],
        env: &[(&str, &Path)],
        capabilities: serde_json::Value,
        answerer: Option<Answerer>,
    ) -> Upstream {
        use std::io::BufRead;
        let mut child = Command::new(ringmcp_bin())
            .arg("gateway")
            .arg("--config")
            .arg(config)
            .args(extra)
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("starting ringmcp gateway");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value = serde_json::from_str(&line)
                    .map_err(|e| format!("the gateway wrote a non-JSON line ({e}): {line}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let mut up = Upstream {
            child,
            stdin,
            lines,
            next_id: 0,
            notifications: Vec::new(),
            asked: Vec::new(),
            answerer,
            init: serde_json::Value::Null,
        };
        let init = up.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
                   "clientInfo": {"name": "test", "version": "1"}}),
        );
        assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
        up.init = init;
        up.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        up
    }

    pub(crate) fn send(&mut self, message: &serde_json::Value) {
        use std::io::Write;
        let mut line = serde_json::to_vec(message).unwrap();
        line.push(b'\n');
        self.stdin.write_all(&line).expect("writing to the gateway");
    }

    /// Sends a request; returns its id.
    pub(crate) fn submit(&mut self, method: &str, params: serde_json::Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The answer to request `id` (other answers and notifications seen meanwhile are kept).
    pub(crate) fn answer(&mut self, id: u64) -> serde_json::Value {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let message = self.lines.recv_timeout(left).unwrap_or_else(|_| {
                panic!("no answer to request {id} within 60 s: the gateway hangs")
            });
            let message = message.unwrap_or_else(|e| panic!("{e}"));
            if message["id"] == json!(id) {
                return message;
            }
            if message.get("id").is_none() {
                self.notifications.push(message);
            } else if message.get("method").is_some() && self.answerer.is_some() {
                let result = (self.answerer.as_mut().unwrap())(&message);
                self.send(&json!({"jsonrpc": "2.0", "id": message["id"], "result": result}));
                self.asked.push(message);
            } else {
                panic!("an answer to a request not waited for: {message}");
            }
        }
    }

    pub(crate) fn request(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        let id = self.submit(method, params);
        self.answer(id)
    }

    pub(crate) fn call(&mut self, tool: &str, arguments: serde_json::Value) -> serde_json::Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    pub(crate) fn status(&mut self, server: &str) -> serde_json::Value {
        let r = self.call("ringmcp__status", json!({}));
        let servers = r["result"]["structuredContent"]["servers"].as_array().unwrap().clone();
        servers.into_iter().find(|s| s["name"] == server).unwrap()
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
