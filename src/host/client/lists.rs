//! The list operations of a [`Client`]: pagination (`nextCursor` followed to the end, a
//! refused cursor restarting the listing), the cached lists of tools, resources and prompts
//! (refetched after `list_changed`, and in 2026-07-28 when their `ttlMs` runs out), and the
//! `subscriptions/listen` filter those caches and `subscribe_resource` maintain.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::Client;
use crate::host::error::{Error, Result};
use crate::host::pump::ServerCommand;
use crate::jsonrpc::codes;
use crate::protocol::{Prompt, RequestError, Resource, Tool};

/// Lists cached by [`Client::tools`], [`Client::resources`] and [`Client::prompts`].
#[derive(Debug, Default)]
pub(crate) struct ListCache {
    pub(super) tools: Option<Cached<Tool>>,
    pub(super) resources: Option<Cached<Resource>>,
    pub(super) prompts: Option<Cached<Prompt>>,
    /// 2026-07-28: what the `subscriptions/listen` stream asks for.
    pub(super) listen: crate::protocol::ListenFilter,
}

/// One cached list: the change count it was fetched at, and (2026-07-28) until when the
/// server's `ttlMs` says it is fresh.
#[derive(Debug)]
pub(super) struct Cached<T> {
    pub(super) epoch: u64,
    pub(super) fresh_until: Option<Instant>,
    pub(super) list: Arc<Vec<T>>,
}

/// A whole list and, in 2026-07-28, how long it stays fresh (the smallest `ttlMs` of its
/// pages; a missing or negative one counts as 0).
pub(super) type Listed<T> = (Vec<T>, Option<Duration>);

/// Most pages a list operation follows before concluding the server loops.
const MAX_PAGES: usize = 10_000;

impl Client {
    /// Follows `nextCursor` until the end, collecting the items under `key`.
    pub(super) async fn list_all<T: DeserializeOwned>(
        &self,
        method: &str,
        key: &str,
    ) -> Result<Vec<T>> {
        Ok(self.list_all_ttl(method, key).await?.0)
    }

    /// [`list_all`](Self::list_all), with the list's time to live (2026-07-28 `ttlMs`).
    pub(super) async fn list_all_ttl<T: DeserializeOwned>(
        &self,
        method: &str,
        key: &str,
    ) -> Result<Listed<T>> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        let modern = self.protocol_version().is_modern();
        let mut ttl: Option<Duration> = None;
        let mut restarted = false;
        for _ in 0..MAX_PAGES {
            let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
            let mut page: Value = match self.request(method, params, None).await {
                Ok(page) => page,
                // A cursor the server no longer accepts (-32602): the listing starts over,
                // once.
                Err(Error::Server { source: RequestError::Rpc(e), .. })
                    if e.code == codes::INVALID_PARAMS && cursor.is_some() && !restarted =>
                {
                    tracing::debug!(
                        server = &*self.inner().name,
                        "{method}: cursor refused ({}); starting over",
                        e.message
                    );
                    restarted = true;
                    (items, cursor, ttl) = (Vec::new(), None, None);
                    continue;
                }
                Err(e) => return Err(e),
            };
            let malformed = |reason: String| Error::Server {
                server: self.inner().name.clone(),
                source: RequestError::MalformedResult { method: method.into(), reason },
            };
            let list = page.get_mut(key).map(Value::take).unwrap_or(Value::Array(Vec::new()));
            let mut batch: Vec<T> =
                serde_json::from_value(list).map_err(|e| malformed(e.to_string()))?;
            items.append(&mut batch);
            if modern {
                let ms = page.get("ttlMs").and_then(Value::as_u64).unwrap_or(0);
                let page_ttl = Duration::from_millis(ms);
                ttl = Some(ttl.map_or(page_ttl, |t| t.min(page_ttl)));
            }
            match page.get("nextCursor") {
                Some(Value::String(next)) if cursor.as_ref() == Some(next) => {
                    return Err(malformed(format!(
                        "nextCursor {next:?} repeats the cursor just sent"
                    )));
                }
                Some(Value::String(next)) => cursor = Some(next.clone()),
                _ => return Ok((items, ttl)),
            }
        }
        Err(Error::Server {
            server: self.inner().name.clone(),
            source: RequestError::MalformedResult {
                method: method.into(),
                reason: format!("more than {MAX_PAGES} pages"),
            },
        })
    }

    /// The server's tools, fetched with [`list_tools`](Self::list_tools) the first time and
    /// again only after the server sent `notifications/tools/list_changed` (the cache is
    /// invalidated by the notification itself, whether or not the application reads events).
    ///
    /// # Errors
    /// As [`list_tools`](Self::list_tools).
    pub async fn tools(&self) -> Result<Arc<Vec<Tool>>> {
        self.listen_for_list_changes("tools");
        let lists = Arc::clone(&self.inner().lists);
        self.cached(&lists.tools, |c| &mut c.tools, self.list_tools_ttl()).await
    }

    /// The server's resources, cached like [`tools`](Self::tools) (invalidated by
    /// `notifications/resources/list_changed`).
    ///
    /// # Errors
    /// As [`list_resources`](Self::list_resources).
    pub async fn resources(&self) -> Result<Arc<Vec<Resource>>> {
        self.listen_for_list_changes("resources");
        let lists = Arc::clone(&self.inner().lists);
        self.cached(
            &lists.resources,
            |c| &mut c.resources,
            self.list_all_ttl("resources/list", "resources"),
        )
        .await
    }

    /// The server's prompts, cached like [`tools`](Self::tools) (invalidated by
    /// `notifications/prompts/list_changed`).
    ///
    /// # Errors
    /// As [`list_prompts`](Self::list_prompts).
    pub async fn prompts(&self) -> Result<Arc<Vec<Prompt>>> {
        self.listen_for_list_changes("prompts");
        let lists = Arc::clone(&self.inner().lists);
        self.cached(
            &lists.prompts,
            |c| &mut c.prompts,
            self.list_all_ttl("prompts/list", "prompts"),
        )
        .await
    }

    /// A cached list: fresh until the server's `list_changed` (counted in `epoch`), and in
    /// 2026-07-28 also only while the result's `ttlMs` lasts (docs/protocol.md, "Pagination and list caching": a
    /// missing `ttlMs` is 0, so such a list is fetched every time).
    pub(super) async fn cached<T>(
        &self,
        epoch: &std::sync::atomic::AtomicU64,
        slot: impl Fn(&mut ListCache) -> &mut Option<Cached<T>>,
        fetch: impl Future<Output = Result<Listed<T>>>,
    ) -> Result<Arc<Vec<T>>> {
        // Acquire: pairs with the Release bump in the event sink, so a change that arrived
        // before this load is seen. The count is read before fetching: a change during the
        // fetch makes the next call fetch again.
        let now = epoch.load(std::sync::atomic::Ordering::Acquire);
        let inner = Arc::clone(&self.inner());
        {
            let mut cache = inner.cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(c) = slot(&mut cache)
                && c.epoch == now
                && c.fresh_until.is_none_or(|until| Instant::now() < until)
            {
                return Ok(c.list.clone());
            }
        }
        let fetched = Instant::now();
        let (list, ttl) = fetch.await?;
        let list = Arc::new(list);
        let mut cache = inner.cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let fresh_until = ttl.map(|ttl| fetched + ttl);
        *slot(&mut cache) = Some(Cached { epoch: now, fresh_until, list: list.clone() });
        Ok(list)
    }

    /// `tools/list`, following every page.
    ///
    /// # Errors
    /// As [`request`](Self::request), or a malformed result.
    ///
    /// In 2026-07-28 a tool whose `x-mcp-header` annotations break the rules is left out,
    /// with a warning (docs/protocol.md, "Tools"): its arguments could not be mirrored into
    /// the HTTP headers the server checks.
    pub async fn list_tools(&self) -> Result<Vec<Tool>> {
        Ok(self.list_tools_ttl().await?.0)
    }

    pub(super) async fn list_tools_ttl(&self) -> Result<Listed<Tool>> {
        let (mut tools, ttl): Listed<Tool> = self.list_all_ttl("tools/list", "tools").await?;
        if self.protocol_version().is_modern() {
            tools.retain(|tool| match crate::protocol::param_headers(&tool.input_schema) {
                Ok(_) => true,
                Err(why) => {
                    let server = &*self.inner().name;
                    tracing::warn!(server, tool = tool.name, "tool left out: {why}");
                    false
                }
            });
        }
        Ok((tools, ttl))
    }

    /// 2026-07-28: changes the `subscriptions/listen` filter and reopens the stream when it
    /// changed.
    pub(super) fn update_listen(&self, change: impl FnOnce(&mut crate::protocol::ListenFilter)) {
        let inner = self.inner();
        let mut cache = inner.cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let before = cache.listen.clone();
        change(&mut cache.listen);
        if cache.listen != before {
            // Sent under the lock, so that filters reach the session in the order they were
            // made (the send never blocks).
            let filter = cache.listen.clone();
            self.in_order(ServerCommand::Listen { filter });
        }
    }

    /// 2026-07-28: a cached list is kept fresh by its `list_changed` notifications, which only
    /// come through `subscriptions/listen`: ask for them there when the server offers them.
    pub(super) fn listen_for_list_changes(&self, kind: &str) {
        if !self.protocol_version().is_modern()
            || self.server_info().capabilities[kind]["listChanged"] != true
        {
            return;
        }
        self.update_listen(|f| match kind {
            "tools" => f.tools_list_changed = true,
            "prompts" => f.prompts_list_changed = true,
            _ => f.resources_list_changed = true,
        });
    }
}
