"""The official Python SDK's ClientSession against `ringmcp gateway` over stdio or Streamable
HTTP (tests/integration/gateway.rs).

Usage: python py_client.py GATEWAY_BIN CONFIG [EXTRA_ARGS...]   (stdio; GW_ROOT: the fs root)
       python py_client.py http URL TOKEN                         (a running gateway --http)
Prints "ok STEP" per step; the first failed check raises (exit 1).
"""

import base64
import json
import os
import re
import sys

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

ROOT = os.environ["GW_ROOT"]
PATTERN = "abcdefghijklmnopqrstuvwxyz0123456789"


def ok(step):
    print(f"ok {step}", flush=True)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


HTTP = sys.argv[1] == "http"


def connect(server):
    """The transport: the gateway `server` launched over stdio, or the running one's URL."""
    if HTTP:
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {sys.argv[3]}"})
        return streamable_http_client(sys.argv[2], http_client=client)
    return stdio_client(server)


def text_of(result):
    return "".join(getattr(c, "text", "") or "" for c in result.content)


async def main():
    sampled, elicited, approvals = [], [], []

    async def sampling(context, params):
        sampled.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="sampled by the Python client"),
            model="test-model",
            stop_reason="endTurn",
        )

    async def elicitation(context, params):
        schema = getattr(params, "requested_schema", None) or {}
        if "decision" in (schema.get("properties") or {}):
            approvals.append(params.message)
            return types.ElicitResult(action="accept", content={"decision": "once"})
        elicited.append(params)
        return types.ElicitResult(action="decline")

    server = None if HTTP else StdioServerParameters(
        command=sys.argv[1], args=["gateway", "--config", *sys.argv[2:]])
    async with connect(server) as (read, write):
        async with ClientSession(
            read, write, sampling_callback=sampling, elicitation_callback=elicitation
        ) as session:
            init = await session.initialize()
            ok(f"connected {init.server_info.name} {init.protocol_version}")

            names, cursor, pages = [], None, 0
            while True:
                page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
                names += [t.name for t in page.tools]
                pages += 1
                cursor = page.next_cursor
                if not cursor:
                    break
            check(pages > 1, f"several pages, got {pages}")
            for n in ["ringmcp__status", "ref__echo", "everything__echo", "fs__list_directory", "py__add"]:
                check(n in names, f"{n} missing from {names}")
            check(all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", n) for n in names), "valid names")
            ok(f"listed {len(names)} tools in {pages} pages")

            r = await session.call_tool("everything__echo", {"message": "hi there"})
            check("hi there" in text_of(r), text_of(r))
            r = await session.call_tool("py__add", {"a": 2, "b": 40})
            check(text_of(r) == "42", text_of(r))
            r = await session.call_tool("fs__list_directory", {"path": ROOT})
            check("hello.txt" in text_of(r), text_of(r))
            ok("called tools on three backends")

            read_result = await session.read_resource("ringmcp://reference/readme")
            check("reference" in read_result.contents[0].text.lower(), "the README")
            prompt = await session.get_prompt("ref__greet", {"name": "Ada"})
            check("Hello, Ada!" in prompt.messages[0].content.text, "the prompt")
            ok("read a resource and got a prompt")

            progress = []

            async def on_progress(p, total, message):
                progress.append(p)

            await session.call_tool(
                "everything__trigger-long-running-operation",
                {"duration": 1, "steps": 3},
                progress_callback=on_progress,
            )
            check(len(progress) >= 2, f"progress: {progress}")
            ok(f"received {len(progress)} progress notifications")

            with anyio.move_on_after(0.3):
                await session.call_tool("ref__slow", {"ms": 30000})
                raise AssertionError("the slow call finished")
            # The backend's own list of the cancellations it received: a JSON array with one
            # entry, asked again until it has it (the notification crosses on its own time).
            seen = []
            for _ in range(100):
                r = await session.call_tool("ref__cancelled", {})
                check(not r.is_error, f"ref__cancelled answered: {r}")
                seen = json.loads(text_of(r))
                check(isinstance(seen, list), f"a JSON array: {text_of(r)}")
                if seen:
                    break
                await anyio.sleep(0.1)
            check(len(seen) >= 1, f"the backend saw the cancellation: {seen}")
            ok("cancelled a call")

            r = await session.call_tool("everything__trigger-sampling-request", {"prompt": "hi", "maxTokens": 20})
            check(sampled, "the sampling request reached the client")
            check("sampled by the Python client" in str(r.content), str(r.content))
            r = await session.call_tool("everything__trigger-elicitation-request", {})
            check(elicited, "the elicitation request reached the client")
            check(any("trigger-sampling-request" in m for m in approvals), f"approvals: {approvals}")
            ok("answered sampling and elicitation")

            try:
                await session.call_tool("fs__write_file", {"path": f"{ROOT}/x.txt", "content": "x"})
                raise AssertionError("the denied call ran")
            except Exception as e:  # the SDK raises its MCPError
                check("write_file" in str(e), str(e))
            ok("policy denial")

            r = await session.call_tool("ref__blob", {"bytes": 100_000_000})
            links = [c for c in r.content if c.type == "resource_link"]
            check(links and links[0].size == 100_000_000, str(r.content)[:300])
            uri, offset, chunks = str(links[0].uri), 0, 0
            while offset < 100_000_000:
                part = await session.read_resource(f"{uri}?offset={offset}&length={1 << 20}")
                data = base64.b64decode(part.contents[0].blob)
                check(data and chr(data[0]) == PATTERN[offset % 36], f"chunk at {offset}")
                offset += len(data)
                chunks += 1
            check(offset == 100_000_000, f"read {offset}")
            ok(f"read the 100 MB result in {chunks} chunks")
    await stateless(server)
    if not HTTP:  # (a gateway of its own, started with --tool-search)
        await tool_search(StdioServerParameters(command=server.command, args=[*server.args, "--tool-search"]))
    ok("closed")


async def tool_search(server):
    """`--tool-search`: the list holds the finder; a search returns definitions, the gateway
    announces the grown list, and the found tool is listed and callable."""
    changed = anyio.Event()

    async def on_message(message):
        note = getattr(message, "root", message)
        if getattr(note, "method", None) == "notifications/tools/list_changed":
            changed.set()

    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            check(names == ["ringmcp__status", "ringmcp__find_tools"], f"search mode lists {names}")
            r = await session.call_tool("ringmcp__find_tools", {"query": "add two numbers", "k": 3})
            found = [t["name"] for t in r.structured_content["tools"]]
            check("py__add" in found, f"found {found}")
            with anyio.fail_after(10):
                await changed.wait()
            names = [t.name for t in (await session.list_tools()).tools]
            check(set(found) <= set(names), f"{found} not all in {names}")
            r = await session.call_tool("py__add", {"a": 40, "b": 2})
            check(text_of(r) == "42", text_of(r))
            ok(f"tool search: found {len(found)} tools, list_changed, listed and called")


async def stateless(server):
    """A 2026-07-28 session (server/discover, no initialize): what a backend asks (the
    gateway's approval, server-everything's sampling) comes back as input_required rounds,
    answered by retrying the call with inputResponses and the requestState. Over HTTP, each
    request is a POST of its own to the gateway's shared stateless session."""
    async with connect(server) as (read, write):
        # The callbacks declare the capabilities; in 2026-07-28 the requests come as rounds.
        async def never(context, params):
            raise AssertionError("a 2026-07-28 client gets no server requests")

        async with ClientSession(read, write, sampling_callback=never, elicitation_callback=never) as session:
            await session.discover()
            check(session.protocol_version == "2026-07-28", session.protocol_version)
            r = await session.call_tool("py__add", {"a": 20, "b": 22})
            check(text_of(r) == "42", text_of(r))
            args = {"prompt": "hi", "maxTokens": 5}
            name = "everything__trigger-sampling-request"
            r = await session.call_tool(name, args, allow_input_required=True)
            asked = []
            while isinstance(r, types.InputRequiredResult):
                responses = {}
                for key, request in r.input_requests.items():
                    asked.append(request.method)
                    if request.method == "elicitation/create":
                        responses[key] = {"action": "accept", "content": {"decision": "once"}}
                    else:
                        responses[key] = {"role": "assistant", "model": "m", "stopReason": "endTurn",
                                          "content": {"type": "text", "text": "sampled in rounds"}}
                r = await session.call_tool(name, args, allow_input_required=True,
                                            input_responses=responses, request_state=r.request_state)
            check(asked == ["elicitation/create", "sampling/createMessage"], f"rounds: {asked}")
            check("sampled in rounds" in str(r.content), str(r.content))
            ok("2026-07-28: approval and sampling as input_required rounds")


anyio.run(main)
