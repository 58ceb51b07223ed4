"""The SDK's exceptions, as ``ringmcp.mcp.shared.exceptions`` (``mcp.shared.exceptions``).

``MCPError`` (``McpError`` is its 1.x name) is the SDK's own class when ``mcp`` is installed:
the drop-in raises instances of it (that are also ringmcp errors) for every JSON-RPC error.
Without the SDK both names are ``ringmcp.errors.RingmcpError``. Looked up on first use, as
importing the SDK's package takes a while.
"""

from __future__ import annotations

from typing import Any

from .._compat import sdk_exception

__all__ = ["MCPError", "McpError"]


def __getattr__(name: str) -> Any:
    if name in ("MCPError", "McpError"):
        return sdk_exception(name)
    try:
        from mcp.shared import exceptions
    except ImportError:
        raise AttributeError(name) from None
    return getattr(exceptions, name)
