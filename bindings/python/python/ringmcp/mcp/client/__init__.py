"""``ringmcp.mcp.client``: the drop-in's ``mcp.client`` (``ClientSession`` and the transports
in ``.stdio``, ``.streamable_http`` and ``.sse``)."""

from .session import ClientSession, RequestContext

ClientRequestContext = RequestContext
"""The callbacks' context when the SDK's own class cannot be had (they get the SDK's
``ClientRequestContext`` when it is installed)."""

__all__ = ["ClientRequestContext", "ClientSession"]
