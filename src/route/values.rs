//! Values a request carries and the parameters that take them: "what's in ~/Downloads?" holds a
//! path, "what did a1b2c3d do?" a commit, "mark WEB-4F2 done" an issue key. A tool whose input
//! schema has a parameter for each kind of value the request holds is more likely the one
//! meant, whatever words the request uses; the router adds that as a signal (docs/routing.md,
//! "Values"). Also the shorthand of developers' requests ("PR", "k8s", "repo") spelt out for
//! both indexes. Sans-IO.

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::sync::LazyLock;

use serde_json::Value;

/// A kind of value found in a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// `~/notes.md`, `/var/log/x.log`, `src/main.rs`, `report.docx`.
    Path = 1,
    /// `https://example.com/a`, `example.com/products`.
    Url = 2,
    /// A commit: 7 to 40 hex digits, letters and digits both.
    Commit = 4,
    /// An issue key: `WEB-4F2`, `PROJ-123`.
    IssueKey = 8,
    /// A number of an issue or pull request: `#42`.
    Number = 16,
    /// `alice@example.com`.
    Email = 32,
    /// `owner/repo`.
    Repo = 64,
    /// `pid 4412`.
    Pid = 128,
}

/// A set of [`Kind`]s.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Kinds(u8);

impl Kinds {
    /// Whether `k` is in the set.
    pub fn has(self, k: Kind) -> bool {
        self.0 & k as u8 != 0
    }

    fn add(&mut self, k: Kind) {
        self.0 |= k as u8;
    }

    /// How many kinds.
    pub fn len(self) -> u32 {
        self.0.count_ones()
    }

    /// Whether there are none.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The kinds in both sets.
    pub fn and(self, other: Kinds) -> Kinds {
        Kinds(self.0 & other.0)
    }

    /// The kinds' names, for reasons (`takes:path`).
    pub fn names(self) -> Vec<&'static str> {
        ALL.iter().filter(|(k, _)| self.has(*k)).map(|(_, n)| *n).collect()
    }
}

const ALL: [(Kind, &str); 8] = [
    (Kind::Path, "path"),
    (Kind::Url, "url"),
    (Kind::Commit, "commit"),
    (Kind::IssueKey, "issue-key"),
    (Kind::Number, "number"),
    (Kind::Email, "email"),
    (Kind::Repo, "repo"),
    (Kind::Pid, "pid"),
];

/// File name endings that make a word a path.
const EXTENSIONS: [&str; 44] = [
    "c", "cfg", "conf", "cpp", "css", "csv", "doc", "docx", "env", "gif", "go", "h", "html", "ini",
    "ipynb", "java", "jpeg", "jpg", "js", "json", "jsx", "kt", "lock", "log", "md", "pdf", "png",
    "py", "rb", "rs", "sh", "sql", "svg", "toml", "ts", "tsv", "tsx", "txt", "xls", "xlsx", "xml",
    "yaml", "yml", "zip",
];

/// Top-level domains that make a word a web address.
const DOMAINS: [&str; 14] =
    ["ai", "app", "co", "com", "dev", "edu", "gov", "io", "me", "net", "org", "sh", "uk", "xyz"];

/// The kinds of value in `query`.
pub fn in_query(query: &str) -> Kinds {
    let mut k = Kinds::default();
    let words: Vec<&str> = query.split_whitespace().collect();
    for (i, raw) in words.iter().enumerate() {
        let w = raw.trim_matches(|c: char| "\"'`()[]{}<>,;:!?".contains(c));
        let w = w.strip_suffix('.').unwrap_or(w);
        if w.is_empty() {
            continue;
        }
        let lower = w.to_ascii_lowercase();
        if lower.starts_with("http://")
            || lower.starts_with("https://")
            || lower.starts_with("www.")
        {
            k.add(Kind::Url);
            continue;
        }
        if w.contains('@')
            && !w.starts_with('@')
            && w.rsplit('@').next().is_some_and(|d| d.contains('.'))
        {
            k.add(Kind::Email);
            continue;
        }
        if lower == "pid"
            && words.get(i + 1).is_some_and(|n| {
                n.trim_matches(|c: char| !c.is_ascii_digit()).parse::<u32>().is_ok()
            })
        {
            k.add(Kind::Pid);
        }
        if w.len() > 1 && w.starts_with('#') && w[1..].bytes().all(|b| b.is_ascii_digit()) {
            k.add(Kind::Number);
            continue;
        }
        if is_commit(w) {
            k.add(Kind::Commit);
            continue;
        }
        if is_issue_key(w) {
            k.add(Kind::IssueKey);
            continue;
        }
        let host = lower.split('/').next().unwrap_or_default();
        if !host.is_empty()
            && host.contains('.')
            && DOMAINS.contains(&host.rsplit('.').next().unwrap_or_default())
            && host
                .split('.')
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        {
            k.add(Kind::Url);
            continue;
        }
        let ext = lower.rsplit_once('.').map(|(stem, e)| (!stem.is_empty(), e));
        let has_ext = ext.is_some_and(|(stem, e)| stem && EXTENSIONS.contains(&e));
        let slashes = w.matches('/').count();
        if w.starts_with('~') || w.starts_with('/') || w.starts_with("./") || w.starts_with("../") {
            if w.len() > 1 {
                k.add(Kind::Path);
            }
        } else if has_ext {
            k.add(Kind::Path);
        } else if slashes == 1 {
            let (a, b) = w.split_once('/').expect("one slash");
            let part = |s: &str| {
                !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
            };
            if part(a) && part(b) && a.bytes().any(|b| b.is_ascii_alphabetic()) {
                k.add(Kind::Repo);
            }
        } else if slashes > 1 && !w.contains("//") {
            k.add(Kind::Path);
        }
    }
    k
}

fn is_commit(w: &str) -> bool {
    (7..=40).contains(&w.len())
        && w.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && w.bytes().any(|b| b.is_ascii_digit())
        && w.bytes().any(|b| b.is_ascii_alphabetic())
}

fn is_issue_key(w: &str) -> bool {
    let Some((project, id)) = w.split_once('-') else { return false };
    (2..=10).contains(&project.len())
        && project.bytes().next().is_some_and(|b| b.is_ascii_uppercase())
        && project.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        && !id.is_empty()
        && id.len() <= 8
        && id.bytes().all(|b| b.is_ascii_alphanumeric())
        && id.bytes().any(|b| b.is_ascii_digit())
}

/// The kinds of value `tool`'s input schema takes, read from its top-level parameters' names
/// (and descriptions, for paths and addresses).
pub fn taken_by(tool: &Value) -> Kinds {
    let mut k = Kinds::default();
    let Some(props) = tool.pointer("/inputSchema/properties").and_then(Value::as_object) else {
        return k;
    };
    for (name, schema) in props {
        let mut words = super::lexical::terms(name);
        words.push(name.to_ascii_lowercase()); // the whole name, stop words too ("to")
        let has = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
        let desc = schema
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_ascii_lowercase();
        // (Terms are stemmed: "files" → "fil", "directory" stays.)
        if has(&["path", "fil", "filenam", "filepath", "dir", "directory", "folder", "cwd"])
            || desc.contains("path to")
            || desc.contains("file path")
        {
            k.add(Kind::Path);
        }
        if has(&["url", "uri", "link", "href", "websit"]) || desc.contains("url") {
            k.add(Kind::Url);
        }
        if has(&["sha", "commit", "revision", "rev", "ref", "hash", "target"]) {
            k.add(Kind::Commit);
        }
        if has(&["key", "issu", "ticket"]) {
            k.add(Kind::IssueKey);
        }
        if has(&["number", "iid", "pull", "issu"]) {
            k.add(Kind::Number);
        }
        if has(&["email", "recipient", "to", "cc"]) {
            k.add(Kind::Email);
        }
        if has(&["owner", "repo", "repository", "project"]) {
            k.add(Kind::Repo);
        }
        if has(&["pid", "process"]) {
            k.add(Kind::Pid);
        }
    }
    k
}

/// Developers' shorthand and the words tools use for it.
const SHORTHAND: [(&str, &str); 22] = [
    ("pr", "pull request"),
    ("prs", "pull requests"),
    ("mr", "merge request"),
    ("mrs", "merge requests"),
    ("repo", "repository"),
    ("repos", "repositories"),
    ("dir", "directory"),
    ("folder", "directory"),
    ("k8s", "kubernetes"),
    ("db", "database"),
    ("env", "environment"),
    ("config", "configuration"),
    ("msg", "message"),
    ("docs", "documentation"),
    ("ci", "pipeline"),
    ("todo", "task"),
    ("ticket", "issue"),
    ("bug", "issue"),
    ("mkdir", "create directory"),
    ("ls", "list directory"),
    ("rm", "delete"),
    ("webpage", "web page"),
];

/// `query` with its shorthand spelt out after it ("raise a PR" → "raise a PR (pull request)");
/// unchanged when it has none.
pub fn expand(query: &str) -> std::borrow::Cow<'_, str> {
    let mut extra = String::new();
    for word in query.split(|c: char| !c.is_alphanumeric()) {
        let lower = word.to_ascii_lowercase();
        if let Some((_, long)) = SHORTHAND.iter().find(|(s, _)| *s == lower)
            && !extra.contains(long)
        {
            extra.push(' ');
            extra.push_str(long);
        }
    }
    if extra.is_empty() {
        std::borrow::Cow::Borrowed(query)
    } else {
        std::borrow::Cow::Owned(format!("{query} ({})", extra.trim_start()))
    }
}

/// How people ask for what a tool's name says: each class holds the words of one operation
/// or object, the tool's own word first. A tool whose name holds a class's first word gets the
/// others in its lexical document, so "bring up", "tack onto" or "get rid of" can meet
/// `read_file`, `append` and `delete_branch` by their words (docs/routing.md, "Ranking").
const CLASSES: [&[&str]; 30] = [
    &["read", "show", "view", "open", "display", "print", "see", "look", "contents", "cat"],
    &["get", "show", "fetch", "retrieve", "look", "check", "what", "details", "info"],
    &["list", "show", "all", "enumerate", "browse", "which", "what"],
    &["search", "find", "look", "lookup", "locate", "where", "query", "grep"],
    &["create", "new", "add", "make", "open", "raise", "file", "start", "submit", "set"],
    &["write", "save", "store", "put", "dump", "record", "overwrite"],
    &["append", "add", "tack", "end", "attach"],
    &["edit", "change", "modify", "replace", "tweak", "fix", "flip", "swap", "adjust"],
    &["update", "change", "modify", "set", "edit", "mark", "rename", "adjust"],
    &["delete", "remove", "drop", "erase", "destroy", "trash", "purge", "discard", "rid"],
    &["move", "rename", "relocate", "mv", "call"],
    &["run", "execute", "invoke", "launch", "start", "trigger", "kick"],
    &["close", "finish", "resolve", "done", "complete", "shut"],
    &["complete", "done", "finish", "tick", "check", "mark"],
    &["merge", "combine", "land", "integrate"],
    &["comment", "reply", "respond", "remark", "note", "say"],
    &["navigate", "go", "visit", "open", "load", "browse"],
    &["click", "press", "tap", "hit", "select"],
    &["screenshot", "capture", "snap", "picture", "grab", "image"],
    &["download", "save", "pull", "grab"],
    &["upload", "attach", "send", "put"],
    &["diff", "compare", "changes", "difference", "changed"],
    &["directory", "folder", "dir"],
    &["file", "document", "doc"],
    &["issue", "ticket", "bug", "task"],
    &["repository", "repo", "project", "codebase"],
    &["message", "post", "chat", "dm"],
    &["page", "site", "website", "tab", "webpage"],
    &["branch", "line"],
    &["log", "history", "entries", "lines"],
];

/// [`CLASSES`] as terms (stop words kept: "get" is one), worked out once.
static CLASS_TERMS: LazyLock<Vec<Vec<String>>> = LazyLock::new(|| {
    CLASSES
        .iter()
        .map(|c| c.iter().map(|w| super::lexical::every_term(w).join(" ")).collect())
        .collect()
});

/// One word of a tool's name, as a term, and the class it heads in [`CLASSES`] (people also ask
/// for it by that class's other words).
#[derive(Debug, Clone, PartialEq)]
pub struct NameWord {
    term: String,
    class: Option<u8>,
}

/// The words of a tool's name ([`super::lexical::parts`]: stop words kept, "get" is one).
pub fn name_words(name: &str) -> Vec<NameWord> {
    super::lexical::parts(name)
        .into_iter()
        .map(|term| {
            let class = CLASS_TERMS.iter().position(|c| c[0] == term).map(|i| i as u8);
            NameWord { term, class }
        })
        .collect()
}

/// What a request offers for naming tools: its distinct terms (stop words kept), numbered,
/// and for each class of [`CLASSES`] the terms of the request that say it.
#[derive(Debug)]
pub struct Asked {
    terms: HashMap<String, u32, foldhash::fast::RandomState>,
    /// By class: a bit per request term (the first 64) that is one of the class's words.
    classes: Vec<u64>,
}

impl Asked {
    /// The request's terms and the classes they say.
    pub fn of(query: &str) -> Asked {
        let mut terms: HashMap<String, u32, _> = HashMap::default();
        for t in super::lexical::every_term(query) {
            let next = terms.len() as u32;
            terms.entry(t).or_insert(next);
        }
        let bit = |t: &str| terms.get(t).filter(|&&i| i < 64).map_or(0, |&i| 1u64 << i);
        let classes = CLASS_TERMS.iter().map(|c| c.iter().fold(0, |m, t| m | bit(t))).collect();
        Asked { terms, classes }
    }

    /// Whether the request names a tool of these name words: each word is in it, as itself or
    /// as a word of its class, and no term of the request stands for two words ("read the
    /// file" does not name `create_file` by "file" twice).
    pub fn names(&self, words: &[NameWord]) -> bool {
        let mut used = 0u64;
        words.iter().all(|w| {
            let own = self.terms.get(&w.term).filter(|&&i| i < 64).map_or(0, |&i| 1u64 << i);
            let class = w.class.map_or(0, |c| self.classes[c as usize]);
            // Its own term when free, else the first free word of its class.
            let free = if own & !used != 0 { own } else { class & !used };
            used |= free & free.wrapping_neg();
            free != 0
        })
    }
}

/// The words [`CLASSES`] adds for a tool of these name words ([`name_words`]; empty when its
/// name holds no class's first word).
pub fn asked_as(words: &[NameWord]) -> String {
    let mut out = String::new();
    for (i, class) in CLASSES.iter().enumerate() {
        if words.iter().any(|w| w.class == Some(i as u8)) {
            for w in &class[1..] {
                out.push_str(w);
                out.push(' ');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kinds(q: &str) -> Vec<&'static str> {
        in_query(q).names()
    }

    #[test]
    fn values_in_requests_are_recognised() {
        assert_eq!(kinds("what's sitting in ~/Downloads?"), ["path"]);
        assert_eq!(kinds("show the bottom 50 entries of /var/log/app/server.log"), ["path"]);
        assert_eq!(kinds("in settings.py flip DEBUG"), ["path"]);
        assert_eq!(kinds("I need assets/img/icons for the new site"), ["path"]);
        assert_eq!(kinds("playwright: go to https://playwright.dev"), ["url"]);
        assert_eq!(kinds("from example.com/products give me each item's name"), ["url"]);
        assert_eq!(kinds("what did a1b2c3d do?"), ["commit"]);
        assert_eq!(kinds("mark WEB-4F2 done, it's fixed in 3.1"), ["issue-key"]);
        assert_eq!(kinds("close #42 on acme/widgets"), ["number", "repo"]);
        assert_eq!(kinds("mail alice@example.com the report"), ["email"]);
        assert_eq!(kinds("is the build I launched (pid 4412) done yet?"), ["pid"]);
        assert_eq!(
            kinds("raise a PR from feature/dark-mode into main on vercel/next-demo"),
            ["repo"]
        );
        // Nothing: plain words, a version, a sentence's full stop, decimals.
        assert!(
            in_query("what is the weather like in Lisbon today. version 3.1 please").is_empty()
        );
        assert!(in_query("deadbeef cafe 1234567").is_empty(), "hex needs letters and digits");
        assert!(in_query("").is_empty());
    }

    #[test]
    fn parameters_say_what_they_take() {
        let tool = json!({"name": "x", "inputSchema": {"type": "object", "properties": {
            "path": {"type": "string"},
            "repoOwner": {"type": "string"},
            "commit_sha": {"type": "string"},
            "link": {"type": "string", "description": "The page"},
        }}});
        assert_eq!(taken_by(&tool).names(), ["path", "url", "commit", "repo"]);
        let mail = json!({"name": "send", "inputSchema": {"properties": {"to": {}, "body": {}}}});
        assert_eq!(taken_by(&mail).names(), ["email"]);
        assert!(taken_by(&json!({"name": "y"})).is_empty());
        let q = in_query("read ~/a.txt at a1b2c3d4");
        assert_eq!(q.and(taken_by(&tool)).len(), 2);
    }

    #[test]
    fn tool_names_get_the_words_people_ask_with() {
        let read = asked_as(&name_words("read_text_file"));
        assert!(read.contains("show") && read.contains("document"), "{read}");
        assert!(asked_as(&name_words("deleteBranch")).contains("remove"));
        assert!(
            asked_as(&name_words("get_issue")).contains("fetch")
                && asked_as(&name_words("get_issue")).contains("ticket")
        );
        assert_eq!(asked_as(&name_words("zzz")), "");
        assert_eq!(asked_as(&name_words("target")), "", "whole words only");
    }

    #[test]
    fn shorthand_is_spelt_out() {
        assert_eq!(
            expand("raise a PR on the repo"),
            "raise a PR on the repo (pull request repository)"
        );
        assert_eq!(expand("list the pods in k8s"), "list the pods in k8s (kubernetes)");
        assert_eq!(expand("no shorthand here"), "no shorthand here");
        assert!(matches!(expand("nothing"), std::borrow::Cow::Borrowed(_)));
    }
}
