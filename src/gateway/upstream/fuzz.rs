//! The whole upstream loop under arbitrary client messages (the `gateway_loop` fuzz target):
//! its session, its request tasks, its parked 2026-07-28 rounds and their retries,
//! cancellations, and the HTTP routing of what it writes, with one backend that never starts
//! (its calls are refused at once; its requests for the client are injected by the input).
//!
//! Input: lines. A line starting with `!` injects a backend's request for the client
//! (`!s`: sampling, else elicitation); any other line is one client message (or batch) on a
//! POST stream of its own. Invariants: the loop ends once its input does (no hang), nothing
//! panics, no request id is answered more often than the client sent it, and every request
//! of the backend's gets exactly one answer or is dropped (never two).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::super::outbox::Out;
use super::super::{BackendSpec, Gateway, GatewaySettings, lock};
use super::http::{Attach, PostMode, Streams};
use super::lane::lane;
use super::{Input, Router, Source, run};
use crate::host::{Host, ServerSpec};
use crate::protocol::server::Origin;

/// Runs one input through a fresh gateway; panics when an invariant breaks. The answers the
/// client got (0 without io_uring).
pub(crate) fn gateway_loop(data: &[u8]) -> usize {
    let Ok(host) = Host::builder().build() else { return 0 }; // no io_uring here
    let backend = BackendSpec {
        spec: ServerSpec::new("b", "/nonexistent/ringmcp-fuzz-backend").sandbox(None),
        filter: Default::default(),
    };
    let (outbox, inbox) = Gateway::outbox();
    let gateway = Gateway::new(host, vec![backend], GatewaySettings::default(), true, outbox)
        .expect("a gateway of one backend");
    let core = gateway.core;
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let written: Arc<Mutex<Vec<Bytes>>> = Arc::default();
    let mut asked = Vec::new();
    let mut sent: HashMap<String, usize> = HashMap::new();
    runtime.block_on(async {
        let (input, rx) = mpsc::channel(256);
        let session = tokio::spawn(run(
            core.clone(),
            inbox.0,
            Source::Channel(rx),
            Router::Http(Streams::new()),
        ));
        let mut readers = Vec::new();
        let (tx, lines) = lane();
        readers.push(tokio::spawn(read(lines, written.clone())));
        let _ = input.send(Input::Attach(Attach::Get { last: None, tx })).await;
        for (stream, line) in data.split(|&b| b == b'\n').enumerate() {
            if let Some(kind) = line.strip_prefix(b"!") {
                let (reply, answer) = futures_channel::oneshot::channel();
                let method = if kind.first() == Some(&b's') {
                    "sampling/createMessage"
                } else {
                    "elicitation/create"
                };
                let params = json!({"message": "?", "requestedSchema": {"type": "object"}});
                let (server, method) = ("b".to_owned(), method.to_owned());
                core.upstream.send(Out::Ask { server, method, params, reply });
                asked.push(answer);
                tokio::task::yield_now().await;
                continue;
            }
            count_requests(line, &mut sent);
            let (tx, lines) = lane();
            readers.push(tokio::spawn(read(lines, written.clone())));
            let stream = stream as u64;
            let attach = Attach::Post { stream, mode: PostMode::Sse, tx, head: None };
            let origin = Some(Origin { stream, scoped: false });
            let frame = Bytes::copy_from_slice(line);
            if input.send(Input::Attach(attach)).await.is_err()
                || input.send(Input::Frame(frame, origin)).await.is_err()
            {
                break;
            }
            tokio::task::yield_now().await;
        }
        drop(input);
        // Its requests are answered at once (its backend is down), so it ends within its
        // drain (10 s) at the very most.
        let ended = tokio::time::timeout(Duration::from_secs(30), session).await;
        assert!(ended.is_ok(), "the loop did not end after its input did");
        for reader in readers {
            let _ = reader.await;
        }
    });
    // Every request of the backend's was answered once or dropped, never left to a caller
    // that waits forever: the loop is gone, so each oneshot is settled now.
    for mut answer in asked {
        let pending = matches!(answer.try_recv(), Ok(None));
        assert!(!pending, "a backend's request was neither answered nor dropped");
    }
    let mut answered: HashMap<String, usize> = HashMap::new();
    for event in lock(&written).iter() {
        for data in std::str::from_utf8(event).unwrap_or("").lines() {
            let Some(json) = data.strip_prefix("data: ") else { continue };
            let Ok(v) = serde_json::from_str::<Value>(json) else { continue };
            let is_answer = v.get("method").is_none()
                && (v.get("result").is_some() || v.get("error").is_some());
            if is_answer && let Some(id) = v.get("id").and_then(key) {
                *answered.entry(id).or_default() += 1;
            }
        }
    }
    for (id, n) in &answered {
        let asked = sent.get(id).copied().unwrap_or(0);
        assert!(*n <= asked, "id {id} answered {n} times, sent {asked} times");
    }
    answered.values().sum()
}

/// Counts the requests (by id) a client line carries: what may be answered.
fn count_requests(line: &[u8], sent: &mut HashMap<String, usize>) {
    let mut ids = Vec::new();
    if let Ok(v) = serde_json::from_slice::<Value>(line) {
        let items = match v {
            Value::Array(items) => items,
            one => vec![one],
        };
        for item in items {
            // A request, or anything with an id that is no answer (refused with that id).
            let answer = item.get("method").is_none()
                && (item.get("result").is_some() || item.get("error").is_some());
            if !answer && let Some(id) = item.get("id").and_then(key) {
                ids.push(id);
            }
        }
    }
    // An object with two ids is answered by the last (parsed) or the first (the sniffer of a
    // message refused unparsed): the first counts too when it is another.
    let mut sniffer = crate::frame::IdSniffer::new();
    sniffer.feed(line);
    if let Some(id) = sniffer.id().and_then(crate::jsonrpc::Id::from_token)
        && let Ok(id) = serde_json::to_value(id)
        && let Some(id) = key(&id)
        && !ids.contains(&id)
    {
        ids.push(id);
    }
    for id in ids {
        *sent.entry(id).or_default() += 1;
    }
}

/// An id as a key: a string, or an integer however it was written.
fn key(id: &Value) -> Option<String> {
    match id {
        Value::String(s) => Some(format!("s{s}")),
        Value::Number(n) => n.as_i64().map(|n| format!("n{n}")),
        _ => None,
    }
}

async fn read(mut lines: super::lane::Lines, into: Arc<Mutex<Vec<Bytes>>>) {
    while let Some(line) = lines.next().await {
        lock(&into).push(line);
    }
}
