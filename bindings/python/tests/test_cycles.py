"""1,000 spawn/close cycles from Python leave no process, fd or thread behind."""

from __future__ import annotations

import asyncio
import gc
import time

import ringmcp
from conftest import children, fds, text, threads
from ringmcp._helper import HELPER


def sandbox_cgroups() -> list[str]:
    """The cgroups of this process's sandboxed servers that exist (`ringmcp-sbx.<pid>.<n>`, in
    any hierarchy)."""
    import os

    prefix = f"ringmcp-sbx.{os.getpid()}."
    found = []
    for root, dirs, _ in os.walk("/sys/fs/cgroup"):
        found += [os.path.join(root, d) for d in dirs if d.startswith(prefix)]
    return found


def settle(baseline_threads: int, deadline: float = 10.0) -> None:
    """Waits for threads that are ending (a closed host's reactor, tokio's idle workers)."""
    end = time.monotonic() + deadline
    while time.monotonic() < end and (children() or threads() > baseline_threads):
        time.sleep(0.05)


def test_a_thousand_spawn_close_cycles_leak_nothing():
    spec = ringmcp.ServerSpec("ref", str(HELPER), ["serve"], sandbox=False)
    async def cycles(host, n):
        for i in range(n):
            c = await host.spawn(spec)
            assert text(await c.call_tool("echo", {"text": str(i)})) == str(i)
            await c.shutdown()

    # Warm up: the first host starts the module's tokio runtime and thread pools.
    with ringmcp.Host() as host:
        host.spawn_blocking(spec).blocking.ping()
        asyncio.run(cycles(host, 3))
    gc.collect()
    settle(threads())
    base_fds, base_threads = fds(), threads()

    # 900 servers spawned and shut down one after another on one host (async) ...
    with ringmcp.Host() as host:
        asyncio.run(cycles(host, 900))
    # ... and 100 hosts made and closed, each with a sandboxed server (blocking): namespaces,
    # cgroup and the helper's pidfd all go with it.
    boxed = ringmcp.ServerSpec("ref", str(HELPER), ["serve"])
    seen_cgroups = False
    for i in range(100):
        with ringmcp.Host() as host:
            assert text(host.spawn_blocking(boxed).blocking.call_tool("echo", {"text": "x"})) == "x"
            seen_cgroups = seen_cgroups or bool(sandbox_cgroups())
    gc.collect()
    settle(base_threads)
    assert children() == set(), "server processes left behind"
    assert not sandbox_cgroups(), f"sandbox cgroups left behind: {sandbox_cgroups()}"
    print(f"sandbox cgroups seen while servers ran: {seen_cgroups}")
    assert fds() <= base_fds, f"fds: {base_fds} before, {fds()} after"
    assert threads() <= base_threads, f"threads: {base_threads} before, {threads()} after"


def test_a_host_dropped_without_close_shuts_its_servers_down():
    spec = ringmcp.ServerSpec("ref", str(HELPER), ["serve"], sandbox=False)
    host = ringmcp.Host()
    c = host.spawn_blocking(spec)
    pid = c.blocking.stats()["pid"]
    assert pid in children()
    del c, host
    gc.collect()
    end = time.monotonic() + 10
    while pid in children() and time.monotonic() < end:
        time.sleep(0.05)
    assert pid not in children()
