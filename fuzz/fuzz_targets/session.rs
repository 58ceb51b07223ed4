//! The client session under a script of requests, answers, inputs, cancellations and time.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ringmcp::fuzzing::session(data));
