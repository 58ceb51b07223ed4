//! One proxied connection's bytes: the client's first bytes held until they can be judged
//! ([`judge_first`]), then both directions copied, each as a future of its own, under the
//! idle and byte limits.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{Limits, Outcome};
use crate::policy::egress::sniff::{self, First};
use crate::policy::egress::{Dest, Matcher, Refusal, Verdict, normal_name};

/// Why a relay ended early.
enum Stop {
    /// The first bytes were refused.
    Refused(Refusal),
    /// A limit was hit (idle, bytes).
    Limit(String),
    /// A socket failed.
    Io,
}

/// Most reads the client's first bytes may take before they can be judged (a ClientHello or
/// request head comes in one or a few): bounds the re-reading of what is held.
const MAX_SNIFF_READS: usize = 64;

/// Relays until both sides are done, a limit is hit, or the first bytes are refused. Each
/// direction is a future of its own, so a destination that stops reading never blocks the
/// other direction or the watchdog; the idle limit counts writes as well as reads. Bytes from
/// the destination flow at once (protocols where the server speaks first work); the client's
/// are held until [`judge_first`] can tell what they are.
pub(super) async fn relay(
    client: TcpStream,
    upstream: TcpStream,
    head: Vec<u8>,
    matcher: &Matcher,
    limits: Limits,
    out: &mut Outcome,
) {
    let port = out.port;
    let (mut cr, mut cw) = client.into_split();
    let (ur, mut uw) = upstream.into_split();
    let expect = match &out.dest {
        Dest::Name(n) => Some(n.clone()),
        Dest::Addr(_) => None,
    };
    // Shared by the two directions and the watchdog of this one task (atomics only because
    // tokio::spawn wants a Send future; Relaxed: they are read and written on one thread).
    let last = Progress::new();
    let (up_bytes, down_bytes) = (AtomicU64::new(0), AtomicU64::new(0));
    let over =
        || up_bytes.load(Ordering::Relaxed) + down_bytes.load(Ordering::Relaxed) > limits.max_bytes;
    let limit_hit = || Stop::Limit(format!("byte limit ({} bytes) reached", limits.max_bytes));
    let up = async {
        // The first bytes, held until judged.
        let mut held = head;
        let mut reads = 0;
        let mut chunk = vec![0u8; 16 << 10];
        loop {
            match judge_first(expect.as_deref(), port, matcher, &held) {
                Some(Ok(())) => break,
                Some(Err(r)) => return Err(Stop::Refused(r)),
                None if reads >= MAX_SNIFF_READS => {
                    return Err(Stop::Refused(Refusal::UncheckedFirstBytes {
                        what: format!("its first bytes were still incomplete after {reads} reads"),
                    }));
                }
                None => {}
            }
            let n = cr.read(&mut chunk).await.map_err(|_| Stop::Io)?;
            if n == 0 {
                // An unfinished ClientHello or request head: never checked, never forwarded.
                let _ = uw.shutdown().await;
                return Ok(());
            }
            reads += 1;
            last.touch();
            held.extend_from_slice(&chunk[..n]);
        }
        drop(chunk);
        if !held.is_empty() {
            uw.write_all(&held).await.map_err(|_| Stop::Io)?;
            up_bytes.fetch_add(held.len() as u64, Ordering::Relaxed);
            last.touch();
        }
        drop(held);
        copy(&cr, &mut uw, &up_bytes, &last, &over).await.map_err(|e| e.unwrap_or_else(limit_hit))
    };
    let down = async {
        copy(&ur, &mut cw, &down_bytes, &last, &over).await.map_err(|e| e.unwrap_or_else(limit_hit))
    };
    let watchdog = async {
        loop {
            let deadline = last.at() + limits.idle;
            if tokio::time::Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep_until(deadline).await;
        }
    };
    let result = tokio::select! {
        r = async { tokio::try_join!(up, down) } => r.map(drop),
        () = watchdog => Err(Stop::Limit(format!("idle for {} s", limits.idle.as_secs()))),
    };
    out.up = up_bytes.load(Ordering::Relaxed);
    out.down = down_bytes.load(Ordering::Relaxed);
    // A refusal or a limit ends the connection with a reset (through the proxy port too: its
    // 200 has gone out already).
    let stopped = match result {
        Ok(()) | Err(Stop::Io) => false,
        Err(Stop::Refused(r)) => {
            out.verdict = Verdict::Refuse(r);
            true
        }
        Err(Stop::Limit(why)) => {
            out.closed = Some(why);
            true
        }
    };
    if stopped && let Ok(c) = cr.reunite(cw) {
        let _ = c.set_zero_linger();
    }
    drop((ur, uw));
}

/// When a connection last made progress, for its idle watchdog.
struct Progress {
    base: tokio::time::Instant,
    /// Milliseconds since `base`.
    last: AtomicU64,
}

impl Progress {
    fn new() -> Progress {
        Progress { base: tokio::time::Instant::now(), last: AtomicU64::new(0) }
    }

    fn touch(&self) {
        let ms = self.base.elapsed().as_millis() as u64;
        // Relaxed: one task's futures, one thread.
        self.last.store(ms, Ordering::Relaxed);
    }

    fn at(&self) -> tokio::time::Instant {
        self.base + Duration::from_millis(self.last.load(Ordering::Relaxed))
    }
}

/// Copies `from` to `to` until `from` ends (then shuts `to` down), counting bytes in
/// `count` and progress in `last`. `Err(None)` past the byte limit, `Err(Some(Stop::Io))`
/// when a socket fails.
async fn copy(
    from: &tokio::net::tcp::OwnedReadHalf,
    to: &mut tokio::net::tcp::OwnedWriteHalf,
    count: &AtomicU64,
    last: &Progress,
    over: &impl Fn() -> bool,
) -> Result<(), Option<Stop>> {
    let mut buf = Vec::new();
    loop {
        let n = match read_lazily(from, &mut buf).await {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(_) => return Err(Some(Stop::Io)),
        };
        last.touch();
        to.write_all(&buf[..n]).await.map_err(|_| Some(Stop::Io))?;
        count.fetch_add(n as u64, Ordering::Relaxed);
        last.touch();
        if over() {
            return Err(None);
        }
    }
    let _ = to.shutdown().await;
    Ok(())
}

/// The relay's buffer size, per direction. 256 KiB moved a 100 MiB download at 0.56–0.71 of
/// direct loopback speed where 64 KiB gave 0.36–0.49 (PERFORMANCE.md, "Egress"). An idle
/// connection holds none, and a zeroed allocation of this size is mapped lazily: a connection
/// that only sees small messages touches a few pages of it.
const RELAY_BUF: usize = 256 << 10;

/// Waits until `half` is readable, then reads into `buf`, allocating it on first use.
/// `WouldBlock` when the readiness was spurious (the caller just polls again).
async fn read_lazily(
    half: &tokio::net::tcp::OwnedReadHalf,
    buf: &mut Vec<u8>,
) -> io::Result<usize> {
    half.readable().await?;
    if buf.is_empty() {
        // calloc'ed, not filled: untouched pages cost nothing.
        *buf = vec![0u8; RELAY_BUF];
    }
    half.try_read(buf)
}

/// `None`: not enough bytes yet. Else whether the client's first bytes may go on.
///
/// To a *name* (`expect`), on ports 80 and 443, they must be a complete TLS ClientHello
/// whose SNI is that name, or a complete HTTP/1 head whose one `Host` (and absolute-form
/// authority, if any) is that name: anything that cannot be checked (no SNI, no `Host`, a
/// head that does not parse, is truncated or starts with something else) is refused, since
/// a CDN address serves many names. On other ports (an entry named them: a database, an SSH
/// host) an unknown protocol passes, but a ClientHello or request head still must name the
/// host. To an *address*, a name said in the first bytes must not be one the `deny` list
/// refuses.
pub(super) fn judge_first(
    expect: Option<&str>,
    port: u16,
    matcher: &Matcher,
    held: &[u8],
) -> Option<Result<(), Refusal>> {
    let web = crate::policy::egress::DEFAULT_PORTS.contains(&port);
    let unchecked = |what: &str| Some(Err(Refusal::UncheckedFirstBytes { what: what.into() }));
    let said = match sniff::first(held) {
        First::NeedMore => return None,
        First::Tls { sni } => sni.map(|s| (s, true)),
        First::Http { host } => host.map(|h| (h, false)),
        First::Other if expect.is_some() && web => {
            return unchecked("its first bytes are neither a TLS ClientHello nor an HTTP request");
        }
        First::Other => return Some(Ok(())),
    };
    match (expect, said) {
        (Some(_), None) => {
            unchecked("its ClientHello or request head names no host (or could not be read whole)")
        }
        (Some(name), Some((s, tls))) => {
            if normal_name(&s).is_some_and(|s| s == name) {
                Some(Ok(()))
            } else if tls {
                Some(Err(Refusal::SniMismatch { sni: s }))
            } else {
                Some(Err(Refusal::HostMismatch { host: s }))
            }
        }
        (None, Some((s, _))) => match matcher.judge(&Dest::Name(s), port) {
            Verdict::Refuse(r @ Refusal::Denied { .. }) => Some(Err(r)),
            _ => Some(Ok(())),
        },
        (None, None) => Some(Ok(())),
    }
}
