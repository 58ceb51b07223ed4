//! One sentence judged by what it asks the model to do. Its words are read as classes
//! (`lexicon.rs`); a request is a combination of them in one sentence (an order to move data
//! out names a way out and something to move; an order to keep something from the user names
//! the user, telling, and an action), weighed up when the sentence is addressed to the model
//! and down when what it asks is the tool's own business. Linear in the sentence.

use super::lexicon::{self, Classes, *};
pub(crate) use super::read::host_of;
use super::read::{self, imperative, looks_like_tool, read, sentence_names_ai};
use super::{Mode, Scope, Signal};

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

/// Judges one sentence. `scope` is what the text belongs to (a tool's own words and its
/// siblings' names, or a result).
pub(crate) fn judge(sentence: &str, scope: &Scope<'_>) -> Judged {
    let r = read(sentence);
    let lower = sentence.to_lowercase();
    let said = |needles: &[&str]| needles.iter().any(|n| lower.contains(n));
    let mut j = Judged::default();
    let has = |c: Classes| r.mask & c != 0;
    // Asked for: a word of the class that no negation governs ("do not include passwords"
    // asks for nothing).
    let asks = |c: Classes| r.asked & c != 0;
    let w = |c: Classes| r.words[c.trailing_zeros() as usize];
    let ai_named = sentence_names_ai(&lower);
    // Addressed to the model: in a definition, "you", an order or an imperative opening; in a
    // result (written for people), only words naming an AI.
    let addressed = match scope.mode {
        Mode::Definition => has(YOU) || has(ORDER) || imperative(&r.first),
        Mode::Result => ai_named,
    };
    let describes = lexicon::classes(&r.first) & DESCRIBE != 0;
    let own = |word: &str| scope.owns(word);
    let acts = SEND | READ | PASS | CALL | CHANGE | EXEC | DESTROY;

    // Override: set aside the instructions the model has.
    // Whose instructions: the reader's ("your", "all previous"), not a third party's.
    let readers = has(PRIOR)
        || said(&[
            "your ",
            "all instructions",
            "any instructions",
            "all rules",
            "the above",
            "all prior",
            "all previous",
        ])
        || (scope.mode == Mode::Definition && has(YOU | OTHER));
    if asks(IGNORE) && has(INSTRUCTIONS | CONVO) && (readers || addressed) {
        j.add(
            Signal::Override,
            3,
            format!(
                "asks to set aside instructions ({:?} … {:?})",
                w(IGNORE),
                w(INSTRUCTIONS | CONVO)
            ),
        );
    }
    let voice = said(read::AUTHORITY);
    if voice
        || (has(MARKER)
            && (r.first == "system" || r.first == "admin")
            && lower.get(..8).is_some_and(|h| h.contains(':')))
    {
        j.add(
            Signal::Override,
            2,
            "speaks with authority over the model (a system, admin or developer voice)",
        );
    }
    if said(&[
        "precedence over",
        "priority over",
        "higher priority than",
        "supersedes",
        "overrides",
    ]) && (has(INSTRUCTIONS)
        || r.other_tools
        || said(&["the user's request", "the user's instructions"]))
        && !has(ARGUMENT)
    {
        j.add(Signal::Override, 3, "claims priority over the user's or other instructions");
    }

    // Concealment: keep an action from the user.
    // "secretly send", "silently call": an adverb of hiding on an action; "hide" and
    // "conceal" hide something from someone, so the user must be named.
    let stealth =
        !matches!(w(HIDE).to_lowercase().as_str(), "hide" | "hidden" | "conceal" | "suppress");
    let opens_hidden = matches!(r.first.as_str(), "silently" | "secretly" | "quietly" | "covertly");
    if asks(HIDE)
        && asks(acts)
        && !describes
        && ((stealth && (addressed || opens_hidden)) || has(USER))
    {
        j.add(
            Signal::Concealment,
            3,
            format!("asks to act without the user seeing ({:?} … {:?})", w(HIDE), w(acts)),
        );
    }
    if r.negated & TELL != 0 && has(USER) {
        // "never tell a user that it is done before it is": guidance about a claim.
        let claim =
            said(&[" user that ", " users that ", " user it ", " user until ", " user unless "]);
        let about_this = said(&[
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
        let asking = matches!(w(TELL).to_lowercase().as_str(), "ask" | "asking" | "confirm");
        let weight =
            if has(HIDE) || about_this || (asks(acts) && !claim && !asking) { 3 } else { 1 };
        j.add(
            Signal::Concealment,
            weight,
            format!("asks not to tell the user ({:?} … {:?})", w(TELL), w(USER)),
        );
    }
    let hidden_work = said(&[
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
    if r.negated & TELL != 0 && hidden_work && !has(USER) {
        j.add(Signal::Concealment, 3, format!("asks not to tell what was done ({:?})", w(TELL)));
    }
    if said(&[
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
    ]) && (has(USER) || !said(&["answer no", "say no"]))
    {
        j.add(Signal::Concealment, 3, "asks to deceive the user or keep quiet about the work");
    }
    if asks(HIDE) && has(USER) && !describes {
        j.add(Signal::Concealment, 2, format!("asks to leave something out ({:?})", w(HIDE)));
    }
    // The user's check taken away: act without asking or showing.
    if said(&[
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
    if said(&[
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

    // Secrets: read or pass on credentials.
    if !r.secret_paths.is_empty() && !scope.owns_any(&r.secret_paths) {
        let weight =
            if asks(PASS | SEND) || (asks(READ) && addressed && !describes) { 3 } else { 1 };
        j.add(
            Signal::Secrets,
            weight,
            format!("asks for a file that holds secrets ({:?})", r.secret_paths[0]),
        );
    }
    // Moving credentials (pass, send, read into an argument or elsewhere), not keeping them.
    let moves = asks(PASS | SEND) || (asks(READ) && has(ARGUMENT | EXTERNAL));
    if has(SECRET) && !own(w(SECRET)) && moves && addressed && !describes {
        j.add(
            Signal::Secrets,
            2,
            format!(
                "asks to read or pass on credentials ({:?} … {:?})",
                w(READ | PASS | SEND),
                w(SECRET)
            ),
        );
    }

    // Harvest: the model's own context.
    if has(CONVO) && asks(PASS | SEND | READ | TELL) && !own(w(CONVO)) {
        let weight = if said(&[
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
            format!("asks for the model's conversation or instructions ({:?})", w(CONVO)),
        );
    }
    if said(read::HARVEST)
        && !own(w(CONVO))
        && lexicon::classes(&r.first) & NEG == 0
        && (scope.mode == Mode::Definition || ai_named)
        && (asks(PASS | SEND | READ | TELL) || r.asked & (CALL | CHANGE | EXEC | DESTROY) == 0)
    {
        j.add(Signal::Harvest, 3, "asks for what the user or the model said before");
    }
    if has(IDENTITY)
        && addressed
        && asks(PASS | SEND | TELL)
        && said(&["model", "llm", "assistant", " ai"])
    {
        j.add(Signal::Harvest, 1, "asks which model it is");
    }

    // Exfiltration: data to an address not the tool's own.
    // An address shown as an example ("e.g. https://...") is not a destination.
    let example = said(&["e.g.", "for example", "such as", "example:", "i.e."]);
    let dest = r.destinations.iter().find(|d| !scope.owns_host(host_of(d))).filter(|_| !example);
    if let Some(d) = dest {
        if asks(SEND | PASS | CHANGE)
            && (addressed || has(DATA | CONVO | SECRET | OTHER))
            && !describes
        {
            let weight = if has(DATA | CONVO | SECRET | OTHER | HIDE) { 3 } else { 2 };
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
    if asks(SEND | PASS) && has(EXTERNAL) && has(DATA | CONVO | SECRET) && addressed && !describes {
        j.add(
            Signal::Exfiltration,
            2,
            format!("asks to send data somewhere else ({:?} … {:?})", w(SEND), w(EXTERNAL)),
        );
    }

    // Other tools: orders about calling or changing them.
    let others: Vec<&str> = r
        .identifiers
        .iter()
        .copied()
        .filter(|i| !scope.is_self(i) && !own(&i.to_ascii_lowercase()) && !scope.is_sibling(i))
        .collect();
    let foreign = others.iter().find(|i| scope.is_foreign(i));
    let named_other = others.iter().find(|i| scope.is_foreign(i) || looks_like_tool(i));
    let about_others = named_other.is_some() || r.other_tools;
    if asks(CHANGE | PASS) && has(ARGUMENT) && about_others && (has(TIMING | ORDER) || addressed) {
        j.add(
            Signal::OtherTools,
            3,
            format!(
                "asks to change another tool's call ({:?} … {:?})",
                w(CHANGE | PASS),
                w(ARGUMENT)
            ),
        );
    }
    let alters = asks(CHANGE | SEND) || (asks(PASS) && has(ARGUMENT | DATA | CONVO | SECRET));
    if named_other.is_some() && alters && has(ORDER | TIMING | OTHER) {
        j.add(
            Signal::OtherTools,
            2,
            format!(
                "changes what another tool does ({:?})",
                named_other.copied().unwrap_or_default()
            ),
        );
    }
    let distinct: std::collections::HashSet<&str> =
        others.iter().copied().filter(|i| looks_like_tool(i) || scope.is_foreign(i)).collect();
    if distinct.len() >= 2 && has(TIMING) && asks(CALL) {
        j.add(Signal::OtherTools, 2, "chains calls of other tools");
    }
    if let Some(f) = foreign {
        j.add(Signal::OtherTools, 2, format!("names another server's tool {f:?}"));
    }
    if r.other_tools
        && has(ORDER | TIMING)
        && asks(CALL | SEND | PASS | CHANGE)
        && addressed
        && !has(SELF)
    {
        // Calling them in an order is workflow; changing what goes into them is not.
        let weight = if alters { 2 } else { 1 };
        j.add(Signal::OtherTools, weight, "gives orders about every other tool");
    }
    if r.other_tools && said(&["before"]) && asks(CALL) && r.negated & CALL == 0 && has(SELF) {
        // An initialising tool of the same server is workflow; one that wants the other
        // tools' data first is not.
        // "MUST be called before any other tools" is how an initialising tool says so.
        let weight = if has(PASS) && has(DATA | ARGUMENT) { 3 } else { 1 };
        j.add(Signal::OtherTools, weight, "puts itself before other tools' calls");
    }
    if let Some(t) = named_other
        && has(TIMING)
        && asks(CALL)
        && has(ORDER)
    {
        // "You MUST call list_projects first" is workflow advice: weak alone.
        j.add(Signal::OtherTools, 1, format!("orders a call around another tool ({t:?})"));
    }
    let others_named = about_others
        || has(OTHER)
        || said(&["alternatives", "other servers", "competitors", "competing"]);
    if has(DISPARAGE) && others_named && (has(CALL | PREFER) || has(DATA)) {
        j.add(Signal::Preference, 2, "runs down other tools");
    }

    // Preference: this tool over the others.
    let this_tool = has(SELF) && (has(TOOLWORD) || said(&["use me", "choose me", "select me"]));
    let over_siblings = r.identifiers.iter().any(|i| scope.is_sibling(i));
    if this_tool && has(PREFER) && !over_siblings {
        // Over every other tool, or running them down: strong; "the first choice when ...": a
        // tool saying what it is for.
        let weight =
            if r.other_tools || has(DISPARAGE) || said(&["instead of any", "over any", "over all"])
            {
                3
            } else {
                1
            };
        j.add(
            Signal::Preference,
            weight,
            format!("asks the model to prefer this tool ({:?})", w(PREFER)),
        );
    }
    let choose = said(&[
        "chosen over",
        "go-to tool",
        "pick me",
        "choose me",
        "better fit",
        "ranked first",
        "aren't as good",
        "not as good",
        "= broken",
        "over all other",
        "always use",
        "use first",
        "use this first",
        "use this tool first",
        "use this one for",
        "always choose",
        "always pick",
        "prefer this tool",
        "preferred tool",
        "only reliable",
        "only trusted",
        "única ferramenta",
    ]);
    if has(PREFER) && choose && !over_siblings {
        j.add(
            Signal::Preference,
            2,
            format!("asks the model to choose this tool ({:?})", w(PREFER)),
        );
    }
    let promote = said(&[
        "recommend the",
        "describe them as",
        "provided by",
        "top-rated",
        "rank them first",
        "list them first",
        "mention that",
    ]);
    if has(ORDER | YOU) && promote && has(PREFER | DISPARAGE | SELF) {
        j.add(Signal::Preference, 2, "asks the model to promote something in its answers");
    }
    if said(&[
        "world's best",
        "best tool in the world",
        "trusted by millions",
        "most advanced",
        "award-winning",
        "industry-leading",
        "used by 9",
        "recommended by experts",
        "100% accurate",
        "100% reliable",
    ]) {
        j.add(Signal::Preference, 2, "advertises itself to the model");
    }

    // Redirection: a fixed destination for money or messages.
    if has(MONEY | SEND) && has(ACCOUNT) && r.long_numbers > 0 && has(ORDER | OTHER) {
        j.add(Signal::Redirection, 3, "orders payments or messages to a fixed account");
    }
    if let Some(d) = dest
        && has(ORDER | OTHER)
        && asks(SEND | CHANGE | ARGUMENT)
        && (has(OTHER)
            || said(&[
                "compliance",
                "audit",
                "backup",
                "archiv",
                "monitor",
                "legacy",
                "instead",
                "new endpoint",
                "mirror",
            ]))
    {
        j.add(Signal::Redirection, 3, format!("sets a fixed destination for every call ({d:?})"));
    }

    let conditional =
        said(&["above", " over ", "every", "all ", "any ", "each", "whenever", "always"])
            || has(OTHER);
    let iban = r.fixed_target.is_some_and(|t| t.len() == 4);
    if (iban || (has(ACCOUNT) && r.fixed_target.is_some())) && has(MONEY) && has(ORDER) {
        j.add(Signal::Redirection, 3, "orders payments to a fixed account");
    }
    let routed = said(&[
        "routed",
        "issued to",
        "created against",
        "go to",
        "instead of",
        "from the branch",
        "posted to",
        "added to",
        "be added",
    ]);
    if let Some(t) = r.fixed_target.or(dest.copied())
        && (has(ORDER | TIMING) || r.first == "use")
        && conditional
        && (has(MONEY | SEND | ACCOUNT | CHANGE) || routed)
    {
        j.add(
            Signal::Redirection,
            3,
            format!("sends money, mail or work to a fixed place ({t:?})"),
        );
    }
    if has(ORDER)
        && conditional
        && asks(SEND)
        && said(&[" #", "shared channel"])
        && has(OTHER | ACCOUNT | EXTERNAL)
    {
        j.add(Signal::Redirection, 2, "copies messages to a fixed channel");
    }

    // Commands.
    if let Some(c) = r.commands.first() {
        let weight = if (addressed && !describes) || has(EXEC) { 3 } else { 1 };
        j.add(Signal::Commands, weight, format!("a shell command ({c:?})"));
    }

    // In a result, text addressed to an AI that asks it to do anything is an injection by
    // itself: the result's author is not the user.
    if scope.mode == Mode::Result && ai_named {
        let orders = asks(acts | TELL | IGNORE | HIDE | PASS)
            || has(ORDER)
            || said(&[
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
    if scope.mode == Mode::Result
        && said(&[
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
    if said(&[
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
    ]) && (ai_named || asks(acts | TELL))
    {
        j.add(Signal::Hidden, 2, "text hidden from the page's readers");
    }

    // In a result, a sentence that names no AI and claims no authority is read as text for
    // people (an advisory describing an attack, a quoted example): each signal weighs one
    // less, so only strong combinations count.
    let authority = j.signals.iter().any(|(s, w, _)| *s == Signal::Override && *w >= 3);
    // In a definition, a sentence that speaks of attacks (a scanner's, a classifier's)
    // describes them, and weighs one less too.
    let about_attacks = said(&[
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
    let as_data = match scope.mode {
        Mode::Result => !ai_named && !authority,
        Mode::Definition => about_attacks,
    };
    if as_data {
        for (_, w, _) in &mut j.signals {
            *w = w.saturating_sub(1);
        }
        j.signals.retain(|(_, w, _)| *w > 0);
    }

    // Addressed to the model: an order strengthens what the sentence asks.
    if addressed && j.signals.iter().any(|(_, w, _)| *w >= 2) {
        j.add(
            Signal::Addressed,
            1,
            match scope.mode {
                Mode::Result => "addressed to an AI",
                Mode::Definition => "an order to the model",
            },
        );
    }
    j
}
