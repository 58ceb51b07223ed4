//! The one integration-test binary: real processes, real pipes, real io_uring.

#![allow(unreachable_pub)]

mod reference;
mod util;
