"""Bytes for a non-blocking descriptor that may take fewer than it is given: what it does not
take waits, in order, for the next time it is writable; never a wait in the caller.

A serial device's driver stops taking bytes when its buffer is full: a UART held by CTS (the
board's RTS, for as long as the board does not drive it), a pty nobody reads. Its owner (the
board's link, drivers/board.py) writes through an :class:`Unwritten` and, while ``waiting``,
watches the descriptor for writing and calls :meth:`Unwritten.flush`. What comes while
``limit`` bytes wait is dropped and counted: a protocol that resends (the board's link) gets
it again; a loop that waited instead would stop everything else it serves.
"""

from __future__ import annotations

import os

#: The most bytes kept for a descriptor that takes no more for now.
LIMIT = 4096


class Unwritten:
    """What a non-blocking descriptor has not taken yet (``limit`` bytes at most)."""

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self._kept = bytearray()
        #: bytes dropped because ``limit`` bytes waited, since the last clear() or the last
        #: time all went
        self.dropped = 0

    @property
    def waiting(self) -> int:
        """How many bytes wait."""
        return len(self._kept)

    def write(self, fd: int, data: bytes) -> None:
        """``data`` to ``fd``: at once when nothing waits, as much as it takes; the rest kept
        after what waits, or dropped when it would pass ``limit``."""
        written = 0
        if not self._kept:
            try:
                written = os.write(fd, data)
            except BlockingIOError:
                written = 0
        rest = data[written:]
        if len(self._kept) + len(rest) > self.limit:
            self.dropped += len(rest)
        else:
            self._kept += rest

    def flush(self, fd: int) -> None:
        """As much of what waits as ``fd`` takes now; ``dropped`` starts again once all went."""
        try:
            written = os.write(fd, self._kept)
        except BlockingIOError:
            return
        del self._kept[:written]
        if not self._kept:
            self.dropped = 0

    def clear(self) -> None:
        """Forget what waits (the descriptor is gone)."""
        self._kept.clear()
        self.dropped = 0
