//! Tool poisoning: instructions aimed at the model hidden in a tool's definition. Every
//! model-visible string (title, description, every string and property name of its schemas,
//! annotations, `_meta`) is judged by what it asks the model to do (`policy::content`), in
//! the scope of the tool: its own name and parameters say what its business is (a dotenv
//! tool may read `.env`; a calculator asking for it may not), its server's other tools may be
//! named in workflow advice, another server's tools may not. A sentence is flagged at
//! [`THRESHOLD`]; weaker sentences in different places of one definition add up. Parameters
//! that ask for the conversation or the model's instructions are judged by their names too.
//! How well it does is measured in docs/policy.md.

use serde_json::Value;

use super::content::{self, Scope, judge_text, split_identifier};
pub use super::content::{Finding, Signal, THRESHOLD};
use crate::protocol::Tool;

/// Every model-visible string of a tool, with where each is.
fn texts(tool: &Tool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(t) = &tool.title {
        out.push(("title".to_owned(), t.clone()));
    }
    if let Some(d) = &tool.description {
        out.push(("description".to_owned(), d.clone()));
    }
    fn strings(v: &Value, at: String, out: &mut Vec<(String, String)>) {
        match v {
            // An identifier-like value (an enum member, a default) is read as words.
            Value::String(s) if !s.contains(char::is_whitespace) && s.contains('_') => {
                out.push((at, s.replace(['_', '-'], " ")))
            }
            Value::String(s) => out.push((at, s.clone())),
            Value::Array(a) => {
                a.iter().enumerate().for_each(|(i, x)| strings(x, format!("{at}/{i}"), out))
            }
            Value::Object(m) => m.iter().for_each(|(k, x)| {
                // Property names are model-visible too.
                out.push((format!("{at}/{k}#name"), k.replace(['_', '-'], " ")));
                strings(x, format!("{at}/{k}"), out);
            }),
            _ => {}
        }
    }
    strings(&tool.input_schema, "inputSchema".into(), &mut out);
    if let Some(s) = &tool.output_schema {
        strings(s, "outputSchema".into(), &mut out);
    }
    if let Some(a) = &tool.annotations {
        strings(a, "annotations".into(), &mut out);
    }
    for (k, v) in &tool.extra {
        strings(v, k.clone(), &mut out);
    }
    out
}

/// The names of a schema's properties, at any depth.
fn property_names(schema: &Value, out: &mut Vec<String>) {
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (k, v) in props {
            out.push(k.clone());
            property_names(v, out);
        }
    }
    if let Some(items) = schema.get("items") {
        property_names(items, out);
    }
}

/// Parameter names that ask for the model's own context.
const CONTEXT_PARAMS: &[&str] = &[
    "conversation",
    "chat history",
    "chat log",
    "system prompt",
    "previous messages",
    "prior messages",
    "message history",
    "conversation history",
    "full context",
    "user messages",
    "assistant instructions",
];

/// Words of a tool's purpose under which a secret-named parameter is its own business.
const AUTH_WORDS: &[&str] = &[
    "auth",
    "login",
    "credential",
    "secret",
    "password",
    "key",
    "token",
    "vault",
    "account",
    "connect",
    "config",
    "sign",
    "session",
    "oauth",
    "ssh",
    "user",
    "env",
    "database",
];

/// A finding on parameter `name`'s name.
fn parameter(name: &str, reason: String, score: u32) -> Finding {
    Finding {
        location: format!("inputSchema/properties/{name}#name"),
        signals: vec![Signal::Parameter],
        excerpt: name.to_owned(),
        reasons: vec![reason],
        score,
        span: 0..0,
    }
}

/// The parameters of `tool` whose names ask for what it has no business with.
fn parameter_findings(tool: &Tool, names: &[String]) -> Vec<Finding> {
    let purpose: Vec<String> = split_identifier(&tool.name)
        .into_iter()
        .chain(tool.title.iter().flat_map(|t| split_identifier(t)))
        .collect();
    let described = tool.description.as_deref().unwrap_or("").to_lowercase();
    let mut out = Vec::new();
    // Tools whose business is a model's context: agents, assistants, prompts, chats.
    let context_tool = purpose.iter().any(|w| {
        [
            "agent",
            "assistant",
            "bot",
            "prompt",
            "chat",
            "llm",
            "model",
            "completion",
            "message",
            "conversation",
            "thread",
        ]
        .iter()
        .any(|c| w.starts_with(c))
    });
    for name in names {
        let parts = split_identifier(name);
        // What a value is called, not the value (`conversationId`, `secretType`).
        if parts.last().is_some_and(|p| {
            ["id", "ids", "type", "name", "ref", "count", "url", "key"].contains(&p.as_str())
                && parts.len() > 1
        }) || parts.first().is_some_and(|p| {
            ["allow", "use", "enable", "require", "has", "is", "include"].contains(&p.as_str())
        }) {
            continue;
        }
        let words = parts.join(" ");
        let asks_context =
            CONTEXT_PARAMS.iter().find(|p| words.contains(*p) && !context_tool).filter(|p| {
                !p.split(' ')
                    .any(|w| purpose.iter().any(|q| q == w || q.trim_end_matches('s') == w))
            });
        if let Some(p) = asks_context {
            out.push(parameter(
                name,
                format!(
                    "a parameter named for the model's {p}, which a tool named {:?} has no use for",
                    tool.name
                ),
                3,
            ));
            continue;
        }
        let secret = content::secrets::secret_name(name);
        let auth = purpose.iter().any(|w| AUTH_WORDS.iter().any(|a| w.starts_with(a)))
            || ["authenticat", "credential", "api key", "token", "password", "login", "sign in"]
                .iter()
                .any(|w| described.contains(w));
        if secret && !auth {
            out.push(parameter(
                name,
                format!(
                    "a parameter for a credential in a tool ({:?}) that says nothing of signing in",
                    tool.name
                ),
                1,
            ));
        }
    }
    out
}

/// A tool's model-visible strings, its parameters' names, and the scope it is judged in.
fn read_tool<'a>(
    tool: &'a Tool,
    siblings: &'a [&'a str],
    foreign: &'a [&'a str],
) -> (Vec<(String, String)>, Vec<String>, Scope<'a>) {
    let texts = texts(tool);
    let mut params = Vec::new();
    property_names(&tool.input_schema, &mut params);
    let mut scope = Scope::definition(&tool.name, params.iter().cloned(), siblings, foreign);
    let all: String = texts.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join(" ");
    scope.set_latin(content::mostly_latin(&all));
    (texts, params, scope)
}

/// Every sentence of a tool's definition with where it is and its features (for fitting the
/// judge's weights: `ringmcp scan --features`).
#[doc(hidden)]
pub fn tool_features(
    tool: &Tool,
    siblings: &[&str],
    foreign: &[&str],
) -> Vec<(String, String, Vec<String>)> {
    let (texts, _, scope) = read_tool(tool, siblings, foreign);
    texts
        .iter()
        .flat_map(|(at, text)| {
            content::sentence_features(at, text, &scope)
                .into_iter()
                .map(move |(s, f)| (at.clone(), s, f))
        })
        .collect()
}

/// The findings of one tool definition.
pub fn scan_tool(tool: &Tool) -> Vec<Finding> {
    scan_tool_among(tool, &[], &[])
}

/// The findings of one tool definition; `siblings` are the names of its server's other tools
/// (which workflow advice may name), `foreign` the names of other servers' tools.
pub fn scan_tool_among(tool: &Tool, siblings: &[&str], foreign: &[&str]) -> Vec<Finding> {
    let (texts, params, scope) = read_tool(tool, siblings, foreign);
    let mut weak = parameter_findings(tool, &params);
    for (at, text) in &texts {
        weak.extend(judge_text(at, text, &scope));
    }
    let mut flagged = content::flagged(weak.clone());
    // Only signals of some weight add up (a parameter named `token` in an app spec is not
    // half an attack).
    weak.retain(|f| f.score >= 2);
    if flagged.is_empty() {
        // Weaker sentences in different places add up: a payload split across the
        // description and a parameter, or two medium signals.
        let score: u32 = weak.iter().map(|f| f.score).sum();
        if weak.len() >= 2 && score > THRESHOLD {
            let reasons: Vec<String> =
                weak.iter().map(|f| format!("{}: {}", f.location, f.reasons.join("; "))).collect();
            let mut signals: Vec<Signal> = weak.iter().flat_map(|f| f.signals.clone()).collect();
            signals.dedup();
            flagged.push(Finding {
                location: "definition".into(),
                signals,
                excerpt: weak[0].excerpt.clone(),
                reasons,
                score,
                span: 0..0,
            });
        }
    }
    flagged
}

/// The findings of each tool of a listing, each judged with its server's other tools as its
/// siblings.
pub fn scan_listing(tools: &[Tool], foreign: &[&str]) -> Vec<Vec<Finding>> {
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    tools.iter().map(|t| scan_tool_among(t, &names, foreign)).collect()
}

/// Judges a server's `instructions` or a prompt's text (written for the model, with no tool of
/// its own).
pub fn scan_text(location: &str, text: &str, foreign: &[&str]) -> Vec<Finding> {
    let scope = Scope::definition("", std::iter::empty(), &[], foreign);
    content::flagged(judge_text(location, text, &scope))
}
