//! Where a session's lines go over HTTP: each answer to the POST that asked, progress along
//! with it, the rest to the GET stream (kept in a bounded history for `Last-Event-ID`); each
//! stream a bounded lane (docs/gateway.md, "Buffers"). Lines are routed by what the session
//! says they are ([`ServerTransmit`]), never read again; SSE framing is the last step.

use std::collections::VecDeque;

use bytes::Bytes;
use tokio::sync::oneshot;

use crate::protocol::server::{ServerTransmit, ServerTransmitKind};

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
    /// Whichever the first line calls for, told through [`Head`]: the bare answer when it
    /// comes first (a stateless request answered at once gets its HTTP status from its
    /// error), else SSE.
    Auto,
}

/// How an [`Auto`](PostMode::Auto) POST's response is written, once its first line is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Head {
    /// One JSON answer, with its error code when it is an error.
    Json(Option<i64>),
    /// An SSE stream.
    Sse,
}

/// A stream attached to a session's router.
pub(crate) enum Attach {
    /// A POST's answer stream: the driver's number of the POST (the session's
    /// [`Origin`](crate::protocol::server::Origin) stream), how its answers are written, and
    /// for [`Auto`](PostMode::Auto), where the choice is told.
    Post { stream: u64, mode: PostMode, tx: LaneTx, head: Option<oneshot::Sender<Head>> },
    /// The session's GET stream, resuming after `last` when given.
    Get { last: Option<u64>, tx: LaneTx },
}

struct Post {
    stream: u64,
    mode: PostMode,
    tx: LaneTx,
    head: Option<oneshot::Sender<Head>>,
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

impl Streams {
    pub(crate) fn new() -> Self {
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

    /// Routes one line of the session: an answer to its POST (the stream ends after the last
    /// one it waits for); progress and a listen stream's notifications to their request's
    /// POST when it carries SSE; a log message, or a request of the gateway's (sampling,
    /// elicitation), to the GET stream, else the latest POST stream that can carry it; the
    /// rest, and whatever its stream refused, to the GET stream.
    pub(crate) fn line(&mut self, t: ServerTransmit) {
        if t.kind == ServerTransmitKind::StreamEnd {
            return self.end(t.stream);
        }
        let index = match (&t.kind, t.stream) {
            (ServerTransmitKind::Response { .. }, Some(s)) => {
                self.posts.iter().position(|p| p.stream == s)
            }
            (ServerTransmitKind::Notification { .. }, Some(s)) => {
                self.posts.iter().position(|p| p.stream == s && p.mode != PostMode::Json)
            }
            (ServerTransmitKind::Notification { method }, None)
                if &**method == "notifications/message" && self.get.is_none() =>
            {
                self.posts.iter().rposition(|p| p.mode != PostMode::Json)
            }
            (ServerTransmitKind::Request { .. }, _) if self.get.is_none() => {
                self.posts.iter().rposition(|p| p.mode == PostMode::Sse)
            }
            _ => None,
        };
        let ends = matches!(t.kind, ServerTransmitKind::Response { ends_stream: true, .. });
        if let Some(i) = index {
            let post = &mut self.posts[i];
            if let Some(head) = post.head.take() {
                let (mode, told) = match t.kind {
                    ServerTransmitKind::Response { error, .. } => {
                        (PostMode::Json, Head::Json(error))
                    }
                    _ => (PostMode::Sse, Head::Sse),
                };
                post.mode = mode;
                let _ = head.send(told);
            }
            let body =
                if post.mode == PostMode::Sse { self.event(&t.bytes).1 } else { t.bytes.clone() };
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
            if ends || !sent {
                self.posts.remove(i);
            }
            if sent {
                return;
            }
        }
        self.onto_get(&t.bytes);
    }

    /// Every request of a POST was cancelled: its response ends (an SSE stream with no
    /// answer, when its head was not written yet).
    fn end(&mut self, stream: Option<u64>) {
        let Some(i) = self.posts.iter().position(|p| Some(p.stream) == stream) else { return };
        let post = self.posts.remove(i);
        if let Some(head) = post.head {
            let _ = head.send(Head::Sse);
        }
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
            Attach::Post { stream, mode, tx, head } => {
                if mode == PostMode::Sse {
                    let _ = tx.send(self.priming());
                }
                self.posts.push(Post { stream, mode, tx, head });
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

    /// The next line of a lane if one is there now.
    fn now(lines: &mut Lines) -> Option<Bytes> {
        use futures::{FutureExt, StreamExt};
        lines.next().now_or_never().flatten()
    }

    fn note(method: &str, stream: Option<u64>) -> ServerTransmit {
        let bytes = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"{method}\"}}\n").into();
        let kind = ServerTransmitKind::Notification { method: method.into() };
        ServerTransmit { bytes, kind, stream }
    }

    fn answer(id: u64, stream: u64, ends_stream: bool) -> ServerTransmit {
        let bytes = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}\n").into();
        let kind = ServerTransmitKind::Response { error: None, ends_stream };
        ServerTransmit { bytes, kind, stream: Some(stream) }
    }

    fn post(stream: u64, mode: PostMode, tx: LaneTx) -> Attach {
        Attach::Post { stream, mode, tx, head: None }
    }

    #[test]
    fn a_stream_whose_client_reads_too_slowly_is_dropped_and_the_session_carries_on() {
        let mut s = Streams::new();
        let (get_tx, mut get_rx) = lane_of(8, 1 << 20);
        s.attach(Attach::Get { last: None, tx: get_tx });
        for _ in 0..100 {
            s.line(note("notifications/message", None));
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
        s.attach(post(1, PostMode::Json, post_tx));
        s.line(answer(1, 1, true));
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
        s.attach(post(7, PostMode::Sse, post_tx));
        s.attach(Attach::Get { last: None, tx: get_tx });
        s.line(note("notifications/progress", Some(7)));
        s.line(note("notifications/tools/list_changed", None));
        s.line(answer(1, 7, false));
        s.line(answer(2, 7, true));
        // Each stream opens with a priming event: an id, a retry delay, no data.
        let priming = now(&mut post_rx).unwrap();
        assert!(priming.starts_with(b"id: 1\nretry: ") && priming.ends_with(b"data: \n\n"));
        assert!(now(&mut get_rx).unwrap().starts_with(b"id: 2\nretry: "));
        let progress = now(&mut post_rx).unwrap();
        assert!(progress.starts_with(b"id: 3\ndata: {") && progress.ends_with(b"}\n\n"));
        assert!(now(&mut post_rx).unwrap().windows(6).any(|w| w == b"\"id\":1"));
        assert!(now(&mut post_rx).unwrap().windows(6).any(|w| w == b"\"id\":2"));
        assert!(now(&mut post_rx).is_none(), "the stream ends after its last answer");
        assert!(now(&mut get_rx).unwrap().windows(12).any(|w| w == b"list_changed"));
        // Resumption replays what the GET stream was sent after the given event.
        let (again, mut again_rx) = lane();
        s.attach(Attach::Get { last: Some(3), tx: again });
        assert!(now(&mut again_rx).unwrap().starts_with(b"id: 7\nretry: "), "its own priming");
        assert!(now(&mut again_rx).unwrap().starts_with(b"id: 4\n"), "then the replay");
    }

    /// An answer whose text holds `data: ` (or anything else) is framed, never read: the
    /// stream's choice of JSON or SSE comes from what the session says the line is.
    #[test]
    fn an_auto_post_is_json_when_its_answer_comes_first_and_sse_otherwise() {
        let mut s = Streams::new();
        let (tx, mut rx) = lane();
        let (head_tx, mut head_rx) = oneshot::channel();
        s.attach(Attach::Post { stream: 1, mode: PostMode::Auto, tx, head: Some(head_tx) });
        let bytes =
            Bytes::from_static(b"{\"id\":7,\"error\":{\"code\":-32602,\"message\":\"data: x\"}}\n");
        let kind = ServerTransmitKind::Response { error: Some(-32602), ends_stream: true };
        s.line(ServerTransmit { bytes: bytes.clone(), kind, stream: Some(1) });
        assert_eq!(head_rx.try_recv().unwrap(), Head::Json(Some(-32602)));
        assert_eq!(now(&mut rx).unwrap(), bytes, "the bare answer");
        assert!(now(&mut rx).is_none());

        let (tx, mut rx) = lane();
        let (head_tx, mut head_rx) = oneshot::channel();
        s.attach(Attach::Post { stream: 2, mode: PostMode::Auto, tx, head: Some(head_tx) });
        s.line(note("notifications/progress", Some(2)));
        s.line(answer(9, 2, true));
        assert_eq!(head_rx.try_recv().unwrap(), Head::Sse);
        assert!(now(&mut rx).unwrap().windows(8).any(|w| w == b"\ndata: {"));
        assert!(now(&mut rx).unwrap().ends_with(b"}\n\n"));
        assert!(now(&mut rx).is_none());
    }
}
