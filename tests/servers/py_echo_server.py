"""Minimal MCP server on the official Python SDK (mcp 2.x), stdio transport.

Used by ringmcp's integration tests as a second, independent server implementation.

Tools:
  echo(text: str) -> str      returns text unchanged
  add(a: int, b: int) -> int  returns a + b
  confirm(question: str)      asks the user through elicitation/create
  summarize(text: str)        asks the client's model through sampling/createMessage

confirm and summarize send their requests the legacy way (a server-to-client request on
the session), as most servers written for 2025-11-25 do: over a 2026-07-28 connection the
SDK has no back-channel for them and the call fails. The server speaks both eras.

Run:  .deps/venv/bin/python tests/servers/py_echo_server.py
The SDK logs to stderr only; stdout carries nothing but JSON-RPC lines.
"""

import warnings

from pydantic import BaseModel

from mcp import types
from mcp.server.mcpserver import Context, MCPServer

warnings.simplefilter("ignore")

server = MCPServer(name="py-echo-server", version="0.1.0")


@server.tool()
def echo(text: str) -> str:
    """Return the given text unchanged."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Return the sum of two integers."""
    return a + b


class Answer(BaseModel):
    ok: bool


@server.tool()
async def confirm(question: str, ctx: Context) -> str:
    """Ask the user a yes/no question and return what they said."""
    answer = await ctx.elicit(question, schema=Answer)
    data = answer.data.ok if answer.action == "accept" else None
    return f"{answer.action}: {data}"


@server.tool()
async def summarize(text: str, ctx: Context) -> str:
    """Summarize the text with the client's model."""
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=text))
    result = await ctx.session.create_message([message], max_tokens=50, related_request_id=ctx.request_id)
    return result.content.text if result.content.type == "text" else "(not text)"


if __name__ == "__main__":
    server.run("stdio")
