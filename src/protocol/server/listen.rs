//! The server side of the 2026-07-28 `subscriptions/listen` stream: acknowledged with what the
//! server grants of what was asked, kept open (never answered) until the client cancels it;
//! the list-change and resource-update notifications go to the streams that asked for them,
//! tagged with their subscription id. Older clients get the same notifications plain.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::jsonrpc::{ErrorObject, Id, codes};

use super::super::listen::ListenFilter;
use super::super::modern::META_SUBSCRIPTION_ID;
use super::ServerSession;

/// The notifications a server can send on a listen stream (`ServerConfig::listen`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Listenable {
    /// `notifications/tools/list_changed`.
    pub tools: bool,
    /// `notifications/prompts/list_changed`.
    pub prompts: bool,
    /// `notifications/resources/list_changed`.
    pub resources: bool,
    /// `notifications/resources/updated`.
    pub resource_updates: bool,
}

impl Listenable {
    /// Every kind.
    pub const ALL: Listenable =
        Listenable { tools: true, prompts: true, resources: true, resource_updates: true };

    /// What of `asked` this server grants.
    fn grant(self, asked: ListenFilter) -> ListenFilter {
        ListenFilter {
            tools_list_changed: asked.tools_list_changed && self.tools,
            prompts_list_changed: asked.prompts_list_changed && self.prompts,
            resources_list_changed: asked.resources_list_changed && self.resources,
            resource_subscriptions: if self.resource_updates {
                asked.resource_subscriptions
            } else {
                Vec::new()
            },
        }
    }
}

/// Whether a listen stream granted `filter` wants `method` (with `params`); `None` when the
/// method is not one a listen stream carries.
pub(super) fn wants(filter: &ListenFilter, method: &str, params: Option<&Value>) -> Option<bool> {
    Some(match method {
        "notifications/tools/list_changed" => filter.tools_list_changed,
        "notifications/prompts/list_changed" => filter.prompts_list_changed,
        "notifications/resources/list_changed" => filter.resources_list_changed,
        "notifications/resources/updated" => {
            let uri = params.and_then(|p| p.get("uri")).and_then(Value::as_str);
            uri.is_some_and(|u| filter.resource_subscriptions.iter().any(|s| s == u))
        }
        _ => return None,
    })
}

/// The open listen streams: what each was granted, by the key of its request (which stays
/// open in the session: its client id and stream are the open request's).
#[derive(Debug, Default)]
pub(super) struct Listeners {
    open: HashMap<Id, ListenFilter>,
}

impl Listeners {
    /// Listen streams open.
    pub(super) fn len(&self) -> usize {
        self.open.len()
    }

    /// The stream keyed `key` ended (cancelled by the client).
    pub(super) fn close(&mut self, key: &Id) {
        self.open.remove(key);
    }
}

impl<T> ServerSession<T> {
    /// A `subscriptions/listen` request handed out under `key`: acknowledged with what is
    /// granted (or refused when it has no filter), and kept open.
    pub(super) fn listen_in(&mut self, key: Id, params: Option<&Value>, can: Listenable) {
        let asked = params.and_then(|p| p.get("notifications")).filter(|a| a.is_object());
        let Some(asked) = asked else {
            let e = ErrorObject::new(codes::INVALID_PARAMS, "params.notifications is required");
            self.respond(&key, Err(e));
            return;
        };
        let asked = match serde_json::from_value::<ListenFilter>(asked.clone()) {
            Ok(asked) => asked,
            Err(e) => {
                let e = ErrorObject::new(
                    codes::INVALID_PARAMS,
                    format!("params.notifications is not a listen filter: {e}"),
                );
                self.respond(&key, Err(e));
                return;
            }
        };
        let granted = can.grant(asked);
        let Some(open) = self.open.get(&key) else { return };
        let (wire, stream) = (open.wire(&key), open.stream);
        let params = json!({"notifications": granted, "_meta": {META_SUBSCRIPTION_ID: wire}});
        self.queue_notification("notifications/subscriptions/acknowledged", Some(params), stream);
        self.listeners.open.insert(key, granted);
    }

    /// A notification a listen stream carries: to each stream that asked for it, tagged with
    /// its subscription id. `false` when `method` is not one a listen stream carries.
    pub(super) fn onto_listen_streams(&mut self, method: &str, params: Option<&Value>) -> bool {
        if wants(&ListenFilter::default(), method, params).is_none() {
            return false;
        }
        let to: Vec<(Id, Option<u64>)> = (self.listeners.open.iter())
            .filter(|(_, granted)| wants(granted, method, params) == Some(true))
            .filter_map(|(key, _)| self.open.get(key).map(|o| (o.wire(key), o.stream)))
            .collect();
        for (wire, stream) in to {
            let mut params = params.cloned().unwrap_or_else(|| json!({}));
            if let Some(members) = params.as_object_mut() {
                let meta = members.entry("_meta").or_insert_with(|| json!({}));
                if let Some(meta) = meta.as_object_mut() {
                    meta.insert(META_SUBSCRIPTION_ID.into(), json!(wire));
                }
            }
            self.queue_notification(method, Some(params), stream);
        }
        true
    }

    /// Whether a listen stream is open.
    pub fn listening(&self) -> bool {
        !self.listeners.open.is_empty()
    }

    /// The URIs the open listen streams asked updates of.
    pub fn listened_uris(&self) -> Vec<String> {
        let mut uris: Vec<String> = (self.listeners.open.values())
            .flat_map(|granted| granted.resource_subscriptions.iter().cloned())
            .collect();
        uris.sort();
        uris.dedup();
        uris
    }
}
