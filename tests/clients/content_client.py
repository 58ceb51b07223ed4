"""The official Python SDK's ClientSession against `ringmcp gateway` (tests/integration/content.rs):
injected instructions in results flagged, redacted and blocked as each backend's policy says,
and after the flagged result a destructive call on another backend asks the client
(elicitation), whose decline leaves that backend untouched.

Usage: python content_client.py GATEWAY_BIN CONFIG ROOT INJECTION
Prints "ok STEP" per step; the first failed check raises (exit 1).
"""

import os
import sys

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

BIN, CONFIG, ROOT, INJECTION = sys.argv[1:5]


def ok(step):
    print(f"ok {step}", flush=True)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def text_of(result):
    return "\n".join(getattr(c, "text", "") or "" for c in result.content)


def marker(result):
    return (result.model_dump(by_alias=True).get("_meta") or {}).get("io.ringmcp/untrusted") or {}


async def main():
    asked = []

    async def elicitation(context, params):
        asked.append(params.message)
        return types.ElicitResult(action="decline")

    server = StdioServerParameters(command=BIN, args=["gateway", "--config", CONFIG])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, elicitation_callback=elicitation) as session:
            await session.initialize()
            r = await session.call_tool("flagged__echo", {"text": INJECTION})
            check(marker(r).get("action") == "flag", f"flag marker: {r}")
            check("[ringmcp warning]" in text_of(r), text_of(r))
            ok("flagged")
            r = await session.call_tool("redacted__echo", {"text": INJECTION})
            check("ignore all previous" not in text_of(r), text_of(r))
            check("parcel left the depot" in text_of(r), text_of(r))
            check(marker(r).get("action") == "redact", f"redact marker: {r}")
            ok("redacted")
            r = await session.call_tool("blocked__echo", {"text": INJECTION})
            check(r.is_error, f"blocked: {r}")
            check("ignore all previous" not in text_of(r), text_of(r))
            ok("blocked")
            target = os.path.join(ROOT, "after.txt")
            try:
                r = await session.call_tool("fs__write_file", {"path": target, "content": "x"})
                check(r.is_error, f"the call after untrusted content ran: {r}")
            except Exception as e:  # a JSON-RPC error: refused
                check("denied" in str(e) or "refused" in str(e) or "approv" in str(e), str(e))
            check(len(asked) == 1 and "untrusted" in asked[0], f"asked: {asked}")
            check(not os.path.exists(target), "a declined call reached the server")
            ok("declined after untrusted content")
    ok("closed")


anyio.run(main)
