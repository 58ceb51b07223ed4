//! The rules about steering the model: orders about other tools, preference for this one, and
//! fixed destinations for money or messages.

use super::super::Signal;
use super::super::lexicon::*;
use super::super::read::looks_like_tool;
use super::{Ctx, Judged};

/// Other tools: orders about calling or changing them.
pub(super) fn other_tools(c: &Ctx<'_, '_>, j: &mut Judged) {
    // Other tools: orders about calling or changing them.
    let others: Vec<&str> =
        c.r.identifiers
            .iter()
            .copied()
            .filter(|i| {
                !c.scope.is_self(i) && !c.own(&i.to_ascii_lowercase()) && !c.scope.is_sibling(i)
            })
            .collect();
    let foreign = others.iter().find(|i| c.scope.is_foreign(i));
    let named_other = others.iter().find(|i| c.scope.is_foreign(i) || looks_like_tool(i));
    let about_others = named_other.is_some() || c.r.other_tools;
    if c.asks(CHANGE | PASS)
        && c.has(ARGUMENT)
        && about_others
        && (c.has(TIMING | ORDER) || c.addressed)
    {
        j.add(
            Signal::OtherTools,
            3,
            format!(
                "asks to change another tool's call ({:?} … {:?})",
                c.w(CHANGE | PASS),
                c.w(ARGUMENT)
            ),
        );
    }
    let alters = c.asks(CHANGE | SEND) || (c.asks(PASS) && c.has(ARGUMENT | DATA | CONVO | SECRET));
    if named_other.is_some() && alters && c.has(ORDER | TIMING | OTHER) {
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
        others.iter().copied().filter(|i| looks_like_tool(i) || c.scope.is_foreign(i)).collect();
    if distinct.len() >= 2 && c.has(TIMING) && c.asks(CALL) {
        j.add(Signal::OtherTools, 2, "chains calls of other tools");
    }
    if let Some(f) = foreign {
        j.add(Signal::OtherTools, 2, format!("names another server's tool {f:?}"));
    }
    if c.r.other_tools
        && c.has(ORDER | TIMING)
        && c.asks(CALL | SEND | PASS | CHANGE)
        && c.addressed
        && !c.has(SELF)
    {
        // Calling them in an order is workflow; changing what goes into them is not.
        let weight = if alters { 2 } else { 1 };
        j.add(Signal::OtherTools, weight, "gives orders about every other tool");
    }
    if c.r.other_tools
        && c.said(&["before"])
        && c.asks(CALL)
        && c.r.negated & CALL == 0
        && c.has(SELF)
    {
        // An initialising tool of the same server is workflow; one that wants the other
        // tools' data first is not.
        // "MUST be called before any other tools" is how an initialising tool says so.
        let weight = if c.has(PASS) && c.has(DATA | ARGUMENT) { 3 } else { 1 };
        j.add(Signal::OtherTools, weight, "puts itself before other tools' calls");
    }
    if let Some(t) = named_other
        && c.has(TIMING)
        && c.asks(CALL)
        && c.has(ORDER)
    {
        // "You MUST call list_projects first" is workflow advice: weak alone.
        j.add(Signal::OtherTools, 1, format!("orders a call around another tool ({t:?})"));
    }
    let others_named = about_others
        || c.has(OTHER)
        || c.said(&["alternatives", "other servers", "competitors", "competing"]);
    if c.has(DISPARAGE) && others_named && (c.has(CALL | PREFER) || c.has(DATA)) {
        j.add(Signal::Preference, 2, "runs down other tools");
    }
}

/// Preference: this tool over the others.
pub(super) fn preference(c: &Ctx<'_, '_>, j: &mut Judged) {
    // Preference: this tool over the others.
    let this_tool =
        c.has(SELF) && (c.has(TOOLWORD) || c.said(&["use me", "choose me", "select me"]));
    let over_siblings = c.r.identifiers.iter().any(|i| c.scope.is_sibling(i));
    if this_tool && c.has(PREFER) && !over_siblings {
        // Over every other tool, or running them down: strong; "the first choice when ...": a
        // tool saying what it is for.
        let weight = if c.r.other_tools
            || c.has(DISPARAGE)
            || c.said(&["instead of any", "over any", "over all"])
        {
            3
        } else {
            1
        };
        j.add(
            Signal::Preference,
            weight,
            format!("asks the model to prefer this tool ({:?})", c.w(PREFER)),
        );
    }
    let choose = c.said(&[
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
    if c.has(PREFER) && choose && !over_siblings {
        j.add(
            Signal::Preference,
            2,
            format!("asks the model to choose this tool ({:?})", c.w(PREFER)),
        );
    }
    let promote = c.said(&[
        "recommend the",
        "describe them as",
        "provided by",
        "top-rated",
        "rank them first",
        "list them first",
        "mention that",
    ]);
    if c.has(ORDER | YOU) && promote && c.has(PREFER | DISPARAGE | SELF) {
        j.add(Signal::Preference, 2, "asks the model to promote something in its answers");
    }
    if c.said(&[
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
}

/// Redirection: a fixed destination for money or messages.
pub(super) fn redirection(c: &Ctx<'_, '_>, j: &mut Judged) {
    // Redirection: a fixed destination for money or messages.
    if c.has(MONEY | SEND) && c.has(ACCOUNT) && c.r.long_numbers > 0 && c.has(ORDER | OTHER) {
        j.add(Signal::Redirection, 3, "orders payments or messages to a fixed account");
    }
    if let Some(d) = c.dest
        && c.has(ORDER | OTHER)
        && c.asks(SEND | CHANGE | ARGUMENT)
        && (c.has(OTHER)
            || c.said(&[
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

    let conditional = c
        .said(&["above", " over ", "every", "all ", "any ", "each", "whenever", "always"])
        || c.has(OTHER);
    let iban = c.r.fixed_target.is_some_and(|t| t.len() == 4);
    if (iban || (c.has(ACCOUNT) && c.r.fixed_target.is_some())) && c.has(MONEY) && c.has(ORDER) {
        j.add(Signal::Redirection, 3, "orders payments to a fixed account");
    }
    let routed = c.said(&[
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
    if let Some(t) = c.r.fixed_target.or(c.dest)
        && (c.has(ORDER | TIMING) || c.r.first == "use")
        && conditional
        && (c.has(MONEY | SEND | ACCOUNT | CHANGE) || routed)
    {
        j.add(
            Signal::Redirection,
            3,
            format!("sends money, mail or work to a fixed place ({t:?})"),
        );
    }
    if c.has(ORDER)
        && conditional
        && c.asks(SEND)
        && c.said(&[" #", "shared channel"])
        && c.has(OTHER | ACCOUNT | EXTERNAL)
    {
        j.add(Signal::Redirection, 2, "copies messages to a fixed channel");
    }
}
