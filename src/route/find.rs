//! Tool search with the model in the loop (docs/routing.md, "The model in the loop"): the
//! `ringmcp__find_tools` tool a host offers instead of every tool, how its calls are read, and
//! how its results are written. The model, not the user, writes the query: the definition names
//! the connected servers (so the model knows what can be found), and the instructions say how to
//! search (the action and the object, one search per step). Used by `ringmcp gateway
//! --tool-search` and by [`HostRouter`](crate::host::HostRouter) for an embedding host. Sans-IO.

use serde_json::{Value, json};

use super::router::{Router, Routing};

/// The meta-tool's name.
pub const FIND_TOOLS: &str = "ringmcp__find_tools";

/// Most tools one `find_tools` call returns.
pub const MAX_K: usize = 20;

/// How many tools a call returns when it does not say.
pub const DEFAULT_K: usize = 5;

/// Most servers the definition names (the rest are counted).
const MAX_SERVERS: usize = 40;

/// Longest description of one server in the definition, in characters.
const MAX_ABOUT: usize = 120;

/// What the host tells the model about searching, as its `instructions`.
pub const SEARCH_INSTRUCTIONS: &str = "The tools of the connected servers are found with ringmcp__find_tools rather than listed. Before each step of a task, search for the tool it needs: name the action and the object (\"create issue\", \"read file\", \"send email\"), with the server or product when you know it; one search per step, not one for the whole task. The tools a search returns join your tool list and can be called right away.";

/// One connected server, as the definition names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerBrief {
    /// Its name (the prefix of its tools' names).
    pub name: String,
    /// What it is for, in a few words (see [`about`]).
    pub about: Option<String>,
}

/// What a server is for, in a few words: its config's own `description`, else its
/// `serverInfo`'s `description` or `title`, else the first sentence of its `instructions`;
/// cut to a short line.
pub fn about(
    configured: Option<&str>,
    server_info: Option<&Value>,
    instructions: Option<&str>,
) -> Option<String> {
    let info = |key: &str| server_info.and_then(|i| i.get(key)).and_then(Value::as_str);
    let text = [configured, info("description"), info("title"), instructions.map(first_sentence)]
        .into_iter()
        .flatten()
        .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
        .find(|t| !t.is_empty())?;
    Some(shorten(&text, MAX_ABOUT))
}

fn first_sentence(text: &str) -> &str {
    let end = text
        .char_indices()
        .find(|&(i, c)| {
            matches!(c, '.' | '!' | '?' | '\n')
                && text[i + c.len_utf8()..].chars().next().is_none_or(char::is_whitespace)
        })
        .map_or(text.len(), |(i, c)| i + c.len_utf8());
    &text[..end]
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max - 1).collect();
    let cut = cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head);
    format!("{}…", cut.trim_end_matches([',', ';', ':', ' ']))
}

/// The `ringmcp__find_tools` definition, naming `servers` (in order; a server without a
/// description by name alone).
pub fn definition(servers: &[ServerBrief]) -> Value {
    let mut description = String::from(
        "Search the tools of the connected servers by what you want to do: name the action and the object (\"create issue\", \"read file\"), one search per step of a task. Returns the best matching tool definitions (name, description, input schema); they join your tool list and can be called right away.",
    );
    if !servers.is_empty() {
        description.push_str("\n\nConnected servers:");
        for s in servers.iter().take(MAX_SERVERS) {
            match &s.about {
                Some(about) => description.push_str(&format!("\n- {}: {about}", s.name)),
                None => description.push_str(&format!("\n- {}", s.name)),
            }
        }
        if servers.len() > MAX_SERVERS {
            description.push_str(&format!("\n- and {} more", servers.len() - MAX_SERVERS));
        }
    }
    json!({
        "name": FIND_TOOLS,
        "title": "Find tools",
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "The action and its object, e.g. \"create issue\" or \"read file\"; add the server or product when you know it."},
                "k": {"type": "integer", "minimum": 1, "maximum": MAX_K, "description": "How many tools to return (default 5)."}
            },
            "required": ["query"]
        },
        "annotations": {"readOnlyHint": true, "openWorldHint": false},
    })
}

/// A `find_tools` call's query and how many tools it asks for (clamped to 1..=[`MAX_K`]).
///
/// # Errors
/// What is wrong with the arguments (a missing or blank `query`), to answer with -32602.
pub fn arguments(arguments: &Value) -> Result<(&str, usize), String> {
    let query = arguments.get("query").and_then(Value::as_str).filter(|q| !q.trim().is_empty());
    let Some(query) = query else {
        return Err(format!("{FIND_TOOLS} needs \"query\": the action and its object, in words"));
    };
    let k = arguments
        .get("k")
        .and_then(Value::as_u64)
        .map_or(DEFAULT_K as u64, |k| k.clamp(1, MAX_K as u64)) as usize;
    Ok((query, k))
}

/// The result of a `find_tools` call that `router` answered with `routing`: a short text (one
/// line a tool: its name and the first line of its description) and the definitions, named as
/// routed, in `structuredContent`.
pub fn result(query: &str, router: &Router, routing: &Routing) -> Value {
    let defs: Vec<Value> = (routing.tools.iter())
        .filter_map(|t| {
            let (_, tool) = router.tool(&t.name)?;
            let mut def = tool.clone();
            def["name"] = Value::from(t.name.as_str());
            Some(def)
        })
        .collect();
    let lines: Vec<String> = defs
        .iter()
        .map(|d| {
            let name = d.get("name").and_then(Value::as_str).unwrap_or_default();
            let desc = d.get("description").and_then(Value::as_str).unwrap_or_default();
            let first = desc.lines().find(|l| !l.trim().is_empty()).unwrap_or_default();
            format!("{name} — {}", shorten(first.trim(), 160))
        })
        .collect();
    let text = if lines.is_empty() {
        format!("No tool matches {query:?}: name the action and the object in other words.")
    } else {
        format!(
            "{} tool(s) found; they are now in your tool list and can be called:\n{}",
            lines.len(),
            lines.join("\n")
        )
    };
    json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": {
            "tools": defs,
            "tokens": routing.tokens,
            "allTokens": routing.all_tokens,
            // Which embedder ranked (null: keywords only, no table found).
            "embedder": router.embedder(),
        },
        "isError": false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_is_described_by_the_best_source_it_has() {
        let info = json!({"name": "gh", "version": "1", "title": "GitHub",
                          "description": "Issues, pull requests and code search on GitHub."});
        assert_eq!(
            about(Some("Our tracker"), Some(&info), None).as_deref(),
            Some("Our tracker"),
            "the config's own first"
        );
        assert_eq!(
            about(None, Some(&info), None).as_deref(),
            Some("Issues, pull requests and code search on GitHub.")
        );
        let titled = json!({"name": "gh", "version": "1", "title": "GitHub"});
        assert_eq!(about(None, Some(&titled), Some("Use it well.")).as_deref(), Some("GitHub"));
        let bare = json!({"name": "fs", "version": "1"});
        assert_eq!(
            about(
                None,
                Some(&bare),
                Some("Reads and writes files under /srv. Paths are absolute.")
            )
            .as_deref(),
            Some("Reads and writes files under /srv.")
        );
        assert_eq!(about(None, Some(&bare), Some("  ")), None);
        let long = "word ".repeat(60);
        let cut = about(Some(&long), None, None).unwrap();
        assert!(cut.chars().count() <= MAX_ABOUT && cut.ends_with('…'), "{cut}");
    }

    #[test]
    fn the_definition_names_the_servers_and_the_arguments_are_checked() {
        let servers = [
            ServerBrief { name: "github".into(), about: Some("Issues and pull requests".into()) },
            ServerBrief { name: "fs".into(), about: None },
        ];
        let def = definition(&servers);
        let text = def["description"].as_str().unwrap();
        assert!(text.contains("\n- github: Issues and pull requests\n- fs"), "{text}");
        assert_eq!(def["name"], FIND_TOOLS);
        let many: Vec<ServerBrief> =
            (0..50).map(|i| ServerBrief { name: format!("s{i}"), about: None }).collect();
        assert!(definition(&many)["description"].as_str().unwrap().ends_with("- and 10 more"));
        assert_eq!(arguments(&json!({"query": "read file"})).unwrap(), ("read file", DEFAULT_K));
        assert_eq!(arguments(&json!({"query": "x", "k": 500})).unwrap().1, MAX_K);
        assert!(arguments(&json!({"query": "  "})).is_err());
        assert!(arguments(&json!({})).unwrap_err().contains("query"));
    }
}
