#!/usr/bin/env bash
# The profile behind PERFORMANCE.md's "P2: the servers set the ceiling": where the CPU goes at
# c=64 over 4 servers, by process/thread name (the four `ringmcp serve` servers, the reactor,
# the calling thread, the parse pool), from `perf record -g` of one `ringmcp bench` run.
#   scripts/profile-c64.sh [REQUESTS]      (default 300000; needs perf: apt-get install linux-perf)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
REQUESTS="${1:-300000}"
command -v perf >/dev/null || { echo "perf is missing: apt-get install linux-perf" >&2; exit 2; }
cargo build --release --quiet --bin ringmcp
OUT="$ROOT/target/profile-c64"
mkdir -p "$OUT"
perf record -q -g -o "$OUT/perf.data" -- \
    target/release/ringmcp bench --no-sandbox --concurrency 64 --servers 4 \
    --requests "$REQUESTS" --json >"$OUT/bench.json"
echo "bench: $(cat "$OUT/bench.json")"
# Share of samples per process and thread name: the servers are the four `ringmcp` pids other
# than the bench's own (its threads: the caller, the reactor, the parse pool).
perf report -i "$OUT/perf.data" --no-children -g none --sort pid,comm --stdio 2>/dev/null \
    | grep -E '^ +[0-9]' | head -20
