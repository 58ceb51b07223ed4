"""The package's PEP 517 build backend: maturin, after building the `ringmcp` binary that the
package ships as `ringmcp/_bin/ringmcp`.

The engine starts every sandboxed server through that binary (its sandbox helper, exec'd before
the server: namespaces, pivot_root, seccomp, Landlock), and the package's `ringmcp` command runs
it (`ringmcp gateway`, `ringmcp sandbox check`, ...). Cargo's profile is `release` unless
RINGMCP_PY_PROFILE names another (scripts/test.sh builds with `pytest`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import maturin
from maturin import (  # noqa: F401  (the hooks maturin answers unchanged)
    build_sdist,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

ROOT = Path(__file__).resolve().parents[2]
BIN_DIR = ROOT / "bindings" / "python" / "python" / "ringmcp" / "_bin"


def build_helper(profile: str | None = None) -> Path:
    """Builds the `ringmcp` binary with cargo and copies it into the package."""
    profile = profile or os.environ.get("RINGMCP_PY_PROFILE", "release")
    cargo = os.environ.get("CARGO", "cargo")
    # With the extension's library in the same invocation, so that the dependencies are built
    # with the features the extension's build (maturin's, next) unifies them to: once, not
    # twice (the extension adds features to tokio and others, and each build alone would get
    # its own copy of everything above them).
    subprocess.run(
        [cargo, "build", "--profile", profile, "--package", "ringmcp", "--bin", "ringmcp",
         "--package", "ringmcp-python", "--lib", "--features", "ringmcp-python/extension-module"],
        cwd=ROOT,
        check=True,
    )
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    built = target / {"dev": "debug", "test": "debug", "bench": "release"}.get(profile, profile) / "ringmcp"
    BIN_DIR.mkdir(exist_ok=True)
    dest = BIN_DIR / "ringmcp"
    tmp = dest.with_suffix(".tmp")
    shutil.copy2(built, tmp)
    # The release profile keeps debug information for profiling; the package does not need it
    # (and, where binutils is missing, keeps it).
    strip = shutil.which("strip")
    if strip is not None:
        subprocess.run([strip, "--strip-debug", str(tmp)], check=True)
    os.replace(tmp, dest)
    return dest


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    build_helper()
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    build_helper()
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)


if __name__ == "__main__":  # `python build_backend.py [PROFILE]`: the binary alone
    import sys

    print(build_helper(sys.argv[1] if len(sys.argv) > 1 else None))
