"""PERFORMANCE.md, "P3b": one large `blob` answer received by the official Python SDK client.

    .deps/venv/bin/python benches/big_answers/client.py --server PATH --bytes N [--timeout SECS]

`mcp` SDK, `stdio_client` + `ClientSession`, default settings. Same contract as
benches/big_answers.rs: spawn `PATH serve`, initialize, call `blob` once, check the text (length,
first and last 36 characters), print one JSON line
{"client","bytes","ok","seconds","error","init_seconds","cpu_seconds","peak_rss_kib"}.
`seconds` runs from the call to the checked text; CPU and peak RSS are this process's own
(`getrusage(RUSAGE_SELF)`), not the server's.
"""

import argparse
import json
import resource
import sys
import time

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

PATTERN = "abcdefghijklmnopqrstuvwxyz0123456789"
ENDS = 36


def expected(start: int, end: int) -> str:
    return "".join(PATTERN[i % len(PATTERN)] for i in range(start, end))


def check_text(text: str, n: int) -> str | None:
    """The failure, or None when the text is the blob's n characters (ASCII: bytes = chars)."""
    if len(text) != n:
        return f"received {len(text)} characters of text, expected {n}"
    head, tail = min(ENDS, n), max(0, n - ENDS)
    if text[:head] != expected(0, head):
        return "the first characters differ from the blob pattern"
    if text[tail:] != expected(tail, n):
        return "the last characters differ from the blob pattern"
    return None


def no_answer(limit: float, cpu: float) -> str:
    if cpu > limit / 2:
        return f"did not finish in {limit:.0f} s (client busy: {cpu:.1f} s CPU)"
    return f"hung: no answer after {limit:.0f} s (client idle: {cpu:.1f} s CPU)"


async def run(server: str, n: int, limit: float, out: dict) -> None:
    params = StdioServerParameters(command=server, args=["serve"])
    started = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        out["init_seconds"] = time.perf_counter() - started
        cpu = time.process_time()
        started = time.perf_counter()
        result = None
        with anyio.move_on_after(limit):
            result = await session.call_tool("blob", {"bytes": n})
        if result is None:
            out["error"] = no_answer(limit, time.process_time() - cpu)
        elif result.is_error:
            out["error"] = "tool error"
        elif len(result.content) != 1 or result.content[0].type != "text":
            out["error"] = f"unexpected content: {[c.type for c in result.content]}"
        else:
            out["error"] = check_text(result.content[0].text, n)
        out["seconds"] = time.perf_counter() - started
        # Leaving the contexts shuts the server down (close stdin, wait, kill): not measured.


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--bytes", type=int, required=True)
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    out = {"client": "python-sdk", "bytes": args.bytes, "ok": False, "seconds": None, "error": None,
           "init_seconds": None}
    started = time.perf_counter()
    try:
        anyio.run(run, args.server, args.bytes, args.timeout, out)
    except BaseException as e:  # noqa: BLE001 - any failure is the measurement's result
        if isinstance(e, KeyboardInterrupt):
            raise
        if out["seconds"] is None and out["init_seconds"] is not None:
            out["seconds"] = time.perf_counter() - started - out["init_seconds"]
        # Task groups wrap errors in ExceptionGroups: report the innermost ones.
        while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
            e = e.exceptions[0]
        out["error"] = out["error"] or f"{type(e).__name__}: {e}"
    out["ok"] = out["error"] is None
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out["cpu_seconds"] = usage.ru_utime + usage.ru_stime
    out["peak_rss_kib"] = usage.ru_maxrss  # KiB on Linux
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
