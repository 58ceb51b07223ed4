"""Small helpers shared by the hand-written data modules.

Only construction helpers live here; every tool, payload, document and
injection text is hand-written per split in tools_*.py / results_*.py.
"""
import base64
import urllib.parse

TYPES = {
    "s": {"type": "string"},
    "i": {"type": "integer"},
    "n": {"type": "number"},
    "b": {"type": "boolean"},
    "as": {"type": "array", "items": {"type": "string"}},
    "ai": {"type": "array", "items": {"type": "integer"}},
    "o": {"type": "object"},
}


def prop(typ, desc=None, default=None):
    if isinstance(typ, (list, tuple)):
        p = {"type": "string", "enum": list(typ)}
    elif isinstance(typ, dict):
        p = dict(typ)
    else:
        p = dict(TYPES[typ])
        if typ in ("as", "ai"):
            p["items"] = dict(p["items"])
    if desc is not None:
        p["description"] = desc
    if default is not None:
        p["default"] = default
    return p


def schema(params):
    """params: iterable of (name, type, desc[, required[, default]])."""
    props, req = {}, []
    for t in params:
        name, typ, desc = t[0], t[1], t[2]
        r = t[3] if len(t) > 3 else False
        d = t[4] if len(t) > 4 else None
        props[name] = prop(typ, desc, d)
        if r:
            req.append(name)
    s = {"type": "object", "properties": props}
    if req:
        s["required"] = req
    return s


def T(name, desc, params=(), title=None, ro=None, destr=None, ow=None,
      idem=None, ann_title=None, out=None, meta=None):
    t = {"name": name}
    if title:
        t["title"] = title
    t["description"] = desc
    t["inputSchema"] = schema(params)
    if out is not None:
        if isinstance(out, tuple) and isinstance(out[0], str) and len(out) == 2 \
                and isinstance(out[1], (list, tuple)):
            o = schema(out[1])
            o["description"] = out[0]
        else:
            o = schema(out)
        t["outputSchema"] = o
    ann = {}
    if ann_title:
        ann["title"] = ann_title
    for k, v in (("readOnlyHint", ro), ("destructiveHint", destr),
                 ("idempotentHint", idem), ("openWorldHint", ow)):
        if v is not None:
            ann[k] = v
    if ann:
        t["annotations"] = ann
    if meta:
        t["_meta"] = meta
    return t


def X(kind, loc, payload, on=None):
    """A poisoning payload. loc in desc, desc_pre, pdesc, enum, default, title,
    ann_title, out, meta, prop, full. on = carrier tool name ('tool' or
    'tool.param')."""
    return {"kind": kind, "loc": loc, "payload": payload, "on": on}


def D(source, text):
    return {"source": source, "text": text.strip("\n")}


def I(kind, text, pos="end", src=None):
    return {"kind": kind, "text": text.strip("\n"), "pos": pos, "src": src}


# ---- encoders used by the "encoded" payloads ----
def b64(s):
    return base64.b64encode(s.encode()).decode()


def hexs(s):
    return s.encode().hex()


def urlenc(s):
    return urllib.parse.quote(s, safe="")


def htmlent(s):
    return "".join("&#%d;" % ord(c) for c in s)


def tags(s):
    """Unicode tag characters (invisible)."""
    return "".join(chr(0xE0000 + ord(c)) for c in s if ord(c) < 0x80)


def zw(s, sep="\u200b"):
    """Zero-width characters interleaved between letters."""
    return sep.join(s)


_HOMO = {"a": "\u0430", "e": "\u0435", "o": "\u043e", "p": "\u0440",
         "c": "\u0441", "x": "\u0445", "y": "\u0443", "i": "\u0456",
         "s": "\u0455", "A": "\u0410", "E": "\u0415", "O": "\u041e",
         "P": "\u0420", "C": "\u0421", "T": "\u0422", "H": "\u041d"}


def homo(s):
    return "".join(_HOMO.get(c, c) for c in s)


def rot13(s):
    import codecs
    return codecs.encode(s, "rot13")
