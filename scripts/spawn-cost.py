#!/usr/bin/env python3
"""PERFORMANCE.md, "P6": server start-up (spawn -> initialized, measured inside `ringmcp bench --spawn-only`),
sandboxed vs unsandboxed vs bwrap, same server, variants interleaved round by round.

Usage: scripts/spawn-cost.py [ROUNDS] [BINARY]. Servers: `ringmcp serve`, and server-everything (node)
when .deps is installed, each with the default sandbox and with the CPU quota lifted (2 cores)
to separate the mechanism's cost from the 50 % CPU limit's. Prints median p50s and ratios.
"""
import json, os, shutil, statistics, subprocess, sys, tempfile

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
binary = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else "target/release/ringmcp")
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
deps = os.environ.get("RINGMCP_DEPS", os.path.join(root, ".deps"))
everything = os.path.join(deps, "npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
servers = {"ref": {"command": binary, "args": ["serve"]}}
if os.path.exists(everything):
    servers["everything"] = {"command": "node", "args": [everything, "stdio"]}
config = {"mcpServers": {}}
for name, entry in servers.items():
    config["mcpServers"][name] = entry
    config["mcpServers"][name + "-2cpu"] = dict(entry, sandbox={"cpus": 2})
cfg = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
json.dump(config, cfg)
cfg.close()
bwrap = shutil.which("bwrap")
bw = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr",
      "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin",
      "--ro-bind", os.path.dirname(binary), "/opt/r", "--proc", "/proc", "--dev", "/dev",
      "--tmpfs", "/tmp"] if bwrap else None

def run(args, n):
    out = subprocess.run([binary, "bench", "--spawn-only", "--json", "--warmup", "1", "--requests", str(n)] + args,
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{args}: {out.stderr[-400:]}")
    return json.loads(out.stdout)["latency_us"]["p50"]

variants = {}
for name in servers:
    n = 10 if name == "ref" else 5
    c = ["--config", cfg.name, "--server"]
    variants[f"{name}: unsandboxed"] = (["--no-sandbox"] + c + [name], n)
    variants[f"{name}: sandbox (default limits)"] = (c + [name], n)
    variants[f"{name}: sandbox, 2 cpus"] = (c + [name + "-2cpu"], n)
if bw:
    variants["ref: bwrap"] = (["--no-sandbox", "--"] + bw + ["/opt/r/" + os.path.basename(binary), "serve"], 10)
results = {k: [] for k in variants}
for _ in range(rounds):
    for k, (args, n) in variants.items():
        results[k].append(run(args, n))
os.unlink(cfg.name)
for k, v in results.items():
    base = statistics.median(results[k.split(":")[0] + ": unsandboxed"])
    m = statistics.median(v)
    print(f"{k:<36} p50 {m/1000:8.2f} ms   x{m/base:.2f} of unsandboxed")
