"""``ClientSession`` of the drop-in: the official SDK's client session, run by ringmcp.

Same constructor, same methods, same result models (the SDK's own, when ``mcp`` is installed;
plain dicts in wire form otherwise), same exception for JSON-RPC error answers (the SDK's
``MCPError``, which the raised object also subclasses next to its ringmcp class). What differs:

- the server is started by ``initialize()`` (the engine's spawn includes the handshake) and
  stopped when the session exits;
- ``list_*`` return every page (the engine follows ``nextCursor``): ``next_cursor`` is ``None``;
- every request has a deadline: ``read_timeout_seconds`` if given, else the host's
  ``request_timeout`` (60 s by default; progress notifications push it back), where the SDK
  waits without limit;
- a large answer may hold ``resource_link``\\ s to ``ringmcp-spill://`` URIs:
  ``read_resource(uri)`` returns their contents, ``open_spilled(uri)`` a file to stream them;
- ``list_roots_callback`` is asked for the roots when the session starts and on
  ``send_roots_list_changed()``; ringmcp answers the server's ``roots/list`` itself.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import datetime
import itertools
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

from ..._native import Host
from ...errors import RingmcpError
from ...spilled import SpilledFile
from .. import _compat
from .._compat import as_mcp_error, dump, to_model, validate
from .._transport import SharedHost, Transport, close_host

logger = logging.getLogger("ringmcp.mcp")

__all__ = ["ClientSession", "RequestContext"]

SPILL_SCHEME = "ringmcp-spill://"
SPILL_META = "io.ringmcp/spilled"

# JSON-RPC codes (as mcp_types defines them)
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND = -32002


@dataclass
class RequestContext:
    """The context passed to the callbacks when the SDK's own class cannot be had."""

    session: ClientSession
    request_id: int | str | None = None
    meta: Any = None
    lifespan_context: Any = None


def _context(session: ClientSession, request_id: int, meta: Any) -> Any:
    """The SDK's context object for a server request's callback (2.x's ``ClientRequestContext``,
    1.x's ``RequestContext``), else ours."""
    try:
        from mcp.client.session import ClientRequestContext  # SDK 2.x

        return ClientRequestContext(session=session, request_id=request_id, meta=meta)  # type: ignore[arg-type]
    except Exception:
        pass
    try:
        from mcp.shared.context import RequestContext as SdkRequestContext  # SDK 1.x

        return SdkRequestContext(request_id=request_id, meta=meta, session=session, lifespan_context=None)
    except Exception:
        return RequestContext(session=session, request_id=request_id, meta=meta)


def _seconds(value: float | datetime.timedelta | None) -> float | None:
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    return None if value is None else float(value)


def _implementation(info: Any) -> dict[str, Any] | None:
    if info is None:
        return None
    data = dump(info)
    if not isinstance(data, Mapping):
        raise TypeError(f"client_info: an Implementation or a mapping, not {type(info).__name__}")
    return dict(data)


def _root_path(uri: str) -> str | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return unquote(parsed.path) or "/"


def _is_error_answer(value: Any) -> bool:
    """An answer in the SDK's ``ErrorData`` form (``{"code", "message"}``)."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("code"), int)
        and isinstance(value.get("message"), str)
        and "role" not in value
        and "action" not in value
    )


def _spill_links(raw: Any) -> list[dict[str, Any]]:
    """The ``resource_link``\\ s to spilled payloads in a result, wherever they are."""
    found: list[dict[str, Any]] = []
    stack = [raw]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            if value.get("type") == "resource_link" and str(value.get("uri", "")).startswith(SPILL_SCHEME):
                found.append(value)
            else:
                stack.extend(v for v in value.values() if isinstance(v, (dict, list)))
        elif isinstance(value, list):
            stack.extend(v for v in value if isinstance(v, (dict, list)))
    return found


async def _spilled_field(spill: Any, encoding: str | None) -> dict[str, str]:
    """A spilled payload as ``{"text": ...}`` (UTF-8 text) or ``{"blob": ...}`` (base64: what
    was base64 in the answer is spilled decoded, and anything not UTF-8 is binary)."""
    data: bytes = await asyncio.to_thread(spill.read_at, 0, len(spill))
    if encoding != "base64-decoded":
        try:
            return {"text": data.decode("utf-8")}
        except UnicodeDecodeError:
            pass
    return {"blob": base64.b64encode(data).decode("ascii")}


class ClientSession:
    """The official SDK's ``ClientSession`` API over ringmcp's engine.

    ``read_stream``/``write_stream``: what a ``ringmcp.mcp`` transport yielded (``stdio_client``,
    ``streamable_http_client``). The callbacks have the SDK's signatures:
    ``sampling_callback(context, CreateMessageRequestParams)``,
    ``elicitation_callback(context, ElicitRequestParams)``, ``list_roots_callback(context)``,
    ``logging_callback(LoggingMessageNotificationParams)``, ``message_handler(notification)``.

    ringmcp's own keywords: ``host`` (a ``ringmcp.Host`` or ``ringmcp.mcp.SharedHost`` to run
    the server on; default: the transport's, else one made for this session and closed with
    it), ``host_options`` (keyword options of the host this session makes, over the
    transport's). The SDK's keywords ``log_level``, ``sampling_capabilities``, ``extensions``,
    ``result_claims`` and ``notification_bindings`` are accepted and not used (ringmcp declares
    the capabilities its callbacks give); ``dispatcher`` is refused.
    """

    def __init__(
        self,
        read_stream: Any = None,
        write_stream: Any = None,
        read_timeout_seconds: float | datetime.timedelta | None = None,
        sampling_callback: Callable[..., Awaitable[Any]] | None = None,
        elicitation_callback: Callable[..., Awaitable[Any]] | None = None,
        list_roots_callback: Callable[..., Awaitable[Any]] | None = None,
        logging_callback: Callable[..., Awaitable[None]] | None = None,
        message_handler: Callable[..., Awaitable[None]] | None = None,
        client_info: Any = None,
        *,
        log_level: str | None = None,
        sampling_capabilities: Any = None,
        extensions: Mapping[str, Any] | None = None,
        result_claims: Any = None,
        notification_bindings: Any = None,
        dispatcher: Any = None,
        host: Host | SharedHost | None = None,
        host_options: Mapping[str, Any] | None = None,
        **sdk_options: Any,
    ) -> None:
        del sampling_capabilities, extensions, result_claims, notification_bindings, sdk_options
        if dispatcher is not None:
            raise TypeError("ringmcp.mcp.ClientSession runs on ringmcp's engine: no dispatcher=")
        transport = read_stream if isinstance(read_stream, Transport) else write_stream
        if not isinstance(transport, Transport):
            raise TypeError(
                "ringmcp.mcp.ClientSession needs the (read, write) pair of a ringmcp.mcp transport "
                "(ringmcp.mcp.client.stdio.stdio_client, ringmcp.mcp.client.streamable_http."
                f"streamable_http_client), not {type(read_stream).__name__}"
            )
        self._transport: Transport = transport
        self._read_timeout = _seconds(read_timeout_seconds)
        self._sampling_callback = sampling_callback
        self._elicitation_callback = elicitation_callback
        self._list_roots_callback = list_roots_callback
        self._logging_callback = logging_callback
        self._message_handler = message_handler
        self._client_info = client_info
        self._log_level = log_level
        self._host_arg = host if host is not None else transport.host
        self._host_options = dict(host_options or {})
        if isinstance(self._host_arg, Host) and (sampling_callback or elicitation_callback):
            raise ValueError(
                "a shared ringmcp.Host answers sampling/elicitation with its own callbacks: share "
                "a ringmcp.mcp.SharedHost to keep this session's"
            )

        self._host: Host | None = None
        self._shared: SharedHost | None = None
        self._owns_host = False
        self._shared_name: str | None = None
        self._client: Any = None
        self._initialize_result: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pump_task: asyncio.Task[None] | None = None
        self._pending: set[concurrent.futures.Future[Any]] = set()
        self._request_ids = itertools.count(1)
        self._spill_info: dict[str, tuple[str | None, str | None]] = {}
        self._output_schemas: dict[str, Any] = {}
        self._entered = False
        self._closed = False

    # -- lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> ClientSession:
        self._transport._attach(self)
        self._loop = asyncio.get_running_loop()
        self._entered = True
        try:
            await self._ensure_host()
        except BaseException:
            self._transport._detach(self)
            raise
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        await self._teardown()

    async def _ensure_host(self) -> None:
        if self._host is not None:
            return
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        shared = self._host_arg
        if isinstance(shared, SharedHost):
            self._shared, self._host = shared, shared.host
            return
        if shared is not None:
            self._host = shared
            return
        options = {**self._transport.host_options, **self._host_options}
        if self._sampling_callback is not None:
            options["sampling"] = self._native_sampling
        if self._elicitation_callback is not None:
            options["elicitation"] = self._native_elicitation
        info = _implementation(self._client_info)
        if info is not None:
            options.setdefault("client_info", info)
        if self._read_timeout is not None:
            options.setdefault("request_timeout", self._read_timeout)
        if self._transport.policy is not None:
            options.setdefault("policy", True)
        if self._list_roots_callback is not None and "roots" not in options:
            roots = await self._roots()
            options["roots"] = [p for p in (_root_path(r["uri"]) for r in roots) if p]
        self._host = Host(**options)
        self._owns_host = True

    async def _teardown(self) -> None:
        """Stops the event pump, the server, and the host this session made."""
        if self._closed:
            return
        self._closed = True
        pump, self._pump_task = self._pump_task, None
        if pump is not None:
            pump.cancel()
            try:
                await pump
            except (asyncio.CancelledError, Exception):
                pass
        for future in list(self._pending):
            future.cancel()
        client, self._client = self._client, None
        try:
            if client is not None:
                try:
                    await client.shutdown()
                except RingmcpError as error:
                    logger.debug("shutting %s down: %s", client.name, error)
        finally:
            if self._shared is not None and self._shared_name is not None:
                self._shared._unregister(self._shared_name)
            host, self._host = self._host, None
            if host is not None and self._owns_host:
                await close_host(host)
            self._transport._detach(self)

    async def initialize(self) -> Any:
        """Starts the server (ringmcp's spawn performs the handshake) and returns its
        ``InitializeResult``. Calling it again returns the same result."""
        if self._initialize_result is not None:
            return self._initialize_result
        if self._closed:
            raise RuntimeError("this ClientSession has exited")
        if not self._entered:  # the SDK wants `async with`; be lenient, the transport cleans up
            self._transport._attach(self)
            self._entered = True
        await self._ensure_host()
        assert self._host is not None
        spec = self._transport.spec
        if self._shared is not None:
            self._shared_name = self._shared._register(self, spec.name)
            spec = self._transport.spec_named(self._shared_name)
        try:
            self._client = await self._native(self._host.spawn, spec)
        except BaseException:
            if self._shared is not None and self._shared_name is not None:
                self._shared._unregister(self._shared_name)
                self._shared_name = None
            raise
        info = dict(self._client.server_info or {})
        info.setdefault("protocolVersion", self._client.protocol_version)
        info.setdefault("capabilities", {})
        info.setdefault("serverInfo", {"name": self._client.name, "version": ""})
        self._initialize_result = to_model("InitializeResult", info)
        if self._logging_callback is not None or self._message_handler is not None:
            self._pump_task = asyncio.get_running_loop().create_task(
                self._pump(self._client.events()), name=f"ringmcp.mcp events of {self._client.name}"
            )
        return self._initialize_result

    # -- what the engine gives ---------------------------------------------------------------

    @property
    def client(self) -> Any:
        """The native ``ringmcp.Client`` (``None`` before ``initialize()``)."""
        return self._client

    @property
    def host(self) -> Host | None:
        """The native ``ringmcp.Host`` the server runs on."""
        return self._host

    def open_spilled(self, uri: str) -> SpilledFile:
        """The payload of a ``ringmcp-spill://`` link in a result, as a file to stream
        (``KeyError`` if this session's server spilled no such payload)."""
        return SpilledFile(self._require().open_spilled(uri))

    async def fetch_resource(self, uri: str) -> SpilledFile:
        """A server's resource (e.g. a ``resource_link`` it returned) read into a spill file,
        to stream rather than hold in memory."""
        client = self._require()
        return SpilledFile(await self._native(client.fetch_resource, uri))

    # -- the SDK's properties ----------------------------------------------------------------

    @property
    def initialize_result(self) -> Any:
        """The server's ``InitializeResult`` (``None`` before ``initialize()``)."""
        return self._initialize_result

    @property
    def discover_result(self) -> None:
        """Always ``None``: ringmcp negotiates the era itself (``initialize_result`` holds what
        the server said either way)."""
        return None

    @property
    def protocol_version(self) -> str | None:
        """The negotiated protocol version (``None`` before ``initialize()``)."""
        if self._client is not None:
            return self._client.protocol_version
        return self._field("protocol_version", "protocolVersion")

    @property
    def server_info(self) -> Any:
        """The server's name and version (``Implementation``)."""
        return self._field("server_info", "serverInfo")

    @property
    def server_capabilities(self) -> Any:
        """The server's capabilities (``ServerCapabilities``)."""
        return self._field("capabilities", "capabilities")

    def get_server_capabilities(self) -> Any:
        """The server's capabilities (the SDK 1.x spelling)."""
        return self.server_capabilities

    @property
    def instructions(self) -> str | None:
        """The server's instructions, if it gave any."""
        return self._field("instructions", "instructions")

    def _field(self, attr: str, key: str) -> Any:
        result = self._initialize_result
        if result is None:
            return None
        if isinstance(result, Mapping):
            return result.get(key)
        return getattr(result, attr, None)

    # -- requests ----------------------------------------------------------------------------

    def _require(self) -> Any:
        if self._client is None:
            if self._closed:
                raise RuntimeError("this ClientSession has exited")
            raise RuntimeError("call `await session.initialize()` first: it starts the server")
        return self._client

    async def _native(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Calls a native method and awaits it, its errors as the SDK raises them."""
        try:
            return await method(*args, **kwargs)
        except RingmcpError as error:
            mapped = as_mcp_error(error)
            if mapped is error:
                raise
            raise mapped.with_traceback(error.__traceback__) from None

    def _timeout(self, read_timeout_seconds: float | datetime.timedelta | None) -> float | None:
        timeout = _seconds(read_timeout_seconds)
        return self._read_timeout if timeout is None else timeout

    async def _raw(self, method: str, params: Mapping[str, Any] | None, timeout: float | None = None) -> Any:
        client = self._require()
        return await self._native(client.request, method, dict(params) if params else None, timeout=timeout)

    @staticmethod
    def _params(params: Any, cursor: str | None) -> dict[str, Any] | None:
        data = dump(params) if params is not None else {}
        if cursor is not None:
            data = {**(data or {}), "cursor": cursor}
        return data or None

    async def _list(self, method: str, key: str, model: str, cursor: str | None, params: Any) -> Any:
        """A whole listing (the engine follows every page), or the one page a cursor asks for."""
        wire = self._params(params, cursor)
        if wire and wire.get("cursor") is not None:
            raw = await self._raw(method, wire)
        else:
            client = self._require()
            items = await self._native(getattr(client, _LISTERS[method]))
            raw = {key: items}
        return to_model(model, raw)

    async def send_ping(self, *, meta: Any = None) -> Any:
        """``ping``."""
        del meta
        await self._native(self._require().ping)
        return to_model("EmptyResult", {})

    async def list_tools(self, cursor: str | None = None, *, params: Any = None) -> Any:
        """``tools/list``: every tool (``next_cursor`` is ``None``). A ``cursor`` (or
        ``params.cursor``) asks the server for that one page."""
        result = await self._list("tools/list", "tools", "ListToolsResult", cursor, params)
        tools = result["tools"] if isinstance(result, Mapping) else result.tools
        for tool in tools:
            if isinstance(tool, Mapping):
                self._output_schemas[tool["name"]] = tool.get("outputSchema")
            else:
                self._output_schemas[tool.name] = tool.output_schema
        return result

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        read_timeout_seconds: float | datetime.timedelta | None = None,
        progress_callback: Callable[[float, float | None, str | None], Awaitable[None]] | None = None,
        *,
        input_responses: Any = None,
        request_state: str | None = None,
        meta: Mapping[str, Any] | None = None,
        allow_input_required: bool = False,
        allow_claimed: bool = False,
    ) -> Any:
        """``tools/call``. A tool that ran and failed is a result with ``is_error`` set; an
        unknown tool or bad arguments are the server's JSON-RPC error (``MCPError``).

        ``meta``, ``input_responses`` and ``request_state`` send the request as given (without
        a progress stream: ``progress_callback`` is then not called). A structured result is
        checked against the tool's ``outputSchema`` when the tool was listed on this session
        and ``jsonschema`` is installed (``RuntimeError`` on a mismatch, as the SDK)."""
        del allow_input_required, allow_claimed
        client = self._require()
        timeout = self._timeout(read_timeout_seconds)
        if meta is not None or input_responses is not None or request_state is not None:
            params: dict[str, Any] = {"name": name, "arguments": dict(arguments or {})}
            if meta is not None:
                params["_meta"] = dump(meta)
            if input_responses is not None:
                params["inputResponses"] = dump(input_responses)
            if request_state is not None:
                params["requestState"] = request_state
            raw = await self._raw("tools/call", params, timeout)
        elif progress_callback is None:
            raw = await self._native(client.call_tool, name, arguments, timeout=timeout)
        else:
            raw = await self._call_with_progress(client, name, arguments, timeout, progress_callback)
        spilled = self._note_spills(raw)
        result = to_model("CallToolResult", raw)
        if not spilled and not (raw.get("isError") if isinstance(raw, Mapping) else False):
            self._check_output(name, raw)
        return result

    async def _call_with_progress(
        self,
        client: Any,
        name: str,
        arguments: Mapping[str, Any] | None,
        timeout: float | None,
        callback: Callable[[float, float | None, str | None], Awaitable[None]],
    ) -> Any:
        """A call whose progress notifications run ``callback`` on this loop, in order, all of
        them before the result is returned (as the SDK's dispatcher does)."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[float, float | None, str | None] | None] = asyncio.Queue()

        def progress(done: float, total: float | None, message: str | None) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, (done, total, message))

        async def deliver() -> None:
            while (item := await queue.get()) is not None:
                try:
                    await callback(*item)
                except Exception:
                    logger.exception("the progress callback raised")

        runner = loop.create_task(deliver())
        try:
            raw = await self._native(client.call_tool, name, arguments, timeout=timeout, progress=progress)
        except BaseException:
            runner.cancel()
            raise
        # The progress the engine drained with the result was queued before the result's own
        # wake-up: one pass of the loop puts it all in the queue, ahead of the end marker.
        await asyncio.sleep(0)
        loop.call_soon(queue.put_nowait, None)
        await runner
        return raw

    def _note_spills(self, raw: Any) -> bool:
        """Remembers the MIME type and encoding of the payloads a result spilled
        (``read_resource`` gives them back as they were); whether there were any."""
        found = False
        for link in _spill_links(raw):
            found = True
            meta = (link.get("_meta") or {}).get(SPILL_META) or {}
            self._spill_info[link["uri"]] = (link.get("mimeType"), meta.get("encoding"))
        return found

    def _check_output(self, name: str, raw: Any) -> None:
        schema = self._output_schemas.get(name)
        if not schema or not isinstance(raw, Mapping):
            return
        try:
            import jsonschema
        except ImportError:
            return
        if "structuredContent" not in raw:
            raise RuntimeError(f"Tool {name} has an output schema but did not return structured content")
        try:
            validator = jsonschema.validators.validator_for(schema)(schema)
            error = jsonschema.exceptions.best_match(validator.iter_errors(raw["structuredContent"]))
        except Exception as e:  # an unusable schema
            raise RuntimeError(f"Invalid schema for tool {name}: {e}") from e
        if error is not None:
            raise RuntimeError(f"Invalid structured content returned by tool {name}: {error}") from error

    async def list_resources(self, cursor: str | None = None, *, params: Any = None) -> Any:
        """``resources/list``: every resource (``next_cursor`` is ``None``)."""
        return await self._list("resources/list", "resources", "ListResourcesResult", cursor, params)

    async def list_resource_templates(self, cursor: str | None = None, *, params: Any = None) -> Any:
        """``resources/templates/list``: every template (``next_cursor`` is ``None``)."""
        return await self._list(
            "resources/templates/list", "resourceTemplates", "ListResourceTemplatesResult", cursor, params
        )

    async def read_resource(
        self,
        uri: Any,
        *,
        input_responses: Any = None,
        request_state: str | None = None,
        meta: Any = None,
        allow_input_required: bool = False,
    ) -> Any:
        """``resources/read``. A ``ringmcp-spill://`` URI (from a ``resource_link`` in a large
        answer) is read from ringmcp's spill store: ``TextResourceContents`` when it is UTF-8,
        else ``BlobResourceContents`` (base64). ``open_spilled(uri)`` streams it instead."""
        del allow_input_required
        uri = str(uri)
        if uri.startswith(SPILL_SCHEME):
            return await self._read_spilled(uri)
        if meta is not None or input_responses is not None or request_state is not None:
            params: dict[str, Any] = {"uri": uri}
            if meta is not None:
                params["_meta"] = dump(meta)
            if input_responses is not None:
                params["inputResponses"] = dump(input_responses)
            if request_state is not None:
                params["requestState"] = request_state
            raw = await self._raw("resources/read", params)
        else:
            raw = await self._native(self._require().read_resource, uri)
        return to_model("ReadResourceResult", await self._unspill_contents(raw))

    async def _read_spilled(self, uri: str) -> Any:
        client = self._require()
        try:
            spill = client.open_spilled(uri)
        except KeyError:
            raise _compat.make_mcp_error(RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri}) from None
        mime, encoding = self._spill_info.get(uri, (None, None))
        contents: dict[str, Any] = {"uri": uri}
        if mime:
            contents["mimeType"] = mime
        contents.update(await _spilled_field(spill, encoding))
        return to_model("ReadResourceResult", {"contents": [contents]})

    async def _unspill_contents(self, raw: Any) -> Any:
        """A ``resources/read`` result whose large ``text``/``blob`` the engine spilled (it
        leaves ``_meta["io.ringmcp/spilled"]`` in their place) with them read back, as the SDK's
        models require them; ``open_spilled(_meta[...]["uri"])`` streams them instead."""
        if not isinstance(raw, Mapping):
            return raw
        for item in raw.get("contents") or ():
            meta = (item.get("_meta") or {}).get(SPILL_META) if isinstance(item, Mapping) else None
            if not isinstance(meta, Mapping) or meta.get("field") in item:
                continue
            spill = self._require().open_spilled(meta["uri"])
            field = await _spilled_field(spill, meta.get("encoding"))
            if meta.get("field") == "blob" and "text" in field:  # a blob of UTF-8 bytes
                field = {"blob": base64.b64encode(field["text"].encode()).decode("ascii")}
            item.update(field)
        return raw

    async def subscribe_resource(self, uri: Any, *, meta: Any = None) -> Any:
        """``resources/subscribe``: updates reach ``message_handler`` as
        ``ResourceUpdatedNotification``\\ s."""
        del meta
        await self._native(self._require().subscribe_resource, str(uri))
        return to_model("EmptyResult", {})

    async def unsubscribe_resource(self, uri: Any, *, meta: Any = None) -> Any:
        """``resources/unsubscribe``."""
        del meta
        await self._native(self._require().unsubscribe_resource, str(uri))
        return to_model("EmptyResult", {})

    async def list_prompts(self, cursor: str | None = None, *, params: Any = None) -> Any:
        """``prompts/list``: every prompt (``next_cursor`` is ``None``)."""
        return await self._list("prompts/list", "prompts", "ListPromptsResult", cursor, params)

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        input_responses: Any = None,
        request_state: str | None = None,
        meta: Any = None,
        allow_input_required: bool = False,
    ) -> Any:
        """``prompts/get``."""
        del allow_input_required
        if meta is not None or input_responses is not None or request_state is not None:
            params: dict[str, Any] = {"name": name}
            if arguments is not None:
                params["arguments"] = dict(arguments)
            if meta is not None:
                params["_meta"] = dump(meta)
            if input_responses is not None:
                params["inputResponses"] = dump(input_responses)
            if request_state is not None:
                params["requestState"] = request_state
            raw = await self._raw("prompts/get", params)
        else:
            raw = await self._native(self._require().get_prompt, name, dict(arguments) if arguments else None)
        return to_model("GetPromptResult", raw)

    async def complete(
        self,
        ref: Any,
        argument: Mapping[str, str],
        context_arguments: Mapping[str, str] | None = None,
    ) -> Any:
        """``completion/complete``: ``ref`` a ``PromptReference`` or ``ResourceTemplateReference``
        (or its dict), ``argument`` ``{"name": ..., "value": ...}``."""
        argument = dump(argument)
        raw = await self._native(
            self._require().complete,
            dump(ref),
            argument["name"],
            argument.get("value", ""),
            dict(context_arguments) if context_arguments is not None else None,
        )
        if isinstance(raw, Mapping) and "completion" not in raw and "values" in raw:
            raw = {"completion": raw}
        return to_model("CompleteResult", raw)

    async def set_logging_level(self, level: str, *, meta: Any = None) -> Any:
        """``logging/setLevel``: the server's log messages reach ``logging_callback``."""
        del meta
        await self._native(self._require().set_log_level, str(level))
        return to_model("EmptyResult", {})

    async def send_roots_list_changed(self) -> None:
        """Asks ``list_roots_callback`` for the roots again and tells the server they changed
        (``notifications/roots/list_changed``; ringmcp answers its ``roots/list``)."""
        client = self._require()
        if self._list_roots_callback is None:
            client.notify("notifications/roots/list_changed")
            return
        roots = await self._roots()
        try:
            client.set_roots(roots)
        except RingmcpError as error:
            mapped = as_mcp_error(error)
            if mapped is error:
                raise
            raise mapped from None

    async def send_progress_notification(
        self,
        progress_token: str | int,
        progress: float,
        total: float | None = None,
        message: str | None = None,
        *,
        meta: Any = None,
    ) -> None:
        """``notifications/progress`` (client to server)."""
        params: dict[str, Any] = {"progressToken": progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        if meta is not None:
            params["_meta"] = dump(meta)
        self._require().notify("notifications/progress", params)

    async def send_request(
        self,
        request: Any,
        result_type: Any,
        request_read_timeout_seconds: float | datetime.timedelta | None = None,
        metadata: Any = None,
        progress_callback: Any = None,
    ) -> Any:
        """Any request (a ``ClientRequest`` model or ``{"method", "params"}``), its result
        validated as ``result_type`` (a model class or a ``TypeAdapter``). Goes through
        ringmcp's policy gate like every other request; no progress stream."""
        del metadata, progress_callback
        data = dump(request)
        raw = await self._raw(data["method"], data.get("params"), self._timeout(request_read_timeout_seconds))
        if raw is None:
            raw = {}
        if hasattr(result_type, "validate_python"):
            return result_type.validate_python(raw)
        if hasattr(result_type, "model_validate"):
            return result_type.model_validate(raw)
        return raw

    async def send_notification(self, notification: Any) -> None:
        """Any notification (a ``ClientNotification`` model or ``{"method", "params"}``)."""
        data = dump(notification)
        self._require().notify(data["method"], data.get("params"))

    # -- server requests and notifications ---------------------------------------------------

    async def _roots(self) -> list[dict[str, Any]]:
        assert self._list_roots_callback is not None
        answer = await self._list_roots_callback(_context(self, next(self._request_ids), None))
        data = dump(answer)
        if not isinstance(data, Mapping) or _is_error_answer(data):
            logger.warning("list_roots_callback declined: %r", data)
            return []
        return [
            {k: v for k, v in dict(root).items() if k in ("uri", "name") and v is not None}
            for root in data.get("roots") or ()
        ]

    def _native_sampling(self, server: str, params: dict[str, Any]) -> Any:
        return self._answer_server_request("sampling", params)

    def _native_elicitation(self, server: str, params: dict[str, Any]) -> Any:
        return self._answer_server_request("elicitation", params)

    def _answer_server_request(self, kind: str, params: dict[str, Any]) -> Any:
        """A server's ``sampling/createMessage`` / ``elicitation/create``, on an engine thread:
        the SDK callback runs on the session's event loop, this thread waits for its answer (a
        dict in wire form, or ``{"code", "message"}`` for an error answer)."""
        loop = self._loop
        callback = self._sampling_callback if kind == "sampling" else self._elicitation_callback
        if callback is None:
            return {"code": INVALID_REQUEST, "message": f"{kind.capitalize()} not supported"}
        if loop is None or loop.is_closed() or self._closed:
            return {"code": INTERNAL_ERROR, "message": "the client session has ended"}
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:  # never block the loop on itself
            return {"code": INTERNAL_ERROR, "message": "callback called on the session's event loop"}
        future = asyncio.run_coroutine_threadsafe(self._server_request(kind, callback, params), loop)
        self._pending.add(future)
        try:
            return future.result()
        except concurrent.futures.CancelledError:
            return {"code": INTERNAL_ERROR, "message": "the client session has ended"}
        finally:
            self._pending.discard(future)

    async def _server_request(self, kind: str, callback: Callable[..., Awaitable[Any]], params: Any) -> Any:
        try:
            typed = validate("CreateMessageRequestParams" if kind == "sampling" else "ElicitRequestParams", params)
            meta = getattr(typed, "meta", None) if not isinstance(typed, Mapping) else typed.get("_meta")
            answer = await callback(_context(self, next(self._request_ids), meta), typed)
            data = dump(answer)
            if _is_error_answer(data):
                return {k: data[k] for k in ("code", "message", "data") if k in data}
            return data
        except Exception as error:
            code = getattr(error, "code", None)
            message = getattr(error, "message", None)
            if isinstance(code, int) and isinstance(message, str):  # MCPError and kin
                answer = {"code": code, "message": message}
                if getattr(error, "data", None) is not None:
                    answer["data"] = dump(error.data)
                return answer
            logger.exception("the %s callback raised", kind)
            return {"code": INTERNAL_ERROR, "message": f"the client's {kind} callback failed: {error}"}

    async def _pump(self, events: Any) -> None:
        """The server's notifications to ``logging_callback`` and ``message_handler``."""
        async for event in events:
            kind = event.get("type")
            if kind == "notification":
                await self._on_notification(event.get("method", ""), event.get("params"))
            elif kind == "resource_updated":
                await self._on_notification("notifications/resources/updated", {"uri": event.get("uri")})
            elif kind == "closed":
                logger.debug("server %s ended: %s", self._client and self._client.name, event.get("reason"))
                return
            elif kind in ("violation", "unresponsive", "sandbox_limits"):
                logger.warning("server event: %s", event)
            else:
                logger.debug("server event: %s", event)

    async def _on_notification(self, method: str, params: Any) -> None:
        if method == "notifications/cancelled":  # applied by the engine, never surfaced (as the SDK)
            return
        wire: dict[str, Any] = {"method": method}
        if params is not None:
            wire["params"] = params
        try:
            notification = validate("ServerNotification", wire)
        except Exception:
            logger.warning("Failed to validate notification: %s", method, exc_info=True)
            return
        try:
            if method == "notifications/message" and self._logging_callback is not None:
                await self._logging_callback(
                    notification.params if not isinstance(notification, Mapping) else params
                )
            if self._message_handler is not None:
                await self._message_handler(notification)
        except Exception:
            logger.exception("notification callback for %r raised", method)

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("running" if self._client is not None else "not started")
        return f"<ringmcp.mcp.ClientSession {self._transport.name} ({state})>"


_LISTERS = {
    "tools/list": "list_tools",
    "resources/list": "list_resources",
    "resources/templates/list": "list_resource_templates",
    "prompts/list": "list_prompts",
}
