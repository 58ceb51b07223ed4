//! `ringmcp conformance-client URL`: the client under test of the official MCP conformance
//! suite (`@modelcontextprotocol/conformance`; run by `scripts/conformance.sh`).
//!
//! For each scenario the harness starts a scripted mock server, runs this command with the
//! server's URL appended and the scenario named in the environment, and then judges the
//! traffic it saw. So this only has to do what the scenario asks, and it does it through the
//! same [`Host`] / [`Client`](ringmcp::host::Client) API applications use
//! (`ServerSpec::http`); nothing here speaks the protocol itself.
//!
//! Environment (set by the harness):
//! * `MCP_CONFORMANCE_SCENARIO`: the scenario's name (`initialize`, `tools_call`, …);
//! * `MCP_CONFORMANCE_PROTOCOL_VERSION`: the revision under test: 2026-07-28 makes the host
//!   speak only the stateless revision ([`Era::Modern`]: `server/discover`, `_meta` on every
//!   request), anything else only the `initialize` handshake ([`Era::Legacy`]); a mock server
//!   speaks one era, and a probe of the other would be traffic the suite judges;
//! * `MCP_CONFORMANCE_CONTEXT`: JSON with scenario data: `toolCalls` (`[{name, arguments}]`,
//!   the calls a scenario wants made) is used; OAuth credentials are not (no OAuth).
//!
//! Exit status: 0 when the scenario's steps all succeeded, 3 when one failed (the harness also
//! counts a non-zero exit against the scenario).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use ringmcp::host::{Client, ClientHandler, Host, ServerSpec};
use ringmcp::jsonrpc::ErrorObject;
use ringmcp::protocol::{CallToolResult, ClientFeatures, Era};
use ringmcp::transport::oauth::{Authorizer, OAuthConfig};
use serde_json::{Map, Value, json};

use crate::target::{Failure, exit};

/// Run one scenario of the official MCP conformance suite against the server at URL.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The mock server's MCP endpoint (the harness appends it).
    url: String,
}

/// Every request's deadline: well inside the harness's 30 s per scenario.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

pub(crate) fn run(args: Args) -> ExitCode {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").unwrap_or_default();
    let context = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
        Ok(text) => serde_json::from_str::<Value>(&text).unwrap_or_else(|e| {
            note!("conformance: MCP_CONFORMANCE_CONTEXT is not JSON ({e}); ignored");
            Value::Null
        }),
        Err(_) => Value::Null,
    };
    note!("conformance: scenario {scenario:?}, protocol version {version:?}, {}", args.url);
    let era = if version.as_str() >= "2026-07-28" { Era::Modern } else { Era::Legacy };
    let run = Run { url: &args.url, era, context: &context, scenario: &scenario };
    match Scenario::from_name(&scenario).run(&run) {
        Ok(()) => ExitCode::from(exit::OK),
        Err(f) => f.report(),
    }
}

/// What the client does, by scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scenario {
    /// `initialize`: the handshake, then a clean shutdown.
    Initialize,
    /// `tools_call`: list the tools, call `add_numbers` with two numbers.
    ToolsCall,
    /// `json-schema-2020-12-preservation`: pass the focal tool's `inputSchema`, exactly as
    /// listed, back to the echo tool.
    SchemaEcho,
    /// `elicitation-sep1034-client-defaults`: call the tool whose elicitation the handler
    /// accepts with the schema's defaults.
    ElicitationDefaults,
    /// `sse-retry`: call the tool whose SSE stream the server closes early; the transport
    /// waits `retry` ms and resumes with GET + `Last-Event-ID`.
    SseRetry,
    /// `request-metadata`: a few requests, each with the `_meta` and headers checked (and the
    /// first one refused with -32022, which the session retries); every client capability
    /// declared, so that each declaration is checked.
    RequestMetadata,
    /// Anything else (the 2026-07-28 MRTR and header scenarios, OAuth): use everything the
    /// server lists: call every tool (with the context's arguments, or minimal ones from its
    /// schema), read every resource, get every prompt.
    Generic,
}

/// What one run is about.
struct Run<'a> {
    url: &'a str,
    era: Era,
    /// `MCP_CONFORMANCE_CONTEXT`.
    context: &'a Value,
    /// `MCP_CONFORMANCE_SCENARIO`.
    scenario: &'a str,
}

/// The client's metadata document URL for authorization servers that take one as client id
/// (client ID metadata documents); the suite's mocks accept any HTTPS URL.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

impl Run<'_> {
    /// OAuth for the `auth/*` scenarios: the mock authorization servers approve without a
    /// user, so the authorization step is headless; the context may hold a pre-registered
    /// client.
    fn oauth(&self) -> Option<OAuthConfig> {
        if !self.scenario.starts_with("auth/") {
            return None;
        }
        let mut config =
            OAuthConfig::new(Authorizer::Headless).client_metadata_url(CLIENT_METADATA_URL);
        if let Some(id) = self.context.get("client_id").and_then(Value::as_str) {
            let secret = self.context.get("client_secret").and_then(Value::as_str);
            config = config.client(id, secret.map(str::to_owned));
        }
        Some(config)
    }
}

/// `json-schema-2020-12-preservation`'s echo tool, which takes `{schema}`.
const SCHEMA_ECHO_TOOL: &str = "json_schema_echo";

impl Scenario {
    fn from_name(name: &str) -> Scenario {
        match name {
            "initialize" => Scenario::Initialize,
            "tools_call" => Scenario::ToolsCall,
            "json-schema-2020-12-preservation" => Scenario::SchemaEcho,
            "elicitation-sep1034-client-defaults" => Scenario::ElicitationDefaults,
            "sse-retry" => Scenario::SseRetry,
            "request-metadata" => Scenario::RequestMetadata,
            _ => Scenario::Generic,
        }
    }

    fn run(self, run: &Run<'_>) -> Result<(), Failure> {
        let mut builder = Host::builder().request_timeout(REQUEST_TIMEOUT).era(run.era);
        match self {
            Scenario::ElicitationDefaults => builder = builder.handler(Arc::new(AcceptDefaults)),
            // 2026-07-28 servers ask for input inside results (MRTR): answer elicitations.
            Scenario::Generic if run.era == Era::Modern => {
                builder = builder.handler(Arc::new(AcceptDefaults));
            }
            Scenario::RequestMetadata => {
                builder = builder.handler(Arc::new(AcceptDefaults)).roots(Vec::new());
            }
            _ => {}
        }
        let host = builder.build()?;
        let mut spec = ServerSpec::http("conformance", run.url);
        if let Some(oauth) = run.oauth() {
            spec = spec.oauth(oauth);
        }
        let client = host.spawn_blocking(spec)?;
        note!(
            "conformance: connected to {} (MCP {})",
            client.server_info().server_info.name,
            client.protocol_version()
        );
        let outcome = self.steps(&client, run.context);
        // Shut down whatever happened (DELETE of the HTTP session); the steps' outcome wins.
        client.blocking().shutdown();
        outcome
    }

    /// The scenario's requests, after the handshake.
    fn steps(self, client: &Client, context: &Value) -> Result<(), Failure> {
        match self {
            Scenario::Initialize => Ok(()),
            Scenario::RequestMetadata => {
                client.blocking().list_tools()?;
                client.blocking().ping()?;
                Ok(())
            }
            Scenario::Generic => exercise(client, context),
            Scenario::ToolsCall => {
                require_tool(client, "add_numbers")?;
                print(&client.blocking().call_tool("add_numbers", json!({"a": 5, "b": 3}))?)
            }
            Scenario::SchemaEcho => {
                let tools = client.blocking().list_tools()?;
                require_named(&tools, SCHEMA_ECHO_TOOL)?;
                let focal = tools.iter().find(|t| t.name != SCHEMA_ECHO_TOOL).ok_or_else(|| {
                    failure("the server listed no tool besides the echo tool".into())
                })?;
                let echo = json!({"schema": focal.input_schema});
                print(&client.blocking().call_tool(SCHEMA_ECHO_TOOL, echo)?)
            }
            Scenario::ElicitationDefaults => {
                let tool = "test_client_elicitation_defaults";
                require_tool(client, tool)?;
                print(&client.blocking().call_tool(tool, json!({}))?)
            }
            Scenario::SseRetry => {
                require_tool(client, "test_reconnection")?;
                print(&client.blocking().call_tool("test_reconnection", json!({}))?)
            }
        }
    }
}

/// Uses everything the server offers once: every tool (arguments from the context's
/// `toolCalls` when it names the tool, else minimal ones built from the schema), every
/// resource, every prompt. The first failure is reported after everything was tried.
fn exercise(client: &Client, context: &Value) -> Result<(), Failure> {
    let mut first: Option<Failure> = None;
    let mut note = |outcome: Result<(), Failure>| {
        if let Err(f) = outcome {
            note!("conformance: {}", f.message);
            first.get_or_insert(f);
        }
    };
    let calls = context.get("toolCalls").and_then(Value::as_array);
    let tools = client.blocking().list_tools()?;
    match calls {
        // The scenario says which calls it wants.
        Some(calls) => {
            for call in calls {
                let name = call["name"].as_str().unwrap_or_default();
                let arguments = call.get("arguments").cloned().unwrap_or_else(|| json!({}));
                note(
                    client
                        .blocking()
                        .call_tool(name, arguments)
                        .map(|r| println!("{}", r.text()))
                        .map_err(Failure::from),
                );
            }
        }
        None => {
            for tool in &tools {
                let arguments = minimal_arguments(&tool.input_schema);
                note(
                    client
                        .blocking()
                        .call_tool(&tool.name, arguments)
                        .map(|r| println!("{}", r.text()))
                        .map_err(Failure::from),
                );
            }
        }
    }
    if client.has_capability("resources") {
        for resource in client.blocking().list_resources()? {
            note(client.blocking().read_resource(&resource.uri).map(drop).map_err(Failure::from));
        }
    }
    if client.has_capability("prompts") {
        for prompt in client.blocking().list_prompts()? {
            let required = prompt.arguments.iter().filter(|a| a["required"] == true);
            let names = required.filter_map(|a| a["name"].as_str());
            let arguments = Value::Object(names.map(|n| (n.to_owned(), json!("x"))).collect());
            note(
                client
                    .blocking()
                    .get_prompt(&prompt.name, arguments)
                    .map(drop)
                    .map_err(Failure::from),
            );
        }
    }
    first.map_or(Ok(()), Err)
}

/// Arguments that satisfy a tool's input schema's `required` list with the simplest value of
/// each property's type.
fn minimal_arguments(schema: &Value) -> Value {
    let mut arguments = Map::new();
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let kind = schema["properties"][name]["type"].as_str().unwrap_or("string");
        let value = match kind {
            "integer" => json!(1),
            "number" => json!(1.5),
            "boolean" => json!(true),
            "object" => json!({}),
            "array" => json!([]),
            "null" => Value::Null,
            _ => json!("x"),
        };
        arguments.insert(name.to_owned(), value);
    }
    Value::Object(arguments)
}

fn failure(message: String) -> Failure {
    Failure { code: exit::TRANSPORT, message, json: None }
}

fn require_tool(client: &Client, name: &str) -> Result<(), Failure> {
    require_named(&client.blocking().list_tools()?, name)
}

fn require_named(tools: &[ringmcp::protocol::Tool], name: &str) -> Result<(), Failure> {
    if tools.iter().any(|t| t.name == name) {
        Ok(())
    } else {
        let listed: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        Err(failure(format!("the server does not list the tool {name:?} (it lists {listed:?})")))
    }
}

/// Prints a tool result's text; an `isError` result fails the scenario.
fn print(result: &CallToolResult) -> Result<(), Failure> {
    println!("{}", result.text());
    if result.is_error {
        return Err(Failure {
            code: exit::TOOL_ERROR,
            message: "the tool reported isError".into(),
            json: None,
        });
    }
    Ok(())
}

/// Accepts every form-mode elicitation as a user who changed nothing would: with the
/// requested schema's defaults. Declines when a required
/// field has no usable default (there is nobody to fill it in).
struct AcceptDefaults;

impl ClientHandler for AcceptDefaults {
    fn features(&self) -> ClientFeatures {
        ClientFeatures { elicitation_form: true, ..ClientFeatures::default() }
    }

    fn elicit(&self, _server: &str, params: Value) -> Result<Value, ErrorObject> {
        Ok(match defaults(&params["requestedSchema"]) {
            Some(content) => json!({"action": "accept", "content": content}),
            None => json!({"action": "decline"}),
        })
    }
}

/// The content of an accepted form with nothing changed: each property's `default` that fits
/// the property's primitive type and, for an enum, is one of its values (2025-11-25 allows
/// defaults on strings, numbers, integers, booleans, single- and multi-select enums).
/// `None` when a required property has no such default.
fn defaults(schema: &Value) -> Option<Map<String, Value>> {
    let mut content = Map::new();
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            if let Some(value) = property.get("default").filter(|d| fits(property, d)) {
                content.insert(name.clone(), value.clone());
            }
        }
    }
    let required = schema.get("required").and_then(Value::as_array);
    let mut required = required.into_iter().flatten().filter_map(Value::as_str);
    required.all(|name| content.contains_key(name)).then_some(content)
}

/// Whether `value` is a valid value of the primitive schema `property`.
fn fits(property: &Value, value: &Value) -> bool {
    let allowed = |v: &Value| {
        let options = property.get("enum").or_else(|| {
            // Titled single-select: `oneOf: [{const, title}]`.
            property.get("oneOf").filter(|o| o.is_array())
        });
        match options.and_then(Value::as_array) {
            None => true,
            Some(options) => {
                options.iter().any(|o| o == v || o.get("const").is_some_and(|c| c == v))
            }
        }
    };
    match property.get("type").and_then(Value::as_str) {
        Some("string") => value.is_string() && allowed(value),
        Some("integer") => value.is_i64() || value.is_u64(),
        Some("number") => value.is_number(),
        Some("boolean") => value.is_boolean(),
        // Multi-select: `items` holds the options (`enum`, or `anyOf: [{const, title}]`).
        Some("array") => value.as_array().is_some_and(|values| {
            let items = &property["items"];
            let options = items.get("enum").or_else(|| items.get("anyOf"));
            values.iter().all(|v| {
                v.is_string()
                    && options.and_then(Value::as_array).is_none_or(|options| {
                        options.iter().any(|o| o == v || o.get("const").is_some_and(|c| c == v))
                    })
            })
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema `elicitation-sep1034-client-defaults` sends.
    fn sep1034() -> Value {
        json!({"type": "object", "required": [], "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"],
                       "default": "active"},
            "verified": {"type": "boolean", "default": true}}})
    }

    #[test]
    fn every_primitive_default_is_applied() {
        let content = defaults(&sep1034()).unwrap();
        assert_eq!(
            Value::Object(content),
            json!({"name": "John Doe", "age": 30, "score": 95.5, "status": "active",
                   "verified": true})
        );
    }

    #[test]
    fn defaults_that_do_not_fit_are_dropped() {
        let schema = json!({"type": "object", "properties": {
            "status": {"type": "string", "enum": ["a", "b"], "default": "c"},
            "age": {"type": "integer", "default": 1.5},
            "flag": {"type": "boolean", "default": "yes"},
            "pick": {"type": "string", "oneOf": [{"const": "x", "title": "X"}], "default": "x"},
            "many": {"type": "array", "items": {"type": "string", "enum": ["p", "q"]},
                     "default": ["q"]},
            "bad_many": {"type": "array", "items": {"anyOf": [{"const": "p"}]},
                         "default": ["z"]},
            "none": {"type": "string"}}});
        let content = defaults(&schema).unwrap();
        assert_eq!(Value::Object(content), json!({"pick": "x", "many": ["q"]}));
    }

    #[test]
    fn a_required_field_without_a_default_declines() {
        let schema = json!({"type": "object", "required": ["email"],
                            "properties": {"email": {"type": "string"}}});
        assert_eq!(defaults(&schema), None);
        let answer = AcceptDefaults.elicit("s", json!({"requestedSchema": schema})).unwrap();
        assert_eq!(answer, json!({"action": "decline"}));
        let answer = AcceptDefaults.elicit("s", json!({"requestedSchema": sep1034()})).unwrap();
        assert_eq!(answer["action"], "accept");
        assert_eq!(answer["content"]["age"], 30);
    }

    #[test]
    fn scenario_names() {
        assert_eq!(Scenario::from_name("tools_call"), Scenario::ToolsCall);
        assert_eq!(Scenario::from_name("sse-retry"), Scenario::SseRetry);
        assert_eq!(Scenario::from_name("json-schema-2020-12-preservation"), Scenario::SchemaEcho);
        assert_eq!(Scenario::from_name("auth/metadata-default"), Scenario::Generic);
        assert_eq!(Scenario::from_name("request-metadata"), Scenario::RequestMetadata);
        assert_eq!(Scenario::from_name(""), Scenario::Generic);
    }
}
