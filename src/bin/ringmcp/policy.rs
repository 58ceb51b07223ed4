//! The policy gate on the command line: `--approve`, `--audit`, `--pins`, `--pin-mode`
//! for `call` and `inspect`, the terminal approver, and the `audit` and `pins` subcommands.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use ringmcp::host::audit::{AuditLog, head_path};
use ringmcp::host::pins::{PinMode, PinStore};
use ringmcp::host::{Approval, ApprovalRequest, ApproveMatching, Approver, Config, PolicySettings};
use ringmcp::policy::AuditConfig;
use ringmcp::policy::audit::verify_signed;
use ringmcp::policy::pins::ServerPins;
use serde_json::Value;

use crate::target::{Failure, ServerArgs, exit};

/// `--pin-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum PinModeArg {
    /// Trust a server's tools the first time they are listed.
    #[default]
    Tofu,
    /// Trust nothing until `ringmcp pins accept`.
    Strict,
}

/// The gateway's flags of `call` and `inspect`.
#[derive(Debug, clap::Args)]
pub(crate) struct PolicyArgs {
    /// Approve calls to this tool without asking (a name or glob; repeatable). Without a
    /// terminal, a call that needs approval is refused unless its tool is named here.
    #[arg(long = "approve", value_name = "TOOL")]
    approve: Vec<String>,
    /// Keep a tamper-evident audit trail in this file (JSON Lines; the config's "audit" key
    /// otherwise).
    #[arg(long, value_name = "FILE")]
    audit: Option<PathBuf>,
    /// The tool pins (default: beside the config, <config>.pins.json).
    #[arg(long, value_name = "FILE")]
    pins: Option<PathBuf>,
    /// tofu: pin a server's tools when first listed; strict: refuse them until `ringmcp pins
    /// accept`.
    #[arg(long, value_enum, default_value_t = PinModeArg::Tofu)]
    pin_mode: PinModeArg,
}

/// Asks on the terminal: allow once, always for this session, or deny.
struct Terminal {
    preapproved: ApproveMatching,
    globs: bool,
}

impl Approver for Terminal {
    fn approve(&self, request: &ApprovalRequest) -> Approval {
        if self.globs && self.preapproved.approve(request) == Approval::Once {
            return Approval::Once;
        }
        let mut err = std::io::stderr().lock();
        let args = serde_json::to_string_pretty(&request.arguments).unwrap_or_default();
        let _ = writeln!(
            err,
            "\nringmcp: server {:?} wants to run tool {:?} ({}):\n{args}\nAllow? [y]es once / [a]lways this session / [N]o: ",
            request.server, request.tool, request.rule
        );
        let _ = err.flush();
        let mut line = String::new();
        if std::io::stdin().lock().read_line(&mut line).is_err() {
            return Approval::Deny;
        }
        match line.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" => Approval::Once,
            "a" | "always" => Approval::Always,
            _ => Approval::Deny,
        }
    }

    fn name(&self) -> String {
        "terminal".into()
    }
}

/// The default pins file of a config: beside it, `<name>.pins.json`.
pub(crate) fn default_pins(config: &Path) -> PathBuf {
    let stem = config
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "mcp".into());
    config.with_file_name(format!("{stem}.pins.json"))
}

impl PolicyArgs {
    /// The gateway's settings for this invocation (the config's top-level policy and audit,
    /// overridden by the flags).
    /// The `--approve` globs.
    pub(crate) fn approve_globs(&self) -> Vec<String> {
        self.approve.clone()
    }

    pub(crate) fn settings(&self, server: &ServerArgs) -> Result<PolicySettings, Failure> {
        let config = server
            .config_file()
            .map(Config::load)
            .transpose()
            .map_err(|e| Failure::usage(e.to_string()))?;
        let mut settings = PolicySettings::default();
        if let Some(c) = &config {
            settings.global = c.policy().clone();
        }
        let audit = match (&self.audit, config.as_ref().and_then(Config::audit)) {
            (Some(path), base) => {
                Some(AuditConfig { path: path.clone(), ..base.cloned().unwrap_or_default() })
            }
            (None, Some(base)) => Some(base.clone()),
            (None, None) => None,
        };
        if let Some(audit) = audit {
            let log = AuditLog::open(audit).map_err(|e| Failure::usage(e.to_string()))?;
            settings.audit = Some(Arc::new(log));
        }
        let pins = self.pins.clone().or_else(|| server.config_file().map(default_pins));
        if let Some(path) = pins {
            let mode = match self.pin_mode {
                PinModeArg::Tofu => PinMode::TrustOnFirstUse,
                PinModeArg::Strict => PinMode::Strict,
            };
            let store = PinStore::open(&path, mode).map_err(|e| Failure::usage(e.to_string()))?;
            settings.pins = Some(Arc::new(store));
        }
        let preapproved = ApproveMatching::new(self.approve.clone());
        settings.approver =
            Some(if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
                Arc::new(Terminal { preapproved, globs: !self.approve.is_empty() })
            } else {
                Arc::new(preapproved)
            });
        Ok(settings)
    }
}

/// `ringmcp audit`.
#[derive(Debug, clap::Args)]
pub(crate) struct AuditArgs {
    #[command(subcommand)]
    command: AuditCommand,
}

#[derive(Debug, clap::Subcommand)]
enum AuditCommand {
    /// Check a trail: exit 0 when intact, 1 with the first bad line for an edit, insertion,
    /// deletion, reordering or truncation.
    Verify {
        /// The log file.
        file: PathBuf,
        /// The trail's Ed25519 public key (64 hex characters, or a file holding them, as
        /// `audit keygen` prints and writes them): every checkpoint and the head file must
        /// then be signed by it, and a missing or unsigned head fails.
        #[arg(long, value_name = "HEX|FILE")]
        key: Option<String>,
    },
    /// Make an Ed25519 signing key for a trail (`"audit": {"signingKey": FILE}`): writes the
    /// private key to FILE (owner-only; never overwritten) and its public key to FILE.pub,
    /// and prints the public key.
    Keygen {
        /// Where the private key goes: keep it outside the log's folder.
        file: PathBuf,
    },
    /// Print a trail readably.
    Show {
        /// The log file.
        file: PathBuf,
        /// Only this server's records.
        #[arg(long)]
        server: Option<String>,
        /// Only this tool's records.
        #[arg(long)]
        tool: Option<String>,
    },
}

pub(crate) fn audit(args: AuditArgs) -> ExitCode {
    match args.command {
        AuditCommand::Keygen { file } => match ringmcp::host::audit::generate_key(&file) {
            Ok(public) => {
                let mut pub_path = file.clone().into_os_string();
                pub_path.push(".pub");
                if let Err(e) = std::fs::write(&pub_path, format!("{public}\n")) {
                    return Failure::usage(format!("writing {}: {e}", pub_path.display())).report();
                }
                println!("{public}");
                ExitCode::from(exit::OK)
            }
            Err(e) => Failure::usage(e.to_string()).report(),
        },
        AuditCommand::Verify { file, key } => {
            if !file.exists() {
                return Failure::usage(format!("{}: no such file", file.display())).report();
            }
            let key = match key.as_deref().map(read_public_key).transpose() {
                Ok(k) => k,
                Err(e) => return Failure::usage(e).report(),
            };
            match verify_file(&file, key.as_deref(), 0) {
                Ok(v) => {
                    for w in &v.warnings {
                        note!("ringmcp: note: {w}");
                    }
                    println!(
                        "{}: intact{}, {} records, head {}",
                        file.display(),
                        if key.is_some() { " and signed" } else { "" },
                        v.records,
                        v.chain.head
                    );
                    ExitCode::from(exit::OK)
                }
                Err(t) => {
                    note!("ringmcp: {t}");
                    ExitCode::from(1)
                }
            }
        }
        AuditCommand::Show { file, server, tool } => {
            let text = match std::fs::read_to_string(&file) {
                Ok(t) => t,
                Err(e) => {
                    return Failure::usage(format!("reading {}: {e}", file.display())).report();
                }
            };
            for line in text.lines() {
                let Ok(r) = serde_json::from_str::<Value>(line) else { continue };
                let field = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
                if server.as_deref().is_some_and(|s| field("server") != s)
                    || tool.as_deref().is_some_and(|t| field("tool") != t)
                {
                    continue;
                }
                println!("{}", show(&r));
            }
            ExitCode::from(exit::OK)
        }
    }
}

/// The first characters of a digest, for showing.
fn short(digest: &str) -> String {
    digest.chars().take(12).collect()
}

/// Verifies `file`; when it continues a rotated trail whose earlier file (`from`) is beside
/// it, that file first, so the chain is checked across the rotation.
/// A public key given as hex, or as a file holding it.
fn read_public_key(given: &str) -> Result<Vec<u8>, String> {
    use ringmcp::policy::audit::public_key_from_hex;
    if let Ok(key) = public_key_from_hex(given) {
        return Ok(key);
    }
    let text = std::fs::read_to_string(given).map_err(|e| {
        format!("--key {given}: neither 64 hex characters nor a readable file ({e})")
    })?;
    public_key_from_hex(&text).map_err(|e| format!("--key {given}: {e}"))
}

fn verify_file(
    file: &Path,
    key: Option<&[u8]>,
    depth: usize,
) -> Result<ringmcp::policy::audit::Verified, String> {
    let log = std::fs::read(file).map_err(|e| format!("reading {}: {e}", file.display()))?;
    let first: Option<Value> =
        log.split(|&b| b == b'\n').next().and_then(|l| serde_json::from_slice(l).ok());
    let from = first
        .as_ref()
        .filter(|r| r.get("type").and_then(Value::as_str) == Some("continued"))
        .and_then(|r| r.get("from").and_then(Value::as_str))
        .map(|name| file.with_file_name(name));
    let previous = match from {
        Some(earlier) if depth < 1000 && earlier.exists() => {
            Some(verify_file(&earlier, key, depth + 1)?.chain)
        }
        _ => None,
    };
    let head = std::fs::read(head_path(file)).ok();
    verify_signed(&log, head.as_deref(), previous.as_ref(), key)
        .map_err(|t| format!("{}: {t}", file.display()))
}

/// One record as one line of text.
fn show(r: &Value) -> String {
    let field = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
    let seq = r.get("seq").and_then(Value::as_u64).unwrap_or(0);
    let head = format!("#{seq:<5} {}", field("time"));
    match field("type") {
        "decision" => {
            let approver = r
                .get("approver")
                .and_then(Value::as_str)
                .map(|a| format!(" by {a}"))
                .unwrap_or_default();
            let reason = r
                .get("reason")
                .and_then(Value::as_str)
                .map(|a| format!(": {a}"))
                .unwrap_or_default();
            format!(
                "{head}  {}/{}  {} ({}){approver}{reason}",
                field("server"),
                field("tool"),
                field("verdict"),
                field("rule")
            )
        }
        "call" => {
            let took = r.get("durationMs").and_then(Value::as_f64).unwrap_or(0.0);
            let outcome = match r.get("error").and_then(Value::as_str) {
                Some(e) => format!("failed: {e}"),
                None => format!(
                    "{} bytes, sha256 {}{}",
                    r.get("resultBytes").and_then(Value::as_u64).unwrap_or(0),
                    short(field("resultDigest")),
                    if r.get("isError").and_then(Value::as_bool) == Some(true) {
                        " (isError)"
                    } else {
                        ""
                    }
                ),
            };
            format!(
                "{head}  {}/{}  completed in {took:.1} ms, {outcome}",
                field("server"),
                field("tool")
            )
        }
        other => format!("{head}  [{other}]"),
    }
}

/// `ringmcp pins`.
#[derive(Debug, clap::Args)]
pub(crate) struct PinsArgs {
    #[command(subcommand)]
    command: PinsCommand,
}

#[derive(Debug, clap::Subcommand)]
enum PinsCommand {
    /// Print what is pinned for a server.
    Show(PinTarget),
    /// List the server's tools now and show how they differ from the pins.
    Diff(PinTarget),
    /// Pin the server's current tools and instructions (accepting any change).
    Accept(PinTarget),
}

#[derive(Debug, clap::Args)]
struct PinTarget {
    /// The pins file (default: beside the config).
    #[arg(long, value_name = "FILE")]
    pins: Option<PathBuf>,
    #[command(flatten)]
    server: ServerArgs,
}

pub(crate) fn pins(args: PinsArgs) -> ExitCode {
    let run = || -> Result<ExitCode, Failure> {
        let target = match &args.command {
            PinsCommand::Show(t) | PinsCommand::Diff(t) | PinsCommand::Accept(t) => t,
        };
        let path = target
            .pins
            .clone()
            .or_else(|| target.server.config_file().map(default_pins))
            .ok_or_else(|| {
                Failure::usage("give --pins FILE, or --config FILE to use the pins beside it")
            })?;
        let spec = target.server.spec()?;
        let key = spec.identity();
        let store =
            PinStore::open(&path, PinMode::Strict).map_err(|e| Failure::usage(e.to_string()))?;
        if let PinsCommand::Show(_) = args.command {
            match store.get(&key) {
                None => println!("nothing pinned for {:?} in {}", spec.name, path.display()),
                Some(p) => {
                    println!("{} ({}):", spec.name, path.display());
                    for (name, tool) in &p.tools {
                        println!("  {name}  sha256 {}", short(&tool.digest));
                    }
                    if let Some(i) = &p.instructions {
                        println!("  instructions  sha256 {}", short(i));
                    }
                }
            }
            return Ok(ExitCode::from(exit::OK));
        }
        let host = target.server.host()?;
        let client = host.spawn_blocking(spec)?;
        let tools = client.blocking().list_tools()?;
        let current = ServerPins::of(&tools, client.server_info().instructions.as_deref());
        client.blocking().shutdown();
        let diff = store.get(&key).unwrap_or_default().diff(&current);
        // What is about to be trusted, judged as the gate judges it.
        let findings = ringmcp::policy::poison::scan_listing(&tools, &[]);
        let flagged: Vec<String> = tools
            .iter()
            .zip(&findings)
            .flat_map(|(t, f)| f.iter().map(move |f| format!("  {}: {f}", t.name)))
            .collect();
        if !flagged.is_empty() {
            note!("the poisoning scan flags {} finding(s) in this listing:", flagged.len());
            for line in &flagged {
                note!("{line}");
            }
        }
        match args.command {
            PinsCommand::Diff(_) => {
                if diff.is_empty() {
                    println!("no change since the pins");
                } else {
                    for line in diff.lines() {
                        println!("{line}");
                    }
                }
                Ok(ExitCode::from(if diff.is_empty() { exit::OK } else { 1 }))
            }
            _ => {
                store.accept(&key, current).map_err(|e| Failure::usage(e.to_string()))?;
                println!(
                    "pinned {} tools of {:?} in {}",
                    tools.len(),
                    client.name(),
                    path.display()
                );
                Ok(ExitCode::from(exit::OK))
            }
        }
    };
    run().unwrap_or_else(Failure::report)
}

/// `ringmcp scan`: look for tool poisoning in tool definitions.
#[derive(Debug, clap::Args)]
pub(crate) struct ScanArgs {
    /// A JSON file of tool definitions: a `tools/list` result, an array of tools, or JSON Lines
    /// (each line a tool, or an object with a `tool` member).
    file: PathBuf,
    /// One JSON object per tool (its index, name and findings) instead of text.
    #[arg(long)]
    json: bool,
    /// Judge each definition alone (by default the file is one listing: each tool may be
    /// named by the others' advice).
    #[arg(long)]
    each: bool,
    /// The file holds tool results or resource contents, not definitions (JSON Lines: a
    /// `tools/call` or `resources/read` result, `{"text": ...}`, or a JSON string a line; or
    /// one such JSON document): look for instructions aimed at the model and credentials, as
    /// the gateway does.
    #[arg(long)]
    results: bool,
    /// Print every sentence with the features the judge weighs (for fitting its weights,
    /// scripts/poison-train.py).
    #[arg(long, hide = true)]
    features: bool,
    /// With `--features`: each sentence's vector from this embedding table or model folder too.
    #[arg(long, hide = true, requires = "features")]
    embeddings: Option<PathBuf>,
}

/// `scan --results`: each result judged as the gate judges what a server returns.
fn scan_results(args: &ScanArgs, text: &str) -> ExitCode {
    let items: Vec<Value> = match serde_json::from_str::<Value>(text) {
        Ok(v) => vec![v],
        Err(_) => match text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(serde_json::from_str::<Value>)
            .collect::<Result<Vec<_>, _>>()
        {
            Ok(v) => v,
            Err(e) => {
                return Failure::usage(format!("{}: not JSON Lines: {e}", args.file.display()))
                    .report();
            }
        },
    };
    let mut flagged = 0;
    for (i, item) in items.iter().enumerate() {
        let result = match item {
            Value::String(t) => serde_json::json!({"content": [{"type": "text", "text": t}]}),
            v if v.get("content").is_some() || v.get("contents").is_some() => v.clone(),
            v => match v.get("text").and_then(Value::as_str) {
                Some(t) => serde_json::json!({"content": [{"type": "text", "text": t}]}),
                None => v.clone(),
            },
        };
        let found = ringmcp::policy::results::scan(&result, true, &|_| false);
        if found.injected() || found.has_secrets() {
            flagged += 1;
        }
        let secrets: Vec<Value> = found
            .secrets
            .iter()
            .map(|s| serde_json::json!({"location": s.pointer, "kind": s.kind}))
            .collect();
        if args.json {
            println!(
                "{}",
                serde_json::json!({"index": i, "injections": found.injections, "secrets": secrets})
            );
        } else {
            for f in &found.injections {
                println!("#{i}: {f}");
            }
            for s in &found.secrets {
                println!("#{i}: {}: a credential ({})", s.pointer, s.kind);
            }
        }
    }
    if !args.json {
        println!("{flagged} of {} results flagged", items.len());
    }
    ExitCode::from(if flagged > 0 { 1 } else { exit::OK })
}

/// `scan --features`: every sentence of every tool with the features the judge weighs, and
/// with `--embeddings` its vector.
fn print_features(
    args: &ScanArgs,
    parsed: &[Option<ringmcp::protocol::Tool>],
    names: &[&str],
) -> ExitCode {
    let siblings: &[&str] = if args.each { &[] } else { names };
    let per: Vec<Vec<(String, String, Vec<String>)>> = parsed
        .iter()
        .map(|t| {
            t.iter()
                .flat_map(|t| ringmcp::policy::poison::tool_features(t, siblings, &[]))
                .collect()
        })
        .collect();
    let vectors = match &args.embeddings {
        Some(path) => match ringmcp::host::embedding::open_embedder(path) {
            Ok(e) => {
                let texts: Vec<String> = per.iter().flatten().map(|(_, s, _)| s.clone()).collect();
                e.embed_batch(&texts)
            }
            Err(e) => return Failure::usage(format!("{}: {e}", path.display())).report(),
        },
        None => Vec::new(),
    };
    let mut vectors = vectors.into_iter();
    for (i, sentences) in per.into_iter().enumerate() {
        let sentences: Vec<Value> = sentences
            .into_iter()
            .map(|(at, s, f)| {
                let mut row = serde_json::json!({"location": at, "sentence": s, "features": f});
                if let Some(v) = vectors.next() {
                    row["vector"] = v.iter().map(|x| (x * 1e4).round() / 1e4).collect();
                }
                row
            })
            .collect();
        println!("{}", serde_json::json!({"index": i, "sentences": sentences}));
    }
    ExitCode::from(exit::OK)
}

/// The tools in a file, as `scan` reads them.
fn tools_in(text: &str) -> Result<Vec<Value>, String> {
    let pick = |v: Value| match v.get("tool") {
        Some(t) if t.is_object() => t.clone(),
        _ => v,
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(items)) => Ok(items.into_iter().map(pick).collect()),
        Ok(v) if v.get("tools").is_some_and(Value::is_array) => {
            Ok(v["tools"].as_array().cloned().unwrap_or_default())
        }
        Ok(v) => Ok(vec![pick(v)]),
        Err(_) => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                serde_json::from_str::<Value>(l).map(pick).map_err(|e| format!("not JSON: {e}"))
            })
            .collect(),
    }
}

pub(crate) fn scan(args: ScanArgs) -> ExitCode {
    let text = match std::fs::read_to_string(&args.file) {
        Ok(t) => t,
        Err(e) => return Failure::usage(format!("reading {}: {e}", args.file.display())).report(),
    };
    if args.results {
        return scan_results(&args, &text);
    }
    let tools = match tools_in(&text) {
        Ok(t) => t,
        Err(e) => return Failure::usage(format!("{}: {e}", args.file.display())).report(),
    };
    let parsed: Vec<Option<ringmcp::protocol::Tool>> = tools
        .iter()
        .map(|raw| {
            let mut raw = raw.clone();
            if raw.get("inputSchema").is_none() && raw.is_object() {
                raw["inputSchema"] = serde_json::json!({"type": "object"});
            }
            serde_json::from_value(raw).ok()
        })
        .collect();
    let listing: Vec<ringmcp::protocol::Tool> = parsed.iter().flatten().cloned().collect();
    let names: Vec<&str> = listing.iter().map(|t| t.name.as_str()).collect();
    if args.features {
        return print_features(&args, &parsed, &names);
    }
    let mut flagged = 0;
    for (i, (raw, tool)) in tools.iter().zip(&parsed).enumerate() {
        let findings = match tool {
            Some(tool) if args.each => ringmcp::policy::poison::scan_tool(tool),
            Some(tool) => ringmcp::policy::poison::scan_tool_among(tool, &names, &[]),
            None => Vec::new(),
        };
        let name = raw.get("name").and_then(Value::as_str).unwrap_or("?");
        if !findings.is_empty() {
            flagged += 1;
        }
        if args.json {
            println!("{}", serde_json::json!({"index": i, "name": name, "findings": findings}));
        } else {
            for f in &findings {
                println!("{name}: {f}");
            }
        }
    }
    if !args.json {
        println!("{flagged} of {} tools flagged", tools.len());
    }
    ExitCode::from(if flagged > 0 { 1 } else { exit::OK })
}
