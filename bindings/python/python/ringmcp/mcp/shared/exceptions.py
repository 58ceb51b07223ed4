"""The SDK's exceptions, as ``ringmcp.mcp.shared.exceptions`` (``mcp.shared.exceptions``).

``MCPError`` (``McpError`` is its 1.x name) is the SDK's own class when ``mcp`` is installed:
the drop-in raises instances of it (that are also ringmcp errors) for every JSON-RPC error.
Without the SDK both names are ``ringmcp.errors.RingmcpError``.
"""

from __future__ import annotations

from typing import Any

from .._compat import sdk_exception as _sdk_exception

MCPError: Any = _sdk_exception("MCPError")
McpError: Any = _sdk_exception("McpError")


def __getattr__(name: str) -> Any:
    try:
        from mcp.shared import exceptions
    except ImportError:
        raise AttributeError(name) from None
    return getattr(exceptions, name)


__all__ = ["MCPError", "McpError"]
