//! The ring against real pipes (skipped loudly where io_uring is missing).

use super::*;
use std::io::{Read as _, Write as _};

fn pipe() -> (Arc<OwnedFd>, std::fs::File) {
    let (r, w) = std::io::pipe().unwrap();
    (Arc::new(OwnedFd::from(r)), std::fs::File::from(OwnedFd::from(w)))
}

fn ring_or_skip() -> Option<Ring> {
    match Ring::new(64, Some(BufferPool { count: 4, size: 16 })) {
        Ok(r) => Some(r),
        Err(e) => {
            crate::testkit::skip(
                crate::testkit::SkipKind::Machine,
                format!("io_uring unavailable on this kernel: {e}"),
            );
            None
        }
    }
}

#[test]
fn read_returns_buffer_with_bytes() {
    let Some(mut ring) = ring_or_skip() else { return };
    let (r, mut w) = pipe();
    ring.read(&r, Vec::with_capacity(64), 7).unwrap();
    w.write_all(b"hello").unwrap();
    ring.submit_and_wait(Some(Duration::from_secs(5))).unwrap();
    let done: Vec<Completion> = ring.drain().collect();
    assert_eq!(done.len(), 1);
    assert_eq!(done[0].tag, 7);
    let Buffer::Read(buf) = &done[0].buffer else { panic!() };
    assert_eq!(buf, b"hello");
    assert_eq!(ring.in_flight(), 0);
}

#[test]
fn write_then_cancel_pending_read() {
    let Some(mut ring) = ring_or_skip() else { return };
    let (r, _w) = pipe();
    let (r2, w2) = std::io::pipe().unwrap();
    let w2 = Arc::new(OwnedFd::from(w2));
    ring.write(&w2, Bytes::from_static(b"abc"), 1).unwrap();
    ring.read(&r, Vec::with_capacity(16), 2).unwrap();
    ring.submit_and_wait(Some(Duration::from_secs(5))).unwrap();
    let mut got = [0u8; 3];
    std::fs::File::from(OwnedFd::from(r2)).read_exact(&mut got).unwrap();
    assert_eq!(&got, b"abc");
    ring.cancel(2).unwrap();
    let mut tags = Vec::new();
    for _ in 0..10 {
        ring.submit_and_wait(Some(Duration::from_millis(100))).unwrap();
        tags.extend(ring.drain().map(|c| (c.tag, c.result)));
        if ring.in_flight() == 0 {
            break;
        }
    }
    assert!(tags.contains(&(1, 3)), "{tags:?}");
    assert!(tags.contains(&(2, -libc::ECANCELED)), "{tags:?}");
}

#[test]
fn timed_wait_returns() {
    let Some(mut ring) = ring_or_skip() else { return };
    ring.submit_and_wait(Some(Duration::from_millis(5))).unwrap();
    assert_eq!(ring.drain().count(), 0);
    ring.features.ext_arg = false; // exercise the fallback path too
    ring.submit_and_wait(Some(Duration::from_millis(5))).unwrap();
    assert_eq!(ring.drain().count(), 0);
    assert_eq!(ring.in_flight(), 0);
}

#[test]
fn multishot_reads_fill_provided_buffers_until_they_run_out() {
    let Some(mut ring) = ring_or_skip() else { return };
    // Decided by the kernel's version, not by the flag under test (which is also false
    // when the buffer ring fails to register).
    if !crate::testkit::kernel_at_least(6, 7) {
        crate::testkit::skip(
            crate::testkit::SkipKind::Machine,
            "no multishot reads on a kernel before 6.7",
        );
        return;
    }
    assert!(
        ring.features().multishot_read,
        "a 6.7+ kernel has multishot reads and provided-buffer rings, but the ring has none: the probe or BufRing::new failed"
    );
    let (r, mut w) = pipe();
    ring.read_multishot(&r, 5).unwrap();
    w.write_all(&[7u8; 100]).unwrap(); // 4 buffers of 16 bytes: 64 bytes fit, then ENOBUFS
    let mut got = Vec::new();
    let mut leases = Vec::new();
    let mut ended = None;
    for _ in 0..20 {
        ring.submit_and_wait(Some(Duration::from_millis(100))).unwrap();
        let done: Vec<Completion> = ring.drain().collect();
        for c in done {
            assert_eq!(c.tag, 5);
            match c.buffer {
                Buffer::Provided { bid, len } => {
                    let lease = ring.lease(bid, len);
                    got.extend_from_slice(&lease);
                    leases.push(lease);
                }
                _ => ended = Some((c.result, c.more)),
            }
        }
        if ended.is_some() {
            break;
        }
    }
    assert_eq!(got, [7u8; 64]);
    assert_eq!(ended, Some((-libc::ENOBUFS, false)), "the read stops when no buffer is left");
    // Leases hand their buffers back when dropped; a re-armed read then gets the rest.
    drop(leases);
    ring.read_multishot(&r, 6).unwrap();
    drop(w);
    let mut rest = Vec::new();
    for _ in 0..20 {
        ring.submit_and_wait(Some(Duration::from_millis(100))).unwrap();
        let done: Vec<Completion> = ring.drain().collect();
        let mut eof = false;
        for c in done {
            match c.buffer {
                Buffer::Provided { bid, len } => {
                    rest.extend_from_slice(ring.view(bid, len));
                    ring.recycle(bid);
                }
                _ => eof = c.result == 0 && !c.more,
            }
        }
        if eof {
            break;
        }
    }
    assert_eq!(rest, [7u8; 36]);
    assert_eq!(ring.in_flight(), 0);
}
