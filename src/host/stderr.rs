//! A server's stderr: always drained, kept in a bounded ring, and logged line by line to
//! `tracing` with the server's name.

use std::collections::VecDeque;

/// Longest stderr line logged as one event; longer lines are logged in pieces.
const MAX_LINE: usize = 4096;

/// The tail of a server's stderr plus a line assembler.
#[derive(Debug)]
pub(crate) struct StderrLog {
    tail: VecDeque<u8>,
    capacity: usize,
    line: Vec<u8>,
    total: u64,
}

impl StderrLog {
    pub(crate) fn new(capacity: usize) -> Self {
        StderrLog { tail: VecDeque::new(), capacity, line: Vec::new(), total: 0 }
    }

    /// Takes a chunk read from stderr: keeps its tail and logs every complete line.
    pub(crate) fn push(&mut self, server: &str, chunk: &[u8]) {
        self.total += chunk.len() as u64;
        let keep = &chunk[chunk.len().saturating_sub(self.capacity)..];
        let overflow = (self.tail.len() + keep.len()).saturating_sub(self.capacity);
        self.tail.drain(..overflow);
        self.tail.extend(keep);

        let mut rest = chunk;
        while let Some(nl) = memchr::memchr(b'\n', rest) {
            self.line.extend_from_slice(&rest[..nl]);
            self.emit(server);
            rest = &rest[nl + 1..];
        }
        self.line.extend_from_slice(rest);
        while self.line.len() >= MAX_LINE {
            let tail = self.line.split_off(MAX_LINE);
            self.emit(server);
            self.line = tail;
        }
    }

    /// Logs a trailing partial line (at EOF).
    pub(crate) fn finish(&mut self, server: &str) {
        if !self.line.is_empty() {
            self.emit(server);
        }
    }

    fn emit(&mut self, server: &str) {
        let line = String::from_utf8_lossy(&self.line);
        let line = line.trim_end_matches('\r');
        tracing::info!(target: "ringmcp::server_stderr", server, "{line}");
        self.line.clear();
    }

    /// The last bytes of stderr (at most the ring's capacity).
    pub(crate) fn tail(&self) -> Vec<u8> {
        self.tail.iter().copied().collect()
    }

    /// Bytes read from stderr in total.
    pub(crate) fn total(&self) -> u64 {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_a_bounded_tail() {
        let mut log = StderrLog::new(8);
        log.push("s", b"hello\nworld\n");
        assert_eq!(log.tail(), b"o\nworld\n");
        log.push("s", &[b'x'; 100]);
        assert_eq!(log.tail(), [b'x'; 8]);
        assert_eq!(log.total(), 112);
        assert!(log.line.len() < MAX_LINE);
        log.finish("s");
    }
}
