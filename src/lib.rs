//! # ringmcp
//!
//! The host-side engine for running Model Context Protocol (MCP) servers: it launches servers as
//! child processes, drains all their pipes from one io_uring reactor, and speaks JSON-RPC 2.0 /
//! MCP with them.
//!
//! ```text
//!  host code ── Client::call_tool ──▶ host/      public API, runtime-agnostic futures + blocking twins
//!                                       │
//!                                       ▼
//!                                     uring/     reactor thread: one io_uring, every server's pipes,
//!                                       │        exits (pidfd), timers, eventfd wake-ups
//!                                       ▼
//!                                     frame/     bounded newline framer (memchr, zero-copy Bytes)
//!                                       ▼
//!                                     jsonrpc/   JSON-RPC 2.0 envelope decode / encode
//!                                       ▼
//!                                     protocol/  sans-IO MCP session: lifecycle, versions, pending
//!                                                requests and deadlines (time passed in)
//! ```
//!
//! `frame`, `jsonrpc` and `protocol` are the sans-IO core: pure functions of their inputs, no
//! clock, no syscalls, no `unsafe`. Only `uring/` (and later `sandbox/`, `queue/`) use `unsafe`,
//! each block with a `SAFETY:` comment.

pub mod frame;
pub mod jsonrpc;
pub mod parse;

#[doc(hidden)]
pub mod fuzzing;
pub mod host;
pub mod protocol;
pub mod sandbox;
pub mod uring;

/// The README's examples, compiled as doc-tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
pub mod queue;
