//! The security gateway's decision under arbitrary policies and arguments.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ringmcp::fuzzing::policy(data));
