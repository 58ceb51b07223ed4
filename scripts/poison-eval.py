#!/usr/bin/env python3
"""Measures the tool-poisoning detector (`ringmcp scan`): recall per source of a public corpus,
recall and false positives on the project's own written sets, and false positives on real
servers' tools.

  scripts/poison-eval.py [--corpus DIR] [--own DIR] [--show-fp] REAL_TOOLS_JSON ...

--corpus DIR holds poisoned.jsonl and benign.jsonl (one record a line, the definition under
"tool"; poisoned records also carry "attack_type" and "source"). Nothing of it was used to
write or tune the detector, so every source is held out: the per-source recall is the
leave-one-source-out figure. --own DIR holds bench/poison/own's tools-dev.jsonl (which the
detector was tuned on) and tools-test.jsonl (never tuned on). Each REAL_TOOLS_JSON is a JSON
array of {"server", "tool"} (bench/route/catalog.json, bench/poison/real-tools.json): every tool
counts as benign, judged with its server's other tools as siblings and every other server's
tools as foreign.
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RINGMCP = os.environ.get("RINGMCP", os.path.join(ROOT, "target", "debug", "ringmcp"))


def scan(tools, extra=()):
    """Findings per tool (a list of finding lists), scanned as one listing per call."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for t in tools:
            f.write(json.dumps(t) + "\n")
        path = f.name
    try:
        out = subprocess.run([RINGMCP, "scan", "--json", *extra, path],
                             capture_output=True, text=True).stdout
    finally:
        os.unlink(path)
    return [json.loads(line)["findings"] for line in out.splitlines() if line.strip()]


def scan_each(tools):
    """Each tool alone (a corpus row is a definition of its own, not a listing)."""
    return scan(tools, ["--each"])


def scan_results(texts):
    """Injections found per text, as the gateway judges a tool result's text."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for t in texts:
            f.write(json.dumps({"text": t}) + "\n")
        path = f.name
    try:
        out = subprocess.run([RINGMCP, "scan", "--results", "--json", path],
                             capture_output=True, text=True).stdout
    finally:
        os.unlink(path)
    return [json.loads(line)["injections"] for line in out.splitlines() if line.strip()]


def rows(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus")
    ap.add_argument("--own")
    ap.add_argument("--show-fp", action="store_true")
    ap.add_argument("--show-misses", default="")
    ap.add_argument("--real-split", default="all", choices=["all", "dev", "test"],
                    help="which half of the real tools (by server) and real results (by line)")
    ap.add_argument("--results-real", action="append", default=[],
                    help="JSON Lines of real, benign result texts ({source, text})")
    ap.add_argument("real", nargs="*")
    a = ap.parse_args()
    if a.corpus:
        poisoned = rows(os.path.join(a.corpus, "poisoned.jsonl"))
        benign = rows(os.path.join(a.corpus, "benign.jsonl"))
        flagged = [bool(f) for f in scan_each([r["tool"] for r in poisoned])]
        bflag = [bool(f) for f in scan_each([r["tool"] for r in benign])]
        tp = sum(flagged)
        print(f"corpus poisoned: {tp}/{len(poisoned)} flagged (recall {tp / len(poisoned):.3f})")
        print(f"corpus benign: {sum(bflag)}/{len(benign)} flagged")
        for key in ("source", "attack_type"):
            hit, total = collections.Counter(), collections.Counter()
            for r, f in zip(poisoned, flagged):
                total[r[key]] += 1
                hit[r[key]] += f
            print(f"by {key} (held out): " + ", ".join(
                f"{k} {hit[k]}/{total[k]} = {hit[k] / total[k]:.3f}" for k in sorted(total)))
            if key == "source":
                for r, f in zip(poisoned, flagged):
                    if not f and r["source"] == a.show_misses:
                        print("  MISS", json.dumps(r["tool"])[:300])
    if a.own:
        for split in ("dev", "dev2", "test"):
            path = os.path.join(a.own, f"tools-{split}.jsonl")
            if not os.path.exists(path):
                continue
            rs = rows(path)
            found = scan_each([r["tool"] for r in rs])
            pos = [(r, bool(f)) for r, f in zip(rs, found) if r["label"] == "poisoned"]
            neg = [(r, bool(f), f) for r, f in zip(rs, found) if r["label"] != "poisoned"]
            tp = sum(f for _, f in pos)
            fp = sum(f for _, f, _ in neg)
            print(f"own {split}: recall {tp}/{len(pos)} = {tp / max(1, len(pos)):.3f}, "
                  f"false positives {fp}/{len(neg)} = {fp / max(1, len(neg)):.3f}")
            hit, total = collections.Counter(), collections.Counter()
            for r, f in pos:
                total[r["kind"]] += 1
                hit[r["kind"]] += f
            print(f"  by kind: " + ", ".join(f"{k} {hit[k]}/{total[k]}" for k in sorted(total)))
            if split == a.show_misses:
                for r, f in pos:
                    if not f:
                        print("  MISS", r["kind"], json.dumps(r["tool"])[:400])
                for r, f, fs in neg:
                    if f:
                        print("  FP", r["kind"], fs[0]["location"], fs[0]["excerpt"][:150], fs[0]["reasons"])
    if a.own:
        for split in ("dev", "test"):
            path = os.path.join(a.own, f"results-{split}.jsonl")
            if not os.path.exists(path):
                continue
            rs = rows(path)
            found = scan_results([r["text"] for r in rs])
            pos = [(r, f) for r, f in zip(rs, found) if r["label"] == "injected"]
            neg = [(r, f) for r, f in zip(rs, found) if r["label"] != "injected"]
            tp = sum(bool(f) for _, f in pos)
            fp = sum(bool(f) for _, f in neg)
            print(f"own results {split}: recall {tp}/{len(pos)} = {tp / max(1, len(pos)):.3f}, "
                  f"false positives {fp}/{len(neg)} = {fp / max(1, len(neg)):.3f}")
            hit, total = collections.Counter(), collections.Counter()
            for r, f in pos:
                total[r["kind"]] += 1
                hit[r["kind"]] += bool(f)
            print("  by kind: " + ", ".join(f"{k} {hit[k]}/{total[k]}" for k in sorted(total)))
            if a.show_misses == "results-" + split:
                for r, f in pos:
                    if not f:
                        print("  MISS", r["kind"], r["text"][:300].replace("\n", " "))
                for r, f in neg:
                    if f:
                        print("  FP", r["kind"], f[0]["excerpt"][:200], f[0]["reasons"])
    for path in a.results_real:
        rs = [r for i, r in enumerate(rows(path))
              if a.real_split == "all" or ("dev" if i % 2 == 0 else "test") == a.real_split]
        found = scan_results([r["text"] for r in rs])
        fp = sum(bool(f) for f in found)
        print(f"real results ({a.real_split}, {path}): {fp}/{len(rs)} flagged")
        if a.show_fp:
            for r, f in zip(rs, found):
                if f:
                    print(f"  FP {r.get('source')}: {f[0]['excerpt'][:200]!r} {f[0]['reasons']}")
    if a.real:
        entries = []
        for path in a.real:
            with open(path) as f:
                entries += json.load(f)
        by_server = collections.defaultdict(list)
        for e in entries:
            # Halves by server (CRC-32 of its name): "dev" may be looked at to tune, "test"
            # never is.
            half = "dev" if zlib.crc32(e["server"].encode()) % 2 == 0 else "test"
            if a.real_split in ("all", half):
                by_server[e["server"]].append(e["tool"])
        fp = 0
        n = 0
        for server, tools in by_server.items():
            found = scan(tools)
            n += len(tools)
            for t, f in zip(tools, found):
                if f:
                    fp += 1
                    if a.show_fp:
                        print(f"  FP {server}/{t['name']}: {f[0]['location']}: {f[0]['excerpt'][:160]!r} {f[0]['reasons']}")
        print(f"real tools ({a.real_split}): {fp}/{n} flagged (false-positive rate "
              f"{fp / max(1, n):.4f}) from {len(by_server)} servers")


if __name__ == "__main__":
    sys.exit(main())
