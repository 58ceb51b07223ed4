"""Where the package's `ringmcp` binary is: the engine's sandbox helper (every sandboxed server
is started through it) and the CLI."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def _find() -> Path | None:
    shipped = Path(__file__).with_name("_bin") / "ringmcp"
    if shipped.is_file() and os.access(shipped, os.X_OK):
        return shipped
    found = shutil.which("ringmcp")
    return Path(found) if found else None


HELPER = _find()

# The engine reads RINGMCP_SANDBOX_HELPER when it starts a sandboxed server; one set by the user
# wins.
if HELPER is not None:
    os.environ.setdefault("RINGMCP_SANDBOX_HELPER", str(HELPER))
