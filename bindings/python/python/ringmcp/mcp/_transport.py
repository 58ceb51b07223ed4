"""What ``stdio_client`` & co. yield in the drop-in, and the host sessions can share.

The official SDK's transports yield a pair of memory streams carrying JSON-RPC messages, and
``ClientSession`` speaks the protocol over them. In ringmcp the engine speaks the protocol (on
its io_uring reactor, with its sandbox, policy gate and spill store), so the pair is only a
placeholder: both ends are one :class:`Transport` that carries the ``ringmcp.ServerSpec`` and
the host options, which ``ringmcp.mcp.ClientSession`` picks up.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .._native import Host, ServerSpec

if TYPE_CHECKING:
    from .client.session import ClientSession

logger = logging.getLogger("ringmcp.mcp")

__all__ = ["SharedHost", "Transport"]


class Transport:
    """The ``(read, write)`` pair of ``ringmcp.mcp`` transports (both ends are this object).

    It moves no messages: pass it to ``ringmcp.mcp.ClientSession``, which starts the server
    through ringmcp when ``initialize()`` is called. ``spec`` is the ``ringmcp.ServerSpec``;
    ``host`` the host to share (``None``: each session makes its own), ``host_options`` the
    keyword options of the ``ringmcp.Host`` a session makes."""

    def __init__(
        self,
        make_spec: Callable[[str], ServerSpec],
        name: str,
        *,
        host: Host | SharedHost | None = None,
        host_options: Mapping[str, Any] | None = None,
        policy: Mapping[str, Any] | None = None,
        kind: str = "stdio",
    ) -> None:
        self._make_spec = make_spec
        self.spec: ServerSpec = make_spec(name)  # fails here (ConfigError) on a bad spec
        self.host = host
        self.host_options: dict[str, Any] = dict(host_options or {})
        self.policy = policy
        self.kind = kind
        self.closed = False
        self._sessions: weakref.WeakSet[ClientSession] = weakref.WeakSet()

    @property
    def name(self) -> str:
        return self.spec.name

    def spec_named(self, name: str) -> ServerSpec:
        """The same server under another name (a shared host's names are unique)."""
        return self.spec if name == self.spec.name else self._make_spec(name)

    def _attach(self, session: ClientSession) -> None:
        if self.closed:
            raise RuntimeError("this transport's context has exited: open a new one")
        self._sessions.add(session)

    def _detach(self, session: ClientSession) -> None:
        self._sessions.discard(session)

    async def _close(self) -> None:
        """Stops what sessions left running (a session not used as a context manager)."""
        self.closed = True
        for session in list(self._sessions):
            try:
                await session._teardown()
            except Exception:  # pragma: no cover - best effort at exit
                logger.exception("stopping the server of %r", session)
        self._sessions.clear()

    # The SDK's streams' surface, so misuse says what is going on.
    def _no_messages(self, *_: Any, **__: Any) -> Any:
        raise TypeError(
            "ringmcp.mcp transports carry no messages: ringmcp's engine speaks the protocol. "
            "Pass (read, write) to ringmcp.mcp.ClientSession (not mcp.ClientSession)."
        )

    send = receive = send_nowait = receive_nowait = _no_messages

    def __aiter__(self) -> Any:
        self._no_messages()

    async def aclose(self) -> None:
        pass

    def close(self) -> None:
        pass

    async def __aenter__(self) -> Transport:
        return self

    async def __aexit__(self, *exc: object) -> None:
        pass

    def __repr__(self) -> str:
        return f"<ringmcp.mcp transport {self.spec!r}>"


def unique_name(taken: Mapping[str, Any], name: str) -> str:
    if name not in taken:
        return name
    n = 2
    while f"{name}-{n}" in taken:
        n += 1
    return f"{name}-{n}"


class SharedHost:
    """One ``ringmcp.Host`` (one reactor thread, one spill store, one policy and audit trail)
    for many ``ringmcp.mcp.ClientSession``\\ s, each keeping its own sampling and elicitation
    callbacks::

        async with SharedHost(policy=True) as host:
            async with stdio_client(params_a, host=host) as (r, w), ClientSession(r, w) as a:
                ...

    Servers started on it are named uniquely (``name``, ``name-2``, ...). The native host
    declares the sampling and elicitation capabilities to every server; a session without the
    matching callback answers as the SDK does ("not supported"). ``Host``'s keyword options
    (except ``sampling``/``elicitation``) are accepted."""

    def __init__(self, **host_options: Any) -> None:
        for key in ("sampling", "elicitation"):
            if key in host_options:
                raise TypeError(f"SharedHost routes {key} to each session's callback: no {key}= here")
        self._sessions: dict[str, ClientSession] = {}
        self._lock = threading.Lock()
        self.host = Host(sampling=self._sampling, elicitation=self._elicitation, **host_options)

    def _sampling(self, server: str, params: dict[str, Any]) -> Any:
        return self._route("sampling", server, params)

    def _elicitation(self, server: str, params: dict[str, Any]) -> Any:
        return self._route("elicitation", server, params)

    def _route(self, kind: str, server: str, params: dict[str, Any]) -> Any:
        with self._lock:
            session = self._sessions.get(server)
        if session is None:
            return {"code": -32600, "message": f"{kind.capitalize()} not supported"}
        return session._answer_server_request(kind, params)

    def _register(self, session: ClientSession, name: str) -> str:
        with self._lock:
            name = unique_name(self._sessions, name)
            self._sessions[name] = session
            return name

    def _unregister(self, name: str) -> None:
        with self._lock:
            self._sessions.pop(name, None)

    @property
    def closed(self) -> bool:
        return self.host.closed

    def close(self) -> None:
        self.host.close()

    def __enter__(self) -> SharedHost:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> SharedHost:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await close_host(self.host)

    def __repr__(self) -> str:
        return f"<ringmcp.mcp.SharedHost {len(self._sessions)} sessions>"


async def close_host(host: Any) -> None:
    """Closes a native host in a worker thread (``Host.close`` joins its reactor, with the GIL
    released), so the event loop does not wait on it.

    Not ``await host.__aexit__()``: that completes a native future as the very last thing, and a
    program that exits right after can reach interpreter finalization while the engine's thread
    is still finishing that completion (it then crashes the interpreter at exit). Closing here
    gives the engine's threads the time to finish whatever they were completing."""
    await asyncio.to_thread(host.close)
