"""Measure the tool router on the labelled sets (PERFORMANCE.md, "Tool routing").

    .deps/embed/venv/bin/python bench/route/evaluate.py --ringmcp target/release/ringmcp \
        [--split dev|test|final|final2|all|multistep] [--model-queries FILE.jsonl] \
        [--no-minilm] [--model DIR] [--mpnet DIR] [--no-model] [--only RUNS]

Two modes, each request ranked by every ranker over bench/route/catalog.json:

- raw requests (default): the user's words, as a host routing every turn would rank them
  (`ringmcp route --queries ... --k 10`, and `--k 5` for the tokens and "served");
- the model in the loop (--model-queries): the queries a model sent to ringmcp__find_tools
  for each request, one a step, written from the request and the tool's definition alone,
  without seeing the catalog (bench/route/model-queries.jsonl; PERFORMANCE.md says how).
  Recall and MRR are the first query's, against the request's first step; "served" counts a
  request when the five tools each of its queries returned cover every step. The fused rankers
  rank as ringmcp__find_tools does (`ringmcp route --find`: Weights::search, keywords weigh
  more).

The rankers: bm25 = BM25 alone; static = the static MiniLM table alone; fused = the router with
it (the default); minilm, mpnet = the router's full all-MiniLM-L6-v2 / all-mpnet-base-v2 encoder
alone; fused-minilm, fused-mpnet = the router with it (when the folders are there: scripts/deps.sh
links MiniLM, RINGMCP_MPNET=1 scripts/deps.sh assembles MPNet); minilm-cosine, mpnet-cosine =
the numpy reference encoders (scripts/minilm.py, scripts/mpnet.py), plain cosine between the query
and "name: description", as the issue's baselines. Reports, per ranker:

- recall@k: the share of requests with a relevant tool among the first k (k = 1, 5, 10);
- MRR: the mean of 1 / rank of the first relevant tool (0 when none in the first 10);
- served: the share of requests with every step served by the five tools routed (for the
  single-step sets, raw, this is recall@5; the multistep split has several steps a request);
- tokens/query: o200k_base tokens of the five tools routed, against the whole catalog's.

Run it with the Python that has numpy (.deps/embed/venv); --no-minilm skips the references (any
Python 3 then does).

The splits: dev (tuned on), test (held out, by a second writer), final (written later from the
catalog alone by a third writer who saw neither the router nor the other splits, and run once
when the work was done; PERFORMANCE.md says when), final2 (a fourth split by a fourth writer,
written 2026-12-03 from the catalog alone, run once at the end of that day's work), multistep
(30 requests of several steps, bench/route/multistep.jsonl, dev and test mixed). Tune on dev
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
    """The split's requests, each with "steps" (a list of label lists: one for the single-step
    sets, one a step for multistep.jsonl) and "relevant" (every step's labels)."""
    if split == "multistep":
        with open(os.path.join(HERE, "multistep.jsonl")) as fh:
            out = [json.loads(line) for line in fh if line.strip()]
        for q in out:
            q["relevant"] = [name for step in q["steps"] for name in step]
        return out
    files = ["dev", "test"] if split == "all" else [split]
    out = []
    for f in files:
        with open(os.path.join(HERE, f"queries-{f}.jsonl")) as fh:
            out += [json.loads(line) for line in fh if line.strip()]
    for q in out:
        q["steps"] = [q["relevant"]]
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


def served(lists, queries):
    """The share of requests with every step served: a relevant tool of each step among the
    tools routed for the request (lists: {id: [names]}, the union of what it was given)."""
    ok = sum(all(set(step) & set(lists.get(q["id"], [])) for step in q["steps"]) for q in queries)
    return ok / len(queries)


def load_model_queries(path, queries):
    """{"id", "queries": [...]} per line: what a model sent to ringmcp__find_tools for each
    request, one query a step (bench/route/model-queries.jsonl)."""
    with open(path) as fh:
        sent = {r["id"]: r["queries"] for r in map(json.loads, filter(str.strip, fh))}
    missing = [q["id"] for q in queries if not sent.get(q["id"])]
    if missing:
        sys.exit(f"{path}: no queries for {missing[:5]} ({len(missing)} requests)")
    return sent


def model_loop(binary, catalog, queries, sent, ranker, embeddings, weights):
    """The model in the loop: each query routed as ringmcp__find_tools answers it (k=5, and
    k=10 for recall@10). First-query metrics against the request's first step; served when the
    five tools of its queries, together, cover every step."""
    flat = [{"id": f"{q['id']}#{i}", "query": text}
            for q in queries for i, text in enumerate(sent[q["id"]])]
    ten, elapsed = run_router(binary, catalog, flat, ranker, 10, embeddings, weights, find=True)
    five, _ = run_router(binary, catalog, flat, ranker, 5, embeddings, weights, find=True)
    first = {q["id"]: ten[f"{q['id']}#0"]["tools"] for q in queries}
    firsts = [dict(q, relevant=q["steps"][0]) for q in queries]
    union = {q["id"]: [t for i in range(len(sent[q["id"]])) for t in five[f"{q['id']}#{i}"]["tools"]]
             for q in queries}
    m = metrics(first, firsts)
    m["served"] = served(union, queries)
    m["queries/request"] = len(flat) / len(queries)
    m["tokens/query"] = sum(l["tokens"] for l in five.values()) / len(flat)
    m["seconds"] = elapsed
    return m


def run_router(binary, catalog, queries, ranker, k, embeddings=None, weights=None, find=False):
    """Each query routed by `ringmcp route`; `find`: a fused ranking as ringmcp__find_tools
    ranks a model's query (`--find`)."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for q in queries:
            f.write(json.dumps({"id": q["id"], "query": q["query"]}) + "\n")
        path = f.name
    try:
        t = time.time()
        out = subprocess.run(
            [binary, "route", "--catalog", catalog, "--queries", path, "--k", str(k)]
            + (["--find"] if find and ranker == "fused" else ["--ranker", ranker])
            + (["--embeddings", embeddings] if embeddings else [])
            + (["--weights", weights] if weights else []),
            check=True, capture_output=True, text=True,
        ).stdout
        elapsed = time.time() - t
    finally:
        os.unlink(path)
    lines = [json.loads(line) for line in out.splitlines()]
    return {l["id"]: l for l in lines}, elapsed


def reference_rank(catalog_entries, queries, which, model_dir=None):
    """Plain cosine between the query and "name: description" with the numpy reference
    encoder (scripts/minilm.py or scripts/mpnet.py). The tool vectors are kept under
    .deps/bench-cache, keyed by the catalog and the model (MPNet takes minutes on two cores)."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import numpy as np

    if which == "mpnet":
        import mpnet

        model = mpnet.MpNet(model_dir)
    else:
        import minilm

        model = minilm.MiniLM(model_dir)
    names = [upstream_name(e["server"], e["tool"]["name"]) for e in catalog_entries]
    docs = [f"{e['tool']['name']}: {e['tool'].get('description') or ''}" for e in catalog_entries]
    key = hashlib.sha256(json.dumps([which, docs]).encode()).hexdigest()[:16]
    cache = os.path.join(ROOT, ".deps", "bench-cache", f"{which}-{key}.npy")
    if os.path.exists(cache):
        d = np.load(cache)
    else:
        d = model.embed(docs)
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        np.save(cache, d)
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
    ap.add_argument("--split", default="dev",
                    choices=["dev", "test", "final", "final2", "all", "multistep"])
    ap.add_argument("--no-minilm", action="store_true",
                    help="skip the numpy references (plain cosine of the full models)")
    ap.add_argument("--model", help="the MiniLM folder for the router's full encoder "
                    "(default .deps/embed/all-MiniLM-L6-v2)")
    ap.add_argument("--mpnet", help="the MPNet folder (default .deps/embed/all-mpnet-base-v2, "
                    "when RINGMCP_MPNET=1 scripts/deps.sh assembled it)")
    ap.add_argument("--no-model", action="store_true",
                    help="skip the router's runs with the full encoders")
    ap.add_argument("--model-queries", metavar="FILE.jsonl",
                    help="measure the model in the loop: route the queries a model sent to "
                    "ringmcp__find_tools for each request (bench/route/model-queries.jsonl) "
                    "instead of the raw requests")
    ap.add_argument("--json", action="store_true", help="print the numbers as JSON")
    ap.add_argument("--weights", help="the router's fusion weights (ringmcp route --weights)")
    ap.add_argument("--only", help="these runs only (comma-separated: bm25,static,fused,minilm,"
                    "fused-minilm,mpnet,fused-mpnet)")
    args = ap.parse_args()

    with open(args.catalog) as f:
        entries = json.load(f)
    queries = load_queries(args.split)
    known = {upstream_name(e["server"], e["tool"]["name"]) for e in entries}
    for q in queries:
        fix = lambda names: [r if r in known else upstream_name(*r.split("__", 1)) for r in names]
        q["steps"] = [fix(step) for step in q["steps"]]
        q["relevant"] = fix(q["relevant"])
        missing = [r for r in q["relevant"] if r not in known]
        if missing:
            sys.exit(f"{q['id']}: labels not in the catalog: {missing}")
    sent = load_model_queries(args.model_queries, queries) if args.model_queries else None

    one = subprocess.run(
        [args.ringmcp, "route", "--no-embed", "--json", "--catalog", args.catalog, "x"],
        check=True, capture_output=True, text=True,
    )
    all_tokens = json.loads(one.stdout)["allTokens"]
    results = {}
    runs = [("bm25", "lexical", None), ("static", "semantic", None), ("fused", "fused", None)]
    minilm_dir = args.model or os.path.join(ROOT, ".deps/embed/all-MiniLM-L6-v2")
    mpnet_dir = args.mpnet or os.path.join(ROOT, ".deps/embed/all-mpnet-base-v2")
    for name, folder in [("minilm", minilm_dir), ("mpnet", mpnet_dir)]:
        if os.path.isdir(folder) and not args.no_model:
            runs += [(name, "semantic", folder), (f"fused-{name}", "fused", folder)]
    if args.only:
        runs = [r for r in runs if r[0] in args.only.split(",")]
    for name, ranker, embeddings in runs:
        if sent is not None:
            results[name] = model_loop(args.ringmcp, args.catalog, queries, sent, ranker,
                                       embeddings, args.weights)
            continue
        ranked, elapsed = run_router(args.ringmcp, args.catalog, queries, ranker, 10, embeddings,
                                     args.weights)
        m = metrics({i: l["tools"] for i, l in ranked.items()}, queries)
        five, _ = run_router(args.ringmcp, args.catalog, queries, ranker, 5, embeddings,
                             args.weights)
        m["served"] = served({i: l["tools"] for i, l in five.items()}, queries)
        m["tokens/query"] = sum(l["tokens"] for l in five.values()) / len(queries)
        m["seconds"] = elapsed
        results[name] = m
    if not args.no_minilm:
        for which, folder in [("minilm", minilm_dir), ("mpnet", mpnet_dir)]:
            if which == "mpnet" and not os.path.isdir(folder):
                continue
            if sent is None:
                results[f"{which}-cosine"] = metrics(
                    reference_rank(entries, queries, which, folder), queries)
                continue
            flat = [{"id": f"{q['id']}#{i}", "query": t}
                    for q in queries for i, t in enumerate(sent[q["id"]])]
            ranked = reference_rank(entries, flat, which, folder)
            first = {q["id"]: ranked[f"{q['id']}#0"] for q in queries}
            m = metrics(first, [dict(q, relevant=q["steps"][0]) for q in queries])
            union = {q["id"]: [t for i in range(len(sent[q["id"]]))
                               for t in ranked[f"{q['id']}#{i}"][:5]] for q in queries}
            m["served"] = served(union, queries)
            results[f"{which}-cosine"] = m
    servers = len({e["server"] for e in entries})
    summary = {
        "split": args.split, "queries": len(queries), "tools": len(entries), "servers": servers,
        "allTokens": all_tokens, "mode": "model-queries" if sent else "raw", "results": results,
    }
    if args.json:
        print(json.dumps(summary, indent=1))
        return
    mode = f"model-written queries ({args.model_queries})" if sent else "raw requests"
    print(f"{args.split}: {len(queries)} requests, {mode}, over {len(entries)} tools from "
          f"{servers} servers; all definitions: {all_tokens} tokens (o200k_base)")
    print(f"{'ranker':<14} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6} {'served':>7} "
          f"{'tokens@5':>9} {'saved':>7}")
    for name, m in results.items():
        tok = m.get("tokens/query")
        tok_s = f"{tok:9.0f}" if tok is not None else f"{'-':>9}"
        saved = f"{100 * (1 - tok / all_tokens):6.1f}%" if tok is not None else f"{'-':>7}"
        print(f"{name:<14} {m['recall@1']:6.3f} {m['recall@5']:6.3f} {m['recall@10']:6.3f} "
              f"{m['mrr']:6.3f} {m['served']:7.3f} {tok_s} {saved}")


if __name__ == "__main__":
    main()
