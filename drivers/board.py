"""The serial link to the table's board.

One place decides what the controller talks to: ``BoardLink(url)`` opens it with
pyserial's ``serial_for_url``, so ``/dev/mjtable-board``, ``/dev/ttyACM0``, a pty
printed by ``mjtable sim --pty`` and ``socket://127.0.0.1:5000`` are all the same
to everything above this module.

The link owns one I/O thread. It waits in ``select`` on the port and on a wake-up
socket, with the protocol engine's next deadline as the timeout: no polling loop,
no CPU while nothing happens. Bytes from the port go into the sans-I/O
``protocol.Connection``; every event the engine produces is handed to the
``on_event`` callback, in order, on the I/O thread. When the device disappears
(unplugged, simulator stopped) the port is closed, a ``PortDown`` event is
delivered, and the link tries to reopen it every ``reopen_interval`` seconds,
delivering ``PortUp`` and running HELLO again when it comes back.
"""

from __future__ import annotations

import contextlib
import logging
import selectors
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import serial

from protocol.connection import HOST, IDLE, Connection
from protocol.messages import Message

log = logging.getLogger("mjtable.board")


def now_ms() -> int:
    """The protocol engine's clock: monotonic milliseconds."""
    return time.monotonic_ns() // 1_000_000


@dataclass(frozen=True)
class PortUp:
    """The serial port (or socket) is open; HELLO is being sent."""

    url: str


@dataclass(frozen=True)
class PortDown:
    """The serial port could not be opened or went away."""

    url: str
    reason: str


class BoardLinkError(Exception):
    """The link cannot do what was asked (not started, already stopped)."""


EventCallback = Callable[[object], None]


class BoardLink:
    """Serial port + protocol engine + one I/O thread."""

    def __init__(
        self,
        url: str,
        on_event: EventCallback,
        *,
        baudrate: int = 115200,
        reopen_interval: float = 1.0,
        rto_ms: int = 100,
        max_retries: int = 10,
        heartbeat_ms: int = 500,
        link_timeout_ms: int = 2000,
    ) -> None:
        self.url = url
        self.baudrate = baudrate
        self.reopen_interval = reopen_interval
        self._on_event = on_event
        self._lock = threading.Lock()
        self._conn = Connection(
            HOST,
            rto_ms=rto_ms,
            max_retries=max_retries,
            heartbeat_ms=heartbeat_ms,
            link_timeout_ms=link_timeout_ms,
        )
        self._port: Any = None
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._port_open = False
        self.bytes_in = 0
        self.bytes_out = 0

    # ----------------------------------------------------------------- public

    def start(self) -> None:
        if self._thread is not None:
            raise BoardLinkError("the board link is already started")
        self._thread = threading.Thread(target=self._run, name="board-link", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the I/O thread and close the port. Safe to call twice."""
        self._stop.set()
        self._wake()
        if self._thread is not None:
            self._thread.join(timeout)
        self._close_port()
        for sock in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                sock.close()

    def send(self, message: Message) -> None:
        """Queue a message for the board (thread-safe). Raises protocol errors
        (NotConnected, QueueFull, DecodeError for out-of-range fields) at once."""
        with self._lock:
            self._conn.send(message, now_ms())
        self._wake()

    @property
    def link_state(self) -> str:
        with self._lock:
            return str(self._conn.state)

    @property
    def peer(self) -> Any:
        """The board's HelloReply, or None before the first HELLO."""
        with self._lock:
            return self._conn.peer

    @property
    def port_open(self) -> bool:
        return self._port_open

    def stats(self) -> dict[str, int]:
        with self._lock:
            stats = dict(self._conn.stats)
        stats["bytes_in"] = self.bytes_in
        stats["bytes_out"] = self.bytes_out
        return stats

    # --------------------------------------------------------------- internal

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # already awake (buffer full), or stopping
            self._wake_w.send(b"\0")

    def _emit(self, event: object) -> None:
        try:
            self._on_event(event)
        except Exception:  # the callback's bug must not kill the link
            log.exception("board event handler failed on %r", event)

    def _open_port(self) -> bool:
        try:
            port = serial.serial_for_url(
                self.url, baudrate=self.baudrate, timeout=0, write_timeout=2.0
            )
        except (serial.SerialException, OSError, ValueError) as exc:
            self._emit(PortDown(self.url, f"cannot open {self.url}: {exc}"))
            return False
        self._port = port
        self._port_open = True
        self._emit(PortUp(self.url))
        with self._lock:
            # The first opening starts the HELLO exchange. After a glitch shorter than
            # the link timeout the engine is still UP and simply carries on; after a
            # longer one it is DOWN and says HELLO again by itself.
            if self._conn.state == IDLE:
                self._conn.connect(now_ms())
        return True

    def _close_port(self) -> None:
        port, self._port = self._port, None
        self._port_open = False
        if port is not None:
            with contextlib.suppress(serial.SerialException, OSError):
                port.close()

    def _run(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self._wake_r, selectors.EVENT_READ)
        try:
            while not self._stop.is_set():
                if self._port is None and not self._open_port():
                    self._wait_closed()
                    continue
                try:
                    self._serve(selector)
                except Exception as exc:  # a bug must not end the link silently
                    log.exception("the board link failed")
                    self._close_port()
                    self._emit(PortDown(self.url, f"the link to {self.url} failed: {exc}"))
                    self._stop.wait(self.reopen_interval)
        finally:
            selector.close()

    def _wait_closed(self) -> None:
        """While the port is closed the engine's clock still runs (so a lost board
        becomes LinkDown after the link timeout); wait for the next reopening try."""
        with self._lock:
            deadline = self._conn.tick(now_ms())
            self._conn.data_to_send()  # nowhere to send it: the port is closed
            events = self._drain()
        for event in events:
            self._emit(event)
        wait = self.reopen_interval
        if deadline is not None:
            wait = min(wait, max(0.0, (deadline - now_ms()) / 1000))
        self._stop.wait(wait)

    def _serve(self, selector: selectors.BaseSelector) -> None:
        """Pump bytes until the port fails or the link is stopped."""
        port = self._port
        fd = port.fileno()  # kept: a closed port can no longer tell its descriptor
        selector.register(fd, selectors.EVENT_READ)
        try:
            while not self._stop.is_set():
                with self._lock:
                    deadline = self._conn.tick(now_ms())
                    out = self._conn.data_to_send()
                    events = self._drain()
                for event in events:
                    self._emit(event)
                if out:
                    self._write(port, out)
                timeout = None if deadline is None else max(0.0, (deadline - now_ms()) / 1000)
                for key, _ in selector.select(timeout):
                    if key.fileobj is self._wake_r:
                        self._drain_wake()
                    else:
                        self._read(port)
        except (serial.SerialException, OSError) as exc:
            reason = f"lost {self.url}: {exc}"
            log.warning("%s", reason)
            self._close_port()
            self._emit(PortDown(self.url, reason))
        finally:
            with contextlib.suppress(KeyError, ValueError, OSError):
                selector.unregister(fd)

    def _drain(self) -> list[object]:
        events: list[object] = []
        while True:
            event = self._conn.next_event()
            if event is None:
                return events
            events.append(event)

    def _drain_wake(self) -> None:
        try:
            while self._wake_r.recv(512):
                pass
        except (BlockingIOError, OSError):
            pass

    def _read(self, port: Any) -> None:
        waiting = port.in_waiting
        data = port.read(waiting if waiting else 1)
        if not data:
            raise serial.SerialException("the device reported data but returned none")
        self.bytes_in += len(data)
        with self._lock:
            self._conn.receive_data(bytes(data), now_ms())

    def _write(self, port: Any, data: bytes) -> None:
        port.write(data)
        self.bytes_out += len(data)


__all__ = ["BoardLink", "BoardLinkError", "PortDown", "PortUp", "now_ms"]
