//! The pins file: every server's pinned tools (`policy::pins`), read when a host starts and
//! rewritten (atomically: a temp file renamed over it) when a first listing is pinned or the
//! user accepts a change.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::policy::pins::{PinDiff, PinFile, ServerPins};

/// Trust on first use, or only what the user accepted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PinMode {
    /// A server's first listing is pinned as it is.
    #[default]
    TrustOnFirstUse,
    /// Nothing is trusted until `ringmcp pins accept` pinned it.
    Strict,
}

/// Where the pins live, and how new servers are treated.
#[derive(Debug)]
pub struct PinStore {
    path: PathBuf,
    mode: PinMode,
    file: Mutex<PinFile>,
}

/// Why the pins file cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("pins file {path}: {reason}")]
pub struct PinError {
    /// The file.
    pub path: PathBuf,
    /// What went wrong.
    pub reason: String,
}

impl PinStore {
    /// Opens the pins at `path` (absent: none pinned yet).
    ///
    /// # Errors
    /// When the file exists but cannot be read or parsed.
    pub fn open(path: &Path, mode: PinMode) -> Result<PinStore, PinError> {
        let file = match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| PinError {
                path: path.to_owned(),
                reason: format!("not a pins file: {e}"),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                PinFile { version: 1, ..PinFile::default() }
            }
            Err(e) => return Err(PinError { path: path.to_owned(), reason: e.to_string() }),
        };
        Ok(PinStore { path: path.to_owned(), mode, file: Mutex::new(file) })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The pins of server `key`, if any.
    pub fn get(&self, key: &str) -> Option<ServerPins> {
        self.lock().servers.get(key).cloned()
    }

    /// Compares a listing with server `key`'s pins. A server never pinned is pinned now in
    /// trust-on-first-use mode (no difference); in strict mode every tool is new.
    pub fn check(&self, key: &str, current: &ServerPins) -> PinDiff {
        let mut file = self.lock();
        match file.servers.get(key) {
            Some(pinned) => pinned.diff(current),
            None if self.mode == PinMode::TrustOnFirstUse => {
                file.servers.insert(key.to_owned(), current.clone());
                if let Err(e) = save(&self.path, &file) {
                    tracing::warn!("{e}");
                }
                PinDiff::default()
            }
            None => ServerPins::default().diff(current),
        }
    }

    /// Pins `current` as server `key`'s trusted listing.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn accept(&self, key: &str, current: ServerPins) -> Result<(), PinError> {
        let mut file = self.lock();
        file.servers.insert(key.to_owned(), current);
        save(&self.path, &file)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PinFile> {
        self.file.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn save(path: &Path, file: &PinFile) -> Result<(), PinError> {
    let err = |e: std::io::Error| PinError { path: path.to_owned(), reason: e.to_string() };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(err)?;
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let text = serde_json::to_vec_pretty(file).expect("pins serialise");
    std::fs::write(&tmp, text).map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}
