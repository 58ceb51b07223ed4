//! The egress proxy side by side with a direct loopback connection, in one run (the numbers in
//! PERFORMANCE.md, "Egress"). The same Python client runs twice: unconfined against the host's
//! loopback server, and sandboxed with network, where every byte crosses init's capture and the
//! host's proxy. Run it with `cargo run --release --example egress_bench [MB] [ROUNDS]`.
//!
//! * download: MB megabytes (default 100) from a loopback server, best of three;
//! * connect: 200 sequential connections, each one request and its first byte back
//!   (by IP literal, and by name through the sandbox's DNS stub);
//! * kept-alive: ROUNDS (default 2000) 64-byte request/answer round trips on one connection;
//! * idle: 500 idle proxied connections, the host process's RSS before and after.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ringmcp::egress::{Proxy, ProxyConfig};
use ringmcp::policy::egress::Network;
use ringmcp::sandbox::{self, Launch, SandboxConfig};
use ringmcp::testkit::egress::MapResolver;

/// Serves: `D<n>\n` → n bytes; `P\n` → one byte per 64-byte message until EOF (echo of one
/// byte); anything else → one byte.
fn server() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for c in l.incoming() {
            let Ok(mut c) = c else { continue };
            std::thread::spawn(move || {
                let _ = c.set_nodelay(true);
                let mut first = [0u8; 64];
                let Ok(n) = c.read(&mut first) else { return };
                if n > 0 && first[0] == b'D' {
                    let text = String::from_utf8_lossy(&first[1..n]);
                    let total: usize = text.trim().parse().unwrap_or(0);
                    let chunk = vec![b'x'; 1 << 20];
                    let mut left = total;
                    while left > 0 {
                        let k = left.min(chunk.len());
                        if c.write_all(&chunk[..k]).is_err() {
                            return;
                        }
                        left -= k;
                    }
                } else if n > 0 && first[0] == b'P' {
                    let mut buf = [0u8; 64];
                    let _ = c.write_all(b"!");
                    while let Ok(k) = c.read(&mut buf) {
                        if k == 0 || c.write_all(&buf[..1]).is_err() {
                            break;
                        }
                    }
                } else {
                    let _ = c.write_all(b"!");
                }
            });
        }
    });
    port
}

const CLIENT: &str = r#"
import socket, sys, time, json
host, port, mode, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
out = {}
if mode == "download":
    best = None
    for _ in range(3):
        s = socket.create_connection((host, port))
        t = time.perf_counter()
        s.sendall(b"D%d\n" % n)
        got = 0
        buf = bytearray(1 << 20)
        while got < n:
            k = s.recv_into(buf)
            if not k:
                break
            got += k
        dt = time.perf_counter() - t
        s.close()
        best = dt if best is None else min(best, dt)
    out["seconds"] = best
elif mode == "connect":
    times = []
    for _ in range(n):
        t = time.perf_counter()
        s = socket.create_connection((host, port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(b"x\n")
        s.recv(1)
        times.append(time.perf_counter() - t)
        s.close()
    times.sort()
    out["p50_us"] = times[len(times) // 2] * 1e6
    out["p99_us"] = times[int(len(times) * 0.99)] * 1e6
elif mode == "pingpong":
    s = socket.create_connection((host, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(b"P\n" + b" " * 62)
    s.recv(1)
    msg = b"m" * 64
    times = []
    for _ in range(n):
        t = time.perf_counter()
        s.sendall(msg)
        s.recv(1)
        times.append(time.perf_counter() - t)
    times.sort()
    out["p50_us"] = times[len(times) // 2] * 1e6
    out["p99_us"] = times[int(len(times) * 0.99)] * 1e6
elif mode == "idle":
    conns = [socket.create_connection((host, port)) for _ in range(n)]
    print(json.dumps({"open": len(conns)}), flush=True)
    sys.stdin.read()
print(json.dumps(out), flush=True)
"#;

/// Accepts and holds connections without a thread each (so the idle measurement sees the
/// proxy's memory, not the test server's stacks).
fn holding_server() -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in l.incoming() {
            held.extend(c.ok());
            seen.store(held.len(), std::sync::atomic::Ordering::Relaxed);
        }
    });
    (port, count)
}

fn python() -> String {
    let out =
        Command::new("python3").args(["-c", "import sys; print(sys.executable)"]).output().unwrap();
    let exe = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    std::fs::canonicalize(&exe).map(|p| p.to_string_lossy().into_owned()).unwrap_or(exe)
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(0)
}

fn main() {
    let mb: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100);
    let rounds: usize = std::env::args().nth(2).and_then(|a| a.parse().ok()).unwrap_or(2000);
    let port = server();
    let (hold, held) = holding_server();
    let py = python();
    let dir = std::env::temp_dir().join(format!("ringmcp-egress-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("client.py");
    std::fs::write(&script, CLIENT).unwrap();
    let proxy = Proxy::start(ProxyConfig {
        resolver: Arc::new(MapResolver::new(&[("bench.test", &["127.0.0.1"])])),
        limits: ringmcp::egress::Limits { max_connections: 1000, ..Default::default() },
        ..ProxyConfig::default()
    })
    .unwrap();
    let network = Network::allow([
        format!("127.0.0.1:{port}"),
        format!("bench.test:{port}"),
        format!("127.0.0.1:{hold}"),
    ])
    .unwrap();
    let run = |sandboxed: bool, host: &str, mode: &str, n: usize| -> serde_json::Value {
        let args: Vec<String> = vec![
            script.to_string_lossy().into(),
            host.into(),
            port.to_string(),
            mode.into(),
            n.to_string(),
        ];
        if !sandboxed {
            let out = Command::new(&py).args(&args).output().unwrap();
            return serde_json::from_slice(&out.stdout).unwrap();
        }
        let launch = Launch {
            program: py.clone().into(),
            args: args.iter().map(Into::into).collect(),
            sandbox: Some(
                SandboxConfig {
                    binds: vec![sandbox::plan::BindSpec::Path(dir.clone())],
                    memory: Some(1 << 30),
                    cpus: Some(sandbox::plan::Cores(2.0)),
                    ..SandboxConfig::standard()
                }
                .network(network.clone()),
            ),
            ..Launch::default()
        };
        let mut s = sandbox::spawn(&launch).unwrap();
        proxy.attach("bench", &network, s.egress.take().unwrap()).unwrap();
        drop(s.stdin);
        let mut out = String::new();
        std::fs::File::from(s.stdout).read_to_string(&mut out).unwrap();
        s.child.wait().unwrap();
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
    };
    let bytes = mb << 20;
    // Idle connections first, while the heap is fresh: the proxy's memory per connection, in
    // this process's RSS (freed memory of the later runs would hide it).
    let n = 500;
    let before = rss_kib();
    let launch = Launch {
        program: py.clone().into(),
        args: [
            script.to_string_lossy().into_owned(),
            "127.0.0.1".into(),
            hold.to_string(),
            "idle".into(),
            n.to_string(),
        ]
        .iter()
        .map(Into::into)
        .collect(),
        sandbox: Some(
            SandboxConfig {
                binds: vec![sandbox::plan::BindSpec::Path(dir.clone())],
                nofile: Some(4096),
                ..SandboxConfig::standard()
            }
            .network(network.clone()),
        ),
        ..Launch::default()
    };
    let mut s = sandbox::spawn(&launch).unwrap();
    proxy.attach("bench", &network, s.egress.take().unwrap()).unwrap();
    let mut line = [0u8; 64];
    let mut stdout = std::fs::File::from(s.stdout);
    let got = stdout.read(&mut line).unwrap_or(0);
    assert!(got > 0, "the idle client failed: {:?}", {
        let mut e = String::new();
        let _ = std::fs::File::from(s.stderr.try_clone().unwrap()).read_to_string(&mut e);
        e
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    while held.load(std::sync::atomic::Ordering::Relaxed) < n && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    let after = rss_kib();
    println!(
        "idle: {n} proxied connections held open ({} reached the server): host RSS {before} KiB -> {after} KiB, {:.1} KiB per connection",
        held.load(std::sync::atomic::Ordering::Relaxed),
        (after.saturating_sub(before)) as f64 / n as f64
    );
    drop(s.stdin);
    let _ = s.child.wait();
    println!(
        "egress bench: {} cores, loopback server, client python3",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let direct = run(false, "127.0.0.1", "download", bytes)["seconds"].as_f64().unwrap();
    let proxied = run(true, "127.0.0.1", "download", bytes)["seconds"].as_f64().unwrap();
    let gbs = |s: f64| bytes as f64 / s / 1e9;
    println!(
        "download {mb} MiB: direct {:.3} s ({:.2} GB/s), proxied {:.3} s ({:.2} GB/s), proxied/direct throughput {:.2}",
        direct,
        gbs(direct),
        proxied,
        gbs(proxied),
        direct / proxied
    );
    for (label, sandboxed, host) in [
        ("direct", false, "127.0.0.1"),
        ("proxied, IP literal", true, "127.0.0.1"),
        ("proxied, by name (stub DNS)", true, "bench.test"),
    ] {
        let r = run(sandboxed, host, "connect", 200);
        println!(
            "connect + first byte, {label}: p50 {:.0} µs, p99 {:.0} µs",
            r["p50_us"].as_f64().unwrap(),
            r["p99_us"].as_f64().unwrap()
        );
    }
    for (label, sandboxed) in [("direct", false), ("proxied", true)] {
        let r = run(sandboxed, "127.0.0.1", "pingpong", rounds);
        println!(
            "kept-alive round trip (64 B), {label}: p50 {:.1} µs, p99 {:.1} µs",
            r["p50_us"].as_f64().unwrap(),
            r["p99_us"].as_f64().unwrap()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    let started = Instant::now();
    drop(proxy);
    println!("proxy stopped in {:?}", started.elapsed());
}
