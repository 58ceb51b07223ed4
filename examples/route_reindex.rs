//! The router's worst usual `list_changed`, for profilers: index the evaluation catalog
//! (`bench/route/catalog.json`, 600 tools) with the static table, then re-index its largest
//! server (gitlab, 101 tools) N times with every description edited (a server upgraded).
//!
//! ```sh
//! cargo build --release --example route_reindex
//! target/release/examples/route_reindex 100      # wall clock per update
//! # instructions per update, whatever the neighbours do: (count at N = 10 - count at N = 0) / 10
//! taskset -c 0 valgrind --tool=callgrind target/release/examples/route_reindex 10
//! ```
//!
//! The table is the one `scripts/deps.sh` builds (`$RINGMCP_EMBED_TABLE`, else
//! `.deps/embed/minilm-l6-static.bin` under `$RINGMCP_DEPS` or the source folder). The criterion
//! bench `update_one_server` (`cargo bench --bench route`) times the same kind of update of the
//! same server inside a larger router (1,000 tools: the catalog's servers repeated under other
//! names); this program has the 600 tools alone, so a profiler sees the update without
//! criterion's harness. Compare its numbers with each other, not with the bench's.

use std::sync::Arc;
use std::time::Instant;

use ringmcp::host::embedding::{embed_table_path, load_table};
use ringmcp::host::router::named;
use ringmcp::route::{CatalogEntry, Embedder, Router};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rounds: usize = match std::env::args().nth(1) {
        Some(n) => n.parse().map_err(|e| format!("N must be a count of updates ({e})"))?,
        None => 10,
    };
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/route/catalog.json");
    let entries: Vec<CatalogEntry> = serde_json::from_str(&std::fs::read_to_string(path)?)?;
    let servers = CatalogEntry::by_server(entries);
    let table = embed_table_path();
    let embedder: Arc<dyn Embedder> = Arc::new(load_table(&table).map_err(|e| {
        format!("{e} (run scripts/deps.sh, or name a table with RINGMCP_EMBED_TABLE)")
    })?);
    let mut router = Router::new().with_embedder(embedder);
    for (server, tools) in &servers {
        router.replace_server(server, named(server, tools));
    }
    let (server, tools) = servers.iter().max_by_key(|(_, t)| t.len()).ok_or("empty catalog")?;
    let docs = named(server, tools);
    // The revisions are made before the clock starts: only the updates are timed.
    let revisions: Vec<_> = (0..rounds)
        .map(|round| {
            let mut d = docs.clone();
            for (_, t) in d.iter_mut() {
                let desc = t["description"].as_str().unwrap_or_default().to_owned();
                t["description"] = format!("{desc} (revision {round})").into();
            }
            d
        })
        .collect();
    let start = Instant::now();
    for d in revisions {
        router.replace_server(server, d);
    }
    let took = start.elapsed();
    println!(
        "{rounds} re-indexings of {server} ({} tools, every description edited): {:.2} ms each",
        docs.len(),
        took.as_secs_f64() * 1e3 / rounds.max(1) as f64
    );
    Ok(())
}
