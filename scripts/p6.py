#!/usr/bin/env python3
"""P6: sandboxed spawn -> initialized vs unsandboxed vs bwrap, same server, interleaved runs.

Each run is one `ringmcp inspect --json` (spawn, initialize, list tools/resources/prompts,
shut down) against `ringmcp serve`; the three variants alternate so they see the same machine
state. Prints the median wall time of each and the ratios. Usage: scripts/p6.py [RUNS] [BINARY]
"""
import json, shutil, statistics, subprocess, sys, time

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 30
binary = sys.argv[2] if len(sys.argv) > 2 else "target/release/ringmcp"
bwrap = shutil.which("bwrap")
variants = {
    "unsandboxed": [binary, "inspect", "--json", "--no-sandbox"],
    "ringmcp sandbox": [binary, "inspect", "--json"],
}
if bwrap:
    # bwrap with comparable namespaces and a read-only view of the host (its usual MCP setup).
    variants["bwrap"] = [binary, "inspect", "--json", "--no-sandbox", "--", bwrap,
                         "--unshare-all", "--die-with-parent", "--new-session",
                         "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib",
                         "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin",
                         "--ro-bind", binary.rsplit("/", 1)[0] if "/" in binary else ".", "/opt/ringmcp",
                         "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
                         "/opt/ringmcp/" + binary.rsplit("/", 1)[-1], "serve"]
times = {k: [] for k in variants}
for i in range(runs):
    for name, cmd in variants.items():
        t = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True)
        dt = time.perf_counter() - t
        if out.returncode != 0:
            sys.exit(f"{name} failed: {out.stderr.decode()[-500:]}")
        json.loads(out.stdout)
        times[name].append(dt)
base = statistics.median(times["unsandboxed"])
for name, ts in times.items():
    m = statistics.median(ts)
    print(f"{name:<16} median {m*1000:7.1f} ms  (min {min(ts)*1000:.1f}, max {max(ts)*1000:.1f})  x{m/base:.2f} of unsandboxed")
