//! One sentence judged by what it asks the model to do. Its words are read as classes
//! (`lexicon.rs`); a request is a combination of them in one sentence (an order to move data
//! out names a way out and something to move; an order to keep something from the user names
//! the user, telling, and an action), weighed up when the sentence is addressed to the model
//! and down when what it asks is the tool's own business. Linear in the sentence.

use super::lexicon::{self, Classes, *};
pub(crate) use super::read::host_of;
use super::read::{self, imperative, read, sentence_names_ai};
use super::{Mode, Scope, Signal};

mod steering;

use steering::{other_tools, preference, redirection};

/// The most bytes of a sentence judged as one (a longer run of text is judged in pieces).
pub(crate) const MAX_SENTENCE: usize = 600;

/// What one sentence asks: each signal with its weight (1 weak to 3 strong) and why.
#[derive(Debug, Default)]
pub(crate) struct Judged {
    pub(crate) signals: Vec<(Signal, u32, String)>,
}

impl Judged {
    pub(crate) fn score(&self) -> u32 {
        self.signals.iter().map(|(_, w, _)| w).sum()
    }

    fn add(&mut self, signal: Signal, weight: u32, why: impl Into<String>) {
        if weight == 0 {
            return;
        }
        match self.signals.iter_mut().find(|(s, _, _)| *s == signal) {
            Some(entry) if entry.1 < weight => *entry = (signal, weight, why.into()),
            Some(_) => {}
            None => self.signals.push((signal, weight, why.into())),
        }
    }
}

/// One sentence as the rules read it: its words' classes, and what every rule asks of it.
struct Ctx<'s, 'a> {
    r: read::Read<'s>,
    lower: String,
    scope: &'s Scope<'a>,
    ai_named: bool,
    /// Addressed to the model: in a definition, "you", an order or an imperative opening; in
    /// a result (written for people), only words naming an AI.
    addressed: bool,
    /// It opens by describing (the tool says what it does).
    describes: bool,
    /// Actions a request can name.
    acts: Classes,
    /// Whose instructions: the reader's ("your", "all previous"), not a third party's.
    readers: bool,
    /// An address shown as an example ("e.g. https://...") is not a destination.
    example: bool,
    /// An address the text names that is not the tool's own (and not an example).
    dest: Option<&'s str>,
}

impl<'s, 'a> Ctx<'s, 'a> {
    fn new(sentence: &'s str, scope: &'s Scope<'a>) -> Self {
        let r = read(sentence);
        let lower = sentence.to_lowercase();
        let ai_named = sentence_names_ai(&lower);
        let mut c = Ctx {
            r,
            lower,
            scope,
            ai_named,
            addressed: false,
            describes: false,
            acts: SEND | READ | PASS | CALL | CHANGE | EXEC | DESTROY,
            readers: false,
            example: false,
            dest: None,
        };
        c.addressed = match scope.mode {
            Mode::Definition => c.has(YOU) || c.has(ORDER) || imperative(&c.r.first),
            Mode::Result => ai_named,
        };
        c.describes = lexicon::classes(&c.r.first) & DESCRIBE != 0;
        c.readers = c.has(PRIOR)
            || c.said(&[
                "your ",
                "all instructions",
                "any instructions",
                "all rules",
                "the above",
                "all prior",
                "all previous",
            ])
            || (scope.mode == Mode::Definition && c.has(YOU | OTHER));
        c.example = c.said(&["e.g.", "for example", "such as", "example:", "i.e."]);
        c.dest =
            c.r.destinations
                .iter()
                .copied()
                .find(|d| !scope.owns_host(host_of(d)))
                .filter(|_| !c.example);
        c
    }

    fn said(&self, needles: &[&str]) -> bool {
        needles.iter().any(|n| self.lower.contains(n))
    }

    fn has(&self, c: Classes) -> bool {
        self.r.mask & c != 0
    }

    /// Asked for: a word of the class that no negation governs ("do not include passwords"
    /// asks for nothing).
    fn asks(&self, c: Classes) -> bool {
        self.r.asked & c != 0
    }

    /// The word that put the sentence in class `c`.
    fn w(&self, c: Classes) -> &'s str {
        self.r.words[c.trailing_zeros() as usize]
    }

    fn own(&self, word: &str) -> bool {
        self.scope.owns(word)
    }
}

/// Judges one sentence. `scope` is what the text belongs to (a tool's own words and its
/// siblings' names, or a result).
pub(crate) fn judge(sentence: &str, scope: &Scope<'_>) -> Judged {
    let c = Ctx::new(sentence, scope);
    let mut j = Judged::default();
    for rules in [
        overrides,
        concealment,
        unchecked,
        secrets,
        harvest,
        exfiltration,
        other_tools,
        preference,
        redirection,
        commands,
    ] {
        rules(&c, &mut j);
    }
    // In a result, a sentence that names no AI and claims no authority is read as text for
    // people (an advisory describing an attack, a quoted example): each signal weighs one
    // less, so only strong combinations count.
    let authority = j.signals.iter().any(|(s, w, _)| *s == Signal::Override && *w >= 3);
    // In a definition, a sentence that speaks of attacks (a scanner's, a classifier's)
    // describes them, and weighs one less too.
    let about_attacks = c.said(&[
        "injection",
        "jailbreak",
        "attempts",
        "that try to",
        "malicious",
        "detect",
        "flags tool",
        "scan ",
        "classif",
    ]);
    let as_data = match c.scope.mode {
        Mode::Result => !c.ai_named && !authority,
        Mode::Definition => about_attacks,
    };
    if as_data {
        for (_, w, _) in &mut j.signals {
            *w = w.saturating_sub(1);
        }
        j.signals.retain(|(_, w, _)| *w > 0);
    }

    // Addressed to the model: an order strengthens what the sentence asks.
    if c.addressed && j.signals.iter().any(|(_, w, _)| *w >= 2) {
        j.add(
            Signal::Addressed,
            1,
            match c.scope.mode {
                Mode::Result => "addressed to an AI",
                Mode::Definition => "an order to the model",
            },
        );
    }
    j
}

/// Override: set aside the instructions the model has, speak with its authority, claim priority.
fn overrides(c: &Ctx<'_, '_>, j: &mut Judged) {
    if c.asks(IGNORE) && c.has(INSTRUCTIONS | CONVO) && (c.readers || c.addressed) {
        j.add(
            Signal::Override,
            3,
            format!(
                "asks to set aside instructions ({:?} … {:?})",
                c.w(IGNORE),
                c.w(INSTRUCTIONS | CONVO)
            ),
        );
    }
    let voice = c.said(read::AUTHORITY);
    if voice
        || (c.has(MARKER)
            && (c.r.first == "system" || c.r.first == "admin")
            && c.lower.get(..8).is_some_and(|h| h.contains(':')))
    {
        j.add(
            Signal::Override,
            2,
            "speaks with authority over the model (a system, admin or developer voice)",
        );
    }
    if c.said(&[
        "precedence over",
        "priority over",
        "higher priority than",
        "supersedes",
        "overrides",
    ]) && (c.has(INSTRUCTIONS)
        || c.r.other_tools
        || c.said(&["the user's request", "the user's instructions"]))
        && !c.has(ARGUMENT)
    {
        j.add(Signal::Override, 3, "claims priority over the user's or other instructions");
    }
}

/// Concealment: keep an action from the user, or take the user's check away.
fn concealment(c: &Ctx<'_, '_>, j: &mut Judged) {
    // Concealment: keep an action from the user.
    // "secretly send", "silently call": an adverb of hiding on an action; "hide" and
    // "conceal" hide something from someone, so the user must be named.
    let stealth =
        !matches!(c.w(HIDE).to_lowercase().as_str(), "hide" | "hidden" | "conceal" | "suppress");
    let opens_hidden =
        matches!(c.r.first.as_str(), "silently" | "secretly" | "quietly" | "covertly");
    if c.asks(HIDE)
        && c.asks(c.acts)
        && !c.describes
        && ((stealth && (c.addressed || opens_hidden)) || c.has(USER))
    {
        j.add(
            Signal::Concealment,
            3,
            format!("asks to act without the user seeing ({:?} … {:?})", c.w(HIDE), c.w(c.acts)),
        );
    }
    if c.r.negated & TELL != 0 && c.has(USER) {
        // "never tell a user that it is done before it is": guidance about a claim.
        let claim =
            c.said(&[" user that ", " users that ", " user it ", " user until ", " user unless "]);
        let about_this = c.said(&[
            "this step",
            "this instruction",
            "these instructions",
            "this note",
            "this tool",
            "this requirement",
            "about this",
            "this process",
            "this action",
            "this message",
            "this information",
            "this change",
            "the change",
        ]);
        // "never ask the user" skips a confirmation (weak); "never tell the user" hides.
        let asking = matches!(c.w(TELL).to_lowercase().as_str(), "ask" | "asking" | "confirm");
        let weight =
            if c.has(HIDE) || about_this || (c.asks(c.acts) && !claim && !asking) { 3 } else { 1 };
        j.add(
            Signal::Concealment,
            weight,
            format!("asks not to tell the user ({:?} … {:?})", c.w(TELL), c.w(USER)),
        );
    }
    let hidden_work = c.said(&[
        "usage",
        "this tool",
        "tool calls",
        "tools you called",
        "tool you called",
        "steps",
        "files that were read",
        "requests that were made",
        "each tool",
        "network requests",
    ]);
    if c.r.negated & TELL != 0 && hidden_work && !c.has(USER) {
        j.add(Signal::Concealment, 3, format!("asks not to tell what was done ({:?})", c.w(TELL)));
    }
    if c.said(&[
        "deny that",
        "tell them nothing",
        "say nothing",
        "pretend",
        "no need to tell",
        "no need to mention",
        "never announce",
        "answer no",
        "say no",
        "tell the user only",
        "that everything is fine",
        "as though",
        "out of their narration",
        "out of the narration",
        "out of the conversation",
        "do not reference",
        "don't reference",
        "\"disclosure\": \"none\"",
        "report_to_user\": false",
        "need to tell the user about",
    ]) && (c.has(USER) || !c.said(&["answer no", "say no"]))
    {
        j.add(Signal::Concealment, 3, "asks to deceive the user or keep quiet about the work");
    }
    if c.asks(HIDE) && c.has(USER) && !c.describes {
        j.add(Signal::Concealment, 2, format!("asks to leave something out ({:?})", c.w(HIDE)));
    }
}

/// The user's check taken away: act without asking or showing.
fn unchecked(c: &Ctx<'_, '_>, j: &mut Judged) {
    if c.said(&[
        "no longer need to check",
        "without first showing",
        "without asking the user",
        "without the user's approval",
        "without confirmation from the user",
        "don't need to ask",
        "do not need to ask",
        "skip the confirmation",
        "why wait for the user",
        "keep executing",
    ]) {
        j.add(Signal::Concealment, 3, "asks to act without the user's check");
    }
    if c.said(&[
        "user doesn't need to know",
        "user does not need to know",
        "user must not know",
        "user should not know",
        "user should not see",
        "user must not see",
        "without the user's knowledge",
        "without the user knowing",
        "without user knowledge",
        "keep this confidential",
        "keep this secret",
        "keep it secret",
        "do not disclose this",
        "don't disclose this",
    ]) {
        j.add(Signal::Concealment, 3, "asks to keep something from the user");
    }
}

/// Secrets: read or pass on credentials.
fn secrets(c: &Ctx<'_, '_>, j: &mut Judged) {
    // Secrets: read or pass on credentials.
    if !c.r.secret_paths.is_empty() && !c.scope.owns_any(&c.r.secret_paths) {
        let weight = if c.asks(PASS | SEND) || (c.asks(READ) && c.addressed && !c.describes) {
            3
        } else {
            1
        };
        j.add(
            Signal::Secrets,
            weight,
            format!("asks for a file that holds secrets ({:?})", c.r.secret_paths[0]),
        );
    }
    // Moving credentials (pass, send, read into an argument or elsewhere), not keeping them.
    let moves = c.asks(PASS | SEND) || (c.asks(READ) && c.has(ARGUMENT | EXTERNAL));
    if c.has(SECRET) && !c.own(c.w(SECRET)) && moves && c.addressed && !c.describes {
        j.add(
            Signal::Secrets,
            2,
            format!(
                "asks to read or pass on credentials ({:?} … {:?})",
                c.w(READ | PASS | SEND),
                c.w(SECRET)
            ),
        );
    }
}

/// Harvest: the model's own context (the conversation, the system prompt, its identity).
fn harvest(c: &Ctx<'_, '_>, j: &mut Judged) {
    // Harvest: the model's own context.
    if c.has(CONVO) && c.asks(PASS | SEND | READ | TELL) && !c.own(c.w(CONVO)) {
        let weight = if c.said(&[
            "system prompt",
            "previous messages",
            "prior messages",
            "chat history",
            "conversation history",
            "entire conversation",
            "whole conversation",
            "full conversation",
            "this conversation",
            "the conversation",
            "earlier messages",
            "your instructions",
            "your context",
            "your system",
            "messages so far",
            "everything the user",
        ]) {
            3
        } else {
            1
        };
        j.add(
            Signal::Harvest,
            weight,
            format!("asks for the model's conversation or instructions ({:?})", c.w(CONVO)),
        );
    }
    if c.said(read::HARVEST)
        && !c.own(c.w(CONVO))
        && lexicon::classes(&c.r.first) & NEG == 0
        && (c.scope.mode == Mode::Definition || c.ai_named)
        && (c.asks(PASS | SEND | READ | TELL) || c.r.asked & (CALL | CHANGE | EXEC | DESTROY) == 0)
    {
        j.add(Signal::Harvest, 3, "asks for what the user or the model said before");
    }
    if c.has(IDENTITY)
        && c.addressed
        && c.asks(PASS | SEND | TELL)
        && c.said(&["model", "llm", "assistant", " ai"])
    {
        j.add(Signal::Harvest, 1, "asks which model it is");
    }
}

/// Exfiltration: data to an address not the tool's own.
fn exfiltration(c: &Ctx<'_, '_>, j: &mut Judged) {
    if let Some(d) = c.dest {
        if c.asks(SEND | PASS | CHANGE)
            && (c.addressed || c.has(DATA | CONVO | SECRET | OTHER))
            && !c.describes
        {
            let weight = if c.has(DATA | CONVO | SECRET | OTHER | HIDE) { 3 } else { 2 };
            j.add(Signal::Exfiltration, weight, format!("asks to send data to {d:?}"));
        }
        if d.contains('?') && (d.contains('{') || d.contains('$') || d.contains('<')) {
            j.add(
                Signal::Exfiltration,
                3,
                format!("a web address built to carry data out ({d:?})"),
            );
        }
    }
    if c.asks(SEND | PASS)
        && c.has(EXTERNAL)
        && c.has(DATA | CONVO | SECRET)
        && c.addressed
        && !c.describes
    {
        j.add(
            Signal::Exfiltration,
            2,
            format!("asks to send data somewhere else ({:?} … {:?})", c.w(SEND), c.w(EXTERNAL)),
        );
    }
}

/// Commands, and text addressed to an AI inside a result or hidden from a page's readers.
fn commands(c: &Ctx<'_, '_>, j: &mut Judged) {
    // Commands.
    if let Some(cmd) = c.r.commands.first() {
        let weight = if (c.addressed && !c.describes) || c.has(EXEC) { 3 } else { 1 };
        j.add(Signal::Commands, weight, format!("a shell command ({cmd:?})"));
    }

    // In a result, text addressed to an AI that asks it to do anything is an injection by
    // itself: the result's author is not the user.
    if c.scope.mode == Mode::Result && c.ai_named {
        let orders = c.asks(c.acts | TELL | IGNORE | HIDE | PASS)
            || c.has(ORDER)
            || c.said(&[
                "reply",
                "respond",
                "answer",
                "end with",
                "recommend",
                "book ",
                "accept",
                "collect",
                "update",
                "mention",
                "summar",
                "instead",
                "comply",
                "fulfil",
            ]);
        if orders {
            j.add(Signal::Override, 3, "tells the AI reading it what to do");
        }
    }
    if c.scope.mode == Mode::Result
        && c.said(&[
            "<<sys>>",
            "[inst]",
            "operator message",
            "system_override",
            "-system]",
            "safety filter",
            "comply with all",
            "verified administrator",
        ])
    {
        j.add(Signal::Override, 3, "claims authority over the AI reading it");
    }
    if c.said(&[
        "display:none",
        "display: none",
        "opacity:0",
        "visibility:hidden",
        "font-size:0",
        "color:#ffffff",
        "color:#fff;",
        "aria-hidden",
        "<noscript",
        "ai-instructions",
    ]) && (c.ai_named || c.asks(c.acts | TELL))
    {
        j.add(Signal::Hidden, 2, "text hidden from the page's readers");
    }
}
