//! The gateway's naming and routing tables under arbitrary backend names.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ringmcp::fuzzing::gateway(data));
