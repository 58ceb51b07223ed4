#!/usr/bin/env bash
# Run the official MCP conformance suite (@modelcontextprotocol/conformance) against ringmcp's
# client (`ringmcp conformance-client`, over Streamable HTTP), at --spec-version 2025-11-25 and
# 2026-07-28, each with its baseline tests/conformance/expected-failures-<version>.yml.
#
#   1. installs the suite and a Node.js 22 into .deps/conformance (scripts/conformance-install.sh,
#      shared with scripts/conformance-server.sh);
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
VERSIONS="${CONFORMANCE_VERSIONS:-2025-11-25 2026-07-28}"

log() { printf '[conformance] %s\n' "$*" >&2; }
die() { printf '[conformance] ERROR: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------------------------------- install
. "$ROOT/scripts/conformance-install.sh"

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
