#!/usr/bin/env python3
"""Measures whether sentence vectors from an encoder help the poisoning judge generalise
(docs/policy.md, "Measured"): the same fitting as scripts/poison-train.py (own dev sets and
dev-half real tools only; threshold from out-of-fold scores at 0.2 % of dev-half real tools),
with each sentence's vector (`ringmcp scan --features --embeddings DIR`) added to the hashed
features, or alone (SPARSE=0). Reports held-out recall per corpus source, own test recall and
false positives on the test half of the real tools, against the shipped judge. Nothing it fits
is written anywhere. Needs numpy (`pip install numpy`) and a release build:

  RINGMCP=target/release/ringmcp EMB=.deps/embed/all-MiniLM-L6-v2 python3 scripts/poison-vectors.py
"""
import collections, importlib.util, json, math, os, random, subprocess, sys, tempfile, zlib
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("pt", f"{ROOT}/scripts/poison-train.py")
pt = importlib.util.module_from_spec(spec); spec.loader.exec_module(pt)
EMB = os.environ.get("EMB", f"{ROOT}/.deps/embed/all-MiniLM-L6-v2")
USE_SPARSE = os.environ.get("SPARSE", "1") == "1"
DENSE_SCALE = float(os.environ.get("DSCALE", "1.0"))

def features(tools, each):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for t in tools: f.write(json.dumps(t) + "\n")
        path = f.name
    args = [pt.RINGMCP, "scan", "--features", "--embeddings", EMB, path] + (["--each"] if each else [])
    out = subprocess.run(args, capture_output=True, text=True).stdout
    os.unlink(path)
    per = [[] for _ in tools]
    for line in out.splitlines():
        if not line.startswith("{"): continue
        row = json.loads(line)
        per[row["index"]] = [(s["location"], s["sentence"], (tuple(s["features"]), np.array(s["vector"], dtype=np.float64)))
                             for s in row["sentences"]]
    return per
pt.features = features

def fit(examples, epochs=12, l2=1e-4, lr=0.2, seed=7):
    w = collections.defaultdict(float); g2 = collections.defaultdict(float)
    d = len(examples[0][2][1]); wd = np.zeros(d); gd = np.zeros(d)
    bias = gb = 0.0
    pos = sum(1 for _, y, _ in examples if y); neg = len(examples) - pos
    cw = {1: neg / max(1, pos), 0: 1.0}
    rows_ = [(y, [pt.fnv(x) for x in f[0]] if USE_SPARSE else [], f[1] * DENSE_SCALE) for _, y, f in examples]
    order = list(range(len(rows_))); rnd = random.Random(seed)
    for _ in range(epochs):
        rnd.shuffle(order)
        for i in order:
            y, hs, v = rows_[i]
            z = bias + sum(w[h] for h in hs) + float(wd @ v)
            p = 1 / (1 + math.exp(-max(-30, min(30, z))))
            g = (p - y) * cw[y]
            for h in hs:
                gh = g + l2 * w[h]; g2[h] += gh * gh
                w[h] -= lr * gh / math.sqrt(g2[h] + 1e-8)
            gv = g * v + l2 * wd; gd += gv * gv
            wd -= lr * gv / np.sqrt(gd + 1e-8)
            gb += g * g; bias -= lr * g / math.sqrt(gb + 1e-8)
    return bias, dict(w), wd

def score(m, f):
    bias, w, wd = m
    return bias + (sum(w.get(pt.fnv(x), 0.0) for x in f[0]) if USE_SPARSE else 0) + float(wd @ (f[1] * DENSE_SCALE))

def main():
    own = f"{ROOT}/bench/poison/own"
    real = [f"{ROOT}/bench/route/catalog.json", f"{ROOT}/bench/poison/real-tools.json"]
    examples, tools = [], []
    for name, tag in (("tools-dev.jsonl", "dev"), ("tools-dev2.jsonl", "dev2")):
        e, t = pt.own_examples(os.path.join(own, name), tag)
        off = len(examples); examples += e
        tools += [(g, y, [i + off for i in idx]) for g, y, idx in t]
    by_server = pt.dev_servers(real)
    for e, t in (pt.real_examples(by_server), pt.written_examples(own, by_server)):
        off = len(examples); examples += e
        tools += [(g, y, [i + off for i in idx]) for g, y, idx in t]
    print(len(examples), "sentences", file=sys.stderr)
    groups = sorted({g for g, _, _ in examples}); fold_of = {g: zlib.crc32(g.encode()) % 5 for g in groups}
    oof = [0.0] * len(examples)
    for k in range(5):
        m = fit([x for x in examples if fold_of[x[0]] != k])
        for i, x in enumerate(examples):
            if fold_of[x[0]] == k: oof[i] = score(m, x[2])
    ts = [(g, y, max((oof[i] for i in idx), default=-1e9)) for g, y, idx in tools]
    rs = sorted((s for g, y, s in ts if g.startswith("real:")), reverse=True)
    thr = rs[int(0.002 * len(rs))] + 1e-3
    for tag in ("dev", "dev2", "dev3"):
        p = [s for g, y, s in ts if g.startswith(tag + ":") and y]
        print(f"oof {tag}: {sum(s >= thr for s in p)}/{len(p)}", file=sys.stderr)
    model = fit(examples)
    # Held out: the corpus, the own test split, the real test half.
    corpus = os.environ.get("CORPUS", os.path.join(ROOT, "..", "shared", "testdata", "tool-poisoning"))
    pois = pt.rows(f"{corpus}/poisoned.jsonl")
    per = features([r["tool"] for r in pois], each=True)
    binary = scan_json([r["tool"] for r in pois])
    hit = collections.Counter(); tot = collections.Counter(); hit_rules = collections.Counter(); hit_bin = collections.Counter()
    for r, sents, fs in zip(pois, per, binary):
        j = max((score(model, f) for _, _, f in sents), default=-1e9) >= thr
        rules = any("weighed" not in f["signals"] for f in fs)
        tot[r["source"]] += 1; hit[r["source"]] += (j or rules); hit_rules[r["source"]] += rules; hit_bin[r["source"]] += bool(fs)
    T = sum(tot.values())
    print(f"corpus: binary {sum(hit_bin.values())/T:.3f} rules {sum(hit_rules.values())/T:.3f} rules+joint {sum(hit.values())/T:.3f}")
    for s in sorted(tot): print(f"  {s}: binary {hit_bin[s]/tot[s]:.3f} rules {hit_rules[s]/tot[s]:.3f} rules+joint {hit[s]/tot[s]:.3f} (n={tot[s]})")
    test = [r for r in pt.rows(f"{own}/tools-test.jsonl")]
    per = features([r["tool"] for r in test], each=True); binary = scan_json([r["tool"] for r in test])
    P = N = tp = fp = 0
    for r, sents, fs in zip(test, per, binary):
        j = max((score(model, f) for _, _, f in sents), default=-1e9) >= thr
        rules = any("weighed" not in f["signals"] for f in fs)
        if r["label"] == "poisoned": P += 1; tp += (j or rules)
        else: N += 1; fp += (j or rules)
    print(f"own test: recall {tp}/{P} fp {fp}/{N}")
    entries = []
    for p in real:
        entries += json.load(open(p))
    bys = collections.defaultdict(list)
    for e in entries:
        if zlib.crc32(e["server"].encode()) % 2 == 1: bys[e["server"]].append(e["tool"])
    n = fpj = fpr = 0
    for server, tls in bys.items():
        per = features(tls, each=False); binary = scan_json(tls, each=False)
        for t, sents, fs in zip(tls, per, binary):
            n += 1
            j = max((score(model, f) for _, _, f in sents), default=-1e9) >= thr
            rules = any("weighed" not in f["signals"] for f in fs)
            fpj += (j or rules); fpr += rules
            if j and not rules and os.environ.get("SHOWFP"): print("  FP", server, t["name"])
    print(f"real test: rules {fpr}/{n}, rules+joint {fpj}/{n}")

def scan_json(tools, each=True):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for t in tools: f.write(json.dumps(t) + "\n")
        path = f.name
    out = subprocess.run([pt.RINGMCP, "scan", "--json", *(["--each"] if each else []), path], capture_output=True, text=True).stdout
    os.unlink(path)
    return [json.loads(l)["findings"] for l in out.splitlines() if l.strip()]

main()
