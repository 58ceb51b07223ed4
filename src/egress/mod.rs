//! The host's egress proxy: network for sandboxed servers, through an allowlist that no server
//! can talk its way around (docs/egress.md).
//!
//! A sandbox with network captures every outbound TCP connection inside its own network
//! namespace and hands the socket to the host ([`crate::sandbox::capture`]). For each one,
//! the proxy:
//! 1. judges the name (or IP literal) and port against the server's `allow` and `deny`
//!    lists ([`Matcher::judge`]);
//! 2. resolves the name itself ([`Resolve`]) and refuses it if *any* address is in a blocked
//!    range that no entry names ([`Matcher::judge_resolved`]: rebinding to loopback,
//!    private networks or a cloud's metadata address);
//! 3. dials the checked address, never the name again ([`Dial`]);
//! 4. reads the server's first bytes: a TLS ClientHello's SNI, or an HTTP request's `Host`,
//!    must name the host connected to;
//! 5. relays both ways under the [`Limits`] (idle time, bytes, connections per server).
//!
//! Every connection, allowed or refused, becomes an [`EgressEvent`] (the host writes it to
//! the audit trail) and a `tracing` event; a refusal is logged as
//! `server "gh": egress to evil.example:443 refused (not in sandbox.network.allow)`. A refused
//! connection is reset (the server sees `ECONNRESET`), or, through the `HTTP_PROXY` port,
//! answered `403` with the reason.
//!
//! The proxy runs on a thread of its own with a current-thread tokio runtime; dropping the
//! [`Proxy`] stops it and closes every socket it holds.

#![forbid(unsafe_code)]

use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsFd, OwnedFd};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::policy::egress::sniff::{self, ProxyRequest};
use crate::policy::egress::{Dest, Matcher, Network, Refusal, Verdict};
use crate::sandbox::capture::{CaptureMsg, MAX_MSG};
use crate::sandbox::seccomp::recv_msg;

/// A boxed future, for the hook traits.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Resolves names for the proxy. The default is the host's resolver (`getaddrinfo`); tests
/// map names to loopback with their own.
pub trait Resolve: Send + Sync + 'static {
    /// Every address of `name`.
    fn resolve(&self, name: &str) -> BoxFuture<'_, io::Result<Vec<IpAddr>>>;
}

/// Dials the checked address. The default connects; tests record what was asked.
pub trait Dial: Send + Sync + 'static {
    /// A connected stream to `addr`.
    fn dial(&self, addr: SocketAddr) -> BoxFuture<'_, io::Result<TcpStream>>;
}

/// The host's resolver.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve(&self, name: &str) -> BoxFuture<'_, io::Result<Vec<IpAddr>>> {
        let name = name.to_owned();
        Box::pin(async move {
            let addrs = tokio::net::lookup_host((name.as_str(), 0)).await?;
            Ok(addrs.map(|a| a.ip()).collect())
        })
    }
}

/// Connects for real.
#[derive(Debug, Default, Clone, Copy)]
pub struct DirectDialer;

impl Dial for DirectDialer {
    fn dial(&self, addr: SocketAddr) -> BoxFuture<'_, io::Result<TcpStream>> {
        Box::pin(TcpStream::connect(addr))
    }
}

/// Bounds on what one server's connections may use; each hit refuses or closes the
/// connection with the reason logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A connection with no byte either way for this long is closed.
    pub idle: Duration,
    /// Bytes, both ways together, after which a connection is closed.
    pub max_bytes: u64,
    /// Proxied connections a server may hold open at once; one more is refused.
    pub max_connections: usize,
    /// Longest wait for the resolver, and for the dial.
    pub connect_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            idle: Duration::from_secs(300),
            max_bytes: 4 << 30,
            max_connections: 256,
            connect_timeout: Duration::from_secs(10),
        }
    }
}

/// One connection, for the audit trail and the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionRecord {
    /// The server's name.
    pub server: String,
    /// Where it asked to go.
    pub dest: String,
    /// The port.
    pub port: u16,
    /// The address dialled (allowed connections), or the one that caused a refusal.
    pub addr: Option<IpAddr>,
    /// `allow` or `refuse`.
    pub verdict: &'static str,
    /// The entry that allowed it, or the refusal's name.
    pub rule: String,
    /// Why it was refused or closed early, in words.
    pub reason: Option<String>,
    /// Bytes from the server to the destination.
    pub bytes_up: u64,
    /// Bytes from the destination to the server.
    pub bytes_down: u64,
    /// How long the connection lasted, in milliseconds.
    pub duration_ms: u64,
    /// Opened through the `HTTP_PROXY` port.
    pub via_proxy: bool,
}

/// What the proxy reports.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EgressEvent {
    /// A connection ended (or was refused).
    Connection(ConnectionRecord),
    /// A name was looked up in a sandbox (nothing is resolved for it).
    Lookup {
        /// The server.
        server: String,
        /// The name.
        name: String,
        /// Whether the name is allowed (a placeholder, or an empty answer for a record type
        /// other than A); else it got NXDOMAIN or REFUSED.
        answered: bool,
    },
}

/// Receives every [`EgressEvent`]; called on the proxy's thread, so it must not block long.
pub type Sink = Arc<dyn Fn(&EgressEvent) + Send + Sync>;

/// How a proxy resolves, dials, limits and reports.
#[derive(Clone)]
pub struct ProxyConfig {
    /// The resolver.
    pub resolver: Arc<dyn Resolve>,
    /// The dialer.
    pub dialer: Arc<dyn Dial>,
    /// The limits.
    pub limits: Limits,
    /// Where events go (besides `tracing`).
    pub sink: Option<Sink>,
}

impl Default for ProxyConfig {
    fn default() -> Self {
        ProxyConfig {
            resolver: Arc::new(SystemResolver),
            dialer: Arc::new(DirectDialer),
            limits: Limits::default(),
            sink: None,
        }
    }
}

impl std::fmt::Debug for ProxyConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyConfig").field("limits", &self.limits).finish_non_exhaustive()
    }
}

/// The running proxy.
#[derive(Debug)]
pub struct Proxy {
    runtime: tokio::runtime::Handle,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    config: Arc<ProxyConfig>,
    shared: Arc<Shared>,
}

/// Bounds across every sandbox of a proxy, so that no server can take them all.
#[derive(Debug)]
struct Shared {
    /// Names being resolved at once (each holds a blocking `getaddrinfo` thread).
    resolving: tokio::sync::Semaphore,
    /// Proxied connections open now, across servers.
    open: AtomicUsize,
}

/// Names resolved at once, across servers.
const MAX_RESOLVING: usize = 32;
/// Proxied connections open at once, across servers (two host fds each).
const MAX_OPEN_TOTAL: usize = 4096;

impl Proxy {
    /// Starts the proxy's thread.
    ///
    /// # Errors
    /// The runtime or the thread could not be made.
    pub fn start(config: ProxyConfig) -> io::Result<Proxy> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread =
            std::thread::Builder::new().name("ringmcp-egress".into()).spawn(move || {
                // The sender is dropped or fires: either way, stop. Dropping the runtime drops
                // every task, and with them every socket.
                let _ = runtime.block_on(stopped);
                runtime.shutdown_background();
            })?;
        let shared = Arc::new(Shared {
            resolving: tokio::sync::Semaphore::new(MAX_RESOLVING),
            open: AtomicUsize::new(0),
        });
        Ok(Proxy {
            runtime: handle,
            stop: Some(stop),
            thread: Some(thread),
            config: Arc::new(config),
            shared,
        })
    }

    /// Serves one sandbox: `channel` is [`Spawned::egress`](crate::sandbox::Spawned::egress),
    /// `network` the server's setting. Runs until the sandbox ends.
    ///
    /// # Errors
    /// The channel could not be registered with the runtime.
    pub fn attach(&self, server: &str, network: &Network, channel: OwnedFd) -> io::Result<()> {
        let Some(policy) = network.policy() else {
            // No network: nothing will come; dropping the channel is all.
            return Ok(());
        };
        let sandbox = Sandbox {
            server: server.into(),
            matcher: Matcher::new(policy),
            config: self.config.clone(),
            open: AtomicUsize::new(0),
            shared: self.shared.clone(),
        };
        let _guard = self.runtime.enter();
        // A SOCK_SEQPACKET socket, registered through tokio's datagram type (only its
        // readiness is used; messages and fds are read with recvmsg).
        let channel = std::os::unix::net::UnixDatagram::from(channel);
        channel.set_nonblocking(true)?;
        let channel = tokio::net::UnixDatagram::from_std(channel)?;
        self.runtime.spawn(serve(Arc::new(sandbox), channel));
        Ok(())
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One sandbox's state.
struct Sandbox {
    server: Arc<str>,
    matcher: Matcher,
    config: Arc<ProxyConfig>,
    /// Connections open now (for [`Limits::max_connections`]).
    open: AtomicUsize,
    /// The proxy's bounds across servers.
    shared: Arc<Shared>,
}

impl Sandbox {
    fn emit(&self, event: EgressEvent) {
        if let Some(sink) = &self.config.sink {
            sink(&event);
        }
    }
}

/// Reads the sandbox's messages until it closes its end.
async fn serve(sandbox: Arc<Sandbox>, channel: tokio::net::UnixDatagram) {
    let mut buf = [0u8; MAX_MSG];
    loop {
        if channel.readable().await.is_err() {
            return;
        }
        let got = channel.try_io(tokio::io::Interest::READABLE, || {
            recv_msg(channel.as_fd(), &mut buf, libc::MSG_DONTWAIT)
        });
        let (n, fd) = match got {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            // A message whose fd could not be received (this process is out of fds: the kernel
            // drops it and flags the message) loses that one connection, not the sandbox's
            // network.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EPROTO | libc::EMSGSIZE)) => {
                tracing::warn!(server = %sandbox.server, "egress: a connection was lost on the way to the proxy ({e}); is the host out of file descriptors?");
                continue;
            }
            Err(e) => {
                tracing::debug!(server = %sandbox.server, "egress channel: {e}");
                return;
            }
            Ok((0, None)) => return,
            Ok(m) => m,
        };
        match (serde_json::from_slice::<CaptureMsg>(&buf[..n]), fd) {
            (Ok(CaptureMsg::Connect { dest, port, proxy }), Some(fd)) => {
                let sandbox = sandbox.clone();
                tokio::spawn(async move { connection(&sandbox, dest, port, proxy, fd).await });
            }
            (Ok(CaptureMsg::Dns { name: Some(name), answered, .. }), _) => {
                tracing::debug!(server = %sandbox.server, name, answered, "sandbox DNS lookup");
                sandbox.emit(EgressEvent::Lookup {
                    server: sandbox.server.to_string(),
                    name,
                    answered,
                });
            }
            _ => {}
        }
    }
}

/// How a connection went.
struct Outcome {
    dest: Dest,
    port: u16,
    addr: Option<IpAddr>,
    verdict: Verdict,
    /// Why it ended early (a limit), for an allowed connection.
    closed: Option<String>,
    up: u64,
    down: u64,
}

async fn connection(sandbox: &Sandbox, dest: Dest, port: u16, via_proxy: bool, fd: OwnedFd) {
    let start = Instant::now();
    let Ok(client) = into_tokio(fd) else { return };
    let limits = sandbox.config.limits;
    // Ordering: a counter only; Relaxed keeps it exact (one atomic RMW per change).
    let open = sandbox.open.fetch_add(1, Ordering::Relaxed) + 1;
    let total = sandbox.shared.open.fetch_add(1, Ordering::Relaxed) + 1;
    let outcome = if open > limits.max_connections || total > MAX_OPEN_TOTAL {
        let limit =
            if open > limits.max_connections { limits.max_connections } else { MAX_OPEN_TOTAL };
        let refusal = Refusal::TooManyConnections { limit };
        refuse(client, via_proxy, &dest, port, &refusal).await;
        Outcome {
            dest,
            port,
            addr: None,
            verdict: Verdict::Refuse(refusal),
            closed: None,
            up: 0,
            down: 0,
        }
    } else {
        run(sandbox, client, dest, port, via_proxy).await
    };
    sandbox.open.fetch_sub(1, Ordering::Relaxed);
    sandbox.shared.open.fetch_sub(1, Ordering::Relaxed);
    report(sandbox, outcome, via_proxy, start.elapsed());
}

fn into_tokio(fd: OwnedFd) -> io::Result<TcpStream> {
    let std = std::net::TcpStream::from(fd);
    std.set_nonblocking(true)?;
    TcpStream::from_std(std)
}

fn report(sandbox: &Sandbox, o: Outcome, via_proxy: bool, took: Duration) {
    let (verdict, reason) = match &o.verdict {
        Verdict::Allow { .. } => ("allow", o.closed.clone()),
        Verdict::Refuse(r) => ("refuse", Some(r.to_string())),
    };
    let record = ConnectionRecord {
        server: sandbox.server.to_string(),
        dest: o.dest.to_string(),
        port: o.port,
        addr: o.addr,
        verdict,
        rule: o.verdict.rule(),
        reason,
        bytes_up: o.up,
        bytes_down: o.down,
        duration_ms: took.as_millis() as u64,
        via_proxy,
    };
    match &o.verdict {
        Verdict::Refuse(r) => tracing::warn!(
            server = %record.server, dest = %record.dest, port = record.port, addr = ?record.addr,
            rule = %record.rule,
            "server {:?}: egress to {}:{} refused ({r})", record.server, record.dest, record.port
        ),
        Verdict::Allow { rule } => tracing::info!(
            server = %record.server, dest = %record.dest, port = record.port, addr = ?record.addr,
            rule = %rule, bytes_up = record.bytes_up, bytes_down = record.bytes_down,
            duration_ms = record.duration_ms, closed = ?o.closed,
            "egress connection"
        ),
    }
    sandbox.emit(EgressEvent::Connection(record));
}

/// Tells the server no: a `403` with the reason through the proxy port, else a reset.
async fn refuse(mut client: TcpStream, via_proxy: bool, dest: &Dest, port: u16, why: &Refusal) {
    if via_proxy {
        let body = format!("ringmcp: egress to {dest}:{port} refused ({why})\n");
        let head = format!(
            "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let _ = client.write_all(head.as_bytes()).await;
        let _ = client.write_all(body.as_bytes()).await;
        let _ = client.shutdown().await;
    } else {
        let _ = client.set_zero_linger();
    }
}

async fn run(
    sandbox: &Sandbox,
    mut client: TcpStream,
    dest: Dest,
    port: u16,
    via_proxy: bool,
) -> Outcome {
    let limits = sandbox.config.limits;
    let mut out = Outcome {
        dest,
        port,
        addr: None,
        verdict: Verdict::Refuse(Refusal::NotListed),
        closed: None,
        up: 0,
        down: 0,
    };
    // Through the proxy port, the destination is in the request.
    let mut head = Vec::new();
    let mut reply: Option<&[u8]> = None;
    if via_proxy {
        match read_proxy_request(&mut client, &mut head, limits.idle).await {
            Some(ProxyRequest::Connect { host, port, head: used }) => {
                out.dest = name_or_addr(&host);
                out.port = port;
                head.drain(..used);
                reply = Some(b"HTTP/1.1 200 Connection established\r\n\r\n");
            }
            Some(ProxyRequest::Forward { host, port }) => {
                out.dest = name_or_addr(&host);
                out.port = port;
                // One request per connection: the next one (perhaps for another host) comes
                // on a new connection and is judged.
                if let Some(closing) = sniff::close_after_answer(&head) {
                    head = closing;
                }
            }
            _ => {
                out.verdict = Verdict::Refuse(Refusal::BadProxyRequest);
                refuse(client, true, &out.dest, out.port, &Refusal::BadProxyRequest).await;
                return out;
            }
        }
    }
    let refused = |out: &mut Outcome, r: Refusal| out.verdict = Verdict::Refuse(r);
    // 1. The lists.
    let verdict = sandbox.matcher.judge(&out.dest, out.port);
    if let Verdict::Refuse(r) = &verdict {
        refuse(client, via_proxy, &out.dest, out.port, r).await;
        refused(&mut out, r.clone());
        return out;
    }
    // 2. The addresses, resolved here and every one checked; 3. a checked one dialled.
    let dialled = match resolve_checked(sandbox, &out.dest, out.port, &mut out.addr).await {
        Ok(addrs) => dial_checked(sandbox, addrs, out.port, &mut out.addr).await,
        Err(r) => Err(r),
    };
    let upstream = match dialled {
        Ok(upstream) => upstream,
        Err(r) => {
            refuse(client, via_proxy, &out.dest, out.port, &r).await;
            refused(&mut out, r);
            return out;
        }
    };
    out.verdict = verdict;
    if let Some(reply) = reply
        && client.write_all(reply).await.is_err()
    {
        return out;
    }
    // 4 and 5: the first bytes checked, then both ways relayed under the limits.
    relay(client, upstream, head, &sandbox.matcher, limits, &mut out).await;
    out
}

/// The addresses of `dest`, resolved here (bounded across servers, under the connect
/// timeout) and every one checked against the blocked ranges; `addr` gets a blocked one.
async fn resolve_checked(
    sandbox: &Sandbox,
    dest: &Dest,
    port: u16,
    addr: &mut Option<IpAddr>,
) -> Result<Vec<IpAddr>, Refusal> {
    let limits = sandbox.config.limits;
    let name = match dest {
        Dest::Addr(ip) => return Ok(vec![*ip]),
        Dest::Name(name) => name,
    };
    let resolve = async {
        // Bounded across servers: a flood of slow names cannot take every thread.
        let _permit = sandbox.shared.resolving.acquire().await;
        sandbox.config.resolver.resolve(name).await
    };
    let addrs = match tokio::time::timeout(limits.connect_timeout, resolve).await {
        Ok(Ok(addrs)) => addrs,
        Ok(Err(e)) => return Err(Refusal::Unresolved { error: e.to_string() }),
        Err(_) => {
            let error = format!("no answer within {} s", limits.connect_timeout.as_secs());
            return Err(Refusal::Unresolved { error });
        }
    };
    if let Some(r) = sandbox.matcher.judge_resolved(port, &addrs) {
        if let Refusal::Blocked { addr: blocked, .. } = &r {
            *addr = Some(*blocked);
        }
        return Err(r);
    }
    Ok(addrs)
}

/// Dials a checked address, in the resolver's order (never the name again), all of them
/// under one deadline; `addr` gets the one connected to.
async fn dial_checked(
    sandbox: &Sandbox,
    addrs: Vec<IpAddr>,
    port: u16,
    addr: &mut Option<IpAddr>,
) -> Result<TcpStream, Refusal> {
    let mut last_error = String::from("no address");
    let dial_deadline = tokio::time::Instant::now() + sandbox.config.limits.connect_timeout;
    for ip in addrs {
        let to = SocketAddr::new(ip.to_canonical(), port);
        match tokio::time::timeout_at(dial_deadline, sandbox.config.dialer.dial(to)).await {
            Ok(Ok(s)) => {
                *addr = Some(to.ip());
                return Ok(s);
            }
            Ok(Err(e)) => last_error = e.to_string(),
            Err(_) => last_error = "timed out".into(),
        }
    }
    Err(Refusal::Unreachable { error: last_error })
}

fn name_or_addr(host: &str) -> Dest {
    match host.parse::<IpAddr>() {
        Ok(ip) => Dest::Addr(ip),
        Err(_) => Dest::Name(host.to_owned()),
    }
}

async fn read_proxy_request(
    client: &mut TcpStream,
    head: &mut Vec<u8>,
    idle: Duration,
) -> Option<ProxyRequest> {
    let mut buf = [0u8; 4096];
    loop {
        match sniff::proxy_request(head) {
            ProxyRequest::NeedMore => {}
            other => return Some(other),
        }
        let n = tokio::time::timeout(idle, client.read(&mut buf)).await.ok()?.ok()?;
        if n == 0 {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
}

mod relay;
#[cfg(test)]
use relay::judge_first;
use relay::relay;

#[cfg(test)]
mod tests;
