//! The server session's handshake: `initialize` (2024-11-05 … 2025-11-25) with its
//! counter-offer, `server/discover` and the revision a stateless (2026-07-28) request names in
//! its `_meta`, and what 2026-07-28 results carry besides the application's answer.

use serde::de::IgnoredAny;
use serde_json::{Value, json};

use crate::jsonrpc::{ErrorObject, Id, codes};

use super::super::modern::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, META_SERVER_INFO};
use super::super::version::ProtocolVersion;
use super::{CACHEABLE, Phase, ServerSession};

impl<T> ServerSession<T> {
    /// The revision a stateless request names in its `_meta`: `Ok(None)` when it names none,
    /// an error (-32022 with the revisions spoken, or -32602 without client capabilities)
    /// when it names one this session does not speak or leaves out what that revision needs.
    pub(super) fn stateless_version(
        &self,
        params: Option<&Value>,
    ) -> Result<Option<ProtocolVersion>, ErrorObject> {
        let meta = params.and_then(|p| p.get("_meta"));
        let Some(named) = meta.and_then(|m| m.get(META_PROTOCOL_VERSION)) else {
            return Ok(None);
        };
        // A legacy-only server knows nothing of stateless requests (and says "not
        // initialized", as any legacy server would).
        if self.modern_versions().next().is_none() {
            return Ok(None);
        }
        let version = named.as_str().and_then(|n| n.parse::<ProtocolVersion>().ok());
        match version {
            Some(v) if v.is_modern() && self.config.versions.contains(&v) => {
                if meta.and_then(|m| m.get(META_CLIENT_CAPABILITIES)).is_none() {
                    return Err(ErrorObject::new(
                        codes::INVALID_PARAMS,
                        format!("params._meta names {v} but lacks {}", META_CLIENT_CAPABILITIES),
                    ));
                }
                Ok(Some(v))
            }
            // A legacy revision named in `_meta` is not a stateless request.
            Some(v) if !v.is_modern() => Ok(None),
            _ => {
                let supported: Vec<&str> =
                    self.modern_versions().map(ProtocolVersion::as_str).collect();
                Err(ErrorObject::new(
                    codes::UNSUPPORTED_PROTOCOL_VERSION,
                    "Unsupported protocol version",
                )
                .with_data(json!({"supported": supported, "requested": named})))
            }
        }
    }

    pub(super) fn modern_versions(&self) -> impl Iterator<Item = ProtocolVersion> + '_ {
        self.config.versions.iter().copied().filter(|v| v.is_modern())
    }

    pub(super) fn discover(&self) -> Value {
        let versions: Vec<&str> = self.modern_versions().map(ProtocolVersion::as_str).collect();
        let mut result = json!({
            "supportedVersions": versions,
            "capabilities": self.config.capabilities,
            "_meta": {META_SERVER_INFO: self.config.server_info},
        });
        if let Some(i) = &self.config.instructions {
            result["instructions"] = json!(i);
        }
        self.stamp("server/discover", &mut result);
        result
    }

    /// What a 2026-07-28 result carries besides the application's answer: `resultType`
    /// (`complete` unless the application chose, e.g. `input_required`) and, on cacheable
    /// results, the caching hints.
    pub(super) fn stamp(&self, method: &str, result: &mut Value) {
        let Some(members) = result.as_object_mut() else { return };
        members.entry("resultType").or_insert_with(|| json!("complete"));
        if let Some(cache) = &self.config.cache
            && CACHEABLE.contains(&method)
        {
            members.entry("ttlMs").or_insert_with(|| json!(cache.ttl_ms));
            members.entry("cacheScope").or_insert_with(|| json!(cache.scope));
        }
    }

    /// [`stamp`](Self::stamp) for a result that is JSON text: the members it lacks are
    /// spliced in after its `{`. Only its top-level keys are read (the values are skipped, not
    /// parsed); text that is not an object is left as it is.
    pub(super) fn stamp_raw(&self, method: &str, text: &mut Vec<u8>) {
        use std::borrow::Cow;
        use std::collections::HashMap;
        let Ok(keys) = serde_json::from_slice::<HashMap<Cow<'_, str>, IgnoredAny>>(text) else {
            return;
        };
        // What an empty result would get, less what this one has.
        let mut missing = Value::Object(serde_json::Map::new());
        self.stamp(method, &mut missing);
        let Value::Object(mut missing) = missing else { return };
        missing.retain(|k, _| !keys.contains_key(k.as_str()));
        let Some(open) = text.iter().position(|&b| b == b'{').filter(|_| !missing.is_empty())
        else {
            return;
        };
        // `{"resultType":"complete"}` without its braces, and a comma when members follow.
        let mut members = serde_json::to_vec(&missing).expect("a map serialises");
        members.pop();
        if !keys.is_empty() {
            members.push(b',');
        }
        text.splice(open + 1..open + 1, members.into_iter().skip(1));
    }

    pub(super) fn initialize(&mut self, id: &Id, params: Option<Value>) {
        if self.phase != Phase::AwaitingInitialize {
            let error = ErrorObject::new(codes::INVALID_REQUEST, "Server already initialized");
            return self.error(Some(id), error);
        }
        let params = params.unwrap_or(Value::Null);
        let Some(asked) = params.get("protocolVersion").and_then(Value::as_str) else {
            let error =
                ErrorObject::new(codes::INVALID_PARAMS, "initialize needs a protocolVersion");
            return self.error(Some(id), error);
        };
        if self.config.strict_initialize
            && let Err(why) = complete_initialize(&params)
        {
            let error = ErrorObject::new(
                codes::INVALID_PARAMS,
                format!("Invalid params for initialize: {why}"),
            );
            return self.error(Some(id), error);
        }
        let legacy = || self.config.versions.iter().copied().filter(|v| !v.is_modern());
        let Some(latest) = legacy().max_by_key(|v| v.as_str()) else {
            // -32022 with the revisions spoken: what a client probing for the era reads as
            // "this is a stateless server".
            let supported: Vec<&str> =
                self.modern_versions().map(ProtocolVersion::as_str).collect();
            let error = ErrorObject::new(
                codes::UNSUPPORTED_PROTOCOL_VERSION,
                format!(
                    "Unsupported protocol version {asked}: this server speaks only {} (use server/discover)",
                    supported.join(", ")
                ),
            )
            .with_data(json!({"supported": supported, "requested": asked}));
            return self.error(Some(id), error);
        };
        // The client's revision when we speak it; otherwise our latest, for it to accept or
        // disconnect.
        let version = legacy().find(|v| v.as_str() == asked).unwrap_or(latest);
        self.client_info = params.get("clientInfo").cloned().unwrap_or(Value::Null);
        self.client_capabilities = params.get("capabilities").cloned().unwrap_or(json!({}));
        self.phase = Phase::Initializing(version);
        let mut result = json!({
            "protocolVersion": version.as_str(),
            "capabilities": self.config.capabilities,
            "serverInfo": self.config.server_info,
        });
        if let Some(i) = &self.config.instructions {
            result["instructions"] = json!(i);
        }
        self.result(id, result);
    }
}

/// What a strict server requires of `initialize` params besides `protocolVersion`.
fn complete_initialize(params: &Value) -> Result<(), String> {
    if !params.get("capabilities").is_some_and(Value::is_object) {
        return Err("missing field `capabilities`".into());
    }
    let info = params.get("clientInfo").ok_or("missing field `clientInfo`")?;
    for field in ["name", "version"] {
        if !info.get(field).is_some_and(Value::is_string) {
            return Err(format!("clientInfo: missing field `{field}`"));
        }
    }
    Ok(())
}
