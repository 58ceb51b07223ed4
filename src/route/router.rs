//! The router: a catalog of every server's tools, ranked for a query by the lexical and the
//! semantic index together, with the token cost of what it would inject. Sans-IO.

#![forbid(unsafe_code)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::embed::{Embedder, VectorIndex};
use super::lexical::{self, Bm25};
use super::tokens;

/// Which signals rank (the fused default; the others exist to measure it against).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Ranker {
    /// BM25 alone.
    Lexical,
    /// The embedder alone (cosine).
    Semantic,
    /// Both, fused, with name boosts and diversity.
    #[default]
    Fused,
}

impl std::str::FromStr for Ranker {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "lexical" | "bm25" => Ok(Ranker::Lexical),
            "semantic" | "embed" => Ok(Ranker::Semantic),
            "fused" => Ok(Ranker::Fused),
            other => Err(format!("unknown ranker {other:?}: lexical, semantic or fused")),
        }
    }
}

/// The fusion's knobs (defaults tuned on the development half of bench/route; see
/// docs/routing.md).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    /// Share of the lexical score in the fused one (the semantic share is `1 - lexical`).
    pub lexical: f32,
    /// Added to every tool of a server the query names ("github", "k8s").
    pub server_named: f32,
    /// Added to a tool whose own name the query contains ("read_file").
    pub tool_named: f32,
    /// Taken off per tool already chosen from the same server, unless the query names it:
    /// ambiguous queries see several servers' tools.
    pub diversity: f32,
}

impl Default for Weights {
    fn default() -> Self {
        Weights { lexical: 0.35, server_named: 0.25, tool_named: 0.5, diversity: 0.03 }
    }
}

/// One line of a catalog file (`ringmcp route --catalog`, `ringmcp inspect --catalog-out`):
/// a server's name and one of its tools exactly as `tools/list` gave it.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct CatalogEntry {
    /// The server's name.
    pub server: String,
    /// The tool's definition.
    pub tool: crate::protocol::Tool,
}

/// One tool in the catalog.
#[derive(Debug, Clone)]
struct Entry {
    server: String,
    /// The tool's definition exactly as `tools/list` gave it (name is the server's own).
    tool: Value,
    /// Tokens of its definition as injected (compact JSON, o200k_base).
    tokens: usize,
    /// The lexical terms of the tool's own name (for exact-name boosts).
    name_terms: Vec<String>,
}

/// One routed tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Routed {
    /// The name the host exposes (`server__tool`).
    pub name: String,
    /// The server it is on.
    pub server: String,
    /// The fused score (higher is better; comparable within one query only).
    pub score: f32,
    /// BM25 score, before normalisation.
    pub lexical: f32,
    /// Cosine with the query (0 without an embedder).
    pub semantic: f32,
    /// Why: the query terms the tool's document matched, and `server:NAME` / `name` when the
    /// query named its server or the tool.
    pub matched: Vec<String>,
    /// Tokens its definition costs in the context.
    pub tokens: usize,
}

/// What [`Router::route`] returns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Routing {
    /// The chosen tools, best first.
    pub tools: Vec<Routed>,
    /// Tokens of the chosen tools' definitions together.
    pub tokens: usize,
    /// Tokens of every tool's definition: what injecting them all would cost.
    pub all_tokens: usize,
    /// How many tools the catalog holds.
    pub catalog: usize,
}

/// The catalog and its two indexes; updated per server.
#[derive(Debug, Default, Clone)]
pub struct Router {
    tools: BTreeMap<String, Entry>,
    by_server: HashMap<String, Vec<String>>,
    /// Each server name's terms (so "github" in a query finds server `github`).
    server_terms: HashMap<String, Vec<String>>,
    lexical: Bm25,
    vectors: VectorIndex,
    embedder: Option<Arc<dyn Embedder>>,
    weights: Weights,
    all_tokens: usize,
}

impl Router {
    /// An empty router; without an embedder it ranks lexically (see [`Router::with_embedder`]).
    pub fn new() -> Self {
        Router::default()
    }

    /// Adds a semantic index fed by `embedder` (before any tool is added).
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        assert!(self.tools.is_empty(), "set the embedder before adding tools");
        self.embedder = Some(embedder);
        self
    }

    /// Other fusion weights.
    pub fn with_weights(mut self, weights: Weights) -> Self {
        self.weights = weights;
        self
    }

    /// The embedder's name, if there is one.
    pub fn embedder(&self) -> Option<&str> {
        self.embedder.as_deref().map(|e| e.name())
    }

    /// How many tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The definition of the tool exposed as `name`, and its server.
    pub fn tool(&self, name: &str) -> Option<(&str, &Value)> {
        self.tools.get(name).map(|e| (e.server.as_str(), &e.tool))
    }

    /// Tokens of every tool's definition together.
    pub fn all_tokens(&self) -> usize {
        self.all_tokens
    }

    /// Replaces `server`'s tools by `tools` (`(exposed name, definition)` pairs, definitions as
    /// `tools/list` gave them): one server's `list_changed` re-indexes only that server.
    pub fn replace_server(&mut self, server: &str, tools: Vec<(String, Value)>) {
        self.remove_server(server);
        let mut lexical_docs = Vec::with_capacity(tools.len());
        let mut vectors = Vec::with_capacity(tools.len());
        let mut names = Vec::with_capacity(tools.len());
        for (name, tool) in tools {
            if self.tools.contains_key(&name) {
                continue; // another server's: names are the caller's to keep unique
            }
            let own = tool.get("name").and_then(Value::as_str).unwrap_or_default();
            lexical_docs.push((name.clone(), lexical_text(server, &tool)));
            if let Some(e) = &self.embedder {
                vectors.push((name.clone(), e.embed(&semantic_text(&tool))));
            }
            let tokens = tokens::count(&tool.to_string());
            self.all_tokens += tokens;
            let name_terms = lexical::terms(own);
            self.tools.insert(
                name.clone(),
                Entry { server: server.to_owned(), tool, tokens, name_terms },
            );
            names.push(name);
        }
        self.lexical.replace(server, lexical_docs);
        if self.embedder.is_some() {
            self.vectors.replace(server, vectors);
        }
        self.server_terms.insert(server.to_owned(), server_terms(server));
        self.by_server.insert(server.to_owned(), names);
    }

    /// Removes every tool of `server`.
    pub fn remove_server(&mut self, server: &str) {
        for name in self.by_server.remove(server).unwrap_or_default() {
            if let Some(e) = self.tools.remove(&name) {
                self.all_tokens -= e.tokens;
            }
        }
        self.server_terms.remove(server);
        self.lexical.remove(server);
        self.vectors.remove(server);
    }

    /// The `k` tools best fitting `query`, fused.
    pub fn route(&self, query: &str, k: usize) -> Routing {
        self.route_with(query, k, Ranker::Fused)
    }

    /// The `k` tools best fitting `query` by `ranker` (without an embedder, `Semantic` finds
    /// nothing and `Fused` is lexical plus the name boosts).
    pub fn route_with(&self, query: &str, k: usize, ranker: Ranker) -> Routing {
        let w = self.weights;
        let mut cands: HashMap<&str, Routed> = HashMap::new();
        let blank = |name: &str, e: &Entry| Routed {
            name: name.to_owned(),
            server: e.server.clone(),
            score: 0.0,
            lexical: 0.0,
            semantic: 0.0,
            matched: Vec::new(),
            tokens: e.tokens,
        };
        if ranker != Ranker::Semantic {
            let hits = self.lexical.search(query, self.tools.len());
            let top = hits.first().map_or(0.0, |h| h.score);
            for h in hits {
                let Some((name, e)) = self.tools.get_key_value(&h.key) else { continue };
                let r = cands.entry(name.as_str()).or_insert_with(|| blank(name, e));
                r.lexical = h.score;
                r.matched = h.matched;
                let share = if ranker == Ranker::Lexical { 1.0 } else { w.lexical };
                r.score += share * h.score / top.max(f32::MIN_POSITIVE);
            }
        }
        if ranker != Ranker::Lexical
            && let Some(e) = &self.embedder
        {
            let q = e.embed(query);
            let scores: Vec<(&str, f32)> = self.vectors.scores(&q).collect();
            let (lo, hi) = scores
                .iter()
                .fold((f32::MAX, f32::MIN), |(lo, hi), (_, s)| (lo.min(*s), hi.max(*s)));
            let span = (hi - lo).max(1e-6);
            let share = if ranker == Ranker::Semantic { 1.0 } else { 1.0 - w.lexical };
            for (key, cos) in scores {
                let Some((name, e)) = self.tools.get_key_value(key) else { continue };
                let r = cands.entry(name.as_str()).or_insert_with(|| blank(name, e));
                r.semantic = cos;
                r.score += share * (cos - lo) / span;
            }
        }
        let mut named_servers = HashSet::new();
        if ranker == Ranker::Fused {
            let q_terms: HashSet<String> = lexical::terms(query).into_iter().collect();
            for (server, terms) in &self.server_terms {
                if !terms.is_empty() && terms.iter().all(|t| q_terms.contains(t)) {
                    named_servers.insert(server.as_str());
                    for name in &self.by_server[server] {
                        let e = &self.tools[name];
                        let r = cands.entry(name.as_str()).or_insert_with(|| blank(name, e));
                        r.score += w.server_named;
                        r.matched.push(format!("server:{server}"));
                    }
                }
            }
            let q_lower = query.to_lowercase();
            for r in cands.values_mut() {
                let e = &self.tools[&r.name];
                let own = e.tool.get("name").and_then(Value::as_str).unwrap_or_default();
                let whole = own.len() > 3 && q_lower.contains(&own.to_lowercase());
                if whole
                    || (e.name_terms.len() > 1 && e.name_terms.iter().all(|t| q_terms.contains(t)))
                {
                    r.score += w.tool_named;
                    r.matched.push("name".to_owned());
                }
            }
        }
        let mut ranked: Vec<Routed> = cands.into_values().filter(|r| r.score > 0.0).collect();
        ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.name.cmp(&b.name)));
        let tools = if ranker == Ranker::Fused && w.diversity > 0.0 {
            diversify(ranked, k, w.diversity, &named_servers)
        } else {
            ranked.truncate(k);
            ranked
        };
        Routing {
            tokens: tools.iter().map(|t| t.tokens).sum(),
            tools,
            all_tokens: self.all_tokens,
            catalog: self.tools.len(),
        }
    }

    /// Bytes the catalog and its indexes hold, counted from their contents (definitions,
    /// postings, vectors); the embedder's own table is not included.
    pub fn memory_bytes(&self) -> usize {
        let defs: usize =
            self.tools.iter().map(|(k, e)| k.len() * 2 + e.tool.to_string().len() + 96).sum();
        defs + self.lexical.memory_bytes() + self.vectors.memory_bytes()
    }
}

/// Greedy pick of `k` from `ranked` (best first) where each further tool of one server costs
/// `penalty` times the number already taken from it, but for servers the query named.
fn diversify(
    mut ranked: Vec<Routed>,
    k: usize,
    penalty: f32,
    named: &HashSet<&str>,
) -> Vec<Routed> {
    // Only the head can be reordered: a tool further down than k * 3 never wins a place.
    ranked.truncate(k.saturating_mul(3).max(k));
    let mut taken: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::with_capacity(k);
    while out.len() < k && !ranked.is_empty() {
        let adjusted = |r: &Routed| {
            let n = if named.contains(r.server.as_str()) {
                0
            } else {
                taken.get(&r.server).copied().unwrap_or(0)
            };
            r.score - penalty * n as f32
        };
        let best = (0..ranked.len())
            .max_by(|&a, &b| adjusted(&ranked[a]).total_cmp(&adjusted(&ranked[b])).then(b.cmp(&a)))
            .expect("non-empty");
        let r = ranked.remove(best);
        *taken.entry(r.server.clone()).or_default() += 1;
        out.push(r);
    }
    out
}

/// The terms of a server's name ("github-enterprise" → github, enterprise, …).
fn server_terms(server: &str) -> Vec<String> {
    let mut t = lexical::terms(&server.replace(['-', '_', '.'], " "));
    t.sort();
    t.dedup();
    t
}

/// The text BM25 indexes: the server, the name (twice: a name match counts most), the title,
/// the description, and every parameter's name and description.
fn lexical_text(server: &str, tool: &Value) -> String {
    let mut s = String::new();
    let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
    for part in [server, name, name] {
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

/// The text the embedder sees: the name in words, the title, the description's first part, and
/// the parameters' names (their descriptions drown the tool's purpose).
fn semantic_text(tool: &Value) -> String {
    let mut s = String::new();
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, desc: &str, params: &[&str]) -> Value {
        let props: serde_json::Map<String, Value> =
            params.iter().map(|p| (p.to_string(), json!({"type": "string"}))).collect();
        json!({"name": name, "description": desc, "inputSchema": {"type": "object", "properties": props}})
    }

    fn catalog() -> Router {
        let mut r = Router::new();
        r.replace_server(
            "github",
            vec![
                (
                    "github__create_issue".into(),
                    tool(
                        "create_issue",
                        "Create a new issue in a repository",
                        &["owner", "repo", "title"],
                    ),
                ),
                (
                    "github__search_code".into(),
                    tool("search_code", "Search code across repositories", &["q"]),
                ),
            ],
        );
        r.replace_server(
            "gitlab",
            vec![(
                "gitlab__create_issue".into(),
                tool("create_issue", "Create a new issue in a project", &["project_id", "title"]),
            )],
        );
        r.replace_server(
            "filesystem",
            vec![
                (
                    "filesystem__read_file".into(),
                    tool("read_file", "Read the complete contents of a file", &["path"]),
                ),
                (
                    "filesystem__list_directory".into(),
                    tool("list_directory", "List the entries of a directory", &["path"]),
                ),
            ],
        );
        r
    }

    #[test]
    fn a_named_server_wins_and_reasons_are_given() {
        let r = catalog();
        let got = r.route("open an issue on gitlab", 2);
        assert_eq!(got.tools[0].name, "gitlab__create_issue");
        assert!(got.tools[0].matched.iter().any(|m| m == "server:gitlab"), "{:?}", got.tools[0]);
        let got = r.route("file an issue in github", 1);
        assert_eq!(got.tools[0].name, "github__create_issue");
        assert_eq!(got.catalog, 5);
        assert_eq!(got.tokens, got.tools[0].tokens);
        assert!(got.all_tokens > got.tokens && got.tokens > 10);
    }

    #[test]
    fn ambiguous_queries_see_both_servers() {
        let r = catalog();
        let got = r.route("create issue", 2);
        let servers: HashSet<&str> = got.tools.iter().map(|t| t.server.as_str()).collect();
        assert_eq!(servers.len(), 2, "{:?}", got.tools);
    }

    #[test]
    fn a_tool_named_in_the_query_comes_first() {
        let r = catalog();
        let got = r.route("run read_file on notes.txt", 3);
        assert_eq!(got.tools[0].name, "filesystem__read_file");
        assert!(got.tools[0].matched.contains(&"name".to_owned()));
    }

    #[test]
    fn one_server_is_replaced_alone_and_tokens_follow() {
        let mut r = catalog();
        let before = r.all_tokens();
        r.replace_server(
            "filesystem",
            vec![("filesystem__read_file".into(), tool("read_file", "Read a file", &["path"]))],
        );
        assert_eq!(r.len(), 4);
        assert!(r.all_tokens() < before);
        assert!(
            r.route("list the entries of a directory", 5)
                .tools
                .iter()
                .all(|t| t.name != "filesystem__list_directory")
        );
        r.remove_server("github");
        r.remove_server("gitlab");
        r.remove_server("filesystem");
        assert_eq!((r.len(), r.all_tokens()), (0, 0));
        assert!(r.route("anything", 5).tools.is_empty());
    }
}
