//! Large payloads by reference: results over a threshold are streamed to a spill store and
//! handed on as resource URIs.

pub mod link;
pub mod scan;
pub mod store;
