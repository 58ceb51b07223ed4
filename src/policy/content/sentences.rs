//! Sentences: where a text is cut for judging. A full stop counts when a space or the end
//! follows it (not in `~/.ssh`, `e.g.`, `3.5`); a blank line, a list item or a heading starts
//! a new one; a run longer than [`MAX_SENTENCE`] bytes is cut at a space. In a result (text
//! for people, perhaps megabytes of it) only sentences holding a cue word are judged: the
//! cues are found in one pass.

use std::ops::Range;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind, StartKind};

use super::judge::MAX_SENTENCE;
use super::{Mode, words};

/// Words without which no sentence of a result is an injection (each rule of the judge needs
/// one of them in result mode).
const CUES: &[&str] = &[
    // Setting instructions aside, authority.
    "ignore",
    "disregard",
    "forget",
    "override",
    "instruction",
    "system:",
    "[system",
    "<system",
    "system message",
    "system prompt",
    "system note",
    "<<sys",
    "[inst]",
    "operator",
    "precedence",
    "priority",
    "safety filter",
    "comply with",
    // An AI named.
    "assistant",
    " ai ",
    " ai,",
    " ai:",
    "ai:",
    "ai,",
    "a.i.",
    "llm",
    "language model",
    "ai model",
    "ai agent",
    "chatgpt",
    "claude",
    "copilot",
    "gemini",
    "アシスタント",
    "助手",
    "ассистент",
    "asistente",
    // Secrets and the model's context.
    "secret",
    "password",
    "credential",
    "private key",
    "ssh",
    ".env",
    "api key",
    "conversation",
    "chat history",
    "previous messages",
    // Keeping things from the user.
    "tell the user",
    "inform the user",
    "without telling",
    "without informing",
    "silently",
    "secretly",
    "quietly",
    "covertly",
    // Hidden markup and data carried out.
    "<!--",
    "display:none",
    "display: none",
    "noscript",
    "opacity:0",
    "aria-hidden",
    "visibility:hidden",
    "?q=",
    "?data=",
    "?d=",
    "={",
    // Commands.
    "rm -rf",
    "| sh",
    "| bash",
    "curl http",
    "wget http",
    // Other languages.
    "ignora",
    "忽略",
    "指令",
    "無視",
    "игнор",
    "инструкц",
    "anweisung",
    "consigne",
];

fn cues() -> &'static AhoCorasick {
    static AC: OnceLock<AhoCorasick> = OnceLock::new();
    AC.get_or_init(|| {
        AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostFirst)
            // A full DFA: one table lookup a byte, whatever the text; anchored searches too
            // (`words.rs` tries sparse word starts one by one).
            .kind(Some(AhoCorasickKind::DFA))
            .start_kind(StartKind::Both)
            .build(CUES)
            .expect("the cue words build")
    })
}

fn boundary_before(text: &[u8], i: usize) -> bool {
    // `i` is the byte after a sentence's end.
    match text[..i].last() {
        Some(b'\n') => true,
        Some(b'.' | b'!' | b'?' | b';') => text.get(i).is_none_or(|b| b.is_ascii_whitespace()),
        _ => false,
    }
}

fn ends_cjk(text: &str, i: usize) -> bool {
    text[..i].ends_with(['。', '！', '？', '；'])
}

/// The sentences of `text` (byte ranges), each at most [`MAX_SENTENCE`] bytes (cut at a char
/// boundary, at a space when there is one).
pub(crate) fn split(text: &str, mode: Mode) -> Vec<Range<usize>> {
    match mode {
        Mode::Definition => all(text, 0..text.len()),
        Mode::Result => cued(text),
    }
}

fn all(text: &str, within: Range<usize>) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut start = within.start;
    let mut i = within.start;
    while i < within.end {
        i += 1;
        while i < within.end && !text.is_char_boundary(i) {
            i += 1;
        }
        let cut = boundary_before(bytes, i) || ends_cjk(text, i);
        if cut || i - start >= MAX_SENTENCE || i == within.end {
            let mut end = i;
            if !cut && i - start >= MAX_SENTENCE && i < within.end {
                // Cut at the last space if there is one in the second half.
                if let Some(sp) = text[start..i].rfind(' ').filter(|&p| p > MAX_SENTENCE / 2) {
                    end = start + sp + 1;
                    i = end;
                }
            }
            if !text[start..end].trim().is_empty() {
                out.push(start..end);
            }
            start = end;
        }
    }
    out
}

/// The sentences around each cue, each once.
fn cued(text: &str) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut out: Vec<Range<usize>> = Vec::new();
    let longest = CUES.iter().map(|c| c.len()).max().unwrap_or(0);
    let mut found = Vec::new();
    words::find_at_word_starts(cues(), bytes, longest, |m| {
        found.push(m);
        true
    });
    for m in found {
        if out.last().is_some_and(|r| r.end > m.start()) {
            continue;
        }
        // Back to the sentence's start, at most MAX_SENTENCE bytes.
        let floor = m.start().saturating_sub(MAX_SENTENCE);
        let mut s = m.start();
        while s > floor && !boundary_before(bytes, s) {
            s -= 1;
        }
        while !text.is_char_boundary(s) {
            s += 1;
        }
        let ceiling = (m.end() + MAX_SENTENCE).min(text.len());
        let mut e = m.end();
        while e < ceiling && !boundary_before(bytes, e) {
            e += 1;
        }
        while !text.is_char_boundary(e) {
            e += 1;
        }
        let s = out.last().map_or(s, |r| s.max(r.end));
        if s < e {
            out.push(s..e);
        }
    }
    out
}
