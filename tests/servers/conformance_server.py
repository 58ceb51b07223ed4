"""Backend for ringmcp's server-mode conformance run of `ringmcp gateway`.

scripts/conformance-server.sh runs the official MCP conformance suite
(@modelcontextprotocol/conformance, `server` mode) twice per protocol version:
once directly against this server over Streamable HTTP, to learn what the
backend itself passes, and once against `ringmcp gateway --http` with this
server as its only backend (launched over stdio), so that any difference is
the gateway's doing.

It is written on the official Python SDK (`mcp` 2.x, low-level `Server`), so
it serves both protocol eras: the 2025-11-25 handshake era (initialize,
sessions, server-to-client requests on the request's stream) and the
2026-07-28 stateless era (per-request `_meta` envelope, `server/discover`,
`subscriptions/listen`, multi-round-trip `InputRequiredResult`).

What the suite's server scenarios look for:

  tools      test_simple_text, test_image_content, test_audio_content,
             test_embedded_resource, test_multiple_content_types,
             test_error_handling, test_tool_with_progress,
             test_tool_with_logging, test_logging_tool, test_sampling,
             test_elicitation, test_elicitation_sep1034_defaults,
             test_elicitation_sep1330_enums, json_schema_2020_12_tool,
             test_reconnection (SSE polling), test_header_param (x-mcp-header),
             test_missing_capability, test_streaming_elicitation,
             test_trigger_tool_change, test_trigger_prompt_change and the
             test_input_required_result_* family (SEP-2322).
  resources  test://static-text, test://static-binary, test://watched-resource,
             template test://template/{id}/data; an unknown URI answers -32602
             with data.uri (SEP-2164); subscribe/unsubscribe on 2025-11-25.
  prompts    test_simple_prompt, test_prompt_with_arguments,
             test_prompt_with_embedded_resource, test_prompt_with_image,
             test_input_required_result_prompt (2026-07-28).
  other      completion/complete, logging/setLevel (2025-11-25), ping,
             caching hints (ttlMs/cacheScope) on cacheable results.

Server-to-client interaction: on a 2025-11-25 connection the sampling and
elicitation tools send real `sampling/createMessage` / `elicitation/create`
requests to the client; on 2026-07-28 (no back-channel) the same tools answer
with an `InputRequiredResult` and finish when the client retries with
`inputResponses`. `requestState` is sealed by the SDK's RequestStateBoundary,
so a tampered state is rejected with -32602. (The gateway reaches this backend in the 2026-07-28
era whatever its own client speaks, so through it the InputRequiredResult path is the one used.)

Debugging: with CONFORMANCE_SERVER_TRACE=/path/file.jsonl in its environment the server appends
one JSON line per inbound message (era, method, `_meta`, inputResponses, requestState), which
shows what a gateway in front of it actually forwards.

Run:
  .deps/venv/bin/python tests/servers/conformance_server.py             # stdio
  .deps/venv/bin/python tests/servers/conformance_server.py --http 8931 # http://127.0.0.1:8931/mcp
The SDK logs to stderr only; on stdio, stdout carries nothing but JSON-RPC.
"""

from __future__ import annotations

import argparse
import base64
import io
import itertools
import json
import logging
import os
import struct
import sys
import warnings
import wave
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp.server.caching import CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, PromptsListChanged, ToolsListChanged
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

# Sampling, elicitation, roots and logging are deprecated in 2026-07-28 but are exactly what the
# 2025-11-25 scenarios exercise; the warnings would only clutter the gateway's log.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

SERVER_NAME = "ringmcp-conformance-backend"

Ctx = ServerRequestContext[Any, Any]


# ------------------------------------------------------------------------------------ fixtures


def _make_png() -> bytes:
    """A 1x1 opaque red PNG, built by hand (signature, IHDR, IDAT, IEND)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # width, height, 8-bit, RGB
    pixels = zlib.compress(b"\x00\xff\x00\x00")  # filter byte 0, then one red pixel
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def _make_wav() -> bytes:
    """10 ms of 8 kHz mono 16-bit silence."""
    buf = io.BytesIO()
    with wave.open(buf, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(b"\x00\x00" * 80)
    return buf.getvalue()


PNG_B64 = base64.b64encode(_make_png()).decode()
WAV_B64 = base64.b64encode(_make_wav()).decode()

# The inputSchema the json-schema-2020-12 scenario expects to survive tools/list untouched.
JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_result(*content: dict[str, Any], is_error: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"content": list(content)}
    if is_error:
        result["isError"] = True
    return result


def is_modern(ctx: Ctx) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


# --------------------------------------------------------------------- input requests (both eras)


def elicit_request(message: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"method": "elicitation/create", "params": {"mode": "form", "message": message, "requestedSchema": schema}}


def sampling_request(prompt: str, max_tokens: int) -> dict[str, Any]:
    return {
        "method": "sampling/createMessage",
        "params": {"messages": [{"role": "user", "content": text(prompt)}], "maxTokens": max_tokens},
    }


ROOTS_REQUEST: dict[str, Any] = {"method": "roots/list", "params": {}}


def input_required(requests: dict[str, dict[str, Any]] | None = None, state: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"resultType": "input_required"}
    if requests:
        result["inputRequests"] = requests
    if state is not None:
        result["requestState"] = state
    return result


def responses_of(params: types.InputResponseRequestParams) -> dict[str, dict[str, Any]]:
    """The retry's `inputResponses` as plain wire dicts (empty on the first round)."""
    return {
        key: value.model_dump(by_alias=True, mode="json", exclude_none=True)
        for key, value in (params.input_responses or {}).items()
    }


async def ask_client(ctx: Ctx, params: types.CallToolRequestParams, key: str, request: dict[str, Any]):
    """Get one answer from the client in whichever way the connection's era allows.

    2025-11-25: send the request on the tools/call's own stream and return the answer.
    2026-07-28: return the answer carried by the retry's `inputResponses[key]`, or
    `None` when the caller must answer with `input_required({key: request})` first.
    """
    if is_modern(ctx):
        return responses_of(params).get(key)
    method, body = request["method"], request["params"]
    if method == "elicitation/create":
        answer = await ctx.session.elicit_form(body["message"], body["requestedSchema"], ctx.request_id)
    elif method == "sampling/createMessage":
        answer = await ctx.session.create_message(
            [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=m["content"]["text"]))
             for m in body["messages"]],
            max_tokens=body["maxTokens"],
            related_request_id=ctx.request_id,
        )
    else:
        answer = await ctx.session.list_roots()
    return answer.model_dump(by_alias=True, mode="json", exclude_none=True)


def require_client_capability(ctx: Ctx, name: str) -> None:
    """Answer -32021 (SEP-2575) when the client did not declare capability `name`."""
    caps = ctx.session.client_capabilities
    if caps is None or getattr(caps, name, None) is None:
        raise MCPError(
            code=types.MISSING_REQUIRED_CLIENT_CAPABILITY,
            message=f"This tool needs the client's {name} capability",
            data={"requiredCapabilities": {name: {}}},
        )


# ------------------------------------------------------------------------------------ tools

ToolFn = Callable[[Ctx, types.CallToolRequestParams], Awaitable[dict[str, Any]]]


@dataclass
class ToolDef:
    name: str
    description: str
    fn: ToolFn
    schema: dict[str, Any] = field(default_factory=lambda: dict(NO_ARGS))
    eras: str = "both"  # "both", "legacy" (2025-11-25 only) or "modern" (2026-07-28 only)

    def visible(self, ctx: Ctx) -> bool:
        return self.eras == "both" or (self.eras == "modern") == is_modern(ctx)

    def wire(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "inputSchema": self.schema}


TOOLS: dict[str, ToolDef] = {}


def tool(description: str, schema: dict[str, Any] | None = None, *, eras: str = "both", name: str | None = None):
    def register(fn: ToolFn) -> ToolFn:
        tool_name = name or fn.__name__
        TOOLS[tool_name] = ToolDef(tool_name, description, fn, schema or dict(NO_ARGS), eras)
        return fn

    return register


# Listed first: the header-validation scenario calls tools[0] with no arguments.
@tool("Returns a fixed text block.")
async def test_simple_text(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    return tool_result(text("This is a simple text response for testing."))


@tool("Returns a 1x1 red PNG image.")
async def test_image_content(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    return tool_result({"type": "image", "data": PNG_B64, "mimeType": "image/png"})


@tool("Returns a short silent WAV clip.")
async def test_audio_content(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    return tool_result({"type": "audio", "data": WAV_B64, "mimeType": "audio/wav"})


@tool("Returns an embedded text resource.")
async def test_embedded_resource(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    resource = {"uri": "test://embedded-resource", "mimeType": "text/plain",
                "text": "This is an embedded resource content."}
    return tool_result({"type": "resource", "resource": resource})


@tool("Returns text, an image and an embedded resource together.")
async def test_multiple_content_types(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    resource = {"uri": "test://mixed-content-resource", "mimeType": "application/json",
                "text": json.dumps({"test": "data", "value": 123})}
    return tool_result(
        text("Multiple content types test:"),
        {"type": "image", "data": PNG_B64, "mimeType": "image/png"},
        {"type": "resource", "resource": resource},
    )


@tool("Always fails, reporting the failure as a tool result with isError.")
async def test_error_handling(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    return tool_result(text("This tool intentionally returns an error for testing"), is_error=True)


@tool("Reports progress 0, 50 and 100 of 100 when the caller sent a progress token.")
async def test_tool_with_progress(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    for step, value in enumerate((0, 50, 100)):
        if step:
            await anyio.sleep(0.05)
        await ctx.session.report_progress(value, 100, f"step {step + 1} of 3")
    return tool_result(text("Progress reporting finished."))


# Per-process minimum level set by logging/setLevel (2025-11-25). On 2026-07-28 the SDK gates
# notifications/message on each request's own `_meta` log-level opt-in instead.
LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
min_log_level = "debug"


async def send_log(ctx: Ctx, level: str, message: str) -> None:
    if not is_modern(ctx) and LOG_LEVELS.index(level) < LOG_LEVELS.index(min_log_level):
        return
    await ctx.session.send_log_message(level, message, logger=SERVER_NAME, related_request_id=ctx.request_id)


async def log_three_steps(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    for step, message in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
        if step:
            await anyio.sleep(0.05)
        await send_log(ctx, "info", message)
    return tool_result(text("Logging tool finished."))


tool("Sends three info log notifications while it runs.", name="test_tool_with_logging")(log_three_steps)
tool("Sends log notifications only if the request opted in to a log level.", name="test_logging_tool",
     eras="modern")(log_three_steps)


@tool("Asks the client to sample an LLM completion for the given prompt.",
      {"type": "object", "properties": {"prompt": {"type": "string", "description": "The prompt to send"}},
       "required": ["prompt"]})
async def test_sampling(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    prompt = str((params.arguments or {}).get("prompt", ""))
    request = sampling_request(prompt, 100)
    if is_modern(ctx):
        require_client_capability(ctx, "sampling")
    answer = await ask_client(ctx, params, "sampling", request)
    if answer is None:
        return input_required({"sampling": request})
    content = answer.get("content")
    reply = content.get("text", "") if isinstance(content, dict) else json.dumps(content)
    return tool_result(text(f"LLM response: {reply}"))


async def elicit_and_report(ctx: Ctx, params: types.CallToolRequestParams, message: str, schema: dict[str, Any],
                            prefix: str) -> dict[str, Any]:
    request = elicit_request(message, schema)
    if is_modern(ctx):
        require_client_capability(ctx, "elicitation")
    answer = await ask_client(ctx, params, "form", request)
    if answer is None:
        return input_required({"form": request})
    return tool_result(text(f"{prefix}: action={answer.get('action')}, content={json.dumps(answer.get('content'))}"))


@tool("Asks the user (elicitation) for a username and an email address.",
      {"type": "object", "properties": {"message": {"type": "string", "description": "The message to show"}},
       "required": ["message"]})
async def test_elicitation(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    message = str((params.arguments or {}).get("message", "Please provide your information"))
    schema = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    return await elicit_and_report(ctx, params, message, schema, "User response")


@tool("Elicits a form whose fields carry default values of every primitive type (SEP-1034).")
async def test_elicitation_sep1034_defaults(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Your name", "default": "John Doe"},
            "age": {"type": "integer", "description": "Your age", "default": 30},
            "score": {"type": "number", "description": "Your score", "default": 95.5},
            "status": {"type": "string", "description": "Account status",
                       "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "description": "Verified account", "default": True},
        },
    }
    return await elicit_and_report(ctx, params, "Please review these defaults", schema, "Elicitation completed")


@tool("Elicits a form using the five enum styles of SEP-1330.")
async def test_elicitation_sep1330_enums(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    schema = {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ]},
            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                           "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "items": {"anyOf": [
                {"const": "value1", "title": "First Choice"},
                {"const": "value2", "title": "Second Choice"},
                {"const": "value3", "title": "Third Choice"},
            ]}},
        },
    }
    return await elicit_and_report(ctx, params, "Pick some options", schema, "Elicitation completed")


@tool("Declares a JSON Schema 2020-12 inputSchema ($schema, $defs, $anchor, allOf/anyOf, if/then/else).",
      JSON_SCHEMA_2020_12)
async def json_schema_2020_12_tool(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    return tool_result(text(f"Received: {json.dumps(params.arguments or {}, sort_keys=True)}"))


# Listed in both eras: the gateway reaches its backend over stdio in the 2026-07-28 era even for a
# 2025-11-25 client, and there is no SSE stream to close then (close_sse_stream is None).
@tool("Closes its SSE response stream mid-call, then answers on the resumed stream (SEP-1699).")
async def test_reconnection(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    await anyio.sleep(0.1)
    if ctx.close_sse_stream is not None:
        await ctx.close_sse_stream()
    await anyio.sleep(0.2)
    return tool_result(text("Reconnection test completed"))


@tool("Echoes a string parameter that is mirrored into the Mcp-Param-Region header (SEP-2243).",
      {"type": "object",
       "properties": {"region": {"type": "string", "description": "A region name", "x-mcp-header": "Region"}},
       "required": ["region"]},
      eras="modern")
async def test_header_param(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    return tool_result(text(f"region={(params.arguments or {}).get('region')}"))


@tool("Needs the client's sampling capability; without it, answers -32021 (SEP-2575).", eras="modern")
async def test_missing_capability(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    require_client_capability(ctx, "sampling")
    return tool_result(text("The client declared sampling."))


@tool("Needs elicitation; asks for a confirmation through an InputRequiredResult.", eras="modern")
async def test_streaming_elicitation(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    require_client_capability(ctx, "elicitation")
    await ctx.session.report_progress(1, 2, "asking the user")
    answer = responses_of(params).get("confirm")
    if answer is None:
        schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
        return input_required({"confirm": elicit_request("Continue?", schema)})
    return tool_result(text(f"confirmed: {json.dumps(answer.get('content'))}"))


# ------------------------------------------------------------- list mutation (listChanged hooks)

BUS = InMemorySubscriptionBus()
toggles = {"tool": itertools.count(), "prompt": itertools.count()}
extra = {"tool": False, "prompt": False}


async def _announce_tools(ctx: Ctx) -> None:
    if is_modern(ctx):
        await BUS.publish(ToolsListChanged())
    else:
        await ctx.session.send_tool_list_changed()


@tool("Adds or removes the tool test_dynamic_tool, then announces the tool list change.")
async def test_trigger_tool_change(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    extra["tool"] = not extra["tool"]
    await _announce_tools(ctx)
    return tool_result(text(f"test_dynamic_tool is now {'listed' if extra['tool'] else 'unlisted'}"))


@tool("Adds or removes the prompt test_dynamic_prompt, then announces the prompt list change.")
async def test_trigger_prompt_change(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    extra["prompt"] = not extra["prompt"]
    if is_modern(ctx):
        await BUS.publish(PromptsListChanged())
    else:
        await ctx.session.send_prompt_list_changed()
    return tool_result(text(f"test_dynamic_prompt is now {'listed' if extra['prompt'] else 'unlisted'}"))


async def test_dynamic_tool(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    return tool_result(text("dynamic tool called"))


DYNAMIC_TOOL = ToolDef("test_dynamic_tool", "Present only while toggled on by test_trigger_tool_change.",
                       test_dynamic_tool)


# ---------------------------------------------------- multi-round-trip tools (2026-07-28, SEP-2322)

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def form_value(answer: dict[str, Any] | None, key: str) -> Any:
    if not answer or answer.get("action") != "accept":
        return None
    return (answer.get("content") or {}).get(key)


@tool("Round 1 asks the user's name (elicitation); round 2 greets them.", eras="modern")
async def test_input_required_result_elicitation(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    answer = responses_of(params).get("user_name")
    if answer is None:  # also when only unknown keys came back: ask again rather than fail
        return input_required({"user_name": elicit_request("What is your name?", NAME_SCHEMA)})
    return tool_result(text(f"Hello, {form_value(answer, 'name') or 'stranger'}!"))


@tool("Round 1 asks the client to sample an answer; round 2 returns it.", eras="modern")
async def test_input_required_result_sampling(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    answer = responses_of(params).get("capital_question")
    if answer is None:
        return input_required({"capital_question": sampling_request("What is the capital of France?", 100)})
    content = answer.get("content")
    reply = content.get("text", "") if isinstance(content, dict) else json.dumps(content)
    return tool_result(text(f"The model answered: {reply}"))


@tool("Round 1 asks for the client's roots; round 2 lists them.", eras="modern")
async def test_input_required_result_list_roots(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    answer = responses_of(params).get("client_roots")
    if answer is None:
        return input_required({"client_roots": ROOTS_REQUEST})
    uris = [root.get("uri") for root in answer.get("roots", [])]
    return tool_result(text(f"Client roots: {', '.join(uris) or '(none)'}"))


@tool("Round 1 returns an elicitation plus requestState; round 2 checks the echoed state.", eras="modern")
async def test_input_required_result_request_state(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    answer = responses_of(params).get("confirm")
    if answer is None or params.request_state is None:
        schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
        return input_required({"confirm": elicit_request("Please confirm", schema)}, state="awaiting-confirm")
    if params.request_state != "awaiting-confirm":
        raise MCPError(code=types.INVALID_PARAMS, message="Unexpected requestState")
    return tool_result(text(f"state-ok: confirmed={form_value(answer, 'ok')}"))


@tool("Round 1 asks for an elicitation, a sampling and the roots at once; round 2 needs all three.", eras="modern")
async def test_input_required_result_multiple_inputs(ctx: Ctx,
                                                     params: types.CallToolRequestParams) -> dict[str, Any]:
    requests = {
        "user_name": elicit_request("What is your name?", NAME_SCHEMA),
        "greeting": sampling_request("Generate a greeting", 50),
        "client_roots": ROOTS_REQUEST,
    }
    answers = responses_of(params)
    missing = {key: req for key, req in requests.items() if key not in answers}
    if missing:
        return input_required(missing, state="multiple-inputs")
    greeting = answers["greeting"].get("content", {})
    roots = len(answers["client_roots"].get("roots", []))
    return tool_result(text(f"name={form_value(answers['user_name'], 'name')}, "
                            f"greeting={greeting.get('text') if isinstance(greeting, dict) else greeting}, "
                            f"roots={roots}"))


@tool("Three rounds: asks a name, then a colour (with a new requestState), then completes.", eras="modern")
async def test_input_required_result_multi_round(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    answers = responses_of(params)
    state = params.request_state
    if state and state.startswith("round-2:") and "step2" in answers:
        name = state.removeprefix("round-2:")
        return tool_result(text(f"{name} likes {form_value(answers['step2'], 'color')}"))
    if state == "round-1" and "step1" in answers:
        name = form_value(answers["step1"], "name") or "stranger"
        color = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}
        return input_required({"step2": elicit_request("Step 2: What is your favorite color?", color)},
                              state=f"round-2:{name}")
    return input_required({"step1": elicit_request("Step 1: What is your name?", NAME_SCHEMA)}, state="round-1")


@tool("Returns a sealed requestState; a modified one is rejected by the SDK with -32602.", eras="modern")
async def test_input_required_result_tampered_state(ctx: Ctx,
                                                    params: types.CallToolRequestParams) -> dict[str, Any]:
    answer = responses_of(params).get("user_name")
    if answer is None or params.request_state is None:
        return input_required({"user_name": elicit_request("What is your name?", NAME_SCHEMA)}, state="untampered")
    return tool_result(text(f"state intact for {form_value(answer, 'name')}"))


@tool("Asks only for what the client declared: sampling and/or elicitation.", eras="modern")
async def test_input_required_result_capabilities(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    caps = ctx.session.client_capabilities
    answers = responses_of(params)
    wanted: dict[str, dict[str, Any]] = {}
    if caps is not None and caps.sampling is not None:
        wanted["sample"] = sampling_request("Say hello", 20)
    if caps is not None and caps.elicitation is not None:
        wanted["form"] = elicit_request("What is your name?", NAME_SCHEMA)
    if not wanted:
        raise MCPError(
            code=types.MISSING_REQUIRED_CLIENT_CAPABILITY,
            message="This tool needs the client's sampling or elicitation capability",
            data={"requiredCapabilities": {"sampling": {}}},
        )
    missing = {key: req for key, req in wanted.items() if key not in answers}
    if missing:
        return input_required(missing)
    return tool_result(text(f"answered: {', '.join(sorted(wanted))}"))


# -------------------------------------------------------------------------- tool handlers


def visible_tools(ctx: Ctx) -> list[ToolDef]:
    tools = [t for t in TOOLS.values() if t.visible(ctx)]
    if extra["tool"]:
        tools.append(DYNAMIC_TOOL)
    return tools


def lookup_tool(name: str) -> ToolDef | None:
    if name == DYNAMIC_TOOL.name and extra["tool"]:
        return DYNAMIC_TOOL
    return TOOLS.get(name)


async def list_tools(ctx: Ctx, params: types.PaginatedRequestParams | None) -> dict[str, Any]:
    return {"tools": [t.wire() for t in visible_tools(ctx)]}


async def call_tool(ctx: Ctx, params: types.CallToolRequestParams) -> dict[str, Any]:
    found = lookup_tool(params.name)
    if found is None or not found.visible(ctx):
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
    return await found.fn(ctx, params)


def tool_input_schema(name: str) -> dict[str, Any] | None:
    found = lookup_tool(name)
    return None if found is None else found.schema


# ------------------------------------------------------------------------------- resources

STATIC_RESOURCES: dict[str, dict[str, Any]] = {
    "test://static-text": {
        "meta": {"name": "static-text", "description": "A static text resource", "mimeType": "text/plain"},
        "contents": {"mimeType": "text/plain", "text": "This is the content of the static text resource."},
    },
    "test://static-binary": {
        "meta": {"name": "static-binary", "description": "A static binary resource (PNG)", "mimeType": "image/png"},
        "contents": {"mimeType": "image/png", "blob": PNG_B64},
    },
    "test://watched-resource": {
        "meta": {"name": "watched-resource", "description": "A resource clients may subscribe to",
                 "mimeType": "text/plain"},
        "contents": {"mimeType": "text/plain", "text": "Watched resource content."},
    },
}
TEMPLATE_PREFIX, TEMPLATE_SUFFIX = "test://template/", "/data"
subscriptions: set[str] = set()


async def list_resources(ctx: Ctx, params: types.PaginatedRequestParams | None) -> dict[str, Any]:
    return {"resources": [{"uri": uri, **entry["meta"]} for uri, entry in STATIC_RESOURCES.items()]}


async def list_resource_templates(ctx: Ctx, params: types.PaginatedRequestParams | None) -> dict[str, Any]:
    return {"resourceTemplates": [{
        "uriTemplate": TEMPLATE_PREFIX + "{id}" + TEMPLATE_SUFFIX,
        "name": "template-data",
        "description": "JSON data for the given id",
        "mimeType": "application/json",
    }]}


async def read_resource(ctx: Ctx, params: types.ReadResourceRequestParams) -> dict[str, Any]:
    uri = params.uri
    if uri in STATIC_RESOURCES:
        return {"contents": [{"uri": uri, **STATIC_RESOURCES[uri]["contents"]}]}
    if uri.startswith(TEMPLATE_PREFIX) and uri.endswith(TEMPLATE_SUFFIX):
        ident = uri[len(TEMPLATE_PREFIX):-len(TEMPLATE_SUFFIX)]
        if ident and "/" not in ident:
            body = json.dumps({"id": ident, "templateTest": True, "data": f"Data for ID: {ident}"})
            return {"contents": [{"uri": uri, "mimeType": "application/json", "text": body}]}
    raise MCPError(code=types.INVALID_PARAMS, message="Resource not found", data={"uri": uri})


async def subscribe(ctx: Ctx, params: types.SubscribeRequestParams) -> dict[str, Any]:
    subscriptions.add(params.uri)
    return {}


async def unsubscribe(ctx: Ctx, params: types.UnsubscribeRequestParams) -> dict[str, Any]:
    subscriptions.discard(params.uri)
    return {}


# --------------------------------------------------------------------------------- prompts

PROMPTS: list[dict[str, Any]] = [
    {"name": "test_simple_prompt", "description": "A prompt without arguments"},
    {"name": "test_prompt_with_arguments", "description": "A prompt with two required arguments",
     "arguments": [{"name": "arg1", "description": "First test argument", "required": True},
                   {"name": "arg2", "description": "Second test argument", "required": True}]},
    {"name": "test_prompt_with_embedded_resource", "description": "A prompt embedding the given resource",
     "arguments": [{"name": "resourceUri", "description": "URI of the resource to embed", "required": True}]},
    {"name": "test_prompt_with_image", "description": "A prompt carrying an image"},
]
MODERN_PROMPTS: list[dict[str, Any]] = [
    {"name": "test_input_required_result_prompt", "description": "A prompt that first asks the user for context"},
]
DYNAMIC_PROMPT = {"name": "test_dynamic_prompt", "description": "Present only while toggled on"}


def user(content: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": content}


async def list_prompts(ctx: Ctx, params: types.PaginatedRequestParams | None) -> dict[str, Any]:
    prompts = PROMPTS + (MODERN_PROMPTS if is_modern(ctx) else [])
    if extra["prompt"]:
        prompts = prompts + [DYNAMIC_PROMPT]
    return {"prompts": prompts}


async def get_prompt(ctx: Ctx, params: types.GetPromptRequestParams) -> dict[str, Any]:
    args = params.arguments or {}
    name = params.name
    if name == "test_simple_prompt":
        messages = [user(text("This is a simple prompt for testing."))]
    elif name == "test_prompt_with_arguments":
        messages = [user(text(f"Prompt with arguments: arg1='{args.get('arg1', '')}', arg2='{args.get('arg2', '')}'"))]
    elif name == "test_prompt_with_embedded_resource":
        uri = args.get("resourceUri") or "test://example-resource"
        resource = {"uri": uri, "mimeType": "text/plain", "text": "Embedded resource content for testing."}
        messages = [user({"type": "resource", "resource": resource}),
                    user(text("Please process the embedded resource above."))]
    elif name == "test_prompt_with_image":
        messages = [user({"type": "image", "data": PNG_B64, "mimeType": "image/png"}),
                    user(text("Please analyze the image above."))]
    elif name == "test_input_required_result_prompt" and is_modern(ctx):
        answer = responses_of(params).get("user_context")
        if answer is None:
            schema = {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}
            return input_required({"user_context": elicit_request("What context should the prompt use?", schema)})
        messages = [user(text(f"Answer using this context: {form_value(answer, 'context')}"))]
    elif name == DYNAMIC_PROMPT["name"] and extra["prompt"]:
        messages = [user(text("dynamic prompt"))]
    else:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {name}")
    return {"description": f"{name} rendered", "messages": messages}


# ------------------------------------------------------------------- completion and logging

COMPLETIONS = {
    "arg1": ["paris", "park", "party", "test-value", "testing"],
    "arg2": ["world", "wonder", "test-other"],
    "id": ["1", "123", "42"],
}


async def complete(ctx: Ctx, params: types.CompleteRequestParams) -> dict[str, Any]:
    prefix = params.argument.value or ""
    values = [v for v in COMPLETIONS.get(params.argument.name, []) if v.startswith(prefix)]
    return {"completion": {"values": values, "total": len(values), "hasMore": False}}


async def set_logging_level(ctx: Ctx, params: types.SetLevelRequestParams) -> dict[str, Any]:
    global min_log_level
    min_log_level = params.level
    return {}


# ------------------------------------------------------------------------------ the server


class ConformanceServer(Server[Any]):
    """The low-level server, announcing tools/prompts listChanged on handshake connections too."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(prompts_changed=True, tools_changed=True),
            experimental_capabilities,
            extensions,
        )


def complete_result(handler: Callable[[Ctx, Any], Awaitable[dict[str, Any]]]):
    """Wrap a handler returning a wire dict: on 2026-07-28 a final result must say `resultType: complete`
    (typed SDK results default it; plain dicts do not)."""

    async def wrapped(ctx: Ctx, params: Any) -> dict[str, Any]:
        result = await handler(ctx, params)
        if is_modern(ctx) and "resultType" not in result:
            result = {"resultType": "complete", **result}
        return result

    return wrapped


def build_server() -> ConformanceServer:
    cacheable = ("tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read")
    server = ConformanceServer(
        SERVER_NAME,
        version="1.0.0",
        instructions="Fixture server for the MCP conformance suite's server scenarios.",
        cache_hints={method: CacheHint(ttl_ms=0, scope="private") for method in cacheable},
        get_tool_input_schema=tool_input_schema,
        on_list_tools=complete_result(list_tools),
        on_call_tool=complete_result(call_tool),
        on_list_resources=complete_result(list_resources),
        on_list_resource_templates=complete_result(list_resource_templates),
        on_read_resource=complete_result(read_resource),
        on_subscribe_resource=complete_result(subscribe),
        on_unsubscribe_resource=complete_result(unsubscribe),
        on_subscriptions_listen=ListenHandler(BUS),
        on_list_prompts=complete_result(list_prompts),
        on_get_prompt=complete_result(get_prompt),
        on_completion=complete_result(complete),
        on_set_logging_level=complete_result(set_logging_level),
    )
    # Seal outgoing requestState and verify echoed ones (2026-07-28 MUST; -32602 on tampering).
    server.middleware.append(RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience=SERVER_NAME))
    if trace := os.environ.get("CONFORMANCE_SERVER_TRACE"):
        server.middleware.insert(0, TraceMiddleware(trace))
    return server


class TraceMiddleware:
    """Appends one JSON line per inbound message (era, method, raw `_meta`, MRTR fields) to a file.

    Set CONFORMANCE_SERVER_TRACE=/path/file.jsonl to see what the gateway actually forwards
    (e.g. whether a progressToken or a log-level opt-in survived the hop).
    """

    def __init__(self, path: str) -> None:
        self._path = path

    async def __call__(self, ctx: Ctx, call_next: Callable[[Ctx], Awaitable[Any]]) -> Any:
        params = dict(ctx.params or {})
        entry = {"version": ctx.protocol_version, "id": ctx.request_id, "method": ctx.method,
                 "name": params.get("name") or params.get("uri"), "meta": params.get("_meta"),
                 "inputResponses": params.get("inputResponses"), "requestState": params.get("requestState")}
        with open(self._path, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry, default=str) + "\n")
        return await call_next(ctx)


class MemoryEventStore(EventStore):
    """Keeps every SSE event so a client reconnecting with Last-Event-ID gets the rest (SEP-1699)."""

    def __init__(self) -> None:
        self._events: list[tuple[StreamId, EventId, types.JSONRPCMessage | None]] = []
        self._ids = itertools.count(1)

    async def store_event(self, stream_id: StreamId, message: types.JSONRPCMessage | None) -> EventId:
        event_id = f"{stream_id}:{next(self._ids)}"
        self._events.append((stream_id, event_id, message))
        return event_id

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        position = next((i for i, (_, eid, _) in enumerate(self._events) if eid == last_event_id), None)
        if position is None:
            return None
        stream_id = self._events[position][0]
        for sid, eid, message in self._events[position + 1:]:
            if sid == stream_id and message is not None:
                await send_callback(EventMessage(message, eid))
        return stream_id


async def serve_stdio(server: ConformanceServer) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_http(server: ConformanceServer, host: str, port: int) -> None:
    import uvicorn

    app = server.streamable_http_app(event_store=MemoryEventStore(), retry_interval=500, host=host)
    uvicorn.run(app, host=host, port=port, log_level="warning")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", type=int, metavar="PORT", help="serve Streamable HTTP at http://HOST:PORT/mcp")
    parser.add_argument("--host", default="127.0.0.1", help="address for --http (default 127.0.0.1)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(name)s: %(levelname)s %(message)s")
    server = build_server()
    if args.http is not None:
        serve_http(server, args.host, args.http)
    else:
        anyio.run(serve_stdio, server)


if __name__ == "__main__":
    main()
