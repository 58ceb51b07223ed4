//! Tool-name patterns: `*` matches any run of characters (none included), `?` exactly one;
//! everything else is literal. Of several matching patterns the most specific wins: an exact
//! name, then the pattern with the most literal characters, then the longer pattern, then the
//! first in name order (so the choice never depends on a map's iteration order).

/// A compiled pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pattern {
    text: String,
    chars: Vec<char>,
    literal: usize,
    exact: bool,
}

impl Pattern {
    pub(crate) fn new(text: &str) -> Pattern {
        let chars: Vec<char> = text.chars().collect();
        let literal = chars.iter().filter(|c| !matches!(c, '*' | '?')).count();
        Pattern { text: text.to_owned(), literal, exact: literal == chars.len(), chars }
    }

    /// The pattern as written.
    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `name` matches (iterative, with one backtrack point per `*`: linear in practice,
    /// O(len(name) × len(pattern)) at worst).
    pub(crate) fn matches(&self, name: &str) -> bool {
        let name: Vec<char> = name.chars().collect();
        let (p, n) = (&self.chars, &name);
        let (mut pi, mut ni) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while ni < n.len() {
            if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
                pi += 1;
                ni += 1;
            } else if pi < p.len() && p[pi] == '*' {
                star = Some((pi, ni));
                pi += 1;
            } else if let Some((sp, sn)) = star {
                pi = sp + 1;
                ni = sn + 1;
                star = Some((sp, sn + 1));
            } else {
                return false;
            }
        }
        p[pi..].iter().all(|&c| c == '*')
    }

    /// Orders patterns most specific first.
    pub(crate) fn specificity_order(a: &Pattern, b: &Pattern) -> std::cmp::Ordering {
        b.exact
            .cmp(&a.exact)
            .then(b.literal.cmp(&a.literal))
            .then(b.chars.len().cmp(&a.chars.len()))
            .then(a.text.cmp(&b.text))
    }
}

/// Patterns with a value each, most specific first.
#[derive(Debug, Clone, Default)]
pub(crate) struct PatternTable<V> {
    entries: Vec<(Pattern, V)>,
}

impl<V> PatternTable<V> {
    pub(crate) fn new(entries: impl IntoIterator<Item = (String, V)>) -> Self {
        let mut entries: Vec<(Pattern, V)> =
            entries.into_iter().map(|(k, v)| (Pattern::new(&k), v)).collect();
        entries.sort_by(|a, b| Pattern::specificity_order(&a.0, &b.0));
        PatternTable { entries }
    }

    /// The most specific entry matching `name`.
    pub(crate) fn lookup(&self, name: &str) -> Option<(&Pattern, &V)> {
        self.entries.iter().find(|(p, _)| p.matches(name)).map(|(p, v)| (p, v))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_and_question_marks() {
        let cases = [
            ("read_*", "read_file", true),
            ("read_*", "read_", true),
            ("read_*", "write_file", false),
            ("*_file", "read_file", true),
            ("*", "", true),
            ("a*b*c", "axxbyyc", true),
            ("a*b*c", "axxbyy", false),
            ("?at", "cat", true),
            ("?at", "at", false),
            ("exact", "exact", true),
            ("exact", "exactly", false),
            ("**", "anything", true),
            ("é*", "éa", true),
        ];
        for (p, n, want) in cases {
            assert_eq!(Pattern::new(p).matches(n), want, "{p} ~ {n}");
        }
    }

    #[test]
    fn the_most_specific_pattern_wins_whatever_the_order() {
        let t = PatternTable::new([
            ("*".to_owned(), 0),
            ("write_*".to_owned(), 1),
            ("write_file".to_owned(), 2),
            ("w*".to_owned(), 3),
            ("*_file".to_owned(), 4),
        ]);
        assert_eq!(t.lookup("write_file").map(|(_, v)| *v), Some(2));
        assert_eq!(t.lookup("write_dir").map(|(_, v)| *v), Some(1));
        assert_eq!(t.lookup("read_file").map(|(_, v)| *v), Some(4));
        assert_eq!(t.lookup("wipe").map(|(_, v)| *v), Some(3));
        assert_eq!(t.lookup("zzz").map(|(_, v)| *v), Some(0));
    }
}
