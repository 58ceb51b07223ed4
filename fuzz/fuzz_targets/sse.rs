//! The SSE parser (HTTP transports) against its oracle, under varying chunkings.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ringmcp::fuzzing::sse(data));
