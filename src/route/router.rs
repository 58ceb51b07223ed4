//! The router: a catalog of every server's tools, ranked for a query by the lexical and the
//! semantic index together, with the token cost of what it would inject. Sans-IO.

#![forbid(unsafe_code)]

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::embed::{Embedder, VectorIndex};
use super::lexical::{self, Bm25};
use super::tokens;
use super::values;

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
    /// Added, in proportion, to a tool with parameters for the kinds of value the query holds
    /// (a path, a URL, a commit, … see [`super::values`]).
    pub values: f32,
}

impl std::str::FromStr for Weights {
    type Err = String;
    /// `lexical=0.2,server=0.25,tool=0.5,diversity=0.03,values=0.5`: any of them, the rest
    /// at their defaults.
    fn from_str(s: &str) -> Result<Self, String> {
        let mut w = Weights::default();
        for part in s.split(',').filter(|p| !p.trim().is_empty()) {
            let (key, value) =
                part.split_once('=').ok_or_else(|| format!("{part:?}: want NAME=NUMBER"))?;
            let v: f32 = value.trim().parse().map_err(|_| format!("{part:?}: not a number"))?;
            if !v.is_finite() || v < 0.0 {
                return Err(format!("{part:?}: weights are finite and not negative"));
            }
            match key.trim() {
                "lexical" if v <= 1.0 => w.lexical = v,
                "lexical" => return Err("lexical is a share: 0 to 1".into()),
                "server" => w.server_named = v,
                "tool" => w.tool_named = v,
                "diversity" => w.diversity = v,
                "values" => w.values = v,
                other => {
                    return Err(format!(
                        "unknown weight {other:?}: lexical, server, tool, diversity or values"
                    ));
                }
            }
        }
        Ok(w)
    }
}

impl Default for Weights {
    fn default() -> Self {
        Weights { lexical: 0.2, server_named: 0.25, tool_named: 0.5, diversity: 0.03, values: 0.5 }
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

impl CatalogEntry {
    /// A catalog's tools grouped by server, servers in the order they first appear, each
    /// server's tools in catalog order.
    pub fn by_server(entries: Vec<CatalogEntry>) -> Vec<(String, Vec<crate::protocol::Tool>)> {
        let mut at: HashMap<String, usize> = HashMap::new();
        let mut out: Vec<(String, Vec<crate::protocol::Tool>)> = Vec::new();
        for e in entries {
            match at.get(&e.server) {
                Some(&i) => out[i].1.push(e.tool),
                None => {
                    at.insert(e.server.clone(), out.len());
                    out.push((e.server, vec![e.tool]));
                }
            }
        }
        out
    }
}

/// One tool in the catalog.
#[derive(Debug, Clone)]
struct Entry {
    /// The name the host exposes (`server__tool`).
    name: String,
    server: String,
    /// The tool's definition exactly as `tools/list` gave it (name is the server's own).
    tool: Value,
    /// Tokens of its definition as injected (compact JSON, o200k_base).
    tokens: usize,
    /// The same count by stretch of the definition, for recounting only what an edit changed.
    stretches: Vec<tokens::Stretch>,
    /// The tool's own name, lowercased (for exact-name boosts).
    own_lower: String,
    /// The words of the tool's own name, each with the words people ask for it by (for
    /// exact-name boosts: [`values::name_words`]).
    name_words: Vec<values::NameWord>,
    /// The kinds of value its parameters take.
    takes: values::Kinds,
}

/// What indexing one new definition takes, worked out from it alone (so many at once run in
/// parallel): its lexical terms, the text for the embedder, its token count, its name's forms.
struct Indexed {
    terms: lexical::Terms,
    /// For the embedder: the text, or its vector already when the embedder is cheap per text.
    text: Option<String>,
    vector: Option<Vec<f32>>,
    tokens: usize,
    stretches: Vec<tokens::Stretch>,
    own_lower: String,
    name_words: Vec<values::NameWord>,
    takes: values::Kinds,
}

impl Indexed {
    /// `before`: the definition this one replaces, if any (its unchanged parts keep their
    /// token counts).
    fn of(
        server: &str,
        tool: &Value,
        embedder: Option<&dyn Embedder>,
        before: Option<&Entry>,
    ) -> Self {
        let own = tool.get("name").and_then(Value::as_str).unwrap_or_default();
        let name_words = values::name_words(own);
        let asked = values::asked_as(&name_words);
        let (tokens, stretches) =
            tokens::count_json(tool, before.map(|e| (&e.tool, e.stretches.as_slice())));
        let (text, vector) = match embedder {
            Some(e) if e.per_text() => (None, Some(e.embed(&semantic_text(tool, &asked)))),
            Some(_) => (Some(semantic_text(tool, &asked)), None),
            None => (None, None),
        };
        Indexed {
            terms: lexical::Terms::of(&lexical_text(server, tool, &asked)),
            text,
            vector,
            tokens,
            stretches,
            own_lower: own.to_lowercase(),
            name_words,
            takes: values::taken_by(tool),
        }
    }
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
///
/// Each tool has a slot (reused once its server drops it); both indexes score into an array
/// indexed by slot, so a query allocates a few flat arrays and builds results for the head only.
#[derive(Debug, Default, Clone)]
pub struct Router {
    slots: Vec<Option<Entry>>,
    free: Vec<u32>,
    by_name: HashMap<String, u32>,
    by_server: HashMap<String, Vec<u32>>,
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
        assert!(self.by_name.is_empty(), "set the embedder before adding tools");
        self.embedder = Some(embedder);
        self
    }

    /// [`Router::with_embedder`] when there is one (`None`: keywords only).
    pub fn with_optional_embedder(self, embedder: Option<Arc<dyn Embedder>>) -> Self {
        match embedder {
            Some(e) => self.with_embedder(e),
            None => self,
        }
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
        self.by_name.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The definition of the tool exposed as `name`, and its server.
    pub fn tool(&self, name: &str) -> Option<(&str, &Value)> {
        let e = self.entry(*self.by_name.get(name)?);
        Some((e.server.as_str(), &e.tool))
    }

    /// Tokens of every tool's definition together.
    pub fn all_tokens(&self) -> usize {
        self.all_tokens
    }

    fn entry(&self, slot: u32) -> &Entry {
        self.slots[slot as usize].as_ref().expect("a live slot")
    }

    /// Replaces `server`'s tools by `tools` (`(exposed name, definition)` pairs, definitions as
    /// `tools/list` gave them): one server's `list_changed` re-indexes only that server, and of
    /// it only the tools whose definitions changed (an unchanged tool keeps its slot, terms,
    /// vector and token count).
    pub fn replace_server(&mut self, server: &str, tools: Vec<(String, Value)>) {
        let old = self.by_server.remove(server).unwrap_or_default();
        let mut old_by_name: HashMap<&str, u32> =
            old.iter().map(|&slot| (self.entry(slot).name.as_str(), slot)).collect();
        let mut kept = Vec::with_capacity(tools.len());
        let mut fresh: Vec<(String, Value)> = Vec::new();
        // A name listed twice: its first definition counts.
        let mut seen = HashSet::with_capacity(tools.len());
        for (name, tool) in tools {
            if !seen.insert(name.clone()) {
                continue;
            }
            match old_by_name.get(name.as_str()) {
                Some(&slot) if tokens::identical(&self.entry(slot).tool, &tool) => {
                    old_by_name.remove(name.as_str());
                    kept.push(slot);
                }
                Some(_) => fresh.push((name, tool)),
                None if self.by_name.contains_key(&name) => {} // another server's: names are the caller's to keep unique
                None => fresh.push((name, tool)),
            }
        }
        let gone: Vec<u32> = old_by_name.into_values().collect();
        self.lexical.remove_docs(server, &gone);
        self.vectors.remove_docs(server, &gone);
        // The definitions replaced, by name (a new version recounts only what changed).
        let mut before = HashMap::new();
        for &slot in &gone {
            let e = self.slots[slot as usize].take().expect("a live slot");
            self.all_tokens -= e.tokens;
            self.by_name.remove(&e.name);
            self.free.push(slot);
            before.insert(e.name.clone(), e);
        }
        let fresh: Vec<_> = fresh
            .into_iter()
            .map(|(name, tool)| {
                let old = before.remove(&name);
                (name, tool, old)
            })
            .collect();
        // Each new definition is indexed apart from the others: spread over the cores (and the
        // definition it replaces dropped there too).
        let embedder = self.embedder.as_deref();
        let work = super::par::map_owned(fresh, 8, |(name, tool, old)| {
            let w = Indexed::of(server, &tool, embedder, old.as_ref());
            (name, tool, w)
        });
        let mut lexical_docs = Vec::with_capacity(work.len());
        let mut texts = Vec::new();
        let mut vectors = Vec::new();
        let mut added = Vec::with_capacity(work.len());
        for (name, tool, w) in work {
            let slot = self.free.pop().unwrap_or_else(|| {
                self.slots.push(None);
                (self.slots.len() - 1) as u32
            });
            lexical_docs.push((slot, w.terms));
            texts.extend(w.text);
            vectors.extend(w.vector.map(|v| (slot, v)));
            self.all_tokens += w.tokens;
            let entry = Entry {
                own_lower: w.own_lower,
                name_words: w.name_words,
                takes: w.takes,
                name: name.clone(),
                server: server.to_owned(),
                tool,
                tokens: w.tokens,
                stretches: w.stretches,
            };
            self.slots[slot as usize] = Some(entry);
            self.by_name.insert(name, slot);
            added.push(slot);
        }
        self.lexical.add_terms(server, lexical_docs);
        if let Some(e) = &self.embedder {
            // A batch embedder's vectors (none are left when the embedder took each text).
            vectors.extend(added.iter().copied().zip(e.embed_batch(&texts)));
            self.vectors.add(server, vectors);
        }
        kept.extend(added);
        self.server_terms.insert(server.to_owned(), server_terms(server));
        self.by_server.insert(server.to_owned(), kept);
    }

    /// Removes every tool of `server`.
    pub fn remove_server(&mut self, server: &str) {
        for slot in self.by_server.remove(server).unwrap_or_default() {
            if let Some(e) = self.slots[slot as usize].take() {
                self.all_tokens -= e.tokens;
                self.by_name.remove(&e.name);
                self.free.push(slot);
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
        let n = self.slots.len();
        // The router spells shorthand out ("PR" → pull request); each index alone, as the
        // baseline it is measured against, sees the query as written.
        let query: &str = &if ranker == Ranker::Fused {
            values::expand(query)
        } else {
            std::borrow::Cow::Borrowed(query)
        };
        let q_terms = Bm25::query_terms(query);
        // Raw signals per slot, then the fused score.
        let mut lexical = vec![0.0f32; n];
        let mut semantic = vec![0.0f32; n];
        let mut score = vec![0.0f32; n];
        let mut named = vec![0u8; n]; // bit 1: its server is named; 2: the tool is; 4: values
        if ranker != Ranker::Semantic {
            let top = self.lexical.score_into(&q_terms, &mut lexical);
            let share = if ranker == Ranker::Lexical { 1.0 } else { w.lexical };
            let scale = share / top.max(f32::MIN_POSITIVE);
            for (s, l) in score.iter_mut().zip(&lexical) {
                *s += scale * l;
            }
        }
        if ranker != Ranker::Lexical
            && let Some(e) = &self.embedder
            && let Some((lo, hi)) = self.vectors.score_into(&e.embed(query), &mut semantic)
        {
            let share = if ranker == Ranker::Semantic { 1.0 } else { 1.0 - w.lexical };
            // Min-max over the catalog; when every cosine is the same (one tool, or a query
            // the embedder knows nothing of), the cosine itself, so nothing is lost.
            let (lo, span) = if hi - lo > 1e-6 { (lo, hi - lo) } else { (0.0, 1.0) };
            for (slot, entry) in self.slots.iter().enumerate() {
                if entry.is_some() {
                    score[slot] += share * ((semantic[slot] - lo) / span).max(0.0);
                }
            }
        }
        let mut named_servers = HashSet::new();
        let wanted = if ranker == Ranker::Fused {
            values::in_query(query)
        } else {
            values::Kinds::default()
        };
        if ranker == Ranker::Fused {
            let q_set: HashSet<&str> = q_terms.iter().map(String::as_str).collect();
            for (server, terms) in &self.server_terms {
                if !terms.is_empty() && terms.iter().all(|t| q_set.contains(t.as_str())) {
                    named_servers.insert(server.as_str());
                    for &slot in &self.by_server[server] {
                        score[slot as usize] += w.server_named;
                        named[slot as usize] |= 1;
                    }
                }
            }
            let q_lower = query.to_lowercase();
            let asked = values::Asked::of(query);
            for (slot, entry) in self.slots.iter().enumerate() {
                let Some(e) = entry else { continue };
                let whole = e.own_lower.len() > 3 && contains_word(&q_lower, &e.own_lower);
                if whole || (e.name_words.len() > 1 && asked.names(&e.name_words)) {
                    score[slot] += w.tool_named;
                    named[slot] |= 2;
                }
            }
            if !wanted.is_empty() && w.values > 0.0 {
                let per_kind = w.values / wanted.len() as f32;
                for (slot, entry) in self.slots.iter().enumerate() {
                    let Some(e) = entry else { continue };
                    let fit = wanted.and(e.takes).len();
                    if fit > 0 {
                        score[slot] += per_kind * fit as f32;
                        named[slot] |= 4;
                    }
                }
            }
        }
        // Only the head can be returned (diversity reorders within k * 3).
        let head =
            if ranker == Ranker::Fused && w.diversity > 0.0 { k.saturating_mul(3) } else { k };
        let mut order: Vec<u32> = (0..n as u32)
            .filter(|&s| score[s as usize] > 0.0 && self.slots[s as usize].is_some())
            .collect();
        let better = |a: &u32, b: &u32| {
            score[*b as usize]
                .total_cmp(&score[*a as usize])
                .then_with(|| self.entry(*a).name.cmp(&self.entry(*b).name))
        };
        if order.len() > head && head > 0 {
            order.select_nth_unstable_by(head - 1, better);
            order.truncate(head);
        }
        order.truncate(head);
        order.sort_unstable_by(better);
        let ranked: Vec<Routed> = order
            .into_iter()
            .map(|slot| {
                let i = slot as usize;
                let e = self.entry(slot);
                let mut matched = if lexical[i] > 0.0 {
                    self.lexical.matched(&q_terms, slot)
                } else {
                    Vec::new()
                };
                if named[i] & 1 != 0 {
                    matched.push(format!("server:{}", e.server));
                }
                if named[i] & 2 != 0 {
                    matched.push("name".to_owned());
                }
                if named[i] & 4 != 0 {
                    let kinds = wanted.and(e.takes);
                    matched.extend(kinds.names().into_iter().map(|k| format!("takes:{k}")));
                }
                Routed {
                    name: e.name.clone(),
                    server: e.server.clone(),
                    score: score[i],
                    lexical: lexical[i],
                    semantic: semantic[i],
                    matched,
                    tokens: e.tokens,
                }
            })
            .collect();
        let tools = if ranker == Ranker::Fused && w.diversity > 0.0 {
            diversify(ranked, k, w.diversity, &named_servers)
        } else {
            ranked
        };
        Routing {
            tokens: tools.iter().map(|t| t.tokens).sum(),
            tools,
            all_tokens: self.all_tokens,
            catalog: self.len(),
        }
    }

    /// Bytes the catalog and its indexes hold, counted from their contents (definitions,
    /// postings, vectors); the embedder's own table is not included.
    pub fn memory_bytes(&self) -> usize {
        let defs: usize = self
            .slots
            .iter()
            .flatten()
            .map(|e| e.name.len() * 2 + e.own_lower.len() + e.tool.to_string().len() + 160)
            .sum();
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
    let mut taken: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::with_capacity(k.min(ranked.len()));
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

/// Whether `needle` occurs in `haystack` as a whole word: not inside a longer identifier
/// ("remove" does not hold the tool `move`, "thread" not `read`).
fn contains_word(haystack: &str, needle: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    haystack.match_indices(needle).any(|(at, _)| {
        !haystack[..at].chars().next_back().is_some_and(ident)
            && !haystack[at + needle.len()..].chars().next().is_some_and(ident)
    })
}

/// The terms of a server's name ("github-enterprise" → github, enterprise, …).
fn server_terms(server: &str) -> Vec<String> {
    let mut t = lexical::terms(&server.replace(['-', '_', '.'], " "));
    t.sort();
    t.dedup();
    t
}

/// The text BM25 indexes: the server, the name (twice: a name match counts most), the words
/// people ask for what the name says ([`values::asked_as`]), the title, the description, and
/// every parameter's name and description.
fn lexical_text(server: &str, tool: &Value, asked: &str) -> String {
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
/// for what the name says ([`values::asked_as`]).
fn semantic_text(tool: &Value, asked: &str) -> String {
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
    fn names_match_whole_words_only() {
        assert!(contains_word("run read_file on x", "read_file"));
        assert!(contains_word("read_file", "read_file"));
        assert!(!contains_word("a thread dump", "read"));
        assert!(!contains_word("remove it", "move"));
        assert!(contains_word("move: it", "move"));
        assert!(contains_word("é move", "move"));
    }

    #[test]
    fn a_tool_named_in_the_query_comes_first() {
        let r = catalog();
        let got = r.route("run read_file on notes.txt", 3);
        assert_eq!(got.tools[0].name, "filesystem__read_file");
        assert!(got.tools[0].matched.contains(&"name".to_owned()));
    }

    #[test]
    fn a_name_is_named_by_every_word_or_the_words_people_use_for_it() {
        let mut r = Router::new();
        let tools = [
            tool("get_pull_request", "Get details of a specific pull request", &["number"]),
            tool("create_pull_request", "Create a new pull request", &["title", "head"]),
            tool("listIssues", "List issues in a repository", &["state"]),
            tool("list_k8s_pods", "Pods of a cluster", &["namespace"]),
            tool("create_file", "Make a file", &["path"]),
        ];
        r.replace_server(
            "github",
            tools
                .iter()
                .map(|t| (format!("github__{}", t["name"].as_str().unwrap()), t.clone()))
                .collect(),
        );
        let named = |q: &str| -> Vec<String> {
            r.route(q, 3)
                .tools
                .into_iter()
                .filter(|t| t.matched.contains(&"name".to_owned()))
                .map(|t| t.name)
                .collect()
        };
        // "get" is a stop word: mentioning a pull request alone does not name get_pull_request.
        assert_eq!(named("open a pull request"), ["github__create_pull_request"]);
        assert_eq!(named("show me the details of pull request 7"), ["github__get_pull_request"]);
        assert_eq!(named("the pull request"), Vec::<String>::new());
        // camelCase names are named by their words too, and names with digits in a word.
        assert_eq!(named("show all open issues"), ["github__listIssues"]);
        assert_eq!(named("list k8s pods"), ["github__list_k8s_pods"]);
        // One word of the request does not stand for two of the name.
        assert_eq!(named("read the file notes.txt"), Vec::<String>::new());
        assert_eq!(named("file a new doc"), ["github__create_file"]);
    }

    #[test]
    fn a_catalog_groups_by_server_in_first_seen_order() {
        let entry = |server: &str, name: &str| CatalogEntry {
            server: server.into(),
            tool: serde_json::from_value(tool(name, "", &[])).unwrap(),
        };
        let entries = vec![entry("b", "x"), entry("a", "y"), entry("b", "z")];
        let got: Vec<(String, Vec<String>)> = CatalogEntry::by_server(entries)
            .into_iter()
            .map(|(s, t)| (s, t.into_iter().map(|t| t.name).collect()))
            .collect();
        assert_eq!(
            got,
            [("b".into(), vec!["x".into(), "z".into()]), ("a".into(), vec!["y".into()])]
        );
    }

    #[test]
    fn a_name_listed_twice_keeps_its_first_definition() {
        let mut r = Router::new();
        let old = tool("read_file", "Read a file", &["path"]);
        let new = tool("read_file", "Read a file's text", &["path"]);
        r.replace_server("fs", vec![("fs__read_file".into(), old.clone())]);
        // The first copy is a new version, the second the unchanged old one: the first counts.
        r.replace_server(
            "fs",
            vec![("fs__read_file".into(), new.clone()), ("fs__read_file".into(), old)],
        );
        assert_eq!(r.len(), 1);
        assert_eq!(r.tool("fs__read_file").map(|(_, t)| t), Some(&new));
        assert_eq!(r.all_tokens(), tokens::count(&new.to_string()));
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

    /// Embeds by counting: each text gets a vector, and the calls are counted.
    #[derive(Debug, Default)]
    struct Counting(std::sync::atomic::AtomicUsize);

    impl Embedder for Counting {
        fn dim(&self) -> usize {
            2
        }
        fn embed(&self, text: &str) -> Vec<f32> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut v = vec![text.len() as f32, 1.0];
            super::super::embed::normalize(&mut v);
            v
        }
        fn name(&self) -> &str {
            "counting"
        }
    }

    #[test]
    fn a_list_change_reindexes_only_the_tools_that_changed() {
        let counting = Arc::new(Counting::default());
        let mut r = Router::new().with_embedder(counting.clone());
        let defs = |desc: &str| {
            vec![
                ("fs__read_file".to_owned(), tool("read_file", "Read a file", &["path"])),
                ("fs__move_file".to_owned(), tool("move_file", desc, &["from", "to"])),
                ("fs__stat".to_owned(), tool("stat", "File metadata", &["path"])),
            ]
        };
        r.replace_server("fs", defs("Move a file"));
        let calls = || counting.0.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(calls(), 3);
        let before = r.all_tokens();
        // The same list again (a server restart): nothing re-embedded.
        r.replace_server("fs", defs("Move a file"));
        assert_eq!((calls(), r.all_tokens()), (3, before));
        // One description changed, one tool dropped: one embedding, the rest kept.
        let mut changed = defs("Move or rename a file or a directory");
        changed.remove(2);
        r.replace_server("fs", changed);
        assert_eq!(calls(), 4);
        assert_eq!(r.len(), 2);
        assert!(r.tool("fs__stat").is_none());
        let got = r.route_with("rename a directory", 2, Ranker::Lexical);
        assert_eq!(got.tools[0].name, "fs__move_file");
        assert!(got.tools[0].matched.contains(&"renam".to_owned()), "{:?}", got.tools[0]);
        assert!(r.route_with("metadata", 2, Ranker::Lexical).tools.is_empty());
        // The freed slot is reused by the next tool, and its old vector is not.
        r.replace_server("other", vec![("other__x".into(), tool("x", "Something else", &[]))]);
        // (Min-max scaling leaves the least similar tool at 0: two of the three come back.)
        let semantic = r.route_with("something", 3, Ranker::Semantic);
        assert_eq!(semantic.tools.len(), 2);
        assert!(semantic.tools.iter().all(|t| r.tool(&t.name).is_some()));
        assert_eq!(r.route_with("something", 1, Ranker::Lexical).tools[0].name, "other__x");
    }
}
