//! Network for sandboxed servers, for real (docs/egress.md): sandboxed clients (Python's
//! urllib through `HTTP_PROXY` and directly, Node's `fetch`, raw sockets, TLS) reach a test
//! HTTP and HTTPS server on the host's loopback through the egress proxy, by names that a
//! test resolver maps to loopback, and are refused everything else. The dialer only ever
//! dials loopback: no test connects anywhere else, even to see it refused (a connect to
//! another address inside the sandbox lands on the sandbox's own capture, in a namespace the
//! test made).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ringmcp::egress::{ConnectionRecord, EgressEvent, Proxy, ProxyConfig};
use ringmcp::policy::egress::{Network, NetworkPolicy};
use ringmcp::sandbox::{self, Launch, SandboxConfig, plan::BindSpec};
use ringmcp::testkit::egress::{LoopbackDialer, MapResolver};
use serde_json::{Value, json};

use crate::util::{TempDir, deps_dir, open_fds, python3, require, ringmcp_bin, skip_machine};

/// A plain HTTP server on the host's loopback: answers `hello from HOST` (its Host header).
pub(crate) fn http_server() -> (u16, Arc<Mutex<usize>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let served = Arc::new(Mutex::new(0));
    let count = served.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let count = count.clone();
            std::thread::spawn(move || {
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match conn.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&head);
                let host = text
                    .lines()
                    .find_map(|l| l.strip_prefix("Host: ").or_else(|| l.strip_prefix("host: ")))
                    .unwrap_or("")
                    .to_owned();
                let body = format!("hello from {host}");
                let _ = write!(
                    conn,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                *count.lock().unwrap() += 1;
            });
        }
    });
    (port, served)
}

/// An HTTPS server (self-signed, made with openssl) on the host's loopback, run by python.
struct HttpsServer {
    child: std::process::Child,
    port: u16,
    _dir: TempDir,
}

impl Drop for HttpsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn https_server(python: &Path) -> Option<HttpsServer> {
    let dir = TempDir::new("egress-tls");
    let (key, cert) = (dir.0.join("key.pem"), dir.0.join("cert.pem"));
    let made = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=secure.test",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !made.is_ok_and(|s| s.success()) {
        ringmcp::testkit::skip(
            ringmcp::testkit::SkipKind::Dependency,
            "openssl could not make a test certificate",
        );
        return None;
    }
    let script = r#"
import http.server, ssl, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("tls hello from " + self.headers.get("Host", "")).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print(srv.server_address[1], flush=True)
srv.serve_forever()
"#;
    let mut child = Command::new(python)
        .args(["-c", script])
        .arg(&cert)
        .arg(&key)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    let port = line.trim().parse().expect("the HTTPS server's port");
    Some(HttpsServer { child, port, _dir: dir })
}

/// The sandboxed client: runs each check of argv[1] (JSON) and prints the outcomes as JSON.
const CLIENT: &str = r#"
import json, select, socket, ssl, sys, urllib.request
unverified = ssl._create_unverified_context()
def run(op):
    kind = op[0]
    if kind == "resolve":
        return socket.gethostbyname(op[1])
    if kind == "urllib":
        return urllib.request.urlopen(op[1], timeout=10, context=unverified).read().decode()
    if kind == "urllib_direct":
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=unverified))
        return opener.open(op[1], timeout=10).read().decode()
    if kind == "raw":
        s = socket.create_connection((op[1], op[2]), timeout=10)
        s.sendall(op[3].encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        if not data:
            raise ConnectionError("closed with no answer")
        return data.decode(errors="replace")
    if kind == "tls":
        s = socket.create_connection((op[1], op[2]), timeout=10)
        t = unverified.wrap_socket(s, server_hostname=op[3])
        t.sendall(("GET / HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n" % (op[3], op[2])).encode())
        data = b""
        while True:
            chunk = t.recv(65536)
            if not chunk:
                break
            data += chunk
        return data.decode(errors="replace")
    if kind == "burst":
        # Every connect started before any completes: the captures reach init at once.
        addr = socket.getaddrinfo(op[1], op[2], socket.AF_INET, socket.SOCK_STREAM)[0][4]
        conns = []
        for _ in range(op[3]):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            s.connect_ex(addr)
            conns.append(s)
        for s in conns:
            select.select([], [s], [], 10)
            s.setblocking(True)
            s.settimeout(10)
        answers = 0
        for s in conns:
            s.sendall(b"GET / HTTP/1.1\r\nHost: %s\r\n\r\n" % op[1].encode())
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
            answers += b"hello" in data
        return "%d answers" % answers
    if kind == "many":
        for _ in range(op[3]):
            s = socket.create_connection((op[1], op[2]), timeout=10)
            s.sendall(b"GET / HTTP/1.1\r\nHost: %s\r\n\r\n" % op[1].encode())
            while s.recv(65536):
                pass
            s.close()
        return "done"
    raise ValueError(kind)
out = []
for op in json.loads(sys.argv[1]):
    try:
        out.append({"ok": True, "out": run(op)})
    except Exception as e:
        out.append({"ok": False, "out": "%s: %s" % (type(e).__name__, e)})
print(json.dumps(out))
"#;

/// Whether the machine can build sandboxes with network (user and network namespaces and
/// local routes in them), asked of util-linux and iproute2: a probe that shares no code with
/// the capture under test.
pub(crate) fn capture_works() -> bool {
    let out = Command::new("unshare")
        .args(["--user", "--map-root-user", "--net", "--mount", "--pid", "--fork"])
        .args(["sh", "-c", "ip link set lo up && ip route add local 0.0.0.0/0 dev lo"])
        .stdin(Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => true,
        Ok(o) => {
            skip_machine(format!(
                "this machine cannot route in a user-owned network namespace: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            ));
            false
        }
        Err(e) => {
            skip_machine(format!("cannot run unshare/ip to probe network namespaces: {e}"));
            false
        }
    }
}

struct Trial {
    resolver: Arc<MapResolver>,
    dialer: Arc<LoopbackDialer>,
    events: Arc<Mutex<Vec<EgressEvent>>>,
    proxy: Option<Proxy>,
}

impl Trial {
    fn new(map: &[(&str, &str)]) -> Trial {
        let names: Vec<(&str, [&str; 1])> = map.iter().map(|&(n, a)| (n, [a])).collect();
        let names: Vec<(&str, &[&str])> = names.iter().map(|(n, a)| (*n, &a[..])).collect();
        let resolver = Arc::new(MapResolver::new(&names));
        let dialer = Arc::new(LoopbackDialer::default());
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink_events = events.clone();
        let config = ProxyConfig {
            resolver: resolver.clone(),
            dialer: dialer.clone(),
            sink: Some(Arc::new(move |e: &EgressEvent| {
                sink_events.lock().unwrap().push(e.clone())
            })),
            // The burst below holds 600 at once.
            limits: ringmcp::egress::Limits { max_connections: 1024, ..Default::default() },
        };
        Trial { resolver, dialer, events, proxy: Some(Proxy::start(config).unwrap()) }
    }

    /// Runs `program args` sandboxed with `network`, its stdout back.
    fn run(
        &self,
        network: &Network,
        program: &Path,
        args: &[&str],
        binds: &[PathBuf],
        env: &[(&str, &str)],
    ) -> String {
        let config = SandboxConfig {
            binds: binds.iter().cloned().map(BindSpec::Path).collect(),
            ..SandboxConfig::standard()
        }
        .network(network.clone());
        let launch = Launch {
            program: program.into(),
            args: args.iter().map(Into::into).collect(),
            env: env.iter().map(|(k, v)| (k.into(), v.into())).collect(),
            cwd: None,
            sandbox: Some(config),
        };
        let mut spawned = sandbox::spawn(&launch).expect("sandboxed spawn");
        let channel = spawned.egress.take().expect("a channel for a server with network");
        self.proxy.as_ref().unwrap().attach("trial", network, channel).unwrap();
        drop(spawned.stdin);
        let mut out = String::new();
        std::fs::File::from(spawned.stdout).read_to_string(&mut out).unwrap();
        let mut err = String::new();
        std::fs::File::from(spawned.stderr).read_to_string(&mut err).unwrap();
        let status = spawned.child.wait().unwrap();
        assert!(status.success(), "{status}: {err}");
        out
    }

    fn connections(&self) -> Vec<ConnectionRecord> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| match e {
                EgressEvent::Connection(c) => Some(c.clone()),
                _ => None,
            })
            .collect()
    }

    /// Waits until `n` connections have been reported (they are reported when they end).
    fn wait_for(&self, n: usize) -> Vec<ConnectionRecord> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let c = self.connections();
            if c.len() >= n || Instant::now() > deadline {
                return c;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Allowed names reach the loopback servers through every client; everything else is
/// refused, each refusal reported with its rule; DNS never reaches a resolver; only checked
/// loopback addresses are dialled.
#[test]
fn sandboxed_clients_reach_allowed_names_and_nothing_else() {
    if !capture_works() {
        return;
    }
    let Some(python) = python3() else { return };
    let (http, served) = http_server();
    let (burst, burst_served) = http_server();
    let Some(tls) = https_server(&python) else { return };
    let other = free_port();
    let dir = TempDir::new("egress-client");
    let client = dir.0.join("client.py");
    std::fs::write(&client, CLIENT).unwrap();
    let trial = Trial::new(&[
        ("api.test", "127.0.0.1"),
        ("secure.test", "127.0.0.1"),
        ("rebind.test", "127.0.0.1"),
        ("denied.test", "127.0.0.1"),
    ]);
    let network = Network::Proxied(
        NetworkPolicy::new(
            [
                format!("api.test:{http}"),
                format!("127.0.0.1:{http}"),
                format!("secure.test:{}", tls.port),
                format!("127.0.0.1:{}", tls.port),
                format!("rebind.test:{other}"),
                format!("*.test:{http}"),
                format!("api.test:{burst}"),
                format!("127.0.0.1:{burst}"),
            ],
            ["denied.test"].map(String::from),
        )
        .unwrap(),
    );
    let get = |host: &str| format!("GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    let s = tls.port;
    let ops = json!([
        ["resolve", "api.test"],                                // 0
        ["resolve", "unlisted.example"],                        // 1
        ["resolve", "secret-token-1234.exfil.example"],         // 2
        ["urllib", format!("http://api.test:{http}/")],         // 3 absolute form via HTTP_PROXY
        ["urllib_direct", format!("http://api.test:{http}/")],  // 4 captured connect
        ["raw", "api.test", http, get("api.test")],             // 5
        ["tls", "secure.test", s, "secure.test"],               // 6
        ["urllib", format!("https://secure.test:{s}/")],        // 7 CONNECT via HTTPS_PROXY
        ["urllib", format!("http://denied.test:{http}/")],      // 8 a denied name via the proxy
        ["urllib", format!("http://unlisted.example:{http}/")], // 9 a name not listed
        ["raw", "93.184.216.34", http, get("api.test")],        // 10 an IP literal not listed
        ["raw", "127.0.0.1", other, get("api.test")],           // 11 a loopback port not listed
        ["raw", "rebind.test", other, get("rebind.test")],      // 12 rebinding to loopback
        ["tls", "secure.test", s, "other.example"],             // 13 SNI differs
        ["raw", "api.test", http, get("other.example")],        // 14 Host differs
        ["raw", "127.0.0.1", http, get("127.0.0.1")],           // 15 the listed literal
        ["burst", "api.test", burst, 600],                      // 16 600 connects at once
    ]);
    trial.dialer.stall_port.store(burst, std::sync::atomic::Ordering::SeqCst);
    let out = trial.run(
        &network,
        &python,
        &[client.to_str().unwrap(), &ops.to_string()],
        std::slice::from_ref(&dir.0),
        &[],
    );
    let results: Vec<Value> =
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    for (i, r) in results.iter().enumerate() {
        eprintln!("{i:>2} {} {}", r["ok"], r["out"]);
    }
    if results[16]["ok"] != true {
        let records = trial.wait_for(13 + 600);
        let mut rules = std::collections::BTreeMap::new();
        for r in records.iter().filter(|r| r.port == burst) {
            *rules.entry(format!("{} {:?}", r.rule, r.reason)).or_insert(0) += 1;
        }
        eprintln!("burst records: {rules:?}");
    }
    let ok = |i: usize, want: &str| {
        assert_eq!(results[i]["ok"], true, "{i}: {}", results[i]);
        assert!(results[i]["out"].as_str().unwrap().contains(want), "{i}: {}", results[i]);
    };
    let refused =
        |i: usize| assert_eq!(results[i]["ok"], false, "{i} should be refused: {}", results[i]);
    assert!(
        results[0]["out"].as_str().unwrap().starts_with("198.18."),
        "a placeholder: {}",
        results[0]
    );
    refused(1);
    refused(2);
    ok(3, &format!("hello from api.test:{http}"));
    ok(4, &format!("hello from api.test:{http}"));
    ok(5, "hello from api.test");
    ok(6, "tls hello from secure.test");
    ok(7, &format!("tls hello from secure.test:{s}"));
    assert!(results[8]["out"].as_str().unwrap().contains("403"), "{}", results[8]);
    assert!(results[9]["out"].as_str().unwrap().contains("403"), "{}", results[9]);
    for i in [10, 11, 12, 13, 14] {
        refused(i);
    }
    ok(15, "hello from 127.0.0.1");
    // More connections at once than the channel's socket buffer holds while the proxy's
    // thread is stalled: init queues them, none is reset.
    ok(16, "600 answers");

    let records = trial.wait_for(13 + 600);
    let rule_of = |dest: &str, port: u16| {
        records
            .iter()
            .filter(|c| c.dest == dest && c.port == port)
            .map(|c| c.rule.clone())
            .collect::<Vec<_>>()
    };
    assert!(rule_of("denied.test", http).contains(&"deny denied.test".to_string()), "{records:#?}");
    assert_eq!(rule_of("unlisted.example", http), ["not-listed"]);
    assert_eq!(rule_of("93.184.216.34", http), ["not-listed"]);
    assert_eq!(rule_of("127.0.0.1", other), ["blocked-range loopback"]);
    assert_eq!(rule_of("rebind.test", other), ["blocked-range loopback"]);
    assert!(rule_of("secure.test", s).contains(&"sni-mismatch".to_string()), "{records:#?}");
    assert!(rule_of("api.test", http).contains(&"host-mismatch".to_string()), "{records:#?}");
    let allowed: Vec<_> = records.iter().filter(|c| c.verdict == "allow").collect();
    assert!(
        allowed.iter().all(|c| c.addr.is_some_and(|a| a.is_loopback()) && c.bytes_down > 0),
        "{allowed:#?}"
    );

    // The resolver was asked only for names that were allowed and connected to: never for a
    // name the stub refused, never for the exfiltration attempt.
    let asked = trial.resolver.asked.lock().unwrap().clone();
    for name in &asked {
        assert!(
            ["api.test", "secure.test", "rebind.test"].contains(&name.as_str()),
            "asked for {name}"
        );
    }
    assert!(
        !asked
            .iter()
            .any(|n| n.contains("exfil") || n.contains("unlisted") || n.contains("denied"))
    );
    // The dialer was asked only for checked loopback addresses on listed ports.
    let dialed = trial.dialer.asked.lock().unwrap().clone();
    assert!(
        dialed.iter().all(|a| a.ip().is_loopback() && [http, s, burst].contains(&a.port())),
        "{dialed:?}"
    );
    assert_eq!(*served.lock().unwrap(), 4, "3, 4, 5 and 15 reached the server, nothing else");
    assert_eq!(*burst_served.lock().unwrap(), 600);
    // The lookups were reported (for --network-log), answered or not.
    let lookups: Vec<(String, bool)> = trial
        .events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            EgressEvent::Lookup { name, answered, .. } => Some((name.clone(), *answered)),
            _ => None,
        })
        .collect();
    assert!(lookups.contains(&("api.test".into(), true)), "{lookups:?}");
    assert!(lookups.contains(&("secret-token-1234.exfil.example".into(), false)), "{lookups:?}");
}

/// Node's `fetch` (which ignores HTTP_PROXY) reaches an allowed name over HTTP and HTTPS
/// through the capture alone.
#[test]
fn node_fetch_goes_through_the_capture() {
    if !capture_works() {
        return;
    }
    let Some(python) = python3() else { return };
    let node = match Command::new("node").arg("-e").arg("console.log(process.execPath)").output() {
        Ok(o) if o.status.success() => PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()),
        _ => {
            ringmcp::testkit::skip(ringmcp::testkit::SkipKind::Dependency, "no node on PATH");
            return;
        }
    };
    let (http, _) = http_server();
    let Some(tls) = https_server(&python) else { return };
    let trial = Trial::new(&[("api.test", "127.0.0.1"), ("secure.test", "127.0.0.1")]);
    let network = Network::allow([
        format!("api.test:{http}"),
        format!("127.0.0.1:{http}"),
        format!("secure.test:{}", tls.port),
        format!("127.0.0.1:{}", tls.port),
    ])
    .unwrap();
    let script = format!(
        "(async () => {{ const out = []; for (const u of ['http://api.test:{http}/', 'https://secure.test:{}/', 'http://nope.example:{http}/']) {{ try {{ const r = await fetch(u); out.push(await r.text()); }} catch (e) {{ out.push('error: ' + (e.cause ? e.cause.code : e.message)); }} }} console.log(JSON.stringify(out)); }})()",
        tls.port
    );
    let out =
        trial.run(&network, &node, &["-e", &script], &[], &[("NODE_TLS_REJECT_UNAUTHORIZED", "0")]);
    let got: Vec<String> =
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(got[0], format!("hello from api.test:{http}"), "{got:?}");
    assert_eq!(got[1], format!("tls hello from secure.test:{}", tls.port), "{got:?}");
    assert!(got[2].starts_with("error: ENOTFOUND"), "a name not listed does not resolve: {got:?}");
}

/// 100 proxied connections, then nothing left: fds, sockets, threads, processes (counted in
/// a test process of its own, so no other test's servers are seen).
#[test]
fn a_hundred_connections_leave_nothing_behind() {
    crate::leaks::isolated("egress::hundred_connections_in_isolation");
}

#[test]
#[ignore = "run by a_hundred_connections_leave_nothing_behind in a process of its own"]
fn hundred_connections_in_isolation() {
    crate::leaks::in_isolation();
    if !capture_works() {
        return;
    }
    let Some(python) = python3() else { return };
    let (http, served) = http_server();
    let dir = TempDir::new("egress-many");
    let client = dir.0.join("client.py");
    std::fs::write(&client, CLIENT).unwrap();
    // Warm up what the process keeps for good (the helper lookup, the seccomp cache, the
    // HTTP server's thread) before counting.
    let fds_before;
    let threads_before;
    {
        let trial = Trial::new(&[("api.test", "127.0.0.1")]);
        let network =
            Network::allow([format!("api.test:{http}"), format!("127.0.0.1:{http}")]).unwrap();
        let _ = trial.run(
            &network,
            &python,
            &[client.to_str().unwrap(), "[]"],
            std::slice::from_ref(&dir.0),
            &[],
        );
        drop(trial);
        fds_before = open_fds();
        threads_before = threads();
        let trial = Trial::new(&[("api.test", "127.0.0.1")]);
        let ops = json!([["many", "api.test", http, 100]]);
        let out = trial.run(
            &network,
            &python,
            &[client.to_str().unwrap(), &ops.to_string()],
            std::slice::from_ref(&dir.0),
            &[],
        );
        assert!(out.contains("\"ok\": true"), "{out}");
        let records = trial.wait_for(100);
        assert_eq!(
            records.iter().filter(|c| c.verdict == "allow").count(),
            100,
            "{}",
            records.len()
        );
        assert!(*served.lock().unwrap() >= 100);
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while (open_fds() > fds_before || threads() > threads_before) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(open_fds(), fds_before, "fds left behind");
    assert_eq!(threads(), threads_before, "threads left behind");
    assert!(crate::util::child_pids().is_empty(), "processes left behind");
}

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").map(|d| d.count()).unwrap_or(0)
}

/// Through the host: a sandboxed MCP server with an allowlist fetches from an allowed host;
/// a refused fetch reaches it as a refusal; every connection is in the audit trail, which
/// still verifies.
#[test]
fn host_servers_get_network_and_the_audit_trail_records_it() {
    if !capture_works() {
        return;
    }
    let Some(py) = require(deps_dir().join("venv/bin/python"), "the Python mcp SDK venv") else {
        return;
    };
    let (http, _) = http_server();
    let dir = TempDir::new("egress-audit");
    let trail = dir.0.join("audit.jsonl");
    let audit = ringmcp::host::audit::AuditLog::open(ringmcp::policy::AuditConfig {
        path: trail.clone(),
        ..Default::default()
    })
    .unwrap();
    let settings =
        ringmcp::host::PolicySettings { audit: Some(Arc::new(audit)), ..Default::default() };
    let resolver = Arc::new(MapResolver::new(&[("api.test", &["127.0.0.1"])]));
    let host = ringmcp::host::Host::builder()
        .request_timeout(Duration::from_secs(60))
        .policy(settings)
        .egress(ProxyConfig {
            resolver,
            dialer: Arc::new(LoopbackDialer::default()),
            ..Default::default()
        })
        .build()
        .unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/servers/py_net_server.py");
    let network =
        Network::allow([format!("api.test:{http}"), format!("127.0.0.1:{http}")]).unwrap();
    let spec = ringmcp::host::ServerSpec::new("net", py)
        .arg(script)
        .sandbox(Some(SandboxConfig::standard().network(network)));
    let client = host.spawn_blocking(spec).unwrap();
    let fetched = client
        .blocking()
        .call_tool("fetch", json!({"url": format!("http://api.test:{http}/")}))
        .unwrap();
    assert_eq!(fetched.text(), format!("hello from api.test:{http}"));
    let refused = client
        .blocking()
        .call_tool("fetch", json!({"url": format!("http://evil.test:{http}/")}))
        .unwrap();
    assert!(
        refused.text().contains("403") && refused.text().contains("not in sandbox.network.allow"),
        "{}",
        refused.text()
    );
    client.blocking().shutdown();
    drop(host);
    let text = std::fs::read_to_string(&trail).unwrap();
    let egress: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|r| r["type"] == "egress")
        .collect();
    assert!(
        egress.iter().any(|r| r["verdict"] == "allow"
            && r["dest"] == "api.test"
            && r["bytesDown"].as_u64() > Some(0)),
        "{egress:#?}"
    );
    assert!(
        egress.iter().any(|r| r["verdict"] == "refuse"
            && r["dest"] == "evil.test"
            && r["rule"] == "not-listed"),
        "{egress:#?}"
    );
    let verified =
        Command::new(ringmcp_bin()).args(["audit", "verify"]).arg(&trail).output().unwrap();
    assert!(verified.status.success(), "{}", String::from_utf8_lossy(&verified.stderr));
}

/// `ringmcp sandbox run --network-log` prints the names a command tried and the entries to
/// allow them; an unlisted connection is refused with the rule in the log.
#[test]
fn network_log_prints_what_a_command_tried() {
    if !capture_works() {
        return;
    }
    let Some(python) = python3() else { return };
    let (http, _) = http_server();
    let code = format!(
        "import socket\nfor n in ['registry.example', 'api.example']:\n    try: socket.gethostbyname(n)\n    except Exception as e: print(n, e)\ntry: socket.create_connection(('127.0.0.1', {http}), timeout=5).sendall(b'x')\nexcept Exception as e: print(e)\n"
    );
    let out = Command::new(ringmcp_bin())
        .args(["sandbox", "run", "--network-log", "--allow-host", "api.example", "--allow-host"])
        .arg(format!("*.internal.example:{http}"))
        .arg("--")
        .arg(&python)
        .args(["-c", &code])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("lookup  registry.example  refused"), "{err}");
    assert!(err.contains("lookup  api.example  answered"), "{err}");
    assert!(
        err.contains(&format!(
            "egress to 127.0.0.1:{http} refused (127.0.0.1 is a loopback address"
        )),
        "{err}"
    );
    assert!(err.contains("\"registry.example\""), "the allowlist to write: {err}");
}

/// A package runner whose registry is not allowed fails at once with the fix in words.
#[test]
fn a_package_runner_without_its_registry_fails_fast() {
    if !capture_works() {
        return;
    }
    let dir = TempDir::new("egress-npx");
    let config = dir.0.join("desktop.json");
    std::fs::write(
        &config,
        serde_json::to_vec(&json!({"mcpServers": {
            "gh": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]},
            "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]},
        }}))
        .unwrap(),
    )
    .unwrap();
    let started = Instant::now();
    let out = Command::new(ringmcp_bin())
        .args(["inspect", "--config"])
        .arg(&config)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "inspect --config exits non-zero when a server failed: {text}");
    assert!(started.elapsed() < Duration::from_secs(20), "it failed fast: {:?}", started.elapsed());
    assert!(
        text.contains("\"@npm\"")
            && text.contains("npm install -g @modelcontextprotocol/server-github"),
        "{text}"
    );
    assert!(
        text.contains("\"@pypi\"") && text.contains("uv tool install mcp-server-fetch"),
        "{text}"
    );
}
