#!/usr/bin/env python3
"""Multi-step raw requests (bench/route/multistep.jsonl: {"id", "split", "query", "steps":
[[relevant names of step 1], ...]}): the share of requests fully served (every step has one of
its relevant tools among the k routed) and the share of steps served, per split, for each
ringmcp binary given (side by side: before and after a change).

Usage: python3 bench/route/multistep.py [--k 5,10] BIN [BIN...]
The requests were written by a developer who knew the catalog (bench/route/catalog.json), dev
and test alternately; the clause splitting was written against the dev half only.
"""
import argparse
import json
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("bins", nargs="+")
ap.add_argument("--k", default="5,10")
ap.add_argument("--catalog", default="bench/route/catalog.json")
ap.add_argument("--queries", default="bench/route/multistep.jsonl")
args = ap.parse_args()
rows = [json.loads(l) for l in open(args.queries) if l.strip()]
for binary in args.bins:
    for k in map(int, args.k.split(",")):
        out = subprocess.run([binary, "route", "--catalog", args.catalog, "--queries", args.queries,
                              "--k", str(k)], capture_output=True, text=True, check=True).stdout
        got = {r["id"]: r["tools"] for r in map(json.loads, out.splitlines())}
        for split in ("dev", "test", "all"):
            part = [r for r in rows if split == "all" or r["split"] == split]
            served = [[any(n in got[r["id"]] for n in step) for step in r["steps"]] for r in part]
            full = sum(all(s) for s in served)
            steps = sum(sum(s) for s in served)
            total = sum(len(s) for s in served)
            print(json.dumps({"bin": binary, "k": k, "split": split, "requests": len(part),
                              "fully_served": round(full / len(part), 3),
                              "steps_served": round(steps / total, 3)}))
sys.exit(0)
