//! The scan of a text too large to hold (a spilled result, read as it streams to its file):
//! fed in pieces of any size, judged a block at a time cut at sentence ends, so memory stays
//! at one block however long the text.

use super::{Finding, scan_result_text, secrets};

/// Bytes gathered before a block is judged.
const BLOCK: usize = 256 << 10;

/// The most findings of each kind kept (the rest are counted).
const KEEP: usize = 16;

/// What a streamed text held.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// The first injections found (their spans are offsets in the whole text).
    pub injections: Vec<Finding>,
    /// How many sentences were flagged in all.
    pub injection_count: usize,
    /// The first credentials found: kind and the SHA-256 of their text.
    pub secrets: Vec<(&'static str, String)>,
    /// How many credentials were found in all.
    pub secret_count: usize,
}

impl Report {
    /// Whether nothing was found.
    pub fn is_clean(&self) -> bool {
        self.injection_count == 0 && self.secret_count == 0
    }
}

/// A streaming scan of one text.
#[derive(Debug)]
pub struct StreamScan {
    location: String,
    buf: Vec<u8>,
    /// Offset of `buf[0]` in the text.
    offset: u64,
    report: Report,
    /// Whether to look for credentials.
    secrets: bool,
}

impl StreamScan {
    /// A scan of the text at `location`; `secrets`: look for credentials too.
    pub fn new(location: impl Into<String>, secrets: bool) -> Self {
        StreamScan {
            location: location.into(),
            buf: Vec::new(),
            offset: 0,
            report: Report::default(),
            secrets,
        }
    }

    /// The next bytes of the text.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let take = (BLOCK * 2 - self.buf.len()).min(bytes.len());
            self.buf.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.buf.len() >= BLOCK * 2 {
                self.judge(false);
            }
        }
    }

    /// The text ended: what it held.
    pub fn finish(mut self) -> Report {
        self.judge(true);
        self.report
    }

    /// Judges the buffer up to its last sentence end (all of it at the end).
    fn judge(&mut self, last: bool) {
        let cut = if last { self.buf.len() } else { cut_point(&self.buf) };
        let block = &self.buf[..cut];
        let text = match std::str::from_utf8(block) {
            Ok(t) => std::borrow::Cow::Borrowed(t),
            Err(_) => String::from_utf8_lossy(block),
        };
        for mut f in scan_result_text(&self.location, &text) {
            self.report.injection_count += 1;
            if self.report.injections.len() < KEEP {
                f.span = (f.span.start + self.offset as usize)..(f.span.end + self.offset as usize);
                self.report.injections.push(f);
            }
        }
        if self.secrets {
            for s in secrets::find(block) {
                self.report.secret_count += 1;
                if self.report.secrets.len() < KEEP {
                    let digest = crate::policy::audit::digest_hex(&block[s.span.clone()]);
                    self.report.secrets.push((s.kind, digest));
                }
            }
        }
        self.offset += cut as u64;
        self.buf.drain(..cut);
    }
}

/// Where to cut a full buffer: after its last line end or sentence end in the second half,
/// else after its last space, else at a character boundary near the end.
fn cut_point(buf: &[u8]) -> usize {
    let half = buf.len() / 2;
    let tail = &buf[half..];
    if let Some(i) = memchr::memrchr(b'\n', tail) {
        return half + i + 1;
    }
    if let Some(i) =
        memchr::memrchr3_iter(b'.', b'!', b'?', tail).find(|&i| tail.get(i + 1) == Some(&b' '))
    {
        return half + i + 2;
    }
    if let Some(i) = memchr::memrchr(b' ', tail) {
        return half + i + 1;
    }
    let mut i = buf.len();
    while i > half && (buf[i - 1] & 0xC0) == 0x80 {
        i -= 1;
    }
    // `i - 1` starts a character: cut before it.
    i.saturating_sub(1).max(half)
}
