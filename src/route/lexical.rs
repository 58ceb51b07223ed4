//! The lexical half of the tool router: terms from tool documents and queries, and a BM25
//! index over them that one server's tools can be replaced in without a rebuild.
//!
//! Terms: identifiers are split (`camelCase`, `snake_case`, `kebab-case`, `server__tool`),
//! lowercased, stripped of a few common English suffixes (a light stemmer: plurals, `-ing`,
//! `-ed`), and stop words dropped. Pure: no I/O.

#![forbid(unsafe_code)]

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

/// BM25's term-frequency saturation.
const K1: f32 = 1.2;
/// BM25's length normalisation.
const B: f32 = 0.75;

/// Words too common to tell tools apart (English function words and the filler of requests);
/// kept sorted so a reader finds a word (and the test keeps it so).
const STOP: [&str; 96] = [
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "but", "by", "can", "could", "did", "do", "does", "doing", "done", "for",
    "from", "get", "got", "had", "has", "have", "he", "her", "here", "him", "his", "how", "i",
    "if", "in", "into", "is", "it", "its", "just", "let", "like", "me", "might", "my", "need",
    "no", "not", "now", "of", "on", "one", "or", "our", "out", "over", "please", "s", "she",
    "should", "so", "some", "t", "than", "that", "the", "their", "them", "then", "there", "these",
    "they", "this", "those", "to", "up", "us", "use", "want", "was", "we", "were", "what", "when",
    "where", "which", "who", "will", "with", "would", "you",
];

/// The terms of `text`, in order (repeats kept: they count).
pub fn terms(text: &str) -> Vec<String> {
    Terms::of(text).iter().map(str::to_owned).collect()
}

/// [`terms`] with the stop words kept ("get" of `get_issue` is one).
pub fn every_term(text: &str) -> Vec<String> {
    Terms::cut(text, false).iter().map(str::to_owned).collect()
}

/// The terms of an identifier's parts, stop words kept, without the whole identifiers
/// [`terms`] adds beside their parts: `listIssues` → list, issu; `list_k8s_pods` → list, k,
/// 8, s, pod.
pub fn parts(identifier: &str) -> Vec<String> {
    let mut out = Vec::new();
    for chunk in identifier.split(|c: char| !c.is_alphanumeric()).filter(|c| !c.is_empty()) {
        let words = words(chunk);
        for w in &words {
            if words.len() == 1 || *w != chunk {
                out.extend(every_term(w));
            }
        }
    }
    out
}

/// A document's [`terms`] in one buffer (one allocation however many terms, where a document
/// has hundreds): what indexing hands the BM25 index.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Terms {
    text: String,
    /// Where each term ends in `text`.
    ends: Vec<u32>,
}

impl Terms {
    /// The terms of `text`, in order (repeats kept).
    pub fn of(text: &str) -> Terms {
        Terms::cut(text, true)
    }

    fn cut(text: &str, drop_stop_words: bool) -> Terms {
        let mut out = Terms {
            text: String::with_capacity(text.len()),
            ends: Vec::with_capacity(text.len() / 6),
        };
        let mut lower = String::new();
        for word in words(text) {
            lower.clear();
            if word.is_ascii() {
                lower.push_str(word);
                lower.make_ascii_lowercase();
            } else {
                lower.push_str(&word.to_lowercase()); // whole-word rules (a final Σ is ς)
            }
            if lower.is_empty() || (drop_stop_words && is_stop(&lower)) {
                continue;
            }
            stem_into(&lower, &mut out.text);
            out.ends.push(out.text.len() as u32);
        }
        out
    }

    /// How many terms.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The terms, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let term = &self.text[start..end as usize];
            start = end as usize;
            term
        })
    }
}

/// Whether `word` (lowercase) is in [`STOP`].
fn is_stop(word: &str) -> bool {
    static SET: LazyLock<HashSet<&str, foldhash::fast::RandomState>> =
        LazyLock::new(|| STOP.iter().copied().collect());
    word.len() <= LONGEST_STOP && SET.contains(word)
}

/// The longest word in [`STOP`], in bytes.
const LONGEST_STOP: usize = 6;

/// Splits on anything but letters and digits, and inside identifiers at lower→upper and
/// letter↔digit changes (`readFile2` → `read`, `File`, `readFile2`, `2`: the whole identifier
/// is kept beside its parts).
fn words(text: &str) -> Vec<&str> {
    if text.is_ascii() { ascii_words(text) } else { char_words(text) }
}

/// [`words`], char by char.
fn char_words(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for chunk in text.split(|c: char| !c.is_alphanumeric()) {
        let mut start = 0;
        let mut prev: Option<char> = None;
        for (i, c) in chunk.char_indices() {
            if let Some(p) = prev {
                let camel = p.is_lowercase() && c.is_uppercase();
                let digit = p.is_ascii_digit() != c.is_ascii_digit();
                if (camel || digit) && i > start {
                    out.push(&chunk[start..i]);
                    start = i;
                }
            }
            prev = Some(c);
        }
        if start > 0 {
            // Split: the whole identifier is a term too ("GitHub" meets "github").
            out.push(chunk);
        }
        if start < chunk.len() {
            out.push(&chunk[start..]);
        }
    }
    out
}

/// [`words`] of ASCII text, byte by byte (tool documents nearly always are ASCII).
fn ascii_words(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len() / 4);
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_alphanumeric() {
            i += 1;
            continue;
        }
        let (chunk, mut start) = (i, i);
        i += 1;
        while i < b.len() && b[i].is_ascii_alphanumeric() {
            let (p, c) = (b[i - 1], b[i]);
            if (p.is_ascii_lowercase() && c.is_ascii_uppercase())
                || p.is_ascii_digit() != c.is_ascii_digit()
            {
                out.push(&text[start..i]);
                start = i;
            }
            i += 1;
        }
        if start > chunk {
            out.push(&text[chunk..i]);
        }
        out.push(&text[start..i]);
    }
    out
}

/// A light suffix stemmer: enough that "files"/"file", "searching"/"search", "created"/"create"
/// meet. Appends the stem of `word` to `out`.
fn stem_into(word: &str, out: &mut String) {
    let w = word;
    let n = w.len();
    let cut = |suffix: &str, keep: usize| -> Option<&str> {
        (w.ends_with(suffix) && n > suffix.len() + keep).then(|| &w[..n - suffix.len()])
    };
    if let Some(s) = cut("ies", 1) {
        out.push_str(s);
        out.push('y');
        return;
    }
    for (suffix, keep) in [("ing", 3), ("ed", 3), ("es", 3), ("s", 2)] {
        if suffix == "s" && (w.ends_with("ss") || w.ends_with("us")) {
            continue;
        }
        if let Some(s) = cut(suffix, keep) {
            // "created" → "creat", "creates" → "creat": both meet at the same stem.
            out.push_str(s.trim_end_matches('e'));
            return;
        }
    }
    out.push_str(w.trim_end_matches('e'));
}

/// A BM25 index over documents grouped by owner (a server), replaceable per owner.
///
/// Documents are numbered by the caller (a slot in its own table, reused after removal), so a
/// query scores into a flat array indexed by that number and nothing is allocated per match.
#[derive(Debug, Default, Clone)]
pub struct Bm25 {
    /// Term → its number (documents and postings hold numbers: a term's text is looked up once
    /// per occurrence as a document is added; removing and sorting work on numbers).
    ids: HashMap<String, u32, foldhash::fast::RandomState>,
    /// By term number: the term and `(document, term frequency)` for the documents holding it;
    /// an empty list is a free number (in `free_terms`), so terms of removed tools do not pile up.
    postings: Vec<(String, Vec<(u32, u32)>)>,
    free_terms: Vec<u32>,
    /// Length in terms of each document, by number (0 for a free number).
    lens: Vec<u32>,
    /// Each owner's documents and their distinct term numbers (to take them out again).
    owners: HashMap<String, Vec<(u32, Vec<u32>)>>,
    docs: usize,
    total_len: usize,
}

/// One match: the document's number, its score, and the query terms it matched.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The number the document was added under.
    pub doc: u32,
    /// BM25 score (higher is better).
    pub score: f32,
    /// The query terms found in it.
    pub matched: Vec<String>,
}

impl Bm25 {
    /// An empty index.
    pub fn new() -> Self {
        Bm25::default()
    }

    /// Replaces every document of `owner` by `docs` (`(number, text)` pairs; numbers unique
    /// across owners): one server's `list_changed` touches only its own documents.
    pub fn replace(&mut self, owner: &str, docs: impl IntoIterator<Item = (u32, String)>) {
        self.remove(owner);
        self.add(owner, docs);
    }

    /// Adds `docs` (`(number, text)` pairs, numbers not in use) to `owner`'s.
    pub fn add(&mut self, owner: &str, docs: impl IntoIterator<Item = (u32, String)>) {
        self.add_terms(owner, docs.into_iter().map(|(doc, text)| (doc, Terms::of(&text))));
    }

    /// Adds documents already split into [`terms`] (`(number, terms)` pairs, numbers not in
    /// use) to `owner`'s: the caller may split many documents in parallel.
    pub fn add_terms(&mut self, owner: &str, docs: impl IntoIterator<Item = (u32, Terms)>) {
        let mut mine = self.owners.remove(owner).unwrap_or_default();
        for (doc, terms) in docs {
            let slot = doc as usize;
            if self.lens.len() <= slot {
                self.lens.resize(slot + 1, 0);
            }
            self.lens[slot] = terms.len() as u32;
            self.total_len += terms.len();
            self.docs += 1;
            // Sorted, each run of one term number is its frequency.
            let mut ids: Vec<u32> = terms.iter().map(|t| self.intern(t)).collect();
            ids.sort_unstable();
            let mut distinct = Vec::new();
            let mut at = 0;
            while at < ids.len() {
                let id = ids[at];
                let tf = ids[at..].iter().take_while(|&&t| t == id).count();
                self.postings[id as usize].1.push((doc, tf as u32));
                distinct.push(id);
                at += tf;
            }
            mine.push((doc, distinct));
        }
        self.owners.insert(owner.to_owned(), mine);
    }

    /// The number of `term`, given a free (or new) one if it has none.
    fn intern(&mut self, term: &str) -> u32 {
        if let Some(&id) = self.ids.get(term) {
            return id;
        }
        let id = match self.free_terms.pop() {
            Some(id) => {
                term.clone_into(&mut self.postings[id as usize].0);
                id
            }
            None => {
                self.postings.push((term.to_owned(), Vec::new()));
                (self.postings.len() - 1) as u32
            }
        };
        self.ids.insert(term.to_owned(), id);
        id
    }

    /// Removes every document of `owner`.
    pub fn remove(&mut self, owner: &str) {
        let docs = self.owners.remove(owner).unwrap_or_default();
        self.forget(docs);
    }

    /// Removes the documents `gone` of `owner` (the others stay as they are).
    pub fn remove_docs(&mut self, owner: &str, gone: &[u32]) {
        let Some(mine) = self.owners.get_mut(owner) else { return };
        let mut gone = gone.to_vec();
        gone.sort_unstable();
        let (out, keep): (Vec<_>, Vec<_>) =
            mine.drain(..).partition(|(d, _)| gone.binary_search(d).is_ok());
        *mine = keep;
        self.forget(out);
    }

    /// Takes `docs` out of the postings: each term's list is walked once, however many of the
    /// documents hold it (a server's tools share most of their terms).
    fn forget(&mut self, docs: Vec<(u32, Vec<u32>)>) {
        // By document number: whether it goes (a lookup per posting walked, where a common
        // term's list holds most of the catalog).
        let mut gone = vec![false; self.lens.len()];
        let mut terms = Vec::new();
        for (doc, distinct) in docs {
            let len = std::mem::take(&mut self.lens[doc as usize]);
            self.total_len -= len as usize;
            self.docs -= 1;
            gone[doc as usize] = true;
            terms.extend(distinct);
        }
        terms.sort_unstable();
        terms.dedup();
        for t in terms {
            let (term, list) = &mut self.postings[t as usize];
            list.retain(|&(d, _)| !gone[d as usize]);
            if list.is_empty() {
                self.ids.remove(std::mem::take(term).as_str());
                self.free_terms.push(t);
            }
        }
    }

    /// Bytes the postings and documents take, counted from their contents.
    pub fn memory_bytes(&self) -> usize {
        let owners: usize = self
            .owners
            .iter()
            .map(|(o, docs)| o.len() + docs.iter().map(|(_, t)| 28 + t.len() * 4).sum::<usize>())
            .sum();
        // Each term's text twice (the map's key and its entry), the two headers, its number.
        let postings: usize =
            self.postings.iter().map(|(t, l)| 2 * t.len() + 76 + l.capacity() * 8).sum();
        owners + postings + self.free_terms.len() * 4 + self.lens.len() * 4
    }

    /// How many documents.
    pub fn len(&self) -> usize {
        self.docs
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.docs == 0
    }

    /// The distinct terms of a query, as [`Bm25::score_into`] and [`Bm25::matched`] take them.
    pub fn query_terms(query: &str) -> Vec<String> {
        let mut q = terms(query);
        q.sort();
        q.dedup();
        q
    }

    /// Adds each document's BM25 score for the query terms `q` to `out[number]` (`out` as
    /// long as the highest number + 1); returns the highest score.
    pub fn score_into(&self, q: &[String], out: &mut [f32]) -> f32 {
        let n = self.docs as f32;
        if self.docs == 0 {
            return 0.0;
        }
        let avg = self.total_len as f32 / n;
        for term in q {
            let Some(list) = self.list(term) else { continue };
            let df = list.len() as f32;
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            for &(doc, tf) in list {
                let tf = tf as f32;
                let len = self.lens[doc as usize] as f32;
                out[doc as usize] += idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / avg));
            }
        }
        out.iter().copied().fold(0.0, f32::max)
    }

    /// The documents holding `term`, with its frequency in each.
    fn list(&self, term: &str) -> Option<&[(u32, u32)]> {
        self.ids.get(term).map(|&id| self.postings[id as usize].1.as_slice())
    }

    /// Which of the query terms `q` document `doc` holds.
    pub fn matched(&self, q: &[String], doc: u32) -> Vec<String> {
        q.iter()
            .filter(|t| self.list(t).is_some_and(|l| l.iter().any(|(d, _)| *d == doc)))
            .cloned()
            .collect()
    }

    /// The `k` best documents for `query`, best first (ties by number, for stable output).
    pub fn search(&self, query: &str, k: usize) -> Vec<Hit> {
        let q = Bm25::query_terms(query);
        let mut scores = vec![0.0; self.lens.len()];
        self.score_into(&q, &mut scores);
        let mut hits: Vec<(u32, f32)> = (0..scores.len() as u32)
            .map(|d| (d, scores[d as usize]))
            .filter(|(_, s)| *s > 0.0)
            .collect();
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        hits.truncate(k);
        hits.into_iter()
            .map(|(doc, score)| Hit { doc, score, matched: self.matched(&q, doc) })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The byte-wise split of ASCII text is the char-wise one.
        #[test]
        fn ascii_words_are_the_char_wise_words(text in "[ -~\t\n]{0,80}|[a-zA-Z0-9_ ]{0,60}") {
            proptest::prop_assert_eq!(ascii_words(&text), char_words(&text));
        }
    }

    #[test]
    fn the_stop_list_is_sorted() {
        assert!(STOP.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(STOP.iter().map(|w| w.len()).max(), Some(LONGEST_STOP));
    }

    #[test]
    fn identifiers_split_and_words_meet_their_stems() {
        assert_eq!(
            terms("readFile2 list_directory github__create-issue"),
            ["read", "fil", "readfile2", "2", "list", "directory", "github", "creat", "issu"]
        );
        assert_eq!(terms("files"), terms("file"));
        assert_eq!(terms("searching"), terms("search"));
        assert_eq!(terms("created"), terms("creates"));
        assert_eq!(terms("repositories"), terms("repository"));
        assert_eq!(terms("the status of my process"), ["status", "process"]);
        assert_eq!(terms("GitHub"), ["git", "github", "hub"]);
    }

    #[test]
    fn the_best_match_comes_first_and_owners_are_replaced_alone() {
        let mut index = Bm25::new();
        // 0 = fs__read_file, 1 = fs__list_directory, 2 = gh__create_issue, 3 = fs__read_text
        index.replace(
            "fs",
            [
                (0, "read_file Read the contents of a file".to_owned()),
                (1, "list_directory List files in a directory".to_owned()),
            ],
        );
        index.replace(
            "gh",
            [(2, "create_issue Create a new issue in a GitHub repository".to_owned())],
        );
        let hits = index.search("open an issue on github", 5);
        assert_eq!(hits[0].doc, 2);
        assert!(hits[0].matched.contains(&"github".to_owned()));
        assert_eq!(index.search("what files are in this directory", 1)[0].doc, 1);
        // One server's change leaves the others' documents in place.
        index.replace("fs", [(3, "read text file".to_owned())]);
        assert_eq!(index.len(), 2);
        assert!(index.search("directory", 5).is_empty());
        assert_eq!(index.search("issue", 5)[0].doc, 2);
        index.remove("gh");
        assert!(index.search("issue", 5).is_empty());
        assert_eq!(index.total_len, index.lens.iter().map(|l| *l as usize).sum::<usize>());
        assert_eq!(index.total_len, 3);
        // Only the live documents' terms are held; the numbers of the others are reused.
        let live: HashSet<&str> = ["read", "text", "fil"].into();
        assert_eq!(index.ids.keys().map(String::as_str).collect::<HashSet<_>>(), live);
        let numbers = index.postings.len();
        index.replace("fs", [(3, "list directory".to_owned())]);
        index.replace("gh", [(2, "create an issue".to_owned())]);
        assert_eq!(index.postings.len(), numbers, "freed term numbers are reused");
        assert_eq!(index.search("issue", 5)[0].doc, 2);
        assert_eq!(index.search("directories", 5)[0].doc, 3);
        assert!(index.search("read", 5).is_empty());
        for (term, &id) in &index.ids {
            assert_eq!(&index.postings[id as usize].0, term);
            assert!(!index.postings[id as usize].1.is_empty());
        }
    }
}
