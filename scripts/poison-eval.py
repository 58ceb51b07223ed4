#!/usr/bin/env python3
"""Measures the tool-poisoning scanner (`ringmcp scan`) on a labelled corpus and on real
servers' tool lists: precision, recall and false-positive rate, per attack type and per source.

  scripts/poison-eval.py CORPUS_DIR [TOOLS_JSON ...]

CORPUS_DIR holds poisoned.jsonl and benign.jsonl (one record a line, the definition under
"tool"; poisoned records also carry "attack_type" and "source"). Each TOOLS_JSON is a tools/list
of a real server (e.g. from `ringmcp inspect --json`), all of whose tools count as benign.
The corpus is not part of this repository; docs/policy.md has the numbers it gave.
"""

import collections
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RINGMCP = os.environ.get("RINGMCP", os.path.join(ROOT, "target", "debug", "ringmcp"))


def scan(path):
    out = subprocess.run([RINGMCP, "scan", "--json", path], capture_output=True, text=True).stdout
    return [bool(json.loads(line)["findings"]) for line in out.splitlines() if line.strip()]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    corpus = sys.argv[1]
    poisoned_rows = [json.loads(l) for l in open(os.path.join(corpus, "poisoned.jsonl"))]
    benign_rows = [json.loads(l) for l in open(os.path.join(corpus, "benign.jsonl"))]
    flagged = scan(os.path.join(corpus, "poisoned.jsonl"))
    benign_flagged = scan(os.path.join(corpus, "benign.jsonl"))
    real = []
    for path in sys.argv[2:]:
        real += scan(path)
    tp, fp = sum(flagged), sum(benign_flagged) + sum(real)
    negatives = len(benign_rows) + len(real)
    print(f"poisoned: {tp}/{len(poisoned_rows)} flagged (recall {tp / len(poisoned_rows):.3f})")
    print(f"benign: {fp}/{negatives} flagged (false-positive rate {fp / max(1, negatives):.4f}; "
          f"corpus {sum(benign_flagged)}/{len(benign_rows)}, real servers {sum(real)}/{len(real)})")
    print(f"precision {tp / max(1, tp + fp):.3f}")
    for key in ("attack_type", "source"):
        hit, total = collections.Counter(), collections.Counter()
        for row, f in zip(poisoned_rows, flagged):
            total[row[key]] += 1
            hit[row[key]] += f
        print(f"by {key}: " + ", ".join(f"{k} {hit[k]}/{total[k]}" for k in sorted(total)))


if __name__ == "__main__":
    main()
