//! Stateless (2026-07-28) requests over HTTP: they get ids of the gateway's own, and what
//! goes back gets the client's again.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use serde_json::{Value, json};

use crate::jsonrpc::Id;
use crate::protocol::modern::META_SUBSCRIPTION_ID as SUBSCRIPTION_ID;

use super::super::lane::Lines;
use super::Server;

/// Stateless requests get ids of the gateway's own (`h<N>`), and so do their progress tokens;
/// returns the frame to feed, the internal ids and the way back.
pub(super) fn internal_ids(
    server: &Server,
    mut value: Value,
) -> (Bytes, Vec<Id>, HashMap<String, Value>) {
    let mut map = HashMap::new();
    let mut ids = Vec::new();
    let items: Vec<&mut Value> = match &mut value {
        Value::Array(items) => items.iter_mut().collect(),
        one => vec![one],
    };
    for item in items {
        if item.get("method").is_none() || item.get("id").is_none() {
            continue;
        }
        let n = server.next_internal.fetch_add(1, Ordering::Relaxed);
        let internal = format!("h{n}");
        map.insert(internal.clone(), item["id"].take());
        item["id"] = json!(internal);
        ids.push(Id::String(internal.clone()));
        if let Some(token) = item.pointer_mut("/params/_meta/progressToken") {
            let t = format!("t{internal}");
            map.insert(t.clone(), token.take());
            *token = json!(t);
        }
    }
    let frame = serde_json::to_vec(&value).expect("JSON").into();
    (frame, ids, map)
}

/// Puts the client's ids (and progress tokens, and subscription ids) back into what goes out.
pub(super) fn restore_ids(rx: Lines, map: HashMap<String, Value>) -> Lines {
    use futures::StreamExt;
    Box::pin(rx.map(move |chunk| restore(&chunk, &map)))
}

fn restore(chunk: &[u8], map: &HashMap<String, Value>) -> Bytes {
    // An SSE event (`id: N\ndata: LINE\n\n`, or `data: LINE\n\n`) or a bare JSON line. Only
    // a field at a line's start of an event counts: a bare line's text may hold `data: `.
    let data = if chunk.starts_with(b"data: ") {
        Some(0)
    } else if chunk.starts_with(b"id: ") || chunk.starts_with(b"event: ") {
        chunk.windows(7).position(|w| w == b"\ndata: ").map(|at| at + 1)
    } else {
        None
    };
    let (prefix, line, suffix) = match data {
        Some(at) => {
            let line_start = at + 6;
            let end = chunk.len() - chunk.iter().rev().take_while(|b| **b == b'\n').count();
            (&chunk[..line_start], &chunk[line_start..end], &chunk[end..])
        }
        None => (&chunk[..0], chunk, &chunk[chunk.len()..]),
    };
    let Ok(mut v) = serde_json::from_slice::<Value>(line) else {
        return Bytes::copy_from_slice(chunk);
    };
    let back = |slot: Option<&mut Value>| {
        if let Some(slot) = slot
            && let Some(original) = slot.as_str().and_then(|s| map.get(s))
        {
            *slot = original.clone();
        }
    };
    back(v.get_mut("id"));
    back(v.pointer_mut("/params/progressToken"));
    back(v.pointer_mut(&format!("/params/_meta/{}", SUBSCRIPTION_ID.replace('/', "~1"))));
    let mut out = prefix.to_vec();
    out.extend_from_slice(&serde_json::to_vec(&v).expect("JSON"));
    out.extend_from_slice(suffix);
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stateless_ids_go_back_as_the_client_sent_them() {
        let map = HashMap::from([("h7".to_owned(), json!(1)), ("th7".to_owned(), json!("tok"))]);
        let line = restore(b"id: 3\ndata: {\"id\":\"h7\",\"result\":{}}\n\n", &map);
        assert_eq!(&line[..], b"id: 3\ndata: {\"id\":1,\"result\":{}}\n\n");
        let p = restore(
            b"{\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"th7\"}}",
            &map,
        );
        assert!(p.windows(5).any(|w| w == b"\"tok\""));
    }

    /// A bare answer whose text holds `data: ` is not an SSE event (it used to be cut there,
    /// fail to parse, and reach the client with the gateway's own id).
    #[test]
    fn an_answer_holding_data_colon_gets_its_id_back() {
        let map = HashMap::from([("h0".to_owned(), json!(7))]);
        let bare = br#"{"id":"h0","result":{"content":[{"type":"text","text":"metadata: 1"}]}}"#;
        let v: Value = serde_json::from_slice(&restore(bare, &map)).unwrap();
        assert_eq!(v["id"], json!(7));
        assert_eq!(v["result"]["content"][0]["text"], "metadata: 1");
        let event = [b"id: 4\ndata: ".as_slice(), bare, b"\n\n"].concat();
        let back = restore(&event, &map);
        assert!(back.starts_with(b"id: 4\ndata: {") && back.ends_with(b"}\n\n"));
        let v: Value =
            serde_json::from_slice(&back[b"id: 4\ndata: ".len()..back.len() - 2]).unwrap();
        assert_eq!(v["id"], json!(7));
        let framed = [b"data: ".as_slice(), bare, b"\n\n"].concat();
        assert!(restore(&framed, &map).starts_with(b"data: {\"id\":7"));
    }
}
