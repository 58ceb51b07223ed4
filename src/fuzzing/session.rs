//! The fuzz bodies of the two sessions: the client's, driven by a script of operations, and
//! the server's, fed arbitrary client lines.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::jsonrpc::{ErrorObject, Id};
use crate::protocol::{
    ClientFeatures, CloseReason, Era, Event, ListenFilter, RequestId, Session, SessionConfig,
};

use super::epoch;

/// The client session driven by a script of operations decoded from `data`: requests (with
/// and without progress), answers of every kind to the ids in flight (results, errors,
/// `input_required`, -32042, garbage), notifications, server requests, cancellations, time
/// passing, the listen stream, and finally the connection's end. The first byte picks the era
/// (legacy, modern) and the features. Requests are written by the session or, under a lent
/// id, by the caller (`Session::lend`, `adopt`). Panics when the session breaks its contract: a token
/// completed twice, or one never handed back once the connection is over (every accepted
/// request completes exactly once, or its token comes back from `cancel`).
pub fn session(data: &[u8]) {
    let [ctl, script @ ..] = data else { return };
    let mut run = Client::new(*ctl);
    let mut bytes = script.iter().copied();
    while let Some(op) = bytes.next() {
        let arg = bytes.next().unwrap_or(0);
        match op % 12 {
            0 | 1 => run.request(op % 12 == 0, arg),
            2..=6 => run.answer(op % 12, arg),
            7 => run.server_request(arg),
            8 => run.respond(arg),
            9 => run.cancel(arg),
            10 => {
                run.now += Duration::from_millis(u64::from(arg) * 500);
                run.s.handle_timeout(run.now);
            }
            _ => match arg % 3 {
                0 => run.s.listen(
                    ListenFilter { tools_list_changed: true, ..Default::default() },
                    run.now,
                ),
                1 => run.s.handle_frame(
                    &bytes::Bytes::copy_from_slice(&script[..script.len().min(usize::from(arg))]),
                    run.now,
                ),
                _ => run.s.handle_truncated(u64::from(arg)),
            },
        }
        run.drain();
    }
    run.s.handle_closed(CloseReason::Shutdown);
    run.drain();
    assert!(run.open.is_empty(), "tokens never completed: {:?}", run.open);
    assert_eq!(run.s.pending(), 0);
}

/// One client session under a fuzz script, and what the script knows of it.
struct Client {
    s: Session<u32>,
    now: Instant,
    /// Accepted, not yet completed.
    open: BTreeSet<u32>,
    done: BTreeSet<u32>,
    ids: Vec<RequestId>,
    /// The server's requests waiting for an answer.
    inputs: Vec<Id>,
    next_token: u32,
}

impl Client {
    /// A session past its handshake, in the era and with the features `ctl` picks.
    fn new(ctl: u8) -> Self {
        let modern = ctl & 1 == 1;
        let features = ClientFeatures {
            sampling: ctl & 2 != 0,
            elicitation_form: ctl & 4 != 0,
            elicitation_url: ctl & 8 != 0,
        };
        let config = SessionConfig {
            features,
            era: if modern { Era::Modern } else { Era::Legacy },
            keep_alive: (ctl & 16 != 0).then_some(Duration::from_secs(3)),
            max_pending: 8,
            roots: (ctl & 32 != 0).then(Vec::new),
            ..SessionConfig::default()
        };
        let mut run = Client {
            s: Session::new(config),
            now: epoch(),
            open: BTreeSet::new(),
            done: BTreeSet::new(),
            ids: Vec::new(),
            inputs: Vec::new(),
            next_token: 1,
        };
        run.s.handshake(run.now, 0);
        let answer = if modern {
            json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete",
                "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "f", "version": "1"}}})
        } else {
            json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}}, "serverInfo": {"name": "f", "version": "1"}}})
        };
        run.feed(answer);
        run.drain();
        run
    }

    fn feed(&mut self, v: Value) {
        self.s.handle_frame(&bytes::Bytes::from(v.to_string()), self.now);
    }

    /// Takes what the session wrote and checks each completion.
    fn drain(&mut self) {
        while self.s.poll_transmit().is_some() {}
        while let Some(event) = self.s.poll_event() {
            match event {
                Event::Completed { token, .. } => {
                    assert!(self.done.insert(token), "token {token} completed twice");
                    assert!(token == 0 || self.open.remove(&token), "token {token} was never open");
                }
                Event::ServerRequest { id, .. } => self.inputs.push(id),
                _ => {}
            }
        }
    }

    /// One of the requests sent so far.
    fn pick(&self, arg: u8) -> Option<RequestId> {
        self.ids.get(usize::from(arg) % self.ids.len().max(1)).copied()
    }

    fn request(&mut self, plain: bool, arg: u8) {
        let token = self.next_token;
        self.next_token += 1;
        let method = ["tools/call", "tools/list", "ping", "logging/setLevel"][usize::from(arg % 4)];
        let params = serde_json::value::RawValue::from_string(
            json!({"name": "t", "level": "info"}).to_string(),
        )
        .expect("JSON");
        let sent = if plain && arg & 0x80 != 0 {
            // Written by the caller under a lent id (the direct write), when one is lent and
            // the method is one the caller may encode.
            let loan = self.s.lend();
            let line = loan.as_ref().and_then(|l| l.encode(method, Some(&params)));
            match (loan, line) {
                (Some(loan), Some(line)) => {
                    self.s.adopt(loan.id, method, line, self.now, None, token).map(|()| loan.id)
                }
                _ => return,
            }
        } else if plain {
            self.s.request(method, Some(&params), self.now, None, token)
        } else {
            self.s.request_with_progress(method, Some(&params), self.now, None, token)
        };
        match sent {
            Ok(id) => {
                self.open.insert(token);
                self.ids.push(id);
            }
            Err((back, _)) => assert_eq!(back, token, "the refused token comes back"),
        }
    }

    /// The server answers a request in flight: a result, an error, `input_required`, -32042,
    /// or progress.
    fn answer(&mut self, kind: u8, arg: u8) {
        let Some(id) = self.pick(arg) else { return };
        let line = match kind {
            2 => json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}}),
            3 => {
                let error = json!({"code": -32603 + i64::from(arg % 3), "message": "m"});
                json!({"jsonrpc": "2.0", "id": id, "error": error})
            }
            4 => {
                let ask = json!({"resultType": "input_required", "requestState": "st",
                    "inputRequests": {"a": {"method": "sampling/createMessage", "params": {}},
                                      "b": {"method": "roots/list"},
                                      "c": {"method": "elicitation/create",
                                            "params": {"mode": "form"}}}});
                json!({"jsonrpc": "2.0", "id": id, "result": ask})
            }
            5 => {
                let data = json!({"elicitations": [{"mode": "url", "url": "https://x",
                    "elicitationId": "e", "message": "go"}]});
                let error = json!({"code": -32042, "message": "url", "data": data});
                json!({"jsonrpc": "2.0", "id": id, "error": error})
            }
            _ => {
                let params = json!({"progressToken": id, "progress": f64::from(arg)});
                json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})
            }
        };
        self.feed(line);
    }

    fn server_request(&mut self, arg: u8) {
        let method = ["sampling/createMessage", "roots/list", "elicitation/create", "x/y"]
            [usize::from(arg % 4)];
        self.feed(json!({"jsonrpc": "2.0", "id": format!("s{arg}"), "method": method,
            "params": {}}));
    }

    fn respond(&mut self, arg: u8) {
        if self.inputs.is_empty() {
            return;
        }
        let id = self.inputs.remove(usize::from(arg) % self.inputs.len());
        let outcome = match arg % 3 {
            0 => Ok(json!({"action": "accept", "content": {}})),
            1 => Ok(json!({"action": "decline"})),
            _ => Err(ErrorObject::new(-1, "no")),
        };
        self.s.respond(&id, outcome, self.now);
    }

    fn cancel(&mut self, arg: u8) {
        if let Some(id) = self.pick(arg)
            && let Some(token) = self.s.cancel(id, "fuzz")
        {
            assert!(self.open.remove(&token), "cancel handed back token {token}, not open");
            assert!(self.done.insert(token), "token {token} completed twice");
        }
    }
}

/// The server session under arbitrary client lines (the input split at newlines; the first
/// byte picks the revisions spoken and how requests are answered). Never panics, writes only
/// JSON-RPC, and takes exactly one answer per request it handed out (none once cancelled).
pub fn server_session(data: &[u8]) {
    use crate::protocol::ProtocolVersion;
    use crate::protocol::server::{
        Incoming, Listenable, Origin, ServerConfig, ServerSession, ServerTransmit,
        ServerTransmitKind,
    };
    use serde_json::{Value, json};
    use std::collections::HashMap;
    let [ctl, rest @ ..] = data else { return };
    let versions =
        if ctl & 1 == 0 { ProtocolVersion::ALL.to_vec() } else { ProtocolVersion::LEGACY.to_vec() };
    let listen = (ctl & 8 != 0).then_some(Listenable::ALL);
    let config = ServerConfig { versions, listen, ..ServerConfig::default() };
    let mut s: ServerSession<u32> = ServerSession::new(config);
    let now = epoch();
    let mut open = Vec::new();
    // Per stream: whether its latest answer said it ended the stream.
    let mut ended: HashMap<u64, bool> = HashMap::new();
    let drain = |s: &mut ServerSession<u32>, ended: &mut HashMap<u64, bool>| {
        while let Some(ServerTransmit { bytes, kind, stream }) = s.poll_transmit() {
            if kind == ServerTransmitKind::StreamEnd {
                assert!(bytes.is_empty() && stream.is_some(), "a stream's end is no line");
                ended.insert(stream.unwrap_or_default(), true);
                continue;
            }
            let v: Value = serde_json::from_slice(&bytes).expect("the session writes JSON");
            assert_eq!(v["jsonrpc"], "2.0", "{v}");
            match kind {
                ServerTransmitKind::Response { error, ends_stream } => {
                    assert!(v.get("method").is_none(), "{v}");
                    assert_eq!(error, v.pointer("/error/code").and_then(Value::as_i64), "{v}");
                    if let Some(stream) = stream {
                        ended.insert(stream, ends_stream);
                    }
                }
                ServerTransmitKind::Notification { method }
                | ServerTransmitKind::Request { method } => {
                    assert_eq!(v["method"], *method, "{v}");
                }
                ServerTransmitKind::StreamEnd => unreachable!("handled above"),
            }
        }
    };
    for (n, line) in rest.split(|&b| b == b'\n').enumerate() {
        let origin =
            (ctl & 16 != 0).then_some(Origin { stream: n as u64 % 3, scoped: ctl & 32 != 0 });
        s.handle_frame_from(line, origin, now);
        while let Some(event) = s.poll_event() {
            match event {
                Incoming::Request { id, .. } | Incoming::Retry { id, .. } => open.push(id),
                Incoming::Cancelled { id, .. } => open.retain(|o| *o != id),
                _ => {}
            }
        }
        // Answer some of the open requests, some twice, some with a round.
        if ctl & 2 != 0 || n % 2 == 0 {
            for (i, id) in std::mem::take(&mut open).into_iter().enumerate() {
                if ctl & 64 != 0 && i % 2 == 0 {
                    let asks = serde_json::Map::from_iter([(
                        "k".to_owned(),
                        json!({"method": "roots/list"}),
                    )]);
                    if s.input_required(&id, asks, now).is_some() {
                        continue;
                    }
                }
                // Some answered as JSON text (the session splices the envelope, and a
                // 2026-07-28 answer's members, into it): fixed texts, or the line itself
                // when it is JSON.
                let first = if ctl & 128 != 0 {
                    let texts: [&[u8]; 4] = [
                        b"{}",
                        br#" {"a":[1,{"b":"}{"}]} "#,
                        br#"{"resultType":"x","k":1}"#,
                        b"[1]",
                    ];
                    let line_is_json = serde_json::from_slice::<Value>(line).is_ok();
                    let text = if line_is_json && i % 2 == 1 { line } else { texts[i % 4] };
                    let raw = crate::jsonrpc::RawJson::raw(bytes::Bytes::copy_from_slice(text));
                    s.respond_json(&id, Ok(raw))
                } else {
                    s.respond(&id, Ok(json!({})))
                };
                let again = s.respond(&id, Ok(json!({})));
                assert!(first && !again, "one answer per request");
            }
        }
        if ctl & 4 != 0 {
            let _ = s.request("roots/list", None, n as u32, now);
            s.notify("notifications/tools/list_changed", None);
            s.notify("notifications/progress", Some(json!({"progressToken": n, "progress": 1})));
        }
        drain(&mut s, &mut ended);
    }
    // Once every request is answered, every stream's last answer said it was the last.
    for id in open {
        assert!(s.respond(&id, Ok(json!({}))), "an open request can be answered");
    }
    s.handle_timeout(now + std::time::Duration::from_secs(3600));
    drain(&mut s, &mut ended);
    while s.poll_event().is_some() {}
    // Bounded memory: once every request is answered and every deadline passed, nothing is
    // held but the listen streams (answered only when the client cancels them): each is an
    // open request, its stream's owed answer, its filter and its progress token, if any.
    let (held, streams) = (s.footprint(), s.listen_streams());
    assert!(
        held <= 4 * streams,
        "the session still holds {held} entries for {streams} listen streams"
    );
    if ctl & 8 == 0 {
        // (an open listen stream is never answered, so its stream never ends; a stream whose
        // requests were all cancelled ends without an answer)
        assert!(ended.values().all(|e| *e), "{ended:?}");
    }
}
