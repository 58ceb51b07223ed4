"""``streamable_http_client`` of the drop-in: a server reached over Streamable HTTP (or the
legacy HTTP+SSE transport, which ringmcp detects), by ringmcp.

    async with streamable_http_client("https://example.com/mcp") as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()

``streamablehttp_client`` (the SDK 1.x name) yields ``(read, write, get_session_id)`` as it did.
HTTP settings go to ringmcp as ``headers`` (a given ``http_client``'s own headers are taken
over) and ``oauth`` (ringmcp's OAuth 2.1 client, docs/host.md); an ``httpx.Auth`` object cannot
be carried over and is refused.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Literal
from urllib.parse import urlparse

from ..._native import Host, ServerSpec
from .._transport import SharedHost, Transport

__all__ = ["streamable_http_client", "streamablehttp_client", "DEFAULT_ERA"]

DEFAULT_ERA: Literal["auto", "legacy", "modern"] = "legacy"
"""The protocol era with ``era=None``: ``"legacy"``, the ``initialize`` handshake the SDK's
``ClientSession.initialize()`` performs (``"auto"`` probes ``server/discover`` first)."""

# httpx's own defaults, not worth sending on
_HTTPX_DEFAULT_HEADERS = {"accept", "accept-encoding", "connection", "user-agent", "host", "content-length"}


def _name(url: str) -> str:
    host = urlparse(url).hostname
    return host or "http"


def _client_headers(http_client: Any) -> dict[str, str]:
    headers: dict[str, str] = {}
    for key, value in getattr(http_client, "headers", {}).items():
        if str(key).lower() not in _HTTPX_DEFAULT_HEADERS:
            headers[str(key)] = str(value)
    return headers


def _refuse_auth(auth: Any) -> None:
    if auth is not None:
        raise TypeError(
            "ringmcp.mcp cannot carry an httpx.Auth over to ringmcp's HTTP client: pass "
            "headers={'Authorization': ...} or oauth={...} (ringmcp's OAuth 2.1 client)"
        )


def _transport(
    url: str,
    *,
    headers: Mapping[str, str] | None,
    oauth: Mapping[str, Any] | None,
    policy: Mapping[str, Any] | None,
    name: str | None,
    era: str | None,
    restart: Mapping[str, Any] | bool | None,
    description: str | None,
    host: Host | SharedHost | None,
    host_options: Mapping[str, Any] | None,
) -> Transport:
    spec_era = era or DEFAULT_ERA
    header_map = dict(headers or {}) or None

    def make_spec(spec_name: str) -> ServerSpec:
        return ServerSpec.http(
            spec_name,
            url,
            headers=header_map,
            oauth=oauth,
            policy=policy,
            era=spec_era,
            restart=restart,
            description=description,
        )

    return Transport(
        make_spec, name or _name(url), host=host, host_options=host_options, policy=policy, kind="http"
    )


@asynccontextmanager
async def streamable_http_client(
    url: str,
    *,
    http_client: Any = None,
    terminate_on_close: bool = True,
    max_sse_event_size: int | None = None,
    headers: Mapping[str, str] | None = None,
    oauth: Mapping[str, Any] | None = None,
    policy: Mapping[str, Any] | None = None,
    name: str | None = None,
    era: Literal["auto", "legacy", "modern"] | None = None,
    restart: Mapping[str, Any] | bool | None = None,
    description: str | None = None,
    host: Host | SharedHost | None = None,
    host_options: Mapping[str, Any] | None = None,
) -> AsyncGenerator[tuple[Transport, Transport], None]:
    """A Streamable HTTP server for ``ringmcp.mcp.ClientSession``: yields ``(read, write)``.

    ``http_client``: its headers are sent (its ``auth`` cannot be, and is refused);
    ``terminate_on_close`` and ``max_sse_event_size`` are accepted for compatibility (ringmcp
    ends its HTTP sessions itself, and bounds events by its ``max_frame``). ringmcp's own
    keywords: ``headers``, ``oauth``, ``policy``, ``name``, ``era`` (default ``DEFAULT_ERA``),
    ``restart``, ``description``, ``host``, ``host_options``, as for ``stdio_client``."""
    del terminate_on_close, max_sse_event_size
    all_headers: dict[str, str] = {}
    if http_client is not None:
        _refuse_auth(getattr(http_client, "auth", None))
        all_headers.update(_client_headers(http_client))
    all_headers.update(headers or {})
    transport = _transport(
        url,
        headers=all_headers,
        oauth=oauth,
        policy=policy,
        name=name,
        era=era,
        restart=restart,
        description=description,
        host=host,
        host_options=host_options,
    )
    try:
        yield transport, transport
    finally:
        await transport._close()


@asynccontextmanager
async def streamablehttp_client(
    url: str,
    headers: Mapping[str, Any] | None = None,
    timeout: Any = 30,
    sse_read_timeout: Any = 300,
    terminate_on_close: bool = True,
    httpx_client_factory: Callable[..., Any] | None = None,
    auth: Any = None,
    **ringmcp_options: Any,
) -> AsyncGenerator[tuple[Transport, Transport, Callable[[], str | None]], None]:
    """The SDK 1.x spelling: yields ``(read, write, get_session_id)``. ``timeout`` and
    ``sse_read_timeout`` are accepted for compatibility (ringmcp's per-request deadline is the
    host's ``request_timeout``, pushed back by progress); ``get_session_id()`` returns ``None``
    (ringmcp keeps the HTTP session to itself)."""
    del timeout, sse_read_timeout, httpx_client_factory
    _refuse_auth(auth)
    header_map = {str(k): str(v) for k, v in (headers or {}).items()}
    header_map.update(ringmcp_options.pop("headers", None) or {})
    async with streamable_http_client(
        url, headers=header_map, terminate_on_close=terminate_on_close, **ringmcp_options
    ) as (read, write):
        yield read, write, lambda: None
