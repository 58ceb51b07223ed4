//! What flows through the host that the model will read: tool definitions (poisoning, see
//! `policy::poison`), tool results and resource contents (indirect prompt injection), and
//! credentials in either direction (`secrets.rs`). Sans-IO: text in, findings out.
//!
//! Text is judged a sentence at a time by what it asks the model to do (`judge.rs`): set its
//! instructions aside, keep something from the user, read or pass on credentials or the
//! conversation, send data to an address, give orders about other tools, prefer this tool,
//! send money or mail to a fixed place, run a shell command. Before that, what a person would
//! not see is brought out and judged too: zero-width, bidirectional and tag characters (tag
//! characters spell hidden ASCII), HTML comments, and base64, hex, percent- or
//! entity-encoded runs. How well this does, on corpora it was never tuned on and on real
//! servers' tools, is in docs/policy.md.

mod decode;
mod judge;
mod lexicon;
mod read;
pub mod secrets;
mod sentences;
pub mod stream;
#[cfg(test)]
mod tests;
mod weigh;
mod words;

use std::collections::HashSet;
use std::ops::Range;

pub(crate) use decode::mostly_latin;

/// The score at which a sentence (or a definition's sentences together) is flagged.
pub const THRESHOLD: u32 = 3;

/// One kind of signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Signal {
    /// Text a person would not see: zero-width, bidirectional or tag characters, an HTML
    /// comment, an encoded run.
    Hidden,
    /// An order to keep something from the user.
    Concealment,
    /// An attempt to set the model's instructions aside or to speak with authority over them.
    Override,
    /// Reading or passing on credentials, or files that hold them.
    Secrets,
    /// Asking for the model's conversation, instructions or identity.
    Harvest,
    /// Sending data to an address.
    Exfiltration,
    /// Orders about other tools: call one first, change another's arguments.
    OtherTools,
    /// Self-promotion aimed at the model's choice of tool, or running other tools down.
    Preference,
    /// A fixed destination for payments or messages.
    Redirection,
    /// A shell command that destroys or fetches and runs.
    Commands,
    /// A language other than the rest of the definition's.
    OtherLanguage,
    /// The sentence is addressed to the model (an order, "you", an AI named in a result).
    Addressed,
    /// A parameter that asks for the conversation, credentials or the model's instructions.
    Parameter,
    /// The learned model (`weigh.rs`) reads the sentence as a request to the model.
    Weighed,
}

impl Signal {
    /// The signal's name (`snake_case`).
    pub fn name(self) -> &'static str {
        match self {
            Signal::Hidden => "hidden",
            Signal::Concealment => "concealment",
            Signal::Override => "override",
            Signal::Secrets => "secrets",
            Signal::Harvest => "harvest",
            Signal::Exfiltration => "exfiltration",
            Signal::OtherTools => "other_tools",
            Signal::Preference => "preference",
            Signal::Redirection => "redirection",
            Signal::Commands => "commands",
            Signal::OtherLanguage => "other_language",
            Signal::Addressed => "addressed",
            Signal::Parameter => "parameter",
            Signal::Weighed => "weighed",
        }
    }
}

/// A flagged text: where, which sentence, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// Where: `description`, `inputSchema/properties/x/description`, `content/0/text`, ...
    pub location: String,
    /// The signals found (each once).
    pub signals: Vec<Signal>,
    /// The sentence, as shown (control and invisible characters escaped, cut at 200
    /// characters).
    pub excerpt: String,
    /// Why, in words: one reason a signal.
    pub reasons: Vec<String>,
    /// The sum of the signals' weights.
    pub score: u32,
    /// The sentence's bytes in the text it was found in (for redaction).
    #[serde(skip)]
    pub span: Range<usize>,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {:?}: {}", self.location, self.excerpt, self.reasons.join("; "))
    }
}

/// What is being read: a tool's definition (written for the model) or a result (written, as a
/// rule, for people).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A tool's definition, prompt or server instructions.
    Definition,
    /// A tool's result or a resource's contents.
    Result,
}

/// What a text belongs to: the tool it describes (its own words and name), the other tools of
/// its server and of other servers.
#[derive(Debug, Clone)]
pub struct Scope<'a> {
    pub(crate) mode: Mode,
    self_name: &'a str,
    own: HashSet<String>,
    siblings: &'a [&'a str],
    foreign: &'a [&'a str],
    server: Option<&'a str>,
    /// Whether the definition as a whole is written mostly in Latin letters.
    latin: bool,
    /// The siblings' names as their lower-cased parts run together (`listFollowedProjects`
    /// and `list_followed_projects` are one), made on first use.
    sibling_keys: std::sync::OnceLock<HashSet<String>>,
}

impl<'a> Scope<'a> {
    /// The scope of a result or of text with no tool of its own.
    pub fn result() -> Scope<'static> {
        Scope {
            mode: Mode::Result,
            self_name: "",
            own: HashSet::new(),
            siblings: &[],
            foreign: &[],
            server: None,
            latin: true,
            sibling_keys: std::sync::OnceLock::new(),
        }
    }

    /// The scope of tool `name`'s definition: `own` are words of its name and parameter names
    /// (what it is for), `siblings` its server's other tools, `foreign` other servers' tools.
    pub fn definition(
        name: &'a str,
        own: impl IntoIterator<Item = String>,
        siblings: &'a [&'a str],
        foreign: &'a [&'a str],
    ) -> Scope<'a> {
        let mut words: HashSet<String> = HashSet::new();
        for w in own.into_iter().chain(std::iter::once(name.to_owned())) {
            for part in split_identifier(&w) {
                words.insert(part.trim_end_matches('s').to_owned());
                words.insert(part);
            }
        }
        Scope {
            mode: Mode::Definition,
            self_name: name,
            own: words,
            siblings,
            foreign,
            server: None,
            latin: true,
            sibling_keys: std::sync::OnceLock::new(),
        }
    }

    /// The server the text comes from (its name counts as the tool's own domain).
    pub fn server(mut self, server: &'a str) -> Self {
        self.server = Some(server);
        self
    }

    pub(crate) fn set_latin(&mut self, latin: bool) {
        self.latin = latin;
    }

    /// Whether `word` (lower-case) is one of the tool's own.
    pub(crate) fn owns(&self, word: &str) -> bool {
        let w = word.to_lowercase();
        // A lower-case word of letters and digits is its own only part.
        let parts = w.contains(|c: char| !c.is_alphanumeric());
        !w.is_empty()
            && (self.own.contains(&w)
                || self.own.contains(w.trim_end_matches('s'))
                || parts
                    && split_identifier(&w).iter().any(|p| p.len() > 2 && self.own.contains(p)))
    }

    pub(crate) fn owns_any(&self, paths: &[&str]) -> bool {
        paths.iter().any(|p| {
            p.split(|c: char| !c.is_alphanumeric()).filter(|s| s.len() > 2).any(|s| {
                let s = s.to_lowercase();
                self.own.iter().any(|w| w.len() > 2 && (w.contains(&s) || s.contains(w.as_str())))
            })
        })
    }

    pub(crate) fn owns_host(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        self.server.is_some_and(|s| {
            split_identifier(s).iter().any(|p| p.len() > 3 && host.contains(p.as_str()))
        }) || self.own.iter().any(|w| w.len() > 4 && host.contains(w.as_str()))
    }

    pub(crate) fn is_self(&self, name: &str) -> bool {
        !self.self_name.is_empty() && name.eq_ignore_ascii_case(self.self_name)
    }

    pub(crate) fn is_sibling(&self, name: &str) -> bool {
        let keys = self
            .sibling_keys
            .get_or_init(|| self.siblings.iter().map(|s| split_identifier(s).concat()).collect());
        keys.contains(&split_identifier(name).concat())
            || self.siblings.iter().any(|s| s.eq_ignore_ascii_case(name))
    }

    pub(crate) fn is_foreign(&self, name: &str) -> bool {
        name.len() > 3
            && !self.is_sibling(name)
            && self.foreign.iter().any(|s| s.eq_ignore_ascii_case(name))
    }
}

/// The lower-cased parts of an identifier: `sendEmail`, `send_email`, `send-email` → send,
/// email.
pub(crate) fn split_identifier(s: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                parts.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            parts.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        parts.push(cur);
    }
    parts
}

/// Shows a sentence: invisible and control characters escaped, at most 200 characters.
pub(crate) fn excerpt(s: &str) -> String {
    let mut out = String::new();
    for c in s.trim().chars().take(200) {
        if decode::is_invisible(c) || c.is_control() && c != ' ' {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// Judges one text (one string of a definition, or one text of a result) at `location`:
/// every sentence whose signals reach [`THRESHOLD`], and (for splitting payloads across
/// sentences) the weaker ones with a score of 2, which a definition adds up.
pub fn judge_text(location: &str, text: &str, scope: &Scope<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    judge_into(location, text, scope, 0, &mut out);
    out
}

/// How deep decoded text is judged again (base64 of hex of ...).
const MAX_DEPTH: u32 = 2;

fn judge_into(location: &str, text: &str, scope: &Scope<'_>, depth: u32, out: &mut Vec<Finding>) {
    let hidden = decode::hidden(text);
    let visible = hidden.visible.as_deref().unwrap_or(text);
    // Text a person would not see at all.
    if let Some(why) = &hidden.invisible {
        out.push(Finding {
            location: location.to_owned(),
            signals: vec![Signal::Hidden],
            excerpt: excerpt(text),
            reasons: vec![why.clone()],
            score: THRESHOLD,
            span: 0..text.len(),
        });
    }
    if let Some(tags) = &hidden.tags {
        let mut inner = Vec::new();
        judge_into(location, tags, scope, depth + 1, &mut inner);
        for mut f in inner {
            f.reasons.insert(0, "in Unicode tag characters (invisible)".into());
            f.span = 0..text.len();
            out.push(f);
        }
    }
    // Offsets into `text` when nothing invisible was taken out (else the whole text).
    let in_text = |span: Range<usize>| if hidden.visible.is_none() { span } else { 0..text.len() };
    let latin_text = scope.latin;
    for span in sentences::split(visible, scope.mode) {
        let sentence = &visible[span.clone()];
        let mut j = judge::judge(sentence, scope);
        // Weighed only when the rules alone do not flag it (it could add nothing then).
        let weighed = (j.score() < THRESHOLD).then(|| weigh::weigh(sentence, location, scope, &j));
        if let Some(weighed) = weighed.filter(|w| w.flagged) {
            let weight = THRESHOLD - j.score().min(THRESHOLD - 1);
            j.signals.push((
                Signal::Weighed,
                weight,
                format!(
                    "reads as a request to the model (weighed {:.1}: {})",
                    weighed.score,
                    weighed.top.join(", ")
                ),
            ));
        }
        if j.signals.is_empty() {
            continue;
        }
        if latin_text && scope.mode == Mode::Definition && !decode::mostly_latin(sentence) {
            j.signals.push((Signal::OtherLanguage, 1, "in another script than the rest".into()));
        }
        let score = j.score();
        if score >= 2 {
            out.push(Finding {
                location: location.to_owned(),
                signals: j.signals.iter().map(|(s, _, _)| *s).collect(),
                excerpt: excerpt(sentence),
                reasons: j.signals.iter().map(|(_, _, why)| why.clone()).collect(),
                score,
                span: in_text(span),
            });
        }
    }
    if depth >= MAX_DEPTH {
        return;
    }
    // Encoded runs and comments, judged as text of their own.
    for decoded in decode::encoded(visible, scope.mode) {
        let mut inner = Vec::new();
        judge_into(location, &decoded.text, scope, depth + 1, &mut inner);
        let natural = decode::natural_language(&decoded.text);
        if inner.is_empty()
            && natural
            && decoded.kind != "an HTML comment"
            && scope.mode == Mode::Definition
        {
            out.push(Finding {
                location: location.to_owned(),
                signals: vec![Signal::Hidden],
                excerpt: excerpt(&decoded.text),
                reasons: vec![format!("text hidden as {}", decoded.kind)],
                score: 2,
                span: in_text(decoded.span.clone()),
            });
        }
        for mut f in inner {
            f.reasons.insert(0, format!("hidden as {}", decoded.kind));
            if !f.signals.contains(&Signal::Hidden) {
                f.signals.insert(0, Signal::Hidden);
                f.score += 1;
            }
            f.span = in_text(decoded.span.clone());
            out.push(f);
        }
    }
}

/// Every sentence of `text` with its features, as the judge weighs them (for fitting the
/// weights: `ringmcp scan --features`).
#[doc(hidden)]
pub fn sentence_features(
    location: &str,
    text: &str,
    scope: &Scope<'_>,
) -> Vec<(String, Vec<String>)> {
    let hidden = decode::hidden(text);
    let visible = hidden.visible.as_deref().unwrap_or(text);
    sentences::split(visible, scope.mode)
        .into_iter()
        .map(|span| {
            let sentence = &visible[span];
            let j = judge::judge(sentence, scope);
            (sentence.to_owned(), weigh::features(sentence, location, scope, &j))
        })
        .collect()
}

/// Flagged findings only (score at [`THRESHOLD`] or more), each sentence once.
pub fn flagged(findings: Vec<Finding>) -> Vec<Finding> {
    let mut seen = HashSet::new();
    findings
        .into_iter()
        .filter(|f| f.score >= THRESHOLD)
        .filter(|f| seen.insert((f.location.clone(), f.span.clone(), f.excerpt.clone())))
        .collect()
}

/// Judges a result's or a resource's text: the sentences that read as instructions to the
/// model.
pub fn scan_result_text(location: &str, text: &str) -> Vec<Finding> {
    flagged(judge_text(location, text, &Scope::result()))
}
