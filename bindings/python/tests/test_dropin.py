"""ringmcp.mcp, the drop-in for the official Python SDK's ClientSession.

The main check: ``sdk_example.py``, a client written for the official SDK (run as is with the
SDK here too), runs against real servers with only its ``from mcp`` imports changed, and says
the same as under the SDK. Then the parts one by one: callbacks (sampling, elicitation, roots,
logging, progress, notifications), results as the SDK's models, errors as the SDK's
``MCPError``, spilled payloads, shared hosts, shutdown.

Servers: the npm reference server ``server-everything`` (node) and a server on the Python SDK
(tests/servers/py_echo_server.py). ``RINGMCP_DEPS`` (default /work/main/.deps, or the repository's
.deps) says where they are.
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import pickle
import re
import shutil
import socket
import subprocess
import sys
import time
import types as pytypes
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import ringmcp
import ringmcp.mcp
from ringmcp.errors import RingmcpError, ServerError
from ringmcp.mcp import ClientSession, SharedHost, StdioServerParameters, types
from ringmcp.mcp.client import stdio as ring_stdio
from ringmcp.mcp.client.stdio import stdio_client
from ringmcp.mcp.client.streamable_http import streamable_http_client, streamablehttp_client
from ringmcp.spilled import SpilledFile

mcp_types = pytest.importorskip("mcp_types")
from mcp.shared.exceptions import MCPError  # noqa: E402  (the SDK is a test dependency)

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
DEPS = Path(os.environ.get("RINGMCP_DEPS") or (REPO / ".deps"))
VENV_PYTHON = DEPS / "venv" / "bin" / "python"
EVERYTHING = DEPS / "npm" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
PY_ECHO = REPO / "tests" / "servers" / "py_echo_server.py"
NODE = shutil.which("node")
PYTHON = str(VENV_PYTHON if VENV_PYTHON.exists() else Path(sys.executable))

needs_everything = pytest.mark.skipif(
    NODE is None or not EVERYTHING.exists(), reason="node or server-everything is not installed"
)
needs_py_echo = pytest.mark.skipif(not PY_ECHO.exists(), reason="tests/servers/py_echo_server.py is missing")


def run(coro: Any, timeout: float = 90) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout))


def everything(**kw: Any) -> StdioServerParameters:
    return StdioServerParameters(command=NODE or "node", args=[str(EVERYTHING), "stdio"], **kw)


def py_echo(**kw: Any) -> StdioServerParameters:
    return StdioServerParameters(command=PYTHON, args=[str(PY_ECHO)], **kw)


def texts(result: Any) -> list[str]:
    return [c.text for c in result.content if isinstance(c, types.TextContent)]


# -- the unchanged example ---------------------------------------------------------------------

IMPORT_LINE = re.compile(r"^(from|import) mcp(\.| |$)", re.M)


def load_example_for_ringmcp() -> pytypes.ModuleType:
    """sdk_example.py with its imports switched to ringmcp.mcp: every ``from mcp...`` line, and
    nothing else, changed."""
    source = (HERE / "sdk_example.py").read_text()
    changed = IMPORT_LINE.sub(lambda m: f"{m.group(1)} ringmcp.mcp{m.group(2)}", source)
    before, after = source.splitlines(), changed.splitlines()
    diff = [(a, b) for a, b in zip(before, after) if a != b]
    assert len(before) == len(after) and len(diff) == 3, diff
    assert all(a.startswith("from mcp") and b == a.replace("from mcp", "from ringmcp.mcp", 1) for a, b in diff)
    module = pytypes.ModuleType("sdk_example_on_ringmcp")
    module.__file__ = str(HERE / "sdk_example.py")
    exec(compile(changed, module.__file__, "exec"), module.__dict__)
    # it runs on ringmcp, not on the SDK
    assert module.ClientSession is ringmcp.mcp.ClientSession
    assert module.stdio_client is ringmcp.mcp.stdio_client
    assert module.types.CallToolResult is mcp_types.CallToolResult
    return module


@cache
def sdk_summary(command: str, *args: str) -> dict[str, Any]:
    """What sdk_example.py prints under the official SDK (the reference)."""
    out = subprocess.run(
        [PYTHON, str(HERE / "sdk_example.py"), command, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout)


def ringmcp_summary(capsys: Any, command: str, *args: str) -> dict[str, Any]:
    module = load_example_for_ringmcp()
    summary = module.main([command, *args])
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(json.dumps(summary))
    return printed


@needs_everything
def test_unchanged_sdk_example_on_server_everything_in_the_default_sandbox(capsys: Any) -> None:
    assert ring_stdio.DEFAULT_SANDBOX is None  # ringmcp's default sandbox
    ours = ringmcp_summary(capsys, NODE, str(EVERYTHING), "stdio")
    reference = sdk_summary(NODE, str(EVERYTHING), "stdio")

    # The one difference: ringmcp declares form elicitation only (not URL mode), and
    # server-everything registers trigger-url-elicitation only for clients that declare it.
    assert set(reference["tools"]) - set(ours["tools"]) <= {"trigger-url-elicitation"}
    reference["tools"] = [t for t in reference["tools"] if t in ours["tools"]]
    assert ours == reference

    assert ours["server"] == "mcp-servers/everything"
    assert ours["echo"] == ["Echo: hello from the example"]
    assert ours["sampling"] is True and ours["elicitation"].startswith("✅")
    assert ours["progress"] == [[1.0, 2.0], [2.0, 2.0]]
    assert ours["next_cursor"] is None
    assert ours["logged"] is True
    assert ours["completion"] == ["David", "Eve", "Frank"]


@needs_py_echo
@pytest.mark.parametrize("sandbox", [None, False], ids=["default-sandbox", "no-sandbox"])
def test_unchanged_sdk_example_on_a_python_sdk_server(
    capsys: Any, monkeypatch: Any, sandbox: bool | None
) -> None:
    monkeypatch.setattr(ring_stdio, "DEFAULT_SANDBOX", sandbox)
    ours = ringmcp_summary(capsys, PYTHON, str(PY_ECHO))
    assert ours == sdk_summary(PYTHON, str(PY_ECHO))
    assert ours["tools"] == ["add", "confirm", "echo", "summarize"]
    assert ours["sampling"] is True
    assert ours["elicitation"] == "accept: True"
    assert ours["unknown_tool"] == "isError=True"


@needs_py_echo
def test_relative_paths_work_in_the_sandbox_as_under_the_sdk(monkeypatch: Any) -> None:
    """A sandboxed server does not see the caller's working directory, yet
    ``python tests/servers/x.py`` run from the repository finds its script (made absolute)."""
    monkeypatch.chdir(REPO)
    relative = StdioServerParameters(
        command=os.path.relpath(PYTHON) if PYTHON.startswith(str(REPO)) else PYTHON,
        args=[str(PY_ECHO.relative_to(REPO))],
    )

    async def main() -> str:
        async with stdio_client(relative) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            assert read.spec.sandboxed
            return texts(await session.call_tool("echo", {"text": "rel"}))[0]

    assert run(main()) == "rel"


# -- callbacks ---------------------------------------------------------------------------------


@needs_everything
def test_sampling_and_elicitation_callbacks_get_the_sdks_models() -> None:
    seen: dict[str, Any] = {}

    async def sampling(context: Any, params: types.CreateMessageRequestParams) -> Any:
        seen["sampling"] = (context, params)
        if params.messages[-1].content.text.endswith("refuse"):
            return types.ErrorData(code=-1, message="User rejected sampling request")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="42"), model="m", stop_reason="endTurn"
        )

    answers = iter(["accept", "decline"])

    async def elicitation(context: Any, params: Any) -> types.ElicitResult:
        seen["elicitation"] = (context, params)
        action = next(answers)
        return types.ElicitResult(action=action, content={"name": "Grace"} if action == "accept" else None)

    async def main() -> None:
        async with stdio_client(everything(), sandbox=False) as (read, write):
            async with ClientSession(
                read, write, sampling_callback=sampling, elicitation_callback=elicitation
            ) as session:
                await session.initialize()
                tools = {t.name for t in (await session.list_tools()).tools}
                assert {"trigger-sampling-request", "trigger-elicitation-request"} <= tools

                result = await session.call_tool("trigger-sampling-request", {"prompt": "the answer", "maxTokens": 7})
                context, params = seen["sampling"]
                assert isinstance(params, types.CreateMessageRequestParams)
                assert params.max_tokens == 7 and params.system_prompt == "You are a helpful test server."
                assert params.messages[0].content.text.endswith("the answer")
                assert context.session is session
                assert '"text": "42"' in texts(result)[0] and '"model": "m"' in texts(result)[0]

                # an ErrorData answer is an error answer to the server
                try:
                    result = await session.call_tool("trigger-sampling-request", {"prompt": "refuse"})
                    assert result.is_error and "User rejected sampling request" in texts(result)[0]
                except MCPError as error:
                    assert "User rejected" in error.message

                result = await session.call_tool("trigger-elicitation-request", {})
                context, params = seen["elicitation"]
                assert isinstance(params, types.ElicitRequestFormParams)
                assert params.requested_schema["required"] == ["name"]
                assert context.session is session
                assert "- Name: Grace" in texts(result)[1]

                result = await session.call_tool("trigger-elicitation-request", {})
                assert "declined" in texts(result)[0]

    run(main())


@needs_py_echo
def test_callbacks_on_a_python_sdk_server() -> None:
    async def sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=params.messages[0].content.text.upper()),
            model="upper",
        )

    async def elicitation(context: Any, params: Any) -> types.ElicitResult:
        await asyncio.sleep(0.01)  # a coroutine that really waits
        return types.ElicitResult(action="accept", content={"ok": False})

    async def main() -> None:
        async with stdio_client(py_echo(), sandbox=False) as (read, write):
            async with ClientSession(read, write, sampling_callback=sampling, elicitation_callback=elicitation) as session:
                await session.initialize()
                assert texts(await session.call_tool("summarize", {"text": "shout"})) == ["SHOUT"]
                assert texts(await session.call_tool("confirm", {"question": "ok?"})) == ["accept: False"]

    run(main())


@needs_py_echo
def test_without_callbacks_the_capabilities_are_not_declared() -> None:
    async def main() -> None:
        async with stdio_client(py_echo(), sandbox=False) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                # The server's sampling request is refused, and its tool fails with a JSON-RPC
                # error (as under the SDK, whose refusal says -32600 "Sampling not supported";
                # ringmcp's host, which declared no sampling, answers -32601).
                with pytest.raises(MCPError) as caught:
                    await session.call_tool("summarize", {"text": "x"})
                assert caught.value.code == -32601
                assert caught.value.message == "Method not found: sampling/createMessage"
                assert 'server "py_echo_server"' in caught.value.ringmcp_message

    run(main())


@needs_everything
def test_roots_callback() -> None:
    roots = [types.Root(uri="file:///srv/project", name="project")]

    async def list_roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=roots)

    async def main() -> None:
        async with stdio_client(everything(), sandbox=False) as (read, write):
            async with ClientSession(read, write, list_roots_callback=list_roots) as session:
                await session.initialize()
                tools = {t.name for t in (await session.list_tools()).tools}
                assert "get-roots-list" in tools
                text = texts(await session.call_tool("get-roots-list", {}))[0]
                assert "file:///srv/project" in text

                roots[:] = [types.Root(uri="file:///srv/other", name="other")]
                await session.send_roots_list_changed()
                for _ in range(50):
                    text = texts(await session.call_tool("get-roots-list", {}))[0]
                    if "file:///srv/other" in text:
                        break
                    await asyncio.sleep(0.1)
                assert "file:///srv/other" in text and "project" not in text

    run(main())


@needs_everything
def test_logging_callback_message_handler_and_resource_updates() -> None:
    logs: list[Any] = []
    messages: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async def handler(message: Any) -> None:
        messages.append(message)

    async def main() -> None:
        async with stdio_client(everything(), sandbox=False) as (read, write):
            async with ClientSession(read, write, logging_callback=on_log, message_handler=handler) as session:
                await session.initialize()
                assert isinstance(await session.set_logging_level("info"), types.EmptyResult)
                uri = "demo://resource/static/document/architecture.md"
                assert isinstance(await session.subscribe_resource(uri), types.EmptyResult)
                await session.call_tool("toggle-subscriber-updates", {})
                for _ in range(100):
                    if any(isinstance(m, types.ResourceUpdatedNotification) for m in messages) and logs:
                        break
                    await asyncio.sleep(0.05)
                await session.call_tool("toggle-subscriber-updates", {})
                await session.unsubscribe_resource(uri)

        updated = [m for m in messages if isinstance(m, types.ResourceUpdatedNotification)]
        assert updated and str(updated[0].params.uri) == uri
        assert any("Subscribe" in str(p.data) for p in logs)
        assert all(isinstance(p, types.LoggingMessageNotificationParams) for p in logs)
        # logging notifications reach message_handler too, as under the SDK
        assert any(isinstance(m, types.LoggingMessageNotification) for m in messages)

    run(main())


@needs_everything
def test_progress_reaches_the_callback_in_order_before_the_result() -> None:
    async def main() -> None:
        seen: list[tuple[float, float | None]] = []

        async def progress(done: float, total: float | None, message: str | None) -> None:
            await asyncio.sleep(0.01)
            seen.append((done, total))

        async with stdio_client(everything(), sandbox=False) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool(
                    "trigger-long-running-operation", {"duration": 0.3, "steps": 3}, progress_callback=progress
                )
                assert seen == [(1, 3), (2, 3), (3, 3)]
                assert "completed" in texts(result)[0]

    run(main())


# -- results, properties, errors ---------------------------------------------------------------


@needs_py_echo
def test_results_are_the_sdks_models() -> None:
    async def main() -> None:
        async with stdio_client(py_echo(), sandbox=False) as (read, write):
            session = ClientSession(read, write, client_info=types.Implementation(name="t", version="1"))
            assert session.initialize_result is None and session.server_info is None
            async with session:
                init = await session.initialize()
                assert await session.initialize() is init
                assert isinstance(init, types.InitializeResult)
                assert session.initialize_result is init
                assert isinstance(session.server_info, types.Implementation)
                assert session.server_info.name == "py-echo-server"
                assert isinstance(session.server_capabilities, types.ServerCapabilities)
                assert session.server_capabilities.tools is not None
                assert session.protocol_version == init.protocol_version == "2025-11-25"
                assert session.discover_result is None
                assert isinstance(await session.send_ping(), types.EmptyResult)

                listing = await session.list_tools()
                assert isinstance(listing, types.ListToolsResult) and listing.next_cursor is None
                add = next(t for t in listing.tools if t.name == "add")
                assert isinstance(add, types.Tool) and add.input_schema["required"] == ["a", "b"]

                result = await session.call_tool("add", {"a": 20, "b": 22}, read_timeout_seconds=10)
                assert isinstance(result, types.CallToolResult)
                assert result.structured_content == {"result": 42} and not result.is_error
                assert isinstance(result.content[0], types.TextContent)

                assert isinstance(await session.list_prompts(), types.ListPromptsResult)
                assert isinstance(await session.list_resources(), types.ListResourcesResult)
                assert isinstance(await session.list_resource_templates(), types.ListResourceTemplatesResult)

                # the generic entry points
                ping = await session.send_request(types.PingRequest(), types.EmptyResult)
                assert isinstance(ping, types.EmptyResult)
                await session.send_notification(types.RootsListChangedNotification())
                assert session.client.name == "py_echo_server"
            assert session.client is None

    run(main())


@needs_everything
def test_resources_prompts_and_completion_on_server_everything() -> None:
    async def main() -> None:
        async with stdio_client(everything(), sandbox=False) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                resources = (await session.list_resources()).resources
                text_resource = next(r for r in resources if r.uri.startswith("demo://resource/static/document/"))
                read_result = await session.read_resource(text_resource.uri)
                assert isinstance(read_result, types.ReadResourceResult)
                assert isinstance(read_result.contents[0], types.TextResourceContents)
                blob = await session.read_resource("demo://resource/dynamic/blob/1")
                assert isinstance(blob.contents[0], types.BlobResourceContents)
                base64.b64decode(blob.contents[0].blob)

                prompt = await session.get_prompt("args-prompt", {"city": "Paris", "state": "TX"})
                assert isinstance(prompt, types.GetPromptResult) and "Paris" in prompt.messages[0].content.text
                completion = await session.complete(
                    types.PromptReference(type="ref/prompt", name="completable-prompt"),
                    {"name": "department", "value": "S"},
                )
                assert isinstance(completion, types.CompleteResult)
                assert completion.completion.values == ["Sales", "Support"]

    run(main())


@needs_py_echo
def test_error_answers_raise_the_sdks_mcp_error_which_is_also_a_ringmcp_error() -> None:
    async def main() -> None:
        async with stdio_client(py_echo(), sandbox=False) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                with pytest.raises(MCPError) as caught:
                    await session.read_resource("nowhere://x")
                error = caught.value
                assert isinstance(error, ServerError) and isinstance(error, RingmcpError)
                assert error.code == -32602 and "Unknown resource" in error.message
                assert error.error == types.ErrorData(code=-32602, message=error.message, data=error.data)
                assert error.fault == "peer" and error.server == "py_echo_server"
                again = pickle.loads(pickle.dumps(error))
                assert isinstance(again, MCPError) and isinstance(again, ServerError)
                assert again.code == error.code

                # bad arguments: the server's answer, as under the SDK
                result = await session.call_tool("add", {"a": "x"})
                assert result.is_error

                with pytest.raises(MCPError):
                    await session.get_prompt("no-such-prompt")

    run(main())


@needs_py_echo
def test_timeouts_are_mcp_errors_and_timeout_errors() -> None:
    async def slow(context: Any, params: Any) -> types.ElicitResult:
        await asyncio.sleep(3)
        return types.ElicitResult(action="cancel")

    async def main() -> None:
        async with stdio_client(py_echo(), sandbox=False) as (read, write):
            async with ClientSession(read, write, elicitation_callback=slow) as session:
                await session.initialize()
                with pytest.raises(MCPError) as caught:
                    await session.call_tool("confirm", {"question": "?"}, read_timeout_seconds=0.5)
                assert isinstance(caught.value, ringmcp.RequestTimeout)
                assert isinstance(caught.value, TimeoutError)

    run(main())


@needs_py_echo
def test_a_servers_policy_puts_the_gate_in_front_of_it() -> None:
    async def main() -> None:
        params = py_echo()
        async with stdio_client(params, sandbox=False, policy={"tools": {"add": "deny"}}) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                assert texts(await session.call_tool("echo", {"text": "allowed"})) == ["allowed"]
                with pytest.raises(MCPError) as caught:
                    await session.call_tool("add", {"a": 1, "b": 2})
                denied = caught.value
                assert isinstance(denied, ringmcp.PolicyDenied) and isinstance(denied, PermissionError)
                assert denied.code == -32001 and denied.rule == 'tools["add"]'
                assert denied.data["rule"] == 'tools["add"]'

    run(main())


def test_requests_before_initialize_say_so() -> None:
    async def main() -> None:
        async with stdio_client(py_echo(), sandbox=False) as (read, write):
            async with ClientSession(read, write) as session:
                with pytest.raises(RuntimeError, match="initialize"):
                    await session.list_tools()

    run(main())


# -- spilled payloads --------------------------------------------------------------------------


@needs_py_echo
def test_spilled_payloads_read_back_and_stream() -> None:
    big = "é" * 150_000 + " the end"  # 300 KB of UTF-8: past a 64 KiB string, spilled

    async def main() -> None:
        async with stdio_client(py_echo(), sandbox=False, host_options={"spill_threshold": 4096}) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await session.list_tools()  # output schemas known: a spilled result is not "invalid"
                result = await session.call_tool("echo", {"text": big})
                assert isinstance(result, types.CallToolResult)
                (link,) = result.content
                assert isinstance(link, types.ResourceLink) and str(link.uri).startswith("ringmcp-spill://")
                assert link.size == len(big.encode())

                contents = (await session.read_resource(link.uri)).contents
                assert isinstance(contents[0], types.TextResourceContents)
                assert contents[0].text == big and contents[0].mime_type == "text/plain"

                with session.open_spilled(str(link.uri)) as f:
                    assert isinstance(f, SpilledFile) and isinstance(f, io.RawIOBase)
                    assert f.uri == str(link.uri) and f.size() == len(f) == len(big.encode())
                    assert os.path.exists(f.path)
                    assert f.read(4) == "éé".encode()
                    assert f.seek(-8, os.SEEK_END) == len(f) - 8 and f.read() == b" the end"
                    f.seek(0)
                    chunks = [c async for c in f.chunks(100_000)]
                    assert [len(c) for c in chunks] == [100_000, 100_000, 100_000, 8]
                    assert b"".join(chunks).decode() == big
                    f.seek(0)
                    assert io.BufferedReader(f).read().decode() == big
                with pytest.raises(ValueError):
                    f.read()

                # the structured copy was spilled too: a link in place of the string
                spilled_value = result.structured_content["result"]
                assert spilled_value["type"] == "resource_link"
                again = await session.read_resource(spilled_value["uri"])
                assert again.contents[0].text == big

                with pytest.raises(MCPError):
                    await session.read_resource("ringmcp-spill://0-0/404")

    run(main())


class FakeSpill:
    """The native SpillFile's surface, over bytes."""

    def __init__(self, data: bytes) -> None:
        self.data, self.uri, self.path = data, "ringmcp-spill://1-2/3", "/nonexistent"

    def __len__(self) -> int:
        return len(self.data)

    def read_at(self, offset: int, size: int) -> bytes:
        return self.data[offset : offset + size]


def test_spilled_file_is_a_file() -> None:
    data = bytes(range(256)) * 10_000  # 2.5 MB
    f = SpilledFile(FakeSpill(data))
    assert f.readable() and f.seekable() and not f.writable() and f
    assert f.uri == "ringmcp-spill://1-2/3" and f.size() == len(data)
    buf = bytearray(300)
    assert f.readinto(buf) == 300 and bytes(buf) == data[:300] and f.tell() == 300
    assert f.seek(10, os.SEEK_CUR) == 310 and f.read(5) == data[310:315]
    assert f.seek(len(data) + 5) == len(data) + 5 and f.read(10) == b"" and f.readinto(buf) == 0
    with pytest.raises(OSError):
        f.seek(-1)
    f.seek(0)
    assert f.readall() == data

    async def collect() -> list[bytes]:
        f.seek(0)
        return [chunk async for chunk in f]

    chunks = asyncio.run(collect())
    assert [len(c) for c in chunks] == [1 << 20, 1 << 20, len(data) - (2 << 20)]
    assert b"".join(chunks) == data and f.tell() == len(data)
    f.close()
    assert f.closed
    with pytest.raises(ValueError):
        f.read(1)
    with pytest.raises(ValueError):
        asyncio.run(collect())


# -- hosts, lifecycle, transports ---------------------------------------------------------------


@needs_py_echo
def test_the_server_stops_with_the_session() -> None:
    async def main() -> int:
        async with stdio_client(py_echo(), sandbox=False) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                pid = (await session.client.stats())["pid"]
                host = session.host
                assert os.path.exists(f"/proc/{pid}")
            assert host.closed
            return pid

    pid = run(main())
    deadline = time.monotonic() + 5
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{pid}")


@needs_py_echo
def test_a_session_left_unclosed_is_stopped_by_its_transport() -> None:
    async def main() -> Any:
        async with stdio_client(py_echo(), sandbox=False) as (read, write):
            session = ClientSession(read, write)
            await session.initialize()  # no `async with`: lenient, as the SDK's examples never are
            host = session.host
        assert session.client is None and host.closed

    run(main())


@needs_py_echo
def test_a_shared_host_keeps_each_sessions_callbacks() -> None:
    def sampler(tag: str) -> Any:
        async def sampling(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
            return types.CreateMessageResult(
                role="assistant", content=types.TextContent(type="text", text=tag), model=tag
            )

        return sampling

    async def main() -> None:
        async with SharedHost() as shared:
            async with stdio_client(py_echo(), sandbox=False, host=shared) as (r1, w1), stdio_client(
                py_echo(), sandbox=False, host=shared
            ) as (r2, w2):
                async with ClientSession(r1, w1, sampling_callback=sampler("one")) as one, ClientSession(
                    r2, w2, sampling_callback=sampler("two")
                ) as two:
                    await one.initialize()
                    await two.initialize()
                    assert one.host is two.host is shared.host
                    assert {one.client.name, two.client.name} == {"py_echo_server", "py_echo_server-2"}
                    a, b = await asyncio.gather(
                        one.call_tool("summarize", {"text": "x"}), two.call_tool("summarize", {"text": "x"})
                    )
                    assert texts(a) == ["one"] and texts(b) == ["two"]
                assert not shared.closed
        assert shared.closed

    run(main())


def test_transports_carry_a_server_spec() -> None:
    async def main() -> None:
        params = StdioServerParameters(command="/bin/true", args=["a"], env={"K": "V"})
        async with stdio_client(params, name="custom", sandbox=False) as (read, write):
            assert read is write and isinstance(read.spec, ringmcp.ServerSpec)
            assert read.spec.name == "custom" and not read.spec.sandboxed
            with pytest.raises(TypeError, match="carry no messages"):
                await read.send(None)
        async with stdio_client(params) as (read, _):
            assert read.spec.sandboxed and read.spec.name == "true"
        async with stdio_client(everything()) as (read, _):
            assert read.spec.name == "server-everything"
        async with streamable_http_client("http://127.0.0.1:9/mcp", headers={"X-A": "b"}) as (read, write):
            assert read.spec.name == "127.0.0.1"
        async with streamablehttp_client("http://127.0.0.1:9/mcp") as (read, write, get_session_id):
            assert get_session_id() is None

    run(main())
    with pytest.raises(TypeError, match="ringmcp.mcp transport"):
        ClientSession(object(), object())
    with pytest.raises(ValueError):
        ClientSession(*_pair(), host=ringmcp.Host(), sampling_callback=lambda c, p: None)


def _pair() -> tuple[Any, Any]:
    from ringmcp.mcp._transport import Transport

    t = Transport(lambda name: ringmcp.ServerSpec(name, "/bin/true"), "x")
    return t, t


def test_types_are_the_sdks() -> None:
    import mcp

    assert ringmcp.mcp.types.Tool is mcp_types.Tool is mcp.types.Tool
    from ringmcp.mcp import CallToolResult, Tool  # as `from mcp import Tool`

    assert Tool is mcp_types.Tool and CallToolResult is mcp_types.CallToolResult
    assert ringmcp.mcp.MCPError is MCPError
    from ringmcp.mcp.shared.exceptions import MCPError as Again

    assert Again is MCPError


WITHOUT_SDK = r"""
import asyncio, json, sys
sys.modules["mcp"] = sys.modules["mcp_types"] = None  # as if the SDK were not installed
from ringmcp.errors import ServerError
from ringmcp.mcp import ClientSession, MCPError, StdioServerParameters, types
from ringmcp.mcp.client.stdio import stdio_client

async def main():
    params = StdioServerParameters(command=sys.argv[1], args=[sys.argv[2]])
    out = {"types": types.AVAILABLE, "MCPError": MCPError.__name__}
    async with stdio_client(params, sandbox=False) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server"] = init["serverInfo"]["name"]
            out["server_info"] = session.server_info["name"]
            out["tools"] = sorted(t["name"] for t in (await session.list_tools())["tools"])
            out["add"] = (await session.call_tool("add", {"a": 1, "b": 2}))["structuredContent"]
            out["ping"] = await session.send_ping()
            try:
                await session.read_resource("nowhere://x")
            except ServerError as error:
                out["error"] = [type(error).__module__, error.code]
    print(json.dumps(out))

asyncio.run(main())
"""


@needs_py_echo
def test_without_the_sdk_results_are_plain_dicts() -> None:
    out = subprocess.run(
        [sys.executable, "-c", WITHOUT_SDK, PYTHON, str(PY_ECHO)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {
        "types": False,
        "MCPError": "RingmcpError",
        "server": "py-echo-server",
        "server_info": "py-echo-server",
        "tools": ["add", "confirm", "echo", "summarize"],
        "add": {"result": 3},
        "ping": {},
        "error": ["ringmcp.errors", -32602],
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@needs_everything
def test_streamable_http_client() -> None:
    port = _free_port()
    server = subprocess.Popen(
        [NODE, str(EVERYTHING), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)

        async def main() -> None:
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write):
                async with ClientSession(read, write) as session:
                    init = await session.initialize()
                    assert init.server_info.name == "mcp-servers/everything"
                    result = await session.call_tool("echo", {"message": "over http"})
                    assert texts(result) == ["Echo: over http"]

        run(main())
    finally:
        server.terminate()
        server.wait(10)
