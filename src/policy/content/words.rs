//! Word lists found where words start, fast over data with few word starts.
//!
//! The cue words of a result (`sentences.rs`) and the literal words of credentials
//! (`secrets.rs`) are looked for in whole tool results, up to gigabytes of them (a spilled
//! result is scanned as it streams). An automaton reads every byte, about 0.4 GB/s; but a cue
//! only counts where a word starts (`ignore`, not the `ignore` inside `dontignoreme`), so text
//! with few word starts (a base64 blob, a long hex or alphanumeric run, which is what huge
//! results mostly are) needs no automaton at all: its few word starts are tried one by one. A
//! 4 KiB piece is first counted for bytes that are not ASCII letters or digits (a loop the
//! compiler vectorises); dense prose goes through the automaton as before.

use aho_corasick::{AhoCorasick, Anchored, Input, Match};

/// The piece counted at once.
const PIECE: usize = 4096;
/// Word starts in a piece up to which they are tried one by one.
const SPARSE: usize = 24;

/// An ASCII letter or digit (branch-free, so that loops over it vectorise).
fn word(b: u8) -> bool {
    (b.wrapping_sub(b'0') < 10) | ((b | 0x20).wrapping_sub(b'a') < 26)
}

/// How many bytes of `piece` are not ASCII letters or digits (counted 255 bytes at a time in
/// byte lanes: the loop vectorises).
fn not_words(piece: &[u8]) -> usize {
    piece.chunks(255).map(|c| usize::from(c.iter().fold(0u8, |n, &b| n + u8::from(!word(b))))).sum()
}

/// The end of the run of bytes `is` holds for, from `from`: byte by byte for a word's length,
/// then 64 bytes at a time while whole blocks hold (a fold the compiler vectorises), then byte
/// by byte.
pub(crate) fn run_end(bytes: &[u8], from: usize, is: impl Fn(u8) -> bool) -> usize {
    let mut i = from;
    let short = (from + 32).min(bytes.len());
    while i < short && is(bytes[i]) {
        i += 1;
    }
    if i < short {
        return i;
    }
    while i + 64 <= bytes.len() && bytes[i..i + 64].iter().fold(true, |all, &b| all & is(b)) {
        i += 64;
    }
    while i < bytes.len() && is(bytes[i]) {
        i += 1;
    }
    i
}

/// Whether a match may start at `i`: at the text's start, on a byte that is not a letter or
/// digit (a cue like `<!--` or `://`), or right after one.
fn starts_word(text: &[u8], i: usize) -> bool {
    i == 0 || !word(text[i - 1]) || !word(text[i])
}

/// The match of `ac` anchored at `i`, if `i` starts a word.
fn anchored(ac: &AhoCorasick, text: &[u8], longest: usize, i: usize) -> Option<Match> {
    if !starts_word(text, i) {
        return None;
    }
    ac.find(Input::new(text).span(i..(i + longest).min(text.len())).anchored(Anchored::Yes))
}

/// The matches of `ac` (built with `StartKind::Both`) in `text` that start a word, in order;
/// `each` returns false to stop. `longest` is the longest pattern's length.
pub(crate) fn find_at_word_starts(
    ac: &AhoCorasick,
    text: &[u8],
    longest: usize,
    mut each: impl FnMut(Match) -> bool,
) {
    // Where the last match ended (matches do not overlap).
    let mut done = 0;
    let mut at = 0;
    while at < text.len() {
        let end = (at + PIECE).min(text.len());
        let piece = &text[at..end];
        let starts = not_words(piece);
        if starts == 0 {
            // One run of letters and digits: only its first byte can start a word.
            if at >= done
                && let Some(m) = anchored(ac, text, longest, at)
            {
                done = m.end();
                if !each(m) {
                    return;
                }
            }
        } else if starts <= SPARSE {
            // The word starts: the piece's first byte, each byte that is not a letter or
            // digit, and the one after it.
            let mut i = at;
            while i < end {
                if i >= done
                    && let Some(m) = anchored(ac, text, longest, i)
                {
                    done = m.end();
                    if !each(m) {
                        return;
                    }
                }
                // On to the next byte that is not a letter or digit (or the one after it).
                let next = run_end(piece, i - at, word) + at;
                i = if next == i { i + 1 } else { next };
            }
        } else {
            let input = Input::new(text).span(at.max(done)..(end + longest).min(text.len()));
            for m in ac.find_iter(input) {
                if m.start() >= end {
                    break;
                }
                if starts_word(text, m.start()) {
                    done = m.end();
                    if !each(m) {
                        return;
                    }
                }
            }
        }
        at = end;
    }
}

#[cfg(test)]
mod tests {
    use aho_corasick::{AhoCorasickBuilder, AhoCorasickKind, MatchKind, StartKind};

    use super::*;

    fn found(patterns: &[&str], text: &str) -> Vec<(usize, usize)> {
        let ac = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostLongest)
            .start_kind(StartKind::Both)
            .kind(Some(AhoCorasickKind::DFA))
            .build(patterns)
            .unwrap();
        let longest = patterns.iter().map(|p| p.len()).max().unwrap();
        let mut out = Vec::new();
        find_at_word_starts(&ac, text.as_bytes(), longest, |m| {
            out.push((m.start(), m.end()));
            true
        });
        out
    }

    /// The same matches as a plain search keeping those at word starts, whether the text is
    /// sparse or dense in word starts, across pieces.
    #[test]
    fn sparse_and_dense_agree_with_a_plain_search() {
        let patterns = ["ignore", "secret", "<!--", "://", "sk-ant-", "sk-"];
        let blob = "Zm9vYmFy".repeat(1000);
        let prose = "please ignore this. the secret is here, x://y <!-- z --> sk-ant-1 sk-2 ";
        let texts = [
            format!("{blob}ignore{blob} ignore{blob}.secret{blob}"),
            prose.repeat(200),
            format!("{}{blob}{}", prose.repeat(3), prose),
            "dontignoreme topsecret".to_owned(),
            format!("{}ignore", "a".repeat(PIECE - 3)),
        ];
        for text in &texts {
            let ac = AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::LeftmostLongest)
                .build(patterns)
                .unwrap();
            let want: Vec<(usize, usize)> = ac
                .find_iter(text)
                .filter(|m| starts_word(text.as_bytes(), m.start()))
                .map(|m| (m.start(), m.end()))
                .collect();
            assert_eq!(found(&patterns, text), want, "{:.80}", text);
        }
        assert!(found(&patterns, "dontignoreme topsecret").is_empty());
        assert_eq!(found(&patterns, "key sk-ant-x"), vec![(4, 11)]);
    }
}
