//! String bodies: the hot path. Raw runs between quotes and backslashes are found with
//! `memchr2` and moved in one piece to where the string goes; common escapes are decoded in one
//! step, others byte by byte; the raw bytes are checked (UTF-8, control characters) once per
//! chunk.

use std::mem;

use super::base64::Base64;
use super::string::{Escape, push_escaped, quick_escape};
use super::{
    BASE64_SLICE, DIRECT_WRITE, Dest, FeedError, PLACEHOLDER_KEY, STAGING, ScanError,
    SpillEncoding, SpillInfo, SpillScanner, SpillSink, flush, syntax,
};

impl SpillScanner {
    /// Consumes string bytes of `chunk` from `start` (`base` is the chunk's stream offset) up to
    /// the end of the chunk or of the string; returns the index after what was consumed.
    ///
    /// The raw bytes of the string's part in this chunk are checked (UTF-8, control characters)
    /// in one pass, apart from the decoding, which may run ahead: escapes and quotes are ASCII,
    /// so they do not change what is valid UTF-8. A decoding error is reported only if the raw
    /// bytes before it are valid, so the error named is always the first one in the line.
    pub(super) fn string_bytes<S: SpillSink>(
        &mut self,
        chunk: &[u8],
        start: usize,
        base: u64,
        sink: &mut S,
    ) -> Result<usize, FeedError<S::Error>> {
        let mut i = start;
        let decoded = self.decode_body(chunk, &mut i, base, sink);
        let (end, closed) = match &decoded {
            Ok(closed) => (i, *closed),
            Err(FeedError::Scan(e)) => {
                let at = e.offset().saturating_sub(base).min(chunk.len() as u64);
                (start.max(at as usize), false)
            }
            Err(FeedError::Sink(_)) => return decoded.map(|_| i),
        };
        let raw = &chunk[start..end];
        self.string
            .utf8
            .check(raw, base + start as u64, closed)
            .map_err(|(at, why)| syntax(at, why))?;
        decoded?;
        if matches!(self.string.dest, Dest::Skeleton) {
            self.skeleton.extend_from_slice(raw);
        }
        if closed {
            self.end_string(base + end as u64, sink)?;
            return Ok(end + 1);
        }
        Ok(end)
    }

    /// Decodes string bytes from `*i` to the closing quote (returns `true`, `*i` at the quote)
    /// or the end of the chunk (`false`), sending them where the string goes. Raw bytes are not
    /// checked here.
    fn decode_body<S: SpillSink>(
        &mut self,
        chunk: &[u8],
        i: &mut usize,
        base: u64,
        sink: &mut S,
    ) -> Result<bool, FeedError<S::Error>> {
        // Strings kept raw in the skeleton only need their escapes checked.
        let emit = !matches!(self.string.dest, Dest::Skeleton);
        while *i < chunk.len() {
            if self.string.escape == Escape::None
                && let Dest::Sink { decoder: None, .. } = self.string.dest
                && let Some(closed) = self.spill_text_fast(chunk, i, sink)?
            {
                return Ok(closed);
            }
            if self.string.escape != Escape::None {
                let off = base + *i as u64;
                match self.string.escape.push(chunk[*i]) {
                    Ok(None) => {}
                    Ok(Some((bytes, n))) if emit => {
                        self.escaped(&bytes[..n], self.string.escape_offset, sink)?;
                    }
                    Ok(Some(_)) => {}
                    Err(e) => {
                        let at = if e.at_start { self.string.escape_offset } else { off };
                        return Err(syntax(at, e.reason).into());
                    }
                }
                *i += 1;
                continue;
            }
            let rest = &chunk[*i..];
            let run_off = base + *i as u64;
            let Some(k) = find_quote_or_backslash(rest) else {
                if emit {
                    self.run(rest, run_off, sink)?;
                }
                *i = chunk.len();
                return Ok(false);
            };
            if emit && k > 0 {
                self.run(&rest[..k], run_off, sink)?;
            }
            let off = run_off + k as u64;
            if rest[k] == b'"' {
                *i += k;
                return Ok(true);
            }
            if let Some(((bytes, n), len)) = quick_escape(&rest[k..]) {
                if emit {
                    self.escaped(&bytes[..n], off, sink)?;
                }
                *i += k + len;
                continue;
            }
            *i += k + 1;
            self.string.escape = Escape::Backslash;
            self.string.escape_offset = off;
        }
        Ok(false)
    }

    /// The loop for text being spilled, the common case for huge strings: runs and common
    /// escapes go straight to staging (long runs straight to the sink). Returns like
    /// `decode_body`, or `None` at an escape it leaves to the byte-by-byte path.
    fn spill_text_fast<S: SpillSink>(
        &mut self,
        chunk: &[u8],
        i: &mut usize,
        sink: &mut S,
    ) -> Result<Option<bool>, FeedError<S::Error>> {
        let Dest::Sink { index, decoder: None, len } = &mut self.string.dest else {
            return Ok(None);
        };
        let index = *index;
        let staging = &mut self.staging;
        while *i < chunk.len() {
            let rest = &chunk[*i..];
            let Some(k) = find_quote_or_backslash(rest) else {
                spill_run(rest, rest, index, len, staging, sink)?;
                *i = chunk.len();
                break;
            };
            spill_run(&rest[..k], rest, index, len, staging, sink)?;
            *i += k;
            if rest[k] == b'"' {
                return Ok(Some(true));
            }
            let Some(((bytes, n), used)) = quick_escape(&rest[k..]) else {
                return Ok(None);
            };
            let mut wide = [0; 16];
            wide[..4].copy_from_slice(&bytes);
            spill_run(&wide[..n], &wide, index, len, staging, sink)?;
            *i += used;
        }
        Ok(Some(false))
    }

    /// A raw run of string bytes at stream offset `off`, not empty.
    fn run<S: SpillSink>(
        &mut self,
        run: &[u8],
        off: u64,
        sink: &mut S,
    ) -> Result<(), FeedError<S::Error>> {
        match self.string.dest {
            Dest::Skeleton => Ok(()),
            Dest::Buffer => self.buffer(run, off, true, sink),
            Dest::Sink { .. } => self.spill_bytes(run, off, true, sink),
        }
    }

    /// The bytes an escape starting at `off` stands for.
    fn escaped<S: SpillSink>(
        &mut self,
        bytes: &[u8],
        off: u64,
        sink: &mut S,
    ) -> Result<(), FeedError<S::Error>> {
        match self.string.dest {
            Dest::Skeleton => Ok(()),
            Dest::Buffer => {
                self.string.had_escape = true;
                self.buffer(bytes, off, false, sink)
            }
            Dest::Sink { .. } => self.spill_bytes(bytes, off, false, sink),
        }
    }

    /// Text for `buf`, unless it takes a value over the threshold: then the spill starts.
    /// `exact`: byte `k` of `bytes` is at offset `off + k` (a raw run), else all are at `off`.
    fn buffer<S: SpillSink>(
        &mut self,
        bytes: &[u8],
        off: u64,
        exact: bool,
        sink: &mut S,
    ) -> Result<(), FeedError<S::Error>> {
        if self.string.key || self.buf.len() + bytes.len() <= self.threshold {
            self.buf.extend_from_slice(bytes);
            if self.string.base64
                && self.string.shadow_error.is_none()
                && let Err(k) = self.string.shadow.push::<false>(bytes, &mut Vec::new())
            {
                self.string.shadow_error = Some(if exact { off + k as u64 } else { off });
            }
            return Ok(());
        }
        self.start_spill(off, sink)?;
        self.spill_bytes(bytes, off, exact, sink)
    }

    /// The buffered string passed the threshold: placeholder, `begin`, then the buffer's bytes.
    fn start_spill<S: SpillSink>(
        &mut self,
        off: u64,
        sink: &mut S,
    ) -> Result<(), FeedError<S::Error>> {
        if let Some(offset) = self.string.shadow_error {
            return Err(ScanError::InvalidBase64 { offset }.into());
        }
        let index = self.spills.len();
        let encoding =
            if self.string.base64 { SpillEncoding::Base64Decoded } else { SpillEncoding::Utf8Text };
        let start = self.skeleton.len();
        self.skeleton.extend_from_slice(b"{\"");
        self.skeleton.extend_from_slice(PLACEHOLDER_KEY.as_bytes());
        self.skeleton.extend_from_slice(b"\":");
        self.skeleton.extend_from_slice(index.to_string().as_bytes());
        self.skeleton.push(b'}');
        self.spills.push(SpillInfo {
            index,
            path: self.path.clone(),
            encoding,
            len: 0,
            placeholder: start..self.skeleton.len(),
        });
        sink.begin(index, &self.path, encoding).map_err(FeedError::Sink)?;
        self.string.dest =
            Dest::Sink { index, decoder: self.string.base64.then(Base64::default), len: 0 };
        // The shadow decoder accepted these bytes, so decoding them cannot fail.
        let buf = mem::take(&mut self.buf);
        let sent = self.spill_bytes(&buf, off, false, sink);
        self.buf = buf;
        self.buf.clear();
        sent
    }

    /// Bytes of the string being spilled, decoded if it is base64. `exact` as for `buffer`.
    fn spill_bytes<S: SpillSink>(
        &mut self,
        bytes: &[u8],
        off: u64,
        exact: bool,
        sink: &mut S,
    ) -> Result<(), FeedError<S::Error>> {
        let Dest::Sink { index, decoder, len } = &mut self.string.dest else {
            return Err(syntax(off, "internal: not spilling").into());
        };
        let index = *index;
        match decoder {
            None => {
                *len += bytes.len() as u64;
                if bytes.len() >= DIRECT_WRITE {
                    flush(&mut self.staging, index, sink)?;
                    sink.write(index, bytes).map_err(FeedError::Sink)?;
                } else {
                    if let &[b] = bytes {
                        self.staging.push(b);
                    } else {
                        self.staging.extend_from_slice(bytes);
                    }
                    if self.staging.len() >= STAGING {
                        flush(&mut self.staging, index, sink)?;
                    }
                }
            }
            Some(decoder) => {
                for (n, slice) in bytes.chunks(BASE64_SLICE).enumerate() {
                    let before = self.staging.len();
                    decoder.push::<true>(slice, &mut self.staging).map_err(|k| {
                        let offset = if exact { off + (n * BASE64_SLICE + k) as u64 } else { off };
                        ScanError::InvalidBase64 { offset }
                    })?;
                    *len += (self.staging.len() - before) as u64;
                    if self.staging.len() >= STAGING {
                        flush(&mut self.staging, index, sink)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The closing quote at `quote_off`.
    fn end_string<S: SpillSink>(
        &mut self,
        quote_off: u64,
        sink: &mut S,
    ) -> Result<(), FeedError<S::Error>> {
        match &mut self.string.dest {
            Dest::Skeleton => self.skeleton.push(b'"'),
            Dest::Buffer => {
                self.skeleton.push(b'"');
                if self.string.had_escape {
                    push_escaped(&mut self.skeleton, &self.buf);
                } else {
                    self.skeleton.extend_from_slice(&self.buf);
                }
                self.skeleton.push(b'"');
            }
            Dest::Sink { index, decoder, len } => {
                if let Some(d) = decoder {
                    d.finish().map_err(|()| ScanError::InvalidBase64 { offset: quote_off })?;
                }
                let (index, len) = (*index, *len);
                flush(&mut self.staging, index, sink)?;
                sink.end(index, len).map_err(FeedError::Sink)?;
                self.spills[index].len = len;
            }
        }
        if self.string.key {
            self.key_done();
        } else {
            self.value_done();
        }
        self.buf.clear();
        Ok(())
    }
}

/// Where the next `"` or `\\` is. Escape-dense text has short runs, for which a look at the next
/// few words (SWAR, no per-byte branches) beats setting up `memchr2`; long runs go to `memchr2`.
#[inline]
fn find_quote_or_backslash(rest: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut at = 0;
    while at < 32 {
        let Some(Ok(word)) = rest.get(at..at + 8).map(<[u8; 8]>::try_from) else { break };
        let w = u64::from_le_bytes(word);
        let (q, b) = (w ^ (LO * u64::from(b'"')), w ^ (LO * u64::from(b'\\')));
        // The lowest byte flagged by the zero-byte test is exact (only higher ones may be false).
        let hits = (q.wrapping_sub(LO) & !q | b.wrapping_sub(LO) & !b) & HI;
        if hits != 0 {
            return Some(at + (hits.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    memchr::memchr2(b'"', b'\\', &rest[at..]).map(|k| k + at)
}

/// Text of a spill to staging, or straight to the sink if long. `run` is a prefix of `within`:
/// short runs are copied as a fixed 16 bytes of `within` (when it has them) and cut back, a
/// constant-size move instead of a `memcpy` call.
#[inline(always)]
fn spill_run<S: SpillSink>(
    run: &[u8],
    within: &[u8],
    index: usize,
    len: &mut u64,
    staging: &mut Vec<u8>,
    sink: &mut S,
) -> Result<(), FeedError<S::Error>> {
    const SHORT: usize = 16;
    *len += run.len() as u64;
    if run.len() >= DIRECT_WRITE {
        flush(staging, index, sink)?;
        return sink.write(index, run).map_err(FeedError::Sink);
    }
    match within.get(..SHORT) {
        Some(wide) if run.len() <= SHORT => {
            let end = staging.len() + run.len();
            staging.extend_from_slice(wide);
            staging.truncate(end);
        }
        _ => staging.extend_from_slice(run),
    }
    if staging.len() >= STAGING { flush(staging, index, sink) } else { Ok(()) }
}
