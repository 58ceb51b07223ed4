//! One upstream request, answered: looked up in the catalog, sent to its backend's
//! [`Client`](crate::host::Client) (which applies the policy, asks for approval, audits and
//! spills), and the result brought back under upstream names (docs/gateway.md).

use std::sync::Arc;

use serde_json::{Value, json};

use crate::jsonrpc::{ErrorObject, RawJson, codes};
use crate::spill::store::is_spill_uri;

use super::catalog::{OWN, page};
use super::outbox::Out;
use super::{Core, spilled};

/// The gateway's own tool.
pub(crate) const STATUS_TOOL: &str = "ringmcp__status";

/// The gateway's own resource.
pub(crate) const STATUS_URI: &str = "ringmcp://status";

/// The capabilities the gateway declares upstream.
pub(crate) fn capabilities() -> Value {
    json!({
        "tools": {"listChanged": true},
        "prompts": {"listChanged": true},
        "resources": {"subscribe": true, "listChanged": true},
        "logging": {},
        "completions": {},
    })
}

/// The definition of `ringmcp__status`.
pub(crate) fn status_tool() -> Value {
    json!({
        "name": STATUS_TOOL,
        "title": "Gateway status",
        "description": "The state of every server behind this ringmcp gateway: up, starting or restarting, restarts so far, the last error, and whether it is sandboxed.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": true, "openWorldHint": false},
    })
}

fn status_json(core: &Core) -> Value {
    let servers: Vec<Value> = core
        .backends
        .iter()
        .map(|b| serde_json::to_value(b.status()).expect("status serialises"))
        .collect();
    json!({"servers": servers, "at": super::backend::unix_now()})
}

/// Answers one request: a `Value`, or JSON text where the answer is built or passed on as
/// text (a spilled payload's ranges).
pub(crate) async fn handle(
    core: Arc<Core>,
    method: &str,
    params: Option<Value>,
) -> Result<RawJson, ErrorObject> {
    let params = params.unwrap_or_else(|| json!({}));
    if method == "resources/read" {
        return read_resource(&core, &params).await;
    }
    answer(core, method, params).await.map(RawJson::from_value)
}

async fn answer(core: Arc<Core>, method: &str, params: Value) -> Result<Value, ErrorObject> {
    let cursor = params.get("cursor").and_then(Value::as_str);
    let size = core.settings.page_size;
    match method {
        "tools/list" => {
            let c = core.catalog().await;
            if core.settings.routes_tools() {
                let visible = core.search.visible(&c, core.settings.tool_budget);
                let (tools, next) = page(&visible, cursor, size)?;
                return Ok(listed("tools", tools, next));
            }
            let (tools, next) = page(c.tools(), cursor, size)?;
            Ok(listed("tools", tools, next))
        }
        "prompts/list" => {
            let c = core.catalog().await;
            let (prompts, next) = page(c.prompts(), cursor, size)?;
            Ok(listed("prompts", prompts, next))
        }
        "resources/list" => {
            let c = core.catalog().await;
            let mut all = vec![json!({
                "uri": STATUS_URI, "name": "status", "title": "Gateway status",
                "mimeType": "application/json",
            })];
            all.extend_from_slice(c.resources());
            let (resources, next) = page(&all, cursor, size)?;
            Ok(listed("resources", resources, next))
        }
        "resources/templates/list" => {
            let c = core.catalog().await;
            let mut all = vec![spilled::template()];
            all.extend_from_slice(c.templates());
            let (templates, next) = page(&all, cursor, size)?;
            Ok(listed("resourceTemplates", templates, next))
        }
        "tools/call" => call_tool(&core, params).await,
        "prompts/get" => {
            let name = string(&params, "name")?;
            let c = core.catalog().await;
            let target = c.prompt(name).ok_or_else(|| {
                ErrorObject::new(codes::INVALID_PARAMS, format!("Unknown prompt: {name}"))
            })?;
            let client = core.backends[target.backend].require()?;
            let mut forwarded = params.clone();
            forwarded["name"] = json!(target.name);
            strip_meta(&mut forwarded);
            client.request("prompts/get", Some(forwarded), None).await.map_err(|e| (&e).into())
        }
        "resources/subscribe" | "resources/unsubscribe" => {
            let uri = string(&params, "uri")?;
            if uri == STATUS_URI || is_spill_uri(uri) {
                return Ok(json!({}));
            }
            let target = core.catalog().await.route_uri(uri)?;
            let client = core.backends[target.backend].require()?;
            let done = if method == "resources/subscribe" {
                futures::future::Either::Left(client.subscribe_resource(&target.name))
            } else {
                futures::future::Either::Right(client.unsubscribe_resource(&target.name))
            };
            done.await.map_err(|e| ErrorObject::from(&e))?;
            Ok(json!({}))
        }
        "logging/setLevel" => {
            let level = string(&params, "level")?.to_owned();
            // Backends still starting get it when they come up.
            *super::lock(&core.log_level) = Some(level.clone());
            let mut sets = Vec::new();
            // Every backend: a legacy one that declared logging gets logging/setLevel, a
            // 2026-07-28 one the level in each request's _meta (the host's set_log_level
            // does either).
            for c in core.backends.iter().filter_map(|b| b.client()) {
                if c.has_capability("logging") || c.protocol_version().is_modern() {
                    sets.push((c.name().to_owned(), c.set_log_level(&level)));
                }
            }
            let sets = sets.into_iter().map(|(name, set)| async move {
                if let Err(e) = set.await {
                    tracing::info!(server = %name, "logging/setLevel: {e}");
                }
            });
            futures::future::join_all(sets).await;
            Ok(json!({}))
        }
        "completion/complete" => complete(&core, params).await,
        _ => Err(ErrorObject::new(codes::METHOD_NOT_FOUND, format!("Method not found: {method}"))),
    }
}

fn listed(key: &str, items: Vec<Value>, next: Option<String>) -> Value {
    let mut result = json!({ key: items });
    if let Some(n) = next {
        result["nextCursor"] = json!(n);
    }
    result
}

fn string<'a>(params: &'a Value, key: &str) -> Result<&'a str, ErrorObject> {
    params.get(key).and_then(Value::as_str).ok_or_else(|| {
        ErrorObject::new(codes::INVALID_PARAMS, format!("params.{key} must be a string"))
    })
}

/// The upstream request's `_meta` belongs to the upstream hop (its progress token, its
/// revision): the backend's request gets its own.
fn strip_meta(params: &mut Value) {
    if let Some(p) = params.as_object_mut() {
        p.remove("_meta");
    }
}

async fn call_tool(core: &Arc<Core>, params: Value) -> Result<Value, ErrorObject> {
    let name = string(&params, "name")?;
    let arguments = params.get("arguments").cloned().unwrap_or_else(|| json!({}));
    if !arguments.is_object() {
        return Err(ErrorObject::new(codes::INVALID_PARAMS, "params.arguments must be an object"));
    }
    let catalog = core.catalog().await;
    let Some(target) = catalog.tool(name) else {
        // A tool of a backend that is down (its tools left the lists): why, and when it is
        // back, rather than "unknown".
        let down = name
            .split_once(core.naming.separator.as_str())
            .and_then(|(server, _)| core.backends.iter().find(|b| b.name() == server))
            .filter(|b| b.client().is_none());
        if let Some(backend) = down {
            backend.require()?;
        }
        return Err(ErrorObject::new(codes::INVALID_PARAMS, format!("Unknown tool: {name}"))
            .with_data(json!({"tool": name, "hint": "list the tools: names are SERVER__TOOL"})));
    };
    if target.backend == OWN && name == super::search::FIND_TOOL {
        // Indexing what changed may take seconds (the full encoder): on the blocking pool, so
        // the session answers everything else meanwhile.
        let (search, names) = (core.search.clone(), core.backend_names());
        let searched =
            tokio::task::spawn_blocking(move || search.find(&catalog, &names, &arguments)).await;
        let (result, tools) = match searched {
            Ok(found) => found?,
            Err(e) => {
                tracing::error!("ringmcp__find_tools: {e}");
                let text = format!(
                    "ringmcp__find_tools hit an internal error ({e}); the index was reset: call it again (the gateway's log has the details)"
                );
                return Ok(json!({"content": [{"type": "text", "text": text}], "isError": true}));
            }
        };
        // Added once the answer is certain to go out (a search cancelled meanwhile adds nothing).
        if core.search.found(tools) {
            core.upstream.send(Out::Notify("notifications/tools/list_changed".into(), None));
        }
        return Ok(result);
    }
    if target.backend == OWN {
        let status = status_json(core);
        return Ok(json!({
            "content": [{"type": "text", "text": serde_json::to_string_pretty(&status).expect("JSON")}],
            "structuredContent": status,
            "isError": false,
        }));
    }
    let client = core.backends[target.backend].require()?;
    let mut call = client.call(&target.name, arguments);
    let token = params.get("_meta").and_then(|m| m.get("progressToken")).cloned();
    if let Some(token) = token {
        let (with, progress) = call.progress();
        call = with;
        let outbox = core.upstream.clone();
        tokio::spawn(async move {
            while let Ok(p) = progress.recv().await {
                let mut params = json!({"progressToken": token, "progress": p.progress});
                if let Some(t) = p.total {
                    params["total"] = json!(t);
                }
                if let Some(m) = p.message {
                    params["message"] = json!(m);
                }
                outbox.send(Out::Notify("notifications/progress".into(), Some(params)));
            }
        });
    }
    // Passed on as the backend sent it (checked and screened as JSON): only a missing
    // `content`, which the typed form would default, is added.
    let mut result = call.send_json().await.map_err(|e| ErrorObject::from(&e))?;
    if let Some(members) = result.as_object_mut() {
        members.entry("content").or_insert_with(|| json!([]));
    }
    Ok(result)
}

async fn read_resource(core: &Arc<Core>, params: &Value) -> Result<RawJson, ErrorObject> {
    let uri = string(params, "uri")?;
    if uri == STATUS_URI {
        let text = serde_json::to_string_pretty(&status_json(core)).expect("JSON");
        let item = json!({"uri": STATUS_URI, "mimeType": "application/json", "text": text});
        return Ok(RawJson::from_value(json!({"contents": [item]})));
    }
    if is_spill_uri(uri) {
        let ranged = spilled::parse(uri)?;
        // Only the client that received a payload holds it (no other backend's reads).
        let file =
            core.backends.iter().filter_map(|b| b.client()).find_map(|c| c.spilled(ranged.base));
        let Some(file) = file else {
            return Err(ErrorObject::new(
                codes::RESOURCE_NOT_FOUND,
                format!("{uri}: no such payload (it belonged to a backend that restarted, or was never handed out)"),
            )
            .with_data(json!({"uri": uri})));
        };
        // Megabytes read and base64-encoded: off the session's thread, which goes on
        // answering everything else meanwhile.
        let (uri, chunk_max) = (uri.to_owned(), core.settings.read_chunk_max);
        let range = ranged.range;
        let read =
            tokio::task::spawn_blocking(move || spilled::read(&uri, range, &file, chunk_max));
        return read.await.map_err(|e| {
            ErrorObject::new(codes::INTERNAL_ERROR, format!("reading a spilled payload: {e}"))
        })?;
    }
    let target = core.catalog().await.route_uri(uri)?;
    let client = core.backends[target.backend].require()?;
    let mut result = client
        .request("resources/read", Some(json!({"uri": target.name})), None)
        .await
        .map_err(|e| ErrorObject::from(&e))?;
    client.screen_read(&target.name, &mut result);
    if let Some(contents) = result.get_mut("contents").and_then(Value::as_array_mut) {
        for item in contents {
            if item.get("uri").and_then(Value::as_str) == Some(target.name.as_str()) {
                item["uri"] = json!(uri);
            }
        }
    }
    Ok(RawJson::from_value(result))
}

async fn complete(core: &Arc<Core>, mut params: Value) -> Result<Value, ErrorObject> {
    let reference = params.get("ref").cloned().unwrap_or(Value::Null);
    let c = core.catalog().await;
    let (backend, rewritten) = match reference.get("type").and_then(Value::as_str) {
        Some("ref/prompt") => {
            let name = string(&reference, "name")?;
            let t = c.prompt(name).ok_or_else(|| {
                ErrorObject::new(codes::INVALID_PARAMS, format!("Unknown prompt: {name}"))
            })?;
            (t.backend, json!({"type": "ref/prompt", "name": t.name}))
        }
        Some("ref/resource") => {
            let uri = string(&reference, "uri")?;
            let t = c.route_uri(uri)?;
            (t.backend, json!({"type": "ref/resource", "uri": t.name}))
        }
        _ => {
            return Err(ErrorObject::new(
                codes::INVALID_PARAMS,
                "params.ref must be {type: \"ref/prompt\", name} or {type: \"ref/resource\", uri}",
            ));
        }
    };
    let client = core.backends[backend].require()?;
    params["ref"] = rewritten;
    strip_meta(&mut params);
    client.request("completion/complete", Some(params), None).await.map_err(|e| (&e).into())
}
