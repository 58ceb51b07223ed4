//! Credentials in text: cloud keys, GitHub, GitLab, Slack, Stripe, npm, PyPI, OpenAI and
//! Anthropic tokens, Google API keys, private keys, JWTs, connection strings with a password,
//! and high-entropy values of fields whose name says they are secret. Each is reported by
//! kind and place, never shown: callers digest it (the audit trail keeps the SHA-256).

use std::ops::Range;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind, StartKind};
use regex::bytes::Regex;
use serde_json::Value;

use super::words;

/// One credential found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    /// What it is (`aws_access_key`, `github_token`, `private_key`, ...).
    pub kind: &'static str,
    /// Its bytes in the text it was found in.
    pub span: Range<usize>,
}

/// Each kind: its name, the literal words it starts with or holds (found first, in one
/// pass, case-insensitively), and its pattern, run only around those words.
const KINDS: &[(&str, &[&str], &str)] = &[
    (
        "aws_access_key",
        &["AKIA", "ASIA", "ABIA", "ACCA"],
        r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
    ),
    (
        "aws_secret_key",
        &["aws"],
        r#"(?i)aws.{0,20}?(?:secret|private).{0,20}?['"\s:=]+([A-Za-z0-9/+]{40})\b"#,
    ),
    (
        "github_token",
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b",
    ),
    ("github_token", &["github_pat_"], r"\bgithub_pat_[A-Za-z0-9_]{60,255}\b"),
    (
        "gitlab_token",
        &["glpat-", "gldt-", "glptt-", "glrt-", "glsoat-"],
        r"\bgl(?:pat|dt|ptt|rt|soat)-[A-Za-z0-9_\-]{20,64}\b",
    ),
    (
        "slack_token",
        &["xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-"],
        r"\bxox[abposr]-[A-Za-z0-9\-]{10,250}",
    ),
    (
        "slack_webhook",
        &["hooks.slack.com"],
        r"https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{20,}",
    ),
    (
        "stripe_key",
        &["sk_live_", "sk_test_", "rk_live_", "rk_test_"],
        r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,250}\b",
    ),
    ("google_api_key", &["AIza"], r"\bAIza[0-9A-Za-z_\-]{35}\b"),
    (
        "openai_key",
        &["sk-"],
        r"\bsk-(?:(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}T3BlbkFJ[A-Za-z0-9_\-]{20,}|proj-[A-Za-z0-9_\-]{40,})",
    ),
    ("anthropic_key", &["sk-ant-"], r"\bsk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_\-]{80,}"),
    ("npm_token", &["npm_"], r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("pypi_token", &["pypi-AgEIcHlwaS5vcmc"], r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}"),
    ("sendgrid_key", &["SG."], r"\bSG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}\b"),
    (
        "private_key",
        &["PRIVATE KEY-----"],
        r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----",
    ),
    ("jwt", &["eyJ"], r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{16,}"),
    (
        "connection_string",
        &["://"],
        r"\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|redis|rediss|amqps?|mssql|sqlserver)://[^:@/\s]{1,64}:([^@/\s]{3,128})@",
    ),
];

/// How far before its literal word a credential may start, and after it end.
const BEFORE: usize = 300;
const AFTER: usize = 700;

struct Compiled {
    words: AhoCorasick,
    /// The kind of each literal word.
    kind_of: Vec<usize>,
    each: Vec<Regex>,
}

fn compiled() -> &'static Compiled {
    static C: OnceLock<Compiled> = OnceLock::new();
    C.get_or_init(|| {
        let mut words = Vec::new();
        let mut kind_of = Vec::new();
        for (i, (_, literals, _)) in KINDS.iter().enumerate() {
            for l in *literals {
                words.push(*l);
                kind_of.push(i);
            }
        }
        Compiled {
            words: AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                // `sk-ant-` before `sk-`: the longest word at a start names the kind.
                .match_kind(MatchKind::LeftmostLongest)
                .kind(Some(AhoCorasickKind::DFA))
                .start_kind(StartKind::Both)
                .build(&words)
                .expect("the secret words build"),
            kind_of,
            each: KINDS.iter().map(|(_, _, p)| Regex::new(p).expect("a secret pattern")).collect(),
        }
    })
}

/// Values that stand for a secret rather than being one (`YOUR_API_KEY`, `xxxx`, `<token>`).
fn placeholder(value: &[u8]) -> bool {
    let s = String::from_utf8_lossy(value).to_ascii_lowercase();
    [
        "your_",
        "your-",
        "xxxx",
        "<",
        "${",
        "{{",
        "changeme",
        "placeholder",
        "redacted",
        "dummy",
        "****",
    ]
    .iter()
    .any(|p| s.contains(p))
        || value.windows(6).any(|w| w.iter().all(|&b| b == w[0]))
}

/// The credentials in `text`: its literal words found where words start (`words.rs`), each
/// kind's pattern run around them only.
pub fn find(text: &[u8]) -> Vec<Secret> {
    let c = compiled();
    let mut out: Vec<Secret> = Vec::new();
    // The windows already searched, per kind (a run of literal words is searched once).
    let mut searched = vec![0usize; KINDS.len()];
    let longest = KINDS.iter().flat_map(|(_, l, _)| l.iter()).map(|l| l.len()).max().unwrap_or(0);
    words::find_at_word_starts(&c.words, text, longest, |m| {
        let kind = c.kind_of[m.pattern().as_usize()];
        let start = m.start().saturating_sub(BEFORE).max(searched[kind]);
        let end = (m.end() + AFTER).min(text.len());
        if start >= end {
            return true;
        }
        searched[kind] = end;
        for caps in c.each[kind].captures_iter(&text[start..end]).take(64) {
            // A password in a connection string, the AWS secret: the group; else the whole.
            let m = caps.get(1).unwrap_or_else(|| caps.get(0).expect("a match"));
            if placeholder(m.as_bytes()) {
                continue;
            }
            out.push(Secret { kind: KINDS[kind].0, span: start + m.start()..start + m.end() });
        }
        out.len() < 256
    });
    out.sort_by_key(|s| s.span.start);
    out.dedup_by(|a, b| a.span.start < b.span.end);
    out
}

/// Whether a field's name says its value is secret.
pub fn secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace(['-', '_'], "");
    // What a secret is called, not its value: `secretType`, `tokenName`, `passwordFile`.
    let about = [
        "type",
        "name",
        "id",
        "ids",
        "ref",
        "path",
        "file",
        "count",
        "length",
        "format",
        "kind",
        "url",
        "expiry",
        "expiresat",
        "ttl",
    ];
    if about.iter().any(|s| n.ends_with(s)) {
        return false;
    }
    [
        "password",
        "passwd",
        "secret",
        "token",
        "apikey",
        "privatekey",
        "credential",
        "accesskey",
        "clientsecret",
        "authorization",
        "bearer",
    ]
    .iter()
    .any(|k| n.contains(k))
        && ![
            "tokens",
            "tokenize",
            "maxtoken",
            "tokencount",
            "nexttoken",
            "pagetoken",
            "continuationtoken",
            "cursor",
            "tokenlimit",
            "paginationtoken",
        ]
        .iter()
        .any(|k| n.contains(k))
}

/// Bits of entropy per character of `s`.
fn entropy(s: &str) -> f64 {
    let mut counts = [0u32; 256];
    for b in s.bytes() {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// Whether `value` of a secret-named field looks like a real secret: 16 or more characters of
/// no spaces with at least 3.5 bits of entropy a character (words and placeholders are not).
pub fn high_entropy(value: &str) -> bool {
    value.len() >= 16
        && value.len() <= 4096
        && !value.contains(char::is_whitespace)
        && !placeholder(value.as_bytes())
        && entropy(value) >= 3.5
}

/// A credential found in a JSON value: where (a JSON pointer) and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The JSON pointer of the string.
    pub pointer: String,
    /// What it is.
    pub kind: &'static str,
    /// The secret's text.
    pub text: String,
}

/// The credentials in every string of `value` (and high-entropy values of secret-named
/// fields), at most 64.
pub fn in_value(value: &Value) -> Vec<Located> {
    let mut out = Vec::new();
    walk(value, String::new(), None, &mut out);
    out
}

fn walk(v: &Value, at: String, key: Option<&str>, out: &mut Vec<Located>) {
    if out.len() >= 64 {
        return;
    }
    match v {
        Value::String(s) => {
            for found in find(s.as_bytes()) {
                let text = s[found.span.clone()].to_owned();
                out.push(Located { pointer: at.clone(), kind: found.kind, text });
            }
            if key.is_some_and(secret_name)
                && high_entropy(s)
                && !out.iter().any(|l| l.pointer == at)
            {
                out.push(Located { pointer: at, kind: "secret_field", text: s.clone() });
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                walk(x, format!("{at}/{i}"), key, out);
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                let escaped = k.replace('~', "~0").replace('/', "~1");
                walk(x, format!("{at}/{escaped}"), Some(k), out);
            }
        }
        _ => {}
    }
}

/// The text with each of `secrets` replaced by `[secret redacted: KIND]`.
pub fn redact(text: &str, secrets: &[Secret]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for s in secrets {
        if s.span.start < at
            || !text.is_char_boundary(s.span.start)
            || !text.is_char_boundary(s.span.end)
        {
            continue;
        }
        out.push_str(&text[at..s.span.start]);
        out.push_str(&format!("[secret redacted: {}]", s.kind));
        at = s.span.end;
    }
    out.push_str(&text[at..]);
    out
}
