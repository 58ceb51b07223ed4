#!/usr/bin/env bash
# PERFORMANCE.md, "P3b": one 10 MB / 100 MB / 1 GiB `blob` answer from the same `ringmcp serve`, received
# by ringmcp, rmcp (Rust SDK), the TypeScript SDK and the Python SDK, interleaved in one run.
#
#   scripts/big-answers.sh [DRIVER ARGS...]     e.g. --sizes 10MB,100MB --reps 5 --limit 120
#
# Builds the ringmcp binary and the benches/big_answers.rs client (release), installs the SDKs with
# scripts/deps.sh (into $RINGMCP_DEPS, default .deps/), then runs benches/big_answers/driver.py, which
# prints a markdown table and writes target/big-answers/<time>/{results.jsonl,table.md,clients.log}.
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

echo "[big-answers] cargo build --release --bin ringmcp" >&2
cargo build --release --bin ringmcp
echo "[big-answers] cargo bench --bench big_answers --no-run" >&2
CLIENT_BIN="$(cargo bench --bench big_answers --no-run --message-format=json-render-diagnostics \
    | "$PY" -c 'import json, sys
found = [m["executable"] for m in map(json.loads, sys.stdin)
         if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "big_answers" and m.get("executable")]
print(found[-1])')"

OUT="$ROOT/target/big-answers/$(date -u +%Y%m%d-%H%M%S)"
COMMIT="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src benches Cargo.toml Cargo.lock || echo '+dirty')"
{
    echo "[big-answers] commit $COMMIT; $(nproc) CPUs; $(uptime)"
    echo "[big-answers] cargo/rustc processes running now: $(pgrep -c -x 'cargo|rustc' || true)"
    echo "[big-answers] node $(node --version); $("$PY" --version); results in $OUT"
} >&2
"$PY" "$ROOT/benches/big_answers/driver.py" --server "$ROOT/target/release/ringmcp" --client-bin "$CLIENT_BIN" \
    --deps "$RINGMCP_DEPS" --out "$OUT" "$@"
echo "[big-answers] commit $COMMIT; raw results: ${OUT#"$ROOT"/}/results.jsonl" >&2
