#!/usr/bin/env python3
"""Build the tool catalog for the semantic-router evaluation set.

Starts every MCP server listed in a spec file over stdio with the official
`mcp` Python SDK client, asks it for tools/list (following nextCursor
pagination) and writes one JSON array of

    {"server": NAME, "tool": <Tool object as tools/list returned it>}

ordered by server in spec order, then by the order the server listed its
tools.

The spec (bench/route/servers.json) is a JSON object whose "servers" array
holds entries like

    {"name": "github",
     "package": {"registry": "npm", "name": "@modelcontextprotocol/server-github",
                 "version": "2025.4.8"},
     "command": "{deps}/npm/@modelcontextprotocol/server-github/node_modules/.bin/mcp-server-github",
     "args": [],
     "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "dummy"}}

"{deps}" in command, args and env values is replaced by the --deps folder,
the one bench/route/install.sh filled. The servers get dummy credentials
only: they must answer tools/list without reaching any network service.
Each server's env is laid over the SDK's minimal inherited environment, so
no credential of the caller's environment reaches a server, and each runs
with HOME and its working folder set to a fresh temporary folder, so that
neither the caller's config nor earlier runs change what it lists, and the
files some servers write at start are removed. PYTHONHASHSEED is fixed so
that Python servers building schemas from sets list them the same each run.

Usage:
    bash bench/route/install.sh /tmp/routedeps
    /tmp/routedeps/venv/bin/python scripts/route-catalog.py \\
        --deps /tmp/routedeps bench/route/servers.json bench/route/catalog.json

A server that fails to start or to list its tools within --timeout seconds
is reported on stderr and left out; the exit status is then 1.
"""

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import PaginatedRequestParams

NAME_RE = re.compile(r"^[A-Za-z0-9-]+$")


def substitute(value: str, deps: Path) -> str:
    return value.replace("{deps}", str(deps))


def server_params(entry: dict, deps: Path, home: str) -> StdioServerParameters:
    env = {"HOME": home, "PYTHONHASHSEED": "0"}
    env |= {k: substitute(v, deps) for k, v in entry.get("env", {}).items()}
    return StdioServerParameters(
        command=substitute(entry["command"], deps),
        args=[substitute(a, deps) for a in entry.get("args", [])],
        env=env,
        cwd=home,
    )


async def list_tools(params: StdioServerParameters, errlog) -> list[dict]:
    """All tools one server lists, in its order, as JSON objects."""
    tools = []
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            cursor = None
            while True:
                page = await session.list_tools(
                    params=PaginatedRequestParams(cursor=cursor) if cursor else None
                )
                tools += [
                    t.model_dump(by_alias=True, exclude_unset=True, mode="json")
                    for t in page.tools
                ]
                cursor = page.next_cursor
                if not cursor:
                    return tools


async def catalog(spec: list[dict], deps: Path, timeout: float) -> tuple[list, list]:
    entries, failures = [], []
    for server in spec:
        name = server["name"]
        with tempfile.TemporaryFile("w+") as errlog, tempfile.TemporaryDirectory() as home:
            try:
                with anyio.fail_after(timeout):
                    tools = await list_tools(server_params(server, deps, home), errlog)
            except Exception as exc:  # any failure only drops this server
                errlog.seek(0)
                tail = errlog.read()[-1500:]
                failures.append(name)
                print(f"FAIL {name}: {exc!r}\n{tail}", file=sys.stderr)
                continue
        print(f"{name}: {len(tools)} tools", file=sys.stderr)
        entries += [{"server": name, "tool": t} for t in tools]
    return entries, failures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("spec", type=Path, help="servers.json")
    ap.add_argument("out", type=Path, help="catalog JSON to write")
    ap.add_argument("--deps", type=Path, required=True,
                    help="folder install.sh filled; replaces {deps}")
    ap.add_argument("--timeout", type=float, default=20.0,
                    help="seconds allowed per server (default 20)")
    args = ap.parse_args()

    spec = json.loads(args.spec.read_text())["servers"]
    names = [s["name"] for s in spec]
    bad = [n for n in names if not NAME_RE.match(n)]
    if bad or len(set(names)) != len(names):
        sys.exit(f"server names must be unique and match {NAME_RE.pattern}: {bad or names}")

    entries, failures = anyio.run(catalog, spec, args.deps.resolve(), args.timeout)
    args.out.write_text(json.dumps(entries, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(spec) - len(failures)} servers, {len(entries)} tools -> {args.out}",
          file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
