//! The one integration-test binary: real processes, real pipes, real io_uring.

#![allow(unreachable_pub)]

mod faults;
mod leaks;
mod reference;
mod util;
