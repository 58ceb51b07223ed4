//! [`Host::router`](super::Host::router): the tool router (crate::route) kept over every live
//! server of a host. Each route first brings the catalog up to date from the clients' cached
//! tool lists: a server whose list is unchanged costs one pointer comparison, one whose list
//! changed (`list_changed`) is re-indexed alone, a server gone is dropped. The indexing runs on
//! a thread of its own, over a copy swapped in when done, while the caller's future waits (a
//! first indexing takes a fifth of a second for 600 tools with the static table, seconds with
//! the full encoder): the application's executor is not held by it.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use super::client::{Cell, Client};
use super::error::Result;
use crate::protocol::Tool;
use crate::route::{Embedder, Ranker, Router, Routing};

/// The clients a host started, weakly held.
#[derive(Debug, Clone, Default)]
pub(crate) struct LiveClients(Arc<Mutex<Vec<Weak<Cell>>>>);

impl LiveClients {
    pub(crate) fn add(&self, client: &Client) {
        let mut list = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        list.retain(|w| w.strong_count() > 0);
        list.push(client.downgrade());
    }

    fn clients(&self) -> Vec<Client> {
        let mut list = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        list.retain(|w| w.strong_count() > 0);
        list.iter().filter_map(Client::upgrade).collect()
    }
}

/// The separator between a server's name and its tool's in the names the router returns (as
/// `ringmcp gateway` names them).
pub const SEPARATOR: &str = "__";

/// A router over every server a [`Host`](super::Host) started and still has a [`Client`] for.
#[derive(Debug)]
pub struct HostRouter {
    live: LiveClients,
    state: Arc<Mutex<State>>,
    /// Numbers the refreshes, so that an indexing of older lists that finishes after one of
    /// newer lists is dropped.
    refreshes: AtomicU64,
    /// Server names seen twice, warned about once each.
    warned: Mutex<HashSet<String>>,
}

#[derive(Debug, Clone)]
struct State {
    router: Router,
    /// The tool list each server was indexed from (the client's cache hands out the same `Arc`
    /// until the list changes; a list fetched anew with the same tools counts as unchanged).
    indexed: HashMap<String, Arc<Vec<Tool>>>,
    /// The refresh whose lists these are.
    refresh: u64,
}

impl HostRouter {
    pub(crate) fn new(live: LiveClients, embedder: Option<Arc<dyn Embedder>>) -> Self {
        let router = Router::new().with_optional_embedder(embedder);
        HostRouter {
            live,
            state: Arc::new(Mutex::new(State { router, indexed: HashMap::new(), refresh: 0 })),
            refreshes: AtomicU64::new(0),
            warned: Mutex::new(HashSet::new()),
        }
    }

    /// Brings the catalog up to date with every live server's tools (servers whose listing
    /// fails are left out, with a warning, and the others go on). The indexing, when a list
    /// changed, runs on a thread of its own over a copy of the catalog, swapped in when done:
    /// the caller's executor and other callers are not held by it.
    ///
    /// # Errors
    /// [`Error::Router`](super::Error::Router) when the indexing failed (the catalog stays as
    /// it was).
    pub async fn refresh(&self) -> Result<()> {
        let mut lists: Vec<(String, Arc<Vec<Tool>>)> = Vec::new();
        for client in self.servers() {
            match client.tools().await {
                Ok(tools) => lists.push((client.name().to_owned(), tools)),
                Err(e) => tracing::warn!(server = client.name(), "router: tools/list failed: {e}"),
            }
        }
        let refresh = self.refreshes.fetch_add(1, Ordering::Relaxed) + 1;
        let mut copy = {
            let state = lock(&self.state);
            if !state.stale(&mut lists) {
                return Ok(());
            }
            state.clone()
        };
        let (tx, rx) = futures_channel::oneshot::channel();
        let shared = self.state.clone();
        let job = std::thread::Builder::new().name("ringmcp-router".into()).spawn(move || {
            copy.update(&lists, refresh);
            let mut state = lock(&shared);
            if state.refresh < refresh {
                *state = copy;
            }
            let _ = tx.send(());
        });
        if let Err(e) = job {
            return Err(super::Error::Router(format!("no thread for it: {e}")));
        }
        rx.await.map_err(|_| super::Error::Router("it panicked".into()))
    }

    /// The `k` tools best fitting `query` across every live server (fused ranking), after
    /// [`refresh`](Self::refresh).
    ///
    /// # Errors
    /// As [`refresh`](Self::refresh).
    pub async fn route(&self, query: &str, k: usize) -> Result<Routing> {
        self.route_with(query, k, Ranker::Fused).await
    }

    /// [`route`](Self::route) with another ranker.
    ///
    /// # Errors
    /// As [`route`](Self::route).
    pub async fn route_with(&self, query: &str, k: usize, ranker: Ranker) -> Result<Routing> {
        self.refresh().await?;
        Ok(lock(&self.state).router.route_with(query, k, ranker))
    }

    /// A copy of the router as of the last refresh (to route many queries without locking, or
    /// to inspect the catalog).
    pub fn snapshot(&self) -> Router {
        lock(&self.state).router.clone()
    }

    /// The embedder in use, if any.
    pub fn embedder(&self) -> Option<String> {
        lock(&self.state).router.embedder().map(str::to_owned)
    }

    /// Tool search with the model in the loop, without the gateway: the `ringmcp__find_tools`
    /// definition to offer the model instead of every tool, naming each live server with what
    /// it is for (give the model [`SEARCH_INSTRUCTIONS`](crate::route::find::SEARCH_INSTRUCTIONS)
    /// with it). Its calls are answered by [`find_tools`](Self::find_tools).
    pub fn find_tools_definition(&self) -> serde_json::Value {
        let mut servers: Vec<crate::route::find::ServerBrief> = (self.servers().into_iter())
            .map(|c| crate::route::find::ServerBrief {
                name: c.name().to_owned(),
                about: c.about(),
            })
            .collect();
        servers.sort_by(|a, b| a.name.cmp(&b.name));
        crate::route::find::definition(&servers)
    }

    /// The live servers that have tools, one per name: newest first, so that a client kept
    /// for a server since replaced under the same name gives way to the replacement (warned
    /// about once a name).
    fn servers(&self) -> Vec<Client> {
        let mut servers: Vec<Client> = Vec::new();
        for client in self.live.clients().into_iter().rev() {
            if !client.has_capability("tools") {
                continue;
            }
            if servers.iter().any(|s| s.name() == client.name()) {
                if lock(&self.warned).insert(client.name().to_owned()) {
                    tracing::warn!(
                        server = client.name(),
                        "router: two live servers of this name; routing to the newest (give each server a name of its own)"
                    );
                }
                continue;
            }
            servers.push(client);
        }
        servers
    }

    /// Answers a `ringmcp__find_tools` call of the model (its `arguments`): the tool result to
    /// hand back, whose `structuredContent.tools` are the definitions found (named
    /// `server__tool`, as [`route`](Self::route) names them), after a
    /// [`refresh`](Self::refresh).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`](super::Error::InvalidArgument) for arguments without a query
    /// (answer the model with it: it says what is missing); as [`refresh`](Self::refresh).
    pub async fn find_tools(&self, arguments: &serde_json::Value) -> Result<serde_json::Value> {
        let (query, k) =
            crate::route::find::arguments(arguments).map_err(super::Error::InvalidArgument)?;
        self.refresh().await?;
        let state = lock(&self.state);
        let routing = state.router.find(query, k);
        Ok(crate::route::find::result(query, &state.router, &routing))
    }
}

impl State {
    /// Whether `lists` (each live server's tools) differ from what was indexed. A list fetched
    /// anew with the same tools (a 2026-07-28 server without `ttlMs` is asked every time) is
    /// replaced by the indexed one, so it costs one comparison of its JSON text (the router's
    /// own, [`Router::holds`]) and no indexing.
    fn stale(&self, lists: &mut [(String, Arc<Vec<Tool>>)]) -> bool {
        let mut stale = self.indexed.len() != lists.len();
        for (server, tools) in lists.iter_mut() {
            match self.indexed.get(server) {
                Some(old) if Arc::ptr_eq(old, tools) => {}
                Some(old) if self.router.holds(server, &named(server, tools)) => {
                    *tools = old.clone();
                }
                _ => stale = true,
            }
        }
        stale
    }

    /// Indexes `lists` ([`Router::sync`]: a server gone is dropped, one whose list changed is
    /// re-indexed).
    fn update(&mut self, lists: &[(String, Arc<Vec<Tool>>)], refresh: u64) {
        self.router.sync(lists.iter().map(|(s, tools)| (s.clone(), named(s, tools))).collect());
        self.indexed = lists.iter().map(|(s, tools)| (s.clone(), tools.clone())).collect();
        self.refresh = refresh;
    }
}

/// Locks a mutex whose holder may have panicked: every update of the router's state is one
/// assignment of a finished copy, so the data is whole either way.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `server`'s tools as `(server__tool, definition)` pairs, named as the gateway names them.
pub fn named(server: &str, tools: &[Tool]) -> Vec<(String, serde_json::Value)> {
    tools
        .iter()
        .map(|t| {
            let name = crate::protocol::names::upstream_name(Some((server, SEPARATOR)), &t.name);
            (name, serde_json::to_value(t).expect("a Tool serialises"))
        })
        .collect()
}
