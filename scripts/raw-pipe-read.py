#!/usr/bin/env python3
"""The raw-pipe denominator of PERFORMANCE.md's P3: how fast one `blob` answer of BYTES bytes
can be read from `ringmcp serve` over a 1 MiB pipe with plain 1 MiB reads, no parsing.

    scripts/raw-pipe-read.py RINGMCP_BINARY [BYTES] [RUNS]   (defaults: 1 GiB, 3 runs)

Starts one unsandboxed `ringmcp serve`, does the 2025-11-25 handshake, then for each run sends
one tools/call and times from the request's write to the answer's last byte. Prints one JSON
line per run and the median.
"""

import fcntl
import json
import os
import statistics
import subprocess
import sys
import time

F_SETPIPE_SZ = 1031
READ = 1 << 20


def main():
    binary = sys.argv[1]
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 30
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    server = subprocess.Popen([binary, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out = server.stdout.fileno()
    fcntl.fcntl(out, F_SETPIPE_SZ, 1 << 20)

    def send(message):
        server.stdin.write((json.dumps(message) + "\n").encode())
        server.stdin.flush()

    def read_line():
        """Reads until the next newline; returns the line's length and trailing bytes."""
        total, chunk = 0, b""
        while True:
            chunk = os.read(out, READ)
            if not chunk:
                raise SystemExit("ringmcp serve closed its stdout")
            newline = chunk.find(b"\n")
            if newline >= 0:
                return total + newline, chunk[newline + 1:]
            total += len(chunk)

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
          "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                     "clientInfo": {"name": "raw-pipe-read", "version": "1"}}})
    _, rest = read_line()
    assert not rest, "one answer per request"
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    times = []
    for i in range(runs):
        started = time.perf_counter()
        send({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
              "params": {"name": "blob", "arguments": {"bytes": size}}})
        length, rest = read_line()
        took = time.perf_counter() - started
        assert not rest and length > size, (length, rest)
        times.append(took)
        print(json.dumps({"run": i + 1, "bytes": length + 1, "seconds": round(took, 4),
                          "gb_per_s": round((length + 1) / took / 1e9, 3)}))
    server.stdin.close()
    server.wait()
    median = statistics.median(times)
    print(json.dumps({"median_seconds": round(median, 4),
                      "median_gb_per_s": round(size / median / 1e9, 3)}))


if __name__ == "__main__":
    main()
