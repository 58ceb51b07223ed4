"""ringmcp's Python package against the official Python SDK's ClientSession, side by side in one
run, on the same server (ringmcp's reference server, `ringmcp serve`, unsandboxed for both: the
SDK has no sandbox). PERFORMANCE.md, "Python (issue 36)".

    .deps/venv/bin/python bench/python/compare.py [--seconds 5] [--sizes 10e6,100e6,1073741824]
        [--sdk-timeout 120] [--json]

Per client: calls/s and p50 at c=1 and c=64 (tools/call echo, a 5-byte text); for each answer
size, the time to have the whole text in hand and the peak RSS of a process doing only that
(ringmcp: the answer spilled, then read from its file in 8 MiB chunks; the SDK: the text in the
result). Each size runs in a fresh process (RSS is the process's own peak); a client that gives
no result within --sdk-timeout is reported as such. The FFI cost: a synchronous no-op method
(`has_capability`) per call, and the Python package's c=1 p50 against the Rust client's own
(`ringmcp bench --concurrency 1`) on the same server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bindings/python/python"))
from ringmcp._helper import HELPER  # noqa: E402

SERVER = [str(HELPER), "serve"]


async def ringmcp_calls(concurrency: int, seconds: float) -> dict:
    import ringmcp

    async with ringmcp.Host() as host:
        c = await host.spawn(ringmcp.ServerSpec("ref", SERVER[0], SERVER[1:], sandbox=False))
        return await drive(lambda: c.call_tool("echo", {"text": "hello"}), concurrency, seconds)


async def sdk_calls(concurrency: int, seconds: float) -> dict:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=SERVER[0], args=SERVER[1:])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        return await drive(lambda: s.call_tool("echo", {"text": "hello"}), concurrency, seconds)


async def drive(call, concurrency: int, seconds: float) -> dict:
    for _ in range(200):  # warm up
        await call()
    latencies: list[float] = []
    end = time.perf_counter() + seconds
    cpu0 = time.process_time()

    async def worker():
        while (now := time.perf_counter()) < end:
            await call()
            latencies.append(time.perf_counter() - now)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu0
    return {
        "calls_per_s": len(latencies) / wall,
        "p50_us": statistics.median(latencies) * 1e6,
        "client_cpu_us_per_call": cpu / len(latencies) * 1e6,
        "calls": len(latencies),
    }


def big_ringmcp(size: int) -> float:
    import ringmcp

    with ringmcp.Host() as host:
        c = host.spawn_blocking(ringmcp.ServerSpec("ref", SERVER[0], SERVER[1:], sandbox=False))
        started = time.perf_counter()
        result = c.blocking.call_tool("blob", {"bytes": size})
        got = 0
        for uri in ringmcp.spilled_uris(result):
            with ringmcp.open_spilled(c, uri) as f:
                while chunk := f.read(8 << 20):
                    got += len(chunk)
        got += sum(len(x.get("text", "")) for x in result["content"] if x.get("type") == "text")
        took = time.perf_counter() - started
    assert got == size, (got, size)
    return took


def big_sdk(size: int) -> float:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def main():
        params = StdioServerParameters(command=SERVER[0], args=SERVER[1:])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            started = time.perf_counter()
            result = await s.call_tool("blob", {"bytes": size})
            took = time.perf_counter() - started
            assert len(result.content[0].text) == size
            return took
    return asyncio.run(main())


def peak_rss_mib() -> float:
    """This process's peak RSS (VmHWM: its own, where getrusage's ru_maxrss keeps the high-water
    mark of the process that exec'd it)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def one_big(client: str, size: int, timeout: float) -> dict:
    """One answer size in a fresh process: its time and the process's peak RSS."""
    code = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import compare, json; "
        f"t = compare.big_{client}({size}); "
        "print(json.dumps({'seconds': t, 'peak_rss_mib': compare.peak_rss_mib()}))"
    )
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"seconds": None, "note": f"no result within {timeout:.0f} s"}
    if out.returncode != 0:
        return {"seconds": None, "note": out.stderr.strip().splitlines()[-1] if out.stderr else "failed"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def ffi_noop(n: int = 200_000) -> float:
    import ringmcp

    with ringmcp.Host() as host:
        c = host.spawn_blocking(ringmcp.ServerSpec("ref", SERVER[0], SERVER[1:], sandbox=False))
        started = time.perf_counter()
        for _ in range(n):
            c.has_capability("tools")
        return (time.perf_counter() - started) / n * 1e9


def rust_c1_p50(seconds: float) -> float | None:
    out = subprocess.run(
        [str(HELPER), "bench", "--no-sandbox", "--concurrency", "1", "--duration", str(int(max(seconds, 1))), "--json"],
        capture_output=True, text=True,
    )
    try:
        report = json.loads(out.stdout)
    except json.JSONDecodeError:
        return None
    return report.get("latency_us", {}).get("p50")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--sizes", default="10000000,100000000,1073741824")
    ap.add_argument("--sdk-timeout", type=float, default=120)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    report: dict = {"machine": f"{os.cpu_count()} cpus", "calls": {}, "big": {}}
    for c in (1, 64):
        for name, run in (("ringmcp", ringmcp_calls), ("sdk", sdk_calls)):
            report["calls"][f"{name} c={c}"] = asyncio.run(run(c, args.seconds))
            print(f"{name:8} c={c:<3} {report['calls'][f'{name} c={c}']}", file=sys.stderr)
    report["ffi_noop_ns"] = ffi_noop()
    report["rust_c1_p50_us"] = rust_c1_p50(args.seconds)
    for size in (int(float(s)) for s in args.sizes.split(",")):
        for name in ("ringmcp", "sdk"):
            report["big"][f"{name} {size}"] = one_big(name, size, args.sdk_timeout)
            print(f"{name:8} {size:>11} {report['big'][f'{name} {size}']}", file=sys.stderr)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
