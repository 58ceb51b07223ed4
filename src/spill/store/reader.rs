//! Reading a payload as a file: [`SpillReader`].

use std::io::{self, Read, Seek, SeekFrom};

use super::{SpillError, SpillFile};

/// A cursor over a [`SpillFile`]: `Read + Seek` on positional reads, so readers never disturb
/// each other. It holds the payload alive.
#[derive(Debug, Clone)]
pub struct SpillReader {
    file: SpillFile,
    pos: u64,
}

impl SpillReader {
    pub(super) fn new(file: SpillFile) -> SpillReader {
        SpillReader { file, pos: 0 }
    }

    /// The payload read.
    pub fn file(&self) -> &SpillFile {
        &self.file
    }
}

impl Read for SpillReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read_at(self.pos, buf).map_err(|e| match e {
            SpillError::Read { ref source, .. } => io::Error::new(source.kind(), e),
            e => io::Error::other(e),
        })?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for SpillReader {
    /// Seeking past the end is allowed (reads there return 0); before the start is an
    /// `InvalidInput` error, as for files.
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let to = match pos {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(delta) => self.file.len().checked_add_signed(delta),
            SeekFrom::Current(delta) => self.pos.checked_add_signed(delta),
        };
        let to = to.ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek to a negative or overflowing position",
            )
        })?;
        self.pos = to;
        Ok(to)
    }
}
