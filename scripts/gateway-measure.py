#!/usr/bin/env python3
"""Measures of `ringmcp gateway` (PERFORMANCE.md, "Gateway"): start-up with N sandboxed
backends until tools/list answers, and the gateway's peak RSS while a backend returns a 1 GiB
result (read back by reference, never inline).

Usage: scripts/gateway-measure.py [RINGMCP_BIN] [--backends N] [--bytes B] [--runs R]
Prints one JSON object per measure.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("bin", nargs="?", default="target/release/ringmcp")
ap.add_argument("--backends", type=int, default=10)
ap.add_argument("--bytes", type=int, default=1 << 30)
ap.add_argument("--runs", type=int, default=5)
args = ap.parse_args()
BIN = os.path.abspath(args.bin)


class Gateway:
    def __init__(self, config, extra=()):
        self.p = subprocess.Popen([BIN, "gateway", "--config", config, *extra],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        self.id = 0

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def request(self, method, params=None):
        self.id += 1
        self.send({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params or {}})
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("the gateway closed stdout")
            msg = json.loads(line)
            if msg.get("id") == self.id:
                return msg

    def initialize(self):
        r = self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                        "clientInfo": {"name": "measure", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r

    def hwm_kib(self):
        with open(f"/proc/{self.p.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def config(path, n):
    servers = {f"ref{i}": {"command": BIN, "args": ["serve"]} for i in range(n)}
    with open(path, "w") as f:
        json.dump({"mcpServers": servers}, f)


with tempfile.TemporaryDirectory() as tmp:
    many = os.path.join(tmp, "many.json")
    config(many, args.backends)
    times = []
    for _ in range(args.runs):
        t0 = time.monotonic()
        g = Gateway(many)
        g.initialize()
        tools = g.request("tools/list")["result"]["tools"]
        times.append((time.monotonic() - t0) * 1000)
        assert len(tools) > args.backends, len(tools)
        g.close()
    print(json.dumps({"measure": "startup_until_tools_list_ms", "backends": args.backends,
                      "sandboxed": True, "runs": args.runs,
                      "median_ms": round(statistics.median(times), 1),
                      "min_ms": round(min(times), 1), "max_ms": round(max(times), 1)}))

    one = os.path.join(tmp, "one.json")
    config(one, 1)
    g = Gateway(one)
    g.initialize()
    idle = g.hwm_kib()
    t0 = time.monotonic()
    r = g.request("tools/call", {"name": "ref0__blob", "arguments": {"bytes": args.bytes}})
    took = time.monotonic() - t0
    link = [c for c in r["result"]["content"] if c["type"] == "resource_link"][0]
    assert link["size"] == args.bytes, link
    part = g.request("resources/read", {"uri": link["uri"] + "?offset=0&length=1048576"})
    assert part["result"]["contents"][0]["blob"]
    peak = g.hwm_kib()
    g.close()
    print(json.dumps({"measure": "big_result_peak_rss", "bytes": args.bytes,
                      "gateway_peak_rss_mib": round(peak / 1024, 1),
                      "gateway_rss_before_mib": round(idle / 1024, 1),
                      "call_seconds": round(took, 2)}))
