"""The MCP wire types, as ``ringmcp.mcp.types``: the official SDK's own models.

This module re-exports ``mcp_types`` (SDK 2.x; every name is the same object as
``mcp.types.X``), or ``mcp.types`` of SDK 1.x, so code written as ``from mcp import types``
keeps working as ``from ringmcp.mcp import types``. Without the SDK installed
(``pip install 'ringmcp[mcp]'``) the module is empty and the drop-in returns plain dicts.
"""

from __future__ import annotations

from typing import Any

try:
    from mcp_types import *  # noqa: F403
    from mcp_types import __all__ as __all__  # noqa: F401
    from mcp_types import jsonrpc as jsonrpc  # noqa: F401
    from mcp_types import methods as methods  # noqa: F401
    from mcp_types import version as version  # noqa: F401

    AVAILABLE = True
except ImportError:
    try:
        from mcp.types import *  # noqa: F403
        import mcp.types as _sdk_types

        __all__ = list(getattr(_sdk_types, "__all__", [n for n in vars(_sdk_types) if not n.startswith("_")]))

        def __getattr__(name: str) -> Any:
            return getattr(_sdk_types, name)

        AVAILABLE = True
    except ImportError:
        __all__ = []
        AVAILABLE = False

        def __getattr__(name: str) -> Any:
            raise AttributeError(
                f"ringmcp.mcp.types.{name}: the MCP models come from the official SDK, which is not "
                "installed (pip install 'ringmcp[mcp]'); without it ringmcp.mcp returns plain dicts"
            )
