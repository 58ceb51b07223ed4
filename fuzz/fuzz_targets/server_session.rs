//! The server session under arbitrary client lines.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ringmcp::fuzzing::server_session(data));
