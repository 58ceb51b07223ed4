"""`ringmcp` (and `python -m ringmcp`): the ringmcp CLI, the binary shipped in the package."""

from __future__ import annotations

import os
import sys

from ._helper import HELPER


def main() -> None:
    if HELPER is None:
        sys.exit(
            "ringmcp: the package has no ringmcp binary (it was built without its build backend); "
            "install it with `pip install ringmcp` or `cargo install --path .` from the repository"
        )
    os.execv(HELPER, [str(HELPER), *sys.argv[1:]])


if __name__ == "__main__":
    main()
