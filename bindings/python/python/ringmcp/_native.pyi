"""Type stubs of ``ringmcp._native``, the extension module (re-exported by ``ringmcp``).

Results are plain JSON values (``dict``/``list``/``str``/...) in MCP's wire form (camelCase
keys, as the server sent them); ``ringmcp.mcp`` turns them into the official SDK's models.
"""

from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from os import PathLike
from typing import Any, Generator, Literal, final, type_check_only

Json = Any
TaskMode = Literal["auto", "always", "never"]
Approval = Literal["once", "always", "deny"]

@final
class ServerSpec:
    """How to start (or reach) one MCP server: any ``mcpServers`` entry."""

    def __init__(
        self,
        name: str,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | PathLike[str] | None = None,
        sandbox: Mapping[str, Any] | bool | None = None,
        policy: Mapping[str, Any] | None = None,
        era: Literal["auto", "legacy", "modern"] | None = None,
        restart: Mapping[str, Any] | bool | None = None,
        description: str | None = None,
    ) -> None:
        """A server run as a child process. ``sandbox``: ``None`` (the default sandbox), ``False``
        (none: ``{"profile": "off"}``) or the entry's ``sandbox`` object; ``restart``: ``True``
        (the default policy) or its object."""
    @staticmethod
    def http(
        name: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        oauth: Mapping[str, Any] | None = None,
        policy: Mapping[str, Any] | None = None,
        era: Literal["auto", "legacy", "modern"] | None = None,
        restart: Mapping[str, Any] | bool | None = None,
        description: str | None = None,
    ) -> ServerSpec:
        """A server reached over Streamable HTTP (or legacy HTTP+SSE)."""
    @staticmethod
    def from_entry(name: str, entry: Mapping[str, Any]) -> ServerSpec:
        """A server from one ``mcpServers`` entry, every key as in a config file."""
    @property
    def name(self) -> str: ...
    @property
    def sandboxed(self) -> bool: ...

@final
class Config:
    """A parsed ``{"mcpServers": {...}}`` configuration (Claude Desktop's format, with ringmcp's
    ``sandbox``, ``policy``, ``restart``, ``era`` keys and the top-level ``policy`` and ``audit``)."""

    @staticmethod
    def load(path: str | PathLike[str]) -> Config: ...
    @staticmethod
    def parse(config: Mapping[str, Any] | str | bytes) -> Config: ...
    def names(self) -> list[str]: ...
    def server(self, name: str) -> ServerSpec: ...
    def host(self, **options: Any) -> Host:
        """A host with this config's top-level ``policy`` and ``audit`` (``Host``'s keyword
        options on top)."""

@final
class Host:
    """Runs MCP servers: one io_uring reactor thread drives every server spawned from it.

    Closing the host (``close()``, ``with``/``async with``, or garbage collection) shuts every
    server down and joins the reactor, so no process or fd outlives it."""

    def __init__(
        self,
        *,
        request_timeout: float | None = None,
        max_frame: int | None = None,
        max_pending: int | None = None,
        max_request_bytes: int | None = None,
        direct_write: bool = False,
        spill: bool = True,
        spill_threshold: int | None = None,
        spill_dir: str | PathLike[str] | None = None,
        era: Literal["auto", "legacy", "modern"] | None = None,
        roots: Sequence[str | PathLike[str]] | None = None,
        client_info: Mapping[str, str] | None = None,
        policy: Mapping[str, Any] | bool | None = None,
        approver: Callable[[dict[str, Any]], Approval | bool | Awaitable[Approval | bool]] | None = None,
        approval_timeout: float | None = None,
        audit: str | PathLike[str] | Mapping[str, Any] | None = None,
        pins: str | PathLike[str] | None = None,
        pin_mode: Literal["tofu", "strict"] = "tofu",
        sampling: Callable[[str, dict[str, Any]], Json | Awaitable[Json]] | None = None,
        elicitation: Callable[[str, dict[str, Any]], Json | Awaitable[Json]] | None = None,
    ) -> None:
        """``policy``: the top-level policy object (``True``: the default policy gate, which
        screens results and refuses what its defaults refuse). ``approver(request)`` answers the
        calls the policy marks ``ask``: ``"once"``/``True``, ``"always"``, ``"deny"``/``False``.
        ``sampling(server, params)`` / ``elicitation(server, params)`` answer the servers'
        ``sampling/createMessage`` / ``elicitation/create`` (a dict, or a model with
        ``model_dump``); each may be a coroutine function. Callbacks run on threads of their own;
        an exception in one is an error answer to the server, never a crash."""
    def spawn(self, spec: ServerSpec) -> Awaitable[Client]:
        """Starts a server and completes its handshake."""
    def spawn_blocking(self, spec: ServerSpec) -> Client: ...
    def router(self) -> Router: ...
    def taint(self) -> dict[str, Any] | None:
        """What tainted the session (untrusted content read): ``server``, ``tool``, ``why``,
        ``digest``; ``None`` while nothing has (or without a policy)."""
    def clear_taint(self) -> None: ...
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    def __enter__(self) -> Host: ...
    def __exit__(self, *exc: object) -> None: ...
    async def __aenter__(self) -> Host: ...
    async def __aexit__(self, *exc: object) -> None: ...

@final
class Client:
    """One running server. Every request method returns an awaitable; ``client.blocking`` has
    the same methods, returning results directly (the GIL released while waiting, Ctrl-C
    honoured)."""

    @property
    def name(self) -> str: ...
    @property
    def protocol_version(self) -> str: ...
    @property
    def server_info(self) -> dict[str, Any]:
        """The ``InitializeResult`` (serverInfo, capabilities, instructions)."""
    @property
    def blocking(self) -> BlockingClient: ...
    def about(self) -> str | None: ...
    def has_capability(self, name: str) -> bool: ...
    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolCall: ...
    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[[float, float | None, str | None], Any] | None = None,
        task: TaskMode = "auto",
    ) -> Awaitable[dict[str, Any]]: ...
    def list_tools(self) -> Awaitable[list[dict[str, Any]]]: ...
    def list_resources(self) -> Awaitable[list[dict[str, Any]]]: ...
    def list_resource_templates(self) -> Awaitable[list[dict[str, Any]]]: ...
    def read_resource(self, uri: str) -> Awaitable[dict[str, Any]]: ...
    def subscribe_resource(self, uri: str) -> Awaitable[None]: ...
    def unsubscribe_resource(self, uri: str) -> Awaitable[None]: ...
    def list_prompts(self) -> Awaitable[list[dict[str, Any]]]: ...
    def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> Awaitable[dict[str, Any]]: ...
    def complete(
        self, ref: Mapping[str, Any], argument: str, value: str, context: Mapping[str, str] | None = None
    ) -> Awaitable[dict[str, Any]]: ...
    def set_log_level(self, level: str) -> Awaitable[None]: ...
    def ping(self) -> Awaitable[None]: ...
    def request(self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None) -> Awaitable[Json]:
        """Any request, its result as sent (through the same policy gate)."""
    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None: ...
    def set_roots(self, roots: Sequence[str | Mapping[str, str]]) -> None: ...
    def stats(self) -> Awaitable[dict[str, Any]]:
        """pid, counters, ``stderr`` (its last lines) and the sandbox's limits."""
    def shutdown(self) -> Awaitable[str]:
        """Closes stdin, SIGTERM after 2 s, SIGKILL after 2 more; returns how it ended."""
    def events(self) -> EventStream: ...
    def open_spilled(self, uri: str) -> SpillFile:
        """The spilled payload of a ``ringmcp-spill://`` link in a result (KeyError if unknown)."""
    def fetch_resource(self, uri: str) -> Awaitable[SpillFile]:
        """A server's resource (e.g. a ``resource_link`` it returned) read into a spill file."""
    def supervision_status(self) -> dict[str, Any] | None: ...

@type_check_only
class BlockingClient:
    """``Client.blocking``: the same methods as ``Client``, returning their results."""

    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolCall: ...
    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[[float, float | None, str | None], Any] | None = None,
        task: TaskMode = "auto",
    ) -> dict[str, Any]: ...
    def list_tools(self) -> list[dict[str, Any]]: ...
    def list_resources(self) -> list[dict[str, Any]]: ...
    def list_resource_templates(self) -> list[dict[str, Any]]: ...
    def read_resource(self, uri: str) -> dict[str, Any]: ...
    def subscribe_resource(self, uri: str) -> None: ...
    def unsubscribe_resource(self, uri: str) -> None: ...
    def list_prompts(self) -> list[dict[str, Any]]: ...
    def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> dict[str, Any]: ...
    def complete(
        self, ref: Mapping[str, Any], argument: str, value: str, context: Mapping[str, str] | None = None
    ) -> dict[str, Any]: ...
    def set_log_level(self, level: str) -> None: ...
    def ping(self) -> None: ...
    def request(self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None) -> Json: ...
    def stats(self) -> dict[str, Any]: ...
    def shutdown(self) -> str: ...
    def fetch_resource(self, uri: str) -> SpillFile: ...

@final
class ToolCall:
    """A ``tools/call`` being put together: ``await client.call("t", args).timeout(5).task("always")``.
    Nothing is sent until it is awaited, ``send()`` or ``blocking()``. Cancelling the awaiting
    task cancels the call on the server."""

    def timeout(self, seconds: float | None) -> ToolCall: ...
    def progress(self, callback: Callable[[float, float | None, str | None], Any]) -> ToolCall: ...
    def task(self, mode: TaskMode) -> ToolCall: ...
    def send(self) -> Awaitable[dict[str, Any]]: ...
    def blocking(self) -> dict[str, Any]: ...
    def __await__(self) -> Generator[Any, None, dict[str, Any]]: ...

@final
class EventStream:
    """A server's notifications, protocol violations and end: ``async for event in stream`` or
    ``for event in stream`` (blocking). Each event is a dict with a ``"type"``:
    ``notification`` (``method``, ``params``), ``resource_updated`` (``uri``, ``seq``),
    ``violation``, ``unresponsive``, ``sandbox_limits``, ``restarting``, ``restarted``,
    ``closed`` (``reason``; the last one)."""

    def __aiter__(self) -> EventStream: ...
    def __anext__(self) -> Awaitable[dict[str, Any]]: ...
    def __iter__(self) -> Iterator[dict[str, Any]]: ...
    def __next__(self) -> dict[str, Any]: ...
    def recv(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The next event, blocking up to ``timeout`` seconds (``None``: on timeout or at the end)."""

@final
class SpillFile:
    """A large payload the engine spilled to disk, read in place (``pread``); the file is deleted
    when the last handle goes. ``ringmcp.SpilledFile`` wraps it as a file object."""

    @property
    def uri(self) -> str: ...
    @property
    def path(self) -> str: ...
    def __len__(self) -> int: ...
    def read_at(self, offset: int, size: int) -> bytes:
        """Up to ``size`` bytes from ``offset`` (fewer at the end, none past it); the GIL is
        released while reading."""

@final
class Router:
    """Semantic tool routing over every live server of the host: only the few tools that fit."""

    def route(self, query: str, k: int = 5) -> Awaitable[dict[str, Any]]:
        """``{"tools": [{"server", "name", "score", "definition", ...}], "tokens", "allTokens",
        "catalog"}``."""
    def route_blocking(self, query: str, k: int = 5) -> dict[str, Any]: ...
    @property
    def embedder(self) -> str | None: ...
