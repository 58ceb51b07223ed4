"""Minimal MCP server on the official Python SDK that reaches the network (for ringmcp's egress
tests): it is run sandboxed, and everything it opens goes through ringmcp's egress proxy.

Tools:
  fetch(url: str) -> str   GET url with urllib (honouring HTTP_PROXY), the body or "error: ..."

Run:  .deps/venv/bin/python tests/servers/py_net_server.py
"""

import urllib.error
import urllib.request

from mcp.server.mcpserver import MCPServer

server = MCPServer(name="py-net-server", version="0.1.0")


@server.tool()
def fetch(url: str) -> str:
    """Fetch a URL and return its body."""
    try:
        with urllib.request.urlopen(url, timeout=20) as r:
            return r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return f"error: HTTP {e.code}: {e.read().decode('utf-8', 'replace')}"
    except Exception as e:  # noqa: BLE001 - the test reads the words
        return f"error: {type(e).__name__}: {e}"


if __name__ == "__main__":
    server.run("stdio")
