//! A streaming, strict decoder for standard base64 ([RFC 4648 §4]): the alphabet `A–Z a–z 0–9 + /`,
//! `=` padding required, no whitespace, and the unused bits of a padded group must be zero (so
//! every accepted text is the canonical encoding of its bytes, and re-encoding gives it back).
//!
//! Input arrives in arbitrary pieces; a 4-character group may be split across any of them. The
//! decoder checks each character as it arrives, so an error names the exact input byte at which
//! the text stopped being canonical base64.
//!
//! [RFC 4648 §4]: https://www.rfc-editor.org/rfc/rfc4648#section-4

/// Marks bytes outside the alphabet in [`SEXTET`].
const INVALID: u8 = 0xFF;
/// Marks `=` in [`SEXTET`].
const PAD: u8 = 0xFE;

/// Sextet value of each byte, or [`INVALID`] / [`PAD`]. Both markers have a high bit set, so one
/// OR over a group tells whether the fast path applies.
const SEXTET: [u8; 256] = {
    let mut table = [INVALID; 256];
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut i = 0;
    while i < alphabet.len() {
        table[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    table[b'=' as usize] = PAD;
    table
};

/// Decoder state between pieces.
#[derive(Debug, Clone, Default)]
pub(super) struct Base64 {
    /// Sextets of the group in progress, most significant first.
    acc: u32,
    /// Characters of the group in progress (0–3).
    len: u8,
    /// The group in progress has seen one `=` (at its third position).
    padding: bool,
    /// A padded group ended the text: nothing may follow.
    done: bool,
}

impl Base64 {
    /// Bytes held between pieces (the partial group), for memory accounting.
    pub(super) fn held(&self) -> usize {
        usize::from(self.len)
    }

    /// Decodes the next piece, appending bytes to `out` when `WRITE` (with `WRITE = false` it only
    /// validates and `out` is untouched).
    ///
    /// # Errors
    /// The index in `input` of the first byte that makes the text invalid.
    pub(super) fn push<const WRITE: bool>(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<(), usize> {
        let mut i = 0;
        while i < input.len() {
            if self.len == 0 && !self.done {
                i += self.fast_groups::<WRITE>(&input[i..], out);
                if i == input.len() {
                    break;
                }
            }
            self.one::<WRITE>(input[i], out).map_err(|()| i)?;
            i += 1;
        }
        Ok(())
    }

    /// The text ended.
    ///
    /// # Errors
    /// If a group is incomplete.
    pub(super) fn finish(&self) -> Result<(), ()> {
        if self.len == 0 { Ok(()) } else { Err(()) }
    }

    /// Decodes whole groups of plain alphabet characters; stops at the first group holding
    /// anything else (padding, an invalid byte) or a partial group. Returns the bytes consumed.
    fn fast_groups<const WRITE: bool>(&mut self, input: &[u8], out: &mut Vec<u8>) -> usize {
        let groups = input.len() / 4;
        if groups == 0 {
            return 0;
        }
        let start = out.len();
        if WRITE {
            // Two spare bytes: eight characters are written as one 8-byte store of 6 bytes.
            out.resize(start + groups * 3 + 2, 0);
        }
        let mut done = 0;
        for oct in input.chunks_exact(8) {
            let s: [u8; 8] = std::array::from_fn(|k| SEXTET[usize::from(oct[k])]);
            if s.iter().fold(0, |acc, &x| acc | x) & 0xC0 != 0 {
                break;
            }
            if WRITE {
                let v = s.iter().fold(0u64, |v, &x| v << 6 | u64::from(x)) << 16;
                let o = start + done * 3;
                out[o..o + 8].copy_from_slice(&v.to_be_bytes());
            }
            done += 2;
        }
        while done < groups {
            let quad = &input[done * 4..done * 4 + 4];
            let [a, b, c, d] = [quad[0], quad[1], quad[2], quad[3]].map(|x| SEXTET[usize::from(x)]);
            if (a | b | c | d) & 0xC0 != 0 {
                break;
            }
            if WRITE {
                let v = u32::from(a) << 18 | u32::from(b) << 12 | u32::from(c) << 6 | u32::from(d);
                let o = start + done * 3;
                out[o..o + 3].copy_from_slice(&v.to_be_bytes()[1..]);
            }
            done += 1;
        }
        if WRITE {
            out.truncate(start + done * 3);
        }
        done * 4
    }

    /// One character, checked against its position in the group.
    fn one<const WRITE: bool>(&mut self, byte: u8, out: &mut Vec<u8>) -> Result<(), ()> {
        if self.done {
            return Err(());
        }
        let s = SEXTET[usize::from(byte)];
        match (self.len, s) {
            (_, INVALID) | (0 | 1, PAD) => Err(()),
            // Padding at the third position: the second character's low 4 bits must be unused.
            (2, PAD) if self.acc & 0xF == 0 => {
                self.padding = true;
                self.len = 3;
                Ok(())
            }
            // Padding at the fourth position: the group ends the text.
            (3, PAD) if self.padding || self.acc & 0x3 == 0 => {
                if WRITE {
                    let (v, n) =
                        if self.padding { (self.acc << 12, 1) } else { (self.acc << 6, 2) };
                    out.extend_from_slice(&v.to_be_bytes()[1..=n]);
                }
                self.len = 0;
                self.done = true;
                Ok(())
            }
            (_, PAD) => Err(()),
            // After `xx=`, only a second `=` may follow.
            _ if self.padding => Err(()),
            (3, _) => {
                if WRITE {
                    let v = self.acc << 6 | u32::from(s);
                    out.extend_from_slice(&v.to_be_bytes()[1..]);
                }
                self.acc = 0;
                self.len = 0;
                Ok(())
            }
            _ => {
                self.acc = self.acc << 6 | u32::from(s);
                self.len += 1;
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_split(text: &[u8], cut: usize) -> Result<Vec<u8>, usize> {
        let mut d = Base64::default();
        let mut out = Vec::new();
        d.push::<true>(&text[..cut], &mut out)?;
        d.push::<true>(&text[cut..], &mut out).map_err(|i| i + cut)?;
        d.finish().map_err(|()| text.len())?;
        // Validation-only mode agrees.
        let mut v = Base64::default();
        let mut none = Vec::new();
        v.push::<false>(text, &mut none).expect("validates");
        assert!(none.is_empty());
        Ok(out)
    }

    #[test]
    fn decodes_canonical_text_under_every_split() {
        let cases: [(&[u8], &[u8]); 6] = [
            (b"", b""),
            (b"Zg==", b"f"),
            (b"Zm8=", b"fo"),
            (b"Zm9v", b"foo"),
            (b"Zm9vYmFyYmF6cXV4", b"foobarbazqux"),
            (b"+/+/AA==", &[0xfb, 0xff, 0xbf, 0]),
        ];
        for (text, bytes) in cases {
            for cut in 0..=text.len() {
                assert_eq!(decode_split(text, cut).as_deref(), Ok(bytes), "{text:?} cut {cut}");
            }
        }
    }

    #[test]
    fn names_the_first_bad_byte() {
        let cases: [(&[u8], usize); 9] = [
            (b"Zm9v!A==", 4),
            (b"=AAA", 0),
            (b"A=AA", 1),
            (b"Zh==", 2), // `h` has low bits set: not canonical; seen at the padding
            (b"Zm9=", 3),
            (b"Zg=A", 3),
            (b"Zg==Zg==", 4),
            (b"Zm8", 3), // incomplete group: reported at the end
            (b"Zm 8", 2),
        ];
        for (text, at) in cases {
            for cut in 0..=text.len() {
                assert_eq!(decode_split(text, cut), Err(at), "{text:?} cut {cut}");
            }
        }
    }
}
