#!/usr/bin/env bash
# Run the whole test suite: external test deps (scripts/deps.sh), then
# `cargo test --all-targets`, `cargo test --doc`, and the Python package's pytest suite.
# Extra arguments go to the `cargo test --all-targets` run, e.g. `scripts/test.sh -- --nocapture`.
# Tests find the third-party MCP servers through RINGMCP_DEPS (absolute path of .deps/).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

RINGMCP_DEPS="${RINGMCP_DEPS:-$ROOT/.deps}"
mkdir -p "$RINGMCP_DEPS"
RINGMCP_DEPS="$(cd "$RINGMCP_DEPS" && pwd)"
export RINGMCP_DEPS
# Tests that need these dependencies fail (instead of skipping) when they are missing
# (ringmcp::testkit::skip reads it).
export RINGMCP_REQUIRE_DEPS=1
# Every run-time skip (a missing kernel feature or permission) is appended here, so the totals
# below count those tests as skipped, not passed (libtest has no run-time "ignored").
mkdir -p "$ROOT/target"
export RINGMCP_SKIP_LOG="$ROOT/target/ringmcp-skips.log"
: >"$RINGMCP_SKIP_LOG"

bash "$ROOT/scripts/deps.sh"

# cargo's output is copied to a log so the per-binary "test result:" lines can be added up at the end.
LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT

status=0
echo "+ cargo test --all-targets --no-fail-fast $*"
cargo test --all-targets --no-fail-fast "$@" 2>&1 | tee -a "$LOG" || status=1

if [ -f src/lib.rs ] || grep -q '^\[lib\]' Cargo.toml; then
    echo "+ cargo test --doc"
    cargo test --doc 2>&1 | tee -a "$LOG" || status=1
fi

# The Python package (bindings/python): its test tools installed into the venv that holds the
# official `mcp` SDK; the ringmcp binary it ships and its wheel built with the `pytest` profile
# (optimised, no debug info) and installed there as a user would install it; then pytest.
VENV="$RINGMCP_DEPS/venv"
PYLOG="$(mktemp)"
trap 'rm -f "$LOG" "$PYLOG"' EXIT
echo "+ python package: build (cargo profile pytest) and pytest bindings/python/tests"
if "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
        --require-virtualenv -r bindings/python/requirements-test.txt \
    && "$VENV/bin/python" bindings/python/build_backend.py pytest \
    && rm -rf target/python-wheel \
    && VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH" "$VENV/bin/maturin" build --profile pytest \
        -m bindings/python/Cargo.toml -o target/python-wheel \
    && "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
        --require-virtualenv --force-reinstall --no-deps target/python-wheel/ringmcp-*.whl; then
    "$VENV/bin/python" -m pytest -q -p no:cacheprovider bindings/python/tests 2>&1 | tee "$PYLOG" \
        || status=1
else
    echo "scripts/test.sh: building the Python package FAILED"
    echo "1 failed (the Python package did not build)" >"$PYLOG"
    status=1
fi
# pytest's closing line ("3 passed, 1 failed, 2 skipped in 9.1s"), as counts for the totals.
py_count() { tail -n 1 "$PYLOG" | grep -oE "[0-9]+ $1" | grep -oE '^[0-9]+' || echo 0; }
py_passed="$(py_count passed)"
py_failed="$(( $(py_count failed) + $(py_count error) ))"
py_skipped="$(py_count skipped)"

# Tests that skipped at run time: listed, and moved from "passed" to "skipped" in the totals
# (a test that skipped a part and then failed stays "failed").
skipped_tests="$(cut -f1 "$RINGMCP_SKIP_LOG" | sort -u)"
failed_tests="$(sed -n 's/^test \(.*\) \.\.\. FAILED$/\1/p' "$LOG" | sort -u)"
run_skips="$(comm -23 <(printf '%s\n' "$skipped_tests" | sed '/^$/d') \
    <(printf '%s\n' "$failed_tests" | sed '/^$/d') | wc -l)"
if [ -s "$RINGMCP_SKIP_LOG" ]; then
    echo "skipped at run time (test, kind, reason):"
    sort -u "$RINGMCP_SKIP_LOG" | sed 's/^/  /'
fi

# Totals over every test binary (unit, integration, doc). Written last so it is the closing line,
# and also saved for .ci/run, which prints it again after its timing summary. Only lines that
# start with "test result:" count (a wrapper test quotes its child's output indented). A binary
# that said "running N tests" and never gave its "test result:" crashed: its N tests count as
# failed, and it is named.
totals="$(awk -v runskips="$run_skips" -v pyp="$py_passed" -v pyf="$py_failed" -v pys="$py_skipped" '
    function close_binary() {
        if (running != "" && !reported) { f += running; crashed = crashed " " binary ", " running " tests;" }
        running = ""; reported = 0
    }
    /^ *Running / || /^ *Doc-tests / { close_binary(); binary = $0; sub(/^ *(Running|Doc-tests) /, "", binary) }
    /^running [0-9]+ tests?$/ { running = $2 }
    /^test result: / {
        reported = 1
        for (i = 1; i <= NF; i++) {
            if ($(i+1) ~ /^passed/)  p += $i
            if ($(i+1) ~ /^failed/)  f += $i
            if ($(i+1) ~ /^ignored/) s += $i
        }
    }
    END {
        close_binary()
        printf "tests: %d passed, %d failed, %d skipped", p - runskips + pyp, f + pyf, s + runskips + pys
        if (crashed != "") printf " (crashed, no result:%s)", crashed
    }' "$LOG")"
mkdir -p "$ROOT/target"
echo "$totals" >"$ROOT/target/ringmcp-test-summary.txt"
[ "$status" = 0 ] || echo "scripts/test.sh: a cargo test run FAILED (see above)"
echo "$totals"
exit "$status"
