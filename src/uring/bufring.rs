//! A provided-buffer ring (`IORING_REGISTER_PBUF_RING`, Linux 5.19): one pool of receive
//! buffers shared by every multishot read, instead of a buffer parked on every pipe.
//!
//! Ownership protocol, per buffer id (`bid`):
//! * **in the ring**: the kernel may pick it for any read of our buffer group and write into
//!   it; we never touch it;
//! * **completed**: a completion named it; the kernel will not touch it again until we put it
//!   back. We may read its first `len` bytes, either briefly ([`BufRing::view`]) or through a
//!   [`Bytes`] lease ([`BufRing::lease`]) that outlives the call;
//! * **returned**: a lease was dropped (on any thread); its bid waits on a lock-free queue until
//!   the reactor puts it back in the ring ([`BufRing::recycle_returned`]).
//!
//! Each bid is in exactly one of these states, so the kernel and our readers never share a
//! buffer. The data memory is reference-counted by leases, so it outlives the ring if a frame
//! is still held somewhere when the host shuts down.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::io;
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicU16, Ordering};

use bytes::Bytes;
use crossbeam_queue::SegQueue;
use io_uring::Submitter;
use io_uring::types::BufRingEntry;

/// The buffers' memory and the queue of bids whose leases ended.
struct Pool {
    base: NonNull<u8>,
    layout: Layout,
    size: usize,
    returned: SegQueue<u16>,
}

// SAFETY: `base` is a private heap allocation; which thread may read which buffer is governed
// by the ownership protocol in the module docs (a lease gives one holder read access to one
// completed buffer), and `returned` is a thread-safe queue.
unsafe impl Send for Pool {}
// SAFETY: as above; shared access never writes through `base`.
unsafe impl Sync for Pool {}

impl Drop for Pool {
    fn drop(&mut self) {
        // SAFETY: allocated in `BufRing::new` with this exact layout; the last `Arc` is gone, so
        // no lease reads it, and the ring (whose kernel registration could write into it) was
        // torn down first or leaked its reference (see `BufRing::leak`).
        unsafe { dealloc(self.base.as_ptr(), self.layout) };
    }
}

impl Pool {
    /// # Safety
    /// `bid` must be completed or leased (not in the ring) and `len <= size`, for as long as
    /// the returned slice lives.
    unsafe fn slice(&self, bid: u16, len: usize) -> &[u8] {
        debug_assert!(len <= self.size);
        // SAFETY: `bid < count`, so the offset stays within the allocation.
        let start = unsafe { self.base.as_ptr().add(usize::from(bid) * self.size) };
        // SAFETY: `start..start + len` lies within the allocation (len <= size), and per the
        // caller's contract the kernel does not write this buffer meanwhile.
        unsafe { std::slice::from_raw_parts(start, len) }
    }
}

/// A read-only lease on one completed buffer; dropping it hands the bid back for recycling.
struct Lease {
    pool: Arc<Pool>,
    bid: u16,
    len: usize,
}

impl AsRef<[u8]> for Lease {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: a lease exists only for a completed buffer and is the only claim on it; the
        // bid re-enters the ring only after this lease is dropped (`Drop` below).
        unsafe { self.pool.slice(self.bid, self.len) }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.pool.returned.push(self.bid);
    }
}

/// The registered ring of provided buffers for one buffer group.
pub(crate) struct BufRing {
    entries: NonNull<BufRingEntry>,
    entries_layout: Layout,
    mask: u16,
    /// Our copy of the tail; published to the kernel with a release store.
    tail: u16,
    bgid: u16,
    pool: Arc<Pool>,
}

impl BufRing {
    /// Allocates `count` buffers of `size` bytes (count: a power of two, at most 32768),
    /// registers them as buffer group `bgid`, and hands them all to the kernel.
    pub(crate) fn new(
        submitter: &Submitter<'_>,
        bgid: u16,
        count: u16,
        size: usize,
    ) -> io::Result<BufRing> {
        if !count.is_power_of_two() || count > 32768 || size == 0 || size > u32::MAX as usize {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "bad provided-buffer ring geometry",
            ));
        }
        let page = 4096;
        let entries_size = (usize::from(count) * size_of::<BufRingEntry>()).next_multiple_of(page);
        let entries_layout =
            Layout::from_size_align(entries_size, page).map_err(io::Error::other)?;
        let layout =
            Layout::from_size_align(usize::from(count) * size, 64).map_err(io::Error::other)?;
        // SAFETY: both layouts have non-zero size (count >= 1, size >= 1).
        let entries = NonNull::new(unsafe { alloc_zeroed(entries_layout) }.cast::<BufRingEntry>())
            .ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?;
        // SAFETY: as above.
        let Some(base) = NonNull::new(unsafe { alloc_zeroed(layout) }) else {
            // SAFETY: allocated just above with this layout.
            unsafe { dealloc(entries.as_ptr().cast(), entries_layout) };
            return Err(io::ErrorKind::OutOfMemory.into());
        };
        let pool = Arc::new(Pool { base, layout, size, returned: SegQueue::new() });
        let mut ring = BufRing { entries, entries_layout, mask: count - 1, tail: 0, bgid, pool };
        // SAFETY: `entries` is page-aligned memory for `count` entries, owned by `ring` and
        // kept alive until `Drop` unregisters it (or deliberately leaked).
        let registered = unsafe {
            submitter.register_buf_ring_with_flags(entries.as_ptr() as u64, count, bgid, 0)
        };
        if let Err(e) = registered {
            ring.bgid = u16::MAX; // nothing to unregister
            return Err(e);
        }
        for bid in 0..count {
            ring.push(bid);
        }
        ring.publish();
        Ok(ring)
    }

    /// The buffer group id to name in reads.
    pub(crate) fn bgid(&self) -> u16 {
        self.bgid
    }

    /// Writes an entry for `bid` at the tail (not yet visible to the kernel).
    fn push(&mut self, bid: u16) {
        let index = usize::from(self.tail & self.mask);
        // SAFETY: `index <= mask < count`, within the entries allocation.
        let slot = unsafe { self.entries.as_ptr().add(index) };
        // SAFETY: the kernel only reads entries between its head and the published tail; this
        // slot is past the published tail, so nothing else accesses it now.
        let entry = unsafe { &mut *slot };
        // SAFETY: `bid < count`, so the buffer lies within the pool's allocation.
        let addr = unsafe { self.pool.base.as_ptr().add(usize::from(bid) * self.pool.size) };
        entry.set_addr(addr as u64);
        entry.set_len(self.pool.size as u32);
        entry.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
    }

    /// Makes every pushed entry visible to the kernel.
    fn publish(&self) {
        // SAFETY: `entries` points at entry 0 of the registered, initialised ring, as `tail`
        // requires; its `resv` field is the ring's tail (io_uring ABI).
        let tail = unsafe { BufRingEntry::tail(self.entries.as_ptr()) }.cast::<AtomicU16>();
        // SAFETY: a naturally aligned u16 inside our live allocation, shared with the kernel
        // only through atomic accesses, so viewing it as an AtomicU16 is sound. Release: the
        // entry writes in `push` happen before the kernel observes the new tail (it reads the
        // tail with an acquire load).
        let tail = unsafe { &*tail };
        tail.store(self.tail, Ordering::Release);
    }

    /// Reads a completed buffer for the duration of the borrow. The buffer stays out of the
    /// ring until [`recycle`](Self::recycle) (which needs `&mut self`, so not while borrowed).
    ///
    /// # Panics
    /// If `len` exceeds the buffer size.
    pub(crate) fn view(&self, bid: u16, len: usize) -> &[u8] {
        assert!(len <= self.pool.size && bid <= self.mask);
        // SAFETY: the caller got `bid` from a completion and has not recycled it (recycling
        // needs `&mut self`, excluded while this borrow lives).
        unsafe { self.pool.slice(bid, len) }
    }

    /// Hands out a completed buffer as `Bytes` without copying; the bid comes back for
    /// recycling when the last clone or slice of it is dropped.
    ///
    /// # Panics
    /// If `len` exceeds the buffer size.
    pub(crate) fn lease(&self, bid: u16, len: usize) -> Bytes {
        assert!(len <= self.pool.size && bid <= self.mask);
        Bytes::from_owner(Lease { pool: self.pool.clone(), bid, len })
    }

    /// Puts a completed buffer that was not leased back in the ring.
    pub(crate) fn recycle(&mut self, bid: u16) {
        self.push(bid);
        self.publish();
    }

    /// Puts every buffer whose lease ended back in the ring; returns how many.
    pub(crate) fn recycle_returned(&mut self) -> usize {
        let mut n = 0;
        while let Some(bid) = self.pool.returned.pop() {
            self.push(bid);
            n += 1;
        }
        if n > 0 {
            self.publish();
        }
        n
    }

    /// Unregisters the ring. Call only when no operation of the group is in flight.
    pub(crate) fn unregister(&mut self, submitter: &Submitter<'_>) {
        if self.bgid != u16::MAX {
            let _ = submitter.unregister_buf_ring(self.bgid);
            self.bgid = u16::MAX;
        }
    }

    /// Leaks the memory instead of freeing it (when operations may still be in flight).
    pub(crate) fn leak(self) {
        std::mem::forget(self.pool.clone());
        std::mem::forget(self);
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        // The owner unregistered the ring first (`Ring::drop`), so the kernel no longer reads
        // the entries. The buffers themselves live on while leases hold the pool.
        debug_assert_eq!(self.bgid, u16::MAX, "BufRing dropped while still registered");
        // SAFETY: allocated in `new` with this layout and no longer registered.
        unsafe { dealloc(self.entries.as_ptr().cast(), self.entries_layout) };
    }
}
