//! Where a session's lines go over HTTP: each answer to the POST that asked, progress along
//! with it, the rest to the GET stream (kept in a bounded history for `Last-Event-ID`); each
//! stream a bounded lane (docs/gateway.md, "Buffers").

use std::collections::{HashMap, HashSet, VecDeque};

use bytes::Bytes;
use serde_json::Value;

use crate::jsonrpc::Id;
use crate::protocol::modern::META_SUBSCRIPTION_ID as SUBSCRIPTION_ID;

use super::super::lane::{LaneTx, Refused};

/// Events kept per session for GET-stream resumption.
const HISTORY: usize = 1024;
/// Bytes of events the history keeps at most.
const HISTORY_BYTES: usize = 32 << 20;

/// The reconnection delay SSE streams announce.
const RETRY_MS: u64 = 1000;

/// How a POST's answers are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PostMode {
    /// As SSE events (with ids), progress included.
    Sse,
    /// The bare answers, for one JSON body.
    Json,
    /// Bare lines, progress included: the HTTP side picks JSON or SSE once it sees the first
    /// (a stateless request answered at once gets its HTTP status from its error).
    Raw,
}

/// A stream attached to a session's router.
pub(crate) enum Attach {
    /// A POST's answer stream: the ids of its requests and their progress tokens.
    Post { ids: Vec<Id>, tokens: Vec<Value>, mode: PostMode, tx: LaneTx },
    /// The session's GET stream, resuming after `last` when given.
    Get { last: Option<u64>, tx: LaneTx },
}

struct Post {
    ids: HashSet<Id>,
    tokens: Vec<Value>,
    mode: PostMode,
    tx: LaneTx,
}

/// Where a session's lines go: each answer to the POST that asked, progress along with it,
/// the rest to the GET stream (kept in a bounded history for `Last-Event-ID`).
pub(crate) struct Streams {
    posts: Vec<Post>,
    get: Option<LaneTx>,
    history: VecDeque<(u64, Bytes)>,
    /// The bytes `history` holds.
    history_bytes: usize,
    next_event: u64,
}

/// What a line is, for routing.
#[derive(serde::Deserialize)]
pub(super) struct Peek {
    pub(super) id: Option<Id>,
    pub(super) method: Option<String>,
    params: Option<PeekParams>,
}

#[derive(serde::Deserialize)]
struct PeekParams {
    #[serde(rename = "progressToken")]
    progress_token: Option<Value>,
    #[serde(rename = "_meta")]
    meta: Option<HashMap<String, Value>>,
}

impl Streams {
    pub(super) fn new() -> Self {
        Streams {
            posts: Vec::new(),
            get: None,
            history: VecDeque::new(),
            history_bytes: 0,
            next_event: 0,
        }
    }

    /// Wraps a line as one SSE event.
    fn event(&mut self, line: &[u8]) -> (u64, Bytes) {
        self.next_event += 1;
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let mut out = Vec::with_capacity(line.len() + 32);
        out.extend_from_slice(format!("id: {}\ndata: ", self.next_event).as_bytes());
        out.extend_from_slice(line);
        out.extend_from_slice(b"\n\n");
        (self.next_event, out.into())
    }

    /// The event that opens a stream: an id to resume from, no data, and how long to wait
    /// before reconnecting (MCP 2025-11-25 SSE polling).
    fn priming(&mut self) -> Bytes {
        self.next_event += 1;
        format!("id: {}\nretry: {RETRY_MS}\ndata: \n\n", self.next_event).into()
    }

    pub(crate) fn line(&mut self, line: Bytes) {
        let peek: Option<Peek> = serde_json::from_slice(&line).ok();
        let (id, method, params) = match peek {
            Some(p) => (p.id, p.method, p.params),
            None => (None, None, None),
        };
        let index = match (&id, &method) {
            // An answer: to the POST that carried the request.
            (Some(id), None) => self.posts.iter().position(|p| p.ids.contains(id)),
            // Progress: with its request; a subscription's notification: on its stream; a log
            // message: the GET stream, else the latest POST stream that can carry it.
            (None, Some(m)) => {
                let token = params.as_ref().and_then(|p| p.progress_token.as_ref());
                let sub = params
                    .as_ref()
                    .and_then(|p| p.meta.as_ref())
                    .and_then(|m| m.get(SUBSCRIPTION_ID))
                    .and_then(|v| serde_json::from_value::<Id>(v.clone()).ok());
                match (token, sub) {
                    (Some(t), _) => self
                        .posts
                        .iter()
                        .position(|p| p.mode != PostMode::Json && p.tokens.contains(t)),
                    (None, Some(s)) => self.posts.iter().position(|p| p.ids.contains(&s)),
                    _ if m == "notifications/message" && self.get.is_none() => {
                        self.posts.iter().rposition(|p| p.mode != PostMode::Json)
                    }
                    _ => None,
                }
            }
            // A request of the gateway's (sampling, elicitation): the GET stream, else the
            // latest POST stream that can carry it.
            (Some(_), Some(_)) if self.get.is_none() => {
                self.posts.iter().rposition(|p| p.mode == PostMode::Sse)
            }
            _ => None,
        };
        if let Some(i) = index {
            let post = &self.posts[i];
            let body = if post.mode == PostMode::Sse { self.event(&line).1 } else { line.clone() };
            let post = &mut self.posts[i];
            let sent = match post.tx.send(body) {
                Ok(()) => true,
                Err(full) => {
                    if full == Refused::Behind {
                        tracing::warn!(
                            "dropped a POST's answer stream: its client read too slowly (what is left goes to the GET stream)"
                        );
                    }
                    false
                }
            };
            if let (Some(id), None) = (&id, &method) {
                post.ids.remove(id);
            }
            let done = post.ids.is_empty() || !sent;
            if done {
                self.posts.remove(i);
            }
            if sent {
                return;
            }
        }
        self.onto_get(&line);
    }

    fn onto_get(&mut self, line: &[u8]) {
        let (id, event) = self.event(line);
        while self.history.len() == HISTORY || self.history_bytes + event.len() > HISTORY_BYTES {
            let Some((_, old)) = self.history.pop_front() else { break };
            self.history_bytes -= old.len();
        }
        self.history_bytes += event.len();
        self.history.push_back((id, event.clone()));
        if let Some(get) = &self.get
            && let Err(full) = get.send(event)
        {
            if full == Refused::Behind {
                tracing::warn!(
                    "dropped the GET stream: its client read too slowly (it may reconnect with Last-Event-ID)"
                );
            }
            self.get = None;
        }
    }

    pub(crate) fn attach(&mut self, attach: Attach) {
        match attach {
            Attach::Post { ids, tokens, mode, tx } => {
                if mode == PostMode::Sse {
                    let _ = tx.send(self.priming());
                }
                self.posts.push(Post { ids: ids.into_iter().collect(), tokens, mode, tx });
            }
            Attach::Get { last, tx } => {
                let _ = tx.send(self.priming());
                if let Some(last) = last {
                    for (_, event) in self.history.iter().filter(|(id, _)| *id > last) {
                        let _ = tx.send(event.clone());
                    }
                }
                self.get = Some(tx);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::lane::{Lines, lane, lane_of};
    use super::*;
    use serde_json::json;

    /// The next line of a lane if one is there now.
    fn now(lines: &mut Lines) -> Option<Bytes> {
        use futures::{FutureExt, StreamExt};
        lines.next().now_or_never().flatten()
    }

    #[test]
    fn a_stream_whose_client_reads_too_slowly_is_dropped_and_the_session_carries_on() {
        let mut s = Streams::new();
        let (get_tx, mut get_rx) = lane_of(8, 1 << 20);
        s.attach(Attach::Get { last: None, tx: get_tx });
        let note =
            Bytes::from_static(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n");
        for _ in 0..100 {
            s.line(note.clone());
        }
        assert!(s.get.is_none(), "the GET stream was dropped once 8 lines were unread");
        let mut read = 0;
        while now(&mut get_rx).is_some() {
            read += 1;
        }
        assert_eq!(read, 8, "what it held is still read, then it ends");
        assert!(s.history.len() <= HISTORY && s.history_bytes <= HISTORY_BYTES);
        // A POST's answer still reaches it.
        let (post_tx, mut post_rx) = lane();
        s.attach(Attach::Post {
            ids: vec![Id::Number(1)],
            tokens: vec![],
            mode: PostMode::Json,
            tx: post_tx,
        });
        s.line(Bytes::from_static(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"));
        assert!(now(&mut post_rx).is_some());
        // The client reconnects and is replayed what it missed, from the history.
        let (again, mut again_rx) = lane();
        s.attach(Attach::Get { last: Some(5), tx: again });
        let mut replayed = 0;
        while now(&mut again_rx).is_some() {
            replayed += 1;
        }
        assert!(replayed > 90, "{replayed}");
    }

    #[test]
    fn answers_go_to_their_post_and_the_rest_to_the_get_stream() {
        let mut s = Streams::new();
        let (post_tx, mut post_rx) = lane();
        let (get_tx, mut get_rx) = lane();
        s.attach(Attach::Post {
            ids: vec![Id::Number(1)],
            tokens: vec![json!("p")],
            mode: PostMode::Sse,
            tx: post_tx,
        });
        s.attach(Attach::Get { last: None, tx: get_tx });
        s.line(Bytes::from_static(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"p\",\"progress\":1}}\n"));
        s.line(Bytes::from_static(
            b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n",
        ));
        s.line(Bytes::from_static(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"));
        // Each stream opens with a priming event: an id, a retry delay, no data.
        let priming = now(&mut post_rx).unwrap();
        assert!(priming.starts_with(b"id: 1\nretry: ") && priming.ends_with(b"data: \n\n"));
        assert!(now(&mut get_rx).unwrap().starts_with(b"id: 2\nretry: "));
        let progress = now(&mut post_rx).unwrap();
        assert!(progress.starts_with(b"id: 3\ndata: {") && progress.ends_with(b"}\n\n"));
        assert!(now(&mut post_rx).unwrap().windows(6).any(|w| w == b"\"id\":1"));
        assert!(now(&mut post_rx).is_none(), "the stream ends after its answer");
        assert!(now(&mut get_rx).unwrap().windows(12).any(|w| w == b"list_changed"));
        // Resumption replays what the GET stream was sent after the given event.
        let (again, mut again_rx) = lane();
        s.attach(Attach::Get { last: Some(3), tx: again });
        assert!(now(&mut again_rx).unwrap().starts_with(b"id: 6\nretry: "), "its own priming");
        assert!(now(&mut again_rx).unwrap().starts_with(b"id: 4\n"), "then the replay");
    }
}
