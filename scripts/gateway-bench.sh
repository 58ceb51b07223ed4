#!/usr/bin/env bash
# The gateway's c=1 and c=64 calls/s and latency, over stdio and over HTTP, for one or more
# ringmcp binaries side by side (interleaved rounds). PERFORMANCE.md, "The gateway".
#
# Usage: scripts/gateway-bench.sh [--rounds N] [--duration S] BIN [BIN...]
# Prints one JSON line per run: {"bin", "transport", "c", "round", "bench": bench --json}; a run
# with any failed call stops the script (a rate of errors is not a rate of calls).
set -euo pipefail
rounds=2 duration=8
while [[ $# -gt 0 ]]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    *) break ;;
  esac
done
[[ $# -ge 1 ]] || { echo "usage: $0 [--rounds N] [--duration S] BIN [BIN...]" >&2; exit 2; }
dir=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$dir"' EXIT
check() { python3 -c 'import json,sys; e=json.loads(sys.argv[1]).get("errors"); sys.exit(f"failed calls: {e}" if e else 0)' "$1"; }
port_of() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
for r in $(seq 1 "$rounds"); do
  for bin in "$@"; do
    bin=$(realpath "$bin")
    echo "{\"mcpServers\": {\"ref\": {\"command\": \"$bin\", \"args\": [\"serve\"]}}}" > "$dir/one.json"
    for c in 1 64; do
      out=$("$bin" bench --no-sandbox --tool ref__echo --args '{"text":"hello"}' --concurrency "$c" --duration "$duration" --json \
        -- "$bin" gateway --config "$dir/one.json")
      check "$out"
      echo "{\"bin\": \"$bin\", \"transport\": \"stdio\", \"c\": $c, \"round\": $r, \"bench\": $out}"
      port=$(port_of)
      "$bin" gateway --config "$dir/one.json" --http "127.0.0.1:$port" --no-auth 2>"$dir/gw.err" &
      gw=$!
      for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.05
      done
      echo "{\"mcpServers\": {\"gw\": {\"url\": \"http://127.0.0.1:$port/mcp\"}}}" > "$dir/http.json"
      out=$("$bin" bench --tool ref__echo --args '{"text":"hello"}' --concurrency "$c" --duration "$duration" --json \
        --config "$dir/http.json" --server gw)
      check "$out"
      echo "{\"bin\": \"$bin\", \"transport\": \"http\", \"c\": $c, \"round\": $r, \"bench\": $out}"
      kill "$gw"; wait "$gw" 2>/dev/null || true
    done
  done
done
