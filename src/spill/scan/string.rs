//! The byte-level pieces of JSON string bodies: escape sequences ([RFC 8259 §7]), streaming UTF-8
//! validation of raw runs, and re-escaping of kept strings. Pure functions of their input; the
//! scanner decides where bytes go.
//!
//! [RFC 8259 §7]: https://www.rfc-editor.org/rfc/rfc8259#section-7

/// Error reason for malformed UTF-8 in a string.
const INVALID_UTF8: &str = "invalid UTF-8 in a string";

/// An escape sequence in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum Escape {
    /// Not in an escape.
    #[default]
    None,
    /// After `\`.
    Backslash,
    /// Inside `\uhhhh`: `high` is a preceding high surrogate (0 if none), `digits` the hex digits
    /// read, `value` their value so far.
    Hex { high: u16, digits: u8, value: u16 },
    /// After a high surrogate's `\uhhhh`: its low surrogate's `\` must follow.
    LowBackslash { high: u16 },
    /// After a high surrogate and `\`: `u` must follow.
    LowU { high: u16 },
}

/// Why an escape is malformed, and whether the error is reported at the escape's start (`\`)
/// rather than at the byte just fed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct EscapeError {
    pub(super) reason: &'static str,
    pub(super) at_start: bool,
}

/// A decoded character: its UTF-8 bytes and their count.
pub(super) type Decoded = ([u8; 4], usize);

impl Escape {
    /// Feeds the byte after a `\` or inside an escape; returns the character once complete.
    /// Follows serde_json's `parse_unicode_escape` with validation on: surrogates must pair.
    ///
    /// # Errors
    /// A malformed escape or an unpaired surrogate.
    pub(super) fn push(&mut self, b: u8) -> Result<Option<Decoded>, EscapeError> {
        let here = |reason| EscapeError { reason, at_start: false };
        let start = |reason| EscapeError { reason, at_start: true };
        match *self {
            Escape::None => Err(here("internal: not in an escape")),
            Escape::Backslash => {
                let c = match b {
                    b'"' | b'\\' | b'/' => b,
                    b'b' => 0x08,
                    b'f' => 0x0C,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    b'u' => {
                        *self = Escape::Hex { high: 0, digits: 0, value: 0 };
                        return Ok(None);
                    }
                    _ => return Err(here("invalid escape")),
                };
                *self = Escape::None;
                Ok(Some(([c, 0, 0, 0], 1)))
            }
            Escape::Hex { high, digits, value } => {
                let d = match b {
                    b'0'..=b'9' => b - b'0',
                    b'a'..=b'f' => b - b'a' + 10,
                    b'A'..=b'F' => b - b'A' + 10,
                    _ => return Err(here("expected a hex digit in a \\u escape")),
                };
                let value = value << 4 | u16::from(d);
                if digits < 3 {
                    *self = Escape::Hex { high, digits: digits + 1, value };
                    return Ok(None);
                }
                let code = match (high, value) {
                    (0, 0xD800..=0xDBFF) => {
                        *self = Escape::LowBackslash { high: value };
                        return Ok(None);
                    }
                    (0, 0xDC00..=0xDFFF) => {
                        return Err(start("lone low surrogate in a \\u escape"));
                    }
                    (0, v) => u32::from(v),
                    (h, 0xDC00..=0xDFFF) => {
                        0x1_0000 + ((u32::from(h) - 0xD800) << 10 | (u32::from(value) - 0xDC00))
                    }
                    _ => return Err(start("high surrogate not followed by a low surrogate")),
                };
                *self = Escape::None;
                let Some(c) = char::from_u32(code) else {
                    return Err(start("internal: invalid code point"));
                };
                let mut out = [0; 4];
                let n = c.encode_utf8(&mut out).len();
                Ok(Some((out, n)))
            }
            Escape::LowBackslash { high } if b == b'\\' => {
                *self = Escape::LowU { high };
                Ok(None)
            }
            Escape::LowU { high } if b == b'u' => {
                *self = Escape::Hex { high, digits: 0, value: 0 };
                Ok(None)
            }
            Escape::LowBackslash { .. } | Escape::LowU { .. } => {
                Err(start("high surrogate not followed by a low surrogate"))
            }
        }
    }
}

/// The byte each one-character escape stands for (`\\n` → newline), 0 for the others.
const SHORT: [u8; 256] = {
    let mut t = [0; 256];
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t[b'/' as usize] = b'/';
    t[b'b' as usize] = 0x08;
    t[b'f' as usize] = 0x0C;
    t[b'n' as usize] = b'\n';
    t[b'r' as usize] = b'\r';
    t[b't' as usize] = b'\t';
    t
};

/// Hex digit values, 0xFF for other bytes.
const HEX: [u8; 256] = {
    let mut t = [0xFF; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// Decodes a complete, common escape at the start of `s` (which starts with `\\`) in one go:
/// the short escapes and a `\\uhhhh` outside the surrogate range. Returns the character and the
/// escape's length, or `None` for anything else (cut off, surrogate, malformed), which then goes
/// through [`Escape`] byte by byte.
#[inline]
pub(super) fn quick_escape(s: &[u8]) -> Option<(Decoded, usize)> {
    let e = *s.get(1)?;
    let short = SHORT[usize::from(e)];
    if short != 0 {
        return Some((([short, 0, 0, 0], 1), 2));
    }
    if e != b'u' {
        return None;
    }
    let &[a, b, c, d] = s.get(2..6)? else { return None };
    let [a, b, c, d] = [a, b, c, d].map(|h| HEX[usize::from(h)]);
    if (a | b | c | d) & 0xF0 != 0 {
        return None;
    }
    let v = u16::from(a) << 12 | u16::from(b) << 8 | u16::from(c) << 4 | u16::from(d);
    let out = match v {
        0..0x80 => ([v as u8, 0, 0, 0], 1),
        0x80..0x800 => ([0xC0 | (v >> 6) as u8, 0x80 | (v & 0x3F) as u8, 0, 0], 2),
        0xD800..=0xDFFF => return None,
        _ => {
            let bytes =
                [0xE0 | (v >> 12) as u8, 0x80 | (v >> 6 & 0x3F) as u8, 0x80 | (v & 0x3F) as u8];
            ([bytes[0], bytes[1], bytes[2], 0], 3)
        }
    };
    Some((out, 6))
}

/// The start of a UTF-8 character cut off at the end of a chunk.
#[derive(Debug, Clone, Default)]
pub(super) struct Utf8Carry {
    bytes: [u8; 4],
    len: u8,
    /// Stream offset of the character's first byte.
    offset: u64,
}

impl Utf8Carry {
    /// Bytes held, for memory accounting.
    pub(super) fn held(&self) -> usize {
        usize::from(self.len)
    }

    /// Checks a run of raw string bytes starting at stream offset `off`: no control characters,
    /// valid UTF-8 (continuing a character cut off by the previous run). `terminated` says the
    /// run is followed by a quote or a backslash, so it cannot end inside a character.
    ///
    /// # Errors
    /// The offset of the first bad byte (for UTF-8, of the bad sequence's first byte) and why.
    pub(super) fn check(
        &mut self,
        run: &[u8],
        off: u64,
        terminated: bool,
    ) -> Result<(), (u64, &'static str)> {
        let mut rest = run;
        let mut rest_off = off;
        if self.len > 0 {
            while let [b, tail @ ..] = rest {
                self.bytes[usize::from(self.len)] = *b;
                self.len += 1;
                rest = tail;
                rest_off += 1;
                match std::str::from_utf8(&self.bytes[..usize::from(self.len)]) {
                    Ok(_) => {
                        self.len = 0;
                        break;
                    }
                    Err(e) if e.error_len().is_some() => return Err((self.offset, INVALID_UTF8)),
                    Err(_) => {}
                }
            }
            if self.len > 0 {
                // Still incomplete, so `rest` is empty.
                return if terminated { Err((self.offset, INVALID_UTF8)) } else { Ok(()) };
            }
        }
        let control = first_control(rest).map(|p| (p, "control character in a string"));
        let utf8 = match std::str::from_utf8(rest) {
            Ok(_) => None,
            Err(e) if e.error_len().is_some() || terminated => {
                Some((e.valid_up_to(), INVALID_UTF8))
            }
            Err(e) => {
                let tail = &rest[e.valid_up_to()..];
                self.bytes[..tail.len()].copy_from_slice(tail);
                self.len = tail.len() as u8; // at most 3: an incomplete character
                self.offset = rest_off + e.valid_up_to() as u64;
                None
            }
        };
        match (control, utf8) {
            (Some(a), Some(b)) => Err(a.min(b)),
            (Some(e), None) | (None, Some(e)) => Err(e),
            (None, None) => Ok(()),
        }
        .map_err(|(p, reason)| (rest_off + p as u64, reason))
    }
}

/// Position of the first byte below 0x20 (which JSON forbids raw inside strings).
fn first_control(run: &[u8]) -> Option<usize> {
    // A branch-free OR per block lets the compiler vectorize; the position is found only on a hit.
    const BLOCK: usize = 64;
    let mut blocks = run.chunks_exact(BLOCK);
    for (n, block) in (&mut blocks).enumerate() {
        if block.iter().fold(0u8, |acc, &b| acc | u8::from(b < 0x20)) != 0 {
            return block.iter().position(|&b| b < 0x20).map(|p| n * BLOCK + p);
        }
    }
    let tail = blocks.remainder();
    tail.iter().position(|&b| b < 0x20).map(|p| run.len() - tail.len() + p)
}

/// Appends `text` (valid UTF-8) to `out` as the body of a JSON string, escaping what must be.
pub(super) fn push_escaped(out: &mut Vec<u8>, text: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut plain = 0;
    for (i, &b) in text.iter().enumerate() {
        let short = match b {
            b'"' => b'"',
            b'\\' => b'\\',
            b'\n' => b'n',
            b'\r' => b'r',
            b'\t' => b't',
            0x08 => b'b',
            0x0C => b'f',
            0..0x20 => 0,
            _ => continue,
        };
        out.extend_from_slice(&text[plain..i]);
        plain = i + 1;
        if short == 0 {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xF)],
            ]);
        } else {
            out.extend_from_slice(&[b'\\', short]);
        }
    }
    out.extend_from_slice(&text[plain..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unescape(seq: &[u8]) -> Result<String, EscapeError> {
        let mut e = Escape::Backslash;
        let mut out = String::new();
        for &b in &seq[1..] {
            if let Some((bytes, n)) = e.push(b)? {
                out.push_str(std::str::from_utf8(&bytes[..n]).expect("utf-8"));
            }
        }
        assert_eq!(e, Escape::None, "{seq:?} incomplete");
        Ok(out)
    }

    #[test]
    fn escapes_decode() {
        assert_eq!(unescape(br"\n").as_deref(), Ok("\n"));
        assert_eq!(unescape(br"\/").as_deref(), Ok("/"));
        assert_eq!(unescape(br"\u00e9").as_deref(), Ok("é"));
        assert_eq!(unescape(br"\u0000").as_deref(), Ok("\0"));
        assert_eq!(unescape(br"\uD83D\uDE00").as_deref(), Ok("😀"));
        assert_eq!(unescape(br"\uffff").as_deref(), Ok("\u{ffff}"));
        assert!(unescape(br"\x").is_err_and(|e| !e.at_start));
        assert!(unescape(br"\u12g4").is_err_and(|e| !e.at_start));
        assert!(unescape(br"\uDE00").is_err_and(|e| e.at_start));
        assert!(unescape(br"\uD83Dx").is_err_and(|e| e.at_start));
        assert!(unescape(br"\uD83D\n").is_err_and(|e| e.at_start));
        assert!(unescape(br"\uD83D\u0041").is_err_and(|e| e.at_start));
    }

    #[test]
    fn quick_escapes_agree_with_the_slow_path() {
        for seq in [&br"\n"[..], br"\/", br"\u00e9", br"\u0000", br"\uffff", br"\u12aB", br"\b"] {
            let ((bytes, n), used) = quick_escape(seq).expect("quick");
            assert_eq!(used, seq.len());
            assert_eq!(std::str::from_utf8(&bytes[..n]).ok(), unescape(seq).ok().as_deref());
        }
        for v in (0..=0xFFFFu32).step_by(7).chain([0x7F, 0x80, 0x7FF, 0x800, 0xFFFF]) {
            let seq = format!("\\u{v:04x}");
            let quick = quick_escape(seq.as_bytes()).map(|((b, n), _)| b[..n].to_vec());
            if (0xD800..=0xDFFF).contains(&v) {
                assert_eq!(quick, None, "{seq}: surrogates take the slow path");
            } else {
                assert_eq!(quick, unescape(seq.as_bytes()).ok().map(String::into_bytes), "{seq}");
            }
        }
        for seq in [&br"\u"[..], br"\u00e", br"\uD83D\uDE00", br"\uDE00", br"\x", br"\u+123", br"\"]
        {
            assert_eq!(quick_escape(seq), None, "{seq:?}");
        }
    }

    #[test]
    fn utf8_carries_across_runs() {
        let text = "aé中😀".as_bytes();
        for cut in 0..=text.len() {
            let mut c = Utf8Carry::default();
            c.check(&text[..cut], 0, false).expect("prefix");
            c.check(&text[cut..], cut as u64, true).expect("rest");
        }
        // Invalid sequences are reported at their first byte, even across runs.
        let mut c = Utf8Carry::default();
        c.check(b"ab\xE2\x82", 10, false).expect("incomplete so far");
        assert_eq!(c.check(b"A", 14, true), Err((12, INVALID_UTF8)));
        let mut c = Utf8Carry::default();
        assert_eq!(c.check(b"ab\xE2", 0, true), Err((2, INVALID_UTF8)));
        let mut c = Utf8Carry::default();
        assert_eq!(c.check(b"\xE0\x80", 0, false), Err((0, INVALID_UTF8)), "overlong");
        let mut c = Utf8Carry::default();
        assert_eq!(c.check(b"ab\tc\xff", 0, false), Err((2, "control character in a string")));
        let long = [b"x".repeat(200), b"\x1f".to_vec()].concat();
        assert_eq!(c.check(&long, 5, false), Err((205, "control character in a string")));
    }

    #[test]
    fn re_escaping_round_trips() {
        let text = "a\"b\\c\n\u{1}\u{1f}é/\u{7f}";
        let mut out = b"\"".to_vec();
        push_escaped(&mut out, text.as_bytes());
        out.push(b'"');
        assert_eq!(serde_json::from_slice::<String>(&out).expect("json"), text);
    }
}
