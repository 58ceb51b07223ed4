//! The spill store: one private folder per host process holding large payloads as files, under
//! a byte quota, each handed out by URI.
//!
//! ```text
//!  <base>/                          $XDG_RUNTIME_DIR/ringmcp, else $TMPDIR/ringmcp (0700)
//!    spill-<pid>-<starttime>/       this process's folder (0700), removed with the store
//!      <id>-<hint>                  one payload (0600, O_EXCL), removed with its last handle
//!    spill-<pid>-<starttime>/       a dead host's folder: removed by the next `open`
//! ```
//!
//! A payload goes [`SpillStore::create`] → [`SpillWriter::write_all`] … →
//! [`SpillWriter::finish`] → [`SpillFile`], which is cloned freely, read from any thread with
//! positional reads, and found again by its [`SpillFile::uri`] through [`SpillStore::lookup`].
//! Every writer and file holds its store, so the folder outlives everything in it; dropping the
//! last handle of a payload deletes its file and gives its bytes back to the quota, and a writer
//! dropped before `finish` (a failed or abandoned answer) leaves nothing behind.
//!
//! The pid alone does not name a process for long (pids are reused), so folders and URIs carry
//! the process's start time as well (field 22 of [`proc_pid_stat(5)`]); a folder whose pid is gone,
//! or now belongs to a process started at another time, is stale.
//!
//! [`proc_pid_stat(5)`]: https://man7.org/linux/man-pages/man5/proc_pid_stat.5.html

#![forbid(unsafe_code)]

mod reader;
mod save;
mod stale;
mod stream;

pub use reader::SpillReader;
pub use save::Saved;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use crate::syscall::retry;

use stale::ProcessTag;
pub use stream::{DEFAULT_CHUNK, SpillStream};

/// The scheme of spill URIs: `ringmcp-spill://<pid>-<starttime>/<id>`.
pub const URI_SCHEME: &str = "ringmcp-spill";

/// Whether `uri` is a spill URI (a payload the host holds, never a server's resource).
pub fn is_spill_uri(uri: &str) -> bool {
    uri.strip_prefix(URI_SCHEME).is_some_and(|rest| rest.starts_with("://"))
}

/// Whether `uri` is a spill URI of this process (any of its stores, live or not), as opposed
/// to one a server handed over from its own store (a `ringmcp gateway`'s large results).
/// When this process's tag cannot be read, every spill URI counts as its own.
pub fn is_own_spill_uri(uri: &str) -> bool {
    static TAG: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let Some(rest) = uri.strip_prefix(URI_SCHEME).and_then(|r| r.strip_prefix("://")) else {
        return false;
    };
    let tag = TAG.get_or_init(|| ProcessTag::current().ok().map(|t| t.to_string()));
    tag.as_ref().is_none_or(|tag| rest.split_once('/').is_none_or(|(t, _)| t == tag))
}

/// The default quota: 8 GiB.
pub const DEFAULT_QUOTA_BYTES: u64 = 8 << 30;

/// Longest part of a name hint kept in a file name.
const MAX_HINT_LEN: usize = 48;

/// Ids of payloads, unique for the life of the process (not per store), so that a URI from a
/// dropped store never resolves to a payload of a later one in the same folder. `Relaxed`: the
/// counter only has to hand out distinct values, which any atomic read-modify-write guarantees;
/// nothing else is published through it.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Where a [`SpillStore`] lives and how much it may hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreConfig {
    /// The folder holding the per-process folders (created 0700 with its parents if missing).
    /// `None` (the default): `$XDG_RUNTIME_DIR/ringmcp` when that variable is set to an absolute
    /// path where the folder can be made, else `std::env::temp_dir()/ringmcp`.
    pub base_dir: Option<PathBuf>,
    /// Most bytes the store's payloads may hold together, written or being written (default
    /// [`DEFAULT_QUOTA_BYTES`]).
    pub quota_bytes: u64,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig { base_dir: None, quota_bytes: DEFAULT_QUOTA_BYTES }
    }
}

impl StoreConfig {
    /// The defaults: the runtime or temp folder, 8 GiB.
    pub fn new() -> Self {
        Self::default()
    }

    /// Puts the per-process folder under `dir` instead of the default base.
    pub fn base_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.base_dir = Some(dir.into());
        self
    }

    /// Sets the quota.
    pub fn quota_bytes(mut self, bytes: u64) -> Self {
        self.quota_bytes = bytes;
        self
    }
}

/// A failed spill step. Each variant names the step and the path it touched.
///
/// * limits: [`SpillError::QuotaExceeded`] (nothing written; the writer stays usable),
///   [`SpillError::DiskFull`];
/// * the caller's misuse: [`SpillError::NotFound`] (an unknown or released URI),
///   [`SpillError::WriterFailed`] (writing on after a failed write);
/// * other I/O: every variant carrying an `io::Error`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpillError {
    /// This process's pid and start time could not be read.
    #[error("reading this process's pid and start time from {}: {source}", path.display())]
    ProcStat {
        /// `/proc/self/stat`.
        path: PathBuf,
        /// The OS error, or `InvalidData` when the file did not parse.
        #[source]
        source: io::Error,
    },
    /// The base folder could not be created.
    #[error("creating the spill base folder {}: {source}", path.display())]
    CreateBaseDir {
        /// The base folder.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The per-process folder could not be created.
    #[error("creating the spill folder {}: {source}", path.display())]
    CreateDir {
        /// The per-process folder.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// Another store of this process already uses this base folder (share its `Arc` instead).
    #[error("the spill folder {} is already used by another store of this process", path.display())]
    AlreadyOpen {
        /// The per-process folder.
        path: PathBuf,
    },
    /// A payload file could not be created.
    #[error("creating the spill file {}: {source}", path.display())]
    Create {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// Writing a payload failed.
    #[error("writing the spill file {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The file system holding the store is full (`ENOSPC`) or the user's disk quota is spent
    /// (`EDQUOT`), while creating or writing a payload.
    #[error("spill file {}: no space left: {source}", path.display())]
    DiskFull {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// Writing would take the store past its quota; nothing was written.
    #[error(
        "spill file {}: {needed} more bytes would exceed the spill quota of {quota} bytes",
        path.display()
    )]
    QuotaExceeded {
        /// The file.
        path: PathBuf,
        /// The store's quota.
        quota: u64,
        /// The bytes this write asked for.
        needed: u64,
    },
    /// An earlier write of this writer failed; its contents are unusable.
    #[error("spill file {}: an earlier write failed", path.display())]
    WriterFailed {
        /// The file.
        path: PathBuf,
    },
    /// Reading a payload failed.
    #[error("reading the spill file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// [`SpillFile::save_as`] could not put the payload at `path`.
    #[error("saving a spilled payload to {}: {source}", path.display())]
    Save {
        /// Where the payload was to go.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// No live payload has this URI (never issued by this store, or all handles are gone).
    #[error("no live spill file for {0}")]
    NotFound(String),
    /// The host was built without a spill store, so there is nowhere to put a payload.
    #[error("spilling is off for this host (HostBuilder::spill(None)), so there is no store")]
    Disabled,
    /// A followed resource's answer held neither a `text` nor a `blob`.
    #[error("the resources/read answer for {0} holds no text or blob payload")]
    NoPayload(String),
    /// A followed resource's `blob` is not canonical base64.
    #[error("the blob of {uri} is not valid base64 (at byte {at})")]
    BadBase64 {
        /// The resource.
        uri: String,
        /// Index of the first invalid byte.
        at: usize,
    },
}

/// The spill folder of this host process. Shared as an `Arc`; removed, with anything left in
/// it, when the last handle (store, writer or file) is dropped.
#[derive(Debug)]
pub struct SpillStore {
    dir: PathBuf,
    tag: ProcessTag,
    quota: u64,
    /// Bytes reserved by live writers and files. Only ever changed by atomic read-modify-writes,
    /// so reservations are totally ordered (the modification order of this one location) and
    /// two writers can never both take the last bytes. `Relaxed` throughout: the count guards
    /// no other memory, it is only a number that has to add up.
    used: AtomicU64,
    /// Finished payloads by id, for [`SpillStore::lookup`]. Entries are removed when their file
    /// goes away; a `Weak` here never keeps a payload alive.
    live: Mutex<HashMap<u64, Weak<FileInner>>>,
}

impl SpillStore {
    /// Opens this process's folder under the configured base: creates the base if missing,
    /// removes stale `spill-<pid>-<starttime>` folders of processes that are gone (failures
    /// are logged and skipped), then creates `spill-<pid>-<starttime>` (0700).
    ///
    /// # Errors
    /// [`SpillError::ProcStat`], [`SpillError::CreateBaseDir`], [`SpillError::CreateDir`], and
    /// [`SpillError::AlreadyOpen`] when a store of this process is already open on this base.
    /// Without a configured base, a failure under `$XDG_RUNTIME_DIR` falls back to the temp
    /// folder and only the latter's error is returned.
    pub fn open(config: StoreConfig) -> Result<Arc<SpillStore>, SpillError> {
        let tag = ProcessTag::current()?;
        let dir = match config.base_dir {
            Some(base) => prepare(&base, tag)?,
            None => {
                let xdg = xdg_base(std::env::var_os("XDG_RUNTIME_DIR"));
                let from_xdg = match xdg {
                    Some(base) => match prepare(&base, tag) {
                        Ok(dir) => Some(dir),
                        Err(e @ SpillError::AlreadyOpen { .. }) => return Err(e),
                        Err(e) => {
                            tracing::debug!("spill store: {e}; using the temp folder instead");
                            None
                        }
                    },
                    None => None,
                };
                match from_xdg {
                    Some(dir) => dir,
                    None => prepare(&std::env::temp_dir().join("ringmcp"), tag)?,
                }
            }
        };
        Ok(Arc::new(SpillStore {
            dir,
            tag,
            quota: config.quota_bytes,
            used: AtomicU64::new(0),
            live: Mutex::new(HashMap::new()),
        }))
    }

    /// The process-wide store for `config`: the one already open (and still in use) when its
    /// settings match, else a newly opened one. Several hosts in one process share it, since a
    /// process has one folder per base.
    ///
    /// # Errors
    /// As [`open`](Self::open), and [`SpillError::AlreadyOpen`] when the store open on the same
    /// base has a different quota.
    pub fn shared(config: StoreConfig) -> Result<Arc<SpillStore>, SpillError> {
        static SHARED: Mutex<Vec<(StoreConfig, Weak<SpillStore>)>> = Mutex::new(Vec::new());
        let mut shared = SHARED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        shared.retain(|(_, weak)| weak.strong_count() > 0);
        for (open_config, weak) in shared.iter() {
            if open_config.base_dir != config.base_dir {
                continue;
            }
            if let Some(store) = weak.upgrade() {
                if *open_config == config {
                    return Ok(store);
                }
                return Err(SpillError::AlreadyOpen { path: store.dir.clone() });
            }
        }
        let store = SpillStore::open(config.clone())?;
        shared.push((config, Arc::downgrade(&store)));
        Ok(store)
    }

    /// Starts a new payload: a file created exclusively (0600) in the store's folder, named
    /// after a unique id and `name_hint` (only `[A-Za-z0-9._-]` kept, at most 48 bytes; the hint
    /// is for people looking at the folder and never leaves it).
    ///
    /// # Errors
    /// [`SpillError::Create`], or [`SpillError::DiskFull`] when the file system is out of
    /// space or inodes.
    pub fn create(self: &Arc<Self>, name_hint: &str) -> Result<SpillWriter, SpillError> {
        // See NEXT_ID for the ordering.
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        let path = self.dir.join(file_name(id, name_hint));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(|source| {
                classify(path.clone(), source, |path, source| SpillError::Create { path, source })
            })?;
        Ok(SpillWriter {
            file,
            entry: Entry { store: Arc::clone(self), id, path, len: 0 },
            failed: false,
        })
    }

    /// The live payload `uri` names, if it came from this store and a handle to it still exists.
    pub fn lookup(&self, uri: &str) -> Option<SpillFile> {
        let (tag, id) = uri.strip_prefix(URI_SCHEME)?.strip_prefix("://")?.split_once('/')?;
        if tag != self.tag.to_string() {
            return None;
        }
        let id: u64 = id.parse().ok()?;
        // Upgrade after the guard is gone: if the upgraded `Arc` turns out to be the last one
        // (every other holder let go meanwhile), dropping it runs `Entry::drop`, which locks
        // `live` again.
        let weak = self.lock_live().get(&id).cloned()?;
        let inner = weak.upgrade()?;
        // Only the canonical spelling (no `+7`, no `007`) names the payload.
        (inner.uri == uri).then_some(SpillFile { inner })
    }

    /// [`SpillStore::lookup`], as an error when nothing is found.
    ///
    /// # Errors
    /// [`SpillError::NotFound`].
    pub fn resolve(&self, uri: &str) -> Result<SpillFile, SpillError> {
        self.lookup(uri).ok_or_else(|| SpillError::NotFound(uri.to_owned()))
    }

    /// Bytes held by live writers and files (a snapshot).
    pub fn used_bytes(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// The most bytes the store may hold.
    pub fn quota(&self) -> u64 {
        self.quota
    }

    /// This process's folder, `<base>/spill-<pid>-<starttime>`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Takes `n` bytes of quota, or none when they are not all there. See `used` for the
    /// ordering.
    fn reserve(&self, n: u64) -> bool {
        self.used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                used.checked_add(n).filter(|&total| total <= self.quota)
            })
            .is_ok()
    }

    /// Gives back `n` reserved bytes. See `used` for the ordering.
    fn release(&self, n: u64) {
        if n > 0 {
            self.used.fetch_sub(n, Ordering::Relaxed);
        }
    }

    /// The map is never left half-updated (single inserts and removes), so a panic elsewhere
    /// while it was locked does not make it unusable.
    fn lock_live(&self) -> MutexGuard<'_, HashMap<u64, Weak<FileInner>>> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for SpillStore {
    fn drop(&mut self) {
        match std::fs::remove_dir_all(&self.dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!("removing the spill folder {}: {e}", self.dir.display()),
        }
    }
}

/// A payload being written. Dropping it before [`SpillWriter::finish`] deletes the file and
/// gives its bytes back to the quota.
#[derive(Debug)]
pub struct SpillWriter {
    file: File,
    entry: Entry,
    /// A write failed part-way: the contents are unusable, and `finish` refuses them.
    failed: bool,
}

impl SpillWriter {
    /// Appends `buf`, first reserving `buf.len()` bytes of the store's quota.
    ///
    /// # Errors
    /// * [`SpillError::QuotaExceeded`]: nothing was written and the writer can go on (e.g.
    ///   once other payloads are released);
    /// * [`SpillError::DiskFull`] or [`SpillError::Write`]: part of `buf` may have been
    ///   written; the writer is spent and every later call fails with
    ///   [`SpillError::WriterFailed`]. Drop it to remove the file.
    pub fn write_all(&mut self, buf: &[u8]) -> Result<(), SpillError> {
        if self.failed {
            return Err(SpillError::WriterFailed { path: self.entry.path.clone() });
        }
        if buf.is_empty() {
            return Ok(());
        }
        let needed = buf.len() as u64;
        let store = &self.entry.store;
        if !store.reserve(needed) {
            return Err(SpillError::QuotaExceeded {
                path: self.entry.path.clone(),
                quota: store.quota,
                needed,
            });
        }
        self.entry.len += needed;
        let mut rest = buf;
        while !rest.is_empty() {
            match retry(|| self.file.write(rest)) {
                Ok(0) => {
                    return Err(self.fail(rest.len(), io::ErrorKind::WriteZero.into()));
                }
                Ok(n) => rest = &rest[n..],
                Err(e) => return Err(self.fail(rest.len(), e)),
            }
        }
        Ok(())
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.entry.len
    }

    /// A second handle on the file being written, for reading what is already written
    /// (`FileExt::read_at`; the writer's offset is not moved).
    ///
    /// # Errors
    /// When the descriptor cannot be duplicated.
    pub fn reader(&self) -> io::Result<File> {
        self.file.try_clone()
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.entry.path
    }

    /// Ends the payload and returns its read handle. There is no fsync: spill data is scratch
    /// that never outlives the process.
    ///
    /// # Errors
    /// [`SpillError::WriterFailed`] after a failed write; the file is removed.
    pub fn finish(self) -> Result<SpillFile, SpillError> {
        let SpillWriter { file, entry, failed } = self;
        if failed {
            return Err(SpillError::WriterFailed { path: entry.path.clone() });
        }
        let uri = format!("{URI_SCHEME}://{}/{}", entry.store.tag, entry.id);
        let inner = Arc::new(FileInner { file, uri, entry });
        let weak = Arc::downgrade(&inner);
        inner.entry.store.lock_live().insert(inner.entry.id, weak);
        Ok(SpillFile { inner })
    }

    /// Marks the writer spent after a write error with `unwritten` bytes of the current buffer
    /// not written, and gives those bytes' reservation back.
    fn fail(&mut self, unwritten: usize, source: io::Error) -> SpillError {
        let unwritten = unwritten as u64;
        self.entry.len -= unwritten;
        self.entry.store.release(unwritten);
        self.failed = true;
        classify(self.entry.path.clone(), source, |path, source| SpillError::Write { path, source })
    }
}

/// A finished payload: a cheap handle (an `Arc`), readable from any thread. The file is
/// deleted and its bytes given back to the quota when the last clone is dropped.
#[derive(Debug, Clone)]
pub struct SpillFile {
    inner: Arc<FileInner>,
}

impl SpillFile {
    /// Size in bytes.
    pub fn len(&self) -> u64 {
        self.inner.entry.len
    }

    /// Whether the payload is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `ringmcp-spill://<pid>-<starttime>/<id>`, the same for every clone.
    pub fn uri(&self) -> &str {
        &self.inner.uri
    }

    /// The file on disk.
    pub fn path(&self) -> &Path {
        &self.inner.entry.path
    }

    /// Reads from `offset` into `buf` without moving any cursor (`pread`, so any number of
    /// threads can read at once). Fills `buf` unless the payload ends first: returns
    /// `min(buf.len(), len - offset)`, and 0 at or past the end.
    ///
    /// # Errors
    /// [`SpillError::Read`].
    pub fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize, SpillError> {
        let Some(left) = self.len().checked_sub(offset) else {
            return Ok(0);
        };
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let buf = &mut buf[..want];
        let mut done = 0;
        while done < want {
            match retry(|| self.inner.file.read_at(&mut buf[done..], offset + done as u64)) {
                // Shorter than written: someone truncated the file behind our back.
                Ok(0) => break,
                Ok(n) => done += n,
                Err(source) => {
                    return Err(SpillError::Read { path: self.path().to_owned(), source });
                }
            }
        }
        Ok(done)
    }

    /// Up to `len` bytes from `offset`: fewer at the end of the payload, none past it. Only as
    /// much as is returned is allocated, so `len` may be a chunk-size ceiling.
    ///
    /// # Errors
    /// [`SpillError::Read`].
    pub fn read_range(&self, offset: u64, len: usize) -> Result<Vec<u8>, SpillError> {
        let left = self.len().saturating_sub(offset);
        let n = len.min(usize::try_from(left).unwrap_or(usize::MAX));
        let mut buf = vec![0; n];
        let got = self.read_at(offset, &mut buf)?;
        buf.truncate(got);
        Ok(buf)
    }

    /// A cursor over the payload (`Read + Seek`), starting at 0, independent of other readers.
    pub fn reader(&self) -> SpillReader {
        SpillReader::new(self.clone())
    }
}

/// What a finished payload shares between its clones.
#[derive(Debug)]
struct FileInner {
    /// Declared before `entry` so the descriptor closes before the file is unlinked.
    file: File,
    uri: String,
    entry: Entry,
}

/// A payload file and its share of the quota, owned by its writer and then by its
/// [`FileInner`]. Dropping it deletes the file, gives the bytes back, and forgets the id.
#[derive(Debug)]
struct Entry {
    store: Arc<SpillStore>,
    id: u64,
    path: PathBuf,
    /// Bytes reserved for this file: all written ones (and, during a write, that write's).
    len: u64,
}

impl Drop for Entry {
    fn drop(&mut self) {
        match std::fs::remove_file(&self.path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!("removing the spill file {}: {e}", self.path.display()),
        }
        self.store.release(self.len);
        self.store.lock_live().remove(&self.id);
        // `store` is dropped after this body; if it is the last handle, the folder goes too.
    }
}

/// Creates the base (0700, with parents), removes stale siblings, creates this process's
/// folder (0700) and returns it.
fn prepare(base: &Path, tag: ProcessTag) -> Result<PathBuf, SpillError> {
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(base)
        .map_err(|source| SpillError::CreateBaseDir { path: base.to_owned(), source })?;
    stale::remove_stale(base, tag, stale::proc_liveness);
    let dir = base.join(tag.folder_name());
    match DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => Ok(dir),
        // Our pid and start time: nobody but this process made it.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            Err(SpillError::AlreadyOpen { path: dir })
        }
        Err(source) => Err(SpillError::CreateDir { path: dir, source }),
    }
}

/// `$XDG_RUNTIME_DIR/ringmcp`, when the variable holds an absolute path ([XDG Base Directory
/// Specification]: relative paths are invalid and must be ignored).
///
/// [XDG Base Directory Specification]: https://specifications.freedesktop.org/basedir-spec/latest/
fn xdg_base(var: Option<std::ffi::OsString>) -> Option<PathBuf> {
    let dir = PathBuf::from(var?);
    dir.is_absolute().then(|| dir.join("ringmcp"))
}

/// `<id>` or `<id>-<hint>`, the hint cut to [`MAX_HINT_LEN`] and every byte outside
/// `[A-Za-z0-9._-]` replaced by `_`, so it can never leave the folder or hide a separator.
fn file_name(id: u64, hint: &str) -> String {
    let hint: String = hint
        .chars()
        .take(MAX_HINT_LEN)
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
        .collect();
    if hint.is_empty() { id.to_string() } else { format!("{id}-{hint}") }
}

/// `ENOSPC`/`EDQUOT` as [`SpillError::DiskFull`], anything else through `other`.
fn classify(
    path: PathBuf,
    source: io::Error,
    other: fn(PathBuf, io::Error) -> SpillError,
) -> SpillError {
    if matches!(source.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT)) {
        SpillError::DiskFull { path, source }
    } else {
        other(path, source)
    }
}
