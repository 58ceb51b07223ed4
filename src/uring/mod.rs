//! The io_uring layer: the only code that talks to the ring.
//!
//! [`Ring`] is a safe owner of one io_uring and the buffers of its in-flight operations (see
//! its docs for the ownership contract). The reactor loop that uses it lives in
//! `host::driver`; this module knows nothing about MCP.

mod bufring;
mod ring;
pub(crate) mod sys;

pub use ring::{Buffer, BufferPool, Completion, Features, Readiness, Ring};
