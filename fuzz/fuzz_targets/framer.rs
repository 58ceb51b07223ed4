//! The newline framer against its oracle, under varying bounds and chunkings.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ringmcp::fuzzing::framer(data));
