//! How the answers to a POST (and a GET stream's events) are written: an SSE stream, one JSON
//! body, or (stateless) whichever the first line calls for.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Response, StatusCode};
use serde_json::Value;

use crate::jsonrpc::codes;

use super::super::lane::Lines;
use super::{Body, Peek, full, rpc_error};

/// The lines as an SSE response.
pub(super) fn sse_response(rx: Lines) -> Response<Body> {
    use futures::StreamExt;
    let stream = rx.map(|b| Ok::<_, Infallible>(Frame::data(b)));
    let mut r = Response::new(BodyExt::boxed(StreamBody::new(stream)));
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    h.insert("cache-control", HeaderValue::from_static("no-cache"));
    r
}

/// A stateless request's answer: JSON when the answer comes first (an error gets the HTTP
/// status 2026-07-28 gives it), else an SSE stream of what comes (progress, then the answer).
pub(super) async fn auto_response(mut rx: Lines) -> Response<Body> {
    use futures::StreamExt;
    let Some(first) = rx.next().await else {
        return rpc_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            None,
            codes::INTERNAL_ERROR,
            "no answer",
        );
    };
    let peek: Option<Peek> = serde_json::from_slice(&first).ok();
    let answer = peek.as_ref().is_some_and(|p| p.id.is_some() && p.method.is_none());
    if answer {
        let code = serde_json::from_slice::<Value>(&first)
            .ok()
            .and_then(|v| v.pointer("/error/code").and_then(Value::as_i64));
        let mut r = Response::new(full(first));
        *r.status_mut() = code.map_or(StatusCode::OK, status_of);
        r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        return r;
    }
    let frame = |line: Bytes| -> Bytes {
        let line = line.strip_suffix(b"\n").unwrap_or(&line);
        [b"data: ".as_slice(), line, b"\n\n"].concat().into()
    };
    sse_response(Box::pin(futures::stream::once(async move { first }).chain(rx).map(frame)))
}

/// The HTTP status of a 2026-07-28 error answer.
fn status_of(code: i64) -> StatusCode {
    match code {
        codes::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        codes::PARSE_ERROR
        | codes::INVALID_REQUEST
        | codes::INVALID_PARAMS
        | codes::HEADER_MISMATCH
        | codes::UNSUPPORTED_PROTOCOL_VERSION
        | codes::MISSING_REQUIRED_CLIENT_CAPABILITY => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// Waits for `count` answers and returns them as one JSON body (an array for a batch).
pub(super) async fn json_response(mut rx: Lines, count: usize, batch: bool) -> Response<Body> {
    use futures::StreamExt;
    let mut answers = Vec::with_capacity(count);
    while answers.len() < count {
        match rx.next().await {
            Some(line) => answers.push(line),
            None => break,
        }
    }
    let body: Bytes = if batch {
        let mut out = b"[".to_vec();
        for (i, a) in answers.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(a.strip_suffix(b"\n").unwrap_or(a));
        }
        out.push(b']');
        out.into()
    } else {
        answers.into_iter().next().unwrap_or_default()
    };
    let mut r = Response::new(full(body));
    r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r
}
