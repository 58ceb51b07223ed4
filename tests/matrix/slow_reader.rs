//! The matrix's client-side fault: an upstream client of `ringmcp gateway --http` that stops
//! reading. Its session's GET stream and a POST's SSE answer are never read while its backend
//! floods the stream with resource updates (300,000, some 40 MB); meanwhile another client of
//! the same gateway makes `c` calls. Those calls answer within their deadline, the gateway's
//! memory stays bounded (its lanes and history are; the stream is dropped), and once the
//! clients are gone and the gateway is told to stop (SIGTERM) it exits cleanly and leaves no
//! backend, process or cgroup.

use std::io::{BufRead, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ringmcp::host::{Host, ServerSpec};
use serde_json::json;

use super::util::{TempDir, open_session, post_raw, ringmcp_bin, rss};
use super::{DEADLINE, GRACE, Outcome, cgroups, kind, settle};

/// The most the gateway may grow while its client does not read (a queue of the flood would
/// be some 40 MB per flood, and there are two).
const BOUND: u64 = 64 << 20;

pub(super) fn cell(c: usize) -> Outcome {
    let dir = TempDir::new("matrix-slow");
    let config = dir.0.join(format!("cell-{}-slowreader-{c}.json", std::process::id()));
    let servers = json!({"mcpServers": {
        "ref": {"command": ringmcp_bin(), "args": ["serve", "--fault-tools"]}}});
    std::fs::write(&config, serde_json::to_vec(&servers).unwrap()).unwrap();
    let mut gateway = Command::new(ringmcp_bin())
        .args(["gateway", "--http", "0", "--no-auth", "--timeout", "4", "--config"])
        .arg(&config)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting ringmcp gateway --http");
    let address = listening(&mut gateway);
    let mut outcome = Outcome {
        answered: 0,
        errors: Default::default(),
        slowest: Duration::ZERO,
        problems: Vec::new(),
    };

    // The client that stops reading: its GET stream, and the flood's own POST.
    let session = open_session(&address);
    let subscribe = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
                           "params": {"uri": "ringmcp://reference/readme"}});
    let subscribed = post(&address, &session, &subscribe.to_string());
    assert!(subscribed.contains("\"result\""), "{subscribed}");
    let mut get = TcpStream::connect(&address).unwrap();
    write!(
        get,
        "GET /mcp HTTP/1.1\r\nHost: {address}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n"
    )
    .unwrap();
    let rss_before = rss(gateway.id());
    let backends = descendants(gateway.id());
    let groups = cgroups(&backends);
    let floods: Vec<TcpStream> = (3..5)
        .map(|id| {
            let touch = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                               "params": {"name": "ref__touch", "arguments": {"times": 300_000}}});
            send_post(&address, &session, &touch.to_string())
        })
        .collect();

    // The other client, meanwhile.
    let host = Host::builder().request_timeout(DEADLINE).build().expect("io_uring host");
    let url = format!("http://{address}/mcp");
    let good = host.spawn_blocking(ServerSpec::http("gw", url)).expect("the gateway answers");
    let t0 = Instant::now();
    let calls = (0..c).map(|i| {
        let call = good.call("ref__echo", json!({"text": format!("fine {i}")}));
        let call = call.timeout(Some(DEADLINE)).send();
        async move { (call.await, t0.elapsed()) }
    });
    for (result, took) in futures::executor::block_on(futures::future::join_all(calls)) {
        outcome.slowest = outcome.slowest.max(took);
        match result {
            Ok(r) if r.text().contains("fine") => outcome.answered += 1,
            Ok(r) => outcome.problems.push(format!("a wrong answer: {}", r.text())),
            Err(e) => {
                *outcome.errors.entry(kind(&e)).or_default() += 1;
                outcome.problems.push(format!("another client's call failed: {e}"));
            }
        }
    }
    if outcome.slowest > DEADLINE + GRACE {
        outcome.problems.push(format!("a call took {:?}", outcome.slowest));
    }
    // The floods end (the slow session's backend still answers its own POSTs' senders).
    let deadline = Instant::now() + Duration::from_secs(60);
    while !flooded(&address, &session) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    let grown = rss(gateway.id()).saturating_sub(rss_before);
    if grown > BOUND {
        outcome.problems.push(format!(
            "the gateway grew by {} MiB for a client that does not read",
            grown >> 20
        ));
    }

    drop((good, host, get, floods));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(gateway.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    match settle(|| gateway.try_wait().unwrap(), Option::is_some) {
        Ok(()) => {
            let status = gateway.wait().unwrap();
            if !status.success() {
                outcome.problems.push(format!("the gateway exited with {status} on SIGTERM"));
            }
        }
        Err(_) => {
            outcome.problems.push("the gateway did not exit on SIGTERM".into());
            let _ = gateway.kill();
            let _ = gateway.wait();
        }
    }
    let alive = |pids: &[u32]| pids.iter().copied().filter(|p| alive(*p)).collect::<Vec<_>>();
    if let Err(left) = settle(|| alive(&backends), Vec::is_empty) {
        outcome.problems.push(format!("backends left: {left:?}"));
    }
    if let Err(left) =
        settle(|| groups.iter().filter(|g| g.exists()).cloned().collect::<Vec<_>>(), Vec::is_empty)
    {
        outcome.problems.push(format!("cgroups left: {left:?}"));
    }
    outcome
}

/// The `host:port` the gateway prints once it listens.
fn listening(gateway: &mut std::process::Child) -> String {
    let stderr = gateway.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.contains("/mcp") {
                let _ = tx.send(line);
            }
        }
    });
    let line = rx.recv_timeout(Duration::from_secs(30)).expect("the gateway prints its URL");
    let url = line.split_whitespace().find(|w| w.starts_with("http://")).unwrap();
    url.trim_start_matches("http://").split('/').next().unwrap().to_owned()
}

/// Writes a POST of `body` in `session` and returns its connection, unread.
fn send_post(address: &str, session: &str, body: &str) -> TcpStream {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nMcp-Session-Id: {session}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    stream
}

/// A POST in `session` and its whole answer.
fn post(address: &str, session: &str, body: &str) -> String {
    post_raw(address, &[("Mcp-Session-Id", session)], body)
}

/// Whether the slow session's backend is done with the floods: a call on it answers (its
/// answers come after the updates it sent before).
fn flooded(address: &str, session: &str) -> bool {
    let echo = json!({"jsonrpc": "2.0", "id": 90, "method": "tools/call",
                      "params": {"name": "ref__echo", "arguments": {"text": "after"}}});
    post(address, session, &echo.to_string()).contains("after")
}

/// Every process under `pid`.
fn descendants(pid: u32) -> Vec<u32> {
    let mut all = Vec::new();
    let mut next = vec![pid];
    while let Some(p) = next.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else { continue };
        for task in tasks.flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for child in children.split_whitespace().filter_map(|c| c.parse().ok()) {
                all.push(child);
                next.push(child);
            }
        }
    }
    all
}

/// Whether `pid` runs (a zombie does not).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')))
}
