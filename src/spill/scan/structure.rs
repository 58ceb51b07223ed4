//! Everything outside strings: the grammar's structure, numbers and literals are dispatched
//! from here, and the top-level members (`id`, `result`, `error`) and the path inside `result`
//! are tracked.

use std::mem;

use super::number::Number;
use super::{
    Dest, Frame, MAX_DEPTH, PathSegment, ScanError, SpillScanner, State, Str, TopKey, syntax,
};

impl SpillScanner {
    /// One byte outside strings, numbers and literals.
    pub(super) fn structural(&mut self, b: u8, off: u64) -> Result<(), ScanError> {
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            return Ok(());
        }
        match self.state {
            State::Start => match b {
                b'{' => self.open(b, off),
                b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n' => {
                    Err(ScanError::NotAnObject { offset: off })
                }
                _ => Err(syntax(off, "expected '{' to start the message")),
            },
            State::KeyOrEnd if b == b'}' => self.close(b, off),
            State::KeyOrEnd | State::Key if b == b'"' => {
                self.start_key();
                Ok(())
            }
            State::KeyOrEnd => Err(syntax(off, "expected a member name or '}'")),
            State::Key => Err(syntax(off, "expected a member name")),
            State::Colon if b == b':' => {
                self.skeleton.push(b);
                self.state = State::Value;
                Ok(())
            }
            State::Colon => Err(syntax(off, "expected ':'")),
            State::ValueOrEnd if b == b']' => self.close(b, off),
            State::Value | State::ValueOrEnd => self.start_value(b, off),
            State::CommaOrEnd => match b {
                b',' => {
                    self.skeleton.push(b);
                    let frame =
                        self.stack.last().copied().ok_or(syntax(off, "internal: no container"))?;
                    self.state = if frame.array { State::Value } else { State::Key };
                    if frame.array
                        && frame.in_path
                        && let Some(PathSegment::Index(n)) = self.path.last_mut()
                    {
                        *n += 1;
                    }
                    Ok(())
                }
                b'}' | b']' => self.close(b, off),
                _ => Err(syntax(off, "expected ',' or a closing bracket")),
            },
            State::Trailing => Err(syntax(off, "trailing characters after the message")),
            State::Str | State::Number | State::Literal(_) => {
                Err(syntax(off, "internal: not structure"))
            }
        }
    }

    fn start_value(&mut self, b: u8, off: u64) -> Result<(), ScanError> {
        let base64 = mem::take(&mut self.pending_base64);
        if self.stack.len() == 1 {
            match self.top_key {
                TopKey::Id => self.id_start = Some(self.skeleton.len()),
                TopKey::Result => {
                    self.in_result = true;
                    self.has_result = true;
                }
                TopKey::Error => self.is_error = true,
                TopKey::Other => {}
            }
        }
        match b {
            b'{' | b'[' => self.open(b, off)?,
            b'"' => {
                self.string = if self.in_result {
                    Str::new(Dest::Buffer, false, base64)
                } else {
                    self.skeleton.push(b'"');
                    Str::new(Dest::Skeleton, false, false)
                };
                self.state = State::Str;
            }
            b'-' | b'0'..=b'9' => {
                self.number = Number::start(b);
                self.number_offset = off;
                self.skeleton.push(b);
                self.state = State::Number;
            }
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => return Err(syntax(off, "expected a value")),
        }
        Ok(())
    }

    fn literal(&mut self, word: &'static [u8]) {
        self.skeleton.push(word[0]);
        self.state = State::Literal(&word[1..]);
    }

    fn open(&mut self, b: u8, off: u64) -> Result<(), ScanError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(ScanError::TooDeep { offset: off });
        }
        let array = b == b'[';
        let in_path = self.in_result;
        if in_path {
            self.path.push(if array {
                PathSegment::Index(0)
            } else {
                PathSegment::Key(String::new())
            });
        }
        self.stack.push(Frame { array, in_path });
        self.skeleton.push(b);
        self.state = if array { State::ValueOrEnd } else { State::KeyOrEnd };
        Ok(())
    }

    fn close(&mut self, b: u8, off: u64) -> Result<(), ScanError> {
        let frame = self.stack.pop().ok_or(syntax(off, "internal: no container"))?;
        if frame.array != (b == b']') {
            return Err(syntax(off, "mismatched closing bracket"));
        }
        if frame.in_path {
            self.path.pop();
        }
        self.skeleton.push(b);
        self.value_done();
        Ok(())
    }

    /// A value (scalar or container) just ended.
    pub(super) fn value_done(&mut self) {
        match self.stack.len() {
            0 => {
                self.state = State::Trailing;
                return;
            }
            1 => {
                if let Some(start) = self.id_start.take() {
                    self.id = Some(self.skeleton[start..].to_vec());
                }
                self.in_result = false;
            }
            _ => {}
        }
        self.state = State::CommaOrEnd;
    }

    fn start_key(&mut self) {
        let need_text = self.stack.len() == 1 || self.stack.last().is_some_and(|f| f.in_path);
        self.string = if need_text {
            Str::new(Dest::Buffer, true, false)
        } else {
            self.skeleton.push(b'"');
            Str::new(Dest::Skeleton, true, false)
        };
        self.state = State::Str;
    }

    /// A member name just ended; its text is in `buf` if it was needed.
    pub(super) fn key_done(&mut self) {
        let text_kept = matches!(self.string.dest, Dest::Buffer);
        self.pending_base64 = false;
        if text_kept {
            let name = self.buf.as_slice();
            if self.stack.len() == 1 {
                self.top_key = match name {
                    b"id" => TopKey::Id,
                    b"result" => TopKey::Result,
                    b"error" => TopKey::Error,
                    _ => TopKey::Other,
                };
            }
            if self.stack.last().is_some_and(|f| f.in_path) {
                self.pending_base64 = name == b"data" || name == b"blob";
                if let Some(PathSegment::Key(k)) = self.path.last_mut() {
                    k.clear();
                    // `buf` holds validated UTF-8 (raw runs are checked, escapes decode to chars).
                    k.push_str(&String::from_utf8_lossy(name));
                }
            }
        }
        self.state = State::Colon;
    }
}
