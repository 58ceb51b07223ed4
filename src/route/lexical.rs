//! The lexical half of the tool router: terms from tool documents and queries, and a BM25
//! index over them that one server's tools can be replaced in without a rebuild.
//!
//! Terms: identifiers are split (`camelCase`, `snake_case`, `kebab-case`, `server__tool`),
//! lowercased, stripped of a few common English suffixes (a light stemmer: plurals, `-ing`,
//! `-ed`), and stop words dropped. Pure: no I/O.

#![forbid(unsafe_code)]

use std::collections::HashMap;

/// BM25's term-frequency saturation.
const K1: f32 = 1.2;
/// BM25's length normalisation.
const B: f32 = 0.75;

/// Words too common to tell tools apart (English function words and the filler of requests).
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
    let mut out = Vec::new();
    for word in words(text) {
        let lower = word.to_lowercase();
        if lower.is_empty() || STOP.contains(&lower.as_str()) {
            continue;
        }
        out.push(stem(&lower));
    }
    out
}

/// Splits on anything but letters and digits, and inside identifiers at lower→upper and
/// letter↔digit changes (`readFile2` → `read`, `File`, `readFile2`, `2`: the whole identifier
/// is kept beside its parts).
fn words(text: &str) -> Vec<&str> {
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

/// A light suffix stemmer: enough that "files"/"file", "searching"/"search", "created"/"create"
/// meet.
fn stem(word: &str) -> String {
    let w = word;
    let n = w.len();
    let cut = |suffix: &str, keep: usize| -> Option<String> {
        (w.ends_with(suffix) && n > suffix.len() + keep).then(|| w[..n - suffix.len()].to_owned())
    };
    if let Some(s) = cut("ies", 1) {
        return s + "y";
    }
    for (suffix, keep) in [("ing", 3), ("ed", 3), ("es", 3), ("s", 2)] {
        if suffix == "s" && (w.ends_with("ss") || w.ends_with("us")) {
            continue;
        }
        if let Some(s) = cut(suffix, keep) {
            // "created" → "creat", "creates" → "creat": both meet at the same stem.
            return s.trim_end_matches('e').to_owned();
        }
    }
    w.trim_end_matches('e').to_owned()
}

/// A BM25 index over documents grouped by owner (a server), replaceable per owner.
#[derive(Debug, Default, Clone)]
pub struct Bm25 {
    /// Documents by id: owner, terms and their counts, length.
    docs: HashMap<usize, Doc>,
    /// Term → the ids of the documents holding it.
    postings: HashMap<String, Vec<usize>>,
    next: usize,
    total_len: usize,
}

#[derive(Debug, Clone)]
struct Doc {
    owner: String,
    key: String,
    counts: HashMap<String, u32>,
    len: usize,
}

/// One match: the document's key, its score, and the query terms it matched.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The document's key (e.g. the upstream tool name).
    pub key: String,
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

    /// Replaces every document of `owner` by `docs` (`(key, text)` pairs): one server's
    /// `list_changed` touches only its own documents.
    pub fn replace(&mut self, owner: &str, docs: impl IntoIterator<Item = (String, String)>) {
        self.remove(owner);
        for (key, text) in docs {
            let terms = terms(&text);
            let mut counts: HashMap<String, u32> = HashMap::new();
            for t in &terms {
                *counts.entry(t.clone()).or_default() += 1;
            }
            let id = self.next;
            self.next += 1;
            for t in counts.keys() {
                self.postings.entry(t.clone()).or_default().push(id);
            }
            self.total_len += terms.len();
            self.docs.insert(id, Doc { owner: owner.to_owned(), key, counts, len: terms.len() });
        }
    }

    /// Removes every document of `owner`.
    pub fn remove(&mut self, owner: &str) {
        let gone: Vec<usize> =
            self.docs.iter().filter(|(_, d)| d.owner == owner).map(|(id, _)| *id).collect();
        for id in gone {
            let doc = self.docs.remove(&id).expect("listed");
            self.total_len -= doc.len;
            for t in doc.counts.keys() {
                if let Some(list) = self.postings.get_mut(t) {
                    list.retain(|d| *d != id);
                    if list.is_empty() {
                        self.postings.remove(t);
                    }
                }
            }
        }
    }

    /// Bytes the postings and documents take, counted from their contents.
    pub fn memory_bytes(&self) -> usize {
        let docs: usize = self
            .docs
            .values()
            .map(|d| {
                64 + d.owner.len()
                    + d.key.len()
                    + d.counts.keys().map(|t| t.len() + 40).sum::<usize>()
            })
            .sum();
        let postings: usize = self.postings.iter().map(|(t, l)| t.len() + 48 + l.len() * 8).sum();
        docs + postings
    }

    /// How many documents.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The `k` best documents for `query`, best first (ties by key, for stable output).
    pub fn search(&self, query: &str, k: usize) -> Vec<Hit> {
        let n = self.docs.len() as f32;
        if n == 0.0 {
            return Vec::new();
        }
        let avg = self.total_len as f32 / n;
        let mut q = terms(query);
        q.sort();
        q.dedup();
        let mut scores: HashMap<usize, (f32, Vec<String>)> = HashMap::new();
        for term in &q {
            let Some(list) = self.postings.get(term) else { continue };
            let df = list.len() as f32;
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            for id in list {
                let doc = &self.docs[id];
                let tf = doc.counts[term] as f32;
                let norm = tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * doc.len as f32 / avg));
                let entry = scores.entry(*id).or_default();
                entry.0 += idf * norm;
                entry.1.push(term.clone());
            }
        }
        let mut hits: Vec<Hit> = scores
            .into_iter()
            .map(|(id, (score, matched))| Hit { key: self.docs[&id].key.clone(), score, matched })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.key.cmp(&b.key)));
        hits.truncate(k);
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        index.replace(
            "fs",
            [
                ("fs__read_file".to_owned(), "read_file Read the contents of a file".to_owned()),
                (
                    "fs__list_directory".to_owned(),
                    "list_directory List files in a directory".to_owned(),
                ),
            ],
        );
        index.replace(
            "gh",
            [(
                "gh__create_issue".to_owned(),
                "create_issue Create a new issue in a GitHub repository".to_owned(),
            )],
        );
        let hits = index.search("open an issue on github", 5);
        assert_eq!(hits[0].key, "gh__create_issue");
        assert!(hits[0].matched.contains(&"github".to_owned()));
        assert_eq!(
            index.search("what files are in this directory", 1)[0].key,
            "fs__list_directory"
        );
        // One server's change leaves the others' documents in place.
        index.replace("fs", [("fs__read_text".to_owned(), "read text file".to_owned())]);
        assert_eq!(index.len(), 2);
        assert!(index.search("directory", 5).is_empty());
        assert_eq!(index.search("issue", 5)[0].key, "gh__create_issue");
        index.remove("gh");
        assert!(index.search("issue", 5).is_empty());
        assert_eq!(index.total_len, index.docs.values().map(|d| d.len).sum::<usize>());
    }
}
