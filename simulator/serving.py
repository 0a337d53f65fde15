"""A board served on a line by one thread: the transports and the life cycle that the simulated
board (simulator/server.py) and the emulated chip (simulator/chip/board.py) share.

    board.open_pty()          # or board.listen_tcp(): before start, as many as wanted
    board.start()             # one drivers.ioloop.IoLoop thread serves the line and the board
    board.stop()              # idempotent; a stopped board is not started again

Each kind of board says what its thread does (``_receive``: the host's bytes; ``_service``: a
pass, returning the seconds until the next one is due) and what it adds at the start and the
stop (``_begin``, ``_end``); the order of things, the lock and the errors are written here once.
"""

from __future__ import annotations

import logging
import threading
from typing import Self

from drivers.ioloop import IoLoop
from simulator.transport import SimulatorError, Transport

__all__ = ["ServedBoard"]


class ServedBoard:
    """The transports and the life cycle of a board served by one IoLoop thread."""

    #: the board's name in its errors ("simulated board", "chip board") and its class's name
    NOUN = "board"
    #: the thread's name
    THREAD = "board"

    def __init__(self, transport: Transport, logger: logging.Logger) -> None:
        self._lock = threading.RLock()
        self.transport = transport
        self._log = logger
        self._loop: IoLoop | None = None
        self._stopped = False

    # --- what each kind of board does -----------------------------------------------------------

    def _receive(self, data: bytes) -> None:  # pragma: no cover - each kind has its own
        raise NotImplementedError

    def _service(self) -> float | None:  # pragma: no cover - each kind has its own
        raise NotImplementedError

    def _begin(self, loop: IoLoop) -> None:
        """At the start, under the lock, the line attached and the thread not yet running."""

    def _end(self) -> None:
        """At the stop, under the lock, the thread stopped and the line still open."""

    # --- transports ------------------------------------------------------------------------------

    def open_pty(self, link: str | None = None) -> str:
        """Open a pseudo-terminal pair; return the far end's path (what the host opens).

        The slave end is put in raw mode and kept open here, so the pty survives the host
        closing and reopening it. ``link``: also make a symlink at that path (removed on stop);
        an existing symlink there is replaced, any other file is an error.
        """
        with self._lock:
            self._check_fresh()
            return self.transport.open_pty(link)

    def listen_tcp(
        self, host: str = "127.0.0.1", port: int = 0, *, allow_remote: bool = False
    ) -> tuple[str, int]:
        """Listen on TCP (loopback unless allow_remote); return the bound (host, port).

        The host opens it with pyserial as ``socket://HOST:PORT``. One client at a time: a new
        connection replaces the old one.
        """
        with self._lock:
            self._check_fresh()
            return self.transport.listen_tcp(host, port, allow_remote)

    @property
    def path(self) -> str | None:
        """The pty's device path (what the host opens), once open_pty() was called."""
        return self.transport.path

    @property
    def link_path(self) -> str | None:
        return self.transport.link_path

    @property
    def address(self) -> tuple[str, int] | None:
        """The TCP (host, port) bound by listen_tcp()."""
        return self.transport.address

    # --- life cycle ------------------------------------------------------------------------------

    def _check_fresh(self) -> None:
        if self._stopped:
            raise SimulatorError(
                f"this {self.NOUN} was stopped; create a new {type(self).__name__}"
            )
        if self._loop is not None:
            raise SimulatorError(f"the {self.NOUN} is running already: open transports first")

    def start(self) -> None:
        """Start serving in a background thread (open a transport first)."""
        with self._lock:
            self._check_fresh()
            if not self.transport.opened:
                raise SimulatorError("open a transport first: open_pty() or listen_tcp()")
            loop = IoLoop(self.THREAD, tick=self._service, lock=self._lock, logger=self._log)
            self.transport.attach(loop, self._receive)
            self._begin(loop)
            self._loop = loop
            loop.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread, then what the board holds (``_end``), then close every descriptor
        and remove the symlink. Idempotent."""
        loop = self._loop
        if loop is not None and not loop.stop(timeout):  # pragma: no cover - it wakes at once
            raise SimulatorError(f"the {self.NOUN}'s thread did not stop within {timeout} s")
        with self._lock:
            self._stopped = True
            self._end()
            self.transport.close()

    def close(self) -> None:
        self.stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
