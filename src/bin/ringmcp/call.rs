//! `ringmcp call`: call one tool and print its result.

use std::process::ExitCode;

use ringmcp::protocol::{CallToolResult, Content};
use serde_json::Value;

use crate::target::{Failure, ServerArgs, exit};

/// Call a tool and print the result (exit 1 if the tool reports isError).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print the raw CallToolResult JSON instead of its text.
    #[arg(long)]
    json: bool,
    /// The tool's name.
    tool: String,
    /// The tool's arguments as a JSON object (default `{}`).
    #[arg(value_name = "ARGS_JSON")]
    args: Option<String>,
    #[command(flatten)]
    server: ServerArgs,
}

pub(crate) fn run(args: Args) -> ExitCode {
    match call(&args) {
        Ok(result) => {
            print_result(&result, args.json);
            ExitCode::from(if result.is_error { exit::TOOL_ERROR } else { exit::OK })
        }
        Err(f) => f.report(),
    }
}

fn call(args: &Args) -> Result<CallToolResult, Failure> {
    let arguments: Value = match &args.args {
        None => Value::Object(Default::default()),
        Some(text) => serde_json::from_str(text)
            .map_err(|e| Failure::usage(format!("ARGS_JSON is not JSON: {e}")))?,
    };
    if !arguments.is_object() {
        return Err(Failure::usage(format!("ARGS_JSON must be a JSON object, got {arguments}")));
    }
    let spec = args.server.spec()?;
    let host = args.server.host()?;
    let client = host.spawn_blocking(spec)?;
    let result = client.call_tool_blocking(&args.tool, arguments)?;
    client.shutdown_blocking();
    Ok(result)
}

fn print_result(result: &CallToolResult, json: bool) {
    if json {
        println!("{}", serde_json::to_string_pretty(result).expect("results serialise"));
        return;
    }
    for block in &result.content {
        match block {
            Content::Text { text, .. } => println!("{text}"),
            other => println!("{}", summarise(other)),
        }
    }
    if result.content.is_empty()
        && let Some(structured) = &result.structured_content
    {
        println!("{}", serde_json::to_string_pretty(structured).expect("values serialise"));
    }
}

/// One line for a non-text block: its type and what identifies it.
fn summarise(block: &Content) -> String {
    let Content::Other { kind, raw } = block else { return String::new() };
    let field = |k: &str| raw.get(k).and_then(Value::as_str);
    match kind.as_str() {
        "image" | "audio" => format!(
            "[{kind} {}, {} bytes base64]",
            field("mimeType").unwrap_or("?"),
            field("data").map_or(0, str::len)
        ),
        "resource_link" => format!(
            "[resource_link {}{}]",
            field("uri").unwrap_or("?"),
            raw.get("size").map(|s| format!(", {s} bytes")).unwrap_or_default()
        ),
        "resource" => {
            let uri = raw
                .get("resource")
                .and_then(|r| r.get("uri"))
                .and_then(Value::as_str)
                .unwrap_or("?");
            format!("[embedded resource {uri}]")
        }
        _ => format!("[{kind}] {}", Value::Object(raw.clone())),
    }
}
