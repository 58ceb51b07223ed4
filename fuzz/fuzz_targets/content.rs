//! The content scanner (poisoning, injections in results, credentials) over arbitrary text.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ringmcp::fuzzing::content(data));
