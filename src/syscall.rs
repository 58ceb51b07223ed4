//! The one conversion of a raw syscall's return value into an [`io::Result`]: `-1` means
//! failure with `errno` (read at once, before anything else can overwrite it), anything else
//! is the value. Every module that calls libc directly (`uring/`, `sandbox/`) goes through it.
//! No `unsafe` here: the calls themselves stay in those modules.

use std::io;

/// A syscall return type whose failure value is `-1`.
pub(crate) trait MinusOne: Copy + PartialEq {
    /// `-1` of this type.
    const MINUS_ONE: Self;
}

impl MinusOne for i32 {
    const MINUS_ONE: Self = -1;
}

impl MinusOne for i64 {
    const MINUS_ONE: Self = -1;
}

impl MinusOne for isize {
    const MINUS_ONE: Self = -1;
}

/// `Err(errno)` for `-1`, `Ok(ret)` otherwise.
pub(crate) fn cvt<T: MinusOne>(ret: T) -> io::Result<T> {
    if ret == T::MINUS_ONE { Err(io::Error::last_os_error()) } else { Ok(ret) }
}

/// Runs `call` again for as long as it fails with `EINTR`: its value, or its other error.
/// Async-signal-safe when `call` is (nothing here allocates).
pub(crate) fn retry<T>(mut call: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match call() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            done => return done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minus_one_is_the_errno() {
        assert_eq!(cvt(5i32).unwrap(), 5);
        assert_eq!(cvt(0i64).unwrap(), 0);
        assert_eq!(cvt(-2isize).unwrap(), -2, "only -1 means failure");
        // A failed open leaves ENOENT in errno, which a -1 then reports.
        assert!(std::fs::File::open("/nonexistent/ringmcp").is_err());
        let e = cvt(-1i32).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
    }

    #[test]
    fn retry_runs_again_only_on_eintr() {
        let mut calls = 0;
        let r = retry(|| {
            calls += 1;
            if calls < 3 { Err(io::Error::from_raw_os_error(libc::EINTR)) } else { Ok(calls) }
        });
        assert_eq!(r.unwrap(), 3);
        let mut calls = 0;
        let r: io::Result<()> = retry(|| {
            calls += 1;
            Err(io::Error::from_raw_os_error(libc::EAGAIN))
        });
        assert_eq!((r.unwrap_err().raw_os_error(), calls), (Some(libc::EAGAIN), 1));
    }
}
