//! Streaming one oversized answer into the spill store, and the registry that keeps the
//! spilled payloads alive for the client that received them.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, PoisonError};

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

/// The content scan of one spilled text (the host has a policy), run by a thread of its own
/// while the text streams to its file: the reactor only counts the bytes it wrote, the scanner
/// reads them back from the file (the page cache) a block at a time, so neither the reactor's
/// time nor memory grows with the text.
#[derive(Debug)]
pub(crate) struct TailScan {
    state: Mutex<TailState>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct TailState {
    written: u64,
    ended: bool,
    report: Option<Report>,
}

impl TailScan {
    /// Starts the scanner over `file` (a handle on the file being written).
    fn start(file: std::fs::File, location: String) -> Option<Arc<TailScan>> {
        let tail = Arc::new(TailScan { state: Mutex::default(), changed: Condvar::new() });
        let scanner = tail.clone();
        let spawned = std::thread::Builder::new().name("ringmcp-scan".into()).spawn(move || {
            // Whatever happens, the report is set: a caller waits for it.
            let scanned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                scanner.read_through(&file, location)
            }));
            let report = scanned.unwrap_or_else(|_| {
                tracing::error!("the scan of a spilled text failed; it is reported as clean");
                Report::default()
            });
            scanner.lock().report = Some(report);
            scanner.changed.notify_all();
        });
        match spawned {
            Ok(_) => Some(tail),
            Err(e) => {
                tracing::warn!("spilled text not scanned: no thread for the scan ({e})");
                None
            }
        }
    }

    /// Reads the file as it grows, up to the end the writer announces, and judges it.
    fn read_through(&self, file: &std::fs::File, location: String) -> Report {
        use std::os::unix::fs::FileExt;
        let scanner = self;
        {
            let mut scan = StreamScan::new(location, true);
            let mut buf = vec![0u8; 256 << 10];
            let mut at = 0u64;
            loop {
                let (written, ended) = {
                    let state = scanner.lock();
                    let state = scanner
                        .changed
                        .wait_while(state, |s| s.written == at && !s.ended)
                        .unwrap_or_else(PoisonError::into_inner);
                    (state.written, state.ended)
                };
                while at < written {
                    let want = (written - at).min(buf.len() as u64) as usize;
                    match file.read_at(&mut buf[..want], at) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            scan.feed(&buf[..n]);
                            at += n as u64;
                        }
                    }
                }
                if ended && at >= written {
                    break;
                }
                if at < written {
                    // A short or failed read: the file is not what was written.
                    break;
                }
            }
            scan.finish()
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TailState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wrote(&self, n: usize) {
        self.lock().written += n as u64;
        self.changed.notify_all();
    }

    fn end(&self) {
        self.lock().ended = true;
        self.changed.notify_all();
    }

    /// What the scan found, once it has read the whole text (blocks until then).
    pub(crate) fn report(&self) -> Report {
        let state = self.lock();
        let state = self
            .changed
            .wait_while(state, |s| s.report.is_none())
            .unwrap_or_else(PoisonError::into_inner);
        state.report.clone().unwrap_or_default()
    }
}

/// A spilled text's scan, travelling with its answer to the client that receives it.
#[derive(Debug)]
pub(crate) struct SpillScanned {
    pub(crate) uri: String,
    pub(crate) scan: Arc<TailScan>,
}

/// Spilled payloads a client received, by URI, alive until released or the client is dropped.
#[derive(Debug, Default)]
pub(crate) struct SpillRegistry {
    files: Mutex<HashMap<String, SpillFile>>,
    /// The content scan of each, by URI.
    reports: Mutex<HashMap<String, Arc<TailScan>>>,
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
                        reports.insert(s.uri.clone(), s.scan.clone());
                    }
                }
            }
        }
        self.insert(files);
    }

    /// What the content scan found in the spilled text at `uri`, if it was scanned (waits
    /// for the scan to finish).
    pub(crate) fn report(&self, uri: &str) -> Option<Report> {
        let scan = self.reports.lock().unwrap_or_else(PoisonError::into_inner).get(uri).cloned();
        scan.map(|s| s.report())
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
    scan: Option<Arc<TailScan>>,
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
        let writer = self.store.create(&format!("answer-{index}"))?;
        // Text the model may read is scanned as it streams (off the reactor); decoded blobs
        // are not text.
        self.scan = None;
        if self.scan_content && encoding == SpillEncoding::Utf8Text {
            let at: Vec<String> = path.iter().map(|p| format!("{p:?}")).collect();
            match writer.reader() {
                Ok(file) => self.scan = TailScan::start(file, at.join("/")),
                Err(e) => tracing::warn!("spilled text not scanned: {e}"),
            }
        }
        self.writer = Some(writer);
        Ok(())
    }

    fn write(&mut self, _: usize, bytes: &[u8]) -> Result<(), SpillError> {
        let Some(w) = &mut self.writer else { return Ok(()) };
        w.write_all(bytes)?;
        if let Some(scan) = &self.scan {
            scan.wrote(bytes.len());
        }
        Ok(())
    }

    fn end(&mut self, _: usize, _: u64) -> Result<(), SpillError> {
        if let Some(w) = self.writer.take() {
            let scan = self.scan.take();
            if let Some(scan) = &scan {
                scan.end();
            }
            let file = w.finish()?;
            if let Some(scan) = scan {
                self.scans.push(SpillScanned { uri: file.uri().to_owned(), scan });
            }
            self.files.push(file);
        }
        Ok(())
    }
}

impl Drop for StoreSink {
    /// A scan still waiting for bytes ends with what it has (its thread must not wait for
    /// ever).
    fn drop(&mut self) {
        if let Some(scan) = self.scan.take() {
            scan.end();
        }
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
            if let Some(scan) = self.sink.scan.take() {
                scan.end();
            }
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
        let mut sink = self.sink;
        let (files, scans) = (std::mem::take(&mut sink.files), std::mem::take(&mut sink.scans));
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
