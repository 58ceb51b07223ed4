//! `ringmcp inspect`: what a server is and offers.

use std::process::ExitCode;

use ringmcp::host::Client;
use ringmcp::protocol::{Prompt, Resource, Tool};
use ringmcp::route::CatalogEntry;
use serde_json::{Value, json};

use crate::target::{Failure, ServerArgs, exit};

/// Print serverInfo, negotiated version, capabilities, tools, resources and prompts.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Also write the tools to FILE as a router catalog: a JSON array of {"server": NAME,
    /// "tool": <Tool as tools/list returned it>}, every server's (`ringmcp route --catalog`).
    #[arg(long, value_name = "FILE")]
    catalog_out: Option<std::path::PathBuf>,
    #[command(flatten)]
    server: ServerArgs,
    #[command(flatten)]
    policy: crate::policy::PolicyArgs,
}

/// What the policy gate makes of each listed tool: its action and rule, what the
/// poisoning scan found, how the listing differs from the pins.
struct Review {
    actions: Vec<(String, String)>,
    findings: Vec<(String, Vec<ringmcp::policy::poison::Finding>)>,
    pins: Vec<String>,
}

fn review(
    spec: &ringmcp::host::ServerSpec,
    settings: &ringmcp::host::PolicySettings,
    client: &Client,
    tools: &[Tool],
) -> Review {
    use ringmcp::policy::{Policy, ToolFacts};
    let config = spec.policy.clone().unwrap_or_default();
    let policy = Policy::new(&spec.name, &config, &settings.global, &[], &*settings.resolver);
    let actions = tools
        .iter()
        .map(|t| {
            let facts = ToolFacts::of(t);
            let (action, rule) = policy.action_for(&t.name, Some(&facts));
            (action.to_string(), rule)
        })
        .collect();
    // The listing is judged as the gate judges it: each tool with its server's other tools.
    let findings = tools
        .iter()
        .zip(ringmcp::policy::poison::scan_listing(tools, &[]))
        .map(|(t, f)| (t.name.clone(), f))
        .filter(|(_, f)| !f.is_empty())
        .collect();
    let pins = settings
        .pins
        .as_ref()
        .and_then(|store| store.get(&spec.identity()))
        .map(|pinned| {
            let now = ringmcp::policy::pins::ServerPins::of(
                tools,
                client.server_info().instructions.as_deref(),
            );
            pinned.diff(&now).lines()
        })
        .unwrap_or_default();
    Review { actions, findings, pins }
}

struct Inventory {
    tools: Vec<Tool>,
    resources: Vec<Resource>,
    prompts: Vec<Prompt>,
}

/// Lists what the server declared; capabilities it did not declare are not asked for.
fn inventory(client: &Client) -> Result<Inventory, Failure> {
    let tools =
        if client.has_capability("tools") { client.blocking().list_tools()? } else { Vec::new() };
    let resources = if client.has_capability("resources") {
        client.blocking().list_resources()?
    } else {
        Vec::new()
    };
    let prompts = if client.has_capability("prompts") {
        client.blocking().list_prompts()?
    } else {
        Vec::new()
    };
    Ok(Inventory { tools, resources, prompts })
}

pub(crate) fn run(args: Args) -> ExitCode {
    match inspect(&args) {
        Ok(()) => ExitCode::from(exit::OK),
        Err(f) => f.report(),
    }
}

/// Everything `inspect --json` prints for one server.
fn inventory_json(client: &Client, inv: &Inventory, review: &Review) -> Value {
    let info = client.server_info();
    let policy: serde_json::Map<String, Value> = inv
        .tools
        .iter()
        .zip(&review.actions)
        .map(|(t, (action, rule))| (t.name.clone(), json!({"action": action, "rule": rule})))
        .collect();
    let findings: serde_json::Map<String, Value> =
        review.findings.iter().map(|(name, f)| (name.clone(), json!(f))).collect();
    json!({
        "serverInfo": info.server_info,
        "protocolVersion": client.protocol_version().as_str(),
        "capabilities": info.capabilities,
        "instructions": info.instructions,
        "tools": inv.tools,
        "resources": inv.resources,
        "prompts": inv.prompts,
        "policy": policy,
        "findings": findings,
        "pins": review.pins,
    })
}

/// `inspect --config FILE` without `--server`: every server of the file, one summary each
/// (a server that fails to start is reported and the others go on); `--json`: one object per
/// server by name, with everything `inspect --server` prints, or its error.
fn inspect_all(args: &Args, file: &std::path::Path) -> Result<(), Failure> {
    let config = ringmcp::host::Config::load(file).map_err(|e| Failure::usage(e.to_string()))?;
    let settings = args.policy.settings(&args.server)?;
    let host = args.server.host_with(Some(settings.clone()))?;
    let mut all = serde_json::Map::new();
    let mut catalog = Vec::new();
    let mut failed = Vec::new();
    for name in config.names() {
        let server = args.server.with_server(&name);
        let outcome = server.spec().and_then(|spec| {
            let client = host.spawn_blocking(spec.clone())?;
            let inv = inventory(&client)?;
            let review = review(&spec, &settings, &client, &inv.tools);
            let info = client.server_info();
            let mut summary = inventory_json(&client, &inv, &review);
            summary["network"] = Value::String(network_of(&spec));
            let line = format!(
                "{name}: {} {} ({}), {} tools, {} resources, {} prompts, network: {}{}{}",
                info.server_info.name,
                info.server_info.version,
                client.protocol_version(),
                inv.tools.len(),
                inv.resources.len(),
                inv.prompts.len(),
                network_of(&spec),
                if review.findings.is_empty() {
                    String::new()
                } else {
                    format!(", {} flagged as possibly poisoned", review.findings.len())
                },
                if review.pins.is_empty() { "" } else { ", tools changed since pinned" },
            );
            client.blocking().shutdown();
            Ok((summary, line, inv.tools))
        });
        match outcome {
            Ok((summary, line, tools)) => {
                if !args.json {
                    println!("{line}");
                }
                catalog.extend(
                    tools.into_iter().map(|tool| CatalogEntry { server: name.clone(), tool }),
                );
                all.insert(name, summary);
            }
            Err(f) => {
                if !args.json {
                    println!("{name}: failed: {}", f.message);
                }
                all.insert(name.clone(), json!({ "error": f.message }));
                failed.push(name);
            }
        }
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({ "servers": all }))
                .expect("JSON values serialise")
        );
    }
    write_catalog(args, &catalog)?;
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Failure {
            code: exit::TRANSPORT,
            message: format!(
                "{} of {} servers failed to start: {}",
                failed.len(),
                all.len(),
                failed.join(", ")
            ),
            json: None,
        })
    }
}

/// `--catalog-out FILE`: the catalog, written whole or not at all (a temporary file renamed).
fn write_catalog(args: &Args, catalog: &[CatalogEntry]) -> Result<(), Failure> {
    let Some(file) = &args.catalog_out else { return Ok(()) };
    let text = serde_json::to_string_pretty(catalog).expect("JSON values serialise");
    let tmp = file.with_extension("tmp");
    std::fs::write(&tmp, text + "\n")
        .and_then(|()| std::fs::rename(&tmp, file))
        .map_err(|e| Failure::usage(format!("cannot write {}: {e}", file.display())))?;
    if !args.json {
        note!("catalog: {} tools written to {}", catalog.len(), file.display());
    }
    Ok(())
}

/// The server's network, in words (`inspect` shows it for every server).
fn network_of(spec: &ringmcp::host::ServerSpec) -> String {
    crate::sandbox::sandboxing(spec).1
}

fn inspect(args: &Args) -> Result<(), Failure> {
    if let Some(file) = args.server.whole_config() {
        return inspect_all(args, file);
    }
    let spec = args.server.spec()?;
    let settings = args.policy.settings(&args.server)?;
    let host = args.server.host_with(Some(settings.clone()))?;
    let client = host.spawn_blocking(spec.clone())?;
    let inv = inventory(&client)?;
    let review = review(&spec, &settings, &client, &inv.tools);
    if args.json {
        let mut out = inventory_json(&client, &inv, &review);
        out["network"] = Value::String(network_of(&spec));
        println!("{}", serde_json::to_string_pretty(&out).expect("JSON values serialise"));
    } else {
        print_text(&client, &inv, &review);
        println!("\nnetwork:      {}", network_of(&spec));
    }
    client.blocking().shutdown();
    let catalog: Vec<CatalogEntry> = inv
        .tools
        .into_iter()
        .map(|tool| CatalogEntry { server: spec.name.clone(), tool })
        .collect();
    write_catalog(args, &catalog)
}

fn print_text(client: &Client, inv: &Inventory, review: &Review) {
    let info = client.server_info();
    let si = &info.server_info;
    let title = si.title.as_deref().map(|t| format!(" ({t})")).unwrap_or_default();
    println!("server:       {} {}{title}", si.name, si.version);
    println!("protocol:     {}", client.protocol_version());
    let caps: Vec<&str> = info
        .capabilities
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    println!("capabilities: {}", if caps.is_empty() { "(none)".into() } else { caps.join(", ") });
    if let Some(instructions) = &info.instructions {
        println!("instructions: {}", instructions.trim());
    }
    println!("\ntools ({}):", inv.tools.len());
    for (tool, (action, rule)) in inv.tools.iter().zip(&review.actions) {
        println!("  {}{}", tool.name, describe(tool.description.as_deref()));
        let args = arguments(&tool.input_schema);
        if !args.is_empty() {
            println!("      args: {args}");
        }
        println!("      policy: {action} ({rule})");
        for (name, findings) in &review.findings {
            if name == &tool.name {
                for f in findings {
                    println!("      warning: possible tool poisoning in {f}");
                }
            }
        }
    }
    if !review.pins.is_empty() {
        println!(
            "\npins: the tools differ from their pins (`ringmcp pins diff`, `ringmcp pins accept`):"
        );
        for line in &review.pins {
            println!("  {line}");
        }
    }
    println!("\nresources ({}):", inv.resources.len());
    for r in &inv.resources {
        let mime = r.mime_type.as_deref().map(|m| format!(" [{m}]")).unwrap_or_default();
        println!("  {}  {}{mime}{}", r.uri, r.name, describe(r.description.as_deref()));
    }
    println!("\nprompts ({}):", inv.prompts.len());
    for p in &inv.prompts {
        let args: Vec<String> = p
            .arguments
            .iter()
            .filter_map(|a| {
                let name = a.get("name")?.as_str()?;
                let required = a.get("required").and_then(Value::as_bool).unwrap_or(false);
                Some(format!("{name}{}", if required { "*" } else { "" }))
            })
            .collect();
        println!("  {}({}){}", p.name, args.join(", "), describe(p.description.as_deref()));
    }
}

fn describe(d: Option<&str>) -> String {
    match d.map(str::trim).filter(|d| !d.is_empty()) {
        Some(d) => format!(" — {}", d.lines().next().unwrap_or(d)),
        None => String::new(),
    }
}

/// `name: type` for each property of an object schema, `*` marking required ones.
fn arguments(schema: &Value) -> String {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return String::new();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    props
        .iter()
        .map(|(name, p)| {
            let ty = p.get("type").map_or_else(
                || "any".to_owned(),
                |t| t.as_str().map_or_else(|| t.to_string(), str::to_owned),
            );
            let star = if required.contains(&name.as_str()) { "*" } else { "" };
            format!("{name}{star}: {ty}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}
