//! Init's half of the sandbox's network (see [`crate::sandbox::capture`]): the local routes,
//! one listener per captured port, the DNS stub, and the hand-off of each accepted socket to
//! the host. Runs inside init's poll loop; every socket is non-blocking, so a slow host or a
//! flood of queries never stalls signal forwarding or reaping.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};

use socket2::{Domain, SockRef, Socket, Type};

use super::{Context, Step, owned};
use crate::policy::egress::dns::{self, Outcome, Placeholders};
use crate::policy::egress::{Dest, Matcher};
use crate::sandbox::capture::{CaptureMsg, EgressPlan};
use crate::sandbox::seccomp::send_msg;
use crate::syscall::cvt;

/// Connections waiting for room on the channel (its socket buffer holds a few hundred
/// messages). At this bound init stops accepting: further connects wait in the kernel's
/// listen backlog (then their SYNs are retried), never reset, and init never holds more fds
/// than this (its own `RLIMIT_NOFILE` is the host's).
const MAX_PENDING: usize = 256;

/// Connections accepted, or queries answered, per socket and wake-up: what is left waits for
/// the next turn of init's poll loop (level-triggered), after signals and reaping.
const PER_WAKEUP: usize = 64;

/// Init's capture: listeners, the DNS sockets, the channel to the host.
pub(super) struct Capture {
    host: OwnedFd,
    listeners: Vec<TcpListener>,
    dns: Vec<UdpSocket>,
    matcher: Matcher,
    places: Placeholders,
    proxy_port: u16,
    /// Messages (and the connection each carries) not yet taken by the channel, in order.
    pending: std::collections::VecDeque<(Vec<u8>, Option<TcpStream>)>,
}

impl Capture {
    /// Routes every address to loopback, binds the listeners and the DNS stub. Needs
    /// `CAP_NET_ADMIN` and `CAP_NET_BIND_SERVICE` in the namespace's owning user namespace,
    /// which init has (it is that namespace's root) and the server never gets.
    pub(super) fn setup(plan: &EgressPlan, host: OwnedFd) -> Step<Capture> {
        add_local_default_route(libc::AF_INET)
            .step(|| "route add local 0.0.0.0/0 dev lo".into())?;
        add_config_address().step(|| "addr add 192.0.2.1/32 dev lo".into())?;
        // Without IPv6 (disabled on the host), IPv6 connects fail with ENETUNREACH: refused,
        // as the design asks of anything not captured.
        let v6 = add_local_default_route(libc::AF_INET6).is_ok();
        let mut listeners = Vec::new();
        let mut ports: Vec<u16> = plan.ports.clone();
        ports.push(plan.proxy_port);
        ports.sort_unstable();
        ports.dedup();
        for port in ports {
            let socket = bind_any(Type::STREAM, port, v6)
                .and_then(|s| s.listen(128).map(|()| s))
                .step(|| format!("listening on port {port} for the egress capture"))?;
            listeners.push(socket.into());
        }
        let dns =
            bind_any(Type::DGRAM, 53, v6).step(|| "binding the DNS stub on port 53".into())?;
        let dns = vec![dns.into()];
        SockRef::from(&host).set_nonblocking(true).step(|| "the egress channel".into())?;
        Ok(Capture {
            host,
            listeners,
            dns,
            matcher: Matcher::new(&plan.policy),
            places: Placeholders::default(),
            proxy_port: plan.proxy_port,
            pending: std::collections::VecDeque::new(),
        })
    }

    /// What to poll: every listener and DNS socket for reading, and the channel for writing
    /// while messages wait.
    pub(super) fn pollfds(&self) -> Vec<libc::pollfd> {
        let read = |fd: RawFd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // Back-pressure: while the queue is full, connections stay in the listen backlog.
        let listeners =
            if self.pending.len() >= MAX_PENDING { &[][..] } else { &self.listeners[..] };
        let fds = listeners.iter().map(AsRawFd::as_raw_fd);
        let mut out: Vec<libc::pollfd> =
            fds.chain(self.dns.iter().map(AsRawFd::as_raw_fd)).map(read).collect();
        if !self.pending.is_empty() {
            out.push(libc::pollfd { fd: self.host.as_raw_fd(), events: libc::POLLOUT, revents: 0 });
        }
        out
    }

    /// Handles a ready fd among [`pollfds`](Self::pollfds): accepts and hands off every
    /// pending connection, answers every pending query, or sends what waits.
    pub(super) fn ready(&mut self, fd: RawFd) {
        if let Some(l) = self.listeners.iter().position(|l| l.as_raw_fd() == fd) {
            // A budget per wake-up, so a flood never keeps init from signals and reaping.
            for _ in 0..PER_WAKEUP {
                if self.pending.len() >= MAX_PENDING {
                    break;
                }
                let Ok((conn, _)) = self.listeners[l].accept() else { break };
                self.hand_off(conn);
            }
        } else if let Some(d) = self.dns.iter().position(|d| d.as_raw_fd() == fd) {
            self.answer_queries(d);
        } else if fd == self.host.as_raw_fd() {
            self.flush();
        }
    }

    /// Sends what waits, in order, until the channel is full again. A host that is gone
    /// (any error but `EAGAIN`) gets nothing more: every waiting connection is reset.
    fn flush(&mut self) {
        while let Some((msg, conn)) = self.pending.pop_front() {
            match send_msg(
                self.host.as_fd(),
                &msg,
                conn.as_ref().map(AsFd::as_fd),
                libc::MSG_DONTWAIT,
            ) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EAGAIN) => {
                    self.pending.push_front((msg, conn));
                    return;
                }
                Err(_) => {
                    if let Some(c) = conn {
                        reset(c);
                    }
                    for (_, c) in self.pending.drain(..) {
                        if let Some(c) = c {
                            reset(c);
                        }
                    }
                    return;
                }
            }
        }
    }

    /// Queues a connection's message and sends what it can. Past [`MAX_PENDING`] (which
    /// the accept loop keeps from happening) the connection is reset.
    fn send(&mut self, msg: Vec<u8>, conn: Option<TcpStream>) {
        if self.pending.len() >= MAX_PENDING {
            if let Some(c) = conn {
                reset(c);
            }
            return;
        }
        self.pending.push_back((msg, conn));
        self.flush();
    }

    fn hand_off(&mut self, conn: TcpStream) {
        // The connection's own address is where the server dialled (every address is local).
        let Ok(local) = conn.local_addr() else { return reset(conn) };
        let ip = local.ip().to_canonical();
        let port = local.port();
        let proxy = ip.is_loopback() && port == self.proxy_port;
        let dest = match self.places.name_of(ip) {
            Some(name) => Dest::Name(name.to_owned()),
            None => Dest::Addr(ip),
        };
        let msg =
            serde_json::to_vec(&CaptureMsg::Connect { dest, port, proxy }).unwrap_or_default();
        // Never blocking: what the channel cannot take now waits in a bounded queue.
        self.send(msg, Some(conn));
    }

    fn answer_queries(&mut self, d: usize) {
        let mut buf = [0u8; 512];
        // Non-blocking: ends when no datagram is left, or at the wake-up's budget.
        for _ in 0..PER_WAKEUP {
            let Ok((n, from)) = self.dns[d].recv_from(&mut buf) else { break };
            let matcher = &self.matcher;
            let Some(answer) =
                dns::answer(&buf[..n], |name| matcher.answers_name(name), &mut self.places)
            else {
                continue;
            };
            // Dropped when the socket's buffer is full: DNS clients ask again.
            let _ = self.dns[d].send_to(&answer.bytes, from);
            let note = CaptureMsg::Dns {
                name: answer.name,
                qtype: answer.qtype,
                answered: matches!(answer.outcome, Outcome::Placeholder(_) | Outcome::NoData),
            };
            // For the log only: sent when the channel has room and nothing waits, else dropped
            // (a flood of queries must not take the queue's room from connections).
            if self.pending.is_empty() {
                let note = serde_json::to_vec(&note).unwrap_or_default();
                let _ = send_msg(self.host.as_fd(), &note, None, libc::MSG_DONTWAIT);
            }
        }
    }
}

/// A socket of `kind` bound to every address on `port`: dual-stack `[::]` when IPv6 works,
/// else `0.0.0.0`. Non-blocking, close-on-exec, `SO_REUSEADDR`.
fn bind_any(kind: Type, port: u16, v6: bool) -> io::Result<Socket> {
    let (domain, any): (Domain, IpAddr) = match v6 {
        true => (Domain::IPV6, Ipv6Addr::UNSPECIFIED.into()),
        false => (Domain::IPV4, Ipv4Addr::UNSPECIFIED.into()),
    };
    let socket = Socket::new(domain, kind.nonblocking().cloexec(), None)?;
    if v6 {
        socket.set_only_v6(false)?;
    }
    socket.set_reuse_address(true)?;
    socket.bind(&SocketAddr::new(any, port).into())?;
    Ok(socket)
}

/// Closes `conn` with a reset (the server sees `ECONNRESET`, not a clean end of stream).
fn reset(conn: TcpStream) {
    let _ = SockRef::from(&conn).set_linger(Some(std::time::Duration::ZERO));
    drop(conn);
}

/// `ifconfig lo up` through `SIOCSIFFLAGS`.
pub(super) fn loopback_up() -> io::Result<()> {
    // SAFETY: socket with integer arguments.
    let s = owned(cvt(unsafe {
        libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0)
    })?);
    // SAFETY: ifreq is plain data.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, b) in req.ifr_name.iter_mut().zip(b"lo\0") {
        *d = *b as libc::c_char;
    }
    req.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
    // SAFETY: a valid ifreq for SIOCSIFFLAGS.
    cvt(unsafe { libc::ioctl(s.as_raw_fd(), libc::SIOCSIFFLAGS, &req) }).map(drop)
}

/// The index of `lo`.
fn loopback_index() -> io::Result<u32> {
    // SAFETY: a valid C string.
    let i = unsafe { libc::if_nametoindex(c"lo".as_ptr()) };
    if i == 0 { Err(io::Error::last_os_error()) } else { Ok(i) }
}

/// `ip route add local default dev lo` for `family`.
fn add_local_default_route(family: libc::c_int) -> io::Result<()> {
    const RTM_NEWROUTE: u16 = 24;
    const RT_TABLE_LOCAL: u8 = 255;
    const RTPROT_BOOT: u8 = 3;
    const RT_SCOPE_HOST: u8 = 254;
    const RTN_LOCAL: u8 = 2;
    const RTA_OIF: u16 = 4;
    // rtmsg: family, dst_len, src_len, tos, table, protocol, scope, type, flags (u32).
    let mut body =
        vec![family as u8, 0, 0, 0, RT_TABLE_LOCAL, RTPROT_BOOT, RT_SCOPE_HOST, RTN_LOCAL];
    body.extend_from_slice(&0u32.to_ne_bytes());
    attribute(&mut body, RTA_OIF, &loopback_index()?.to_ne_bytes());
    rtnetlink(RTM_NEWROUTE, &body)
}

/// `ip addr add ADDR/32 dev lo`: an address that is not loopback's own, so that resolvers
/// asked with `AI_ADDRCONFIG` (glibc's `getent ahosts`, many runtimes) see an IPv4 address
/// configured and ask for A records at all. `192.0.2.1` is documentation space (RFC 5737),
/// itself a blocked range: nothing is ever dialled there.
fn add_config_address() -> io::Result<()> {
    const RTM_NEWADDR: u16 = 20;
    const IFA_LOCAL: u16 = 2;
    const IFA_ADDRESS: u16 = 1;
    const RT_SCOPE_HOST: u8 = 254;
    let addr = [192u8, 0, 2, 1];
    // ifaddrmsg: family, prefixlen, flags, scope, index (u32).
    let mut body = vec![libc::AF_INET as u8, 32, 0, RT_SCOPE_HOST];
    body.extend_from_slice(&loopback_index()?.to_ne_bytes());
    attribute(&mut body, IFA_LOCAL, &addr);
    attribute(&mut body, IFA_ADDRESS, &addr);
    rtnetlink(RTM_NEWADDR, &body)
}

/// Appends one route attribute (`rtattr`: length, type, the data padded to 4 bytes).
fn attribute(body: &mut Vec<u8>, kind: u16, data: &[u8]) {
    body.extend_from_slice(&((4 + data.len()) as u16).to_ne_bytes());
    body.extend_from_slice(&kind.to_ne_bytes());
    body.extend_from_slice(data);
    body.resize(body.len().next_multiple_of(4), 0);
}

/// Sends one rtnetlink request (`NLM_F_CREATE | NLM_F_EXCL`) and waits for the kernel's
/// acknowledgement.
fn rtnetlink(kind: u16, body: &[u8]) -> io::Result<()> {
    let len = (16 + body.len()) as u32;
    let mut msg = Vec::with_capacity(len as usize);
    msg.extend_from_slice(&len.to_ne_bytes());
    msg.extend_from_slice(&kind.to_ne_bytes());
    let flags =
        (libc::NLM_F_REQUEST | libc::NLM_F_ACK | libc::NLM_F_CREATE | libc::NLM_F_EXCL) as u16;
    msg.extend_from_slice(&flags.to_ne_bytes());
    msg.extend_from_slice(&1u32.to_ne_bytes());
    msg.extend_from_slice(&0u32.to_ne_bytes());
    msg.extend_from_slice(body);
    // SAFETY: socket with integer arguments.
    let sock = owned(cvt(unsafe {
        libc::socket(libc::AF_NETLINK, libc::SOCK_RAW | libc::SOCK_CLOEXEC, libc::NETLINK_ROUTE)
    })?);
    // SAFETY: sockaddr_nl is plain data; a zeroed one addresses the kernel.
    let mut kernel: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    kernel.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    // SAFETY: a valid buffer and address of the sizes given.
    cvt(unsafe {
        libc::sendto(
            sock.as_raw_fd(),
            msg.as_ptr().cast(),
            msg.len(),
            0,
            (&raw const kernel).cast(),
            std::mem::size_of_val(&kernel) as libc::socklen_t,
        )
    } as libc::c_int)?;
    let mut ack = [0u8; 256];
    // SAFETY: a valid buffer of the size given.
    let n = cvt(unsafe { libc::recv(sock.as_raw_fd(), ack.as_mut_ptr().cast(), ack.len(), 0) }
        as libc::c_int)? as usize;
    // NLMSG_ERROR (2) carries the errno, negated, after the 16-byte header; 0 is success.
    if n >= 20 && u16::from_ne_bytes([ack[4], ack[5]]) == libc::NLMSG_ERROR as u16 {
        let err = i32::from_ne_bytes([ack[16], ack[17], ack[18], ack[19]]);
        return if err == 0 { Ok(()) } else { Err(io::Error::from_raw_os_error(-err)) };
    }
    Err(io::Error::other("no acknowledgement from rtnetlink"))
}
