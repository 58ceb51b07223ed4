//! Event streams: a POST's SSE response or the GET stream, read by a task each, resumed with
//! GET + `Last-Event-ID` when the server closes them early.

use std::sync::{Arc, PoisonError};

use reqwest::header::ACCEPT;
use reqwest::{Method, Response, StatusCode};

use super::{
    Ctx, EVENT_STREAM, LAST_EVENT_ID, MIN_RETRY, SESSION_HEADER, Snapshot, Stop, VERSION_HEADER,
    media_type,
};
use crate::jsonrpc::Id;
use crate::transport::sse::SseParser;
use crate::transport::wire;
use crate::transport::{GetStream, Incoming, TransportError};

/// Which stream a task reads.
#[derive(Debug, Clone)]
pub(super) enum StreamKind {
    /// A POST's response stream; the request whose response ends it (`None` for a batch,
    /// which ends with the stream).
    Post(Option<Id>),
    /// The optional GET stream.
    Get,
}

pub(super) fn spawn_stream(ctx: &Arc<Ctx>, response: Response, kind: StreamKind) {
    let token = ctx.next_token();
    let tracked = match &kind {
        StreamKind::Post(Some(id)) => Some(id.clone()),
        _ => None,
    };
    let guard = StreamGuard {
        ctx: Arc::clone(ctx),
        token,
        tracked: tracked.clone(),
        get: matches!(kind, StreamKind::Get),
    };
    let task = tokio::spawn(stream_task(Arc::clone(ctx), response, kind, guard));
    if let Some(id) = tracked {
        let mut streams = ctx.streams.lock().unwrap_or_else(PoisonError::into_inner);
        streams.insert(id, (token, Stop::Stream(task.abort_handle())));
    }
}

/// Untracks a stream task (or a POST waiting for its head) when it ends or is aborted.
pub(super) struct StreamGuard {
    ctx: Arc<Ctx>,
    token: u64,
    tracked: Option<Id>,
    get: bool,
}

impl StreamGuard {
    /// The guard of request `id`'s POST, tracked under `token`.
    pub(super) fn post(ctx: Arc<Ctx>, token: u64, id: Id) -> StreamGuard {
        StreamGuard { ctx, token, tracked: Some(id), get: false }
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        if let Some(id) = &self.tracked {
            let mut streams = self.ctx.streams.lock().unwrap_or_else(PoisonError::into_inner);
            if streams.get(id).is_some_and(|(token, _)| *token == self.token) {
                streams.remove(id);
            }
        }
        if self.get {
            self.ctx.lock().get_open = false;
        }
    }
}

/// How one connection's worth of events ended.
pub(super) enum Pump {
    /// The awaited response was delivered (or nobody listens any more).
    Done,
    /// The connection ended (cleanly, or with the error).
    Ended(Option<TransportError>),
    /// The stream cannot go on (an oversized event).
    Fatal(TransportError),
}

/// Delivers a connection's events until it ends or the awaited response has been delivered.
pub(super) async fn pump(
    ctx: &Ctx,
    method: &'static str,
    mut response: Response,
    parser: &mut SseParser,
    pending: &mut Option<Id>,
) -> Pump {
    loop {
        loop {
            match parser.next_event() {
                Ok(Some(event)) => {
                    // A priming event (id, empty data) or a keep-alive is not a message.
                    if event.data.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    if event.event != "message" {
                        tracing::debug!("ignoring SSE event of type {:?}", event.event);
                        continue;
                    }
                    let done = pending
                        .as_ref()
                        .is_some_and(|id| wire::response_ids(&event.data).contains(id));
                    if !ctx.deliver(Incoming::Message(event.data)).await {
                        return Pump::Done;
                    }
                    if done {
                        *pending = None;
                        return Pump::Done;
                    }
                }
                Ok(None) => break,
                Err(e) => return Pump::Fatal(e.into()),
            }
        }
        match response.chunk().await {
            Ok(Some(chunk)) => parser.push(&chunk),
            Ok(None) => return Pump::Ended(None),
            Err(e) => return Pump::Ended(Some(TransportError::Body { method, source: e.into() })),
        }
    }
}

/// Runs one stream to its end, then reports a loss (after untracking the stream, so that a
/// caller reacting to the report sees the stream gone).
async fn stream_task(ctx: Arc<Ctx>, response: Response, kind: StreamKind, guard: StreamGuard) {
    let loss = follow(&ctx, response, &kind).await;
    drop(guard);
    if let Some(error) = loss {
        let request = match kind {
            StreamKind::Post(id) => id,
            StreamKind::Get => None,
        };
        ctx.deliver(Incoming::StreamLost { request, error }).await;
    }
}

/// Reads a POST or GET event stream; when it ends early, waits `retry` and resumes with GET +
/// `Last-Event-ID` (MCP 2025-11-25 "Resumability and Redelivery"), as long as the server keeps
/// accepting the reconnections (each accepted one resets the failure count, so SSE polling can
/// go on for as long as the request runs). Returns why it gave up, or `None` when the stream
/// did its job (or the loss was already reported as a session expiry).
async fn follow(ctx: &Arc<Ctx>, response: Response, kind: &StreamKind) -> Option<TransportError> {
    let (method, mut pending) = match kind {
        StreamKind::Post(id) => ("POST", id.clone()),
        StreamKind::Get => ("GET", None),
    };
    let mut parser = SseParser::new(ctx.max_message);
    let mut response = Some(response);
    let mut failures = 0u32;
    let mut last_error = None;
    let ended = |last_error: Option<TransportError>, reason| {
        Some(last_error.unwrap_or(TransportError::StreamEnded { reason }))
    };
    loop {
        if let Some(r) = response.take() {
            match pump(ctx, method, r, &mut parser, &mut pending).await {
                Pump::Done => return None,
                Pump::Fatal(e) => return Some(e),
                Pump::Ended(e) => last_error = e,
            }
            if let StreamKind::Post(None) = kind {
                return None; // a batch: nothing tracked, the stream's end is its end
            }
        }
        if ctx.snapshot().modern {
            let reason = "2026-07-28 has no resumption: re-send the request with a new id";
            return ended(last_error, reason);
        }
        let last_id = parser.last_event_id().map(str::to_owned);
        if last_id.is_none() && matches!(kind, StreamKind::Post(_)) {
            return ended(
                last_error,
                "closed before the response, with no event id to resume from",
            );
        }
        if failures >= ctx.max_failures {
            return ended(last_error, "reconnection attempts exhausted");
        }
        let wait = parser.retry().unwrap_or(ctx.default_retry).min(ctx.max_retry).max(MIN_RETRY);
        tracing::debug!(?last_id, ?wait, "{method} event stream ended early; resuming with GET");
        tokio::time::sleep(wait).await;
        match get_sse(ctx, &ctx.snapshot(), last_id.as_deref()).await {
            Ok(Some(r)) => {
                parser.new_stream();
                response = Some(r);
                failures = 0;
                last_error = None;
            }
            Ok(None) => {
                return Some(TransportError::StreamEnded {
                    reason: "the server allows no GET stream (405) to resume on",
                });
            }
            Err(TransportError::SessionExpired) => {
                return matches!(kind, StreamKind::Post(_))
                    .then_some(TransportError::SessionExpired);
            }
            Err(e) => {
                failures += 1;
                last_error = Some(e);
            }
        }
    }
}

/// GETs an event stream (`last_id`: resume after it). `Ok(None)`: 405, the server has none.
pub(super) async fn get_sse(
    ctx: &Ctx,
    snap: &Snapshot,
    last_id: Option<&str>,
) -> Result<Option<Response>, TransportError> {
    let mut req = ctx.request(Method::GET, &ctx.url).header(ACCEPT, EVENT_STREAM);
    if let Some(session) = snap.session.as_deref() {
        req = req.header(SESSION_HEADER, session);
    }
    if let Some(version) = snap.version.as_deref() {
        req = req.header(VERSION_HEADER, version);
    }
    if let Some(id) = last_id {
        req = req.header(LAST_EVENT_ID, id);
    }
    let response = ctx.execute("GET", &ctx.url, req, Some(ctx.timeout)).await?;
    let status = response.status();
    if status == StatusCode::METHOD_NOT_ALLOWED {
        return Ok(None);
    }
    if status == StatusCode::NOT_FOUND
        && let Some(sent) = snap.session.as_deref()
    {
        ctx.expire(sent).await;
        return Err(TransportError::SessionExpired);
    }
    if !status.is_success() {
        return Err(ctx.status_error("GET", response).await);
    }
    match media_type(&response).as_str() {
        EVENT_STREAM => Ok(Some(response)),
        other => Err(TransportError::ContentType { method: "GET", content_type: other.to_owned() }),
    }
}

pub(super) async fn open_get(ctx: &Arc<Ctx>) -> Result<GetStream, TransportError> {
    let snap = ctx.snapshot();
    if snap.legacy.is_some() || snap.modern {
        return Ok(GetStream::Unsupported);
    }
    // Reserved before the GET goes out, so that concurrent calls open one stream.
    if std::mem::replace(&mut ctx.lock().get_open, true) {
        return Ok(GetStream::Opened);
    }
    match get_sse(ctx, &snap, None).await {
        Ok(Some(response)) => {
            spawn_stream(ctx, response, StreamKind::Get);
            Ok(GetStream::Opened)
        }
        other => {
            ctx.lock().get_open = false;
            other.map(|_| GetStream::Unsupported)
        }
    }
}
