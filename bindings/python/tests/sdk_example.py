"""A small MCP client written for the official Python SDK (``mcp`` 2.x): a tour of a server.

It starts a stdio server, shakes hands, and exercises what the server offers: tools (with
progress, sampling and elicitation round trips), resources, prompts, completion and logging.
It prints a JSON summary of what it saw.

    python sdk_example.py COMMAND [ARG ...]

ringmcp's tests run this file unchanged except for its imports (``from mcp`` becomes
``from ringmcp.mcp``), and compare its summary with the one the official SDK produces.
"""

from __future__ import annotations

import asyncio
import json
import sys
import warnings
from typing import Any

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

warnings.simplefilter("ignore")  # the SDK flags 2025-era features (logging, roots) as deprecated

SAMPLING_TOOLS = {"trigger-sampling-request": {"prompt": "Say hello"}, "summarize": {"text": "Say hello"}}
ELICITATION_TOOLS = {"trigger-elicitation-request": {}, "confirm": {"question": "Proceed?"}}


async def sampling(
    context: Any, params: types.CreateMessageRequestParams
) -> types.CreateMessageResult:
    """A stand-in for the application's model: answers with the last message, reversed."""
    last = params.messages[-1].content
    text = last.text if isinstance(last, types.TextContent) else "(not text)"
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=f"model says: {text[::-1]}"),
        model="example-model",
        stop_reason="endTurn",
    )


async def elicitation(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    """A stand-in for the user: fills in every required field of the form."""
    schema = getattr(params, "requested_schema", None) or {}
    content: dict[str, Any] = {}
    for name, spec in schema.get("properties", {}).items():
        kind = spec.get("type")
        if kind == "boolean":
            content[name] = True
        elif name in schema.get("required", []):
            content[name] = "Ada Lovelace"
    return types.ElicitResult(action="accept", content=content)


def texts(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


async def tour(command: str, args: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    logs: list[types.LoggingMessageNotificationParams] = []
    progress: list[tuple[float, float | None]] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total))

    server = StdioServerParameters(command=command, args=args, env=env)
    async with stdio_client(server) as (read, write):
        async with ClientSession(
            read,
            write,
            sampling_callback=sampling,
            elicitation_callback=elicitation,
            logging_callback=on_log,
            client_info=types.Implementation(name="sdk-example", version="1.0.0"),
        ) as session:
            init = await session.initialize()
            assert isinstance(init, types.InitializeResult)
            summary["server"] = init.server_info.name
            summary["protocol"] = session.protocol_version
            summary["has_instructions"] = bool(session.instructions)
            await session.send_ping()

            listing = await session.list_tools()
            tools = {tool.name: tool for tool in listing.tools}
            summary["tools"] = sorted(tools)
            summary["next_cursor"] = listing.next_cursor

            # echo, whatever its argument is called
            (arg,) = tools["echo"].input_schema["properties"]
            result = await session.call_tool("echo", {arg: "hello from the example"})
            summary["echo"] = texts(result)
            summary["echo_is_error"] = result.is_error

            for name in ("add", "get-sum"):
                if name in tools:
                    result = await session.call_tool(name, {"a": 2, "b": 3})
                    summary["sum"] = texts(result)

            for name, arguments in SAMPLING_TOOLS.items():
                if name in tools:
                    result = await session.call_tool(name, arguments)
                    summary["sampling"] = "model says: olleh yaS" in "".join(texts(result))

            for name, arguments in ELICITATION_TOOLS.items():
                if name in tools:
                    result = await session.call_tool(name, arguments)
                    summary["elicitation"] = texts(result)[0]

            if "trigger-long-running-operation" in tools:
                await session.call_tool(
                    "trigger-long-running-operation",
                    {"duration": 0.4, "steps": 2},
                    progress_callback=on_progress,
                )
                summary["progress"] = progress

            try:
                result = await session.call_tool("no-such-tool", {})
                summary["unknown_tool"] = f"isError={result.is_error}"
            except MCPError as error:
                summary["unknown_tool"] = f"MCPError {error.code}"

            capabilities = session.server_capabilities
            if capabilities and capabilities.resources:
                resources = (await session.list_resources()).resources
                templates = (await session.list_resource_templates()).resource_templates
                summary["resources"] = len(resources)
                summary["templates"] = sorted(t.uri_template for t in templates)
                if resources:
                    read = await session.read_resource(resources[0].uri)
                    first = read.contents[0]
                    kind = "text" if isinstance(first, types.TextResourceContents) else "blob"
                    summary["first_resource"] = [str(first.uri), kind]
                try:
                    await session.read_resource("nowhere://nothing")
                    summary["missing_resource"] = "read"
                except MCPError as error:
                    summary["missing_resource"] = f"MCPError {error.code}"

            if capabilities and capabilities.prompts:
                prompts = (await session.list_prompts()).prompts
                summary["prompts"] = sorted(p.name for p in prompts)
                simple = [p for p in prompts if not any(a.required for a in p.arguments or [])]
                if simple:
                    got = await session.get_prompt(simple[0].name)
                    summary["prompt_messages"] = len(got.messages)
                if "completable-prompt" in summary["prompts"]:
                    completion = await session.complete(
                        types.PromptReference(type="ref/prompt", name="completable-prompt"),
                        {"name": "name", "value": ""},
                        context_arguments={"department": "Sales"},
                    )
                    summary["completion"] = completion.completion.values

            if "toggle-simulated-logging" in tools and capabilities and capabilities.logging:
                await session.set_logging_level("debug")
                await session.call_tool("toggle-simulated-logging", {})
                for _ in range(100):
                    if logs:
                        break
                    await asyncio.sleep(0.05)
                await session.call_tool("toggle-simulated-logging", {})
                summary["logged"] = bool(logs) and logs[0].level in (
                    "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
                )
    return summary


def main(argv: list[str]) -> dict[str, Any]:
    summary = asyncio.run(tour(argv[0], argv[1:]))
    print(json.dumps(summary, indent=2, sort_keys=True))
    return summary


if __name__ == "__main__":
    main(sys.argv[1:])
