//! [`Host::router`](super::Host::router): the tool router (crate::route) kept over every live
//! server of a host. Each route first brings the catalog up to date from the clients' cached
//! tool lists: a server whose list is unchanged costs one pointer comparison, one whose list
//! changed (`list_changed`) is re-indexed alone, a server gone is dropped. The indexing runs on
//! a thread of its own while the caller's future waits (a first indexing takes a fifth of a
//! second for 600 tools with the static table, seconds with the full encoder: never on the
//! application's executor).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use super::client::{Client, ClientInner};
use super::error::Result;
use crate::protocol::Tool;
use crate::route::{Embedder, Ranker, Router, Routing};

/// The clients a host started, weakly held.
#[derive(Debug, Clone, Default)]
pub(crate) struct LiveClients(Arc<Mutex<Vec<Weak<ClientInner>>>>);

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
}

#[derive(Debug)]
struct State {
    router: Router,
    /// The tool list each server was indexed from (compared by pointer: the client's cache
    /// hands out the same `Arc` until the list changes).
    indexed: HashMap<String, Arc<Vec<Tool>>>,
    /// The router's embedder (to start over with).
    embedder: Option<Arc<dyn Embedder>>,
}

impl HostRouter {
    pub(crate) fn new(live: LiveClients, embedder: Option<Arc<dyn Embedder>>) -> Self {
        HostRouter { live, state: Arc::new(Mutex::new(State::new(embedder))) }
    }

    /// Brings the catalog up to date with every live server's tools (servers whose listing
    /// fails are left out, with a warning, and the others go on).
    pub async fn refresh(&self) {
        let mut lists = Vec::new();
        for client in self.live.clients() {
            if !client.has_capability("tools") {
                continue;
            }
            if lists.iter().any(|(name, _)| name == client.name()) {
                // Names are the router's keys: the first server of a name is routed to.
                tracing::warn!(
                    server = client.name(),
                    "router: two servers of this name; the second is left out"
                );
                continue;
            }
            match client.tools().await {
                Ok(tools) => lists.push((client.name().to_owned(), tools)),
                Err(e) => tracing::warn!(server = client.name(), "router: tools/list failed: {e}"),
            }
        }
        if !lock(&self.state).stale(&lists) {
            return;
        }
        let state = self.state.clone();
        let (tx, rx) = futures_channel::oneshot::channel();
        let job = lists.clone();
        let spawned = std::thread::Builder::new().name("ringmcp-router".into()).spawn(move || {
            lock(&state).update(&job);
            let _ = tx.send(());
        });
        match spawned {
            Ok(_) => {
                // A thread that panicked drops the sender: the next route indexes again.
                let _ = rx.await;
            }
            Err(e) => {
                tracing::warn!("router: no thread for the indexing ({e}); indexing here");
                lock(&self.state).update(&lists);
            }
        }
    }

    /// The `k` tools best fitting `query` across every live server (fused ranking), after
    /// [`refresh`](Self::refresh).
    ///
    /// # Errors
    /// None today; a `Result` so that a future embedder that can fail has room to say so.
    pub async fn route(&self, query: &str, k: usize) -> Result<Routing> {
        self.route_with(query, k, Ranker::Fused).await
    }

    /// [`route`](Self::route) with another ranker.
    ///
    /// # Errors
    /// As [`route`](Self::route).
    pub async fn route_with(&self, query: &str, k: usize, ranker: Ranker) -> Result<Routing> {
        self.refresh().await;
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
}

impl State {
    fn new(embedder: Option<Arc<dyn Embedder>>) -> Self {
        let router = match &embedder {
            Some(e) => Router::new().with_embedder(e.clone()),
            None => Router::new(),
        };
        State { router, indexed: HashMap::new(), embedder }
    }

    /// Whether `lists` (each live server's tools) differ from what was indexed.
    fn stale(&self, lists: &[(String, Arc<Vec<Tool>>)]) -> bool {
        let fresh = |(server, tools): &(String, Arc<Vec<Tool>>)| {
            self.indexed.get(server).is_some_and(|old| Arc::ptr_eq(old, tools))
        };
        self.indexed.len() != lists.len() || !lists.iter().all(fresh)
    }

    /// Indexes `lists`: a server gone is dropped, one whose list changed is re-indexed.
    fn update(&mut self, lists: &[(String, Arc<Vec<Tool>>)]) {
        let State { router, indexed, .. } = self;
        let now: HashMap<&str, &Arc<Vec<Tool>>> =
            lists.iter().map(|(n, t)| (n.as_str(), t)).collect();
        indexed.retain(|server, _| {
            let keep = now.contains_key(server.as_str());
            if !keep {
                router.remove_server(server);
            }
            keep
        });
        for (server, tools) in lists {
            if indexed.get(server).is_some_and(|old| Arc::ptr_eq(old, tools)) {
                continue;
            }
            router.replace_server(server, named(server, tools));
            indexed.insert(server.clone(), tools.clone());
        }
    }
}

/// The router's state. An indexing that panicked may have left it half-updated: the next
/// holder starts over from an empty catalog with the same embedder.
fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|poisoned| {
        let mut s = poisoned.into_inner();
        *s = State::new(s.embedder.clone());
        state.clear_poison();
        s
    })
}

/// `server`'s tools as `(server__tool, definition)` pairs, named as the gateway names them.
pub fn named(server: &str, tools: &[Tool]) -> Vec<(String, serde_json::Value)> {
    tools
        .iter()
        .map(|t| {
            let name = crate::gateway::names::upstream_name(Some((server, SEPARATOR)), &t.name);
            (name, serde_json::to_value(t).expect("a Tool serialises"))
        })
        .collect()
}
