"""``SpilledFile``: a payload the engine spilled to disk, as a read-only binary file object.

When a server answers with more than the host keeps in memory, ringmcp writes the large part
to its spill store and hands a ``resource_link`` to a ``ringmcp-spill://`` URI instead.
``client.open_spilled(uri)`` returns the native ``SpillFile`` (positional reads, ``pread``);
this module wraps it as an ordinary :class:`io.RawIOBase` (so ``io.BufferedReader``,
``shutil.copyfileobj``, ``json.load`` on a ``TextIOWrapper``... all work), plus an async
iterator of chunks that reads off the event loop::

    with SpilledFile(client.open_spilled(uri)) as f:
        head = f.read(100)
        f.seek(0)
        async for chunk in f:          # 1 MiB at a time, read in a worker thread
            sink.write(chunk)

The spill file is deleted when its last handle goes (closing this object drops its handle).
"""

from __future__ import annotations

import asyncio
import io
import os
from collections.abc import AsyncIterator
from typing import Any

__all__ = ["SpilledFile", "DEFAULT_CHUNK"]

DEFAULT_CHUNK = 1 << 20
"""The chunk size of ``async for chunk in spilled_file`` (1 MiB)."""


class SpilledFile(io.RawIOBase):
    """A read-only, seekable binary file over a native ``ringmcp.SpillFile``.

    Reads are positional (``pread``) on the native side, with the GIL released, so several
    ``SpilledFile`` objects may read the same spill file concurrently, each at its own position.
    """

    def __init__(self, spill: Any) -> None:
        super().__init__()
        if isinstance(spill, SpilledFile):
            spill = spill._spill
        self._spill = spill
        self._uri: str = spill.uri
        self._size: int = len(spill)
        self._pos = 0

    # -- what it is --------------------------------------------------------------------------

    @property
    def uri(self) -> str:
        """The ``ringmcp-spill://`` URI the payload was handed under."""
        return self._uri

    @property
    def path(self) -> str:
        """Where the payload lies on disk (deleted when the last handle goes)."""
        return self._native().path

    @property
    def name(self) -> str:
        return self._uri

    @property
    def mode(self) -> str:
        return "rb"

    @property
    def native(self) -> Any:
        """The wrapped native ``SpillFile``."""
        return self._native()

    def size(self) -> int:
        """The payload's length in bytes."""
        return self._size

    def __len__(self) -> int:
        return self._size

    def __bool__(self) -> bool:  # a file object is true even when empty
        return True

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"at {self._pos}"
        return f"<ringmcp.SpilledFile {self._uri} ({self._size} bytes, {state})>"

    # -- io.RawIOBase ------------------------------------------------------------------------

    def readable(self) -> bool:
        self._checkClosed()
        return True

    def seekable(self) -> bool:
        self._checkClosed()
        return True

    def writable(self) -> bool:
        self._checkClosed()
        return False

    def tell(self) -> int:
        self._checkClosed()
        return self._pos

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        self._checkClosed()
        offset = offset.__index__()
        if whence == os.SEEK_SET:
            pos = offset
        elif whence == os.SEEK_CUR:
            pos = self._pos + offset
        elif whence == os.SEEK_END:
            pos = self._size + offset
        else:
            raise ValueError(f"invalid whence ({whence!r}, should be 0, 1 or 2)")
        if pos < 0:
            raise OSError(22, f"negative seek position {pos}")
        self._pos = pos
        return pos

    def readinto(self, buffer: Any) -> int:
        self._checkClosed()
        view = memoryview(buffer).cast("B")
        if not len(view) or self._pos >= self._size:
            return 0
        # One copy more than read(): the 3.10 limited API has no buffer protocol to pread into.
        data = self._native().read_at(self._pos, len(view))
        n = len(data)
        view[:n] = data
        self._pos += n
        return n

    def read(self, size: int | None = -1) -> bytes:
        self._checkClosed()
        if size is None or size < 0:
            return self.readall()
        data = self._native().read_at(self._pos, size) if size else b""
        self._pos += len(data)
        return data

    def readall(self) -> bytes:
        self._checkClosed()
        left = max(self._size - self._pos, 0)
        data = self._native().read_at(self._pos, left) if left else b""
        self._pos += len(data)
        return data

    def close(self) -> None:
        if not self.closed:
            super().close()
            self._spill = None  # the native handle goes (the file with it, when it is the last)

    def _native(self) -> Any:
        spill = self._spill
        if spill is None:
            raise ValueError("I/O operation on closed file.")
        return spill

    # -- async reading -----------------------------------------------------------------------

    async def chunks(self, size: int = DEFAULT_CHUNK) -> AsyncIterator[bytes]:
        """The payload from the current position to its end, ``size`` bytes at a time (the last
        chunk may be shorter); each read runs in a worker thread (``asyncio.to_thread``), so the
        event loop never waits on the disk. The position advances as chunks are taken, as with
        iterating over any file."""
        if size <= 0:
            raise ValueError(f"chunk size must be positive, not {size}")
        while True:
            self._checkClosed()
            spill, pos = self._native(), self._pos
            if pos >= self._size:
                return
            data = await asyncio.to_thread(spill.read_at, pos, size)
            if not data:
                return
            self._pos = pos + len(data)
            yield data

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self.chunks(DEFAULT_CHUNK)

    async def aread(self, size: int = -1) -> bytes:
        """``read(size)`` in a worker thread."""
        self._checkClosed()
        if size is None or size < 0:
            size = max(self._size - self._pos, 0)
        spill, pos = self._native(), self._pos
        data = await asyncio.to_thread(spill.read_at, pos, size) if size else b""
        self._pos = pos + len(data)
        return data

    async def __aenter__(self) -> SpilledFile:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()
