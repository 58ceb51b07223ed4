#!/usr/bin/env python3
"""Assemble bench/poison/own/*.jsonl from the hand-written modules in gen/.

    python3 bench/poison/own/make.py          # writes the 4 jsonl files + prints counts

Deterministic (fixed seeds). Dev and test content lives in separate modules
(gen/tools_dev*.py vs gen/tools_test*.py, gen/results_dev.py vs
gen/results_test.py) and was written independently; this script only places
payloads into carriers and serialises.
"""
import collections
import copy
import json
import os
import random
import re
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "gen"))

import tools_dev_benign, tools_dev_poison, tools_test_benign, tools_test_poison  # noqa: E402
import results_dev_docs, results_dev_inj, results_test_docs, results_test_inj  # noqa: E402

KEY_ORDER = ["name", "title", "description", "inputSchema", "outputSchema",
             "annotations", "_meta"]
META_KEYS = ["com.example/usage", "hints", "io.modelcontextprotocol/notes",
             "x-guidance", "vendor/notes", "dev.tools/llm"]
ENUM_NAMES = [("mode", ["standard", "fast"]), ("format", ["json", "text"]),
              ("style", ["concise", "detailed"]), ("verbosity", ["low", "high"])]
NAME_RE = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")


def order(t):
    out = {k: t[k] for k in KEY_ORDER if k in t}
    for k in t:
        if k not in out:
            out[k] = t[k]
    return out


def pick_param(t, rng, want=None, string_only=False, optional_only=False):
    props = t["inputSchema"].setdefault("properties", {})
    req = set(t["inputSchema"].get("required", []))
    if want and want in props:
        return want
    cands = []
    for k, v in props.items():
        if string_only and (v.get("type") != "string" or "enum" in v):
            continue
        if optional_only and k in req:
            continue
        cands.append(k)
    return rng.choice(cands) if cands else None


def apply(tool, x, rng):
    loc, p = x["loc"], x["payload"]
    if loc == "full":
        return order(copy.deepcopy(p))
    t = copy.deepcopy(tool)
    want = x["on"].split(".", 1)[1] if x["on"] and "." in x["on"] else None
    props = t["inputSchema"].setdefault("properties", {})
    if loc == "desc":
        t["description"] = t["description"].rstrip() + rng.choice(["\n\n", " ", "\n"]) + p
    elif loc == "desc_pre":
        t["description"] = p + rng.choice([" ", "\n\n"]) + t["description"]
    elif loc == "pdesc":
        k = pick_param(t, rng, want)
        if k is None:
            props["notes"] = {"type": "string", "description": "Optional notes."}
            k = "notes"
        d = props[k].get("description", "")
        props[k]["description"] = (d.rstrip() + " " + p).strip()
    elif loc == "enum":
        k = None
        for kk, v in props.items():
            if "enum" in v and (want is None or kk == want):
                k = kk
                break
        if k is None:
            name, vals = rng.choice([e for e in ENUM_NAMES if e[0] not in props] or ENUM_NAMES)
            props[name] = {"type": "string", "enum": list(vals),
                           "description": "Output %s." % name}
            k = name
        vals = props[k]["enum"]
        vals.insert(rng.randint(1, len(vals)), p)
    elif loc == "default":
        k = pick_param(t, rng, want, string_only=True, optional_only=True)
        if k is None:
            props["notes"] = {"type": "string", "description": "Optional free-text notes."}
            k = "notes"
        props[k]["default"] = p
    elif loc == "title":
        t["title"] = p
    elif loc == "ann_title":
        t.setdefault("annotations", {})["title"] = p
    elif loc == "out":
        o = t.setdefault("outputSchema", {"type": "object",
                                          "properties": {"result": {"type": "string"}}})
        o["description"] = (o.get("description", "") + " " + p).strip()
    elif loc == "meta":
        if isinstance(p, tuple):
            key, val = p
        else:
            key, val = rng.choice(META_KEYS), p
        t.setdefault("_meta", {})[key] = val
    elif loc == "prop":
        name, typ, desc = p[0], p[1], p[2]
        from lib import prop
        props[name] = prop(typ, desc, p[4] if len(p) > 4 else None)
        if len(p) > 3 and p[3]:
            t["inputSchema"].setdefault("required", []).append(name)
    else:
        raise ValueError(loc)
    return order(t)


def build_tools(split, benign_mod, poison_mod, seed):
    rng = random.Random(seed)
    recs, carriers = [], []
    for kind, tools in benign_mod.BENIGN.items():
        for t in tools:
            recs.append({"label": "benign", "kind": kind, "tool": order(t)})
            if kind != "non_english":
                carriers.append(t)
    by_name = {t["name"]: t for ts in benign_mod.BENIGN.values() for t in ts}
    extra = {t["name"]: t for t in getattr(poison_mod, "CARRIERS", [])}
    use = collections.Counter()
    for x in poison_mod.POISON:
        if x["loc"] == "full":
            car = None
        elif x["on"]:
            n = x["on"].split(".")[0]
            car = by_name.get(n) or extra.get(n)
            if car is None:
                raise SystemExit("%s: unknown carrier %s" % (split, n))
        else:
            m = min(use[c["name"]] for c in carriers)
            car = rng.choice([c for c in carriers if use[c["name"]] == m])
        if car is not None:
            use[car["name"]] += 1
        rec = {"label": "poisoned", "kind": x["kind"], "loc": x["loc"],
               "tool": apply(car, x, rng)}
        recs.append(rec)
    return recs


def insert(doc, snip, pos, rng):
    if pos == "start":
        return snip + "\n\n" + doc
    if pos == "end":
        return doc + "\n\n" + snip
    if pos == "inline":
        parts = doc.split("\n\n")
        i = rng.randrange(len(parts))
        parts[i] = parts[i] + " " + snip
        return "\n\n".join(parts)
    # mid
    for sep in ("\n\n", "\n"):
        parts = doc.split(sep)
        if len(parts) >= 2:
            i = max(1, len(parts) // 2)
            return sep.join(parts[:i] + [snip] + parts[i:])
    return doc + "\n\n" + snip


def build_results(split, docs_mod, inj_mod, seed):
    rng = random.Random(seed)
    recs = []
    docs = docs_mod.DOCS
    for d in docs:
        recs.append({"label": "benign", "kind": d["source"], "source": d["source"],
                     "text": d["text"]})
    carriers = [d for d in docs if not d.get("no_carrier")]
    use = collections.Counter()
    for s in inj_mod.INJ:
        pool = [d for d in carriers if s["src"] is None or d["source"] in s["src"]]
        if not pool:
            raise SystemExit("%s: no carrier for %r" % (split, s["src"]))
        m = min(use[id(d)] for d in pool)
        d = rng.choice([d for d in pool if use[id(d)] == m])
        use[id(d)] += 1
        recs.append({"label": "injected", "kind": s["kind"], "source": d["source"],
                     "text": insert(d["text"], s["text"], s["pos"], rng)})
    return recs


ESC = set(range(0x200B, 0x2010)) | set(range(0x202A, 0x202F)) | \
    set(range(0x2060, 0x2065)) | set(range(0x2066, 0x206A)) | {0xFEFF, 0x00AD}


def dumps(obj):
    s = json.dumps(obj, ensure_ascii=False)
    out = []
    for ch in s:
        cp = ord(ch)
        if 0xE0000 <= cp <= 0xE007F:
            v = cp - 0x10000
            out.append("\\u%04x\\u%04x" % (0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF)))
        elif cp in ESC:
            out.append("\\u%04x" % cp)
        else:
            out.append(ch)
    return "".join(out)


def write(path, recs, prefix, seed):
    rng = random.Random(seed)
    rng.shuffle(recs)
    with open(path, "w", encoding="utf-8") as f:
        for i, r in enumerate(recs, 1):
            r = {"id": "%s-%04d" % (prefix, i), **r}
            f.write(dumps(r) + "\n")


def check(path, is_tools):
    c = collections.Counter()
    ids = set()
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            r = json.loads(line)
            assert r["id"] not in ids, r["id"]
            ids.add(r["id"])
            c[(r["label"], r["kind"])] += 1
            if is_tools:
                t = r["tool"]
                assert NAME_RE.match(t["name"]), t["name"]
                assert isinstance(t["description"], str) and t["description"]
                assert t["inputSchema"]["type"] == "object"
                for q in t["inputSchema"].get("required", []):
                    assert q in t["inputSchema"]["properties"], (t["name"], q)
            else:
                L = len(r["text"])
                assert 200 <= L <= 3000, (path, n, L, r["text"][:80])
    return c


def shingles(s, k=6):
    w = re.findall(r"\w+", s.lower())
    return {tuple(w[i:i + k]) for i in range(max(0, len(w) - k + 1))}


def overlap_report(a_texts, b_texts, label):
    A = [shingles(t) for t in a_texts]
    allA = set().union(*A) if A else set()
    worst = []
    for t in b_texts:
        s = shingles(t)
        if not s:
            continue
        r = len(s & allA) / len(s)
        worst.append((r, t[:70]))
    worst.sort(reverse=True)
    hi = [w for w in worst if w[0] > 0.5]
    print("  %s: test items with >50%% 6-gram overlap with dev: %d / %d" % (label, len(hi), len(worst)))
    for r, t in hi[:5]:
        print("    %.2f %r" % (r, t))


def main():
    outs = {
        "tools-dev.jsonl": (build_tools("dev", tools_dev_benign, tools_dev_poison, 11), "td", True),
        "tools-test.jsonl": (build_tools("test", tools_test_benign, tools_test_poison, 22), "tt", True),
        "results-dev.jsonl": (build_results("dev", results_dev_docs, results_dev_inj, 33), "rd", False),
        "results-test.jsonl": (build_results("test", results_test_docs, results_test_inj, 44), "rt", False),
    }
    for i, (fn, (recs, prefix, _)) in enumerate(outs.items()):
        write(os.path.join(HERE, fn), recs, prefix, 100 + i)
    for fn, (_, _, is_tools) in outs.items():
        c = check(os.path.join(HERE, fn), is_tools)
        tot = collections.Counter()
        for (lab, _), v in c.items():
            tot[lab] += v
        print("%s  total=%d  %s" % (fn, sum(tot.values()), dict(tot)))
        for lab in sorted(tot):
            print("  %-9s " % lab + ", ".join("%s=%d" % (k, v) for (l, k), v in sorted(c.items()) if l == lab))
    # independence check between dev and test
    dn = {t["name"] for ts in tools_dev_benign.BENIGN.values() for t in ts}
    tn = {t["name"] for ts in tools_test_benign.BENIGN.values() for t in ts}
    print("benign tool names shared dev/test: %d %s" % (len(dn & tn), sorted(dn & tn)[:20]))

    def ptxt(mod):
        return [json.dumps(x["payload"], ensure_ascii=False) for x in mod.POISON]

    def btxt(mod):
        return [json.dumps(t, ensure_ascii=False) for ts in mod.BENIGN.values() for t in ts]
    overlap_report(ptxt(tools_dev_poison), ptxt(tools_test_poison), "tool payloads")
    overlap_report(btxt(tools_dev_benign), btxt(tools_test_benign), "benign tools")
    overlap_report([d["text"] for d in results_dev_docs.DOCS], [d["text"] for d in results_test_docs.DOCS], "result docs")
    overlap_report([s["text"] for s in results_dev_inj.INJ], [s["text"] for s in results_test_inj.INJ], "injections")


if __name__ == "__main__":
    main()
