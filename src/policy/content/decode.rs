//! What a person would not see in a text: invisible characters (and the ASCII that Unicode
//! tag characters spell), HTML comments, and runs of base64, hex, percent- or entity-encoded
//! text, decoded so that the judge reads them too.

use std::ops::Range;

use super::{Mode, words};

/// What is invisible in a text.
#[derive(Debug, Default)]
pub(crate) struct Hidden {
    /// The text with invisible characters taken out (`None`: there were none).
    pub(crate) visible: Option<String>,
    /// Why the invisible characters are a finding of their own, if they are.
    pub(crate) invisible: Option<String>,
    /// The ASCII that tag characters (U+E0020..U+E007E) spell, if any.
    pub(crate) tags: Option<String>,
}

/// Zero-width, bidirectional-control and tag characters, and the byte-order mark.
pub(crate) fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}' | '\u{FEFF}' | '\u{E0000}'..='\u{E007F}' | '\u{00AD}')
}

fn is_emoji(c: char) -> bool {
    matches!(c as u32, 0x2600..=0x27BF | 0x1F000..=0x1FAFF | 0xFE0F)
}

pub(crate) fn hidden(text: &str) -> Hidden {
    if text.is_ascii() {
        return Hidden::default();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = Hidden::default();
    let mut visible = String::with_capacity(text.len());
    let mut tags = String::new();
    let mut counted = 0;
    for (i, &c) in chars.iter().enumerate() {
        if !is_invisible(c) {
            visible.push(c);
            continue;
        }
        // A zero-width joiner inside an emoji sequence (👨‍💻), and a soft hyphen, are how
        // text is written, not hidden.
        let between_emoji = c == '\u{200D}'
            && i > 0
            && chars.get(i + 1).is_some_and(|&n| is_emoji(n))
            && is_emoji(chars[i - 1]);
        if between_emoji || c == '\u{00AD}' {
            visible.push(c);
            continue;
        }
        if ('\u{E0020}'..='\u{E007E}').contains(&c) {
            tags.push(char::from((c as u32 - 0xE0000) as u8));
        }
        counted += 1;
    }
    if counted == 0 {
        return out;
    }
    out.invisible = Some(format!(
        "{counted} invisible character(s) (zero-width, bidirectional or tag: text a person does not see)"
    ));
    out.visible = Some(visible);
    if !tags.trim().is_empty() {
        out.tags = Some(tags);
    }
    out
}

/// Whether the letters of `s` are mostly Latin (ASCII or Latin-1/Extended).
pub(crate) fn mostly_latin(s: &str) -> bool {
    let (mut latin, mut other) = (0usize, 0usize);
    for c in s.chars().filter(|c| c.is_alphabetic()) {
        if (c as u32) < 0x250 {
            latin += 1;
        } else {
            other += 1;
        }
    }
    other * 2 <= latin + other
}

/// Whether `s` reads as words: mostly letters and spaces, with several words.
pub(crate) fn natural_language(s: &str) -> bool {
    let words = s
        .split_whitespace()
        .filter(|w| w.chars().filter(|c| c.is_alphabetic()).count() >= 2)
        .count();
    let letters = s.chars().filter(|c| c.is_alphabetic() || c.is_whitespace()).count();
    words >= 4 && letters * 10 >= s.chars().count() * 8
}

/// One run of hidden or encoded text, decoded.
pub(crate) struct Decoded {
    pub(crate) text: String,
    pub(crate) kind: &'static str,
    pub(crate) span: Range<usize>,
}

/// The encoded runs and comments of `text`, decoded; only those that decode to text.
pub(crate) fn encoded(text: &str, _mode: Mode) -> Vec<Decoded> {
    let mut out = Vec::new();
    // HTML comments (a rendered page or description does not show them).
    let mut from = 0;
    while let Some(i) = text[from..].find("<!--") {
        let start = from + i;
        let close = text[start + 4..].find("-->").map(|j| start + 4 + j);
        let end = close.map_or(text.len(), |c| c + 3);
        let inner = &text[start + 4..close.unwrap_or(text.len())];
        if !inner.trim().is_empty() {
            out.push(Decoded { text: inner.to_owned(), kind: "an HTML comment", span: start..end });
        }
        from = end;
        if out.len() >= 16 {
            break;
        }
    }
    // Base64 and hex runs.
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() && out.len() < 32 {
        let is_b64 =
            |b: u8| b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'-' || b == b'_';
        if !is_b64(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        i = words::run_end(bytes, i, is_b64);
        let mut end = i;
        while end < bytes.len() && bytes[end] == b'=' && end - i < 2 {
            end += 1;
        }
        let run = &text[start..end];
        // Hidden orders are sentences, not megabytes: longer runs are data (an image, a blob).
        if run.len() < 20 || run.len() > 4096 {
            continue;
        }
        let hex = run.len().is_multiple_of(2) && run.bytes().all(|b| b.is_ascii_hexdigit());
        let decoded = if hex {
            decode_hex(run).map(|t| (t, "hex"))
        } else {
            decode_b64(run).map(|t| (t, "base64"))
        };
        if let Some((t, kind)) = decoded.filter(|(t, _)| printable(t)) {
            out.push(Decoded { text: t, kind, span: start..end });
        }
    }
    // Percent- and entity-encoded text.
    if memchr::memchr_iter(b'%', text.as_bytes()).nth(3).is_some() {
        let d = percent_encoding::percent_decode_str(text).decode_utf8_lossy();
        if d != text && printable(&d) {
            out.push(Decoded {
                text: d.into_owned(),
                kind: "percent-encoding",
                span: 0..text.len(),
            });
        }
    }
    if memchr::memmem::find_iter(text.as_bytes(), b"&#").nth(2).is_some() {
        let d = decode_entities(text);
        if d != text {
            out.push(Decoded { text: d, kind: "HTML entities", span: 0..text.len() });
        }
    }
    out
}

fn printable(t: &str) -> bool {
    let n = t.chars().count();
    n >= 8
        && t.chars().filter(|c| !c.is_control() || c.is_whitespace()).count() * 20 >= n * 19
        && t.chars().filter(|c| c.is_alphabetic()).count() * 2 >= n
}

fn decode_hex(s: &str) -> Option<String> {
    let bytes: Option<Vec<u8>> =
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok()).collect();
    String::from_utf8(bytes?).ok()
}

fn decode_b64(s: &str) -> Option<String> {
    use base64::Engine;
    let trimmed = s.trim_end_matches('=');
    let engines = [
        base64::engine::general_purpose::STANDARD_NO_PAD,
        base64::engine::general_purpose::URL_SAFE_NO_PAD,
    ];
    for e in engines {
        if let Ok(bytes) = e.decode(trimmed)
            && let Ok(t) = String::from_utf8(bytes)
        {
            return Some(t);
        }
    }
    None
}

fn decode_entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("&#") {
        out.push_str(&rest[..i]);
        let tail = &rest[i + 2..];
        let (hex, digits) = match tail.strip_prefix(['x', 'X']) {
            Some(t) => (true, t),
            None => (false, tail),
        };
        let len = digits.find(';').filter(|&l| l > 0 && l <= 8);
        let value =
            len.and_then(|l| u32::from_str_radix(&digits[..l], if hex { 16 } else { 10 }).ok());
        match (len, value.and_then(char::from_u32)) {
            (Some(l), Some(c)) => {
                out.push(c);
                rest = &digits[l + 1..];
            }
            _ => {
                out.push_str("&#");
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}
