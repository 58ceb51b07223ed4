//! The reference server's message handler: lifecycle, method dispatch, resources and prompts.
//!
//! [`Server::handle`] takes one frame and writes every answer it can give at once to `out`.
//! What needs the I/O loop (a delayed answer, exiting the process) comes back as [`Deferred`],
//! so the handler runs in-process in tests, without threads or a child process.

use std::collections::HashMap;
use std::io::{self, Write};
use std::num::NonZeroUsize;

use ringmcp::frame::Oversized;
use ringmcp::jsonrpc::{self, ErrorObject, Id, codes};
use ringmcp::protocol::server::{
    CacheHints, Incoming, InputResponses, Listenable, ROUND_WAIT, ServerConfig, ServerSession,
};
use ringmcp::protocol::{Implementation, ProtocolVersion};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::catalog::{Catalog, EXPORT_PREFIX, README_TEXT, README_URI};
use super::wire::{parse, text_result, write_result};

/// The `serverInfo.name` the server reports.
pub(crate) const SERVER_NAME: &str = "ringmcp-reference";

/// Which MCP revisions the server speaks (`ringmcp serve --era`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ServeEra {
    /// 2024-11-05 … 2025-11-25 through `initialize`; requests before it (`server/discover`
    /// included) get -32600.
    #[default]
    Legacy,
    /// As `legacy`, but requests before `initialize` other than `ping` get no answer at all
    /// (some servers in the wild drop what they do not know: the probe must time out).
    Silent,
    /// Only 2026-07-28: `server/discover`, `_meta` on every request, no `initialize`.
    Modern,
    /// Both: a request with `_meta` protocolVersion is served statelessly, `initialize` as
    /// usual.
    Dual,
}

impl ServeEra {
    fn modern(self) -> bool {
        matches!(self, ServeEra::Modern | ServeEra::Dual)
    }
}

/// Work only the I/O loop can do, returned by [`Server::handle`] after the frame's immediate
/// answers were written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Deferred {
    /// Sleep `ms` milliseconds off the main thread, then write [`slept`]`(id, ms)`.
    Sleep {
        /// The `tools/call` request to answer.
        id: Id,
        /// How long to sleep.
        ms: u64,
    },
    /// Off the main thread: write the first half of a `len`-byte blob answer, pause `ms`
    /// milliseconds mid-line, then write the rest (the `stall_blob` fault tool).
    StallBlob {
        /// The `tools/call` request to answer.
        id: Id,
        /// The blob's length.
        len: u64,
        /// How long to pause halfway.
        ms: u64,
    },
    /// Flush what was answered so far and exit the process with this status. The rest of the
    /// frame (batch elements after the `exit` call) was not processed.
    Exit(i32),
}

/// Settings of one server instance.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Config {
    /// Items per page of the `*/list` methods; `None` returns everything at once.
    pub(crate) page_size: Option<NonZeroUsize>,
    /// Whether the test-only tools (`exit`, `noise`, `hang`, `stderr`, `notify`, `ask_roots`)
    /// exist.
    pub(crate) fault_tools: bool,
    /// The revisions spoken.
    pub(crate) era: ServeEra,
}

/// One MCP session of the reference server. `E` is where the `stderr` tool writes.
///
/// The lifecycle is the library's [`ServerSession`] (the one the gateway serves with): the
/// handshake, revision checks, one answer per request, cancellations, the server's own
/// requests. This type answers what the session hands over; tool results and resources are
/// written as they are made (some are streamed), each request claimed from the session first.
#[derive(Debug)]
pub(crate) struct Server<E> {
    pub(super) session: ServerSession<Id>,
    catalog: Catalog,
    pub(super) fault_tools: bool,
    /// The `stderr` tool's target (the process's stderr; a `Vec<u8>` in tests).
    pub(super) stderr: E,
    /// Resource URIs the client subscribed to (`touch` notifies them).
    pub(super) subscribed: std::collections::BTreeSet<String>,
    /// The level set by `logging/setLevel`.
    pub(super) log_level: Option<String>,
    era: ServeEra,
    /// `confirm` calls waiting for their retry: the requestState handed out, and the action.
    confirm_states: HashMap<String, String>,
    /// The `requestId`s of every `notifications/cancelled` received (the `cancelled` fault
    /// tool's answer: what the server was told, whatever the host counted).
    pub(super) cancelled: Vec<Value>,
    /// The name of every `tools/call` received (the `calls` fault tool's answer).
    pub(super) calls: Vec<Value>,
}

impl<E: Write> Server<E> {
    /// A server waiting for `initialize`.
    pub(crate) fn new(config: Config, stderr: E) -> Self {
        let modern = config.era.modern();
        let versions = match config.era {
            ServeEra::Legacy | ServeEra::Silent => ProtocolVersion::LEGACY.to_vec(),
            ServeEra::Modern => vec![ProtocolVersion::V2026_07_28],
            ServeEra::Dual => ProtocolVersion::ALL.to_vec(),
        };
        let capabilities = if modern {
            json!({
                "tools": {"listChanged": true},
                "resources": {"subscribe": true},
                "prompts": {},
                "logging": {},
                "completions": {},
            })
        } else {
            json!({
                "tools": {"listChanged": false},
                "resources": {"subscribe": true, "listChanged": false},
                "prompts": {"listChanged": false},
                "logging": {},
                "completions": {},
            })
        };
        let session = ServerSession::new(ServerConfig {
            server_info: Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")),
            capabilities,
            instructions: None,
            versions,
            request_timeout: std::time::Duration::from_secs(60),
            cache: Some(CacheHints::default()),
            // A host that forgets a member the schema requires finds out in its tests.
            strict_initialize: true,
            // 2026-07-28: tool list changes and resource updates on the listen stream.
            listen: Some(Listenable {
                tools: true,
                resource_updates: true,
                ..Listenable::default()
            }),
            round_wait: ROUND_WAIT,
        });
        Server {
            session,
            catalog: Catalog::new(config.page_size, config.fault_tools, modern),
            fault_tools: config.fault_tools,
            stderr,
            subscribed: std::collections::BTreeSet::new(),
            log_level: None,
            era: config.era,
            confirm_states: HashMap::new(),
            cancelled: Vec::new(),
            calls: Vec::new(),
        }
    }

    /// Handles one frame (a line without its `\n`): writes its answers, if any, to `out` and
    /// returns what the I/O loop must do next.
    ///
    /// # Errors
    /// Only when writing to `out` (or to the stderr target) fails.
    pub(crate) fn handle(
        &mut self,
        frame: &[u8],
        out: &mut impl Write,
    ) -> io::Result<Vec<Deferred>> {
        // A batch is served element by element, so that nothing after an `exit` call runs
        // (the session would answer a later `ping` at once).
        let trimmed = frame.trim_ascii_start();
        if trimmed.starts_with(b"[")
            && let Ok(items) = serde_json::from_slice::<Vec<&serde_json::value::RawValue>>(frame)
            && !items.is_empty()
        {
            let mut later = Vec::new();
            for item in items {
                later.extend(self.handle_one(item.get().as_bytes(), out)?);
                if later.iter().any(|d| matches!(d, Deferred::Exit(_))) {
                    break;
                }
            }
            return Ok(later);
        }
        self.handle_one(frame, out)
    }

    /// [`handle`](Self::handle) for one message (or what the session makes of the line).
    fn handle_one(&mut self, frame: &[u8], out: &mut impl Write) -> io::Result<Vec<Deferred>> {
        // A legacy server that drops what it does not know before `initialize`.
        if self.era == ServeEra::Silent && self.session.version().is_none() && dropped(frame) {
            return Ok(Vec::new());
        }
        self.session.handle_frame(frame, std::time::Instant::now());
        let mut later = Vec::new();
        loop {
            self.flush(out)?;
            let Some(event) = self.session.poll_event() else { break };
            if let Some(deferred) = self.event(event, out)? {
                let exit = matches!(deferred, Deferred::Exit(_));
                later.push(deferred);
                if exit {
                    // The rest of the frame (batch elements after `exit`) is not processed.
                    break;
                }
            }
        }
        self.flush(out)?;
        Ok(later)
    }

    /// Writes what the session has queued.
    pub(super) fn flush(&mut self, out: &mut impl Write) -> io::Result<()> {
        while let Some(t) = self.session.poll_transmit() {
            out.write_all(&t.bytes)?;
        }
        Ok(())
    }

    /// Answers a line that was too long to buffer, by the id found in it if any.
    ///
    /// # Errors
    /// When writing to `out` fails.
    pub(crate) fn handle_oversized(
        &mut self,
        o: &Oversized,
        out: &mut impl Write,
    ) -> io::Result<()> {
        let id = o.id.as_deref().and_then(Id::from_token);
        let error = ErrorObject::new(
            codes::INVALID_REQUEST,
            format!("Message too large: {} bytes, over the server's frame limit", o.len),
        );
        self.session.reject(id.as_ref(), error);
        self.flush(out)
    }

    fn event(&mut self, event: Incoming<Id>, out: &mut impl Write) -> io::Result<Option<Deferred>> {
        match event {
            Incoming::Request { id, method, params, version } => {
                self.request(id, &method, params, version.is_modern(), out)
            }
            // The retry of a `confirm` call, with the answer to its elicitation.
            Incoming::Retry { id, state, responses, .. } => {
                let result = self.confirmed(&state, responses);
                self.session.respond(&id, Ok(result));
                Ok(None)
            }
            Incoming::RoundExpired { state } => {
                self.confirm_states.remove(&state);
                Ok(None)
            }
            // Notifications are never answered (`notifications/initialized` is not required
            // before other requests; the session closes a cancelled listen stream itself).
            Incoming::Cancelled { id, .. } => {
                self.cancelled.push(json!(id));
                Ok(None)
            }
            Incoming::Notification { method, params } => {
                if method == "notifications/cancelled" {
                    let id = params.as_ref().and_then(|p| p.get("requestId")).cloned();
                    self.cancelled.push(id.unwrap_or(Value::Null));
                }
                Ok(None)
            }
            // The client's answer to an `ask_roots` call's `roots/list`.
            Incoming::Answer { token: call, outcome } => {
                let (text, is_error) = match &outcome {
                    Ok(result) => (result.to_string(), false),
                    Err(error) => (json!(error).to_string(), true),
                };
                write_result(out, &call, &text_result(text, is_error))?;
                Ok(None)
            }
            Incoming::Initialized { .. } | Incoming::Violation(_) => Ok(None),
        }
    }

    /// Sends `roots/list` to the client for the `ask_roots` call `call` (whether or not the
    /// client declared roots: the test checks how hosts answer what they did not declare).
    pub(super) fn ask_roots(&mut self, call: Id) {
        self.session.request_anyway("roots/list", None, call, std::time::Instant::now());
    }

    /// A request the session handed over. Tool calls, streamed resources and the listen
    /// stream are claimed and written here; every other answer goes through the session
    /// (which adds what 2026-07-28 results carry).
    fn request(
        &mut self,
        id: Id,
        method: &str,
        params: Option<Value>,
        modern: bool,
        out: &mut impl Write,
    ) -> io::Result<Option<Deferred>> {
        let outcome =
            match method {
                "tools/call" if modern && is_confirm(params.as_ref()) => {
                    self.confirm(&id, params);
                    return Ok(None);
                }
                // Tool results are written as they are made (some are streamed): without
                // `resultType` in 2026-07-28, which a client MUST read as "complete".
                "tools/call" => {
                    self.session.claim(&id);
                    return self.call_tool(id, params, out);
                }
                "tools/list" => parse::<ListParams>(method, params)
                    .and_then(|p| self.catalog.tools(p.cursor(), modern)),
                "resources/list" => parse::<ListParams>(method, params)
                    .and_then(|p| self.catalog.resources(p.cursor())),
                "resources/subscribe" => parse::<ReadParams>(method, params).map(|p| {
                    self.subscribed.insert(p.uri);
                    json!({})
                }),
                "resources/unsubscribe" => parse::<ReadParams>(method, params).map(|p| {
                    self.subscribed.remove(&p.uri);
                    json!({})
                }),
                "logging/setLevel" => parse::<LevelParams>(method, params).and_then(|p| {
                    if LOG_LEVELS.contains(&p.level.as_str()) {
                        self.log_level = Some(p.level);
                        Ok(json!({}))
                    } else {
                        let msg = format!("Invalid log level {:?}", p.level);
                        Err(ErrorObject::new(codes::INVALID_PARAMS, msg))
                    }
                }),
                "completion/complete" => parse::<CompleteParams>(method, params).map(complete),
                "resources/templates/list" => {
                    parse::<ListParams>(method, params).map(|_| json!({"resourceTemplates": []}))
                }
                "resources/read" => match parse::<ReadParams>(method, params) {
                    Ok(p) => match p.uri.strip_prefix(EXPORT_PREFIX).map(str::parse::<u64>) {
                        // Export resources are streamed, like blobs.
                        Some(Ok(len)) => {
                            self.session.claim(&id);
                            super::wire::write_export(out, &id, &p.uri, len)?;
                            return Ok(None);
                        }
                        _ => read_resource(p),
                    },
                    Err(e) => Err(e),
                },
                "prompts/list" => parse::<ListParams>(method, params)
                    .and_then(|p| self.catalog.prompts(p.cursor())),
                "prompts/get" => parse::<PromptParams>(method, params).and_then(get_prompt),
                _ => Err(ErrorObject::new(
                    codes::METHOD_NOT_FOUND,
                    format!("Method not found: {method}"),
                )),
            };
        self.session.respond(&id, outcome);
        Ok(None)
    }

    /// The `confirm` tool (2026-07-28 MRTR): an `input_required` result asking for an
    /// elicitation, with the session's opaque `requestState`. A call that carries answers but
    /// no state the session handed out is told its state is missing or altered.
    fn confirm(&mut self, id: &Id, params: Option<Value>) {
        let params = params.unwrap_or_default();
        let action = params["arguments"]["action"].as_str().unwrap_or("it").to_owned();
        if let Some(answer) = params.get("inputResponses").and_then(|r| r.get("ok")) {
            let text = format!(
                "{action}: {} (requestState missing or altered)",
                answer["action"].as_str().unwrap_or("?")
            );
            let result = json!({"resultType": "complete",
                                "content": [{"type": "text", "text": text}], "isError": true});
            self.session.respond(id, Ok(result));
            return;
        }
        let mut requests = Map::new();
        requests.insert(
            "ok".into(),
            json!({"method": "elicitation/create", "params": {
                "message": format!("Confirm {action}?"),
                "requestedSchema": {"type": "object",
                    "properties": {"sure": {"type": "boolean", "default": true}}},
            }}),
        );
        if let Some(state) = self.session.input_required(id, requests, std::time::Instant::now()) {
            self.confirm_states.insert(state, action);
        }
    }

    /// A `confirm` retry's result: what the user said, the state having come back as handed out.
    fn confirmed(&mut self, state: &str, responses: InputResponses) -> Value {
        let action = self.confirm_states.remove(state).unwrap_or_else(|| "it".into());
        let answer = responses.into_iter().find(|(k, _)| k == "ok").map(|(_, a)| a);
        let said = match &answer {
            Some(Ok(a)) => a["action"].as_str().unwrap_or("?").to_owned(),
            _ => "no answer".to_owned(),
        };
        let text = format!("{action}: {said} (requestState intact)");
        json!({"resultType": "complete", "content": [{"type": "text", "text": text}],
               "isError": !matches!(answer, Some(Ok(_)))})
    }
}

/// Whether a `--era silent` server ignores `frame` before `initialize`: any request other than
/// `initialize` and `ping` (what it cannot read is left to the session's errors).
fn dropped(frame: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Peek {
        id: Option<Value>,
        method: Option<String>,
    }
    match serde_json::from_slice::<Peek>(frame) {
        Ok(Peek { id: Some(_), method: Some(m) }) => m != "initialize" && m != "ping",
        _ => false,
    }
}

/// The answer to a `slow` call, written by the thread that slept.
pub(crate) fn slept(id: &Id, ms: u64) -> Vec<u8> {
    let text = format!("slept {ms} ms");
    jsonrpc::encode_result(id, text_result(text, false)).expect("a text result serialises")
}

fn is_confirm(params: Option<&Value>) -> bool {
    params.and_then(|p| p.get("name")).and_then(Value::as_str) == Some("confirm")
}

fn read_resource(params: ReadParams) -> Result<Value, ErrorObject> {
    if params.uri != README_URI {
        return Err(ErrorObject::new(codes::RESOURCE_NOT_FOUND, "Resource not found")
            .with_data(json!({"uri": params.uri})));
    }
    Ok(json!({
        "contents": [{"uri": README_URI, "mimeType": "text/plain", "text": README_TEXT}],
    }))
}

fn get_prompt(params: PromptParams) -> Result<Value, ErrorObject> {
    if params.name != "greet" {
        let message = format!("Unknown prompt: {}", params.name);
        return Err(ErrorObject::new(codes::INVALID_PARAMS, message));
    }
    let name = params.arguments.get("name").ok_or_else(|| {
        ErrorObject::new(codes::INVALID_PARAMS, "Missing required argument: name")
    })?;
    Ok(json!({
        "description": "Greets someone by name.",
        "messages": [{"role": "user", "content": {"type": "text", "text": format!("Hello, {name}!")}}],
    }))
}

/// Params of the paginated `*/list` methods.
#[derive(Deserialize)]
struct ListParams {
    cursor: Option<String>,
}

impl ListParams {
    fn cursor(&self) -> Option<&str> {
        self.cursor.as_deref()
    }
}

#[derive(Deserialize)]
struct ReadParams {
    uri: String,
}

/// The syslog levels of `logging/setLevel`.
const LOG_LEVELS: [&str; 8] =
    ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

#[derive(Deserialize)]
struct LevelParams {
    level: String,
}

#[derive(Deserialize)]
struct CompleteParams {
    argument: CompleteArgument,
}

#[derive(Deserialize)]
struct CompleteArgument {
    value: String,
}

/// Completes names for the `greet` prompt's `name` argument (any reference gets the same list).
fn complete(p: CompleteParams) -> Value {
    let values: Vec<&str> = ["alice", "bob", "carol"]
        .into_iter()
        .filter(|n| n.starts_with(&p.argument.value))
        .collect();
    json!({"completion": {"values": values, "total": values.len(), "hasMore": false}})
}

#[derive(Deserialize)]
struct PromptParams {
    name: String,
    /// Prompt arguments are strings in every schema version.
    #[serde(default)]
    arguments: HashMap<String, String>,
}
