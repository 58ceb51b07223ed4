//! The sandbox's network on untrusted bytes: the DNS stub, the first-bytes sniffer and proxy
//! requests, allowlist entries.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ringmcp::fuzzing::egress(data));
