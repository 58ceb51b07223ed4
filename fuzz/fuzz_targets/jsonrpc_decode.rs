//! The JSON-RPC decoder: never panics, and accepted responses survive re-encoding.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ringmcp::fuzzing::jsonrpc_decode(data));
