//! How the answers to a POST (and a GET stream's events) are written: an SSE stream, one JSON
//! body, or (stateless) whichever the first line calls for.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::{Response, StatusCode};
use tokio::sync::oneshot;

use crate::jsonrpc::codes;

use super::super::lane::Lines;
use super::streams::Head;
use super::{Body, full, rpc_error};

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

/// One request's answer: JSON when the answer comes first, else an SSE stream of what comes
/// (progress, then the answer); which, the router tells through `head` as it routes the first
/// line. A 2026-07-28 (`modern`) error gets the HTTP status that revision gives it; an earlier
/// revision's error is a 200 like any answer (its clients take any other status for a failed
/// transport, not for the JSON-RPC error in the body).
pub(super) async fn auto_response(
    mut rx: Lines,
    head: oneshot::Receiver<Head>,
    modern: bool,
) -> Response<Body> {
    use futures::StreamExt;
    match head.await {
        Ok(Head::Json(code)) => {
            let Some(answer) = rx.next().await else { return no_answer() };
            let mut r = Response::new(full(answer));
            *r.status_mut() = code.filter(|_| modern).map_or(StatusCode::OK, status_of);
            r.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            r
        }
        Ok(Head::Sse) => sse_response(rx),
        Err(_) => no_answer(),
    }
}

/// The session ended before it answered.
fn no_answer() -> Response<Body> {
    rpc_error(StatusCode::INTERNAL_SERVER_ERROR, None, codes::INTERNAL_ERROR, "no answer")
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

/// The answers until the router ends the stream (after the last one the POST waits for), as
/// one JSON body (an array for a batch).
pub(super) async fn json_response(rx: Lines, batch: bool) -> Response<Body> {
    use futures::StreamExt;
    let answers: Vec<Bytes> = rx.collect().await;
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
