//! The texts the router indexes a tool by: the words BM25 sees, the text the embedder sees,
//! and how a name is found in a query.

use serde_json::Value;

use super::super::lexical;

/// Whether `needle` occurs in `haystack` as a whole word: not inside a longer identifier
/// ("remove" does not hold the tool `move`, "thread" not `read`).
pub(super) fn contains_word(haystack: &str, needle: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    haystack.match_indices(needle).any(|(at, _)| {
        !haystack[..at].chars().next_back().is_some_and(ident)
            && !haystack[at + needle.len()..].chars().next().is_some_and(ident)
    })
}

/// The terms of a server's name ("github-enterprise" → github, enterprise, …).
pub(super) fn server_terms(server: &str) -> Vec<String> {
    let mut t = lexical::terms(&server.replace(['-', '_', '.'], " "));
    t.sort();
    t.dedup();
    t
}

/// The text BM25 indexes: the server, the name (twice: a name match counts most), the words
/// people ask for what the name says (`values::asked_as`), the title, the description, and
/// every parameter's name and description.
pub(super) fn lexical_text(server: &str, tool: &Value, asked: &str) -> String {
    let mut s = String::with_capacity(1024);
    let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
    for part in [server, name, name, asked] {
        s.push_str(part);
        s.push(' ');
    }
    for key in ["title", "description"] {
        if let Some(t) = tool.get(key).and_then(Value::as_str) {
            s.push_str(t);
            s.push(' ');
        }
    }
    if let Some(a) = tool.get("annotations").and_then(|a| a.get("title")).and_then(Value::as_str) {
        s.push_str(a);
        s.push(' ');
    }
    params(tool, &mut |name, desc| {
        s.push_str(name);
        s.push(' ');
        s.push_str(desc);
        s.push(' ');
    });
    s
}

/// The text the embedder sees: the name in words, the title, the description's first part, the
/// parameters' names (their descriptions drown the tool's purpose), and the words people ask
/// for what the name says (`values::asked_as`).
pub(super) fn semantic_text(tool: &Value, asked: &str) -> String {
    let mut s = String::with_capacity(1024);
    let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
    s.push_str(&name.replace(['_', '-', '.'], " "));
    s.push_str(". ");
    if let Some(t) = tool.get("title").and_then(Value::as_str) {
        s.push_str(t);
        s.push_str(". ");
    }
    if let Some(d) = tool.get("description").and_then(Value::as_str) {
        let cut = d.char_indices().nth(600).map_or(d.len(), |(i, _)| i);
        s.push_str(&d[..cut]);
        s.push(' ');
    }
    params(tool, &mut |name, _| {
        s.push_str(name);
        s.push(' ');
    });
    s.push_str(asked);
    s
}

/// Calls `f(name, description)` for each top-level parameter of the tool's input schema.
fn params(tool: &Value, f: &mut dyn FnMut(&str, &str)) {
    if let Some(props) = tool.pointer("/inputSchema/properties").and_then(Value::as_object) {
        for (name, schema) in props {
            f(name, schema.get("description").and_then(Value::as_str).unwrap_or_default());
        }
    }
}
