"""Minimal MCP server on the official Python SDK (mcp 2.x), stdio transport.

Used by ringmcp's integration tests as a second, independent server implementation.

Tools:
  echo(text: str) -> str      returns text unchanged
  add(a: int, b: int) -> int  returns a + b

Run:  .deps/venv/bin/python tests/servers/py_echo_server.py
The SDK logs to stderr only; stdout carries nothing but JSON-RPC lines.
"""

from mcp.server.mcpserver import MCPServer

server = MCPServer(name="py-echo-server", version="0.1.0")


@server.tool()
def echo(text: str) -> str:
    """Return the given text unchanged."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Return the sum of two integers."""
    return a + b


if __name__ == "__main__":
    server.run("stdio")
