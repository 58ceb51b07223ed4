//! The legacy HTTP+SSE transport (2024-11-05), reached by the fallback from Streamable HTTP.

use std::sync::Arc;

use bytes::Bytes;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use reqwest::{Method, StatusCode, Url};

use super::stream::{Pump, pump};
use super::{ACCEPT_BOTH, Ctx, EVENT_STREAM, JSON, media_type};
use crate::transport::TransportError;
use crate::transport::sse::SseParser;

/// The HTTP+SSE (2024-11-05) handshake: GET the URL, wait for the `endpoint` event, resolve it
/// against the URL, and keep reading the stream for `message` events in a task.
pub(super) async fn legacy_connect(ctx: &Arc<Ctx>) -> Result<Url, TransportError> {
    let handshake = |reason: String| TransportError::LegacyHandshake { reason };
    let req = ctx.request(Method::GET, &ctx.url).header(ACCEPT, EVENT_STREAM);
    let mut response = ctx.execute("GET", &ctx.url, req, Some(ctx.timeout)).await?;
    if !response.status().is_success() {
        return Err(ctx.status_error("GET", response).await);
    }
    let media = media_type(&response);
    if media != EVENT_STREAM {
        return Err(TransportError::ContentType { method: "GET", content_type: media });
    }
    let mut parser = SseParser::new(ctx.max_message);
    let wait_endpoint = async {
        loop {
            while let Some(event) = parser.next_event()? {
                if event.event == "endpoint" {
                    return Ok(event.data);
                }
                tracing::debug!("legacy stream: ignoring {:?} before the endpoint", event.event);
            }
            match response.chunk().await {
                Ok(Some(chunk)) => parser.push(&chunk),
                Ok(None) => return Err(handshake("stream ended before the endpoint event".into())),
                Err(e) => return Err(TransportError::Body { method: "GET", source: e.into() }),
            }
        }
    };
    let data = tokio::time::timeout(ctx.timeout, wait_endpoint).await.map_err(|_| {
        TransportError::Timeout { step: "waiting for the endpoint event", after: ctx.timeout }
    })??;
    let text = std::str::from_utf8(&data).map_err(|_| handshake("endpoint is not UTF-8".into()))?;
    let endpoint =
        ctx.url.join(text.trim()).map_err(|e| handshake(format!("endpoint {text:?}: {e}")))?;
    // The POSTs carry the configured credentials: never to another origin.
    if endpoint.origin() != ctx.url.origin() {
        return Err(handshake(format!("endpoint {endpoint} is not on the server's origin")));
    }
    tracing::debug!(%endpoint, "speaking legacy HTTP+SSE");
    ctx.lock().legacy = Some(endpoint.clone());
    let task_ctx = Arc::clone(ctx);
    let task_endpoint = endpoint.clone();
    tokio::spawn(async move {
        let mut none = None;
        let end = pump(&task_ctx, "GET", response, &mut parser, &mut none).await;
        if let Pump::Ended(Some(e)) | Pump::Fatal(e) = end {
            tracing::debug!("legacy stream: {e}");
        }
        task_ctx.legacy_lost(&task_endpoint).await;
    });
    Ok(endpoint)
}

/// A POST to the legacy endpoint: the answer comes on the SSE stream, the POST only gets 202.
pub(super) async fn post_legacy(
    ctx: &Arc<Ctx>,
    endpoint: &Url,
    body: Bytes,
    extra: HeaderMap,
) -> Result<(), TransportError> {
    let req = ctx
        .request(Method::POST, endpoint)
        .header(ACCEPT, ACCEPT_BOTH)
        .header(CONTENT_TYPE, JSON)
        .headers(extra)
        .body(body);
    let response = ctx.execute("POST", endpoint, req, Some(ctx.timeout)).await?;
    match response.status() {
        s if s.is_success() => Ok(()),
        StatusCode::NOT_FOUND => {
            ctx.legacy_lost(endpoint).await;
            Err(TransportError::SessionExpired)
        }
        _ => Err(ctx.status_error("POST", response).await),
    }
}
