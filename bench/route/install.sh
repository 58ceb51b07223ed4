#!/usr/bin/env bash
# Installs the MCP servers pinned in SPEC (default: bench/route/servers.json,
# the one beside this script), and the `mcp`
# Python SDK that scripts/route-catalog.py drives them with, into DIR:
#
#   DIR/venv                   the client: the pinned `mcp` SDK
#   DIR/npm/<package>/         one npm prefix per npm package
#   DIR/pypi/<package>/        one venv per PyPI package
#
# Each package gets its own prefix or venv because the servers pin
# conflicting versions of their MCP SDKs (npm hoisting breaks some; the
# PyPI servers need `mcp` 1.x or 2.x). npm packages are installed with
# --ignore-scripts, so no browser or binary is downloaded.
#
# Usage: bash bench/route/install.sh DIR [SPEC]
set -euo pipefail

deps=${1:?usage: install.sh DIR [SPEC]}
spec=${2:-$(dirname "$0")/servers.json}
mcp_sdk=mcp==2.3.0

mkdir -p "$deps"
deps=$(cd "$deps" && pwd)

python3 -m venv "$deps/venv"
"$deps/venv/bin/pip" install -q "$mcp_sdk"

python3 - "$spec" <<'EOF' |
import json, sys
seen = set()
for s in json.load(open(sys.argv[1]))["servers"]:
    p = s["package"]
    key = (p["registry"], p["name"], p["version"])
    if key not in seen:
        seen.add(key)
        print(*key)
EOF
while read -r registry name version; do
    echo "== $registry $name@$version" >&2
    case $registry in
    npm)
        mkdir -p "$deps/npm/$name"
        npm install --prefix "$deps/npm/$name" --ignore-scripts --no-audit \
            --no-fund --save-exact --loglevel=error "$name@$version"
        ;;
    pypi)
        python3 -m venv "$deps/pypi/$name"
        "$deps/pypi/$name/bin/pip" install -q "$name==$version"
        ;;
    *)
        echo "unknown registry $registry for $name" >&2
        exit 1
        ;;
    esac
done
