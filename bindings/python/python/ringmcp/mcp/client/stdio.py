"""``stdio_client`` of the drop-in: a server run as a child process, by ringmcp.

    from ringmcp.mcp import ClientSession, StdioServerParameters
    from ringmcp.mcp.client.stdio import stdio_client

    async with stdio_client(StdioServerParameters(command="node", args=["server.js"])) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()

Unlike the SDK's, this context manager starts nothing: ``session.initialize()`` does (the
engine's spawn includes the handshake), and the server is stopped when the session exits (or,
at the latest, when this context exits).

**Sandbox.** ``sandbox=None`` (the default) runs the server in ringmcp's default sandbox (the
``standard`` profile, docs/sandbox.md): the official SDK runs servers unconfined, and ringmcp's
default is made to keep ordinary servers working unchanged -- it finds and mounts read-only
what the command needs (the program, a ``node_modules`` root, a Python venv and its base
interpreter, ``#!`` interpreters, absolute arguments, a given ``cwd``) -- while denying the rest of the
filesystem, the network and dangerous syscalls. Being confined by default is the point of
running servers through ringmcp, so switching imports should not silently drop it. A server
that needs more (network, a writable folder) fails its handshake with a ``HandshakeError``
whose ``hint`` says how to find out what it needs; pass its ``sandbox`` object
(e.g. ``{"network": True, "workspace": "/srv/data", "workspaceWritable": True}``, as in an
``mcpServers`` entry) or ``sandbox=False``
for the SDK's behaviour (no confinement). ``DEFAULT_SANDBOX`` below changes the default for
every call that passes ``sandbox=None``. A sandboxed server given no ``cwd`` starts in the
sandbox's ``/tmp`` rather than the caller's working directory, which stays invisible to it;
relative paths on its command line (``python server.py``) are made absolute so that it finds
them as under the SDK.

**Era.** ``era=None`` means ``DEFAULT_ERA``, ``"legacy"``: the SDK's ``ClientSession.initialize()``
performs the ``initialize`` handshake, and servers written for it send sampling and elicitation
requests on the session, which a 2026-07-28 (``"modern"``) connection has no channel for. Pass
``era="auto"`` to let ringmcp probe ``server/discover`` first.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal, TextIO

from ..._native import Host, ServerSpec
from .._transport import SharedHost, Transport

__all__ = [
    "DEFAULT_ERA",
    "DEFAULT_SANDBOX",
    "StdioServerParameters",
    "get_default_environment",
    "stdio_client",
]

DEFAULT_SANDBOX: Mapping[str, Any] | bool | None = None
"""The sandbox of servers started with ``sandbox=None``: ``None`` is ringmcp's default sandbox
(``True`` too), ``False`` none (as the official SDK), or an ``mcpServers`` ``sandbox`` object."""

DEFAULT_ERA: Literal["auto", "legacy", "modern"] = "legacy"
"""The protocol era of servers started with ``era=None`` (see the module's docs)."""

# As the SDK: the variables it passes on. ringmcp passes its own allowlist of the host's
# environment to every server and adds ``env`` on top; this is here for code that imports it.
DEFAULT_INHERITED_ENV_VARS = (
    ["APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT", "PROCESSOR_ARCHITECTURE",
     "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE"]
    if sys.platform == "win32"
    else ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"]
)


def get_default_environment() -> dict[str, str]:
    """The environment variables safe to inherit (as the SDK's function of this name)."""
    env: dict[str, str] = {}
    for key in DEFAULT_INHERITED_ENV_VARS:
        value = os.environ.get(key)
        if value is not None and not value.startswith("()"):
            env[key] = value
    return env


try:
    from pydantic import BaseModel, Field

    class StdioServerParameters(BaseModel):
        """How to start a stdio server (the SDK's model of this name, field for field)."""

        command: str
        """The executable to run to start the server."""

        args: list[str] = Field(default_factory=list)
        """Command line arguments to pass to the executable."""

        env: dict[str, str] | None = None
        """Extra environment variables (on top of the host variables ringmcp passes on)."""

        cwd: str | Path | None = None
        """The working directory of the server."""

        encoding: str = "utf-8"
        """Accepted for compatibility: ringmcp reads JSON-RPC as UTF-8."""

        encoding_error_handler: Literal["strict", "ignore", "replace"] = "strict"
        """Accepted for compatibility (ignored)."""

except ImportError:  # pragma: no cover - pydantic comes with the SDK
    from dataclasses import dataclass, field

    @dataclass
    class StdioServerParameters:  # type: ignore[no-redef]
        """How to start a stdio server (the SDK's model of this name, field for field)."""

        command: str
        args: list[str] = field(default_factory=list)
        env: dict[str, str] | None = None
        cwd: str | Path | None = None
        encoding: str = "utf-8"
        encoding_error_handler: str = "strict"


_INTERPRETERS = {"node", "nodejs", "deno", "bun", "python", "python3", "uv", "uvx", "npx", "pipx", "java"}


def _default_name(command: str, args: Sequence[str]) -> str:
    """A readable server name: the script an interpreter runs, else the program."""
    program = Path(command).name or "server"
    if program in _INTERPRETERS or program.startswith("python"):
        for arg in args:
            if not arg.startswith("-"):
                path = Path(arg)
                stem = path.stem
                if stem in ("index", "main", "server", "__main__", "cli") and path.parent.name:
                    parent = path.parent
                    if parent.name in ("dist", "build", "src", "lib", "bin") and parent.parent.name:
                        parent = parent.parent
                    stem = parent.name
                return stem or program
    return program


def _absolute_args(args: list[str]) -> list[str]:
    """Relative paths among a sandboxed server's arguments, made absolute.

    An SDK server runs in the caller's working directory, so ``python server.py`` finds its
    script there. A sandboxed server starts in the sandbox's ``/tmp`` (no ``cwd`` given), and
    ringmcp makes visible what the absolute paths of its command line need (a script's folder,
    its ``node_modules`` root or venv), not the caller's whole working directory. So arguments
    naming an existing file or folder relative to the working directory are given as absolute
    paths (and so is a relative program path such as ``.venv/bin/python``): the server finds
    them, and sees no more than it needs."""
    out = []
    for arg in args:
        if arg and not arg.startswith("-") and not os.path.isabs(arg) and os.path.exists(arg):
            arg = os.path.abspath(arg)
        out.append(arg)
    return out


def _sandbox(value: Mapping[str, Any] | bool | None) -> Mapping[str, Any] | bool | None:
    if value is None:
        value = DEFAULT_SANDBOX
    if value is True:
        return None
    return value


@asynccontextmanager
async def stdio_client(
    server: StdioServerParameters,
    errlog: TextIO = sys.stderr,
    *,
    sandbox: Mapping[str, Any] | bool | None = None,
    policy: Mapping[str, Any] | None = None,
    name: str | None = None,
    era: Literal["auto", "legacy", "modern"] | None = None,
    restart: Mapping[str, Any] | bool | None = None,
    description: str | None = None,
    host: Host | SharedHost | None = None,
    host_options: Mapping[str, Any] | None = None,
) -> AsyncGenerator[tuple[Transport, Transport], None]:
    """A stdio server for ``ringmcp.mcp.ClientSession``: yields ``(read, write)``.

    ``server``: the SDK's ``StdioServerParameters`` (this module's, or the SDK's own, or
    anything with ``command``/``args``/``env``/``cwd``). ``errlog`` is accepted for
    compatibility: ringmcp keeps each server's last stderr lines (``ServerError.stderr``,
    ``session.client.stats()``) rather than copying them to a file.

    ringmcp's own keywords: ``sandbox`` (``None``: the default sandbox, see the module's docs;
    ``False``: none; or a ``sandbox`` object), ``policy`` (this server's policy rules; the
    session's host then gets the policy gate, ``policy=True``, unless ``host_options`` says
    otherwise), ``name`` (the server's name in ringmcp's logs, audit trail and callbacks;
    default: from the command), ``era`` (default ``DEFAULT_ERA``), ``restart`` (supervision),
    ``description``, ``host`` (a ``ringmcp.Host`` or ``SharedHost`` to run on; default: the
    session makes its own), ``host_options`` (keyword options of the ``ringmcp.Host`` the
    session makes: ``request_timeout``, ``spill_threshold``, ``audit``, ``approver``...).

    Raises ``ringmcp.errors.ConfigError`` on unusable parameters; spawn and handshake failures
    (``SpawnError``, ``HandshakeError``) come from ``session.initialize()``.
    """
    del errlog
    command = str(server.command)
    args = [str(a) for a in (getattr(server, "args", None) or [])]
    env = dict(getattr(server, "env", None) or {}) or None
    cwd = getattr(server, "cwd", None)
    box = _sandbox(sandbox)
    spec_era = era or DEFAULT_ERA
    if cwd is None and box is not False and not (isinstance(box, Mapping) and box.get("profile") == "off"):
        args = _absolute_args(args)
        if os.sep in command and not os.path.isabs(command) and os.path.exists(command):
            command = os.path.abspath(command)

    def make_spec(spec_name: str) -> ServerSpec:
        return ServerSpec(
            spec_name,
            command,
            args,
            env=env,
            cwd=cwd,
            sandbox=box,
            policy=policy,
            era=spec_era,
            restart=restart,
            description=description,
        )

    transport = Transport(
        make_spec,
        name or _default_name(command, args),
        host=host,
        host_options=host_options,
        policy=policy,
        kind="stdio",
    )
    try:
        yield transport, transport
    finally:
        await transport._close()
