"""The exceptions ringmcp raises: one base class, one subclass per kind of failure.

Every exception carries what the engine knows about the failure as attributes (``None`` when it
does not apply):

- ``fault``: who is at fault: ``"peer"`` (the server), ``"busy"`` (back-pressure), ``"caller"``,
  ``"policy"``, ``"sandbox"``, ``"io"`` or ``"internal"``;
- ``server``: the server's name;
- ``code``, ``data``: the JSON-RPC error the failure maps to (what ``ringmcp gateway`` would
  answer an MCP client with).
"""

from __future__ import annotations

from typing import Any


class RingmcpError(Exception):
    """Base class of every ringmcp error."""

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        details = details or {}
        self.message: str = message
        self.fault: str | None = details.get("fault")
        self.server: str | None = details.get("server")
        self.code: int | None = details.get("code")
        self.data: Any = details.get("data")
        self._details = details

    def __reduce__(self):  # picklable across processes
        return (type(self), (self.message, self._details))


class ServerError(RingmcpError):
    """A request to a server produced no result: an error answer, a protocol violation, the
    server's exit or a timeout. ``stderr`` holds the last lines the server wrote to stderr
    (oldest first), when the failure is its end."""

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message, details)
        self.stderr: list[str] = list((details or {}).get("stderr") or [])


class RequestTimeout(ServerError, TimeoutError):
    """The server did not answer within the request's deadline (the request was cancelled on the
    server)."""


class ServerClosed(ServerError):
    """The server's connection ended (it exited, was killed, or closed its stdout) before it
    answered."""


class HandshakeError(ServerError):
    """The server started but never became ready (its ``initialize`` failed, or it exited first).
    ``hint`` says, for a sandboxed server, how to find out what it needs."""

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message, details)
        self.hint: str | None = (details or {}).get("hint")


class Backpressure(ServerError):
    """The server's queue is full; nothing was sent. Retry after ``retry_after`` seconds."""

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message, details)
        self.retry_after: float | None = (details or {}).get("retry_after")


class Unavailable(ServerError):
    """A supervised server is down (being restarted, or given up on); nothing was sent.
    ``retry_after`` is when the next start is tried (``None``: given up on)."""

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message, details)
        self.retry_after: float | None = (details or {}).get("retry_after")


class Restarted(ServerError):
    """A supervised server went away while the request was in flight; it was not re-sent (it may
    have taken effect)."""


class PolicyDenied(RingmcpError, PermissionError):
    """The host's policy refused the request; nothing was sent. ``rule`` names the rule that
    refused it (e.g. ``tools["delete_*"]``, ``inputSchema``, ``roots``), ``reason`` says why."""

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message, details)
        details = details or {}
        self.rule: str | None = details.get("rule")
        self.reason: str | None = details.get("reason")


class SpawnError(RingmcpError):
    """The server's process could not be started (the sandbox step that failed is named)."""


class ConfigError(RingmcpError, ValueError):
    """A configuration (an ``mcpServers`` entry, a host option) is unusable."""


class InvalidArgument(RingmcpError, ValueError):
    """An argument could not be used (e.g. tool arguments that are not a JSON object, a
    capability the server did not declare); nothing was sent."""


class HostError(RingmcpError):
    """The host's own machinery failed (its reactor stopped, its spill store, the router)."""


__all__ = [
    "Backpressure",
    "ConfigError",
    "HandshakeError",
    "HostError",
    "InvalidArgument",
    "PolicyDenied",
    "RequestTimeout",
    "Restarted",
    "RingmcpError",
    "ServerClosed",
    "ServerError",
    "SpawnError",
    "Unavailable",
]
