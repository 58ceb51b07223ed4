//! A safe, owning wrapper over one io_uring.
//!
//! The kernel reads and writes user memory named by in-flight operations until their
//! completions arrive. [`Ring`] makes that a type-level guarantee: every operation's buffer (and
//! a reference to its file) is moved into a slab entry when the operation is pushed, keyed by a
//! generation-checked token that travels as the SQE's `user_data`, and is handed back only with
//! the operation's completion. Callers never see a raw pointer; they tag operations with their
//! own `u64` and get the buffer back in a [`Completion`].

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use io_uring::{IoUring, Probe, cqueue, opcode, squeue, types};

use super::bufring::BufRing;

/// What the kernel offers, probed once when the ring is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Features {
    /// `IORING_OP_READ` (5.6); otherwise reads use `IORING_OP_READV` (5.1).
    pub read: bool,
    /// `IORING_OP_WRITE` (5.6); otherwise writes use `IORING_OP_WRITEV`.
    pub write: bool,
    /// `IORING_FEAT_EXT_ARG` (5.11): waits carry their own timeout; otherwise a timeout op is
    /// pushed before each timed wait.
    pub ext_arg: bool,
    /// `IORING_FEAT_NODROP` (5.5): completions are never dropped on CQ overflow.
    pub nodrop: bool,
    /// Multishot reads into a provided-buffer ring (`IORING_OP_READ_MULTISHOT`, 6.7, and
    /// `IORING_REGISTER_PBUF_RING`, 5.19); otherwise every read carries its own buffer.
    pub multishot_read: bool,
    /// The ring was set up with `SINGLE_ISSUER | DEFER_TASKRUN` (6.1): completions are
    /// processed only when the reactor waits, never by interrupting it.
    pub defer_taskrun: bool,
    /// `IORING_ENTER_NO_IOWAIT` (6.15): the reactor's waits are not accounted as iowait.
    pub no_iowait: bool,
}

/// Size and number of the shared receive buffers of multishot reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferPool {
    /// Number of buffers (a power of two, at most 32768).
    pub count: u16,
    /// Bytes per buffer.
    pub size: usize,
}

impl Default for BufferPool {
    /// 128 buffers of 64 KiB: 8 MiB shared by every server, whatever their number.
    fn default() -> Self {
        BufferPool { count: 128, size: 64 * 1024 }
    }
}

/// The buffer an operation owned, returned with its completion.
#[derive(Debug)]
pub enum Buffer {
    /// A read's buffer; the first `result` bytes were filled.
    Read(Vec<u8>),
    /// A write's bytes; the first `result` bytes were written.
    Write(Bytes),
    /// A provided buffer picked by the kernel for a multishot read: read it with
    /// [`Ring::view`] or [`Ring::lease`], then give it back with [`Ring::recycle`] (a lease
    /// gives itself back when dropped).
    Provided {
        /// The buffer id.
        bid: u16,
        /// Bytes filled.
        len: usize,
    },
    /// Operations without a data buffer (poll, cancel, timeout), and multishot completions
    /// that carry none (end of file, errors).
    None,
}

/// One finished operation.
#[derive(Debug)]
pub struct Completion {
    /// The caller's tag given when the operation was pushed.
    pub tag: u64,
    /// The kernel's result: a byte count or poll mask, or `-errno`.
    pub result: i32,
    /// The operation's buffer, back in the caller's hands.
    pub buffer: Buffer,
    /// A multishot operation stays armed and will complete again (`IORING_CQE_F_MORE`).
    pub more: bool,
}

impl Completion {
    /// The result as `io::Result`.
    pub fn io_result(&self) -> io::Result<usize> {
        if self.result < 0 {
            Err(io::Error::from_raw_os_error(-self.result))
        } else {
            Ok(self.result as usize)
        }
    }
}

/// Memory an in-flight operation points into. Heap allocations do not move when their owner
/// (a `Vec`, `Bytes` or `Box`) is moved, so storing the owner here keeps the pointer valid.
#[derive(Debug)]
enum Owned {
    Read {
        buf: Vec<u8>,
        iov: Option<Box<Iovec>>,
    },
    Write {
        data: Bytes,
        iov: Option<Box<Iovec>>,
    },
    Timespec(Box<types::Timespec>),
    /// A multishot read: its buffers come from the provided-buffer ring.
    Multishot,
    None,
}

/// An `iovec` describing a buffer owned by the same slab entry.
#[derive(Debug)]
struct Iovec(libc::iovec);

// SAFETY: the iovec's pointer refers to the heap buffer of the `Vec`/`Bytes` stored beside it
// in the same `Owned` value; the pair moves between threads together, so sending it is as
// safe as sending that buffer (which is `Send`).
unsafe impl Send for Iovec {}

#[derive(Debug)]
struct InFlight {
    generation: u32,
    tag: u64,
    owned: Owned,
    /// Keeps the fd number from being closed and reused while the SQE names it.
    _file: Option<Arc<OwnedFd>>,
}

/// Tag of the ring's own operations (wait timeouts, cancels); never returned to callers.
const INTERNAL_TAG: u64 = u64::MAX;

/// An io_uring plus the operations it has in flight. Single-threaded by design: the reactor
/// thread owns it.
pub struct Ring {
    ring: IoUring,
    features: Features,
    slots: Vec<Option<InFlight>>,
    free: Vec<u32>,
    generation: u32,
    in_flight: usize,
    /// Completions reaped but not yet taken by the caller.
    ready: Vec<Completion>,
    /// Shared receive buffers of multishot reads, when the kernel offers them.
    bufs: Option<BufRing>,
}

impl std::fmt::Debug for Ring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ring")
            .field("features", &self.features)
            .field("in_flight", &self.in_flight)
            .finish()
    }
}

fn token(slot: u32, generation: u32) -> u64 {
    (u64::from(generation) << 32) | u64::from(slot)
}

/// A pollable ring's fd as the tokio runtime watches it ([`Ring::readiness`]).
pub struct Readiness(tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>);

impl Readiness {
    /// Waits until the ring has completions (or had, since the last wait), and clears that: a
    /// completion posted after this returns makes the next wait return at once. Reap after
    /// it, never before.
    ///
    /// # Errors
    /// When the runtime's I/O driver fails.
    pub async fn wait(&self) -> io::Result<()> {
        self.0.readable().await?.clear_ready();
        Ok(())
    }
}

impl Ring {
    /// Builds a ring with `entries` submission slots (completion queue 4x that) and probes it.
    ///
    /// # Errors
    /// When io_uring is unavailable (`ENOSYS`, or `EPERM` where `kernel.io_uring_disabled` is
    /// set) or memory for the ring cannot be had.
    ///
    /// Build it on the thread that will use it: with `SINGLE_ISSUER` only that thread may
    /// submit. `pool` sizes the provided buffers of multishot reads (`None`: none).
    pub fn new(entries: u32, pool: Option<BufferPool>) -> io::Result<Ring> {
        Ring::build(entries, pool, false)
    }

    /// A ring to be waited on through its fd, by an event loop that polls it with others
    /// (epoll): none of the setup flags that defer completion work until the submitter
    /// enters the kernel, so a completion wakes a thread asleep in `epoll_wait` and makes the
    /// fd readable ([`fd`](Self::fd)). Reap with `submit_and_wait(Some(ZERO))`.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn pollable(entries: u32, pool: Option<BufferPool>) -> io::Result<Ring> {
        Ring::build(entries, pool, true)
    }

    /// Readiness of a [`pollable`](Self::pollable) ring's fd, in the current tokio runtime:
    /// readable while completions wait in its queue.
    ///
    /// # Errors
    /// When the fd cannot be duplicated or registered with the runtime.
    ///
    /// # Panics
    /// Outside a tokio runtime with I/O enabled.
    pub fn readiness(&self) -> io::Result<Readiness> {
        use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
        use tokio::io::{Interest, unix::AsyncFd};
        // SAFETY: the ring's fd is open for as long as `self.ring` lives, and `self` is
        // borrowed for this call, which only duplicates it.
        let fd = unsafe { BorrowedFd::borrow_raw(self.ring.as_raw_fd()) };
        let dup = fd.as_fd().try_clone_to_owned()?;
        // SAFETY: `dup` is an OwnedFd moved into the AsyncFd: it stays open, and names the
        // same file description, until the AsyncFd (and with it `dup`) is dropped.
        let registered = unsafe { AsyncFd::register_with_interest(dup, Interest::READABLE) };
        registered.map(Readiness).map_err(|e| e.into_parts().1)
    }

    fn build(entries: u32, pool: Option<BufferPool>, pollable: bool) -> io::Result<Ring> {
        let mut builder = IoUring::builder();
        builder.setup_cqsize(entries * 4).setup_clamp();
        // Best first: SINGLE_ISSUER | DEFER_TASKRUN (6.1) runs completion work only when we
        // wait; COOP_TASKRUN (5.19) at least avoids IPIs; then whatever the kernel takes.
        // A pollable ring takes neither: either would leave a completion unposted while its
        // thread sleeps in epoll_wait.
        let (ring, defer_taskrun) = if pollable {
            (builder.build(entries)?, false)
        } else {
            match builder.clone().setup_single_issuer().setup_defer_taskrun().build(entries) {
                Ok(ring) => (ring, true),
                Err(_) => match builder.clone().setup_coop_taskrun().build(entries) {
                    Ok(ring) => (ring, false),
                    Err(_) => (builder.build(entries)?, false),
                },
            }
        };
        let mut probe = Probe::new();
        let probed = ring.submitter().register_probe(&mut probe).is_ok();
        let multishot = probed && probe.is_supported(opcode::ReadMulti::CODE);
        let bufs = match pool {
            Some(p) if multishot => BufRing::new(&ring.submitter(), 0, p.count, p.size).ok(),
            _ => None,
        };
        let features = Features {
            read: probed && probe.is_supported(opcode::Read::CODE),
            write: probed && probe.is_supported(opcode::Write::CODE),
            ext_arg: ring.params().is_feature_ext_arg(),
            nodrop: ring.params().is_feature_nodrop(),
            multishot_read: bufs.is_some(),
            defer_taskrun,
            no_iowait: ring.params().is_feature_ext_arg() && ring.params().is_feature_no_iowait(),
        };
        Ok(Ring {
            ring,
            features,
            slots: Vec::new(),
            free: Vec::new(),
            generation: 0,
            in_flight: 0,
            ready: Vec::new(),
            bufs,
        })
    }

    /// What the kernel offers.
    pub fn features(&self) -> Features {
        self.features
    }

    /// Operations pushed and not yet completed.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    fn insert(&mut self, tag: u64, owned: Owned, file: Option<Arc<OwnedFd>>) -> (u64, &mut Owned) {
        self.generation = self.generation.wrapping_add(1);
        let generation = self.generation;
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.slots.push(None);
                u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 operations in flight")
            }
        };
        self.in_flight += 1;
        let entry =
            self.slots[slot as usize].insert(InFlight { generation, tag, owned, _file: file });
        (token(slot, generation), &mut entry.owned)
    }

    fn push_entry(&mut self, entry: squeue::Entry) -> io::Result<()> {
        loop {
            // SAFETY: every pointer in `entry` points into memory owned by a slab entry inserted
            // just before this call (see `insert`), which stays alive until the operation's
            // completion is reaped in `reap`; the fd it names is kept open by the same entry.
            let pushed = unsafe { self.ring.submission().push(&entry) };
            match pushed {
                Ok(()) => return Ok(()),
                // Queue full: hand what is queued to the kernel and retry.
                Err(_) => {
                    self.ring.submit()?;
                }
            }
        }
    }

    /// Reads up to `buf.capacity()` bytes from `file` into `buf` (its length is ignored).
    ///
    /// # Errors
    /// Only if the submission queue cannot be flushed to the kernel.
    pub fn read(&mut self, file: &Arc<OwnedFd>, mut buf: Vec<u8>, tag: u64) -> io::Result<()> {
        buf.clear();
        let len = u32::try_from(buf.capacity()).unwrap_or(u32::MAX);
        let fd = types::Fd(file.as_raw_fd());
        let use_read = self.features.read;
        let (token, owned) = self.insert(tag, Owned::Read { buf, iov: None }, Some(file.clone()));
        let Owned::Read { buf, iov } = owned else { unreachable!("just inserted a read") };
        let ptr = buf.as_mut_ptr();
        let entry = if use_read {
            opcode::Read::new(fd, ptr, len).build()
        } else {
            let iov = iov.insert(Box::new(Iovec(libc::iovec {
                iov_base: ptr.cast(),
                iov_len: len as usize,
            })));
            opcode::Readv::new(fd, &raw const iov.0, 1).build()
        };
        self.push_entry(entry.user_data(token))
    }

    /// Writes `data` to `file`. The completion says how much was written; a short write leaves
    /// the rest to the caller.
    ///
    /// # Errors
    /// Only if the submission queue cannot be flushed to the kernel.
    pub fn write(&mut self, file: &Arc<OwnedFd>, data: Bytes, tag: u64) -> io::Result<()> {
        let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
        let fd = types::Fd(file.as_raw_fd());
        let use_write = self.features.write;
        let (token, owned) = self.insert(tag, Owned::Write { data, iov: None }, Some(file.clone()));
        let Owned::Write { data, iov } = owned else { unreachable!("just inserted a write") };
        let ptr = data.as_ptr();
        let entry = if use_write {
            opcode::Write::new(fd, ptr, len).build()
        } else {
            let iov = iov.insert(Box::new(Iovec(libc::iovec {
                iov_base: ptr.cast_mut().cast(),
                iov_len: len as usize,
            })));
            opcode::Writev::new(fd, &raw const iov.0, 1).build()
        };
        self.push_entry(entry.user_data(token))
    }

    /// Arms a multishot read on `file`: each chunk that arrives completes with a
    /// [`Buffer::Provided`] and `more` set, until the stream ends (result 0), fails, or the
    /// kernel runs out of buffers (`-ENOBUFS`); then `more` is false and the caller re-arms.
    ///
    /// # Errors
    /// `Unsupported` when [`Features::multishot_read`] is false; otherwise only if the
    /// submission queue cannot be flushed.
    pub fn read_multishot(&mut self, file: &Arc<OwnedFd>, tag: u64) -> io::Result<()> {
        let Some(bgid) = self.bufs.as_ref().map(BufRing::bgid) else {
            return Err(io::ErrorKind::Unsupported.into());
        };
        let fd = types::Fd(file.as_raw_fd());
        let (token, _) = self.insert(tag, Owned::Multishot, Some(file.clone()));
        self.push_entry(opcode::ReadMulti::new(fd, 0, bgid).build().user_data(token))
    }

    /// Reads a provided buffer from a completion, for the duration of the borrow.
    ///
    /// # Panics
    /// Without a buffer ring, or for a `bid`/`len` no completion could have named.
    pub fn view(&self, bid: u16, len: usize) -> &[u8] {
        self.bufs.as_ref().expect("provided buffers in use").view(bid, len)
    }

    /// Hands out a provided buffer from a completion as `Bytes`, without copying; it returns
    /// to the kernel when the last reference is dropped.
    ///
    /// # Panics
    /// As [`view`](Self::view).
    pub fn lease(&self, bid: u16, len: usize) -> Bytes {
        self.bufs.as_ref().expect("provided buffers in use").lease(bid, len)
    }

    /// Gives a provided buffer from a completion back to the kernel (if it was not leased).
    pub fn recycle(&mut self, bid: u16) {
        if let Some(bufs) = &mut self.bufs {
            bufs.recycle(bid);
        }
    }

    /// Waits (one-shot) until `file` is readable; the result is the `revents` mask.
    ///
    /// # Errors
    /// Only if the submission queue cannot be flushed to the kernel.
    pub fn poll_readable(&mut self, file: &Arc<OwnedFd>, tag: u64) -> io::Result<()> {
        let fd = types::Fd(file.as_raw_fd());
        let (token, _) = self.insert(tag, Owned::None, Some(file.clone()));
        self.push_entry(opcode::PollAdd::new(fd, libc::POLLIN as u32).build().user_data(token))
    }

    /// Asks the kernel to cancel every in-flight operation carrying `tag`. Each still completes
    /// (usually with `-ECANCELED`), so its buffer comes back as usual.
    ///
    /// # Errors
    /// Only if the submission queue cannot be flushed to the kernel.
    pub fn cancel(&mut self, tag: u64) -> io::Result<()> {
        let targets: Vec<u64> = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(slot, e)| {
                let e = e.as_ref()?;
                (e.tag == tag).then(|| token(slot as u32, e.generation))
            })
            .collect();
        for target in targets {
            let (token, _) = self.insert(INTERNAL_TAG, Owned::None, None);
            self.push_entry(opcode::AsyncCancel::new(target).build().user_data(token))?;
        }
        Ok(())
    }

    /// Submits what is queued and waits until at least one completion is ready or `timeout`
    /// passes (`None`: no limit; `Some(ZERO)`: do not wait). Then reaps completions into the
    /// ready list; take them with [`drain`](Self::drain).
    ///
    /// # Errors
    /// Errors of `io_uring_enter` other than `EINTR`, `ETIME` and `EBUSY`.
    pub fn submit_and_wait(&mut self, timeout: Option<Duration>) -> io::Result<()> {
        if let Some(bufs) = &mut self.bufs {
            bufs.recycle_returned();
        }
        let result = match timeout {
            Some(t) if t.is_zero() => self.ring.submit(),
            // NO_IOWAIT (6.15): waiting for a server is not waiting for a disk; without it the
            // reactor's idle time shows up as iowait in system statistics.
            None if self.features.no_iowait => self.ring.submitter().submit_with_args_and_flags(
                1,
                &types::SubmitArgs::new(),
                io_uring::EnterFlags::NO_IOWAIT,
            ),
            None => self.ring.submit_and_wait(1),
            Some(t) if self.features.ext_arg => {
                let ts = types::Timespec::from(t);
                let args = types::SubmitArgs::new().timespec(&ts);
                let flags = if self.features.no_iowait {
                    io_uring::EnterFlags::NO_IOWAIT
                } else {
                    io_uring::EnterFlags::empty()
                };
                self.ring.submitter().submit_with_args_and_flags(1, &args, flags)
            }
            Some(t) => {
                let (token, owned) =
                    self.insert(INTERNAL_TAG, Owned::Timespec(Box::new(t.into())), None);
                let Owned::Timespec(ts) = owned else { unreachable!("just inserted a timespec") };
                let entry = opcode::Timeout::new(&raw const **ts).count(1).build().user_data(token);
                self.push_entry(entry)?;
                self.ring.submit_and_wait(1)
            }
        };
        match result {
            Ok(_) => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::ETIME | libc::EBUSY)) => {
            }
            Err(e) => return Err(e),
        }
        self.reap();
        Ok(())
    }

    fn reap(&mut self) {
        for cqe in self.ring.completion() {
            let token = cqe.user_data();
            let slot = (token & 0xffff_ffff) as usize;
            let generation = (token >> 32) as u32;
            let more = cqueue::more(cqe.flags());
            if more {
                // A multishot operation that stays armed: report it, keep its slab entry.
                let live = self.slots.get(slot).and_then(Option::as_ref);
                let Some(entry) = live.filter(|e| e.generation == generation) else {
                    tracing::error!(token, "io_uring completion for an unknown token");
                    continue;
                };
                let buffer = provided(&cqe);
                self.ready.push(Completion { tag: entry.tag, result: cqe.result(), buffer, more });
                continue;
            }
            let live = self.slots.get_mut(slot);
            let Some(entry) = live.and_then(|s| s.take_if(|e| e.generation == generation)) else {
                // Not ours (cannot happen: every SQE we push carries a live token).
                tracing::error!(token, "io_uring completion for an unknown token");
                continue;
            };
            self.free.push(slot as u32);
            self.in_flight -= 1;
            if entry.tag == INTERNAL_TAG {
                continue;
            }
            let buffer = match entry.owned {
                Owned::Read { mut buf, .. } => {
                    let filled = usize::try_from(cqe.result()).unwrap_or(0).min(buf.capacity());
                    // SAFETY: the kernel reported `filled` bytes written into this buffer, which
                    // is no longer shared with it (the operation completed); `filled` is clamped
                    // to the capacity, and u8 has no invalid bit patterns.
                    unsafe { buf.set_len(filled) };
                    Buffer::Read(buf)
                }
                Owned::Write { data, .. } => Buffer::Write(data),
                Owned::Multishot => provided(&cqe),
                Owned::Timespec(_) | Owned::None => Buffer::None,
            };
            self.ready.push(Completion { tag: entry.tag, result: cqe.result(), buffer, more });
        }
    }

    /// Whether completions were reaped and not yet taken.
    pub fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    /// Takes the completions reaped so far.
    pub fn drain(&mut self) -> std::vec::Drain<'_, Completion> {
        self.ready.drain(..)
    }
}

/// The provided buffer a completion names, if any.
fn provided(cqe: &cqueue::Entry) -> Buffer {
    match (cqueue::buffer_select(cqe.flags()), usize::try_from(cqe.result())) {
        (Some(bid), Ok(len)) => Buffer::Provided { bid, len },
        _ => Buffer::None,
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // The kernel may still write into buffers of in-flight operations: cancel them and wait
        // for their completions before the slab (and the memory it owns) is freed.
        let tags: Vec<u64> =
            self.slots.iter().flatten().map(|e| e.tag).filter(|&t| t != INTERNAL_TAG).collect();
        for tag in tags {
            let _ = self.cancel(tag);
        }
        for _ in 0..100 {
            if self.in_flight == 0 || self.submit_and_wait(Some(Duration::from_millis(10))).is_err()
            {
                break;
            }
            self.ready.clear();
        }
        if self.in_flight > 0 {
            // Could not confirm every operation ended: leak their memory rather than free
            // memory the kernel might still write to.
            tracing::error!(
                in_flight = self.in_flight,
                "io_uring operations outlived their ring; leaking buffers"
            );
            std::mem::forget(std::mem::take(&mut self.slots));
            if let Some(bufs) = self.bufs.take() {
                bufs.leak();
            }
        } else if let Some(mut bufs) = self.bufs.take() {
            bufs.unregister(&self.ring.submitter());
        }
    }
}

#[cfg(test)]
mod tests;
