//! The tool router under arbitrary catalogs, requests and embedding files.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ringmcp::fuzzing::route(data));
