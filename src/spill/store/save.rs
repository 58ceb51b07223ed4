//! Saving a payload out of the store: [`SpillFile::save_as`].

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use super::{SpillError, SpillFile, classify};

impl SpillFile {
    /// Puts the payload at `dest` (0600, replacing a file there) as a file that outlives the
    /// store. On the spill folder's file system that is a hard link and no byte moves; across
    /// file systems the kernel copies (`copy_file_range`, which shares extents where the file
    /// system can). A link shares the payload's inode: the store never writes a finished
    /// payload, but writing to `dest` while this handle lives changes what the URI serves.
    ///
    /// # Errors
    /// [`SpillError::Save`], or [`SpillError::DiskFull`]; a partial copy is removed.
    pub fn save_as(&self, dest: &Path) -> Result<Saved, SpillError> {
        let fail = |source| {
            classify(dest.to_owned(), source, |path, source| SpillError::Save { path, source })
        };
        match std::fs::remove_file(dest) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(fail(e)),
            _ => {}
        }
        match std::fs::hard_link(self.path(), dest) {
            Ok(()) => return Ok(Saved::Linked),
            // Another file system, or one without hard links: copy instead.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EXDEV | libc::EPERM | libc::EOPNOTSUPP | libc::EMLINK)
                ) => {}
            Err(e) => return Err(fail(e)),
        }
        let copy = || -> io::Result<u64> {
            let mut from = File::open(self.path())?;
            let mut to = OpenOptions::new().write(true).create_new(true).mode(0o600).open(dest)?;
            // File to file: std copies with copy_file_range (sendfile on old kernels).
            io::copy(&mut from, &mut to)
        };
        match copy() {
            Ok(n) if n == self.len() => Ok(Saved::Copied),
            other => {
                let _ = std::fs::remove_file(dest);
                let e = other.err().unwrap_or_else(|| io::ErrorKind::UnexpectedEof.into());
                Err(fail(e))
            }
        }
    }
}

/// How [`SpillFile::save_as`] placed a payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Saved {
    /// A hard link to the payload's file: nothing was copied.
    Linked,
    /// A copy made by the kernel.
    Copied,
}
