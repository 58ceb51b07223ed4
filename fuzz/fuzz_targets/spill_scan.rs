//! The spill scanner against serde_json, under varying thresholds and chunkings.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ringmcp::fuzzing::spill_scan(data));
