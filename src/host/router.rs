//! [`Host::router`](super::Host::router): the tool router (crate::route) kept over every live
//! server of a host. Each route first brings the catalog up to date from the clients' cached
//! tool lists: a server whose list is unchanged costs one pointer comparison, one whose list
//! changed (`list_changed`) is re-indexed alone, a server gone is dropped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

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
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    router: Router,
    /// The tool list each server was indexed from (compared by pointer: the client's cache
    /// hands out the same `Arc` until the list changes).
    indexed: HashMap<String, Arc<Vec<Tool>>>,
}

impl HostRouter {
    pub(crate) fn new(live: LiveClients, embedder: Option<Arc<dyn Embedder>>) -> Self {
        let router = match embedder {
            Some(e) => Router::new().with_embedder(e),
            None => Router::new(),
        };
        HostRouter { live, state: Mutex::new(State { router, indexed: HashMap::new() }) }
    }

    /// Brings the catalog up to date with every live server's tools (servers whose listing
    /// fails are left out, with a warning, and the others go on).
    pub async fn refresh(&self) {
        let mut lists = Vec::new();
        for client in self.live.clients() {
            if !client.has_capability("tools") {
                continue;
            }
            match client.tools().await {
                Ok(tools) => lists.push((client.name().to_owned(), tools)),
                Err(e) => tracing::warn!(server = client.name(), "router: tools/list failed: {e}"),
            }
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let State { router, indexed } = &mut *state;
        let now: HashMap<&str, &Arc<Vec<Tool>>> =
            lists.iter().map(|(n, t)| (n.as_str(), t)).collect();
        indexed.retain(|server, _| {
            let keep = now.contains_key(server.as_str());
            if !keep {
                router.remove_server(server);
            }
            keep
        });
        for (server, tools) in &lists {
            if indexed.get(server).is_some_and(|old| Arc::ptr_eq(old, tools)) {
                continue;
            }
            router.replace_server(server, named(server, tools));
            indexed.insert(server.clone(), tools.clone());
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
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(state.router.route_with(query, k, ranker))
    }

    /// A copy of the router as of the last refresh (to route many queries without locking, or
    /// to inspect the catalog).
    pub fn snapshot(&self) -> Router {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).router.clone()
    }

    /// The embedder in use, if any.
    pub fn embedder(&self) -> Option<String> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.router.embedder().map(str::to_owned)
    }
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
