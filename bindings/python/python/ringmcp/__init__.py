"""ringmcp: run MCP servers from Python on the ringmcp engine.

One io_uring reactor drains every server's pipes; each server runs sandboxed (namespaces,
read-only root, cgroups, seccomp, Landlock, network only through an egress allowlist), behind a
policy gate with an audit trail; answers of any size arrive without a stall, big ones spilled to
disk and read as files.

    import asyncio, ringmcp

    async def main():
        async with ringmcp.Host() as host:
            fs = await host.spawn(ringmcp.ServerSpec("fs", "mcp-server-filesystem", ["/srv/project"],
                                                     sandbox={"workspace": "/srv/project"}))
            print([t["name"] for t in await fs.list_tools()])
            print(await fs.call_tool("read_text_file", {"path": "/srv/project/README.md"}))

    asyncio.run(main())

Every async method has a blocking twin (``host.spawn_blocking``, ``client.blocking``);
``ringmcp.mcp`` is a drop-in for the official SDK's ``ClientSession``. See docs/python.md.
"""

from __future__ import annotations

import atexit

from . import _helper, _native, errors  # noqa: F401  (_helper: the sandbox helper's path)
from ._native import (
    Client,
    Config,
    EventStream,
    Host,
    Router,
    ServerSpec,
    SpillFile,
    ToolCall,
    __version__,
)
from .errors import (
    Backpressure,
    ConfigError,
    HandshakeError,
    HostError,
    InvalidArgument,
    PolicyDenied,
    RequestTimeout,
    Restarted,
    RingmcpError,
    ServerClosed,
    ServerError,
    SpawnError,
    Unavailable,
)
from .spilled import SpilledFile

# Every host still open at interpreter exit is closed (its servers shut down, no process left).
atexit.register(_native._close_all)


def spilled_uris(result: dict) -> list[str]:
    """The ``ringmcp-spill://`` links of a result (a big answer's items, spilled to disk)."""
    return [
        c["uri"]
        for c in result.get("content") or []
        if isinstance(c, dict) and c.get("type") == "resource_link"
        and str(c.get("uri", "")).startswith("ringmcp-spill://")
    ]


def open_spilled(client: Client, uri: str) -> SpilledFile:
    """The spilled payload behind a ``ringmcp-spill://`` link, as a file object."""
    return SpilledFile(client.open_spilled(uri))


__all__ = [
    "Client",
    "Config",
    "EventStream",
    "Host",
    "Router",
    "ServerSpec",
    "SpillFile",
    "SpilledFile",
    "ToolCall",
    "__version__",
    "errors",
    "open_spilled",
    "spilled_uris",
    *errors.__all__,
]
