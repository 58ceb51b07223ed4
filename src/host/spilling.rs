//! Streaming one oversized answer into the spill store, and the registry that keeps the
//! spilled payloads alive for the client that received them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::frame::IdSniffer;
use crate::jsonrpc::{self, RawDecoded};
use crate::spill::link::{Placed, link_spills};
use crate::spill::scan::{FeedError, PathSegment, SpillEncoding, SpillScanner, SpillSink};
use crate::spill::store::{SpillError, SpillFile, SpillStore, SpillWriter, StoreConfig};

/// When answers are spilled, and where to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillConfig {
    /// A stdout line longer than this is streamed to the store instead of being buffered
    /// (default 4 MiB).
    pub line_threshold: usize,
    /// Inside such an answer's `result`, strings longer than this go to files (default
    /// 64 KiB); the rest of the answer is delivered as usual.
    pub string_threshold: usize,
    /// The store's folder and quota.
    pub store: StoreConfig,
}

impl Default for SpillConfig {
    fn default() -> Self {
        SpillConfig {
            line_threshold: 4 << 20,
            string_threshold: 64 << 10,
            store: StoreConfig::default(),
        }
    }
}

/// Spilled payloads a client received, by URI, alive until released or the client is dropped.
#[derive(Debug, Default)]
pub(crate) struct SpillRegistry {
    files: Mutex<HashMap<String, SpillFile>>,
}

impl SpillRegistry {
    pub(crate) fn insert(&self, files: Vec<SpillFile>) {
        let mut map = self.files.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for file in files {
            map.insert(file.uri().to_owned(), file);
        }
    }

    /// Keeps the spill files among a result's attachments (other attachments are dropped).
    pub(crate) fn adopt(&self, attachments: Vec<crate::jsonrpc::Attachment>) {
        // Nearly every result has none: do not take the lock on the hot path.
        if attachments.is_empty() {
            return;
        }
        let files = attachments.into_iter().filter_map(|a| a.downcast::<SpillFile>().ok());
        self.insert(files.map(std::sync::Arc::unwrap_or_clone).collect());
    }

    pub(crate) fn get(&self, uri: &str) -> Option<SpillFile> {
        self.files.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(uri).cloned()
    }

    pub(crate) fn remove(&self, uri: &str) -> Option<SpillFile> {
        self.files.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(uri)
    }
}

/// Writes each spilled string to its own file.
struct StoreSink {
    store: Arc<SpillStore>,
    writer: Option<SpillWriter>,
    files: Vec<SpillFile>,
}

impl SpillSink for StoreSink {
    type Error = SpillError;

    fn begin(
        &mut self,
        index: usize,
        _: &[PathSegment],
        _: SpillEncoding,
    ) -> Result<(), SpillError> {
        self.writer = Some(self.store.create(&format!("answer-{index}"))?);
        Ok(())
    }

    fn write(&mut self, _: usize, bytes: &[u8]) -> Result<(), SpillError> {
        match &mut self.writer {
            Some(w) => w.write_all(bytes),
            None => Ok(()),
        }
    }

    fn end(&mut self, _: usize, _: u64) -> Result<(), SpillError> {
        if let Some(w) = self.writer.take() {
            self.files.push(w.finish()?);
        }
        Ok(())
    }
}

/// One answer being spilled.
pub(crate) struct SpillJob {
    scanner: SpillScanner,
    sink: StoreSink,
    sniffer: IdSniffer,
    failed: Option<String>,
    len: u64,
}

/// How a spilled answer ended.
pub(crate) enum SpillOutcome {
    /// Decoded; the files hold the spilled strings.
    Decoded(RawDecoded, Vec<SpillFile>),
    /// The answer could not be spilled; `id` is its raw id token if one was seen.
    Failed { id: Option<Vec<u8>>, reason: String },
}

impl SpillJob {
    pub(crate) fn new(store: Arc<SpillStore>, string_threshold: usize) -> SpillJob {
        SpillJob {
            scanner: SpillScanner::new(string_threshold),
            sink: StoreSink { store, writer: None, files: Vec::new() },
            sniffer: IdSniffer::new(),
            failed: None,
            len: 0,
        }
    }

    /// The next bytes of the line. After a failure the rest of the line is only sniffed for
    /// its id (the framer keeps draining the pipe either way).
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        self.len += bytes.len() as u64;
        self.sniffer.feed(bytes);
        if self.failed.is_some() {
            return;
        }
        if let Err(e) = self.scanner.feed(bytes, &mut self.sink) {
            self.failed = Some(match e {
                FeedError::Scan(e) => e.to_string(),
                FeedError::Sink(e) => e.to_string(),
            });
            // Dropping them removes the partial payloads and returns their quota.
            self.sink.writer = None;
            self.sink.files.clear();
        }
    }

    /// The line's raw id token, if seen so far.
    pub(crate) fn id(&self) -> Option<Vec<u8>> {
        self.sniffer.id().map(<[u8]>::to_vec)
    }

    /// The line ended.
    pub(crate) fn finish(self) -> SpillOutcome {
        let id = self.id();
        let len = self.len;
        if let Some(reason) = self.failed {
            return SpillOutcome::Failed {
                id,
                reason: format!("{reason} (answer of {len} bytes)"),
            };
        }
        let scanned = match self.scanner.finish() {
            Ok(scanned) => scanned,
            Err(e) => return SpillOutcome::Failed { id, reason: e.to_string() },
        };
        let mut message: Value = match serde_json::from_slice(&scanned.skeleton) {
            Ok(v) => v,
            Err(e) => {
                return SpillOutcome::Failed {
                    id,
                    reason: format!("spilled answer's envelope: {e}"),
                };
            }
        };
        let files = self.sink.files;
        if let Some(result) = message.get_mut("result") {
            let placed: Vec<Placed<'_>> = scanned
                .spills
                .iter()
                .zip(&files)
                .map(|(info, file)| Placed { info, uri: file.uri().to_owned() })
                .collect();
            link_spills(result, &placed);
        }
        match jsonrpc::decode_value(message) {
            Ok(decoded) => SpillOutcome::Decoded(RawDecoded::from(decoded), files),
            Err(e) => SpillOutcome::Failed { id, reason: e.to_string() },
        }
    }
}

/// Opens the process-wide store for a host's spill settings.
pub(crate) fn open_store(config: &SpillConfig) -> Result<Arc<SpillStore>, SpillError> {
    SpillStore::shared(config.store.clone())
}
