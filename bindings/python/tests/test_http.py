"""A Streamable HTTP server on loopback, reached through the native ServerSpec.http."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

import ringmcp
from conftest import FAULTS, text


@pytest.fixture
def http_server():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, str(FAULTS), "--http", str(port)])
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the HTTP test server did not start"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_calls_over_streamable_http(http_server):
    async def main():
        async with ringmcp.Host() as host:
            c = await host.spawn(ringmcp.ServerSpec.http("faults", http_server))
            assert "echo" in [t["name"] for t in await c.list_tools()]
            results = await __import__("asyncio").gather(*(c.call_tool("echo") for _ in range(32)))
            assert {text(r) for r in results} == {"ok echo"}
            assert text(await c.call("partial").timeout(5)) == "ok partial"

    __import__("asyncio").run(main())


def test_an_http_failure_is_a_typed_error(http_server):
    with ringmcp.Host() as host:
        c = host.spawn_blocking(ringmcp.ServerSpec.http("faults", http_server)).blocking
        with pytest.raises(ringmcp.ServerError) as caught:
            c.call_tool("status500")
        assert caught.value.server == "faults" and caught.value.fault in ("peer", "io")
