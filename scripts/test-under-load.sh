#!/usr/bin/env bash
# Runs scripts/test.sh RUNS times in a row (default 5) while a release build of a copy of this
# repository keeps both cores busy in the background, and prints each run's totals: the suite
# must pass every time, under load, or it will fail CI by chance.
#   scripts/test-under-load.sh [RUNS]
# Logs: target/under-load/run-N.log; the load's own build in target/under-load/load.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
RUNS="${1:-5}"
OUT="$ROOT/target/under-load"
mkdir -p "$OUT"
COPY="$OUT/load-src"
rm -rf "$COPY"
git worktree prune
git archive --format=tar HEAD | (mkdir -p "$COPY" && tar -x -C "$COPY")

(
    while true; do
        cargo build --release --quiet --manifest-path "$COPY/Cargo.toml" \
            --target-dir "$OUT/load" >/dev/null 2>&1
        cargo clean --quiet --manifest-path "$COPY/Cargo.toml" --target-dir "$OUT/load" \
            >/dev/null 2>&1
    done
) &
LOAD=$!
trap 'kill -- -$LOAD 2>/dev/null; kill $LOAD 2>/dev/null; pkill -f "$OUT/load" 2>/dev/null' EXIT

failed=0
for i in $(seq "$RUNS"); do
    start=$SECONDS
    bash scripts/test.sh >"$OUT/run-$i.log" 2>&1
    rc=$?
    [ "$rc" = 0 ] || failed=$((failed + 1))
    printf 'run %d: exit %d in %ds, load %s — %s\n' "$i" "$rc" "$((SECONDS - start))" \
        "$(cut -d' ' -f1-3 /proc/loadavg)" "$(tail -n 1 "$OUT/run-$i.log")"
done
echo "$RUNS runs under load, $failed failed"
[ "$failed" = 0 ]
