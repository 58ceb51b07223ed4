//! What passes between a sandbox's init and the host's egress proxy (docs/egress.md).
//!
//! When a server has network (`sandbox.network`), its network namespace keeps only loopback,
//! with a *local* default route for IPv4 and IPv6: every address is local there, so every
//! outbound TCP connect, to any address, lands on a listener that the sandbox's init holds on
//! each captured port (the policy's ports, and the HTTP proxy's). The accepted socket's own
//! address is the destination the server dialled. Init maps a DNS placeholder back to its
//! name and hands the socket to the host over a `SOCK_SEQPACKET` socketpair inherited at
//! spawn (no path in any filesystem, nothing a server can reach): one [`CaptureMsg`] per
//! message, the socket as `SCM_RIGHTS`. UDP to port 53 reaches init's DNS stub, which never
//! forwards; other UDP finds no listener and is refused. The host judges and relays
//! (`egress/`).

use std::os::fd::{FromRawFd, OwnedFd};

use serde::{Deserialize, Serialize};

use crate::policy::egress::{Dest, NetworkPolicy};

/// The port of the in-sandbox HTTP proxy that `HTTP_PROXY` and `HTTPS_PROXY` name
/// (`http://127.0.0.1:3128`). A convenience for clients that honour those variables; the
/// capture does not depend on it.
pub const PROXY_PORT: u16 = 3128;

/// The largest [`CaptureMsg`] on the wire.
pub const MAX_MSG: usize = 1024;

/// The sandbox's side of its network, sent to init in the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EgressPlan {
    /// The server's policy (the DNS stub answers only names it allows).
    pub policy: NetworkPolicy,
    /// The TCP ports to capture.
    pub ports: Vec<u16>,
    /// The HTTP proxy's port on loopback.
    pub proxy_port: u16,
}

/// One message from init to the host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum CaptureMsg {
    /// A connection the server opened; the socket travels with the message.
    Connect {
        /// Where it asked to go (a placeholder mapped back to its name).
        dest: Dest,
        /// The port.
        port: u16,
        /// Opened to the HTTP proxy port: the destination is in the request.
        proxy: bool,
    },
    /// A name the server looked up (for the log: nothing is resolved for it).
    Dns {
        /// The name, when it could be read.
        name: Option<String>,
        /// The record type.
        qtype: u16,
        /// Whether the name is allowed: a placeholder, or an empty answer for a record type
        /// other than A (else NXDOMAIN or REFUSED).
        answered: bool,
    },
}

/// A new egress channel: a connected, close-on-exec `SOCK_SEQPACKET` socketpair (init's end,
/// the host's end).
///
/// # Errors
/// The OS error of `socketpair`.
pub fn channel() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: a valid out-array of two ints.
    let r = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    crate::syscall::cvt(r)?;
    // SAFETY: socketpair returned two fresh fds that nobody else owns (this one, then the
    // other).
    let a = unsafe { OwnedFd::from_raw_fd(fds[0]) };
    // SAFETY: as above.
    let b = unsafe { OwnedFd::from_raw_fd(fds[1]) };
    Ok((a, b))
}
