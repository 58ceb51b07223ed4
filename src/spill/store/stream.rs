//! A payload as an async stream of chunks, read off the caller's executor.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use futures::Stream;

use super::{SpillError, SpillFile};

/// Chunks read ahead of the consumer: enough to overlap one read with one consumer step, and
/// a bound on the memory a slow consumer can make the stream hold.
const READ_AHEAD: usize = 2;

/// The chunk size of [`SpillFile::stream`]: 1 MiB.
pub const DEFAULT_CHUNK: usize = 1 << 20;

impl SpillFile {
    /// The whole payload as a stream of chunks of [`DEFAULT_CHUNK`] bytes (the last one
    /// shorter). See [`stream_range`](Self::stream_range).
    pub fn stream(&self) -> SpillStream {
        self.stream_range(0, self.len(), DEFAULT_CHUNK)
    }

    /// `len` bytes from `offset` (fewer at the end of the payload) as a [`Stream`] of chunks of
    /// at most `chunk` bytes.
    ///
    /// The reads happen on a thread of the stream's own, at most two chunks ahead of the
    /// consumer, so polling the stream never blocks an executor on the disk, whatever the
    /// runtime. Dropping the stream stops the thread after its current read. The stream holds
    /// the payload alive.
    pub fn stream_range(&self, offset: u64, len: u64, chunk: usize) -> SpillStream {
        let (tx, rx) = async_channel::bounded(READ_AHEAD);
        let end = offset.saturating_add(len).min(self.len());
        let chunk = chunk.max(1);
        let file = self.clone();
        let spawned =
            std::thread::Builder::new().name("ringmcp-spill-read".into()).spawn(move || {
                let mut at = offset;
                while at < end {
                    let want = usize::try_from(end - at).unwrap_or(usize::MAX).min(chunk);
                    let mut buf = BytesMut::zeroed(want);
                    let sent = match file.read_at(at, &mut buf) {
                        // Shorter than written: the file was truncated behind our back.
                        Ok(0) => return,
                        Ok(got) => {
                            buf.truncate(got);
                            at += got as u64;
                            tx.send_blocking(Ok(buf.freeze()))
                        }
                        Err(e) => {
                            let _ = tx.send_blocking(Err(e));
                            return;
                        }
                    };
                    if sent.is_err() {
                        return; // The stream was dropped.
                    }
                }
            });
        let failed = match spawned {
            Ok(_) => None,
            Err(source) => Some(SpillError::Read { path: self.path().to_owned(), source }),
        };
        SpillStream { rx: Box::pin(rx), failed }
    }
}

/// The chunks of a spilled payload, in order: see [`SpillFile::stream_range`]. Ends after the
/// last chunk, or after the first error.
#[derive(Debug)]
pub struct SpillStream {
    rx: Pin<Box<async_channel::Receiver<Result<Bytes, SpillError>>>>,
    /// The reader thread could not be started: reported as the only item.
    failed: Option<SpillError>,
}

impl Stream for SpillStream {
    type Item = Result<Bytes, SpillError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(e) = self.failed.take() {
            self.rx.close();
            return Poll::Ready(Some(Err(e)));
        }
        self.rx.as_mut().poll_next(cx)
    }
}
