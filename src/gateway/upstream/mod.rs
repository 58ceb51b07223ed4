//! The upstream connection: the client in front of the gateway (docs/gateway.md, "Upstream").
//!
//! One [`Loop`] per upstream session drives a [`ServerSession`] on a current-thread tokio
//! runtime, runs each request as a task, and hands what it writes to a [`Router`]: stdout
//! (`stdio.rs`) or the HTTP streams of the session (`http.rs`).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::jsonrpc::{ErrorObject, Id, codes};
use crate::protocol::server::{
    Incoming, InputResponses, Listenable, Origin, ROUND_WAIT, ServerConfig, ServerSession,
    ServerTransmit, ServerTransmitKind,
};
use crate::protocol::{Implementation, ProtocolVersion};

use super::{Core, dispatch};

pub(crate) mod fuzz;
mod http;
mod lane;
mod stdio;

pub use http::{Factory, HttpOptions, serve_http};
pub use stdio::{serve, serve_stdio};

/// Longest upstream message.
pub(crate) const MAX_FRAME: usize = 64 << 20;

/// How long requests in flight when the upstream input ends still get answered.
const DRAIN: std::time::Duration = std::time::Duration::from_secs(10);

use super::outbox::{Inbox, Out, Reply};

/// What the transport hands the loop.
pub(crate) enum Input {
    /// One message (or batch), and the stream it came on (HTTP).
    Frame(Bytes, Option<Origin>),
    /// A message too long to buffer: its id when found, and its length.
    Oversized(Option<Id>, u64),
    /// HTTP: streams to attach to the router.
    Attach(http::Attach),
}

/// Where the session's input comes from.
pub(crate) enum Source {
    /// A transport's task or thread.
    Channel(mpsc::Receiver<Input>),
    /// stdin, read on the session's own thread.
    Stdin(Box<stdio::StdinSource>),
}

impl Source {
    /// The next input; `None` when the transport ended. Cancel-safe.
    async fn next(&mut self) -> Option<Input> {
        match self {
            Source::Channel(rx) => rx.recv().await,
            Source::Stdin(s) => s.next().await,
        }
    }
}

/// Where the lines the session writes go.
pub(crate) enum Router {
    /// stdout, through the writer thread.
    Stdio(stdio::Handover),
    /// stdout, written on the session's thread.
    Direct(stdio::StdoutSink),
    /// The session's HTTP streams.
    Http(http::Streams),
}

impl Router {
    /// Delivers one line; `false` when the connection is gone for good.
    fn line(&mut self, line: ServerTransmit) -> bool {
        if line.kind == ServerTransmitKind::StreamEnd && !matches!(self, Router::Http(_)) {
            return true; // stdio has one stream, which goes on
        }
        match self {
            Router::Stdio(tx) => tx.send(line.bytes),
            Router::Direct(sink) => sink.line(line.bytes),
            Router::Http(streams) => {
                streams.line(line);
                true
            }
        }
    }

    fn attach(&mut self, attach: http::Attach) {
        if let Router::Http(streams) = self {
            streams.attach(attach);
        }
    }
}

/// An upstream request being worked on.
struct Working {
    task: tokio::task::AbortHandle,
    /// The id its task answers with (the first request's, when it was retried after
    /// `input_required` rounds).
    task_id: Id,
    /// 2026-07-28 `tools/call`: the backend it goes to (its requests come back as rounds).
    backend: Option<String>,
}

/// A 2026-07-28 call answered with `input_required`, waiting for the client's retry.
struct Parked {
    working: Working,
    /// The input requests' keys and where each answer goes.
    replies: Vec<(String, Reply)>,
}

struct Loop {
    core: Arc<Core>,
    session: ServerSession<Reply>,
    working: HashMap<Id, Working>,
    router: Router,
    /// A comparison of the lists is running; `again`: another change came meanwhile.
    diffing: bool,
    again: bool,
    /// 2026-07-28 rounds by the `requestState` the session handed out.
    parked: HashMap<String, Parked>,
    /// A task's id → the id of the retry that now waits for its answer.
    retried: HashMap<Id, Id>,
    /// Whether the backends were started (once the client's revision is known).
    started: bool,
}

/// Serves one upstream session until its input ends.
pub(crate) async fn run(
    core: Arc<Core>,
    mut inbox: mpsc::Receiver<Out>,
    mut frames: Source,
    router: Router,
) {
    let config = ServerConfig {
        server_info: Implementation::new("ringmcp-gateway", env!("CARGO_PKG_VERSION")),
        capabilities: dispatch::capabilities(),
        // With tool search, how to search (the model writes the queries).
        instructions: (core.settings.routes_tools())
            .then(|| crate::route::find::SEARCH_INSTRUCTIONS.to_owned()),
        versions: ProtocolVersion::ALL.to_vec(),
        // A person may be answering (sampling, elicitation, approvals).
        request_timeout: std::time::Duration::from_secs(600),
        cache: Some(crate::protocol::server::CacheHints::default()),
        strict_initialize: false,
        listen: Some(Listenable::ALL),
        round_wait: ROUND_WAIT,
    };
    let mut l = Loop {
        core,
        session: ServerSession::new(config),
        working: HashMap::new(),
        router,
        diffing: false,
        again: false,
        parked: HashMap::new(),
        retried: HashMap::new(),
        started: false,
    };
    // `false` once the upstream client is gone (stdout closed): nothing in flight can reach it.
    let mut reachable = true;
    loop {
        if !l.flush() {
            reachable = false;
            break;
        }
        let deadline = l.session.poll_timeout();
        let sleep = async {
            match deadline {
                Some(d) => tokio::time::sleep_until(d.into()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            input = frames.next() => match input {
                Some(Input::Frame(f, origin)) => {
                    l.session.handle_frame_from(&f, origin, Instant::now());
                    l.start_backends();
                }
                Some(Input::Oversized(id, len)) => l.session.reject(id.as_ref(), ErrorObject::new(
                    codes::INVALID_REQUEST,
                    format!("Message too large: {len} bytes, over the gateway's {MAX_FRAME}-byte limit"),
                )),
                Some(Input::Attach(a)) => l.router.attach(a),
                None => break,
            },
            out = inbox.recv() => {
                let Some(out) = out else { break };
                let mut lists = l.out(out);
                while let Ok(more) = inbox.try_recv() {
                    lists |= l.out(more);
                }
                if lists {
                    l.compare_lists();
                }
            }
            () = sleep => l.session.handle_timeout(Instant::now()),
        }
        while let Some(event) = l.session.poll_event() {
            l.event(event);
        }
    }
    // The input ended: answer what is in flight (a client that sent requests and closed its
    // end still gets them), for a while.
    let deadline = tokio::time::Instant::now() + DRAIN;
    while reachable && !l.working.is_empty() && l.flush() {
        tokio::select! {
            out = inbox.recv() => match out {
                Some(out) => { l.out(out); }
                None => break,
            },
            () = tokio::time::sleep_until(deadline) => break,
        }
    }
    if reachable {
        l.flush();
    }
    for (_, w) in l.working.drain() {
        w.task.abort();
    }
    // Whichever way the session ended, the host stops here: a reactor running beside the
    // session (stdio) ends only then.
    tracing::info!("upstream closed: stopping the backends");
    // stdio: the process exits next, so wait for the backends; HTTP: other sessions go on.
    let wait = matches!(l.router, Router::Stdio(_) | Router::Direct(_));
    l.core.shutdown(wait);
}

impl Loop {
    /// Starts the backends once the client's revision is known (its `initialize`, or its
    /// first 2026-07-28 request), in that revision's era (docs/gateway.md, "Eras").
    fn start_backends(&mut self) {
        if self.started {
            return;
        }
        if let Some(version) = self.session.version().or(self.session.latest_version()) {
            self.started = true;
            self.core.start(version);
        }
    }

    /// Writes what the session has to send; `false` when stdout is gone.
    fn flush(&mut self) -> bool {
        while let Some(line) = self.session.poll_transmit() {
            if !self.router.line(line) {
                return false;
            }
        }
        true
    }

    fn event(&mut self, event: Incoming<Reply>) {
        match event {
            Incoming::Request { id, method, params, version } => {
                // Any requestState the client sends is one of the gateway's (a backend's never
                // reaches it): one the session did not know (not handed out, or expired) is
                // refused.
                let modern_call = method == "tools/call" && version.is_modern();
                if modern_call && params.as_ref().and_then(|p| p.get("requestState")).is_some() {
                    let error = ErrorObject::new(
                        codes::INVALID_PARAMS,
                        "requestState was not handed out by this gateway (altered, or its round expired): call again without it",
                    );
                    self.session.respond(&id, Err(error));
                    return;
                }
                let backend = modern_call.then(|| self.backend_of(params.as_ref())).flatten();
                let core = self.core.clone();
                let outbox = core.upstream.clone();
                let answered = id.clone();
                let task = tokio::spawn(async move {
                    let outcome = dispatch::handle(core, &method, params).await;
                    outbox.send(Out::Respond(answered, outcome));
                });
                let working = Working { task: task.abort_handle(), task_id: id.clone(), backend };
                self.working.insert(id, working);
            }
            Incoming::Retry { id, state, responses, .. } => self.resume(id, &state, responses),
            Incoming::RoundExpired { state } => {
                // The backend's requests get an error (their reply is dropped); its call goes
                // on until it answers, to nobody.
                self.parked.remove(&state);
            }
            Incoming::Cancelled { id, .. } => {
                if let Some(w) = self.working.remove(&id) {
                    // Dropping the backend's call future cancels it there too.
                    w.task.abort();
                }
            }
            Incoming::Answer { token, outcome } => {
                let _ = token.send(outcome);
            }
            Incoming::Initialized { version, client_info, .. } => {
                let name = client_info.get("name").and_then(Value::as_str).unwrap_or("?");
                tracing::info!("upstream client {name:?} connected with {version}");
            }
            Incoming::Notification { method, .. } => {
                tracing::debug!("upstream notification {method}");
            }
            Incoming::Violation(v) => tracing::warn!("upstream client broke the protocol: {v}"),
        }
    }

    /// A message from the gateway's tasks; `true` when a list changed.
    fn out(&mut self, out: Out) -> bool {
        match out {
            Out::Respond(task_id, outcome) => {
                let id = self.retried.remove(&task_id).unwrap_or(task_id);
                if self.working.remove(&id).is_none() {
                    return false;
                }
                // 2026-07-28 answers get their resultType and caching hints from the session.
                self.session.respond_json(&id, outcome);
            }
            Out::Notify(method, params) => self.session.notify(&method, params),
            Out::ListsChanged => return true,
            Out::Changed(changed) => {
                self.diffing = false;
                for (list, yes) in [
                    ("tools", changed.tools),
                    ("prompts", changed.prompts),
                    ("resources", changed.resources),
                ] {
                    if yes {
                        self.session.notify(&format!("notifications/{list}/list_changed"), None);
                    }
                }
                if std::mem::take(&mut self.again) {
                    self.compare_lists();
                }
            }
            Out::ResourceUpdated(uri) => {
                let params = Some(json!({"uri": uri}));
                self.session.notify("notifications/resources/updated", params);
            }
            Out::Ask { server, method, params, reply } => self.ask(&server, &method, params, reply),
        }
        false
    }

    /// A backend's request, asked of the upstream client if it can take it: as a request of
    /// the gateway's (up to 2025-11-25), or (2026-07-28) as an `input_required` answer to the
    /// client's call that is waiting on that backend.
    fn ask(&mut self, server: &str, method: &str, params: Value, reply: Reply) {
        let capability = if method.starts_with("sampling") { "sampling" } else { "elicitation" };
        let missing = |reply: Reply| {
            let _ = reply.send(Err(ErrorObject::new(
                codes::METHOD_NOT_FOUND,
                format!(
                    "server {server:?} sent {method}, but the client in front of the gateway did not declare the {capability} capability"
                ),
            )));
        };
        if !self.session.latest_version().is_some_and(ProtocolVersion::is_modern) {
            if let Err(reply) = self.session.request(method, Some(params), reply, Instant::now()) {
                missing(reply);
            }
            return;
        }
        if self.session.client_capabilities().get(capability).is_none() {
            return missing(reply);
        }
        // The one call of this client waiting on that backend (two at once cannot tell
        // whose request this is: refused rather than guessed).
        let waiting: Vec<Id> = self
            .working
            .iter()
            .filter(|(_, w)| w.backend.as_deref() == Some(server))
            .map(|(id, _)| id.clone())
            .collect();
        let [id] = &waiting[..] else {
            let _ = reply.send(Err(ErrorObject::new(
                codes::METHOD_NOT_FOUND,
                format!(
                    "server {server:?} sent {method}, but {} calls of this 2026-07-28 client wait on it, so the gateway cannot tell which to ask through",
                    waiting.len()
                ),
            )));
            return;
        };
        let key = "gateway".to_owned();
        let mut requests = serde_json::Map::new();
        requests.insert(key.clone(), json!({"method": method, "params": params}));
        let Some(state) = self.session.input_required(id, requests, Instant::now()) else {
            return;
        };
        let working = self.working.remove(id).expect("just found");
        self.parked.insert(state, Parked { working, replies: vec![(key, reply)] });
    }

    /// The retry of a parked round: the answers go to the backend's waiting requests, and the
    /// call's result will answer this retry.
    fn resume(&mut self, id: Id, state: &str, mut responses: InputResponses) {
        let Some(parked) = self.parked.remove(state) else {
            let error = ErrorObject::new(codes::INTERNAL_ERROR, "the round's call is gone");
            self.session.respond(&id, Err(error));
            return;
        };
        for (key, reply) in parked.replies {
            let at = responses.iter().position(|(k, _)| *k == key);
            let answer = at.map(|i| responses.swap_remove(i).1).unwrap_or_else(|| {
                Err(ErrorObject::new(codes::INTERNAL_ERROR, format!("no answer for {key:?}")))
            });
            let _ = reply.send(answer);
        }
        self.retried.insert(parked.working.task_id.clone(), id.clone());
        self.working.insert(id, parked.working);
    }

    /// The backend a `tools/call` goes to: by the name table when the lists are fresh (the
    /// dispatcher resolves the same way), else by the name's prefix (only to say whose
    /// requests may come back as rounds).
    fn backend_of(&self, params: Option<&Value>) -> Option<String> {
        let name = params?.get("name")?.as_str()?;
        let backends = &self.core.backends;
        if let Some(catalog) = self.core.cached_catalog() {
            let target = catalog.tool(name)?;
            return backends.get(target.backend).map(|b| b.name().to_owned());
        }
        if !self.core.naming.prefix {
            return backends.first().map(|b| b.name().to_owned());
        }
        let sep = &self.core.naming.separator;
        backends
            .iter()
            .find(|b| super::names::may_be_from(name, b.name(), sep))
            .map(|b| b.name().to_owned())
    }

    /// A backend's lists changed: once every backend has started, the lists are rebuilt and
    /// the client told of those that differ (one comparison at a time; changes meanwhile
    /// start another).
    fn compare_lists(&mut self) {
        if !self.core.started() {
            return; // the first lists wait for the start anyway
        }
        if self.diffing {
            self.again = true;
            return;
        }
        self.diffing = true;
        let core = self.core.clone();
        tokio::spawn(async move {
            let changed = core.changes().await;
            core.upstream.send(Out::Changed(changed));
        });
    }
}
