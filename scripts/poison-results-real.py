#!/usr/bin/env python3
"""Collect real, benign tool-result texts for the result-injection detector's
false-positive measurement (bench/poison/results-real.jsonl).

Writes one JSON object a line, {"source": KIND, "origin": WHERE, "text": TEXT},
with KIND one of

    listing    what @modelcontextprotocol/server-filesystem answers to
               list_directory, list_directory_with_sizes, directory_tree,
               search_files and get_file_info, asked over MCP about folders
               of /usr/share/doc and of the installed npm packages
    gitlog     `git --git-dir=G log --stat -n 20 --skip=K`, cut at commits
    readme     README.md of installed npm packages, and the long descriptions
               (PKG-INFO/METADATA) of installed Python distributions
    changelog  CHANGELOG/HISTORY/CHANGES files of the packages, and Debian's
               changelog.Debian.gz / NEWS.Debian.gz
    html2text  HTML files of /usr/share/doc and of the packages, tags stripped
    json       package.json and other JSON documents of the packages
    manpage    `man -P cat` of section 1 and 8 pages
    code       source files (.js .ts .py .sh) of the packages, and .rs files
               of the crates in --rust-src (not this project's own src/, whose
               detector code and tests quote injection phrases)

Texts are the files' own, cut at blank lines into pieces of 2-6 KB (never more
than 8 KB). Any text that looks like it holds a credential (PRIVATE KEY, AKIA,
ghp_, xox, sk_live_, github_pat_, -----BEGIN) is skipped, and so are
duplicates, minified files and binary-looking text. Selection is random with a
fixed seed over sorted file lists, so a rerun on the same machine and the same
installs gives the same file.

Usage (the venv and DEPS are those bench/route/install.sh fills):
    /tmp/poisondeps/venv/bin/python scripts/poison-results-real.py \\
        --deps /tmp/poisondeps --deps .deps/npm \\
        --fs-server .deps/npm/node_modules/.bin/mcp-server-filesystem \\
        --git-dir .git --git-dir /work/.mirror/modelcontextprotocol+servers/repo \\
        --rust-src ~/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f \\
        bench/poison/results-real.jsonl
"""

import argparse
import gzip
import hashlib
import html.parser
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

MAX = 8192
SECRET = re.compile(r"PRIVATE KEY|AKIA|ghp_|xox|sk_live_|github_pat_|-----BEGIN")
TARGET = {  # samples wanted per kind
    "listing": 60, "gitlog": 50, "readme": 80, "changelog": 40,
    "html2text": 40, "json": 40, "manpage": 40, "code": 45,
}

rng = random.Random(20261204)
seen: set[str] = set()
out: list[dict] = []


def ok(text: str, least: int = 200) -> bool:
    if len(text.strip()) < least or len(text.encode()) > MAX:
        return False
    if SECRET.search(text) or "\x00" in text:
        return False
    if max(len(line) for line in text.splitlines() or [""]) > 1000:
        return False  # minified
    bad = sum(1 for c in text if ord(c) < 32 and c not in "\n\t\r")
    return bad == 0


def add(kind: str, origin: str, text: str) -> bool:
    text = text.strip("\n")
    if not ok(text, 20 if kind == "listing" else 200):
        return False
    h = hashlib.sha256(text.encode()).hexdigest()
    if h in seen:
        return False
    seen.add(h)
    out.append({"source": kind, "origin": origin, "text": text})
    return True


def chunks(text: str) -> list[str]:
    """Cut at blank lines into pieces of 2-6 KB, hard-cutting overlong paragraphs."""
    paras = re.split(r"(\n\s*\n)", text)
    pieces, cur, want = [], "", rng.randint(2048, 6144)
    for p in paras:
        while len(p.encode()) > MAX - 512:  # one paragraph too long: cut at lines
            cut = p.rfind("\n", 0, 4096)
            cut = cut if cut > 0 else 4096
            if cur.strip():
                pieces.append(cur)
            pieces.append(p[:cut])
            cur, p = "", p[cut:]
        if len((cur + p).encode()) > want and cur.strip():
            pieces.append(cur)
            cur, want = "", rng.randint(2048, 6144)
        cur += p
    if cur.strip():
        pieces.append(cur)
    return [c for c in pieces if len(c.encode()) <= MAX]


def read(path: Path) -> str | None:
    try:
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        return data.decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile):
        return None


def fill(kind: str, files: list[Path], per_file: int = 2, want: int | None = None,
         convert=lambda s: s, whole: bool = False) -> None:
    want = want or TARGET[kind]
    have = sum(1 for o in out if o["source"] == kind)
    files = sorted(set(files))
    rng.shuffle(files)
    for f in files:
        if have >= want:
            break
        text = read(f)
        if text is None:
            continue
        text = convert(text)
        if not text:
            continue
        pieces = [text] if whole else chunks(text)
        for piece in pieces[:per_file]:
            if have < want and add(kind, str(f), piece):
                have += 1


def walk(roots: list[Path], pred, skip_dirs=(".git",)) -> list[Path]:
    found = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in skip_dirs]
            for n in filenames:
                p = Path(dirpath, n)
                if pred(p) and p.is_file() and not p.is_symlink():
                    found.append(p)
    return found


def one_per_package(files: list[Path], base: Path | None = None) -> list[Path]:
    """Keep one file of each name per package folder (npm trees repeat packages).
    Packages are the folders under node_modules or site-packages, or under base."""
    by_key = {}
    for f in sorted(files):
        if base is not None:
            pkg = f.relative_to(base).parts[0]
        else:
            parts = f.parts
            i = max((k for k, p in enumerate(parts) if p in ("node_modules", "site-packages")), default=0)
            pkg = parts[i + 1] if i + 1 < len(parts) else ""
            if pkg.startswith("@") and i + 2 < len(parts):
                pkg += "/" + parts[i + 2]
        by_key.setdefault((pkg, f.name.lower()), f)
    return list(by_key.values())


# ---- listing: real filesystem-server answers -------------------------------

async def listings(server: str, roots: list[Path], pkg_dirs: list[Path]) -> None:
    docs = sorted(p for p in Path("/usr/share/doc").iterdir() if p.is_dir())
    params = StdioServerParameters(command=server, args=[str(r) for r in roots],
                                   env={"HOME": "/tmp"})
    calls = []
    for d in rng.sample(docs, 18):
        calls.append(("list_directory", {"path": str(d)}))
    for d in rng.sample(pkg_dirs, 14):
        calls.append(("list_directory", {"path": str(d)}))
    for d in rng.sample(docs, 6) + rng.sample(pkg_dirs, 10):
        calls.append(("list_directory_with_sizes", {"path": str(d), "sortBy": rng.choice(["name", "size"])}))
    for d in rng.sample(docs, 10) + rng.sample(pkg_dirs, 20):
        calls.append(("directory_tree", {"path": str(d)}))
    for d, pat in zip(rng.sample(pkg_dirs, 6), ["*.md", "*.d.ts", "*.json", "**/*.js", "*.map", "LICENSE*"]):
        calls.append(("search_files", {"path": str(d), "pattern": pat}))
    for d in rng.sample(pkg_dirs, 4):
        calls.append(("get_file_info", {"path": str(d / "package.json")}))
    rng.shuffle(calls)
    have = 0
    async with stdio_client(params, errlog=open(os.devnull, "w")) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            for name, args in calls:
                if have >= TARGET["listing"]:
                    break
                res = await s.call_tool(name, args)
                if res.is_error or not res.content:
                    continue
                text = res.content[0].text
                if add("listing", f"filesystem.{name} {args['path']}", text):
                    have += 1


# ---- gitlog ----------------------------------------------------------------

def gitlogs(git_dirs: list[str]) -> None:
    per = TARGET["gitlog"] // len(git_dirs) + 1
    have = 0
    for g in git_dirs:
        n = int(subprocess.run(["git", f"--git-dir={g}", "rev-list", "--count", "HEAD"],
                               capture_output=True, text=True, check=True).stdout)
        skips = sorted(rng.sample(range(0, max(n - 20, 1)), min(per * 2, max(n - 20, 1))))
        got = 0
        for k in skips:
            if got >= per or have >= TARGET["gitlog"]:
                break
            log = subprocess.run(["git", f"--git-dir={g}", "log", "--stat", "-n", "20", f"--skip={k}"],
                                 capture_output=True, text=True, errors="replace").stdout
            commits = re.split(r"(?m)^(?=commit [0-9a-f]{40})", log)
            piece = ""
            for c in commits:
                if len((piece + c).encode()) > rng.randint(3072, 7680):
                    break
                piece += c
            if piece and add("gitlog", f"git --git-dir={g} log --stat -n 20 --skip={k}", piece):
                got += 1
                have += 1


# ---- html2text --------------------------------------------------------------

class Text(html.parser.HTMLParser):
    BLOCK = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre",
             "table", "ul", "ol", "dt", "dd", "section", "article", "header", "footer", "hr"}

    def __init__(self):
        super().__init__()
        self.parts, self.skip = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "head"):
            self.skip += 1
        elif tag in self.BLOCK:
            self.parts.append("\n\n" if tag in ("p", "h1", "h2", "h3", "pre", "table") else "\n")
        elif tag == "td":
            self.parts.append("\t")

    def handle_endtag(self, tag):
        if tag in ("script", "style", "head"):
            self.skip = max(0, self.skip - 1)
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def html2text(src: str) -> str:
    p = Text()
    try:
        p.feed(src)
    except Exception:
        return ""
    text = "".join(p.parts)
    text = re.sub(r"[ \t]+\n", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip()


# ---- manpage ----------------------------------------------------------------

def manpages() -> None:
    pages = sorted({re.sub(r"\.(1|8)(\w*)?\.gz$", "", p.name) + "." + sec
                    for sec in ("1", "8")
                    for p in Path(f"/usr/share/man/man{sec}").glob("*.gz")})
    rng.shuffle(pages)
    have, families = 0, {}
    for page in pages:
        if have >= TARGET["manpage"]:
            break
        name, sec = page.rsplit(".", 1)
        family = re.split(r"[_.-]", name)[0]  # gcloud_* alone has thousands of pages
        if families.get(family, 0) >= 3:
            continue
        r = subprocess.run(["man", "-P", "cat", sec, name], capture_output=True, text=True,
                           errors="replace", env={"MANWIDTH": "80", "PATH": os.environ["PATH"],
                                                  "LANG": "C.UTF-8"})
        text = re.sub(r".\x08", "", r.stdout)
        if r.returncode or len(text) < 800:
            continue
        for piece in chunks(text)[:1]:
            if add("manpage", f"man -P cat {sec} {name}", piece):
                have += 1
                families[family] = families.get(family, 0) + 1


# ---- main -------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--deps", type=Path, action="append", required=True,
                    help="folder with installed npm/PyPI packages (repeatable)")
    ap.add_argument("--fs-server", required=True, help="mcp-server-filesystem executable")
    ap.add_argument("--git-dir", action="append", required=True, help="repeatable")
    ap.add_argument("--rust-src", type=Path, required=True,
                    help="folder of unpacked crates, e.g. ~/.cargo/registry/src/index.crates.io-*")
    a = ap.parse_args()
    deps = [d.resolve() for d in a.deps]

    nm = [p for d in deps for p in d.rglob("node_modules") if p.is_dir() and p.parent.name != "node_modules"]
    pkg_dirs = sorted({q for n in nm for q in n.iterdir() if q.is_dir() and not q.name.startswith((".", "@"))}
                      | {q for n in nm for s in n.glob("@*") for q in s.iterdir() if q.is_dir()})
    print(f"{len(pkg_dirs)} package folders", file=sys.stderr)

    anyio.run(listings, a.fs_server, [Path("/usr/share/doc")] + deps, pkg_dirs)
    gitlogs(a.git_dir)

    files = walk(deps, lambda p: p.suffix.lower() in
                 {".md", ".markdown", ".html", ".htm", ".json", ".js", ".mjs", ".ts", ".py", ".rs", ".sh"}
                 or p.name in ("METADATA", "PKG-INFO") or p.name.upper().startswith(("CHANGELOG", "HISTORY", "CHANGES")))
    low = lambda p: p.name.lower()
    fill("readme", one_per_package([f for f in files if low(f) in ("readme.md", "readme.markdown")]), per_file=2, want=60)
    meta = [f for f in files if f.name == "METADATA"]
    fill("readme", one_per_package(meta), per_file=1,
         convert=lambda s: s.split("\n\n", 1)[1] if "\n\n" in s else "")
    fill("changelog", one_per_package([f for f in files if low(f).startswith(("changelog", "history", "changes"))]),
         per_file=1, want=28)
    fill("changelog", list(Path("/usr/share/doc").glob("*/changelog.Debian.gz"))
         + list(Path("/usr/share/doc").glob("*/NEWS.Debian.gz")), per_file=1)
    fill("html2text", [f for f in files if f.suffix in (".html", ".htm") and f.stat().st_size > 1500]
         + walk([Path("/usr/share/doc")], lambda p: p.suffix in (".html", ".htm")),
         per_file=1, convert=html2text)
    fill("json", one_per_package([f for f in files if f.name == "package.json"]), want=28, whole=True)
    fill("json", [f for f in files if f.suffix == ".json" and f.name not in ("package.json", "package-lock.json")
                  and 300 < f.stat().st_size < MAX], whole=True)
    manpages()
    fill("code", one_per_package([f for f in files if f.suffix in (".py", ".ts", ".sh") and not f.name.endswith(".d.ts")]),
         per_file=1, want=20)
    fill("code", one_per_package([f for f in files if f.suffix in (".js", ".mjs")]), per_file=1, want=35)
    fill("code", one_per_package(walk([a.rust_src], lambda p: p.suffix == ".rs"), a.rust_src), per_file=1)

    with a.out.open("w") as fh:
        for o in out:
            fh.write(json.dumps(o, ensure_ascii=False) + "\n")
    counts = {}
    for o in out:
        counts[o["source"]] = counts.get(o["source"], 0) + 1
    print(f"{len(out)} samples -> {a.out}: {counts}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
