#!/usr/bin/env bash
# P3b (issue 4): one 10 MB / 100 MB / 1 GiB `blob` answer from the same `ringmcp serve`, received
# by ringmcp, rmcp (Rust SDK), the TypeScript SDK and the Python SDK, interleaved in one run.
#
#   scripts/p3b.sh [DRIVER ARGS...]     e.g. --sizes 10MB,100MB --reps 5 --limit 120
#
# Builds the ringmcp binary and the benches/p3b.rs client (release), installs the SDKs with
# scripts/deps.sh (into $RINGMCP_DEPS, default .deps/), then runs benches/p3b/driver.py, which
# prints a markdown table and writes target/p3b/<time>/{results.jsonl,table.md,clients.log}.
# A manual benchmark: it is not part of scripts/test.sh. See PERFORMANCE.md, section P3b.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

RINGMCP_DEPS="${RINGMCP_DEPS:-$ROOT/.deps}"
mkdir -p "$RINGMCP_DEPS"
RINGMCP_DEPS="$(cd "$RINGMCP_DEPS" && pwd)"
export RINGMCP_DEPS
bash "$ROOT/scripts/deps.sh" >&2
PY="$RINGMCP_DEPS/venv/bin/python"

echo "[p3b] cargo build --release --bin ringmcp" >&2
cargo build --release --bin ringmcp
echo "[p3b] cargo bench --bench p3b --no-run" >&2
P3B_BIN="$(cargo bench --bench p3b --no-run --message-format=json-render-diagnostics \
    | "$PY" -c 'import json, sys
found = [m["executable"] for m in map(json.loads, sys.stdin)
         if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "p3b" and m.get("executable")]
print(found[-1])')"

OUT="$ROOT/target/p3b/$(date -u +%Y%m%d-%H%M%S)"
COMMIT="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src benches Cargo.toml Cargo.lock || echo '+dirty')"
{
    echo "[p3b] commit $COMMIT; $(nproc) CPUs; $(uptime)"
    echo "[p3b] cargo/rustc processes running now: $(pgrep -c -x 'cargo|rustc' || true)"
    echo "[p3b] node $(node --version); $("$PY" --version); results in $OUT"
} >&2
"$PY" "$ROOT/benches/p3b/driver.py" --server "$ROOT/target/release/ringmcp" --p3b-bin "$P3B_BIN" \
    --deps "$RINGMCP_DEPS" --out "$OUT" "$@"
echo "[p3b] commit $COMMIT; raw results: ${OUT#"$ROOT"/}/results.jsonl" >&2
