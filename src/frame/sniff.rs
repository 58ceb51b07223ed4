//! A streaming scan for the top-level `"id"` of a JSON object, fed in arbitrary pieces.
//!
//! Used on lines too large to buffer: the framer discards their bytes but still needs to know
//! which request they answered. The scan tracks nesting depth and string state only; it is not a
//! validator (a malformed line simply yields no id or a garbage token that the caller then fails
//! to parse). Inside strings it jumps from quote to backslash with `memchr2`, so its cost on
//! typical payloads (long text values) is close to a memory scan.

/// Longest id token kept; longer ids are not ours (we send small integers).
const MAX_ID_TOKEN: usize = 128;

/// Scanner state for [`IdSniffer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Before the first non-whitespace byte.
    Start,
    /// Outside strings, inside the document.
    Structure,
    /// Inside a string; `key` is true when it is a member name of the top-level object.
    Str { key: bool, escape: bool },
    /// After the top-level `"id"` key and its colon, skipping whitespace before the value.
    BeforeIdValue,
    /// Capturing the id value's token.
    IdValue { quoted: bool, escape: bool },
    /// Finished (found the id, or the document is not an object).
    Done,
}

/// Finds the raw token of a JSON object's top-level `"id"` member across fed chunks.
#[derive(Debug, Clone)]
pub struct IdSniffer {
    mode: Mode,
    depth: u32,
    /// At depth 1, the next string is a member name.
    expect_key: bool,
    /// The current top-level key, while short enough to still be `id`.
    key: [u8; 2],
    key_len: usize,
    /// The key that just ended was `id`.
    key_is_id: bool,
    token: Vec<u8>,
    found: bool,
}

impl Default for IdSniffer {
    fn default() -> Self {
        Self::new()
    }
}

impl IdSniffer {
    /// A sniffer at the start of a document.
    pub fn new() -> Self {
        IdSniffer {
            mode: Mode::Start,
            depth: 0,
            expect_key: false,
            key: [0; 2],
            key_len: 0,
            key_is_id: false,
            token: Vec::new(),
            found: false,
        }
    }

    /// The id token, once found (e.g. `b"7"` or `b"\"abc\""`).
    pub fn id(&self) -> Option<&[u8]> {
        self.found.then_some(self.token.as_slice())
    }

    /// Feeds the next piece of the document.
    pub fn feed(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            match self.mode {
                Mode::Done => return,
                Mode::Str { key: false, escape: false } => {
                    // Fast path through string bodies.
                    match memchr::memchr2(b'"', b'\\', data) {
                        None => return,
                        Some(i) => {
                            self.mode = if data[i] == b'"' {
                                Mode::Structure
                            } else {
                                Mode::Str { key: false, escape: true }
                            };
                            data = &data[i + 1..];
                        }
                    }
                }
                _ => {
                    self.step(data[0]);
                    data = &data[1..];
                }
            }
        }
    }

    fn step(&mut self, b: u8) {
        match self.mode {
            Mode::Done => {}
            Mode::Start => match b {
                b' ' | b'\t' | b'\r' | b'\n' => {}
                b'{' => {
                    self.depth = 1;
                    self.expect_key = true;
                    self.mode = Mode::Structure;
                }
                _ => self.mode = Mode::Done,
            },
            Mode::Str { key, escape } => {
                if escape {
                    self.mode = Mode::Str { key, escape: false };
                    if key {
                        self.key_len = usize::MAX; // an escaped key is never the plain `id`
                    }
                } else if b == b'\\' {
                    self.mode = Mode::Str { key, escape: true };
                } else if b == b'"' {
                    self.mode = Mode::Structure;
                    if key {
                        self.key_is_id = self.key_len == 2 && self.key == *b"id";
                    }
                } else if key {
                    if self.key_len < 2 {
                        self.key[self.key_len] = b;
                    }
                    self.key_len = self.key_len.saturating_add(1);
                }
            }
            Mode::Structure => match b {
                b'"' => {
                    let key = self.depth == 1 && self.expect_key;
                    if key {
                        self.expect_key = false;
                        self.key_len = 0;
                    }
                    self.mode = Mode::Str { key, escape: false };
                }
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        self.mode = Mode::Done;
                    }
                }
                b',' if self.depth == 1 => {
                    self.expect_key = true;
                    self.key_is_id = false;
                }
                b':' if self.depth == 1 && self.key_is_id => {
                    self.key_is_id = false;
                    self.token.clear();
                    self.mode = Mode::BeforeIdValue;
                }
                _ => {}
            },
            Mode::BeforeIdValue => match b {
                b' ' | b'\t' | b'\r' | b'\n' => {}
                _ => {
                    self.token.push(b);
                    if b == b'"' {
                        self.mode = Mode::IdValue { quoted: true, escape: false };
                    } else if b == b'{' || b == b'[' {
                        // Not a valid id; give up rather than track a nested value.
                        self.mode = Mode::Done;
                    } else {
                        self.mode = Mode::IdValue { quoted: false, escape: false };
                    }
                }
            },
            Mode::IdValue { quoted, escape } => {
                if self.token.len() >= MAX_ID_TOKEN {
                    self.mode = Mode::Done;
                    return;
                }
                if quoted {
                    self.token.push(b);
                    if escape {
                        self.mode = Mode::IdValue { quoted, escape: false };
                    } else if b == b'\\' {
                        self.mode = Mode::IdValue { quoted, escape: true };
                    } else if b == b'"' {
                        self.found = true;
                        self.mode = Mode::Done;
                    }
                } else if matches!(b, b',' | b'}' | b' ' | b'\t' | b'\r' | b'\n') {
                    self.found = true;
                    self.mode = Mode::Done;
                } else {
                    self.token.push(b);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sniff(doc: &str) -> Option<String> {
        let mut whole = IdSniffer::new();
        whole.feed(doc.as_bytes());
        let expected = whole.id().map(|t| String::from_utf8_lossy(t).into_owned());
        // Byte-at-a-time must agree with all-at-once.
        let mut single = IdSniffer::new();
        for b in doc.as_bytes() {
            single.feed(std::slice::from_ref(b));
        }
        assert_eq!(single.id().map(|t| String::from_utf8_lossy(t).into_owned()), expected);
        expected
    }

    #[test]
    fn finds_top_level_id_anywhere() {
        assert_eq!(sniff(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#).as_deref(), Some("7"));
        assert_eq!(
            sniff(r#"{"result":{"id":1,"x":"\"id\":9"},"id":"a\"b"}"#).as_deref(),
            Some(r#""a\"b""#)
        );
        assert_eq!(sniff(r#" { "id" : -3 }"#).as_deref(), Some("-3"));
        assert_eq!(sniff(r#"{"id":null}"#).as_deref(), Some("null"));
    }

    #[test]
    fn ignores_nested_and_lookalike_keys() {
        assert_eq!(sniff(r#"{"result":{"id":1}}"#), None);
        assert_eq!(sniff(r#"{"i\u0064":1}"#), None);
        assert_eq!(sniff(r#"{"idx":1,"xid":2}"#), None);
        assert_eq!(sniff(r#"[{"id":1}]"#), None);
        assert_eq!(sniff(r#"{"a":["id",{"id":3}],"b":"id"}"#), None);
        assert_eq!(sniff(r#"{"id":{"x":1}}"#), None);
    }
}
