"""Shared paths and helpers of the Python package's tests (run by scripts/test.sh)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import ringmcp
from ringmcp._helper import HELPER

ROOT = Path(__file__).resolve().parents[3]
DEPS = Path(os.environ.get("RINGMCP_DEPS", ROOT / ".deps"))
EVERYTHING = DEPS / "npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
VENV_PYTHON = DEPS / "venv/bin/python"
PY_ECHO = ROOT / "tests/servers/py_echo_server.py"
FAULTS = ROOT / "tests/servers/faults.py"
PATTERN = b"abcdefghijklmnopqrstuvwxyz0123456789"


def need(path: Path) -> None:
    """Missing test servers fail under scripts/test.sh (RINGMCP_REQUIRE_DEPS) and skip elsewhere."""
    if not path.exists():
        if os.environ.get("RINGMCP_REQUIRE_DEPS") or os.environ.get("CI"):
            pytest.fail(f"{path} is missing: run scripts/deps.sh")
        pytest.skip(f"{path} is missing: run scripts/deps.sh")


@pytest.fixture
def reference() -> ringmcp.ServerSpec:
    """ringmcp's own reference server (`ringmcp serve --fault-tools`), sandboxed."""
    assert HELPER is not None, "the package's ringmcp binary is missing"
    return ringmcp.ServerSpec("ref", str(HELPER), ["serve", "--fault-tools"])


@pytest.fixture
def everything() -> ringmcp.ServerSpec:
    """The official reference server `server-everything` (npm), sandboxed."""
    need(EVERYTHING)
    return ringmcp.ServerSpec("everything", "node", [str(EVERYTHING), "stdio"])


@pytest.fixture
def py_server() -> ringmcp.ServerSpec:
    """A server written on the official Python SDK, sandboxed."""
    need(VENV_PYTHON)
    return ringmcp.ServerSpec("py", str(VENV_PYTHON), [str(PY_ECHO)])


def text(result: dict) -> str:
    return "".join(c.get("text", "") for c in result["content"] if c.get("type") == "text")


def children() -> set[int]:
    """This process's live children (zombies included: an unreaped child is a leak too)."""
    me = os.getpid()
    out = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == me:
            out.add(int(entry))
    return out


def fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def threads() -> int:
    return len(os.listdir("/proc/self/task"))


sys.path.insert(0, str(Path(__file__).parent))
