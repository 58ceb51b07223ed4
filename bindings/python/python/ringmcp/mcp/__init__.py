"""``ringmcp.mcp``: a drop-in for the official MCP Python SDK's client side.

Code written for the SDK switches to ringmcp by changing its imports only::

    from ringmcp.mcp import ClientSession, StdioServerParameters, types
    from ringmcp.mcp.client.stdio import stdio_client
    from ringmcp.mcp.client.streamable_http import streamable_http_client

    async with stdio_client(StdioServerParameters(command="npx", args=["some-server"])) as (read, write):
        async with ClientSession(read, write, sampling_callback=sample) as session:
            await session.initialize()
            result = await session.call_tool("search", {"q": "io_uring"})

The server then runs on ringmcp's engine: in its default sandbox (``stdio_client(...,
sandbox=False)`` for none), behind its policy gate when one is configured, with large answers
spilled to disk (``session.open_spilled(uri)``). Results are the SDK's own models when ``mcp``
(or just ``mcp_types``) is installed, plain dicts in wire form otherwise; JSON-RPC error
answers raise the SDK's ``MCPError`` (the object is also the ``ringmcp.errors`` exception it
started as).

Names of the SDK's ``mcp`` package not defined here (``Tool``, ``CallToolResult``...) are
looked up in ``ringmcp.mcp.types``.
"""

from __future__ import annotations

import importlib
from typing import Any

from ._transport import SharedHost, Transport
from .client.session import ClientSession
from .client.stdio import StdioServerParameters, stdio_client

__all__ = [
    "ClientSession",
    "MCPError",
    "McpError",
    "SharedHost",
    "StdioServerParameters",
    "Transport",
    "stdio_client",
    "types",
]


def __getattr__(name: str) -> Any:
    if name == "types":  # the SDK's models, imported when first asked for
        return importlib.import_module(".types", __name__)
    if name in ("MCPError", "McpError"):  # looked up when asked for: importing `mcp` takes a while
        from .shared import exceptions

        return getattr(exceptions, name)
    # `from mcp import Tool` & co.: the SDK's package re-exports models from mcp_types
    types = importlib.import_module(".types", __name__)
    if not name.startswith("_") and getattr(types, "AVAILABLE", False):
        try:
            return getattr(types, name)
        except AttributeError:
            pass
    raise AttributeError(f"module 'ringmcp.mcp' has no attribute {name!r}")
