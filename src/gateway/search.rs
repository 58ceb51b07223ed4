//! The gateway's tool-routing modes (docs/gateway.md, "Tool search"): with `toolSearch`, the
//! upstream `tools/list` holds the gateway's own tools and `ringmcp__find_tools`, plus the tools
//! found so far; with `toolBudget`, it holds the backends' tools, in order, up to that many
//! tokens, and `ringmcp__find_tools` for the rest. A tool found by `find_tools` joins the list
//! (announced with `list_changed`); every tool stays callable by name either way.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};

use serde_json::Value;

use super::catalog::{Catalog, OWN};
use super::lock;
use crate::jsonrpc::{ErrorObject, codes};
use crate::route::{Embedder, Router, find, tokens};

/// The meta-tool's name.
pub(crate) const FIND_TOOL: &str = find::FIND_TOOLS;

/// The embedder from `path` (default: the one [`load_embedder`] finds), loaded once per process
/// and path: every HTTP session's gateway shares it. A load that failed is tried again once the
/// path changes (a table installed or rebuilt while the gateway runs is picked up; until then
/// nothing is re-read and the warning is not repeated).
///
/// [`load_embedder`]: crate::host::embedding::load_embedder
fn embedder(path: Option<&Path>) -> Option<Arc<dyn Embedder>> {
    let mut loaded = shared().lock().unwrap_or_else(PoisonError::into_inner);
    let key = path.map(Path::to_owned);
    let now = stamp(&path.map_or_else(crate::host::embedding::embed_table_path, Path::to_owned));
    match loaded.get(&key) {
        Some(Slot::Ready(e)) => return Some(e.clone()),
        Some(Slot::Failed(seen)) if *seen == now => return None,
        _ => {}
    }
    let e = crate::host::embedding::load_embedder(path);
    loaded.insert(key, e.clone().map_or(Slot::Failed(now), Slot::Ready));
    e
}

/// One path's embedder: loaded, or not loadable while the path looked like this.
#[derive(Debug)]
enum Slot {
    Ready(Arc<dyn Embedder>),
    Failed(Option<Stamp>),
}

/// What a path looked like: its modification time and length (`None`: it does not exist).
type Stamp = (std::time::SystemTime, u64);

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

type Loaded = HashMap<Option<PathBuf>, Slot>;

/// The embedders loaded in this process, by path (`None`: the default one).
fn shared() -> &'static Mutex<Loaded> {
    static SHARED: OnceLock<Mutex<Loaded>> = OnceLock::new();
    SHARED.get_or_init(Default::default)
}

/// Loads the embedder at `path` now (the gateway's start) into the shared set, so that a wrong
/// path is refused before any client connects and the first search does not wait for it.
pub fn preload_embedder(path: &Path) -> Result<(), crate::host::embedding::EmbedError> {
    let e = crate::host::embedding::open_embedder(path)?;
    shared()
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(Some(path.to_owned()), Slot::Ready(e));
    Ok(())
}

/// The router over the catalog, and the tools found so far.
///
/// Indexing can take long (seconds, when the full encoder embeds a few hundred new tools), so
/// it never runs on the session's thread: [`Search::warm_later`] and [`Search::find`] run on the
/// runtime's blocking pool, and the router sits behind a lock of its own, apart from the found
/// set that `tools/list` reads ([`Search::visible`] never waits for an indexing).
#[derive(Debug, Default)]
pub(crate) struct Search {
    /// Where the embedder comes from (`gateway.embeddings`).
    embeddings: Option<PathBuf>,
    index: Mutex<Index>,
    /// Upstream names `find_tools` returned.
    found: Mutex<BTreeSet<String>>,
    /// The newest lists handed to [`Search::warm_later`].
    wanted: Mutex<Weak<Catalog>>,
}

#[derive(Debug, Default)]
struct Index {
    /// Brought up to date with [`Router::sync`]: a rebuilt catalog re-indexes only the
    /// backends whose tools changed.
    router: Option<Router>,
    /// The lists the router was last brought up to date with: searching them again needs no
    /// look at the backends' definitions.
    synced: Weak<Catalog>,
}

impl Search {
    /// A search whose router's embedder comes from `embeddings` (a table file or a model
    /// folder; `None`: the default one).
    pub(crate) fn new(embeddings: Option<PathBuf>) -> Self {
        Search { embeddings, ..Search::default() }
    }

    /// Brings the router up to date with `catalog` (`names[i]` is backend `i`'s name) ahead of
    /// the first search, on the blocking pool: the gateway calls it whenever the lists change.
    /// Lists that newer ones replaced before their turn came are skipped (their indexing would
    /// be undone).
    pub(crate) fn warm_later(self: &Arc<Self>, catalog: &Arc<Catalog>, names: Vec<String>) {
        *lock(&self.wanted) = Arc::downgrade(catalog);
        let (search, catalog) = (self.clone(), catalog.clone());
        tokio::task::spawn_blocking(move || {
            let mut index = search.index();
            if lock(&search.wanted).upgrade().is_some_and(|newest| Arc::ptr_eq(&newest, &catalog)) {
                search.sync(&mut index, &catalog, &names);
            }
        });
    }

    /// The router's lock. An indexing that panicked may have left the router half-updated, so
    /// the next holder starts over from nothing.
    fn index(&self) -> std::sync::MutexGuard<'_, Index> {
        self.index.lock().unwrap_or_else(|poisoned| {
            let mut index = poisoned.into_inner();
            *index = Index::default();
            self.index.clear_poison();
            index
        })
    }

    /// Brings the router up to date with `catalog` (`names[i]` is backend `i`'s name).
    fn sync(&self, index: &mut Index, catalog: &Arc<Catalog>, names: &[String]) {
        if index.router.as_ref().is_some_and(|r| r.embedder().is_none())
            && let Some(e) = embedder(self.embeddings.as_deref())
        {
            // The embedder could not be loaded before and can now: index everything again
            // with it.
            *index = Index { router: Some(Router::new().with_embedder(e)), ..Index::default() };
        }
        if index.synced.upgrade().is_some_and(|synced| Arc::ptr_eq(&synced, catalog)) {
            return;
        }
        let router = index.router.get_or_insert_with(|| {
            Router::new().with_optional_embedder(embedder(self.embeddings.as_deref()))
        });
        let mut by: HashMap<&str, Vec<(String, Value)>> = HashMap::new();
        for tool in catalog.tools() {
            let Some(name) = tool.get("name").and_then(Value::as_str) else { continue };
            let Some(target) = catalog.tool(name) else { continue };
            if target.backend == OWN {
                continue;
            }
            let server = names.get(target.backend).map_or("", String::as_str);
            // The router ranks by the tool's own name (as the backend lists it); the
            // definitions handed upstream get the exposed name back (`find`).
            let mut own = tool.clone();
            own["name"] = Value::from(target.name.as_str());
            by.entry(server).or_default().push((name.to_owned(), own));
        }
        router.sync(by.into_iter().map(|(server, tools)| (server.to_owned(), tools)).collect());
        index.synced = Arc::downgrade(catalog);
    }

    /// The upstream `tools/list` in these modes: the own tools (`find_tools` among them), the
    /// catalog's tools in order while they fit the budget (if any), and the tools found so far.
    pub(crate) fn visible(&self, catalog: &Catalog, budget: Option<usize>) -> Vec<Value> {
        let found = lock(&self.found);
        let mut out = Vec::new();
        let mut used = 0usize;
        let mut left_out = false; // budget: once one tool does not fit, the order is kept
        for tool in catalog.tools() {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
            let own = catalog.tool(name).is_some_and(|t| t.backend == OWN);
            if own || found.contains(name) {
                out.push(tool.clone());
                continue;
            }
            if let Some(b) = budget
                && !left_out
            {
                // Only the tools up to the first that does not fit are counted.
                let cost = tokens::count(&tool.to_string());
                if used + cost <= b {
                    used += cost;
                    out.push(tool.clone());
                    continue;
                }
            }
            left_out = true;
        }
        out
    }

    /// `ringmcp__find_tools`: the result, and the names of the tools in it (for
    /// [`Search::found`]). Indexes what changed first: call it off the session's thread.
    pub(crate) fn find(
        &self,
        catalog: &Arc<Catalog>,
        names: &[String],
        arguments: &Value,
    ) -> Result<(Value, Vec<String>), ErrorObject> {
        let (query, k) = find::arguments(arguments)
            .map_err(|why| ErrorObject::new(codes::INVALID_PARAMS, why))?;
        let mut index = self.index();
        self.sync(&mut index, catalog, names);
        let router = index.router.as_ref().expect("synced");
        let routing = router.find(query, k);
        let result = find::result(query, router, &routing);
        Ok((result, routing.tools.into_iter().map(|t| t.name).collect()))
    }

    /// Adds the tools a search returned to the list; whether it grew (then the caller announces
    /// `list_changed`). Kept apart from [`Search::find`] so that a search cancelled while it
    /// ran adds nothing unannounced.
    pub(crate) fn found(&self, names: Vec<String>) -> bool {
        let mut found = lock(&self.found);
        names.into_iter().fold(false, |grew, name| found.insert(name) | grew)
    }
}
