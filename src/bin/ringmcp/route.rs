//! `ringmcp route`: which tools of a catalog fit a request, and what they cost in tokens.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use ringmcp::host::embedding::{load_embedder, open_embedder};
use ringmcp::host::router::named;
use ringmcp::protocol::Tool;
use ringmcp::route::{CatalogEntry, Embedder, Ranker, Router, Routing, Weights, tokens};
use serde_json::{Value, json};

use crate::target::{Failure, ServerArgs, exit};

/// Rank the tools of every server of a config (or of a catalog file) for a request.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The request, in the user's words.
    #[arg(value_name = "QUERY", required_unless_present_any = ["queries", "stats"])]
    query: Option<String>,
    /// How many tools to return.
    #[arg(long, short = 'k', value_name = "K", default_value_t = 5)]
    k: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// A catalog file: a JSON array of {"server": NAME, "tool": <Tool as tools/list returns
    /// it>} (`ringmcp inspect --catalog-out` writes one).
    #[arg(long, value_name = "FILE", conflicts_with = "config")]
    catalog: Option<PathBuf>,
    /// Batch: one {"id", "query"} per line in; one {"id", "tools": [...], "tokens": N} per
    /// line out, in order.
    #[arg(long, value_name = "FILE.jsonl", conflicts_with = "query")]
    queries: Option<PathBuf>,
    /// Which ranking: fused (default), lexical (BM25 alone) or semantic (embeddings alone).
    #[arg(long, value_name = "RANKER", default_value = "fused")]
    ranker: Ranker,
    /// The embeddings: a static table file, or a sentence-transformers BERT or MPNet folder
    /// (config.json, model.safetensors, vocab.txt) for the full encoder, e.g.
    /// .deps/embed/all-MiniLM-L6-v2 or .deps/embed/all-mpnet-base-v2 (default:
    /// $RINGMCP_EMBED_TABLE, else the static table scripts/deps.sh builds in .deps/embed).
    #[arg(long, value_name = "FILE|DIR", conflicts_with = "no_embed")]
    embeddings: Option<PathBuf>,
    /// The fusion's weights, for experiments (`lexical=0.2,server=0.25,tool=0.5,
    /// diversity=0.03,values=0.5`; any of them, the rest at their defaults).
    #[arg(long, value_name = "NAME=W,…")]
    weights: Option<Weights>,
    /// Rank as `ringmcp__find_tools` ranks the query a model wrote (the action and the
    /// object; keywords weigh more: `Weights::search`) instead of a user's request.
    #[arg(long, conflicts_with = "ranker")]
    find: bool,
    /// Rank by keywords alone (no embedding table).
    #[arg(long)]
    no_embed: bool,
    /// Print how long loading, indexing and routing took and what the index holds (to stderr).
    #[arg(long)]
    stats: bool,
    #[command(flatten)]
    server: ServerArgs,
}

/// `query` ranked as asked: as a model's `find_tools` query, or by `--ranker`.
fn rank(router: &Router, args: &Args, query: &str) -> Routing {
    if args.find {
        router.find(query, args.k)
    } else {
        router.route_with(query, args.k, args.ranker)
    }
}

pub(crate) fn run(args: Args) -> ExitCode {
    match route(&args) {
        Ok(()) => ExitCode::from(exit::OK),
        Err(f) => f.report(),
    }
}

fn route(args: &Args) -> Result<(), Failure> {
    let t0 = Instant::now();
    let rss0 = rss_bytes();
    let embedder: Option<Arc<dyn Embedder>> = match (&args.embeddings, args.no_embed) {
        (_, true) => None,
        // Named: it loads, or the command fails saying why.
        (Some(path), false) => {
            Some(open_embedder(path).map_err(|e| Failure::usage(format!("--embeddings: {e}")))?)
        }
        (None, false) => load_embedder(None),
    };
    let loaded = t0.elapsed();
    let rss1 = rss_bytes();
    if args.ranker == Ranker::Semantic && embedder.is_none() {
        return Err(Failure::usage(
            "--ranker semantic needs the embedding table (scripts/deps.sh builds it)",
        ));
    }
    let mut router = Router::new().with_optional_embedder(embedder.clone());
    let t1 = Instant::now();
    let servers = if let Some(file) = &args.catalog {
        let by_server = read_catalog(file)?;
        for (server, tools) in &by_server {
            router.replace_server(server, named(server, tools));
        }
        by_server.len()
    } else if let Some(file) = args.server.whole_config() {
        let (live, n) = live_catalog(&args.server, file, embedder.clone())?;
        router = live;
        n
    } else {
        return Err(Failure::usage(
            "give --config FILE (every server of an mcpServers file) or --catalog FILE",
        ));
    };
    let indexed = t1.elapsed();
    if let Some(w) = args.weights {
        router = if args.find { router.with_search_weights(w) } else { router.with_weights(w) };
    }
    if args.stats {
        let rss2 = rss_bytes();
        note!(
            "router: {} tools from {servers} servers, {} tokens ({}) if all injected",
            router.len(),
            router.all_tokens(),
            tokens::VOCABULARY
        );
        note!(
            "router: embedder {} loaded in {:.1} ms (+{:.1} MiB RSS); indexed in {:.1} ms \
             (+{:.1} MiB RSS; contents {:.1} MiB)",
            router.embedder().unwrap_or("none"),
            loaded.as_secs_f64() * 1e3,
            mib(rss1.saturating_sub(rss0)),
            indexed.as_secs_f64() * 1e3,
            mib(rss2.saturating_sub(rss1)),
            mib(router.memory_bytes() as u64),
        );
    }
    if let Some(file) = &args.queries {
        return batch(args, &router, file);
    }
    let Some(query) = &args.query else { return Ok(()) };
    let routing = rank(&router, args, query);
    if args.json {
        let out = json!({
            "query": query,
            "ranker": args.ranker,
            "embedder": router.embedder(),
            "tools": routing.tools,
            "tokens": routing.tokens,
            "allTokens": routing.all_tokens,
            "catalog": routing.catalog,
            "vocabulary": tokens::VOCABULARY,
        });
        println!("{}", serde_json::to_string_pretty(&out).expect("JSON values serialise"));
    } else {
        print_text(&router, &routing);
    }
    Ok(())
}

fn print_text(router: &Router, routing: &Routing) {
    if routing.tools.is_empty() {
        println!("no tool matches (the catalog has {} tools)", routing.catalog);
    }
    for (i, t) in routing.tools.iter().enumerate() {
        let why = if t.matched.is_empty() { "meaning".to_owned() } else { t.matched.join(", ") };
        println!("{:>2}. {}  score {:.3}  ({why})  {} tokens", i + 1, t.name, t.score, t.tokens);
        if let Some(d) = router
            .tool(&t.name)
            .and_then(|(_, tool)| tool.get("description").and_then(Value::as_str))
            .and_then(|d| d.lines().map(str::trim).find(|l| !l.is_empty()))
        {
            let cut = d.char_indices().nth(100).map_or(d.len(), |(i, _)| i);
            println!("      {}{}", &d[..cut], if cut < d.len() { "…" } else { "" });
        }
    }
    let saved = if routing.all_tokens == 0 {
        0.0
    } else {
        100.0 * (1.0 - routing.tokens as f64 / routing.all_tokens as f64)
    };
    println!(
        "tokens: {} for these {} of {} tools, {} for all ({saved:.1} % saved; {})",
        routing.tokens,
        routing.tools.len(),
        routing.catalog,
        routing.all_tokens,
        tokens::VOCABULARY
    );
}

fn batch(args: &Args, router: &Router, file: &PathBuf) -> Result<(), Failure> {
    let input = std::fs::File::open(file)
        .map_err(|e| Failure::usage(format!("cannot read {}: {e}", file.display())))?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let (mut routed, mut spent) = (0usize, std::time::Duration::ZERO);
    for (n, line) in std::io::BufReader::new(input).lines().enumerate() {
        let line =
            line.map_err(|e| Failure::usage(format!("cannot read {}: {e}", file.display())))?;
        if line.trim().is_empty() {
            continue;
        }
        let bad = |why: &str| Failure::usage(format!("{}:{}: {why}", file.display(), n + 1));
        let v: Value = serde_json::from_str(&line).map_err(|e| bad(&format!("not JSON: {e}")))?;
        let query = v
            .get("query")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("each line needs a \"query\" string"))?;
        let t = Instant::now();
        let routing = rank(router, args, query);
        spent += t.elapsed();
        routed += 1;
        let names: Vec<&str> = routing.tools.iter().map(|t| t.name.as_str()).collect();
        let line = json!({ "id": v.get("id").cloned().unwrap_or(Value::Null), "tools": names, "tokens": routing.tokens });
        writeln!(out, "{line}").map_err(|e| Failure::usage(format!("cannot write: {e}")))?;
    }
    out.flush().map_err(|e| Failure::usage(format!("cannot write: {e}")))?;
    if args.stats && routed > 0 {
        note!(
            "router: {routed} queries routed in {:.1} ms ({:.3} ms per query, one at a time)",
            spent.as_secs_f64() * 1e3,
            spent.as_secs_f64() * 1e3 / routed as f64
        );
    }
    Ok(())
}

/// A catalog file's tools, grouped by server in file order.
pub(crate) fn read_catalog(file: &PathBuf) -> Result<Vec<(String, Vec<Tool>)>, Failure> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| Failure::usage(format!("cannot read {}: {e}", file.display())))?;
    let entries: Vec<CatalogEntry> = serde_json::from_str(&text).map_err(|e| {
        Failure::usage(format!(
            "{}: not a catalog ({e}); expected a JSON array of {{\"server\": NAME, \"tool\": TOOL}}",
            file.display()
        ))
    })?;
    Ok(CatalogEntry::by_server(entries))
}

/// Starts every server of `file` and indexes their tools through the library's
/// [`Host::router`](ringmcp::host::Host::router) (a server that fails to start is left out, with
/// a message, and the others go on); stops them once indexed.
fn live_catalog(
    server: &ServerArgs,
    file: &std::path::Path,
    embedder: Option<Arc<dyn Embedder>>,
) -> Result<(Router, usize), Failure> {
    let config = ringmcp::host::Config::load(file).map_err(|e| Failure::usage(e.to_string()))?;
    let host = server.host()?;
    let mut clients = Vec::new();
    for name in config.names() {
        match server.with_server(&name).spec().and_then(|spec| Ok(host.spawn_blocking(spec)?)) {
            Ok(client) => clients.push(client),
            Err(f) => note!("ringmcp: {name}: left out: {}", f.message),
        }
    }
    let live = host.router_with(embedder);
    let indexed = futures::executor::block_on(live.refresh());
    for client in &clients {
        client.blocking().shutdown();
    }
    indexed?;
    Ok((live.snapshot(), clients.len()))
}

fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}
