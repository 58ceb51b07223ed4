//! Streaming one oversized answer into the spill store, and the registry that keeps the
//! spilled payloads alive for the client that received them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use crate::frame::IdSniffer;
use crate::jsonrpc::{self, RawDecoded};
use crate::policy::content::stream::{Report, StreamScan};
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

/// What the content scan found in one spilled text (the host has a policy).
#[derive(Debug)]
pub(crate) struct SpillScanned {
    pub(crate) uri: String,
    pub(crate) report: Report,
}

/// Spilled payloads a client received, by URI, alive until released or the client is dropped.
#[derive(Debug, Default)]
pub(crate) struct SpillRegistry {
    files: Mutex<HashMap<String, SpillFile>>,
    /// What the content scan found in each, by URI.
    reports: Mutex<HashMap<String, Report>>,
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
        let mut files = Vec::new();
        for a in attachments {
            match a.downcast::<SpillFile>() {
                Ok(f) => files.push(Arc::unwrap_or_clone(f)),
                Err(a) => {
                    if let Ok(s) = a.downcast::<SpillScanned>() {
                        let mut reports =
                            self.reports.lock().unwrap_or_else(PoisonError::into_inner);
                        reports.insert(s.uri.clone(), s.report.clone());
                    }
                }
            }
        }
        self.insert(files);
    }

    /// What the content scan found in the spilled text at `uri`, if it was scanned.
    pub(crate) fn report(&self, uri: &str) -> Option<Report> {
        self.reports.lock().unwrap_or_else(PoisonError::into_inner).get(uri).cloned()
    }

    pub(crate) fn get(&self, uri: &str) -> Option<SpillFile> {
        self.files.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(uri).cloned()
    }

    pub(crate) fn remove(&self, uri: &str) -> Option<SpillFile> {
        self.reports.lock().unwrap_or_else(PoisonError::into_inner).remove(uri);
        self.files.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(uri)
    }
}

/// Writes each spilled string to its own file (and scans its text as it goes, when asked).
struct StoreSink {
    store: Arc<SpillStore>,
    writer: Option<SpillWriter>,
    files: Vec<SpillFile>,
    scan_content: bool,
    scan: Option<StreamScan>,
    scans: Vec<SpillScanned>,
}

impl SpillSink for StoreSink {
    type Error = SpillError;

    fn begin(
        &mut self,
        index: usize,
        path: &[PathSegment],
        encoding: SpillEncoding,
    ) -> Result<(), SpillError> {
        self.writer = Some(self.store.create(&format!("answer-{index}"))?);
        // Text the model may read is scanned as it streams; decoded blobs are not text.
        self.scan = (self.scan_content && encoding == SpillEncoding::Utf8Text).then(|| {
            let at: Vec<String> = path.iter().map(|p| format!("{p:?}")).collect();
            StreamScan::new(at.join("/"), true)
        });
        Ok(())
    }

    fn write(&mut self, _: usize, bytes: &[u8]) -> Result<(), SpillError> {
        if let Some(scan) = &mut self.scan {
            scan.feed(bytes);
        }
        match &mut self.writer {
            Some(w) => w.write_all(bytes),
            None => Ok(()),
        }
    }

    fn end(&mut self, _: usize, _: u64) -> Result<(), SpillError> {
        if let Some(w) = self.writer.take() {
            let file = w.finish()?;
            if let Some(scan) = self.scan.take() {
                self.scans.push(SpillScanned { uri: file.uri().to_owned(), report: scan.finish() });
            }
            self.files.push(file);
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
    /// Decoded; the files hold the spilled strings (and the scans what their text held).
    Decoded(RawDecoded, Vec<SpillFile>, Vec<SpillScanned>),
    /// The answer could not be spilled; `id` is its raw id token if one was seen.
    Failed { id: Option<Vec<u8>>, reason: String },
}

impl SpillJob {
    pub(crate) fn new(
        store: Arc<SpillStore>,
        string_threshold: usize,
        scan_content: bool,
    ) -> SpillJob {
        SpillJob {
            scanner: SpillScanner::new(string_threshold),
            sink: StoreSink {
                store,
                writer: None,
                files: Vec::new(),
                scan_content,
                scan: None,
                scans: Vec::new(),
            },
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
            self.sink.scans.clear();
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
        let (files, scans) = (self.sink.files, self.sink.scans);
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
            Ok(decoded) => SpillOutcome::Decoded(RawDecoded::from(decoded), files, scans),
            Err(e) => SpillOutcome::Failed { id, reason: e.to_string() },
        }
    }
}

/// Opens the process-wide store for a host's spill settings.
pub(crate) fn open_store(config: &SpillConfig) -> Result<Arc<SpillStore>, SpillError> {
    SpillStore::shared(config.store.clone())
}
