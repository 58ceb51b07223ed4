//! The audit trail's writer: appends hash-chained records (`policy::audit`) to a JSON Lines
//! file, keeps its head file up to date, syncs as configured, rotates with the chain carried
//! over. Shared by every client of a host (records from several threads are serialised).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use serde_json::{Map, Value};

use ring::signature::{Ed25519KeyPair, KeyPair};

use crate::policy::audit::{Chain, Sign, verify_signed};
use crate::policy::{AuditConfig, FsyncPolicy};

/// An open audit trail.
#[derive(Debug)]
pub struct AuditLog {
    config: AuditConfig,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// Locked exclusively while open: two writers would fork the chain.
    file: nix::fcntl::Flock<File>,
    chain: Chain,
    bytes: u64,
    since_checkpoint: u64,
    last_sync: Instant,
    /// Signs checkpoints and the head (`signingKey`).
    signer: Option<Arc<Ed25519KeyPair>>,
}

/// Why the trail cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The file cannot be opened, read or written.
    #[error("audit log {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Another process has the trail open.
    #[error(
        "audit log {path} is in use by another process (only one writer may append to a trail)"
    )]
    Busy {
        /// The file.
        path: PathBuf,
    },
    /// The signing key cannot be read or is not an Ed25519 key.
    #[error("audit signing key {path}: {reason}")]
    Key {
        /// The key file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The existing file does not verify: new records would not chain to it.
    #[error(
        "audit log {path} does not verify ({problem}); move it aside or check it with `ringmcp audit verify`"
    )]
    Tampered {
        /// The file.
        path: PathBuf,
        /// The first bad line.
        problem: crate::policy::audit::Tampered,
    },
}

/// Reads an Ed25519 signing key (PKCS#8, as [`generate_key`] writes it).
fn load_key(path: &Path) -> Result<Ed25519KeyPair, AuditError> {
    let bad = |reason: String| AuditError::Key { path: path.to_owned(), reason };
    let bytes = std::fs::read(path).map_err(|e| bad(e.to_string()))?;
    Ed25519KeyPair::from_pkcs8(&bytes).map_err(|e| {
        bad(format!("not an Ed25519 PKCS#8 key ({e}); make one with `ringmcp audit keygen`"))
    })
}

/// Makes a new Ed25519 signing key at `path` (PKCS#8, readable by its owner only; never
/// overwrites) and returns its public key as hex, for `ringmcp audit verify --key`.
///
/// # Errors
/// [`AuditError::Key`] when the file exists or cannot be written.
pub fn generate_key(path: &Path) -> Result<String, AuditError> {
    use std::os::unix::fs::OpenOptionsExt;
    let bad = |reason: String| AuditError::Key { path: path.to_owned(), reason };
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).map_err(|e| bad(e.to_string()))?;
    let key = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).map_err(|e| bad(e.to_string()))?;
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| bad(e.to_string()))?;
    file.write_all(pkcs8.as_ref())
        .and_then(|()| file.sync_all())
        .map_err(|e| bad(e.to_string()))?;
    Ok(key.public_key().as_ref().iter().map(|b| format!("{b:02x}")).collect())
}

/// The head file beside `log`.
pub fn head_path(log: &Path) -> PathBuf {
    let mut name = log.as_os_str().to_owned();
    name.push(".head");
    PathBuf::from(name)
}

/// Now, as RFC 3339 UTC with milliseconds.
pub fn now_rfc3339() -> String {
    let d = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

fn random_hex(bytes: usize) -> String {
    use ring::rand::SecureRandom;
    let mut buf = vec![0u8; bytes];
    let _ = ring::rand::SystemRandom::new().fill(&mut buf);
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

impl AuditLog {
    /// Opens (or starts) the trail at `config.path`. An existing trail must verify; a record
    /// cut short by a crash is dropped before appending.
    ///
    /// # Errors
    /// [`AuditError::Io`], or [`AuditError::Tampered`] for an existing file that does not verify.
    pub fn open(config: AuditConfig) -> Result<AuditLog, AuditError> {
        let path = config.path.clone();
        let io = |source| AuditError::Io { path: path.clone(), source };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let file =
            OpenOptions::new().read(true).append(true).create(true).open(&path).map_err(io)?;
        let mut file = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock)
            .map_err(|_| AuditError::Busy { path: path.clone() })?;
        let signer = config.signing_key.as_deref().map(load_key).transpose()?.map(Arc::new);
        let mut existing = Vec::new();
        file.read_to_end(&mut existing).map_err(io)?;
        let inner = if existing.is_empty() {
            let (chain, genesis) = Chain::genesis(&random_hex(16), &now_rfc3339());
            let head = chain.clone();
            let mut inner = Inner {
                file,
                chain,
                bytes: 0,
                since_checkpoint: 0,
                last_sync: Instant::now(),
                signer,
            };
            write_line(&mut inner, &path, &genesis, true, &head).map_err(io)?;
            inner
        } else {
            let head = std::fs::read(head_path(&path)).ok();
            let key = signer.as_ref().map(|k| k.public_key().as_ref().to_vec());
            let verified = verify_signed(&existing, head.as_deref(), None, key.as_deref())
                .map_err(|problem| AuditError::Tampered { path: path.clone(), problem })?;
            let complete = existing.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            if complete < existing.len() {
                // A record cut short by a crash: never acknowledged, so dropped.
                file.set_len(complete as u64).map_err(io)?;
                file.seek(SeekFrom::End(0)).map_err(io)?;
            }
            Inner {
                file,
                chain: verified.chain,
                bytes: complete as u64,
                since_checkpoint: 0,
                last_sync: Instant::now(),
                signer,
            }
        };
        Ok(AuditLog { config, inner: Mutex::new(inner) })
    }

    /// The trail's settings.
    pub fn config(&self) -> &AuditConfig {
        &self.config
    }

    /// Appends one record (`time` is added); returns once it is written (and synced, per
    /// the fsync policy).
    ///
    /// # Errors
    /// When the record cannot be written; the log is left as it was (the chain does not move
    /// on, a partial line is cut off), so later records still chain.
    pub fn record(&self, mut record: Map<String, Value>) -> std::io::Result<()> {
        record.insert("time".into(), Value::String(now_rfc3339()));
        let mut inner = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let result = self.append(&mut inner, record);
        if let Err(e) = &result {
            tracing::error!("audit log {}: {e}", self.config.path.display());
        }
        result
    }

    fn append(&self, inner: &mut Inner, record: Map<String, Value>) -> std::io::Result<()> {
        let path = &self.config.path;
        if self.config.max_bytes.is_some_and(|max| inner.bytes >= max) {
            self.rotate(inner)?;
        }
        let sync = match self.config.fsync {
            FsyncPolicy::Always => true,
            FsyncPolicy::Interval => inner.last_sync.elapsed().as_secs() >= 1,
            FsyncPolicy::Never => false,
        };
        commit(inner, path, record, sync, false)?;
        inner.since_checkpoint += 1;
        if inner.since_checkpoint >= self.config.checkpoint_every.unwrap_or(100) {
            inner.since_checkpoint = 0;
            let mut c = Map::new();
            c.insert("type".into(), "checkpoint".into());
            c.insert("records".into(), Value::from(inner.chain.next_seq));
            c.insert("time".into(), Value::String(now_rfc3339()));
            commit(inner, path, c, true, true)?;
        }
        Ok(())
    }

    /// Moves the full file aside (`<log>.<seq>`) and starts a new one whose first record
    /// continues the chain.
    fn rotate(&self, inner: &mut Inner) -> std::io::Result<()> {
        let path = &self.config.path;
        inner.file.sync_all()?;
        let mut aside = path.as_os_str().to_owned();
        aside.push(format!(".{}", inner.chain.next_seq));
        let aside = PathBuf::from(aside);
        std::fs::rename(path, &aside)?;
        let _ = std::fs::rename(head_path(path), head_path(&aside));
        let file = OpenOptions::new().read(true).append(true).create(true).open(path)?;
        inner.file = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock)
            .map_err(|(_, e)| std::io::Error::from(e))?;
        inner.bytes = 0;
        let mut c = Map::new();
        c.insert("type".into(), "continued".into());
        c.insert(
            "from".into(),
            Value::String(
                aside.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            ),
        );
        c.insert("time".into(), Value::String(now_rfc3339()));
        commit(inner, path, c, true, false)
    }
}

/// Seals `record` as the chain's next line and writes it; the chain moves on only once the
/// line is written, and a partial line is cut off, so a failure leaves the log consistent.
fn commit(
    inner: &mut Inner,
    path: &Path,
    record: Map<String, Value>,
    sync: bool,
    checkpoint: bool,
) -> std::io::Result<()> {
    let mut next = inner.chain.clone();
    let line = match &inner.signer {
        Some(key) if checkpoint => next.seal_signed(record, &**key),
        _ => next.seal(record),
    };
    let before = inner.bytes;
    match write_line(inner, path, &line, sync, &next) {
        Ok(()) => {
            inner.chain = next;
            Ok(())
        }
        Err(e) => {
            let _ = inner.file.set_len(before);
            inner.bytes = before;
            Err(e)
        }
    }
}

/// Writes `line` and a newline; when `sync`, syncs it and then writes the head file (`chain`
/// is the chain after this line). The head is only ever written for data on disk, so it never
/// runs ahead of the log: a crash leaves it behind at worst, which verification accepts.
fn write_line(
    inner: &mut Inner,
    path: &Path,
    line: &str,
    sync: bool,
    chain: &Chain,
) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(line.len() + 1);
    buf.extend_from_slice(line.as_bytes());
    buf.push(b'\n');
    inner.file.write_all(&buf)?;
    inner.bytes += buf.len() as u64;
    if !sync {
        return Ok(());
    }
    inner.file.sync_data()?;
    inner.last_sync = Instant::now();
    let head = head_path(path);
    let tmp = {
        let mut t = head.as_os_str().to_owned();
        t.push(".tmp");
        PathBuf::from(t)
    };
    let mut f = File::create(&tmp)?;
    let sign = inner.signer.as_deref().map(|k| k as &dyn Sign);
    f.write_all(chain.head_text(sign).as_bytes())?;
    f.sync_data()?;
    std::fs::rename(&tmp, &head)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::audit::{public_key_from_hex, verify};

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ringmcp-audit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("audit.jsonl")
    }

    fn rec(n: u64) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("type".into(), "call".into());
        m.insert("n".into(), Value::from(n));
        m
    }

    #[test]
    fn records_chain_across_reopening_a_crash_and_rotation() {
        let path = temp("chain");
        let config =
            AuditConfig { path: path.clone(), checkpoint_every: Some(3), ..AuditConfig::default() };
        let log = AuditLog::open(config.clone()).unwrap();
        for n in 0..4 {
            log.record(rec(n)).unwrap();
        }
        drop(log);
        // A crash mid-write: a torn last line.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(br#"{"n":99,"pre"#).unwrap();
        drop(f);
        let log = AuditLog::open(config.clone()).unwrap();
        log.record(rec(4)).unwrap();
        drop(log);
        let bytes = std::fs::read(&path).unwrap();
        let head = std::fs::read(head_path(&path)).unwrap();
        let v = verify(&bytes, Some(&head), None).unwrap();
        // genesis + 5 records + one checkpoint after the third.
        assert_eq!((v.records, v.warnings.len()), (7, 0), "{:?}", v.warnings);
        assert!(!String::from_utf8_lossy(&bytes).contains("\"n\":99"));
        // Rotation carries the chain over.
        let small = AuditConfig { max_bytes: Some(1), ..config };
        let log = AuditLog::open(small).unwrap();
        log.record(rec(5)).unwrap();
        drop(log);
        let rotated = PathBuf::from(format!("{}.7", path.display()));
        let old = std::fs::read(&rotated).unwrap();
        let before =
            verify(&old, std::fs::read(head_path(&rotated)).ok().as_deref(), None).unwrap();
        let new = std::fs::read(&path).unwrap();
        let after =
            verify(&new, Some(&std::fs::read(head_path(&path)).unwrap()), Some(&before.chain))
                .unwrap();
        assert_eq!(after.records, 2, "continued + the record");
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_tampered_log_is_not_appended_to() {
        let path = temp("tampered");
        let config = AuditConfig { path: path.clone(), ..AuditConfig::default() };
        let log = AuditLog::open(config.clone()).unwrap();
        log.record(rec(1)).unwrap();
        log.record(rec(2)).unwrap();
        drop(log);
        let text = std::fs::read_to_string(&path).unwrap().replace("\"n\":1", "\"n\":7");
        std::fs::write(&path, text).unwrap();
        let e = AuditLog::open(config).unwrap_err();
        assert!(matches!(e, AuditError::Tampered { ref problem, .. } if problem.line == 3), "{e}");
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    /// With a signing key, checkpoints and the head are signed: the trail verifies with the
    /// public key; a rewritten log with a recomputed chain and head (what anyone who can write
    /// both could do) does not, nor does a missing head or another key.
    #[test]
    fn a_signed_trail_cannot_be_rewritten_without_the_key() {
        let path = temp("signed");
        let key_file = path.with_file_name("audit.key");
        let public = public_key_from_hex(&generate_key(&key_file).unwrap()).unwrap();
        assert!(generate_key(&key_file).is_err(), "a key is never overwritten");
        let config = AuditConfig {
            path: path.clone(),
            checkpoint_every: Some(2),
            signing_key: Some(key_file.clone()),
            ..AuditConfig::default()
        };
        let log = AuditLog::open(config.clone()).unwrap();
        for n in 0..5 {
            log.record(rec(n)).unwrap();
        }
        drop(log);
        let read = |p: &Path| std::fs::read(p).unwrap();
        let v = verify_signed(&read(&path), Some(&read(&head_path(&path))), None, Some(&public))
            .unwrap();
        assert_eq!(v.records, 8, "genesis, 5 records, 2 checkpoints");
        // Reopening with the key checks the signatures and goes on.
        AuditLog::open(config.clone()).unwrap().record(rec(5)).unwrap();
        // A forger rewrites record 1 and recomputes every hash after it and the head, as an
        // unsigned trail would let them.
        let text = String::from_utf8(read(&path)).unwrap();
        let mut lines = text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap());
        let mut chain = Chain { next_seq: 0, head: crate::policy::audit::ZERO_HASH.into() };
        let mut forged = Vec::new();
        for mut r in lines.by_ref() {
            let m = r.as_object_mut().unwrap();
            m.remove("seq");
            m.remove("prev");
            if m.get("n") == Some(&Value::from(1)) {
                m.insert("n".into(), Value::from(7));
            }
            forged.push(chain.seal(m.clone()));
        }
        let forged_log = forged.join("\n") + "\n";
        let unsigned_head = chain.head_text(None);
        assert!(verify(forged_log.as_bytes(), Some(unsigned_head.as_bytes()), None).is_ok());
        let e = verify_signed(
            forged_log.as_bytes(),
            Some(unsigned_head.as_bytes()),
            None,
            Some(&public),
        )
        .unwrap_err();
        assert!(e.reason.contains("signature") || e.reason.contains("not signed"), "{e}");
        // No head, or another key: refused.
        let e = verify_signed(&read(&path), None, None, Some(&public)).unwrap_err();
        assert!(e.reason.contains("no head file"), "{e}");
        let other =
            public_key_from_hex(&generate_key(&path.with_file_name("other.key")).unwrap()).unwrap();
        assert!(
            verify_signed(&read(&path), Some(&read(&head_path(&path))), None, Some(&other))
                .is_err()
        );
        // A bad key file is a clear error.
        std::fs::write(path.with_file_name("bad.key"), b"not a key").unwrap();
        let bad = AuditConfig { signing_key: Some(path.with_file_name("bad.key")), ..config };
        assert!(matches!(AuditLog::open(bad), Err(AuditError::Key { .. })));
        std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    }

    #[test]
    fn the_time_is_rfc3339() {
        let t = now_rfc3339();
        assert_eq!(t.len(), 24, "{t}");
        assert!(t.starts_with("20") && t.ends_with('Z') && &t[10..11] == "T", "{t}");
    }
}
