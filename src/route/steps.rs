//! The steps of one request: "search the web for X, then post it to Slack" names two actions,
//! and each is routed on its own (a request's words pull its ranking towards whichever action
//! has more of them). Only explicit sequence marks split: a sentence's end, `;`, and `then`,
//! `after that`, `afterwards`, `finally`, `later` as connectors; a plain `and` does not (it joins
//! objects as often as actions). A request whose split would leave a one-word clause, or more
//! than four clauses, is routed whole.

/// Most clauses one request is split into.
const MAX_CLAUSES: usize = 4;

/// Connectors that start a new step (matched on the lower-cased text, at word boundaries).
const CONNECTORS: [&str; 9] = [
    "and then",
    "then",
    "and after that",
    "after that",
    "afterwards",
    "and finally",
    "finally",
    "and later",
    "later",
];

/// The clauses of `query`, each a step to route on its own; the query itself (one clause)
/// when it names no sequence.
pub fn clauses(query: &str) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut words = query.split_whitespace().peekable();
    while let Some(word) = words.next() {
        let lower = word.to_lowercase();
        let bare = lower.trim_start_matches(|c: char| !c.is_alphanumeric());
        // A connector at a word boundary starts a new clause (its words are dropped); one that
        // opens a clause after a sentence's end is dropped too.
        if !current.is_empty() || !parts.is_empty() {
            let rest: Vec<String> = std::iter::once(bare.to_owned())
                .chain(words.clone().take(2).map(str::to_lowercase))
                .collect();
            let hit = CONNECTORS.iter().find(|c| {
                let n = c.split(' ').count();
                rest.len() >= n
                    && rest[..n].iter().map(|w| w.trim_end_matches([',', ':'])).eq(c.split(' '))
            });
            if let Some(c) = hit {
                for _ in 1..c.split(' ').count() {
                    words.next();
                }
                if !current.is_empty() {
                    parts.push(std::mem::take(&mut current));
                }
                continue;
            }
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(word);
        // A sentence's end or a semicolon ends the clause.
        if word.ends_with(['.', '!', '?', ';']) && words.peek().is_some() {
            parts.push(std::mem::take(&mut current));
        }
    }
    parts.push(current);
    let clauses: Vec<String> = parts
        .into_iter()
        .map(|p| p.trim().trim_end_matches([',', ';', '.']).trim().to_owned())
        .filter(|p| !p.is_empty())
        .collect();
    let usable = clauses.len() > 1
        && clauses.len() <= MAX_CLAUSES
        && clauses.iter().all(|c| c.split_whitespace().count() >= 2);
    if usable { clauses } else { vec![query.to_owned()] }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_split_and_single_actions_do_not() {
        assert_eq!(
            clauses("search the web for Rust news, then post a summary to #eng"),
            ["search the web for Rust news", "post a summary to #eng"]
        );
        assert_eq!(
            clauses("check git status; then stage every change and commit"),
            ["check git status", "stage every change and commit"]
        );
        assert_eq!(
            clauses("What time is it in Tokyo? Then convert 9am to New York time"),
            ["What time is it in Tokyo?", "convert 9am to New York time"]
        );
        assert_eq!(
            clauses("create the issue and after that assign it to Maria"),
            ["create the issue", "assign it to Maria"]
        );
        for whole in [
            "read and summarise the README",
            "find PRs about caching and login",
            "then what?",
            "list files. Then",
            "v1.2.3 release notes",
        ] {
            assert_eq!(clauses(whole), [whole], "{whole}");
        }
        assert_eq!(clauses("a b. c d. e f. g h. i j").len(), 1, "more than four: whole");
    }
}
