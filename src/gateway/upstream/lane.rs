//! A bounded lane of lines from a session's loop to one reader (an HTTP response stream):
//! bounded in lines and in bytes, and never blocking the loop, which serves every stream of
//! the session. A reader that falls this far behind loses its stream ([`Refused::Behind`]): the loop
//! drops it and carries on, and a GET stream's client resumes with `Last-Event-ID` from the
//! session's history (docs/gateway.md, "Buffers").

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use futures::Stream;
use tokio::sync::mpsc;

/// Lines a lane holds at most.
pub(crate) const LANE_LINES: usize = 4096;
/// Bytes a lane holds at most (one line longer than this still passes an empty lane).
pub(crate) const LANE_BYTES: usize = 32 << 20;

/// What a lane's reader gets: its lines, in order, until the lane is dropped.
pub(crate) type Lines = Pin<Box<dyn Stream<Item = Bytes> + Send + Sync>>;

/// The loop's end of a lane.
#[derive(Debug)]
pub(crate) struct LaneTx {
    tx: mpsc::Sender<Bytes>,
    queued: Arc<AtomicUsize>,
    max_bytes: usize,
}

/// Why a line did not go into a lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The reader is too far behind: drop the stream.
    Behind,
    /// The reader is gone.
    Closed,
}

/// A lane with the default bounds: the loop's end and the reader's lines.
pub(crate) fn lane() -> (LaneTx, Lines) {
    lane_of(LANE_LINES, LANE_BYTES)
}

/// A lane holding at most `lines` lines and `bytes` bytes.
pub(crate) fn lane_of(lines: usize, bytes: usize) -> (LaneTx, Lines) {
    let (tx, rx) = mpsc::channel(lines.max(1));
    let queued = Arc::new(AtomicUsize::new(0));
    let read = queued.clone();
    let stream = futures::stream::unfold(rx, move |mut rx: mpsc::Receiver<Bytes>| {
        let read = read.clone();
        async move {
            let line = rx.recv().await?;
            read.fetch_sub(line.len(), Ordering::AcqRel);
            Some((line, rx))
        }
    });
    (LaneTx { tx, queued, max_bytes: bytes }, Box::pin(stream))
}

impl LaneTx {
    /// Queues a line without waiting.
    ///
    /// # Errors
    /// [`Refused::Behind`] when the reader has this lane's bound of lines or bytes unread (a
    /// line is always taken by an empty lane), [`Refused::Closed`] when it is gone.
    pub(crate) fn send(&self, line: Bytes) -> Result<(), Refused> {
        let len = line.len();
        let queued = self.queued.fetch_add(len, Ordering::AcqRel);
        if queued > 0 && queued + len > self.max_bytes {
            self.queued.fetch_sub(len, Ordering::AcqRel);
            return Err(if self.tx.is_closed() { Refused::Closed } else { Refused::Behind });
        }
        self.tx.try_send(line).map_err(|e| {
            self.queued.fetch_sub(len, Ordering::AcqRel);
            match e {
                mpsc::error::TrySendError::Full(_) => Refused::Behind,
                mpsc::error::TrySendError::Closed(_) => Refused::Closed,
            }
        })
    }

    /// Bytes queued and not yet read.
    #[cfg(test)]
    pub(crate) fn queued(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    #[test]
    fn a_lane_is_bounded_in_lines_and_bytes_and_frees_what_is_read() {
        let (tx, mut rx) = lane_of(3, 10);
        tx.send(Bytes::from_static(b"aaaa")).unwrap();
        tx.send(Bytes::from_static(b"bbbb")).unwrap();
        assert_eq!(tx.send(Bytes::from_static(b"cccc")), Err(Refused::Behind), "12 bytes > 10");
        assert_eq!(tx.queued(), 8, "a refused line is not counted");
        let first = futures::executor::block_on(rx.next()).unwrap();
        assert_eq!(&first[..], b"aaaa");
        assert_eq!(tx.queued(), 4);
        tx.send(Bytes::from_static(b"cc")).unwrap();
        tx.send(Bytes::from_static(b"d")).unwrap();
        assert_eq!(tx.send(Bytes::from_static(b"e")), Err(Refused::Behind), "3 lines");
        drop(rx);
        assert_eq!(tx.send(Bytes::from_static(b"f")), Err(Refused::Closed));
    }

    #[test]
    fn an_empty_lane_takes_a_line_longer_than_its_bound() {
        let (tx, mut rx) = lane_of(4, 8);
        tx.send(Bytes::from(vec![b'x'; 100])).unwrap();
        assert_eq!(tx.send(Bytes::from_static(b"y")), Err(Refused::Behind));
        assert_eq!(futures::executor::block_on(rx.next()).unwrap().len(), 100);
        tx.send(Bytes::from_static(b"y")).unwrap();
    }
}
