//! A worker pool for large frames, so that scanning one huge answer never stalls the reactor
//! (and with it every other server). A worker parses the whole frame into a tree once (with
//! the pool's [`JsonParser`], simd-json for escape-dense text), so the caller only converts
//! the result into its own type instead of scanning a huge text a second time.
//!
//! The reactor hands a frame to [`ParsePool::submit`] and carries on; a worker parses it and
//! passes the [`Parsed`] result to the `deliver` callback (the host pushes it on a queue and
//! wakes the reactor), tagged with the connection and sequence number the reactor gave, so the
//! reactor can deliver each connection's messages in arrival order.

use std::sync::Arc;
use std::thread::JoinHandle;

use bytes::Bytes;

use super::{JsonParser, Parser};
use crate::jsonrpc::{DecodeError, RawDecoded};

/// One frame to parse.
#[derive(Debug)]
pub struct Job {
    /// The connection it came from.
    pub conn: u64,
    /// Its position in that connection's frame sequence.
    pub seq: u64,
    /// The frame.
    pub frame: Bytes,
}

/// A parsed frame.
#[derive(Debug)]
pub struct Parsed {
    /// The connection it came from.
    pub conn: u64,
    /// Its position in that connection's frame sequence.
    pub seq: u64,
    /// The frame (kept for diagnostics when it does not decode).
    pub frame: Bytes,
    /// The outcome.
    pub decoded: Result<RawDecoded, DecodeError>,
}

/// Worker threads parsing frames off the reactor thread.
#[derive(Debug)]
pub struct ParsePool {
    jobs: Option<crossbeam_channel::Sender<Job>>,
    workers: Vec<JoinHandle<()>>,
}

impl ParsePool {
    /// Starts `threads` workers (at least one) parsing with `kind`; each result goes to
    /// `deliver`.
    ///
    /// # Errors
    /// When a thread cannot be started.
    pub fn new(
        threads: usize,
        kind: JsonParser,
        deliver: Arc<dyn Fn(Parsed) + Send + Sync>,
    ) -> std::io::Result<ParsePool> {
        let (tx, rx) = crossbeam_channel::unbounded::<Job>();
        let mut workers = Vec::new();
        for i in 0..threads.max(1) {
            let rx = rx.clone();
            let deliver = deliver.clone();
            let worker = std::thread::Builder::new().name(format!("ringmcp-parse-{i}")).spawn(
                move || {
                    let mut parser = Parser::new(kind);
                    for Job { conn, seq, frame } in rx {
                        let decoded = parser.decode(&frame).map(RawDecoded::from);
                        deliver(Parsed { conn, seq, frame, decoded });
                    }
                },
            )?;
            workers.push(worker);
        }
        Ok(ParsePool { jobs: Some(tx), workers })
    }

    /// Queues a frame. Returns it back if the pool has shut down.
    ///
    /// # Errors
    /// The job, when no worker is left to take it.
    pub fn submit(&self, job: Job) -> Result<(), Job> {
        match &self.jobs {
            Some(tx) => tx.send(job).map_err(|e| e.into_inner()),
            None => Err(job),
        }
    }
}

impl Drop for ParsePool {
    fn drop(&mut self) {
        // Closing the channel ends each worker's loop once the queue is empty.
        self.jobs = None;
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn parses_off_thread_and_tags_results() {
        let out = Arc::new(Mutex::new(Vec::new()));
        let sink = out.clone();
        let pool = ParsePool::new(
            2,
            JsonParser::Auto,
            Arc::new(move |p: Parsed| sink.lock().unwrap().push(p)),
        )
        .unwrap();
        for seq in 0..50 {
            let frame = Bytes::from(format!(r#"{{"jsonrpc":"2.0","id":{seq},"result":{{}}}}"#));
            pool.submit(Job { conn: 9, seq, frame }).unwrap();
        }
        pool.submit(Job { conn: 9, seq: 50, frame: Bytes::from_static(b"nope") }).unwrap();
        drop(pool); // joins: every job is done
        let mut out = std::mem::take(&mut *out.lock().unwrap());
        out.sort_by_key(|p| p.seq);
        assert_eq!(out.len(), 51);
        assert!(out[..50].iter().all(|p| p.conn == 9 && p.decoded.is_ok()));
        assert!(matches!(out[50].decoded, Err(DecodeError::Json(_))));
    }
}
