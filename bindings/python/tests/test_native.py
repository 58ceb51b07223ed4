"""The native API (ringmcp.Host, Client, ToolCall, ...) against real servers: ringmcp's
reference server, the official `server-everything` and a server on the official Python SDK, each
sandboxed unless a test says why not."""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time

import pytest

import ringmcp
from conftest import PATTERN, text


def test_every_method_of_the_reference_server(reference):
    async def main():
        async with ringmcp.Host() as host:
            c = await host.spawn(reference)
            assert c.name == "ref" and c.protocol_version == "2025-11-25"
            assert c.server_info["serverInfo"]["name"]
            names = [t["name"] for t in await c.list_tools()]
            assert {"echo", "add", "fail", "blob", "slow"} <= set(names)
            assert text(await c.call_tool("echo", {"text": "héllo"})) == "héllo"
            added = await c.call("add", {"a": 2, "b": 40}).timeout(5)
            assert added["structuredContent"] == {"sum": 42}
            failed = await c.call_tool("fail")
            assert failed["isError"] is True
            [readme] = await c.list_resources()
            read = await c.read_resource(readme["uri"])
            assert "reference" in read["contents"][0]["text"].lower()
            assert await c.list_resource_templates() == []
            [greet] = await c.list_prompts()
            prompt = await c.get_prompt(greet["name"], {"name": "Ada"})
            assert "Ada" in str(prompt["messages"])
            assert await c.ping() is None
            assert (await c.request("tools/list"))["tools"]
            stats = await c.stats()
            assert stats["pid"] > 0 and stats["requests"] >= 8
            # stdin closed: the server exits on its own, before any signal
            assert await c.shutdown() == "server process exited with status 0"
    asyncio.run(main())


def test_the_blocking_twin(reference):
    with ringmcp.Host() as host:
        c = host.spawn_blocking(reference).blocking
        assert text(c.call_tool("echo", {"text": "x"})) == "x"
        assert c.call("add", {"a": 1, "b": 2}).blocking()["structuredContent"] == {"sum": 3}
        assert len(c.list_tools()) >= 6
        assert c.stats()["pid"] > 0
    assert host.closed
    with pytest.raises(ringmcp.HostError, match="closed"):
        host.spawn_blocking(reference)


def test_server_everything_sandboxed(everything):
    async def main():
        async with ringmcp.Host() as host:
            c = await host.spawn(everything)
            assert text(await c.call_tool("echo", {"message": "hi"})) == "Echo: hi"
            assert "42" in text(await c.call_tool("get-sum", {"a": 40, "b": 2}))
            templates = await c.list_resource_templates()
            assert any("{resourceId}" in t["uriTemplate"] for t in templates)
            read = await c.read_resource("demo://resource/dynamic/text/1")
            assert read["contents"][0]["uri"] == "demo://resource/dynamic/text/1"
            prompts = {p["name"] for p in await c.list_prompts()}
            assert "simple-prompt" in prompts
            if c.has_capability("completions"):
                done = await c.complete({"type": "ref/prompt", "name": "completable-prompt"}, "department", "E")
                assert "values" in done
            await c.set_log_level("debug")
            await c.subscribe_resource("demo://resource/static/document/architecture.md")
            await c.unsubscribe_resource("demo://resource/static/document/architecture.md")
            seen = []
            def on_progress(progress, total, message):
                seen.append((progress, total))
            result = await c.call_tool("trigger-long-running-operation", {"duration": 1, "steps": 4}, progress=on_progress)
            assert "completed" in text(result).lower()
            assert len(seen) >= 2 and seen[-1][1] == 4, seen
    asyncio.run(main())


def test_events_arrive_as_an_async_iterator(reference):
    async def main():
        async with ringmcp.Host() as host:
            c = await host.spawn(reference)
            [readme] = await c.list_resources()
            await c.subscribe_resource(readme["uri"])
            await c.call_tool("touch", {"times": 3})
            events = c.events()
            got = []
            async for event in events:
                if event["type"] == "resource_updated":
                    got.append(event["seq"])
                if len(got) == 3:
                    break
            assert got == [1, 2, 3]
            await c.shutdown()
            async for event in events:
                if event["type"] == "closed":
                    break
    asyncio.run(main())


def test_a_cancelled_task_cancels_the_call_on_the_server(reference):
    async def main():
        async with ringmcp.Host() as host:
            c = await host.spawn(reference)
            task = asyncio.ensure_future(c.call_tool("slow", {"ms": 20_000}))
            await asyncio.sleep(0.3)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            deadline = time.monotonic() + 5
            while (await c.stats())["cancelled"] < 1:
                assert time.monotonic() < deadline, "no notifications/cancelled was sent"
                await asyncio.sleep(0.05)
            started = time.monotonic()
            assert text(await c.call_tool("echo", {"text": "next"})) == "next"
            assert time.monotonic() - started < 10  # not stuck behind the 20 s call
    asyncio.run(main())


def test_a_timeout_is_a_typed_error_and_the_server_goes_on(reference):
    with ringmcp.Host() as host:
        c = host.spawn_blocking(reference).blocking
        with pytest.raises(ringmcp.RequestTimeout) as caught:
            c.call("slow", {"ms": 10_000}).timeout(0.2).blocking()
        assert isinstance(caught.value, TimeoutError) and caught.value.fault == "peer"
        assert text(c.call_tool("echo", {"text": "after"})) == "after"


def test_a_100_mb_result_is_read_as_a_file(reference):
    size = 100_000_000
    with ringmcp.Host() as host:
        c = host.spawn_blocking(reference)
        result = c.blocking.call_tool("blob", {"bytes": size})
        [uri] = ringmcp.spilled_uris(result)
        with ringmcp.open_spilled(c, uri) as f:
            assert f.seekable() and f.readable()
            assert f.seek(0, 2) == size
            f.seek(size - 10)
            tail = f.read()
            assert tail == bytes(PATTERN[(size - 10 + i) % 36] for i in range(10))
            f.seek(0)
            digest, expected, offset = hashlib.sha256(), hashlib.sha256(), 0
            while chunk := f.read(4 << 20):
                digest.update(chunk)
                start = offset % 36
                expected.update((PATTERN * (len(chunk) // 36 + 2))[start:start + len(chunk)])
                offset += len(chunk)
            assert offset == size and digest.digest() == expected.digest()

        async def chunks():
            total = 0
            async for chunk in ringmcp.open_spilled(c, uri).chunks(8 << 20):
                total += len(chunk)
            return total
        assert asyncio.run(chunks()) == size


def test_a_policy_denial_names_its_rule(reference):
    spec = ringmcp.ServerSpec("ref", reference_program(reference), ["serve"],
                              policy={"tools": {"echo": "deny"}})
    with ringmcp.Host(policy=True) as host:
        c = host.spawn_blocking(spec).blocking
        with pytest.raises(ringmcp.PolicyDenied) as caught:
            c.call_tool("echo", {"text": "no"})
        assert caught.value.rule and "echo" in caught.value.rule
        assert isinstance(caught.value, PermissionError) and caught.value.fault == "policy"
        assert c.call_tool("add", {"a": 1, "b": 1})["structuredContent"] == {"sum": 2}


def py_server_args() -> list[str]:
    from conftest import PY_ECHO, VENV_PYTHON
    return [str(VENV_PYTHON), str(PY_ECHO)]


def reference_program(spec: ringmcp.ServerSpec) -> str:
    from ringmcp._helper import HELPER
    return str(HELPER)


def test_the_approver_decides_calls_the_policy_asks_about(reference):
    asked = []

    def approver(request):
        asked.append((request["tool"], request["arguments"], request["rule"]))
        return "once" if request["arguments"].get("text") == "yes" else "deny"

    spec = ringmcp.ServerSpec("ref", reference_program(reference), ["serve"],
                              policy={"tools": {"echo": "ask"}})
    with ringmcp.Host(approver=approver) as host:
        c = host.spawn_blocking(spec).blocking
        assert text(c.call_tool("echo", {"text": "yes"})) == "yes"
        with pytest.raises(ringmcp.PolicyDenied):
            c.call_tool("echo", {"text": "nope"})
    assert [a[0] for a in asked] == ["echo", "echo"] and asked[0][1] == {"text": "yes"}


def test_an_async_approver_runs_on_the_hosts_loop(reference):
    loops = []

    async def approver(request):
        loops.append(asyncio.get_running_loop())
        await asyncio.sleep(0.01)
        return True

    spec = ringmcp.ServerSpec("ref", reference_program(reference), ["serve"],
                              policy={"tools": {"echo": "ask"}})

    async def main():
        async with ringmcp.Host(approver=approver) as host:
            c = await host.spawn(spec)
            assert text(await c.call_tool("echo", {"text": "ok"})) == "ok"
            assert loops == [asyncio.get_running_loop()]
    asyncio.run(main())


def test_sampling_and_elicitation_callbacks_answer_a_python_sdk_server(py_server):
    sampled, elicited = [], []

    async def sampling(server, params):
        sampled.append((server, params["messages"][0]["content"]["text"]))
        return {"role": "assistant", "content": {"type": "text", "text": "a summary"},
                "model": "test-model", "stopReason": "endTurn"}

    def elicitation(server, params):
        elicited.append(params["message"])
        return {"action": "accept", "content": {"ok": True}}

    # The SDK server asks for sampling and elicitation within a call only in a 2025 session: in
    # 2026-07-28 it answers "no back-channel" (docs/gateway.md, "Eras").
    spec = ringmcp.ServerSpec("py", py_server_args()[0], py_server_args()[1:], era="legacy")

    async def main():
        async with ringmcp.Host(sampling=sampling, elicitation=elicitation) as host:
            c = await host.spawn(spec)
            summary = await c.call_tool("summarize", {"text": "a long text"})
            assert "a summary" in text(summary), summary
            confirmed = await c.call_tool("confirm", {"question": "sure?"})
            assert text(confirmed) == "accept: True", confirmed
    asyncio.run(main())
    assert sampled and sampled[0][0] == "py" and "a long text" in sampled[0][1]
    assert elicited and "sure?" in elicited[0]


def test_a_callback_that_raises_never_crashes_the_host(py_server, capfd):
    def sampling(server, params):
        raise RuntimeError("the model is down")

    spec = ringmcp.ServerSpec("py", py_server_args()[0], py_server_args()[1:], era="legacy")
    with ringmcp.Host(sampling=sampling) as host:
        c = host.spawn_blocking(spec).blocking
        try:
            result = c.call_tool("summarize", {"text": "x"})
            assert result.get("isError"), result
        except ringmcp.ServerError as e:
            assert "sampling" in str(e) or "model is down" in str(e)
        assert text(c.call_tool("echo", {"text": "still here"})) == "still here"
    assert "the model is down" in capfd.readouterr().err


def test_threads_and_asyncio_share_a_client(reference):
    with ringmcp.Host() as host:
        client = host.spawn_blocking(reference)
        errors = []

        def worker(n):
            try:
                for i in range(50):
                    want = f"t{n}-{i}"
                    assert text(client.blocking.call_tool("echo", {"text": want})) == want
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()

        async def main():
            got = await asyncio.gather(*(client.call_tool("echo", {"text": f"a{i}"}) for i in range(200)))
            assert [text(r) for r in got] == [f"a{i}" for i in range(200)]
        asyncio.run(main())
        for t in threads:
            t.join()
        assert not errors, errors


def test_a_blocking_wait_answers_ctrl_c_and_the_client_goes_on(reference):
    import _thread
    import signal
    # A runner started in the background (nohup, `&` without job control) has SIGINT ignored,
    # which Python keeps, and interrupt_main then does nothing: Python's handler for this test.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with ringmcp.Host() as host:
            c = host.spawn_blocking(reference).blocking
            timer = threading.Timer(0.3, _thread.interrupt_main)
            timer.start()
            started = time.monotonic()
            with pytest.raises(KeyboardInterrupt):
                c.call_tool("slow", {"ms": 20_000})
            assert time.monotonic() - started < 10  # ended by the signal, not by the 20 s call
            assert text(c.call_tool("echo", {"text": "after"})) == "after"
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_server_that_fails_to_start_shows_its_stderr():
    spec = ringmcp.ServerSpec("broken", "sh", ["-c", "echo 'cannot find my config' >&2; exit 3"], sandbox=False)
    with ringmcp.Host() as host:
        with pytest.raises(ringmcp.HandshakeError) as caught:
            host.spawn_blocking(spec)
    assert caught.value.server == "broken"
    assert caught.value.stderr == ["cannot find my config"]


def test_a_server_that_dies_mid_call_is_a_server_closed(reference):
    with ringmcp.Host() as host:
        c = host.spawn_blocking(reference).blocking
        with pytest.raises(ringmcp.ServerClosed) as caught:
            c.call_tool("exit", {"code": 7})
        assert caught.value.server == "ref" and caught.value.fault == "peer"


def test_config_entries_mean_what_they_mean_in_a_file(reference, tmp_path):
    from ringmcp._helper import HELPER
    cfg = ringmcp.Config.parse({
        "policy": {"default": "allow"},
        "mcpServers": {
            "ref": {"command": str(HELPER), "args": ["serve"], "sandbox": {"profile": "strict", "memory": "256M"},
                    "policy": {"tools": {"fail": "deny"}}},
            "remote": {"url": "http://127.0.0.1:9/mcp"},
        },
    })
    assert cfg.names() == ["ref", "remote"]
    assert cfg.server("ref").sandboxed and not cfg.server("remote").sandboxed
    with pytest.raises(ringmcp.ConfigError, match="ref, remote"):
        cfg.server("nope")
    with pytest.raises(ringmcp.ConfigError):
        ringmcp.ServerSpec.from_entry("bad", {"command": "x", "sandbox": {"nope": 1}})
    with cfg.host() as host:
        c = host.spawn_blocking(cfg.server("ref")).blocking
        with pytest.raises(ringmcp.PolicyDenied):
            c.call_tool("fail")
    with pytest.raises(ringmcp.InvalidArgument, match="unknown option"):
        ringmcp.Host(spil=False)


def test_the_router_picks_the_tools_that_fit(reference, everything):
    async def main():
        async with ringmcp.Host() as host:
            clients = await asyncio.gather(host.spawn(reference), host.spawn(everything))  # noqa: F841  (the router sees live clients)
            routing = await host.router().route("add two numbers together", 3)
            assert routing["catalog"] >= 10 and len(routing["tools"]) == 3
            names = [t["name"] for t in routing["tools"]]
            assert any(n.endswith(("add", "get-sum")) for n in names), names
            assert routing["tokens"] < routing["all_tokens"]
    asyncio.run(main())


EXIT_SCRIPT = """
import asyncio, sys, ringmcp
async def main():
    host = ringmcp.Host()
    c = await host.spawn(ringmcp.ServerSpec("ref", sys.argv[1], ["serve"], sandbox=False))
    await c.ping()
    if sys.argv[2] == "shutdown":
        await c.shutdown()
    # the host is left open: closed at exit
asyncio.run(main())
"""


@pytest.mark.parametrize("last", ["ping", "shutdown"])
def test_exiting_right_after_an_answer_is_clean(last):
    """An answer's completion never touches Python from another thread (a completion that did,
    on a worker while the interpreter finalized, crashed about every second exit)."""
    import subprocess
    import sys

    from ringmcp._helper import HELPER
    for _ in range(10):
        run = subprocess.run([sys.executable, "-c", EXIT_SCRIPT, str(HELPER), last],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr[-2000:]
        assert "Fatal" not in run.stderr and "panicked" not in run.stderr, run.stderr[-2000:]


def test_a_relative_interpreter_path_finds_its_venv_in_the_sandbox(py_server):
    """`.deps/venv/bin/python server.py`: inside the sandbox (working directory /tmp) the
    interpreter still finds its venv, and so the SDK."""
    import os

    from conftest import PY_ECHO, VENV_PYTHON
    relative = os.path.relpath(VENV_PYTHON)
    assert not os.path.isabs(relative) and "/" in relative
    with ringmcp.Host() as host:
        c = host.spawn_blocking(ringmcp.ServerSpec("py", relative, [str(PY_ECHO)])).blocking
        assert text(c.call_tool("echo", {"text": "venv"})) == "venv"


def test_the_installed_package_ships_its_binary_and_command():
    """The wheel holds the ringmcp binary (the sandbox helper every sandboxed test above went
    through) and installs the `ringmcp` command."""
    import subprocess
    import sys
    from pathlib import Path

    from ringmcp._helper import HELPER
    assert HELPER is not None and HELPER.parent.name == "_bin"
    assert HELPER.parent.parent == Path(ringmcp.__file__).parent
    command = Path(sys.executable).parent / "ringmcp"
    version = subprocess.run([str(command), "--version"], capture_output=True, text=True, timeout=30)
    assert version.returncode == 0 and version.stdout.startswith("ringmcp "), version
