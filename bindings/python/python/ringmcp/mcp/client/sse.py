"""``sse_client`` of the drop-in: a server on the legacy HTTP+SSE transport (2024-11-05).

ringmcp's HTTP client detects the legacy transport by itself, so this is
``streamable_http_client`` under the SDK's older name and signature.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from .._transport import Transport
from .streamable_http import _refuse_auth, streamable_http_client

__all__ = ["sse_client"]


@asynccontextmanager
async def sse_client(
    url: str,
    headers: Mapping[str, Any] | None = None,
    timeout: float = 5,
    sse_read_timeout: float = 300,
    httpx_client_factory: Any = None,
    auth: Any = None,
    on_session_created: Any = None,
    **ringmcp_options: Any,
) -> AsyncGenerator[tuple[Transport, Transport], None]:
    """Yields ``(read, write)`` for ``ringmcp.mcp.ClientSession``; ``timeout``,
    ``sse_read_timeout``, ``httpx_client_factory`` and ``on_session_created`` are accepted for
    compatibility. ringmcp's keywords as for ``streamable_http_client``."""
    del timeout, sse_read_timeout, httpx_client_factory, on_session_created
    _refuse_auth(auth)
    header_map = {str(k): str(v) for k, v in (headers or {}).items()}
    header_map.update(ringmcp_options.pop("headers", None) or {})
    async with streamable_http_client(url, headers=header_map, **ringmcp_options) as pair:
        yield pair
