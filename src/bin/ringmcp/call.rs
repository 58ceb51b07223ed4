//! `ringmcp call`: call one tool and print its result.

use std::process::ExitCode;

use std::path::{Path, PathBuf};

use ringmcp::gateway;
use ringmcp::host::{Client, Config, Host};
use ringmcp::protocol::{CallToolResult, Content};
use ringmcp::spill::store::Saved;
use serde_json::Value;

use crate::target::{Failure, ServerArgs, exit};

/// Call a tool and print the result (exit 1 if the tool reports isError).
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print the raw CallToolResult JSON instead of its text.
    #[arg(long)]
    json: bool,
    /// The tool's name; with `--config FILE` and no `--server`, the gateway's `SERVER__TOOL`.
    tool: String,
    /// The tool's arguments as a JSON object (default `{}`).
    #[arg(value_name = "ARGS_JSON")]
    args: Option<String>,
    /// Write spilled payloads (results too large to hold, streamed to disk as they arrived)
    /// into this folder.
    #[arg(long, value_name = "DIR")]
    save: Option<PathBuf>,
    #[command(flatten)]
    server: ServerArgs,
    #[command(flatten)]
    policy: crate::policy::PolicyArgs,
}

pub(crate) fn run(args: Args) -> ExitCode {
    match call(&args) {
        Ok(result) => {
            print_result(&result, args.json);
            ExitCode::from(if result.is_error { exit::TOOL_ERROR } else { exit::OK })
        }
        Err(f) => {
            if args.json
                && let Some(json) = &f.json
            {
                println!("{}", serde_json::to_string_pretty(json).expect("values serialise"));
            }
            f.report()
        }
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
    let host = args.server.host_with(Some(args.policy.settings(&args.server)?))?;
    let (client, tool) = match args.server.whole_config() {
        // `--config F SERVER__TOOL`: the gateway's names.
        Some(file) => namespaced(&host, &args.server, file, &args.tool)?,
        None => (host.spawn_blocking(args.server.spec()?)?, args.tool.clone()),
    };
    let result = client.blocking().call_tool(&tool, arguments)?;
    if let Some(dir) = &args.save {
        save_spilled(&client, &result, dir)?;
    }
    client.blocking().shutdown();
    Ok(result)
}

/// The server and tool behind a `ringmcp gateway` name (`fs__read_file`), found as the
/// gateway finds it: the config's servers whose prefix starts the name are started, and the
/// name looked up exactly in the table built from their tool lists (with their `"tools"`
/// filters).
fn namespaced(
    host: &Host,
    servers: &ServerArgs,
    file: &Path,
    upstream: &str,
) -> Result<(Client, String), Failure> {
    let config = Config::load(file).map_err(|e| Failure::usage(e.to_string()))?;
    let settings =
        gateway::settings_from(config.gateway()).map_err(|e| Failure::usage(e.to_string()))?;
    let sep = settings.separator.as_str();
    let names: Vec<String> = config.names().into_iter().filter(|n| !config.disabled(n)).collect();
    for name in names.iter().filter(|n| gateway::names::may_be_from(upstream, n, sep)) {
        let filter = gateway::filter_from(name, config.tools_filter(name))
            .map_err(|e| Failure::usage(e.to_string()))?;
        let client = host.spawn_blocking(servers.with_server(name).spec()?)?;
        let tools = client.blocking().tools()?;
        let lists = gateway::catalog::Lists {
            server: name,
            filter: &filter,
            tools: &tools,
            prompts: &[],
            resources: &[],
            templates: &[],
        };
        let naming = gateway::catalog::Naming { separator: sep.to_owned(), prefix: true };
        let catalog = gateway::Catalog::build(&naming, &[], &[Some(lists)]);
        if let Some(target) = catalog.tool(upstream) {
            let tool = target.name.clone();
            return Ok((client, tool));
        }
        client.blocking().shutdown();
    }
    Err(Failure::usage(format!(
        "no tool {upstream:?} among the servers of {} ({}): with --config and no --server, tools are named SERVER{sep}TOOL as `ringmcp gateway` names them; `ringmcp inspect --config {}` lists each server's tools",
        file.display(),
        names.join(", "),
        file.display()
    )))
}

/// Saves every spilled payload the result links to into `dir`, named after its URI: a hard
/// link to the spill file when `dir` is on its file system, a kernel-side copy otherwise. A
/// payload the server spilled (a `ringmcp gateway`'s `ringmcp-spill://` link) is read from it
/// in ranges, each range received into this host's spill store and copied on by the kernel.
fn save_spilled(client: &Client, result: &CallToolResult, dir: &Path) -> Result<(), Failure> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::usage(format!("creating {}: {e}", dir.display())))?;
    for block in &result.content {
        let Content::Other { raw, .. } = block else { continue };
        let Some(uri) = raw.get("uri").and_then(Value::as_str) else { continue };
        if !ringmcp::spill::store::is_spill_uri(uri) {
            continue;
        }
        let name: String = uri
            .rsplit('/')
            .next()
            .unwrap_or("payload")
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect();
        let dest = dir.join(format!("spilled-{name}"));
        let Some(file) = client.spilled(uri) else {
            let size = raw.get("size").and_then(Value::as_u64);
            let n = save_remote(client, uri, size, &dest)?;
            note!("saved {uri} ({n} bytes, read in ranges from the server) to {}", dest.display());
            continue;
        };
        let how = file.save_as(&dest).map_err(|e| Failure::usage(e.to_string()))?;
        let how = match how {
            Saved::Linked => "linked",
            _ => "copied",
        };
        note!("saved {uri} ({} bytes, {how}) to {}", file.len(), dest.display());
    }
    Ok(())
}

/// The most bytes one ranged read asks for (a gateway answers up to its `readChunkMax`, 4 MiB
/// by default). A 1 MiB range's answer (1.4 MB of base64) stays under the spill threshold and
/// is decoded as it is read; with [`RANGES_AHEAD`] of them asked, 1 GiB through a gateway
/// saved fastest in the least memory of the sizes measured (PERFORMANCE.md, "1 GiB through
/// the gateway, ranges as JSON text").
const RANGE_MAX: u64 = 1 << 20;

/// Range reads asked ahead when the payload's size is known: while ranges are decoded and
/// written here, the server reads and encodes the next ones.
const RANGES_AHEAD: usize = 4;

/// Reads a payload another store holds (the server's) in ranges into `dest`; returns its
/// length. Each range arrives as a resource read, spilled or small, and is handed over as a
/// [`SpillFile`](ringmcp::spill::store::SpillFile) whose bytes the kernel appends to `dest`.
///
/// The first range is read alone: a server may answer fewer bytes than asked per range, and
/// the rest are then asked in its size. A later range that comes back with another length
/// than asked (the server's limit changed) makes the ranges asked past it stale: they are let
/// go, and reading resumes where it stopped.
fn save_remote(client: &Client, uri: &str, size: Option<u64>, dest: &Path) -> Result<u64, Failure> {
    use futures::{FutureExt, StreamExt};
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let failed = |e: std::io::Error| Failure::usage(format!("writing {}: {e}", dest.display()));
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(dest)
        .map_err(failed)?;
    let ahead = if size.is_some() { RANGES_AHEAD } else { 1 };
    let (mut offset, mut next, mut length, mut window) = (0, 0, RANGE_MAX, 1);
    let mut parts = futures::stream::FuturesOrdered::new();
    loop {
        while parts.len() < window && size.is_none_or(|size| next < size) {
            let range = format!("{uri}?offset={next}&length={length}");
            let at = next;
            parts.push_back(client.fetch_resource(&range).map(move |part| (at, part)));
            next += length;
        }
        let Some((at, part)) = futures::executor::block_on(parts.next()) else { break };
        if at != offset {
            // Asked past a range that came back short: let go, whatever it holds.
            if let Ok(part) = part {
                drop(client.release_spilled(part.uri()));
            }
            continue;
        }
        let part = part?;
        let len = part.len();
        // File to file: std copies with copy_file_range, in the kernel.
        let copied = std::fs::File::open(part.path())
            .and_then(|mut from| std::io::copy(&mut from, &mut out));
        drop(client.release_spilled(part.uri()));
        if copied.map_err(failed)? != len {
            return Err(failed(std::io::ErrorKind::UnexpectedEof.into()));
        }
        if len == 0 {
            break;
        }
        offset += len;
        // Not the length asked, before the end: ask again from here, in the server's size.
        if len != length && size.is_none_or(|size| offset < size) {
            (length, next) = (length.min(len), offset);
        }
        window = ahead;
    }
    out.flush().map_err(failed)?;
    if let Some(size) = size.filter(|&size| size != offset) {
        let _ = std::fs::remove_file(dest);
        return Err(Failure {
            code: exit::TRANSPORT,
            message: format!("{uri}: the server sent {offset} of its {size} bytes"),
            json: None,
        });
    }
    Ok(offset)
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
