#!/usr/bin/env python3
"""Fits the judge's weights (src/policy/content/weights.bin): a logistic regression over the
features `ringmcp scan --features` prints for every sentence of a tool definition.

  scripts/poison-train.py [--own bench/poison/own] [--real bench/poison/real-tools.json ...]
                          [--out src/policy/content/weights.bin] [--fp 0.002]

What it learns from (and nothing else):
- bench/poison/own tools-dev.jsonl and tools-dev2.jsonl (written by the project; the test split
  is never read). A poisoned tool's sentences that appear in none of the benign tools of its
  file are its payload (poisoned tools are benign carriers with a payload put in); the benign
  tools' sentences are negatives.
- the **dev half** of the real servers' tools (servers whose CRC-32 of the name is even, as
  scripts/poison-eval.py splits them): every sentence is a negative. The test half is never
  read.
The public corpus (shared testdata) is never read.

The threshold is chosen on out-of-fold scores (5 folds by server or by tool), so that the share
of dev-half real tools flagged by the weights alone stays under --fp.
"""

import argparse
import collections
import json
import math
import os
import random
import struct
import subprocess
import sys
import tempfile
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RINGMCP = os.environ.get("RINGMCP", os.path.join(ROOT, "target", "debug", "ringmcp"))
BUCKETS = 1 << 20


def fnv(feature):
    h = 0x811C9DC5
    for b in feature.encode():
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h % BUCKETS


DROP = tuple(p for p in os.environ.get("POISON_DROP", "").split(",") if p)


def kept(fs):
    """The features, less the kinds POISON_DROP names (prefixes, for trying without them)."""
    return [f for f in fs if not f.startswith(DROP)] if DROP else fs


def features(tools, each):
    """Per tool, its sentences as (location, sentence, [features])."""
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for t in tools:
            f.write(json.dumps(t) + "\n")
        path = f.name
    try:
        args = [RINGMCP, "scan", "--features", path] + (["--each"] if each else [])
        out = subprocess.run(args, capture_output=True, text=True, check=False).stdout
    finally:
        os.unlink(path)
    per = [[] for _ in tools]
    for line in out.splitlines():
        if not line.startswith("{"):
            continue
        row = json.loads(line)
        per[row["index"]] = [(s["location"], s["sentence"], kept(s["features"]))
                             for s in row["sentences"]]
    return per


def rows(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def own_examples(path, tag):
    """(group, label, features) of each sentence of an own set; tool-level records too."""
    items = rows(path)
    per = features([r["tool"] for r in items], each=True)
    benign = set()
    for r, sents in zip(items, per):
        if r["label"] == "benign":
            benign.update(s for _, s, _ in sents)
    examples, tools = [], []
    for r, sents in zip(items, per):
        poisoned = r["label"] == "poisoned"
        group = f"{tag}:{r['id']}"
        idx = []
        for _, s, f in sents:
            label = 1 if poisoned and s not in benign else 0
            if poisoned and not label:
                continue  # a carrier's sentence: its clean twin has it as a negative
            idx.append(len(examples))
            examples.append((group, label, f))
        tools.append((group, int(poisoned), idx))
    return examples, tools


def dev_servers(paths):
    """The real tools of the dev half, by server."""
    by_server = collections.defaultdict(list)
    for p in paths:
        with open(p) as f:
            for e in json.load(f):
                if zlib.crc32(e["server"].encode()) % 2 == 0:
                    by_server[e["server"]].append(e["tool"])
    return by_server


def inserted(tool, text, rnd):
    """`tool` with `text` put into its description (start, end) or a parameter's."""
    t = json.loads(json.dumps(tool))
    props = [p for p in (t.get("inputSchema") or {}).get("properties", {}).values()
             if isinstance(p, dict)]
    where = rnd.random()
    if props and where < 0.3:
        p = rnd.choice(props)
        p["description"] = (p.get("description", "") + " " + text).strip()
    elif where < 0.5:
        t["description"] = text + " " + t.get("description", "")
    else:
        t["description"] = (t.get("description", "") + " " + text).strip()
    return t


def written_examples(own, by_server):
    """Sentences the project wrote on their own (payloads-dev3, benign-dev3), each put into a
    carrier: a dev-half real tool."""
    carriers = [t for _, ts in sorted(by_server.items()) for t in ts
                if len(json.dumps(t)) < 4000 and t.get("description")]
    rnd = random.Random(31)
    items = []
    for name, label in (("payloads-dev3.jsonl", 1), ("benign-dev3.jsonl", 0)):
        path = os.path.join(own, name)
        if os.path.exists(path):
            items += [(label, r["text"]) for r in rows(path)]
    if not items:
        return [], []
    made = [(label, text, inserted(rnd.choice(carriers), text, rnd)) for label, text in items]
    per = features([t for _, _, t in made], each=True)
    carrier_sentences = set()
    for c_sents in features(carriers, each=True):
        carrier_sentences.update(s for _, s, _ in c_sents)
    examples, tools = [], []
    for k, ((label, _, _), sents) in enumerate(zip(made, per)):
        group = f"dev3:{k}"
        idx = []
        for _, s, f in sents:
            if s in carrier_sentences:
                continue  # the carrier's own sentence: a negative already
            idx.append(len(examples))
            examples.append((group, label, f))
        tools.append((group, label, idx))
    return examples, tools


def real_examples(by_server):
    examples, tools = [], []
    for server, ts in sorted(by_server.items()):
        per = features(ts, each=False)
        for t, sents in zip(ts, per):
            idx = []
            for _, _, f in sents:
                idx.append(len(examples))
                examples.append((f"real:{server}", 0, f))
            tools.append((f"real:{server}", 0, idx))
    return examples, tools


def fit(examples, epochs=12, l2=1e-4, lr=0.2, seed=7):
    """Logistic regression by AdaGrad; positives weighted to balance the classes."""
    w = collections.defaultdict(float)
    g2 = collections.defaultdict(float)
    bias, gb = 0.0, 0.0
    pos = sum(1 for _, y, _ in examples if y)
    neg = len(examples) - pos
    cw = {1: neg / max(1, pos), 0: 1.0}
    # Identical (label, features) rows count once, with their number as a weight.
    counted = collections.Counter((y, tuple(f)) for _, y, f in examples)
    rows_ = [(y, [fnv(x) for x in f], n) for (y, f), n in counted.items()]
    order = list(range(len(rows_)))
    rnd = random.Random(seed)
    for _ in range(epochs):
        rnd.shuffle(order)
        for i in order:
            y, hs, n = rows_[i]
            z = bias + sum(w[h] for h in hs)
            p = 1 / (1 + math.exp(-max(-30, min(30, z))))
            g = (p - y) * cw[y] * n
            for h in hs:
                gh = g + l2 * w[h]
                g2[h] += gh * gh
                w[h] -= lr * gh / math.sqrt(g2[h] + 1e-8)
            gb += g * g
            bias -= lr * g / math.sqrt(gb + 1e-8)
    return bias, dict(w)


def score(model, f):
    bias, w = model
    return bias + sum(w.get(fnv(x), 0.0) for x in f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--own", default=os.path.join(ROOT, "bench/poison/own"))
    ap.add_argument("--real", action="append", default=[])
    ap.add_argument("--out", default=os.path.join(ROOT, "src/policy/content/weights.bin"))
    ap.add_argument("--fp", type=float, default=0.002)
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--l2", type=float, default=1e-4)
    ap.add_argument("--show", type=int, default=0)
    a = ap.parse_args()
    real = a.real or [os.path.join(ROOT, "bench/route/catalog.json"),
                      os.path.join(ROOT, "bench/poison/real-tools.json")]
    examples, tools = [], []
    for name, tag in (("tools-dev.jsonl", "dev"), ("tools-dev2.jsonl", "dev2")):
        e, t = own_examples(os.path.join(a.own, name), tag)
        off = len(examples)
        examples += e
        tools += [(g, y, [i + off for i in idx]) for g, y, idx in t]
    by_server = dev_servers(real)
    for e, t in (real_examples(by_server), written_examples(a.own, by_server)):
        off = len(examples)
        examples += e
        tools += [(g, y, [i + off for i in idx]) for g, y, idx in t]
    pos = sum(y for _, y, _ in examples)
    print(f"{len(examples)} sentences ({pos} payload), {len(tools)} tools", file=sys.stderr)

    # Out-of-fold scores: 5 folds by group (a server, or one own tool).
    groups = sorted({g for g, _, _ in examples})
    fold_of = {g: zlib.crc32(g.encode()) % 5 for g in groups}
    oof = [0.0] * len(examples)
    for k in range(5):
        train = [x for x in examples if fold_of[x[0]] != k]
        m = fit(train, a.epochs, a.l2)
        for i, x in enumerate(examples):
            if fold_of[x[0]] == k:
                oof[i] = score(m, x[2])
    tool_score = [(g, y, max((oof[i] for i in idx), default=-1e9)) for g, y, idx in tools]
    real_scores = sorted((s for g, y, s in tool_score if g.startswith("real:")), reverse=True)
    allowed = int(a.fp * len(real_scores))
    threshold = real_scores[allowed] + 1e-3 if real_scores else 0.0
    for tag in ("dev", "dev2", "dev3"):
        p = [s for g, y, s in tool_score if g.startswith(tag + ":") and y]
        n = [s for g, y, s in tool_score if g.startswith(tag + ":") and not y]
        print(f"out-of-fold {tag}: recall {sum(s >= threshold for s in p)}/{len(p)}, "
              f"benign flagged {sum(s >= threshold for s in n)}/{len(n)}", file=sys.stderr)
    print(f"out-of-fold real dev: {sum(s >= threshold for s in real_scores)}/{len(real_scores)} "
          f"flagged at threshold {threshold:.3f}", file=sys.stderr)

    for fp in (0.002, 0.005, 0.01, 0.02, 0.05):
        t = real_scores[int(fp * len(real_scores))] + 1e-3
        r = [sum(s >= t for g, y, s in tool_score if g.startswith(tag + ":") and y)
             for tag in ("dev", "dev2", "dev3")]
        print(f"  at real-dev FP {fp}: threshold {t:.2f}, recall dev {r[0]}, dev2 {r[1]}, "
              f"dev3 {r[2]}", file=sys.stderr)
    if a.show:
        pos = sorted((oof[i], examples[i][2]) for i in range(len(examples)) if examples[i][1])
        for sc, f in pos[: a.show]:
            print(f"  low payload {sc:.2f}: {' '.join(x[2:] for x in f if x.startswith('w:'))}",
                  file=sys.stderr)
        neg = sorted(((oof[i], examples[i][2]) for i in range(len(examples))
                      if not examples[i][1]), reverse=True)
        for sc, f in neg[: a.show]:
            print(f"  high negative {sc:.2f}: {' '.join(x[2:] for x in f if x.startswith('w:'))}",
                  file=sys.stderr)
    bias, w = fit(examples, a.epochs, a.l2)
    w = {h: v for h, v in w.items() if abs(v) > 1e-3}
    scale = max(abs(v) for v in w.values()) / 32767
    entries = sorted((h, round(v / scale)) for h, v in w.items())
    entries = [(h, q) for h, q in entries if q != 0]
    with open(a.out, "wb") as f:
        f.write(b"RMCPWGT1" + struct.pack("<fffI", bias, threshold, scale, len(entries)))
        for h, q in entries:
            f.write(struct.pack("<Ih", h, q))
    print(f"wrote {a.out}: {len(entries)} weights, bias {bias:.3f}, threshold {threshold:.3f}",
          file=sys.stderr)


if __name__ == "__main__":
    main()
