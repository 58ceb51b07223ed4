//! The gateway's whole upstream loop under arbitrary client messages and backend requests.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    ringmcp::fuzzing::gateway_loop(data);
});
