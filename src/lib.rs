//! # ringmcp
//!
//! The host-side engine for running Model Context Protocol (MCP) servers: it launches servers as
//! child processes, drains all their pipes from one io_uring reactor, and speaks JSON-RPC 2.0 /
//! MCP with them.
//!
//! ```text
//!  host code ── Client::call_tool ──▶ host/      public API: runtime-agnostic futures + blocking
//!       ▲                               │        twins; results parsed on the caller's thread
//!       │                               ▼
//!       │                             queue/     per-server lock-free request queue, admission
//!       │                               │        bound, -32000 + retryAfterSeconds when full
//!       │                               ▼
//!       │                             uring/     reactor thread: one io_uring, multishot reads
//!       │                               │        into shared provided buffers, writes, pidfds,
//!       │                               │        timers, eventfd wake-ups
//!       │                               ▼
//!       │                             frame/     bounded newline framer (memchr, zero-copy Bytes)
//!       │                               ▼
//!       │                             jsonrpc/   envelope decode (results stay raw) / encode
//!       │                               │        (parse/ pool: huge frames off the reactor)
//!       │                               ▼
//!       └──── oneshot completion ──── protocol/  sans-IO MCP session: lifecycle, versions,
//!                                                pending requests, deadlines (time passed in)
//! ```
//!
//! `frame`, `jsonrpc` and `protocol` are the sans-IO core: pure functions of their inputs, no
//! clock, no syscalls, no `unsafe`. `unsafe` lives only in `uring/`, `sandbox/` and `queue/`,
//! each block with a `SAFETY:` comment; `sandbox/` spawns server processes.

pub mod egress;
pub mod frame;
pub mod gateway;
pub mod host;
pub mod jsonrpc;
pub mod parse;
pub mod policy;
pub mod protocol;
pub mod queue;
pub mod route;
pub mod sandbox;
pub mod spill;
mod syscall;
pub mod transport;
pub mod uring;

#[doc(hidden)]
pub mod fuzzing;
#[doc(hidden)]
pub mod testkit;

/// The README's examples, compiled as doc-tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
