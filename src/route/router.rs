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
pub use super::weights::Weights;

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
    /// [`Router::find`]'s weights, when not [`Weights::search`].
    search_weights: Option<Weights>,
    all_tokens: usize,
    /// Per server, the JSON text of the tools [`sync`](Router::sync) last indexed it from.
    synced: HashMap<String, String>,
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

    /// Other weights for [`find`](Self::find) (default [`Weights::search`]).
    pub fn with_search_weights(mut self, weights: Weights) -> Self {
        self.search_weights = Some(weights);
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
        self.synced.remove(server);
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

    /// Brings the index to `lists` (every server's tools, as [`replace_server`] takes
    /// them): a server not among them is dropped, one whose tools changed is replaced (and of
    /// it only the changed tools indexed again), the others are left as they are. Tools are
    /// compared by their JSON text, so `0.0` and `-0.0`, or a reordered list, count as changes.
    ///
    /// [`replace_server`]: Router::replace_server
    pub fn sync(&mut self, lists: Vec<(String, Vec<(String, Value)>)>) {
        let wanted: std::collections::HashSet<&str> =
            lists.iter().map(|(server, _)| server.as_str()).collect();
        let gone: Vec<String> =
            self.by_server.keys().filter(|s| !wanted.contains(s.as_str())).cloned().collect();
        for server in gone {
            self.remove_server(&server);
        }
        for (server, tools) in lists {
            let text = serde_json::to_string(&tools).expect("JSON");
            if self.synced.get(&server) == Some(&text) {
                continue;
            }
            self.replace_server(&server, tools);
            self.synced.insert(server, text);
        }
    }

    /// Whether [`sync`](Router::sync) would leave `server` as it is for `tools`.
    pub fn holds(&self, server: &str, tools: &[(String, Value)]) -> bool {
        self.synced
            .get(server)
            .is_some_and(|text| serde_json::to_string(tools).is_ok_and(|t| &t == text))
    }

    /// Removes every tool of `server`.
    pub fn remove_server(&mut self, server: &str) {
        self.synced.remove(server);
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
    /// nothing and `Fused` is lexical plus the name boosts). `Fused` routes each step of a
    /// request that names several ([`steps::clauses`](super::steps::clauses)) on its own and
    /// takes the steps' lists in turns, best first, `k` tools in all.
    pub fn route_with(&self, query: &str, k: usize, ranker: Ranker) -> Routing {
        self.route_weighted(query, k, ranker, self.weights)
    }

    /// The `k` tools best fitting a query a model wrote for `ringmcp__find_tools` (the
    /// action and the object of one step): fused, with [`Weights::search`].
    pub fn find(&self, query: &str, k: usize) -> Routing {
        self.route_weighted(
            query,
            k,
            Ranker::Fused,
            self.search_weights.unwrap_or_else(Weights::search),
        )
    }

    fn route_weighted(&self, query: &str, k: usize, ranker: Ranker, w: Weights) -> Routing {
        if ranker == Ranker::Fused {
            let clauses = super::steps::clauses(query);
            if clauses.len() > 1 {
                return self.route_steps(&clauses, k, w);
            }
        }
        self.route_one(query, k, ranker, w)
    }

    /// Each clause routed with the fused ranking, their lists merged in turns (the first of
    /// each, then the second of each, ...) without repeats, up to `k`. (Taking each clause's
    /// best first and the rest by relative score served fewer multi-step requests of the dev
    /// half: bench/route/multistep.py.)
    fn route_steps(&self, clauses: &[String], k: usize, w: Weights) -> Routing {
        let lists: Vec<Routing> =
            clauses.iter().map(|c| self.route_one(c, k, Ranker::Fused, w)).collect();
        let mut tools: Vec<Routed> = Vec::with_capacity(k);
        'turns: for rank in 0..k {
            for list in &lists {
                if tools.len() == k {
                    break 'turns;
                }
                if let Some(t) = list.tools.get(rank)
                    && !tools.iter().any(|have| have.name == t.name)
                {
                    tools.push(t.clone());
                }
            }
        }
        let tokens = tools.iter().map(|t| t.tokens).sum();
        Routing { tools, tokens, all_tokens: self.all_tokens(), catalog: self.len() }
    }

    /// [`route_with`](Self::route_with) for one step.
    fn route_one(&self, query: &str, k: usize, ranker: Ranker, w: Weights) -> Routing {
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
            named_servers = self.boost_named(query, &q_terms, wanted, &mut score, &mut named, w);
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
                matched.extend(reasons(named[i], &e.server, wanted.and(e.takes)));
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

    /// The fused ranking's boosts: a server the query names (every term of its name), a tool
    /// it names (its whole name, or the words people use for it), and the kinds of values it
    /// holds that a tool takes. Marks them in `named` (bits 1, 2, 4); returns the servers named.
    fn boost_named(
        &self,
        query: &str,
        q_terms: &[String],
        wanted: values::Kinds,
        score: &mut [f32],
        named: &mut [u8],
        w: Weights,
    ) -> HashSet<&str> {
        let mut named_servers = HashSet::new();
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
        let per_kind = w.values / wanted.len().max(1) as f32;
        for (slot, entry) in self.slots.iter().enumerate() {
            let Some(e) = entry else { continue };
            let whole = e.own_lower.len() > 3 && contains_word(&q_lower, &e.own_lower);
            if whole || (e.name_words.len() > 1 && asked.names(&e.name_words)) {
                score[slot] += w.tool_named;
                named[slot] |= 2;
            }
            let fit = wanted.and(e.takes).len();
            if fit > 0 && w.values > 0.0 {
                score[slot] += per_kind * fit as f32;
                named[slot] |= 4;
            }
        }
        named_servers
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
/// Why a tool was boosted, in words: `server:NAME`, `name`, `takes:KIND` (`named` as
/// [`Router::boost_named`] marks it).
fn reasons(named: u8, server: &str, takes: values::Kinds) -> Vec<String> {
    let mut out = Vec::new();
    if named & 1 != 0 {
        out.push(format!("server:{server}"));
    }
    if named & 2 != 0 {
        out.push("name".to_owned());
    }
    if named & 4 != 0 {
        out.extend(takes.names().into_iter().map(|k| format!("takes:{k}")));
    }
    out
}

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

mod text;

use text::{contains_word, lexical_text, semantic_text, server_terms};

#[cfg(test)]
mod tests;
