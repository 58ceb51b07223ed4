//! What the reference server offers: its tools, its one resource and its one prompt, as the
//! JSON that `tools/list`, `resources/list` and `prompts/list` return, plus cursor pagination.

use std::num::NonZeroUsize;

use ringmcp::jsonrpc::{ErrorObject, codes};
use serde_json::{Map, Value, json};

/// The URI of the only resource.
pub(crate) const README_URI: &str = "ringmcp://reference/readme";

/// Prefix of the resources the `export` tool links to: `EXPORT_PREFIX` + the size in bytes.
/// Their text is the blob pattern, generated when read, so an export costs no memory.
pub(crate) const EXPORT_PREFIX: &str = "ringmcp://reference/export/";

/// The text of the only resource.
pub(crate) const README_TEXT: &str = "ringmcp reference server\n\
\n\
A small, fast MCP server that ringmcp's tests and benchmarks run as a child process.\n\
Tools: echo, blob, slow, fail, add (and, with --fault-tools, exit, noise, hang, stderr,\n\
notify, ask_roots).\n";

/// The tools, resources and prompts, pre-rendered once, and how to page through them.
#[derive(Debug)]
pub(crate) struct Catalog {
    tools: Vec<Value>,
    resources: Vec<Value>,
    prompts: Vec<Value>,
    page_size: Option<NonZeroUsize>,
}

impl Catalog {
    /// The catalog; `fault_tools` adds the tools that misbehave on purpose, `modern` the
    /// 2026-07-28 `confirm` tool (it asks for input inside its result).
    pub(crate) fn new(page_size: Option<NonZeroUsize>, fault_tools: bool, modern: bool) -> Self {
        let mut tools = standard_tools();
        if fault_tools {
            tools.extend(fault_tool_defs());
        }
        if modern {
            tools.push(tool(
                "confirm",
                "2026-07-28 only: asks the client to confirm `action` (an elicitation inside an \
                 input_required result), then says what the user answered and whether the \
                 requestState came back intact.",
                json!({"action": {"type": "string", "description": "What to confirm."}}),
                &["action"],
            ));
        }
        Catalog { tools, resources: vec![readme()], prompts: vec![greet()], page_size }
    }

    /// One page of `tools/list`; `modern`: for a 2026-07-28 request (only those see
    /// `confirm`, which needs that revision's input rounds).
    pub(crate) fn tools(&self, cursor: Option<&str>, modern: bool) -> Result<Value, ErrorObject> {
        let confirm = self.tools.last().is_some_and(|t| t["name"] == "confirm");
        let tools =
            if confirm && !modern { &self.tools[..self.tools.len() - 1] } else { &self.tools };
        self.page("tools", tools, cursor)
    }

    /// One page of `resources/list`.
    pub(crate) fn resources(&self, cursor: Option<&str>) -> Result<Value, ErrorObject> {
        self.page("resources", &self.resources, cursor)
    }

    /// One page of `prompts/list`.
    pub(crate) fn prompts(&self, cursor: Option<&str>) -> Result<Value, ErrorObject> {
        self.page("prompts", &self.prompts, cursor)
    }

    /// `{key: items[start..end], nextCursor?}`. Cursors are `CURSOR_PREFIX` plus an offset: opaque
    /// to clients, and cheap to validate here.
    fn page(&self, key: &str, items: &[Value], cursor: Option<&str>) -> Result<Value, ErrorObject> {
        let start = match cursor {
            None => 0,
            Some(c) => c
                .strip_prefix(CURSOR_PREFIX)
                .and_then(|n| n.parse::<usize>().ok())
                .filter(|&n| n <= items.len())
                .ok_or_else(|| ErrorObject::new(codes::INVALID_PARAMS, "Invalid cursor"))?,
        };
        let end = match self.page_size {
            Some(size) => items.len().min(start.saturating_add(size.get())),
            None => items.len(),
        };
        let mut page = Map::new();
        page.insert(key.to_owned(), Value::Array(items[start..end].to_vec()));
        if end < items.len() {
            page.insert("nextCursor".to_owned(), Value::String(format!("{CURSOR_PREFIX}{end}")));
        }
        Ok(Value::Object(page))
    }
}

const CURSOR_PREFIX: &str = "ringmcp-page-";

fn tool(name: &str, description: &str, properties: Value, required: &[&str]) -> Value {
    json!({
        "name": name,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        },
    })
}

fn standard_tools() -> Vec<Value> {
    let mut add = tool(
        "add",
        "Adds two numbers. Returns the sum as text and as structuredContent {\"sum\": ...}.",
        json!({
            "a": {"type": "number", "description": "First addend."},
            "b": {"type": "number", "description": "Second addend."},
        }),
        &["a", "b"],
    );
    add["outputSchema"] = json!({
        "type": "object",
        "properties": {"sum": {"type": "number"}},
        "required": ["sum"],
    });
    vec![
        tool(
            "echo",
            "Returns its `text` argument unchanged, as one text content.",
            json!({"text": {"type": "string", "description": "The text to send back."}}),
            &["text"],
        ),
        tool(
            "blob",
            "Returns one text content of exactly `bytes` bytes: the ASCII pattern \
             \"abcdefghijklmnopqrstuvwxyz0123456789\" repeated, byte i being pattern[i % 36]. \
             With `as_link: true` it answers like `export`: a resource_link to that text.",
            json!({
                "bytes": {"type": "integer", "minimum": 0, "description": "Length of the text."},
                "as_link": {"type": "boolean", "default": false,
                    "description": "Answer with a resource_link to the text instead of the text."},
            }),
            &["bytes"],
        ),
        tool(
            "slow",
            "Sleeps `ms` milliseconds, then answers \"slept {ms} ms\". Other requests are served \
             meanwhile.",
            json!({"ms": {"type": "integer", "minimum": 0, "description": "How long to sleep."}}),
            &["ms"],
        ),
        tool("fail", "Always fails: returns a result with isError: true.", json!({}), &[]),
        tool(
            "export",
            "Returns a resource_link to a text resource of exactly `bytes` bytes (the blob \
             pattern), to be fetched with resources/read: large outputs by reference, as MCP \
             recommends.",
            json!({"bytes": {"type": "integer", "minimum": 0, "description": "Size of the resource."}}),
            &["bytes"],
        ),
        add,
    ]
}

fn fault_tool_defs() -> Vec<Value> {
    vec![
        tool(
            "stall_blob",
            "Test only: answers like blob, but pauses `ms` milliseconds halfway through writing \
             the answer's line.",
            json!({"bytes": {"type": "integer", "minimum": 0}, "ms": {"type": "integer", "minimum": 0}}),
            &["bytes", "ms"],
        ),
        tool(
            "cancelled",
            "Test only: the requestIds of every notifications/cancelled this server received, as \
             a JSON array (the server does not stop the cancelled work).",
            json!({}),
            &[],
        ),
        tool(
            "calls",
            "Test only: the names of the tools/call requests this server received, in order, as \
             a JSON array (its own trace of what reached it).",
            json!({}),
            &[],
        ),
        tool(
            "fds",
            "Test only: lists the file descriptors beyond 0-2 that were open when the server \
             started (none, unless its host leaked some).",
            json!({}),
            &[],
        ),
        tool(
            "freeze",
            "Test-only: stops the whole server for `ms` milliseconds (nothing is read or \
             answered meanwhile, pings included), then answers.",
            json!({"ms": {"type": "integer", "minimum": 0}}),
            &["ms"],
        ),
        tool(
            "children",
            "Test only: starts up to `times` child processes at once (sleep 2), reports how many \
             started, then kills them.",
            json!({"times": {"type": "integer", "minimum": 0, "description": "How many."}}),
            &["times"],
        ),
        tool(
            "touch",
            "Test only: sends notifications/resources/updated `times` times for every subscribed \
             resource, then answers.",
            json!({"times": {"type": "integer", "minimum": 0, "description": "How many rounds."}}),
            &["times"],
        ),
        tool(
            "exit",
            "Test only: the server process exits at once with `code`, without answering.",
            json!({"code": {"type": "integer", "description": "The exit status."}}),
            &["code"],
        ),
        tool(
            "noise",
            "Test only: writes the non-JSON line \"this is not json\" to stdout, then answers \
             \"noise\".",
            json!({}),
            &[],
        ),
        tool("hang", "Test only: never answers.", json!({}), &[]),
        tool(
            "stderr",
            "Test only: writes exactly `bytes` bytes (lines of 'e') to stderr, then answers.",
            json!({"bytes": {"type": "integer", "minimum": 0, "description": "How many bytes."}}),
            &["bytes"],
        ),
        tool(
            "notify",
            "Test only: sends notifications/tools/list_changed and a notifications/message \
             (level info, data \"hello\") before answering.",
            json!({}),
            &[],
        ),
        tool(
            "ask_roots",
            "Test only: sends a roots/list request to the client and answers with the JSON of \
             the client's result (or error, with isError: true).",
            json!({}),
            &[],
        ),
    ]
}

fn readme() -> Value {
    json!({
        "uri": README_URI,
        "name": "readme",
        "title": "About the reference server",
        "description": "A short text describing this server.",
        "mimeType": "text/plain",
        "size": README_TEXT.len(),
    })
}

fn greet() -> Value {
    json!({
        "name": "greet",
        "description": "Greets someone by name.",
        "arguments": [
            {"name": "name", "description": "Who to greet.", "required": true},
        ],
    })
}
