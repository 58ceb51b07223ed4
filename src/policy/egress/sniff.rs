//! The first bytes a server sends on a proxied connection, read without I/O: the TLS
//! ClientHello's server name (SNI), the HTTP request's `Host`, or a proxy request
//! (`CONNECT host:port`, or an absolute-form `http://` request, for clients that honour
//! `HTTP_PROXY`). The host proxy checks the name a server *says* against the name it
//! *connected to*, and refuses first bytes it cannot check on web ports, so that a connection
//! opened to an allowed name is not steered to another virtual host behind the same address
//! (docs/egress.md, "The first bytes").

use super::normal_name;

/// At most this many bytes are held while waiting for a complete ClientHello or request
/// head; past it the connection is judged on what arrived.
pub const MAX_HEAD: usize = 64 << 10;

/// What the first bytes are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum First {
    /// Not enough bytes yet to tell.
    NeedMore,
    /// A TLS ClientHello, with its server name when it carries one.
    Tls {
        /// The SNI host name (lowercased).
        sni: Option<String>,
    },
    /// An HTTP/1 request head, with its `Host` (lowercased, port stripped).
    Http {
        /// The `Host` header.
        host: Option<String>,
    },
    /// Anything else (a database protocol, SSH, …): passed through unread.
    Other,
}

/// Reads the start of a client's stream.
pub fn first(buf: &[u8]) -> First {
    match buf.first() {
        None => First::NeedMore,
        Some(0x16) => tls(buf),
        Some(b) if b.is_ascii_uppercase() => http(buf),
        Some(_) => First::Other,
    }
}

fn tls(buf: &[u8]) -> First {
    // Records: type 0x16, version 3.x, length. The handshake message may span records.
    let mut hs = Vec::new();
    let mut at = 0;
    let need = loop {
        let Some(head) = buf.get(at..at + 5) else {
            if buf.len() >= MAX_HEAD {
                return First::Tls { sni: None };
            }
            return First::NeedMore;
        };
        if head[0] != 0x16 || head[1] != 3 {
            return if at == 0 { First::Other } else { First::Tls { sni: None } };
        }
        let len = usize::from(u16::from_be_bytes([head[3], head[4]]));
        let end = (at + 5 + len).min(buf.len());
        hs.extend_from_slice(&buf[at + 5..end]);
        if hs.len() >= 4 {
            if hs[0] != 1 {
                return First::Tls { sni: None };
            }
            let need =
                4 + (usize::from(hs[1]) << 16 | usize::from(hs[2]) << 8 | usize::from(hs[3]));
            if hs.len() >= need {
                break need;
            }
        }
        if end < at + 5 + len {
            return if buf.len() >= MAX_HEAD { First::Tls { sni: None } } else { First::NeedMore };
        }
        at = end;
    };
    First::Tls { sni: client_hello_sni(&hs[4..need]) }
}

/// The `server_name` extension's host name of a ClientHello body.
fn client_hello_sni(body: &[u8]) -> Option<String> {
    let mut r = Reader(body);
    r.skip(2 + 32)?;
    let sid = r.u8()?;
    r.skip(sid.into())?;
    let suites = r.u16()?;
    r.skip(suites.into())?;
    let comp = r.u8()?;
    r.skip(comp.into())?;
    let ext_len = r.u16()?;
    let mut ext = Reader(r.take(ext_len.into())?);
    while !ext.0.is_empty() {
        let kind = ext.u16()?;
        let len = ext.u16()?;
        let data = ext.take(len.into())?;
        if kind == 0 {
            let mut list = Reader(data);
            let list_len = list.u16()?;
            let mut names = Reader(list.take(list_len.into())?);
            while !names.0.is_empty() {
                let name_type = names.u8()?;
                let n = names.u16()?;
                let name = names.take(n.into())?;
                if name_type == 0 {
                    return Some(
                        std::str::from_utf8(name)
                            .ok()
                            .and_then(normal_name)
                            .unwrap_or_else(|| String::from_utf8_lossy(name).into_owned()),
                    );
                }
            }
        }
    }
    None
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }
    fn skip(&mut self, n: usize) -> Option<()> {
        self.take(n).map(drop)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }
}

fn http(buf: &[u8]) -> First {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(buf) {
        Ok(httparse::Status::Complete(_)) => {
            // One `Host`, and the absolute-form authority (which origin servers route by,
            // RFC 9112 §3.2.2) naming the same host; anything ambiguous names no host.
            let mut hosts = req.headers.iter().filter(|h| h.name.eq_ignore_ascii_case("host"));
            let header = hosts.next().map(|h| host_part(&String::from_utf8_lossy(h.value)));
            let authority = req.path.and_then(|p| {
                let rest = p.strip_prefix("http://").or_else(|| p.strip_prefix("https://"))?;
                Some(host_part(rest.split(['/', '?', '#']).next().unwrap_or_default()))
            });
            let host = match (hosts.next(), header, authority) {
                (Some(_), _, _) => None,
                (None, Some(h), Some(a)) if h != a => None,
                (None, Some(h), _) => Some(h),
                (None, None, a) => a,
            };
            First::Http { host }
        }
        Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD => First::NeedMore,
        Ok(httparse::Status::Partial) => First::Http { host: None },
        Err(_) => First::Other,
    }
}

/// `host[:port]` or `[v6]:port` without the port, lowercased.
fn host_part(authority: &str) -> String {
    let a = authority.trim();
    let host = if let Some(rest) = a.strip_prefix('[') {
        rest.split(']').next().unwrap_or(rest)
    } else {
        a.rsplit_once(':')
            .filter(|(_, p)| p.bytes().all(|b| b.is_ascii_digit()))
            .map_or(a, |(h, _)| h)
    };
    host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase()
}

/// A request to the sandbox's HTTP proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProxyRequest {
    /// The head is not complete yet.
    NeedMore,
    /// `CONNECT host:port`: answer `200`, then the bytes after the head are the tunnel's.
    Connect {
        /// The host.
        host: String,
        /// The port.
        port: u16,
        /// Bytes of the request head (to drop).
        head: usize,
    },
    /// An absolute-form request (`GET http://host[:port]/… HTTP/1.1`): forwarded as it is
    /// (origin servers must accept the absolute form, RFC 9112 §3.2.2).
    Forward {
        /// The host.
        host: String,
        /// The port (80 unless given).
        port: u16,
    },
    /// Anything else.
    Bad,
}

/// Reads a proxy request head.
pub fn proxy_request(buf: &[u8]) -> ProxyRequest {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    let head = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if buf.len() < MAX_HEAD => return ProxyRequest::NeedMore,
        _ => return ProxyRequest::Bad,
    };
    let (Some(method), Some(target)) = (req.method, req.path) else {
        return ProxyRequest::Bad;
    };
    let split = |authority: &str, default: u16| -> Option<(String, u16)> {
        let host = host_part(authority);
        let port = match authority.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(':') && (!h.contains(':') || h.ends_with(']')) => {
                p.parse().ok()?
            }
            _ => default,
        };
        (!host.is_empty()).then_some((host, port))
    };
    if method.eq_ignore_ascii_case("CONNECT") {
        return match split(target, 0) {
            Some((host, port)) if port != 0 => ProxyRequest::Connect { host, port, head },
            _ => ProxyRequest::Bad,
        };
    }
    match target.strip_prefix("http://") {
        Some(rest) => {
            let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
            match split(authority, 80) {
                Some((host, port)) => ProxyRequest::Forward { host, port },
                None => ProxyRequest::Bad,
            }
        }
        None => ProxyRequest::Bad,
    }
}

/// A complete request head in `buf` rewritten so that the origin closes after its answer:
/// every `Connection`, `Proxy-Connection` and `Keep-Alive` header dropped and
/// `Connection: close` added; the bytes after the head kept. The proxy port does this to each
/// absolute-form request, so the next request (perhaps for another host) comes on a new
/// connection and is judged. `None` when the head is not complete.
pub fn close_after_answer(buf: &[u8]) -> Option<Vec<u8>> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    let Ok(httparse::Status::Complete(n)) = req.parse(buf) else { return None };
    let mut out = Vec::with_capacity(buf.len() + 24);
    let mut lines = buf[..n].split(|&b| b == b'\n');
    out.extend_from_slice(lines.next()?);
    out.push(b'\n');
    for line in lines {
        let text = line.strip_suffix(b"\r").unwrap_or(line);
        if text.is_empty() {
            break;
        }
        let name = text.split(|&b| b == b':').next().unwrap_or_default();
        let hop = [&b"connection"[..], b"proxy-connection", b"keep-alive"];
        if hop.iter().any(|h| name.trim_ascii().eq_ignore_ascii_case(h)) {
            continue;
        }
        out.extend_from_slice(text);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    out.extend_from_slice(&buf[n..]);
    Some(out)
}
