//! The reference server's message handler: lifecycle, method dispatch, resources and prompts.
//!
//! [`Server::handle`] takes one frame and writes every answer it can give at once to `out`.
//! What needs the I/O loop (a delayed answer, exiting the process) comes back as [`Deferred`],
//! so the handler runs in-process in tests, without threads or a child process.

use std::collections::HashMap;
use std::io::{self, Write};
use std::num::NonZeroUsize;

use ringmcp::frame::{IdSniffer, Oversized};
use ringmcp::jsonrpc::{
    self, DecodeError, Decoded, ErrorObject, Id, Message, Request, Response, codes,
};
use serde::Deserialize;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::catalog::{Catalog, EXPORT_PREFIX, README_TEXT, README_URI};
use super::tools::text_result;

/// Protocol versions the server speaks, newest last.
pub(crate) const SUPPORTED_VERSIONS: [&str; 4] =
    ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The version answered when the client asks for one the server does not speak.
pub(crate) const LATEST_VERSION: &str = "2025-11-25";

/// The `serverInfo.name` the server reports.
pub(crate) const SERVER_NAME: &str = "ringmcp-reference";

/// The stateless revision the server speaks with `--era modern` or `--era dual`.
pub(crate) const MODERN_VERSION: &str = "2026-07-28";

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

/// Where the session is in the MCP lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Only `initialize` and `ping` are served.
    AwaitingInitialize,
    /// `initialize` was answered; everything is served.
    Ready,
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
#[derive(Debug)]
pub(crate) struct Server<E> {
    phase: Phase,
    catalog: Catalog,
    pub(super) fault_tools: bool,
    /// The `stderr` tool's target (the process's stderr; a `Vec<u8>` in tests).
    pub(super) stderr: E,
    /// How many `roots/list` requests were sent; the next one gets id `"roots-{n+1}"`.
    pub(super) roots_sent: u64,
    /// `roots/list` request id → the `ask_roots` tool call waiting for its answer.
    pub(super) awaiting_roots: HashMap<String, Id>,
    /// Resource URIs the client subscribed to (`touch` notifies them).
    pub(super) subscribed: std::collections::BTreeSet<String>,
    /// The level set by `logging/setLevel`.
    pub(super) log_level: Option<String>,
    era: ServeEra,
    /// `confirm` calls waiting for their retry: the requestState handed out.
    confirm_states: std::collections::HashSet<String>,
    /// `confirm` calls so far (numbers the states).
    confirms: u64,
    /// 2026-07-28: the open `subscriptions/listen` stream (its request id) and what it was
    /// granted.
    pub(super) listen: Option<(Id, super::tools::Granted)>,
    /// The `requestId`s of every `notifications/cancelled` received (the `cancelled` fault
    /// tool's answer: what the server was told, whatever the host counted).
    pub(super) cancelled: Vec<Value>,
    /// The name of every `tools/call` received (the `calls` fault tool's answer).
    pub(super) calls: Vec<Value>,
}

impl<E: Write> Server<E> {
    /// A server waiting for `initialize`.
    pub(crate) fn new(config: Config, stderr: E) -> Self {
        Server {
            phase: Phase::AwaitingInitialize,
            catalog: Catalog::new(config.page_size, config.fault_tools, config.era.modern()),
            fault_tools: config.fault_tools,
            stderr,
            roots_sent: 0,
            awaiting_roots: HashMap::new(),
            subscribed: std::collections::BTreeSet::new(),
            log_level: None,
            era: config.era,
            confirm_states: std::collections::HashSet::new(),
            confirms: 0,
            listen: None,
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
        let mut later = Vec::new();
        match jsonrpc::decode(frame) {
            Ok(Decoded::Single(message)) => later.extend(self.message(message, out)?),
            Ok(Decoded::Batch(items)) => {
                for item in items {
                    match item {
                        Ok(message) => later.extend(self.message(message, out)?),
                        // The element's id was consumed by the decoder: answer with a null id.
                        Err(e) => write_error(out, None, &ErrorObject::from(&e))?,
                    }
                    if later.iter().any(|d| matches!(d, Deferred::Exit(_))) {
                        break;
                    }
                }
            }
            Err(e) => {
                // Valid JSON that breaks JSON-RPC rules may still carry a readable id.
                let id = match e {
                    DecodeError::Json(_) => None,
                    _ => sniff_id(frame),
                };
                write_error(out, id.as_ref(), &ErrorObject::from(&e))?;
            }
        }
        Ok(later)
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
        write_error(out, id.as_ref(), &error)
    }

    fn message(&mut self, message: Message, out: &mut impl Write) -> io::Result<Option<Deferred>> {
        match message {
            Message::Request(request) => self.request(request, out),
            // Notifications are never answered; only a cancellation of the open
            // `subscriptions/listen` changes this server's state (`notifications/initialized`
            // is not required before other requests).
            Message::Notification(n) => {
                let cancelled = n.params.as_ref().and_then(|p| p.get("requestId"));
                if n.method == "notifications/cancelled" {
                    self.cancelled.push(cancelled.cloned().unwrap_or(Value::Null));
                }
                if n.method == "notifications/cancelled"
                    && let Some((listen, _)) = &self.listen
                    && cancelled.is_some_and(|c| json!(listen) == *c)
                {
                    self.listen = None;
                }
                Ok(None)
            }
            Message::Response(response) => {
                self.response(response, out)?;
                Ok(None)
            }
        }
    }

    fn request(&mut self, request: Request, out: &mut impl Write) -> io::Result<Option<Deferred>> {
        let Request { id, method, params } = request;
        let modern = match self.modern_request(params.as_ref()) {
            Ok(modern) => modern,
            Err(error) => {
                write_error(out, Some(&id), &error)?;
                return Ok(None);
            }
        };
        let outcome = match method.as_str() {
            "ping" if !modern => Ok(json!({})),
            "server/discover" if modern => Ok(self.discover()),
            // A long-lived request: acknowledged now, answered never (the client cancels it);
            // the tools tag their notifications with its id.
            "subscriptions/listen" if modern => {
                self.listen(id, params, out)?;
                return Ok(None);
            }
            "initialize" if self.era != ServeEra::Modern => self.initialize(params),
            // A legacy server that drops what it does not know before `initialize`.
            _ if self.era == ServeEra::Silent && self.phase == Phase::AwaitingInitialize => {
                return Ok(None);
            }
            _ if self.phase == Phase::AwaitingInitialize && !modern => {
                Err(ErrorObject::new(codes::INVALID_REQUEST, "Server not initialized"))
            }
            "tools/call" if modern && is_confirm(params.as_ref()) => {
                write_result(out, &id, &self.confirm(params))?;
                return Ok(None);
            }
            // Tool results are written as they are made (some are streamed): without
            // `resultType` in 2026-07-28, which a client MUST read as "complete".
            "tools/call" => return self.call_tool(id, params, out),
            "tools/list" => parse::<ListParams>(&method, params)
                .and_then(|p| self.catalog.tools(p.cursor(), modern)),
            "resources/list" => parse::<ListParams>(&method, params)
                .and_then(|p| self.catalog.resources(p.cursor())),
            "resources/subscribe" => parse::<ReadParams>(&method, params).map(|p| {
                self.subscribed.insert(p.uri);
                json!({})
            }),
            "resources/unsubscribe" => parse::<ReadParams>(&method, params).map(|p| {
                self.subscribed.remove(&p.uri);
                json!({})
            }),
            "logging/setLevel" => parse::<LevelParams>(&method, params).and_then(|p| {
                if LOG_LEVELS.contains(&p.level.as_str()) {
                    self.log_level = Some(p.level);
                    Ok(json!({}))
                } else {
                    let msg = format!("Invalid log level {:?}", p.level);
                    Err(ErrorObject::new(codes::INVALID_PARAMS, msg))
                }
            }),
            "completion/complete" => parse::<CompleteParams>(&method, params).map(complete),
            "resources/templates/list" => {
                parse::<ListParams>(&method, params).map(|_| json!({"resourceTemplates": []}))
            }
            "resources/read" => match parse::<ReadParams>(&method, params) {
                Ok(p) => match p.uri.strip_prefix(EXPORT_PREFIX).map(str::parse::<u64>) {
                    // Export resources are streamed, like blobs.
                    Some(Ok(len)) => {
                        super::tools::write_export(out, &id, &p.uri, len)?;
                        return Ok(None);
                    }
                    _ => read_resource(p),
                },
                Err(e) => Err(e),
            },
            "prompts/list" => {
                parse::<ListParams>(&method, params).and_then(|p| self.catalog.prompts(p.cursor()))
            }
            "prompts/get" => parse::<PromptParams>(&method, params).and_then(get_prompt),
            _ => Err(ErrorObject::new(
                codes::METHOD_NOT_FOUND,
                format!("Method not found: {method}"),
            )),
        };
        match outcome {
            Ok(mut result) => {
                if modern && let Value::Object(members) = &mut result {
                    members.insert("resultType".into(), json!("complete"));
                    if CACHEABLE.contains(&method.as_str()) {
                        members.insert("ttlMs".into(), json!(0));
                        members.insert("cacheScope".into(), json!("private"));
                    }
                }
                write_result(out, &id, &result)?
            }
            Err(error) => write_error(out, Some(&id), &error)?,
        }
        Ok(None)
    }

    /// Whether a request is a 2026-07-28 one (its `_meta` names the revision), checked as that
    /// revision requires: a revision we do not speak gets -32022 with the supported list, a
    /// missing `clientCapabilities` -32602. A `--era modern` server refuses requests without
    /// `_meta` the same way.
    fn modern_request(&self, params: Option<&Value>) -> Result<bool, ErrorObject> {
        let meta = params.and_then(|p| p.get("_meta"));
        let version = meta.and_then(|m| m.get(META_VERSION)).and_then(Value::as_str);
        match (self.era.modern(), version) {
            (true, Some(version)) if version != MODERN_VERSION => Err(ErrorObject::new(
                codes::UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
            )
            .with_data(json!({"supported": [MODERN_VERSION], "requested": version}))),
            (true, Some(_)) if meta.and_then(|m| m.get(META_CAPABILITIES)).is_none() => {
                Err(ErrorObject::new(
                    codes::INVALID_PARAMS,
                    format!("params._meta lacks {META_CAPABILITIES}"),
                ))
            }
            (true, Some(_)) => Ok(true),
            (_, None) if self.era == ServeEra::Modern => Err(ErrorObject::new(
                codes::INVALID_PARAMS,
                format!("params._meta must carry {META_VERSION} and {META_CAPABILITIES}"),
            )),
            _ => Ok(false),
        }
    }

    /// `subscriptions/listen`: grants what this server can send (tool list changes and
    /// resource updates), acknowledges with the stream's id, and keeps the stream open.
    fn listen(&mut self, id: Id, params: Option<Value>, out: &mut impl Write) -> io::Result<()> {
        let asked = params.as_ref().and_then(|p| p.get("notifications")).cloned();
        let Some(Value::Object(asked)) = asked else {
            let e = ErrorObject::new(codes::INVALID_PARAMS, "notifications filter required");
            return write_error(out, Some(&id), &e);
        };
        let granted: Map<String, Value> = asked
            .into_iter()
            .filter(|(k, _)| k == "toolsListChanged" || k == "resourceSubscriptions")
            .collect();
        let params = json!({"notifications": granted,
                            "_meta": {super::tools::SUBSCRIPTION_ID: id}});
        let method = "notifications/subscriptions/acknowledged";
        super::tools::write_notification(out, method, Some(params))?;
        self.listen = Some((id, super::tools::Granted(Value::Object(granted))));
        Ok(())
    }

    /// The `DiscoverResult`.
    fn discover(&self) -> Value {
        json!({
            "supportedVersions": [MODERN_VERSION],
            "capabilities": {
                "tools": {"listChanged": true},
                "resources": {"subscribe": true},
                "prompts": {},
                "logging": {},
                "completions": {},
            },
            "_meta": {
                "io.modelcontextprotocol/serverInfo":
                    {"name": SERVER_NAME, "version": env!("CARGO_PKG_VERSION")},
            },
        })
    }

    /// The `confirm` tool (2026-07-28 MRTR): first an `input_required` result asking for an
    /// elicitation, with an opaque `requestState`; then, on the retry that carries the answer,
    /// what the user said and whether the state came back as handed out.
    fn confirm(&mut self, params: Option<Value>) -> Value {
        let params = params.unwrap_or_default();
        let action = params["arguments"]["action"].as_str().unwrap_or("it").to_owned();
        let Some(answer) = params.get("inputResponses").and_then(|r| r.get("ok")) else {
            self.confirms += 1;
            let state = format!("confirm:{}:{action}", self.confirms);
            self.confirm_states.insert(state.clone());
            return json!({
                "resultType": "input_required",
                "inputRequests": {"ok": {"method": "elicitation/create", "params": {
                    "message": format!("Confirm {action}?"),
                    "requestedSchema": {"type": "object",
                        "properties": {"sure": {"type": "boolean", "default": true}}},
                }}},
                "requestState": state,
            });
        };
        let state = params.get("requestState").and_then(Value::as_str);
        let intact = state.is_some_and(|s| self.confirm_states.remove(s));
        let text = format!(
            "{action}: {} (requestState {})",
            answer["action"].as_str().unwrap_or("?"),
            if intact { "intact" } else { "missing or altered" }
        );
        json!({"resultType": "complete", "content": [{"type": "text", "text": text}],
               "isError": !intact})
    }

    fn initialize(&mut self, params: Option<Value>) -> Result<Value, ErrorObject> {
        if self.phase != Phase::AwaitingInitialize {
            return Err(ErrorObject::new(codes::INVALID_REQUEST, "Server already initialized"));
        }
        let params = parse::<InitializeParams>("initialize", params)?;
        let version = SUPPORTED_VERSIONS
            .into_iter()
            .find(|v| *v == params.protocol_version)
            .unwrap_or(LATEST_VERSION);
        self.phase = Phase::Ready;
        Ok(json!({
            "protocolVersion": version,
            "capabilities": {
                "tools": {"listChanged": false},
                "resources": {"subscribe": true, "listChanged": false},
                "prompts": {"listChanged": false},
                "logging": {},
                "completions": {},
            },
            "serverInfo": {"name": SERVER_NAME, "version": env!("CARGO_PKG_VERSION")},
        }))
    }

    /// A response from the client: only answers to our `roots/list` requests matter; anything
    /// else (unknown ids, stray responses) is ignored.
    fn response(&mut self, response: Response, out: &mut impl Write) -> io::Result<()> {
        let Some(Id::String(key)) = &response.id else { return Ok(()) };
        let Some(call) = self.awaiting_roots.remove(key) else { return Ok(()) };
        let (text, is_error) = match &response.outcome {
            Ok(result) => (result.to_string(), false),
            Err(error) => (json!(error).to_string(), true),
        };
        write_result(out, &call, &text_result(text, is_error))
    }
}

/// The answer to a `slow` call, written by the thread that slept.
pub(crate) fn slept(id: &Id, ms: u64) -> Vec<u8> {
    let text = format!("slept {ms} ms");
    jsonrpc::encode_result(id, text_result(text, false)).expect("a text result serialises")
}

/// `_meta` key of a 2026-07-28 request's revision.
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of a 2026-07-28 request's client capabilities.
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// 2026-07-28 results that carry `ttlMs` and `cacheScope`.
const CACHEABLE: [&str; 6] = [
    "server/discover",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
    "resources/read",
];

fn is_confirm(params: Option<&Value>) -> bool {
    params.and_then(|p| p.get("name")).and_then(Value::as_str) == Some("confirm")
}

/// Writes a success response line.
pub(super) fn write_result(
    out: &mut impl Write,
    id: &Id,
    result: &impl Serialize,
) -> io::Result<()> {
    out.write_all(&jsonrpc::encode_result(id, result).map_err(io::Error::other)?)
}

/// Writes an error response line.
pub(super) fn write_error(
    out: &mut impl Write,
    id: Option<&Id>,
    error: &ErrorObject,
) -> io::Result<()> {
    out.write_all(&jsonrpc::encode_error(id, error))
}

/// Deserialises a method's params (absent params read as `{}`), or explains in a -32602 error
/// what is wrong with them.
pub(super) fn parse<T: DeserializeOwned>(
    method: &str,
    params: Option<Value>,
) -> Result<T, ErrorObject> {
    serde_json::from_value(params.unwrap_or_else(|| Value::Object(Map::new()))).map_err(|e| {
        ErrorObject::new(codes::INVALID_PARAMS, format!("Invalid params for {method}: {e}"))
    })
}

fn sniff_id(frame: &[u8]) -> Option<Id> {
    let mut sniffer = IdSniffer::new();
    sniffer.feed(frame);
    sniffer.id().and_then(Id::from_token)
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

/// `initialize` params. The schema requires all three members, and so does this server, so
/// that a host that forgets one finds out in its tests.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParams {
    protocol_version: String,
    #[serde(rename = "capabilities")]
    _capabilities: Map<String, Value>,
    #[serde(rename = "clientInfo")]
    _client_info: ClientInfo,
}

/// `Implementation`: `name` and `version` are required.
#[derive(Deserialize)]
struct ClientInfo {
    #[serde(rename = "name")]
    _name: String,
    #[serde(rename = "version")]
    _version: String,
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
