//! Token counts with a real BPE vocabulary: OpenAI's o200k_base (GPT-4o and later), which the
//! `bpe-openai` crate bundles; nothing is fetched at run time. Never bytes/4.
//!
//! The text is split into o200k's pieces by its pattern (ASCII text by hand, `ascii_pieces`;
//! other text by the crate's linear-time pretokenizer), and a piece that is itself a token
//! counts one without running the byte-pair encoder: tiktoken decides such a piece the same
//! way, and in tool definitions nearly every piece is one (9,353 pieces for 9,624 tokens in
//! gitlab's descriptions as JSON strings). The counts are tiktoken's, exactly: tested against
//! `tiktoken-rs` on the whole catalog and on any text (docs/routing.md, "Token accounting").

#![forbid(unsafe_code)]

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use serde_json::{Map, Value};

/// The vocabulary, and the byte strings of its tokens for the one-token fast path.
struct O200k {
    tokenizer: &'static bpe_openai::Tokenizer,
    tokens: HashSet<&'static [u8], foldhash::fast::RandomState>,
}

static O200K: LazyLock<O200k> = LazyLock::new(|| {
    let tokenizer = bpe_openai::o200k_base();
    let bpe = &tokenizer.bpe;
    let tokens = (0..bpe.num_tokens() as u32).map(|id| bpe.token_bytes(id)).collect();
    O200k { tokenizer, tokens }
});

/// Tokens of `text` under o200k_base (special-token text counted as ordinary text).
pub fn count(text: &str) -> usize {
    let o = &*O200K;
    let piece = |bytes: &[u8]| {
        if o.tokens.contains(bytes) { 1 } else { o.tokenizer.bpe.count(bytes) }
    };
    if text.is_ascii() {
        let mut n = 0;
        ascii_pieces(text.as_bytes(), |p| n += piece(p));
        n
    } else {
        o.tokenizer.split(text).map(|p| piece(p.as_bytes())).sum()
    }
}

/// o200k's pieces of ASCII text, cut by hand: the crate's pretokenizer runs a Unicode regex
/// (most of the cost of counting a tool's description: PERFORMANCE.md, "ASCII by bytes"); on
/// ASCII its pattern comes down to the byte classes below. The pattern, alternatives tried in order at each position:
///
/// 1. an optional prefix (not CR, LF, a letter or a digit), upper case letters, one or more
///    lower case ones, and an optional contraction (`'s`, `'t`, `'re`, `'ve`, `'m`, `'ll`,
///    `'d`, any case);
/// 2. the same with one or more upper case letters and no lower case ones;
/// 3. one to three digits;
/// 4. an optional space, one or more symbols (neither white space, letter nor digit), and any
///    CR, LF and `/` after them;
/// 5. white space up to and including its last CR or LF;
/// 6. white space not followed by anything else (the run but its last character, when more
///    text follows);
/// 7. white space.
///
/// Tested piece for piece against the crate's split on any ASCII text.
fn ascii_pieces(b: &[u8], mut piece: impl FnMut(&[u8])) {
    // White space as the pattern's `\s` has it in ASCII (not 0x1c..0x1f: those are symbols).
    let space = |c: u8| matches!(c, b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b' ');
    let run = |mut i: usize, class: &dyn Fn(u8) -> bool| {
        while i < b.len() && class(b[i]) {
            i += 1;
        }
        i
    };
    let contraction = |i: usize| -> usize {
        if b.get(i) != Some(&b'\'') {
            return i;
        }
        let lower = |k: usize| b.get(k).map(u8::to_ascii_lowercase);
        match (lower(i + 1), lower(i + 2)) {
            (Some(b's' | b't' | b'm' | b'd'), _) => i + 2,
            (Some(b'r'), Some(b'e')) | (Some(b'v'), Some(b'e')) | (Some(b'l'), Some(b'l')) => i + 3,
            _ => i,
        }
    };
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let end = 'end: {
            // 1 and 2: letters, with a prefix if this byte can be one.
            let prefix = !matches!(c, b'\r' | b'\n') && !c.is_ascii_alphanumeric();
            let s = if prefix { i + 1 } else { i };
            let upper = run(s, &|c: u8| c.is_ascii_uppercase());
            let lower = run(upper, &|c: u8| c.is_ascii_lowercase());
            if lower > s {
                break 'end contraction(lower);
            }
            if c.is_ascii_digit() {
                break 'end run(i, &|c: u8| c.is_ascii_digit()).min(i + 3);
            }
            // 4: symbols, perhaps after a space.
            let s = if c == b' ' { i + 1 } else { i };
            let symbols = run(s, &|c: u8| !space(c) && !c.is_ascii_alphanumeric());
            if symbols > s {
                break 'end run(symbols, &|c: u8| matches!(c, b'\r' | b'\n' | b'/'));
            }
            // 5 to 7: white space (the byte is white space: every other byte matched above).
            let ws = run(i, &|c: u8| space(c));
            if let Some(nl) = b[i..ws].iter().rposition(|&c| matches!(c, b'\r' | b'\n')) {
                break 'end i + nl + 1;
            }
            if ws < b.len() && ws - i >= 2 { ws - 1 } else { ws }
        };
        piece(&b[i..end]);
        i = end;
    }
}

/// Whether two JSON values are the same text when serialised: `==` on serde_json values
/// holds `-0.0` and `0.0` equal, whose texts (and token counts) differ.
pub fn identical(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y && x.as_f64().map(f64::to_bits) == y.as_f64().map(f64::to_bits)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| identical(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter().zip(y).all(|((ka, va), (kb, vb))| ka == kb && identical(va, vb))
        }
        _ => a == b,
    }
}

/// The vocabulary's name, for reports.
pub const VOCABULARY: &str = "o200k_base";

/// One stretch of a JSON object's compact text that counts on its own: the member whose key
/// starts with an ASCII letter, with the members after it whose keys do not (the first stretch is the
/// opening brace and any such members before the first letter key).
///
/// o200k_base splits text into pieces before it merges bytes, and a piece never runs from the
/// `,"` or `{"` before a key into the key's first letter: punctuation runs and letter runs are
/// different pieces, and the quote cannot join the letters because the run it ends began on the
/// comma or brace before it. So a key's first letter always starts a piece, the pieces between
/// two such points are the same whether counted alone or in the whole text (a stretch never
/// ends in white space, the one place the pattern looks ahead), and the count of the whole is
/// the sum of its stretches. Tested against the whole count on the real catalog.
#[derive(Debug, Clone, PartialEq)]
pub struct Stretch {
    /// The members' keys, in order.
    keys: Vec<String>,
    /// The opening stretch (the brace and members without a letter key).
    head: bool,
    /// The closing stretch (ends with the brace).
    last: bool,
    tokens: usize,
}

/// Tokens of `value` as compact JSON (exactly [`count`] of `value.to_string()`), and its
/// stretches. With `before` (an earlier version of the value and its stretches), a stretch
/// whose members are unchanged keeps its count: a tool whose description was edited is
/// recounted only in its description.
pub fn count_json(value: &Value, before: Option<(&Value, &[Stretch])>) -> (usize, Vec<Stretch>) {
    let Some(obj) = value.as_object() else {
        return (count(&value.to_string()), Vec::new());
    };
    let mut groups: Vec<Vec<&String>> = vec![Vec::new()];
    for k in obj.keys() {
        if k.starts_with(|c: char| c.is_ascii_alphabetic()) {
            groups.push(vec![k]);
        } else {
            groups.last_mut().expect("the head group").push(k);
        }
    }
    let n = groups.len();
    // The earlier version's stretches by their first key (the head by none): found in one step,
    // however many members an object has.
    let earlier: HashMap<Option<&str>, &Stretch> = before
        .map(|(_, stretches)| {
            stretches
                .iter()
                .map(|s| (if s.head { None } else { s.keys.first().map(String::as_str) }, s))
                .collect()
        })
        .unwrap_or_default();
    let mut total = 0;
    let mut out = Vec::with_capacity(n);
    for (i, keys) in groups.into_iter().enumerate() {
        let (head, last) = (i == 0, i == n - 1);
        let same = |s: &Stretch, old: &Value| {
            s.last == last
                && s.keys.len() == keys.len()
                && s.keys.iter().zip(&keys).all(|(a, b)| {
                    a == *b
                        && match (old.get(a), obj.get(a.as_str())) {
                            (Some(x), Some(y)) => identical(x, y),
                            (x, y) => x.is_none() && y.is_none(),
                        }
                })
        };
        // The earlier stretch that starts the same way (the head, or the same first key).
        let start = if head { None } else { keys.first().map(|k| k.as_str()) };
        let reused = before
            .and_then(|(old, _)| Some((old, *earlier.get(&start)?)))
            .filter(|(old, s)| same(s, old))
            .map(|(_, s)| s.tokens);
        let tokens = reused.unwrap_or_else(|| count(&stretch_text(obj, &keys, head, last)));
        total += tokens;
        out.push(Stretch { keys: keys.into_iter().cloned().collect(), head, last, tokens });
    }
    (total, out)
}

/// The compact JSON text of one stretch (the stretches of an object, in order, are its text).
fn stretch_text(obj: &Map<String, Value>, keys: &[&String], head: bool, last: bool) -> String {
    let mut s = String::new();
    if head {
        s.push('{');
    }
    for (j, k) in keys.iter().enumerate() {
        let key = Value::String((*k).clone()).to_string();
        if j == 0 && !head {
            s.push_str(&key[1..]); // its opening quote ended the stretch before
        } else {
            if j > 0 {
                s.push(',');
            }
            s.push_str(&key);
        }
        s.push(':');
        s.push_str(&obj[k.as_str()].to_string());
    }
    if last {
        s.push('}');
    } else {
        if !(head && keys.is_empty()) {
            s.push(',');
        }
        s.push('"');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_are_bpe_tokens_not_bytes() {
        assert_eq!(count(""), 0);
        assert_eq!(count("hello world"), 2);
        // A long word of one common piece is one token, far from len/4.
        let schema = r#"{"type":"object","properties":{"path":{"type":"string"}}}"#;
        let n = count(schema);
        assert!(n > 5 && n < schema.len() / 2, "{n}");
    }

    /// The counts are tiktoken's (the reference implementation's port), token for token.
    fn same_as_tiktoken(text: &str) {
        let reference = tiktoken_rs::o200k_base_singleton().encode_ordinary(text).len();
        assert_eq!(count(text), reference, "{text:?}");
    }

    #[test]
    fn counts_are_tiktokens_on_the_real_catalog() {
        let text = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/bench/route/catalog.json"));
        let catalog: Vec<Value> = serde_json::from_str(text).unwrap();
        let mut total = 0;
        for e in &catalog {
            let t = e["tool"].to_string();
            same_as_tiktoken(&t);
            total += count(&t);
        }
        assert_eq!(total, 248_809, "the catalog's inject-all count (PERFORMANCE.md)");
        for s in [
            "",
            " ",
            "  \n\n\t ",
            "don't I'LL we've",
            "naïve café",
            "日本語のテキスト",
            "🦀🦀 emoji",
            "1234567 3.14159",
            "a\r\nb",
            "trailing   ",
            "<|endoftext|>",
            "\u{0301}e",
        ] {
            same_as_tiktoken(s);
        }
    }

    /// The hand-cut pieces of ASCII text are the crate's.
    fn same_pieces(text: &str) {
        let mut mine = Vec::new();
        ascii_pieces(text.as_bytes(), |p| mine.push(std::str::from_utf8(p).unwrap().to_owned()));
        let theirs: Vec<&str> = O200K.tokenizer.split(text).collect();
        assert_eq!(mine, theirs, "{text:?}");
    }

    #[test]
    fn ascii_pieces_are_the_crates_on_the_real_catalog() {
        let text = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/bench/route/catalog.json"));
        let catalog: Vec<Value> = serde_json::from_str(text).unwrap();
        for e in &catalog {
            let t = e["tool"].to_string();
            if t.is_ascii() {
                same_pieces(&t);
            }
        }
        for s in
            ["", " ", "  x", " \n \n  y", "a  ", "a \t\x0b\x0c\r\n", "\x1c\x1fA", "x'S 'Ll 're'VE'"]
        {
            same_pieces(s);
        }
    }

    proptest::proptest! {
        #[test]
        fn ascii_pieces_are_the_crates(text in "[\\x00-\\x7f]{0,64}") {
            same_pieces(&text);
        }

        #[test]
        fn ascii_pieces_are_the_crates_on_words(
            text in "([A-Za-z]{0,4}|[0-9]{1,5}|'[sStTmMdD]|'(re|ve|ll|RE|Ve|lL)|[ \\t\\r\\n]{1,3}|[./(){}\\x1c-]{1,2}){0,24}"
        ) {
            same_pieces(&text);
        }

        #[test]
        fn counts_are_tiktokens_on_any_text(text in "\\PC{0,64}") {
            same_as_tiktoken(&text);
        }

        #[test]
        fn counts_are_tiktokens_on_json_like_text(
            text in "[ a-zA-Z0-9_.,:;'\"\\n\\t{}\\[\\]/\\\\é日ß-]{0,80}"
        ) {
            same_as_tiktoken(&text);
        }
    }

    fn texts_and_counts_agree(v: &Value) {
        let (total, stretches) = count_json(v, None);
        assert_eq!(total, count(&v.to_string()), "{v}");
        if let Some(obj) = v.as_object() {
            let text: String = stretches
                .iter()
                .map(|s| {
                    let keys: Vec<&String> = s.keys.iter().collect();
                    stretch_text(obj, &keys, s.head, s.last)
                })
                .collect();
            assert_eq!(text, v.to_string());
        }
    }

    #[test]
    fn stretches_add_up_to_the_whole_on_the_real_catalog() {
        // Built in, so the sans-IO module's tests do no I/O either.
        let text = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/bench/route/catalog.json"));
        let catalog: Vec<Value> = serde_json::from_str(text).unwrap();
        assert!(catalog.len() >= 600);
        for e in &catalog {
            texts_and_counts_agree(&e["tool"]);
            texts_and_counts_agree(&e["tool"]["inputSchema"]);
        }
    }

    #[test]
    fn stretches_add_up_on_awkward_objects() {
        for v in [
            json!({}),
            json!([1, 2]),
            json!("text"),
            json!({"_meta": {"a": 1}}),
            json!({"_meta": 1, "name": "x"}),
            json!({"name": "x", "_meta": 1, "$schema": "y", "title": "a  "}),
            json!({"a": " ", "b": "\n\n  ", "c": "trailing space ", "d": "'s'll"}),
            json!({"über": "ä", "name": "日本語のテキスト", "x1": 12345, "y": [true, null]}),
            json!({"a\"b": 1, "description": "quote \" inside", "z": {"": ""}}),
        ] {
            texts_and_counts_agree(&v);
        }
    }

    proptest::proptest! {
        #[test]
        fn stretches_add_up_on_any_object(
            members in proptest::collection::vec(
                ("[a-zA-Z_$ 0-9é日\\-]{0,6}", "[ a-zA-Z0-9.,:;'\"\\n\\t{}\\[\\]/é日-]{0,24}", 0u8..4),
                0..8,
            )
        ) {
            let mut obj = Map::new();
            for (k, v, kind) in members {
                let v = match kind {
                    0 => Value::String(v),
                    1 => json!({ "description": v, "type": "string" }),
                    2 => json!([v, 7, null]),
                    _ => json!(v.len()),
                };
                obj.insert(k, v);
            }
            texts_and_counts_agree(&Value::Object(obj));
        }
    }

    #[test]
    fn minus_zero_is_not_zero() {
        let a = json!({"default": 0.0, "list": [1, -0.0]});
        let b = json!({"default": -0.0, "list": [1, -0.0]});
        assert_eq!(a, b, "serde_json's == holds them equal");
        assert!(!identical(&a, &b));
        assert!(identical(&b, &b.clone()));
        assert!(!identical(&json!(1), &json!(1.0)));
        let (n, s) = count_json(&a, None);
        assert_eq!(count_json(&b, Some((&a, &s))).0, count(&b.to_string()));
        assert_ne!(n, count(&b.to_string()));
    }

    #[test]
    fn unchanged_members_keep_their_count() {
        let v1 = json!({"name": "t", "description": "one two", "inputSchema": {"type": "object"}});
        let (n1, s1) = count_json(&v1, None);
        let mut v2 = v1.clone();
        v2["description"] = "one two three four".into();
        let (n2, s2) = count_json(&v2, Some((&v1, &s1)));
        assert_eq!(n2, count(&v2.to_string()));
        assert!(n2 > n1);
        assert_eq!(
            s1.iter().find(|s| s.keys == ["inputSchema"]),
            s2.iter().find(|s| s.keys == ["inputSchema"])
        );
        // A stale count is never reused: the same keys with another value are recounted.
        let (n3, _) = count_json(&v1, Some((&v2, &s2)));
        assert_eq!(n3, n1);
    }
}
