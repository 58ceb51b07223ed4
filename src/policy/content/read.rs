//! One sentence read: its words as classes (with what a negation governs), the identifiers,
//! addresses, secret files and commands it names, and how it opens; and the phrase lists the
//! judge (`judge.rs`) looks for.

use super::lexicon::{self, Classes, *};

/// A sentence's words, read.
pub(crate) struct Read<'a> {
    pub(crate) mask: Classes,
    /// Classes of words no negation governs (what is asked for).
    pub(crate) asked: Classes,
    /// Classes of words a negation governs (`do not TELL`).
    pub(crate) negated: Classes,
    /// "other tools", "any tool", "all tools" (not "every tool call").
    pub(crate) other_tools: bool,
    /// The first word of each class, for explanations.
    pub(crate) words: [&'a str; 32],
    /// The first word, lower-cased.
    pub(crate) first: String,
    /// Identifiers quoted or written like code (`send_email`, `putSchedules`).
    pub(crate) identifiers: Vec<&'a str>,
    /// Web addresses and e-mail addresses.
    pub(crate) destinations: Vec<&'a str>,
    /// Paths and files that hold secrets.
    pub(crate) secret_paths: Vec<&'a str>,
    /// Shell commands that destroy or fetch-and-run.
    pub(crate) commands: Vec<&'a str>,
    /// Digits runs of 6 or more (account numbers).
    pub(crate) long_numbers: usize,
    /// A fixed value a payment or a message could be sent to: an IBAN, an id like
    /// `acct_1Esc9Rw0`, a number of 8 or more digits.
    pub(crate) fixed_target: Option<&'a str>,
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '\'' || c == '_' || c == '-'
}

/// The words of `s`: runs of letters, digits, `'`, `_`, `-`, each lower-cased with
/// look-alike letters folded to Latin ones.
pub(crate) fn words(s: &str) -> impl Iterator<Item = (usize, &str, String)> {
    let base = s.as_ptr() as usize;
    s.split(|c: char| !is_word_char(c) && c != '’').filter(|w| !w.is_empty()).map(move |w| {
        let lower: String = w
            .chars()
            .map(|c| if c == '’' { '\'' } else { c })
            .flat_map(char::to_lowercase)
            .map(|c| lexicon::fold(c).unwrap_or(c))
            .collect();
        (w.as_ptr() as usize - base, w, lower.trim_matches(|c| c == '\'' || c == '-').to_owned())
    })
}

const SECRET_PATHS: &[&str] = &[
    ".ssh",
    "id_rsa",
    "id_ed25519",
    "id_ecdsa",
    ".aws/credentials",
    ".aws/config",
    ".gnupg",
    ".kube/config",
    ".docker/config.json",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    "/etc/shadow",
    "/etc/passwd",
    "/etc/sudoers",
    "mcp.json",
    "claude_desktop_config",
    ".cursor/",
    "wallet.dat",
    ".bash_history",
    ".zsh_history",
    "credentials.json",
    "authorized_keys",
    ".config/gh",
    ".env",
];

const COMMANDS: &[&str] = &[
    "rm -rf",
    "| sh",
    "| bash",
    "|sh",
    "|bash",
    "chmod 777",
    "mkfs",
    "dd if=",
    "curl http",
    "curl -",
    "wget http",
    "wget -",
];

/// Whether `host` is one no data leaves the machine for: loopback. (Documentation names such
/// as `example.com` are addresses like any other; a sentence that shows one as an example,
/// "e.g. https://...", is not asking for anything to be sent.)
fn inert_host(host: &str) -> bool {
    let h = host.trim_end_matches('.').to_ascii_lowercase();
    h == "localhost" || h.ends_with(".localhost") || h.starts_with("127.") || h == "[::1]"
}

/// The host of a URL or e-mail address.
pub(crate) fn host_of(dest: &str) -> &str {
    let rest = dest.split_once("://").map_or(dest, |(_, r)| r);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
    rest.split(['/', '?', '#', ':', ')', ']', '>', '"', '\'']).next().unwrap_or("")
}

pub(crate) fn read(s: &str) -> Read<'_> {
    let mut r = Read {
        mask: 0,
        asked: 0,
        negated: 0,
        other_tools: false,
        words: [""; 32],
        first: String::new(),
        identifiers: Vec::new(),
        destinations: Vec::new(),
        secret_paths: Vec::new(),
        commands: Vec::new(),
        long_numbers: 0,
        fixed_target: None,
    };
    let mut previous: Option<String> = None;
    // Words left that a negation governs (`do not tell`, `never include`, `without asking`).
    let mut negated = 0u32;
    // Words since a word of OTHER (`any other tool`, `all tools`).
    let mut since_other = u32::MAX;
    let mut last_end = 0;
    for (index, (at, raw, word)) in words(s).enumerate() {
        if index == 0 {
            r.first = word.clone();
        }
        // A clause break ends a negation's reach.
        let between = &s[last_end..at];
        if between.contains([',', ':', '(', ')', '—', ';', '.']) || between.contains(" - ") {
            negated = 0;
        }
        last_end = at + raw.len();
        if word.is_empty() {
            // A dash standing alone ends a clause.
            negated = 0;
            continue;
        }
        let mut c = lexicon::classes(&word);
        if let Some(p) = &previous {
            c |= lexicon::pair_classes(p, &word);
        }
        if raw.len() >= 6 && raw.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
            r.long_numbers += 1;
        }
        if r.fixed_target.is_none() && fixed_value(raw) {
            r.fixed_target = Some(raw);
        }
        // A word written like code: snake_case or camelCase.
        let camel = raw.chars().next().is_some_and(char::is_lowercase)
            && raw.chars().skip(1).any(char::is_uppercase);
        let code_like =
            raw.len() > 3 && raw.chars().any(char::is_alphabetic) && (raw.contains('_') || camel);
        if code_like {
            r.identifiers.push(raw);
        }
        for bit in 0..32 {
            if c & (1 << bit) != 0 && r.words[bit].is_empty() {
                r.words[bit] = raw;
            }
        }
        if c & TOOLWORD != 0 && since_other <= 2 {
            r.other_tools = true;
        }
        if r.other_tools
            && matches!(word.as_str(), "call" | "calls" | "invocation")
            && since_other <= 3
            && previous.as_deref().is_some_and(|p| p.starts_with("tool") || p == "function")
        {
            // "every tool call": calls, not tools.
            r.other_tools = false;
        }
        since_other = if c & OTHER != 0 { 0 } else { since_other.saturating_add(1) };
        if c & NEG != 0 {
            negated = 4;
            r.mask |= c;
        } else if negated > 0 {
            negated -= 1;
            r.negated |= c;
            r.mask |= c;
        } else {
            r.mask |= c;
            r.asked |= c;
        }
        previous = Some(word);
    }
    quoted_names(s, &mut r);
    destinations(s, &mut r);
    paths_and_commands(s, &mut r);
    cjk(s, &mut r);
    r
}

/// Quoted names ('x', `x`, "x") count as identifiers when they look like names.
fn quoted_names<'a>(s: &'a str, r: &mut Read<'a>) {
    // Quoted names ('x', `x`, "x") count as identifiers when they look like names.
    for q in ['\'', '`', '"'] {
        let mut parts = s.split(q);
        parts.next();
        while let (Some(inner), Some(_)) = (parts.next(), parts.next()) {
            let inner = inner.trim();
            if (3..=64).contains(&inner.len())
                && inner.chars().all(|c| c.is_alphanumeric() || "_-.:/".contains(c))
                && inner.chars().any(char::is_alphabetic)
            {
                r.identifiers.push(inner);
            }
        }
    }
}

/// Destinations: web addresses and e-mail addresses (not under documentation names).
fn destinations<'a>(s: &'a str, r: &mut Read<'a>) {
    // Destinations: web addresses and e-mail addresses.
    for token in s.split(|c: char| c.is_whitespace() || "()<>[]\"'`,;".contains(c)) {
        let t = token.trim_end_matches(['.', ':', '!', '?']);
        let schemes =
            ["http://", "https://", "s3://", "gs://", "ftp://", "sftp://", "ssh://", "wss://"];
        let is_url = t.len() > 8 && schemes.iter().any(|p| t.starts_with(p));
        let is_mail = t.len() > 5
            && t.split_once('@').is_some_and(|(a, b)| {
                !a.is_empty() && b.contains('.') && !b.starts_with('.') && !b.ends_with('.')
            })
            && !t.contains("://");
        if (is_url || is_mail) && !inert_host(host_of(t)) {
            r.destinations.push(t);
        }
    }
}

/// Files that hold secrets, and shell commands, named in the text.
fn paths_and_commands<'a>(s: &'a str, r: &mut Read<'a>) {
    let lower = s.to_ascii_lowercase();
    for p in SECRET_PATHS {
        if let Some(i) = lower.find(p) {
            // `.env` is a file name, not `.environment` or `.envelope`.
            let end = i + p.len();
            let ends = lower[end..].chars().next().is_none_or(|c| !c.is_alphanumeric());
            let starts =
                *p != ".env" || lower[..i].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
            if ends && starts {
                r.secret_paths.push(&s[i..end]);
            }
        }
    }
    for c in COMMANDS {
        if let Some(i) = lower.find(c) {
            r.commands.push(&s[i..i + c.len()]);
        }
    }
}

/// Chinese and Japanese words of the classes (no spaces to split them by).
fn cjk<'a>(s: &'a str, r: &mut Read<'a>) {
    for (cjk, c) in lexicon::CJK.iter().filter(|_| !s.is_ascii()) {
        if let Some(i) = s.find(cjk) {
            r.mask |= c;
            // A negation right before it governs it (不要告诉: do not tell).
            let before = &s[..i];
            let negated = ["不要", "不得", "别", "勿", "不"].iter().any(|n| before.ends_with(n));
            if negated && c & NEG == 0 {
                r.negated |= c;
            } else {
                r.asked |= c;
            }
            for bit in 0..32 {
                if c & (1 << bit) != 0 && r.words[bit].is_empty() {
                    r.words[bit] = cjk;
                }
            }
        }
    }
}

/// A value that names one fixed place: an id with a prefix and digits (`acct_1Esc9Rw0`,
/// `cus_Reserve0042`), an IBAN's start (`GB33`), a number of 8 or more digits.
fn fixed_value(raw: &str) -> bool {
    let digits = raw.bytes().filter(u8::is_ascii_digit).count();
    let prefixed = raw.split_once('_').is_some_and(|(p, rest)| {
        (2..=5).contains(&p.len())
            && p.bytes().all(|b| b.is_ascii_lowercase())
            && rest.len() >= 6
            && rest.bytes().any(|b| b.is_ascii_digit())
    });
    let iban = raw.len() == 4
        && raw.as_bytes()[..2].iter().all(u8::is_ascii_uppercase)
        && raw.as_bytes()[2..].iter().all(u8::is_ascii_digit);
    prefixed || iban || (digits >= 8 && digits * 10 >= raw.len() * 7)
}

/// Imperative openings: a sentence starting with one of these orders the reader about.
pub(crate) fn imperative(first: &str) -> bool {
    // Not the verbs a tool's description starts with ("Read a file", "Send an email"): those
    // describe the tool.
    matches!(
        first,
        "ignore"
            | "disregard"
            | "forget"
            | "always"
            | "never"
            | "do"
            | "don't"
            | "make"
            | "ensure"
            | "remember"
            | "include"
            | "pass"
            | "append"
            | "prepend"
            | "attach"
            | "bcc"
            | "cc"
            | "tell"
            | "note"
            | "important"
            | "please"
            | "first"
            | "collect"
            | "gather"
            | "summarize"
            | "reply"
            | "respond"
            | "forward"
            | "kindly"
    )
}

/// Words that name an AI reader in text written for people ("AI assistant", "language model",
/// "if you are an LLM").
pub(crate) fn sentence_names_ai(lower: &str) -> bool {
    // An AI spoken to ("Claude:", "AI, when you reply"), not one spoken of ("Co-authored-by:
    // Claude", "AI agents can").
    [
        "ai assistant:",
        "ai assistant,",
        "ai agent:",
        "ai agent,",
        "assistant:",
        "assistant,",
        "note to ai",
        "note to any ai",
        "to the ai",
        "instructions to the ai",
        "instructions for the ai",
        "if you are an ai",
        "if you are an llm",
        "if you're an ai",
        "if you are a language model",
        "dear ai",
        "attention ai",
        " ai:",
        " ai,",
        "llm:",
        "llm,",
        "claude:",
        "claude,",
        "chatgpt:",
        "chatgpt,",
        "copilot:",
        "copilot,",
        "gemini:",
        "gemini,",
        "language model:",
        "ai-instructions",
        "アシスタント",
        "助手",
        "ассистент",
        "asistente",
        "assistant ia",
        "ki-assistent",
    ]
    .iter()
    .any(|n| lower.contains(n))
        || lower.starts_with("ai:")
        || lower.starts_with("ai,")
}

/// Whether an identifier looks like a tool's name (snake_case or camelCase with a verb).
pub(crate) fn looks_like_tool(i: &str) -> bool {
    // A tool's name has parts (`send_email`, `list-files`, `getUser`); `SET` is a word.
    let parts = i.contains(['_', '-'])
        || i.chars().skip(1).any(char::is_uppercase) && i.chars().any(char::is_lowercase);
    if !parts {
        return false;
    }
    // A kebab-case name is written in lower case (`Set-Cookie` is a header).
    if i.contains('-') && i.chars().any(char::is_uppercase) {
        return false;
    }
    let lower = i.to_ascii_lowercase();
    let first = lower.split(['_', '-']).next().unwrap_or("");
    matches!(
        first,
        "get"
            | "list"
            | "create"
            | "send"
            | "delete"
            | "update"
            | "read"
            | "write"
            | "search"
            | "run"
            | "execute"
            | "fetch"
            | "query"
            | "put"
            | "post"
            | "add"
            | "remove"
            | "set"
            | "transfer"
            | "pay"
            | "make"
            | "upload"
            | "download"
            | "move"
            | "copy"
            | "edit"
    ) || (first.len() > 2
        && i.chars().skip(1).any(char::is_uppercase)
        && ["get", "list", "create", "send", "delete", "update", "read", "write", "search"]
            .iter()
            .any(|v| lower.starts_with(v)))
}

/// Phrases of a voice claiming authority over the model (a system, admin or developer).
pub(crate) const AUTHORITY: &[&str] = &[
    "{{system",
    "role=system",
    "priority=highest",
    "guidelines are suspended",
    "safety guidelines",
    "no restrictions",
    "unrestricted",
    "jailbreak",
    "new instructions",
    "you are now",
    "developer mode",
    "system override",
    "[system]",
    "<system>",
    "</system>",
    "<important>",
    "</important>",
    "[admin]",
    "### instruction",
    "<instructions>",
    "begin system",
    "system message:",
    "system note",
    "admin note",
    "message from the system",
    "from the developer",
];

/// Phrases that ask for what the user or the model said before, or the model's own context.
pub(crate) const HARVEST: &[&str] = &[
    "preceding conversation",
    "recent chat",
    "chat so far",
    "conversation so far",
    "everything the user said",
    "your system prompt",
    "your instructions",
    "how you've been instructed",
    "you have been instructed",
    "your memory",
    "your memories",
    "your context window",
    "information the user shared",
    "the user shared earlier",
    "all messages the user",
    "user's previous messages",
    "prior conversation",
    "user's last",
    "stored facts",
    "hidden instructions",
    "system instructions",
    "you have seen",
    "you've seen",
    "currently know",
    "you know about",
    "information you have access to",
    "the user shared",
    "present in the environment",
    "session cookie",
    "login details",
    "username/password",
    "your available tools",
    "tool calls you made",
    "tool call you made",
    "documents or emails",
    "the user has mentioned",
    "the user mentioned",
    "you remember about",
    "between you and the user",
    "chain of thought",
    "developer messages",
    "system/developer",
    "contents of all files",
    "payment card",
    "card number",
    "medications",
    "up to this point",
    "verbatim dialogue",
];
