#!/usr/bin/env bash
# Run the official MCP conformance suite (@modelcontextprotocol/conformance) in SERVER mode
# against `ringmcp gateway --http`, with one backend: tests/servers/conformance_server.py (the
# official Python SDK, serving what the suite's server scenarios need), at --spec-version
# 2025-11-25 and 2026-07-28.
#
#   1. installs the suite and Node.js 22 into .deps/conformance (scripts/conformance-install.sh,
#      shared with scripts/conformance.sh);
#   2. builds target/debug/ringmcp (cargo build --bin ringmcp), unless RINGMCP_BIN names a binary;
#   3. per version:
#      a. direct:  the suite against the backend alone (python conformance_server.py --http PORT),
#         to learn what the backend itself passes (informational; no baseline);
#      b. gateway: the suite against `ringmcp gateway --http 127.0.0.1:PORT --no-prefix --no-auth
#         --no-sandbox --config CFG`, CFG's only server being the backend over stdio, judged by
#         tests/conformance/expected-failures-server-<version>.yml;
#      results in target/conformance-server/<version>/{direct,gateway}, the logs beside them, and
#      comparison.txt: per scenario, pass/FAIL directly and through the gateway (FAIL = a check
#      with FAILURE or WARNING, as the baseline counts them).
#
# Exit status: 0 when every gateway run matches its baseline (the harness's verdict: no failure
# outside it, no entry in it that passes), 1 otherwise. Both versions always run.
# Environment: RINGMCP_BIN (gateway binary; skips cargo build), RINGMCP_DEPS (deps folder, as
# scripts/deps.sh), RINGMCP_PYTHON (default: the deps venv's python, which scripts/deps.sh
# provisions with the `mcp` SDK), CONFORMANCE_VERSIONS="2025-11-25 …", CONFORMANCE_SUITE (the
# harness's --suite: all (default: 33 scenarios at 2025-11-25, 40 at 2026-07-28), active, pending or draft).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DEPS="${RINGMCP_DEPS:-$ROOT/.deps}"
mkdir -p "$DEPS"
DEPS="$(cd "$DEPS" && pwd)"
VERSIONS="${CONFORMANCE_VERSIONS:-2025-11-25 2026-07-28}"
SUITE_NAME="${CONFORMANCE_SUITE:-all}"
BACKEND="$ROOT/tests/servers/conformance_server.py"

log() { printf '[conformance-server] %s\n' "$*" >&2; }
die() { printf '[conformance-server] ERROR: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------------------------------- install
# The same install as scripts/conformance.sh.
. "$ROOT/scripts/conformance-install.sh"

# ---------------------------------------------------------------------------------------- backend
PY="${RINGMCP_PYTHON:-$DEPS/venv/bin/python}"
[ -x "$PY" ] || die "no python at $PY (scripts/deps.sh creates .deps/venv with the mcp SDK)"
"$PY" -c 'import mcp.server.lowlevel, uvicorn' 2>/dev/null \
    || die "$PY cannot import the mcp SDK and uvicorn (scripts/deps.sh installs tests/servers/requirements.txt)"
[ -f "$BACKEND" ] || die "missing $BACKEND"

# ---------------------------------------------------------------------------------------- build
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
if [ -n "${RINGMCP_BIN:-}" ]; then
    BIN="$RINGMCP_BIN"
    log "gateway binary from RINGMCP_BIN: $BIN (no cargo build)"
else
    log "cargo build --bin ringmcp"
    cargo build --bin ringmcp >&2
    BIN="$TARGET_DIR/debug/ringmcp"
fi
[ -x "$BIN" ] || die "$BIN is not an executable"

# ---------------------------------------------------------------------------------------- helpers
TMP="$(mktemp -d "${TMPDIR:-/tmp}/ringmcp-conformance-server.XXXXXX")"
backend=""
gateway=""
# stop PID: end one process this script started, and reap it.
stop() {
    [ -n "$1" ] || return 0
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}
cleanup() {
    stop "$backend"
    backend=""
    stop "$gateway"
    gateway=""
    rm -rf "$TMP"
}
trap cleanup EXIT

free_port() {
    "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# wait_listening PID PORT: until 127.0.0.1:PORT accepts a connection (30 s at most).
wait_listening() {
    local pid="$1" port="$2" i
    for i in $(seq 1 300); do
        kill -0 "$pid" 2>/dev/null || return 1
        if "$PY" -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' \
            "$port" 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    return 1
}

# wait_gateway PID LOG: until the gateway prints its "serving ... at http://..." line (60 s at most).
wait_gateway() {
    local pid="$1" logfile="$2" i
    for i in $(seq 1 600); do
        grep -q '^ringmcp gateway: serving .* at http://' "$logfile" 2>/dev/null && return 0
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

# run_suite URL OUTDIR LOG [harness args...]: prints the harness's exit status.
run_suite() {
    local url="$1" outdir="$2" logfile="$3" rc=0
    shift 3
    "$NODE" "$SUITE" server --url "$url" --suite "$SUITE_NAME" -o "$outdir" "$@" >"$logfile" 2>&1 || rc=$?
    echo "$rc"
}

# verdicts DIR: "scenario pass|FAIL" per scenario result under DIR (FAIL = a FAILURE or WARNING
# check, which is what the baseline counts as failed).
verdicts() {
    "$PY" - "$1" <<'EOF'
import glob, json, os, re, sys
seen = {}
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*", "checks.json"))):
    name = re.sub(r"-\d{4}-\d\d-\d\dT.*$", "", os.path.basename(os.path.dirname(path)))
    name = name.removeprefix("server-")
    checks = json.load(open(path))
    bad = any(c.get("status") in ("FAILURE", "WARNING") for c in checks)
    seen[name] = "FAIL" if bad else "pass"
for name, verdict in seen.items():
    print(name, verdict)
EOF
}

# ---------------------------------------------------------------------------------------- run
RESULTS="$TARGET_DIR/conformance-server"
status=0
SUMMARY=()
for version in $VERSIONS; do
    baseline="$PINS/expected-failures-server-$version.yml"
    [ -f "$baseline" ] || die "no baseline $baseline"
    out="$RESULTS/$version"
    rm -rf "$out"
    mkdir -p "$out"

    # a. the backend alone, over Streamable HTTP
    port="$(free_port)"
    "$PY" "$BACKEND" --http "$port" >"$out/direct-backend.log" 2>&1 &
    backend=$!
    wait_listening "$backend" "$port" || die "the backend did not listen on $port (see $out/direct-backend.log)"
    log "$version direct: suite $SUITE_NAME against the backend at http://127.0.0.1:$port/mcp"
    started=$SECONDS
    direct_rc="$(run_suite "http://127.0.0.1:$port/mcp" "$out/direct" "$out/direct.log" --spec-version "$version")"
    direct_secs=$((SECONDS - started))
    stop "$backend"
    backend=""

    # b. the same backend behind the gateway (stdio), the gateway over Streamable HTTP
    cfgdir="$TMP/$version"
    mkdir -p "$cfgdir"
    "$PY" - "$cfgdir/config.json" "$PY" "$BACKEND" <<'EOF'
import json, sys
path, python, script = sys.argv[1:4]
json.dump({"mcpServers": {"conformance": {"command": python, "args": [script]}}}, open(path, "w"), indent=2)
EOF
    port="$(free_port)"
    "$BIN" gateway --http "127.0.0.1:$port" --no-prefix --no-auth --no-sandbox --config "$cfgdir/config.json" \
        >"$out/gateway-stdout.log" 2>"$out/gateway.log" &
    gateway=$!
    wait_gateway "$gateway" "$out/gateway.log" || die "the gateway did not come up (see $out/gateway.log)"
    log "$version gateway: suite $SUITE_NAME against $BIN gateway at http://127.0.0.1:$port/mcp"
    started=$SECONDS
    gateway_rc="$(run_suite "http://127.0.0.1:$port/mcp" "$out/gateway" "$out/gateway-run.log" \
        --spec-version "$version" --expected-failures "$baseline")"
    gateway_secs=$((SECONDS - started))
    stop "$gateway"
    gateway=""

    # The harness's baseline verdict, then the side-by-side comparison.
    echo
    echo "== $version through the gateway (baseline $(basename "$baseline"))"
    sed -n '/=== SUMMARY ===/,$p' "$out/gateway-run.log" | sed 's/\x1b\[[0-9;]*m//g' | grep -v '^✓ ' || true
    LC_ALL=C join -a1 -a2 -e '-' -o 0,1.2,2.2 <(verdicts "$out/direct" | LC_ALL=C sort) \
        <(verdicts "$out/gateway" | LC_ALL=C sort) \
        | awk 'BEGIN { printf "%-48s %-7s %s\n", "scenario", "direct", "gateway" } { printf "%-48s %-7s %s\n", $1, $2, $3 }' \
        >"$out/comparison.txt"
    direct_pass="$(awk 'NR > 1 && $2 == "pass"' "$out/comparison.txt" | wc -l)"
    gateway_pass="$(awk 'NR > 1 && $3 == "pass"' "$out/comparison.txt" | wc -l)"
    total="$(awk 'NR > 1' "$out/comparison.txt" | wc -l)"
    only_gateway="$(awk 'NR > 1 && $2 == "pass" && $3 != "pass" { print $1 }' "$out/comparison.txt" | tr '\n' ' ')"
    echo "failing only through the gateway: ${only_gateway:-none}"
    verdict="as expected"
    if [ "$gateway_rc" != 0 ]; then
        verdict="UNEXPECTED (exit $gateway_rc; see $out/gateway-run.log)"
        status=1
    fi
    SUMMARY+=("$(printf '%s suite %s: direct %d/%d passed (%ds, exit %s), gateway %d/%d passed (%ds), %s' \
        "$version" "$SUITE_NAME" "$direct_pass" "$total" "$direct_secs" "$direct_rc" \
        "$gateway_pass" "$total" "$gateway_secs" "$verdict")")
done

echo
echo "MCP conformance (server mode, ringmcp gateway in front of tests/servers/conformance_server.py):"
printf '  %s\n' "${SUMMARY[@]}"
echo "  details: $RESULTS/<version>/comparison.txt"
exit "$status"
