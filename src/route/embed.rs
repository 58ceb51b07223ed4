//! The semantic half of the tool router: text → a unit vector, and an index of tool vectors
//! replaceable one server at a time.
//!
//! [`Embedder`] is the pluggable part. The one shipped, [`StaticEmbedder`], is a static token
//! table (model2vec-style) distilled from all-MiniLM-L6-v2 at install time by
//! `scripts/embed-distill.py` (every vocabulary token run through the full encoder alone,
//! centred, reduced by PCA); a text's vector is the weighted mean of its WordPiece tokens'
//! rows. It needs no model at run time: a 16 MB table, loaded in tens of milliseconds, a few
//! microseconds per query. See docs/routing.md for the file format and the measured trade-offs.

#![forbid(unsafe_code)]

use std::collections::HashMap;

use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

/// Turns text into a vector; every vector of one embedder has [`Embedder::dim`] components and
/// unit length (or is all zeros when the text has nothing the embedder knows).
pub trait Embedder: Send + Sync + std::fmt::Debug {
    /// The vectors' length.
    fn dim(&self) -> usize;
    /// The unit vector of `text`.
    fn embed(&self, text: &str) -> Vec<f32>;
    /// The unit vectors of `texts`, in order (an encoder spreads them over the cores).
    fn embed_batch(&self, texts: &[String]) -> Vec<Vec<f32>> {
        super::par::map(texts, 16, |t| self.embed(t))
    }
    /// A short name for reports ("minilm-l6-static").
    fn name(&self) -> &str;
    /// Whether [`Embedder::embed`] is cheap enough to run on each text where it is made (a
    /// table lookup: the router embeds a tool while it indexes it), rather than the texts
    /// being handed over together to [`Embedder::embed_batch`] (an encoder, or a cache in
    /// front of one, wants them all at once).
    fn per_text(&self) -> bool {
        false
    }
}

const MAGIC: &[u8; 8] = b"RMCPEMB1";

/// The first id of a whole word in the BERT uncased vocabulary: ids below are padding, unused
/// slots, special tokens and single characters; from here on, words come roughly in order of
/// frequency, which the token weights use (a Zipf prior: rarer tokens weigh more).
const FIRST_WORD_ID: u32 = 1996;

/// WordPiece stops looking inside words longer than this.
const MAX_WORD_CHARS: usize = 100;

/// Common words whose tokens carry no meaning about a tool.
const STOP: [&str; 40] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "could", "do", "for", "from", "i",
    "in", "into", "is", "it", "me", "my", "of", "on", "or", "please", "some", "that", "the",
    "this", "to", "use", "want", "was", "we", "what", "will", "with", "would", "you", "your",
    "need",
];

/// BERT's tokenizer: the basic pre-tokenizer (optionally lower-casing and stripping accents;
/// punctuation split off) after splitting identifiers, then greedy longest-match WordPiece.
#[derive(Debug, Clone)]
pub struct WordPiece {
    vocab: HashMap<String, u32, foldhash::fast::RandomState>,
    unk: Option<u32>,
    lowercase: bool,
    /// The longest token in characters (`##` excluded): no longer piece is looked up.
    longest: usize,
}

/// The static MiniLM token table (see the module docs).
#[derive(Debug)]
pub struct StaticEmbedder {
    dim: usize,
    tokenizer: WordPiece,
    /// Row-major `tokens × dim`.
    rows: Vec<f32>,
    /// Per token id: its weight in a text's mean.
    weights: Vec<f32>,
}

impl StaticEmbedder {
    /// Parses a table from its bytes (the caller reads the file: `host::embedding::load_table`).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, &'static str> {
        let mut at = 0usize;
        let mut take = |n: usize| -> Result<&[u8], &'static str> {
            let s = bytes.get(at..at + n).ok_or("truncated")?;
            at += n;
            Ok(s)
        };
        if take(8)? != MAGIC {
            return Err("bad magic");
        }
        let mut u32_at = || -> Result<u32, &'static str> {
            Ok(u32::from_le_bytes(take(4)?.try_into().expect("4 bytes")))
        };
        let version = u32_at()?;
        let dim = u32_at()? as usize;
        let tokens = u32_at()? as usize;
        let flags = u32_at()?;
        if version != 1 {
            return Err("unknown format version");
        }
        if dim == 0 || dim > 4096 || tokens == 0 || tokens > 1_000_000 {
            return Err("implausible dimensions");
        }
        let mut vocab = Vec::with_capacity(tokens);
        for _ in 0..tokens {
            let len = u16::from_le_bytes(take(2)?.try_into().expect("2 bytes")) as usize;
            let token = std::str::from_utf8(take(len)?).map_err(|_| "token not UTF-8")?;
            vocab.push(token.to_owned());
        }
        let tokenizer = WordPiece::new(vocab, flags & 1 == 1);
        let raw = take(tokens * dim * 2)?;
        if at != bytes.len() {
            return Err("trailing bytes");
        }
        let rows: Vec<f32> =
            raw.chunks_exact(2).map(|c| f16_to_f32(u16::from_le_bytes([c[0], c[1]]))).collect();
        let mut weights = vec![1.0f32; tokens];
        for (id, w) in weights.iter_mut().enumerate() {
            let rank = (id as u32).saturating_sub(FIRST_WORD_ID) as f32;
            *w = (2.0 + rank).ln();
        }
        for word in STOP.iter().chain(&["[PAD]", "[CLS]", "[SEP]", "[MASK]", "[UNK]"]) {
            if let Some(id) = tokenizer.id(word) {
                weights[id as usize] = 0.0;
            }
        }
        Ok(StaticEmbedder { dim, tokenizer, rows, weights })
    }

    /// How many tokens the table holds.
    pub fn tokens(&self) -> usize {
        self.weights.len()
    }

    /// Bytes the table holds in memory (rows, weights and vocabulary).
    pub fn memory_bytes(&self) -> usize {
        self.rows.len() * 4 + self.weights.len() * 4 + self.tokenizer.memory_bytes()
    }

    /// The WordPiece ids of `text` (BERT's basic tokenizer after splitting identifiers).
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        self.tokenizer.token_ids(text)
    }
}

impl WordPiece {
    /// A tokenizer over `tokens` (in id order; continuation pieces start with `##`, the
    /// unknown token is `[UNK]`); `lowercase` for uncased models.
    pub fn new(tokens: Vec<String>, lowercase: bool) -> Self {
        let longest = tokens
            .iter()
            .map(|t| t.strip_prefix("##").unwrap_or(t).chars().count())
            .max()
            .unwrap_or(0);
        let vocab: HashMap<String, u32, _> =
            tokens.into_iter().enumerate().map(|(id, t)| (t, id as u32)).collect();
        let unk = vocab.get("[UNK]").copied();
        WordPiece { vocab, unk, lowercase, longest }
    }

    /// The id of one token.
    pub fn id(&self, token: &str) -> Option<u32> {
        self.vocab.get(token).copied()
    }

    /// Bytes the vocabulary holds.
    pub fn memory_bytes(&self) -> usize {
        self.vocab.keys().map(|k| k.len() + 40).sum()
    }

    /// The WordPiece ids of `text` (BERT's basic tokenizer after splitting identifiers).
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        if text.is_ascii() { self.ascii_token_ids(text) } else { self.char_token_ids(text) }
    }

    /// [`WordPiece::token_ids`] of ASCII text in one pass over its bytes: the identifier split,
    /// the lowercasing and BERT's split into words done as the words are cut, with nothing
    /// copied but each word (tool descriptions nearly always are ASCII).
    fn ascii_token_ids(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::with_capacity(text.len() / 4);
        let mut scratch = Scratch::default();
        let mut word = String::new();
        let mut flush = |word: &mut String, ids: &mut Vec<u32>| {
            if !word.is_empty() {
                self.wordpiece(word, &mut scratch, ids);
                word.clear();
            }
        };
        let mut prev = 0u8; // `_` leaves none: no identifier joint after it
        for &c in text.as_bytes() {
            if matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'_') {
                // White space and `_` part words.
                flush(&mut word, &mut ids);
            } else if c < b' ' || c == 0x7f {
                // BERT drops the other control characters (the letters around join up).
            } else if c.is_ascii_punctuation() {
                // A punctuation mark is a word of its own.
                flush(&mut word, &mut ids);
                word.push(c as char);
                flush(&mut word, &mut ids);
            } else {
                if (prev.is_ascii_lowercase() && c.is_ascii_uppercase())
                    || (prev.is_ascii_alphabetic() && c.is_ascii_digit())
                {
                    flush(&mut word, &mut ids); // an identifier joint: readFile2 → read File 2
                }
                word.push(if self.lowercase { c.to_ascii_lowercase() } else { c } as char);
            }
            prev = if c == b'_' { 0 } else { c };
        }
        flush(&mut word, &mut ids);
        ids
    }

    /// [`WordPiece::token_ids`], char by char, as BERT's basic tokenizer: control and format
    /// characters dropped (tab, line feed and carriage return are white space), CJK ideographs
    /// set apart as words of their own, lowercased with accents (nonspacing marks) stripped.
    fn char_token_ids(&self, text: &str) -> Vec<u32> {
        let split = split_identifiers(text);
        let mut clean = String::with_capacity(split.len() + 8);
        for c in split.chars() {
            if matches!(c, '\t' | '\n' | '\r') {
                clean.push(' ');
            } else if c == '\u{FFFD}'
                || matches!(
                    get_general_category(c),
                    GeneralCategory::Control | GeneralCategory::Format
                )
            {
                continue;
            } else if is_cjk(c) {
                clean.extend([' ', c, ' ']);
            } else {
                clean.push(c);
            }
        }
        let cleaned = if !self.lowercase {
            clean
        } else if clean.is_ascii() {
            clean.to_ascii_lowercase() // what the Unicode path gives for ASCII, without it
        } else {
            clean
                .to_lowercase()
                .nfd()
                .filter(|&c| get_general_category(c) != GeneralCategory::NonspacingMark)
                .collect()
        };
        let mut ids = Vec::with_capacity(cleaned.len() / 4);
        let mut scratch = Scratch::default();
        for word in basic_words(&cleaned) {
            self.wordpiece(word, &mut scratch, &mut ids);
        }
        ids
    }

    fn wordpiece(&self, word: &str, scratch: &mut Scratch, out: &mut Vec<u32>) {
        // Character boundaries as byte offsets, the end included.
        let bounds = &mut scratch.bounds;
        bounds.clear();
        if word.is_ascii() {
            bounds.extend(0..word.len());
        } else {
            bounds.extend(word.char_indices().map(|(i, _)| i));
        }
        let chars = bounds.len();
        bounds.push(word.len());
        if chars > MAX_WORD_CHARS {
            out.extend(self.unk);
            return;
        }
        let piece = &mut scratch.piece;
        let mark = out.len();
        let mut start = 0usize;
        while start < chars {
            let mut end = chars.min(start + self.longest);
            let mut found = None;
            while start < end {
                piece.clear();
                if start > 0 {
                    piece.push_str("##");
                }
                piece.push_str(&word[bounds[start]..bounds[end]]);
                if let Some(&id) = self.vocab.get(piece.as_str()) {
                    found = Some(id);
                    break;
                }
                end -= 1;
            }
            match found {
                Some(id) => {
                    out.push(id);
                    start = end;
                }
                None => {
                    out.truncate(mark);
                    out.extend(self.unk);
                    return;
                }
            }
        }
    }
}

/// Buffers one text's words reuse.
#[derive(Default)]
struct Scratch {
    bounds: Vec<usize>,
    piece: String,
}

/// BERT's basic split of cleaned text (control and format characters already dropped): on
/// white space, with each punctuation mark ([`is_punctuation`]) a word of its own.
fn basic_words(text: &str) -> Vec<&str> {
    let mut words = Vec::new();
    for chunk in text.split(char::is_whitespace) {
        let mut start = 0;
        for (i, c) in chunk.char_indices() {
            if is_punctuation(c) {
                if i > start {
                    words.push(&chunk[start..i]);
                }
                start = i + c.len_utf8();
                words.push(&chunk[i..start]);
            }
        }
        if start < chunk.len() {
            words.push(&chunk[start..]);
        }
    }
    words
}

/// BERT's punctuation: every ASCII character that is neither a letter, a digit, white space
/// nor a control character, and the Unicode punctuation categories (`P*`); other symbols
/// (`€`, `→`, emoji) stay inside their word.
fn is_punctuation(c: char) -> bool {
    use GeneralCategory as G;
    c.is_ascii_punctuation()
        || (!c.is_ascii()
            && matches!(
                get_general_category(c),
                G::ConnectorPunctuation
                    | G::DashPunctuation
                    | G::OpenPunctuation
                    | G::ClosePunctuation
                    | G::InitialPunctuation
                    | G::FinalPunctuation
                    | G::OtherPunctuation
            ))
}

/// The CJK Unified Ideographs blocks BERT sets apart (not Hangul, Hiragana or Katakana, which
/// it writes with spaces between words anyway).
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B820..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

impl Embedder for StaticEmbedder {
    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0.0f32; self.dim];
        for id in self.token_ids(text) {
            let w = self.weights[id as usize];
            if w == 0.0 {
                continue;
            }
            let row = &self.rows[id as usize * self.dim..(id as usize + 1) * self.dim];
            for (x, r) in v.iter_mut().zip(row) {
                *x += w * r;
            }
        }
        normalize(&mut v);
        v
    }

    fn name(&self) -> &str {
        "minilm-l6-static"
    }

    fn per_text(&self) -> bool {
        true
    }
}

/// Scales `v` to unit length (leaves a zero vector alone).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// The dot product (the cosine, for unit vectors).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Spaces at identifier joints so the BERT tokenizer sees words: `createPullRequest` →
/// `create Pull Request`, `list_issues` → `list issues`, `readFile2` → `read File 2`.
pub fn split_identifiers(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut prev: Option<char> = None;
    for c in text.chars() {
        if c == '_' {
            out.push(' ');
            prev = None;
            continue;
        }
        if let Some(p) = prev {
            let camel = p.is_lowercase() && c.is_uppercase();
            let digit = p.is_alphabetic() && c.is_ascii_digit();
            if camel || digit {
                out.push(' ');
            }
        }
        out.push(c);
        prev = Some(c);
    }
    out
}

/// IEEE binary16 → f32.
fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as u32;
    let frac = (h & 0x3ff) as u32;
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, f) => {
            // Subnormal: renormalise.
            let shift = f.leading_zeros() - 21;
            let f = (f << shift) & 0x3ff;
            sign | ((127 - 15 + 1 - shift) << 23) | (f << 13)
        }
        (0x1f, f) => sign | 0x7f80_0000 | (f << 13),
        (e, f) => sign | ((e + 127 - 15) << 23) | (f << 13),
    };
    f32::from_bits(bits)
}

/// A vector index over documents grouped by owner (a server), replaceable per owner; search is
/// a scan (a few hundred nanoseconds per document at 256 dimensions), which beats any
/// approximate structure at the sizes a tool catalog has.
#[derive(Debug, Default, Clone)]
pub struct VectorIndex {
    /// Each owner's documents: their numbers and their unit vectors end to end.
    owners: HashMap<String, (Vec<u32>, Vec<f32>)>,
    dim: usize,
}

impl VectorIndex {
    /// Replaces every document of `owner` by `docs` (`(number, unit vector)` pairs, numbers
    /// unique across owners, every vector of one length).
    pub fn replace(&mut self, owner: &str, docs: Vec<(u32, Vec<f32>)>) {
        self.remove(owner);
        self.add(owner, docs);
    }

    /// Adds `docs` (`(number, unit vector)` pairs, numbers not in use) to `owner`'s.
    pub fn add(&mut self, owner: &str, docs: Vec<(u32, Vec<f32>)>) {
        let (ids, flat) = self.owners.entry(owner.to_owned()).or_default();
        for (id, v) in docs {
            if self.dim == 0 {
                self.dim = v.len();
            }
            assert_eq!(v.len(), self.dim, "every vector of an index has one length");
            ids.push(id);
            flat.extend(v);
        }
    }

    /// Removes the documents `gone` of `owner` (the others stay as they are).
    pub fn remove_docs(&mut self, owner: &str, gone: &[u32]) {
        let Some((ids, flat)) = self.owners.get_mut(owner) else { return };
        let dim = self.dim;
        let mut keep = 0;
        for i in 0..ids.len() {
            if !gone.contains(&ids[i]) {
                ids[keep] = ids[i];
                flat.copy_within(i * dim..(i + 1) * dim, keep * dim);
                keep += 1;
            }
        }
        ids.truncate(keep);
        flat.truncate(keep * dim);
    }

    /// Removes every document of `owner`.
    pub fn remove(&mut self, owner: &str) {
        self.owners.remove(owner);
    }

    /// Writes each document's cosine with `query` into `out[number]` (`out` as long as the
    /// highest number + 1); returns the lowest and highest cosine (`None` when empty).
    pub fn score_into(&self, query: &[f32], out: &mut [f32]) -> Option<(f32, f32)> {
        let mut range: Option<(f32, f32)> = None;
        for (ids, flat) in self.owners.values() {
            if ids.is_empty() {
                continue;
            }
            for (id, v) in ids.iter().zip(flat.chunks_exact(self.dim)) {
                let c = dot(query, v);
                out[*id as usize] = c;
                range = Some(range.map_or((c, c), |(lo, hi)| (lo.min(c), hi.max(c))));
            }
        }
        range
    }

    /// Bytes the vectors take.
    pub fn memory_bytes(&self) -> usize {
        self.owners.iter().map(|(o, (ids, v))| o.len() + 64 + ids.len() * 4 + v.len() * 4).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The one-pass ids of ASCII text are the ones of the general path.
        #[test]
        fn ascii_token_ids_are_the_char_wise_ids(
            text in "[\\x00-\\x7f]{0,80}|[a-zA-Z0-9_ .,]{0,60}",
            lowercase in proptest::bool::ANY,
        ) {
            let mut vocab: Vec<String> = ["[UNK]", "read", "file", "##s", "##ing", "ab", "##ab"]
                .into_iter()
                .map(str::to_owned)
                .collect();
            for c in (0x21u8..0x7f).map(char::from) {
                vocab.push(c.to_string());
                if c.is_ascii_alphanumeric() && c != 'q' && c != 'Q' {
                    vocab.push(format!("##{c}")); // no "##q": a word with a q inside is [UNK]
                }
            }
            let wp = WordPiece::new(vocab, lowercase);
            proptest::prop_assert_eq!(wp.ascii_token_ids(&text), wp.char_token_ids(&text));
        }
    }

    /// A small table in the real format: a handful of tokens, 4 dimensions.
    fn table(tokens: &[(&str, [f32; 4])]) -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        for v in [1u32, 4, tokens.len() as u32, 1] {
            b.extend(v.to_le_bytes());
        }
        for (t, _) in tokens {
            b.extend((t.len() as u16).to_le_bytes());
            b.extend(t.as_bytes());
        }
        for (_, row) in tokens {
            for x in row {
                b.extend(f32_to_f16(*x).to_le_bytes());
            }
        }
        b
    }

    fn f32_to_f16(x: f32) -> u16 {
        // Enough for the test's values (normal numbers and zero).
        if x == 0.0 {
            return 0;
        }
        let bits = x.to_bits();
        let sign = ((bits >> 16) & 0x8000) as u16;
        let exp = (((bits >> 23) & 0xff) as i32 - 127 + 15) as u16;
        sign | (exp << 10) | ((bits >> 13) & 0x3ff) as u16
    }

    #[test]
    fn half_floats_decode() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x0001), 2f32.powi(-24));
        assert!(f16_to_f32(0x7c00).is_infinite());
        assert_eq!(f16_to_f32(f32_to_f16(0.5)), 0.5);
    }

    #[test]
    fn wordpiece_and_identifier_splitting() {
        let bytes = table(&[
            ("[UNK]", [0.0; 4]),
            ("the", [1.0, 0.0, 0.0, 0.0]),
            ("create", [0.0, 1.0, 0.0, 0.0]),
            ("pull", [0.0, 0.0, 1.0, 0.0]),
            ("request", [0.0, 0.0, 0.0, 1.0]),
            ("issue", [0.0, 1.0, 1.0, 0.0]),
            ("##s", [0.5, 0.0, 0.0, 0.0]),
            ("_", [0.0; 4]),
            ("cafe", [1.0, 1.0, 0.0, 0.0]),
        ]);
        let e = StaticEmbedder::from_bytes(&bytes).unwrap();
        assert_eq!(
            split_identifiers("createPullRequest list_issues readFile2"),
            "create Pull Request list issues read File 2"
        );
        let ids = e.token_ids("createPullRequest issues Café zzz");
        assert_eq!(ids, [2, 3, 4, 5, 6, 8, 0]);
        let v = e.embed("create");
        assert!((dot(&v, &v) - 1.0).abs() < 1e-6);
        assert!(e.embed("the").iter().all(|x| *x == 0.0), "stop words weigh nothing");
        assert!(e.embed("").iter().all(|x| *x == 0.0));
        // Bad tables are refused, not half-read.
        assert_eq!(StaticEmbedder::from_bytes(&bytes[..bytes.len() - 1]).unwrap_err(), "truncated");
        assert_eq!(StaticEmbedder::from_bytes(b"NOTATABLE...........").unwrap_err(), "bad magic");
    }

    /// Non-ASCII text is cut as BERT's basic tokenizer cuts it (the integration tests check the
    /// same against the reference implementation on the real vocabulary).
    #[test]
    fn non_ascii_text_is_cut_as_bert_cuts_it() {
        let vocab =
            ["[UNK]", "你", "好", "##好", "，", "zerowidth", "5€", "«", "»", "x", "naive", "ab"];
        let wp = WordPiece::new(vocab.map(str::to_owned).to_vec(), true);
        // Ideographs are words of their own (not "你" "##好"), a full-width comma splits.
        assert_eq!(wp.token_ids("你好，"), [1, 2, 4]);
        // Format and control characters are dropped; the letters around them join up.
        assert_eq!(wp.token_ids("zero\u{200b}width"), [5]);
        assert_eq!(wp.token_ids("a\u{1}b"), [11]);
        // A currency sign is no punctuation: it stays in its word; «» are punctuation.
        assert_eq!(wp.token_ids("«5€»"), [7, 6, 8]);
        // Accents (nonspacing marks) go, with the lowercasing.
        assert_eq!(wp.token_ids("NAÏVE x"), [10, 9]);
    }

    #[test]
    fn vector_index_replaces_one_owner() {
        let mut idx = VectorIndex::default();
        idx.replace("a", vec![(0, vec![1.0, 0.0]), (1, vec![0.0, 1.0])]);
        idx.replace("b", vec![(2, vec![0.6, 0.8])]);
        let mut out = [f32::NAN; 3];
        assert_eq!(idx.score_into(&[1.0, 0.0], &mut out), Some((0.0, 1.0)));
        assert_eq!(out, [1.0, 0.0, 0.6]);
        idx.remove_docs("a", &[0]);
        idx.add("a", vec![(0, vec![0.0, -1.0])]);
        let mut out = [f32::NAN; 3];
        assert_eq!(idx.score_into(&[0.0, 1.0], &mut out), Some((-1.0, 1.0)));
        assert_eq!(out, [-1.0, 1.0, 0.8]);
        idx.replace("a", vec![]);
        let mut out = [f32::NAN; 3];
        assert_eq!(idx.score_into(&[1.0, 0.0], &mut out), Some((0.6, 0.6)));
        assert!(out[0].is_nan() && out[2] == 0.6);
        idx.remove("b");
        assert_eq!(idx.score_into(&[1.0, 0.0], &mut out), None);
    }
}
