//! The one integration-test binary: real processes, real pipes, real io_uring.

#![allow(unreachable_pub)]

mod bench_cli;
mod content;
mod direct;
mod egress;
mod eras;
mod everything;
mod faults;
mod gateway;
mod gateway_http;
mod hosted;
mod json_suite;
mod leaks;
mod limits;
mod policy;
mod python_sdk;
mod reference;
mod route;
mod sandbox;
mod scripted;
mod spill;
mod supervise;
mod transport;
mod upstream;
mod util;
