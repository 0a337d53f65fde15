"""The serial link to the table's board.

One place decides what the controller talks to: ``BoardLink(url)`` opens it with
pyserial's ``serial_for_url``, exclusively (drivers/portlock.py: a second program that opens
the port is refused, and told who holds it), so ``/dev/serial0`` (the Pi's UART, wired to the
board's), a USB-serial adapter's ``/dev/ttyUSB0``, a pty printed by ``mjtable sim --pty`` and
``socket://127.0.0.1:5000`` are all the same to everything above this module.

The link owns one I/O thread (a ``drivers.ioloop.IoLoop``). It waits in ``select``
on the port and on a wake-up socket, with the protocol engine's next deadline as
the timeout: no polling loop, no CPU while nothing happens. Bytes from the port
go into the sans-I/O ``protocol.Connection``; every event the engine produces is handed to the
``on_event`` callback, in order, on the I/O thread, and what the engine has to send then (the
ACK of the frames read, the commands the handlers sent) goes out in one write. pyserial opens
and configures the port; a serial device's descriptor (non-blocking, as pyserial opens it) is
then read and written directly, one system call each (pyserial's own read and write cost three
and two, and more CPU than the frame's handling), and any other port (``socket://``) goes
through pyserial. When the device disappears
(unplugged, simulator stopped) the port is closed, a ``PortDown`` event is
delivered, and the link tries to reopen it every ``reopen_interval`` seconds,
delivering ``PortUp`` and running HELLO again when it comes back.

Another program on the same line breaks the link without closing anything: a reader that
takes the board's bytes (the port reports data, then has none), or a host that says HELLO to
the board (its answers to that host reach this port; the board drops this link's session and
takes the other's). Either is a ``PortDown`` saying so, and the port is reported up again
(``PortUp``) only once ``shared_quiet_s`` have passed without either, or a loss of the link
(while another program is suspected, every loss is taken for its doing): the link is not up,
whatever the protocol engine believes between two of its losses, while someone else is at
the board.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

import serial

from drivers import portlock
from drivers.ioloop import EVENT_READ, EVENT_WRITE, IoLoop
from drivers.portopen import HELD_ADVICE, OpenFailure, open_failure
from drivers.unwritten import Unwritten
from protocol.arq import HEARTBEAT_MS, LINK_TIMEOUT_MS, MAX_RETRIES, RTO_MS
from protocol.connection import HOST, IDLE, Connection
from protocol.messages import Message

if TYPE_CHECKING:
    from protocol.events import ConnectionEvent

log = logging.getLogger("mjtable.board")

#: The line speed a board is opened at unless told otherwise (config: board.baud).
DEFAULT_BAUDRATE = 115200
#: The most bytes one read takes from a serial device (what is left waits for the next read).
READ_SIZE = 4096
#: A line another program used is trusted again after this long without a sign of it (s):
#: past the protocol's link timeout, so a session it keeps taking shows every time.
SHARED_QUIET_S = 2 * LINK_TIMEOUT_MS / 1000


def shared_words(url: str, sign: str) -> str:
    """Another program uses the board's line: what shows it, and what to do."""
    return (
        f"another program uses the board's port {url} ({sign}): the link to the board cannot "
        f"work while it does; `sudo fuser -v {url}` names it: stop it"
    )


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


#: Every event the link hands to ``on_event``: the protocol engine's (the board's messages and
#: the link events) and the port's own. Each class is final: dispatch on ``type(event)``.
BoardEvent: TypeAlias = "ConnectionEvent | PortUp | PortDown"

EventCallback = Callable[[BoardEvent], None]


class BoardLink:
    """Serial port + protocol engine, served by an I/O loop: the process's own (``loop``, as
    the table service does: one loop for all its parts), or one of the link's own."""

    def __init__(
        self,
        url: str,
        on_event: EventCallback,
        *,
        baudrate: int = DEFAULT_BAUDRATE,
        rtscts: bool = False,
        reopen_interval: float = 1.0,
        rto_ms: int = RTO_MS,
        max_retries: int = MAX_RETRIES,
        heartbeat_ms: int = HEARTBEAT_MS,
        link_timeout_ms: int = LINK_TIMEOUT_MS,
        loop: IoLoop | None = None,
    ) -> None:
        self.url = url
        self.baudrate = baudrate
        #: RTS/CTS flow control on the port: the UART sends only while its CTS (the board's
        #: RTS) says the board's receive FIFO has room
        self.rtscts = rtscts
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
        self._fd: int = -1
        #: the port is a serial device (pyserial's ``Serial``): the link reads and writes its
        #: descriptor itself (a URL's port, ``socket://``..., goes through pyserial)
        self._raw = False
        #: what the serial device's driver did not take yet (drivers/unwritten.py)
        self.unwritten = Unwritten()
        #: the thread running the tick, while it runs (a send there needs no wake-up), and
        #: whether the events' handlers sent
        self._ticking: int | None = None
        self._sent = False
        self._reopen_at = 0.0
        self._loop: IoLoop | None = None
        # the process's loop, if given: the link neither starts nor stops it
        self._shared_loop = loop
        self._remove_tick: Callable[[], None] | None = None
        self._port_open = False
        #: why the port could not be opened the last time it was tried (None: it opened)
        self.open_failure: OpenFailure | None = None
        #: set once the port has been tried (open_failure says how it went)
        self.tried = threading.Event()
        self.bytes_in = 0
        self.bytes_out = 0
        #: why the line looks shared with another program (None: it does not)
        self.shared: str | None = None
        self.shared_quiet_s = SHARED_QUIET_S * link_timeout_ms / LINK_TIMEOUT_MS
        self._shared_until = 0.0
        self._empty_read = False  # the last loss: the port had data, then none
        self._ignored = 0  # the engine's count of the board's answers to another host's HELLO
        self._downs = 0  # the engine's count of its link's losses

    # ----------------------------------------------------------------- public

    def start(self) -> None:
        if self._loop is not None:
            raise BoardLinkError("the board link is already started")
        shared = self._shared_loop
        if shared is not None:
            self._loop = shared
            self._remove_tick = shared.add_tick(self._tick)
            return
        self._loop = IoLoop("board-link", tick=self._tick, logger=log)
        self._loop.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving the link (its own loop's thread ends) and close the port. Safe to call
        twice."""
        loop = self._loop
        if loop is not None and loop is self._shared_loop:
            remove, self._remove_tick = self._remove_tick, None
            if remove is not None:
                remove()
            if not loop.run(self._close_port, timeout):
                log.warning(
                    "the service's loop did not close the board's port within %g s", timeout
                )
            return
        if loop is not None and not loop.stop(timeout):
            log.warning("the board link's thread did not stop within %g s", timeout)
            self._loop = None  # still in its thread: it finds the port closed
        self._close_port()

    def call_soon(self, function: Callable[[], object]) -> None:
        """Run ``function`` in the link's I/O thread soon (the service's watchdog asks it to
        prove the thread is alive). Raises BoardLinkError when the link is not running."""
        loop = self._loop
        if loop is None or not loop.running:
            raise BoardLinkError("the board link is not running")
        loop.call_soon(function)

    def send(self, message: Message) -> None:
        """Queue a message for the board (thread-safe). Raises protocol errors
        (NotConnected, QueueFull, DecodeError for out-of-range fields) at once."""
        with self._lock:
            self._conn.send(message, now_ms())
        loop = self._loop
        if self._ticking == threading.get_ident():
            # by an event's handler during the tick: the tick writes it before it returns
            self._sent = True
        elif loop is not None:
            loop.wake()

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

    def engine_timing(self) -> dict[str, int]:
        """The protocol engine's timers (ms): retransmission, link timeout, heartbeat."""
        with self._lock:
            conn = self._conn
            return {
                "rto_ms": conn.rto_ms,
                "link_timeout_ms": conn.link_timeout_ms,
                "heartbeat_ms": conn.heartbeat_ms,
            }

    def stats(self) -> dict[str, int]:
        with self._lock:
            stats = dict(self._conn.stats)
        stats["bytes_in"] = self.bytes_in
        stats["bytes_out"] = self.bytes_out
        return stats

    # --------------------------------------------------------------- internal

    def _emit(self, event: BoardEvent) -> None:
        try:
            self._on_event(event)
        except Exception:  # the callback's bug must not kill the link
            log.exception("board event handler failed on %r", event)

    def _open_port(self) -> bool:
        try:
            # exclusive: one owner of the port (drivers/portlock.py says how)
            port = serial.serial_for_url(
                self.url,
                baudrate=self.baudrate,
                rtscts=self.rtscts,
                timeout=0,
                write_timeout=2.0,
                exclusive=True,
            )
        except (serial.SerialException, OSError, ValueError) as exc:
            self.open_failure = open_failure(self.url, exc)
            self._emit(PortDown(self.url, self.open_failure.reason))
            return False
        self.open_failure = None
        portlock.claim(port, self.url)
        self._port = port
        self._fd = port.fileno()  # kept: a closed port can no longer tell its descriptor
        self._raw = type(port) is serial.Serial
        self._port_open = True
        assert self._loop is not None
        self._loop.register(self._fd, EVENT_READ, self._on_ready)
        if self._empty_read:  # it opened again at once: someone else reads it
            self._empty_read = False
            self._note_shared("its bytes were read by another program")
        elif self.shared is None:
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
        self.unwritten.clear()  # for a port that is gone: nowhere to go, as what is sent now
        fd, self._fd = self._fd, -1
        loop = self._loop
        if fd >= 0 and loop is not None:
            loop.unregister(fd)
        if port is not None:
            portlock.release(port)
            with contextlib.suppress(serial.SerialException, OSError):
                port.close()

    def _lost(self, reason: str, retry_in: float) -> None:
        """The port failed: close it, say so, and try to reopen it ``retry_in`` s from now."""
        self._close_port()
        self._emit(PortDown(self.url, reason))
        self._reopen_at = time.monotonic() + retry_in

    def _tick(self) -> float | None:
        """After every wake-up: (re)open the port when it is time, run the engine's clock,
        hand its events over, then write what the engine has to send (the ACK of what came in
        and the commands the events led to, in one write); return the seconds to wait.

        While the port is closed the engine's clock still runs (so a lost board becomes
        LinkDown after the link timeout) and what it sends goes nowhere."""
        deadline: int | None = None
        self._ticking = threading.get_ident()
        try:
            due = self._port is None and time.monotonic() >= self._reopen_at
            if due and not self._open_port():
                self._reopen_at = time.monotonic() + self.reopen_interval
            if due:
                self.tried.set()
            with self._lock:
                deadline = self._conn.tick(now_ms())
                events = self._conn.events()
            while events:
                self._sent = False
                for event in events:
                    self._emit(event)
                if not self._sent:
                    break
                with self._lock:  # the handlers sent: the engine's clock runs again (its contract)
                    deadline = self._conn.tick(now_ms())
                    events = self._conn.events()
            with self._lock:
                conn = self._conn
                out = conn.data_to_send()
                news = conn.count("foreign_replies"), conn.count("link_downs"), conn.peer
            self._ticking = None  # what it writes is taken: a send from here on wakes the loop
            self._watch_sharing(*news)
            if out and self._port is not None:
                self._write(out)
                self.bytes_out += len(out)
        except (serial.SerialException, OSError) as exc:
            self._lost_port(exc)
        except Exception as exc:  # a bug must not end the link silently
            self._failed(exc)
        finally:
            self._ticking = None
        timeout = None if deadline is None else max(0.0, (deadline - now_ms()) / 1000)
        if self.shared is not None:
            until_quiet = max(0.0, self._shared_until - time.monotonic())
            timeout = until_quiet if timeout is None else min(timeout, until_quiet)
        if self._port is None:
            until_reopen = max(0.0, self._reopen_at - time.monotonic())
            timeout = until_reopen if timeout is None else min(timeout, until_reopen)
        return timeout

    def _write(self, data: bytes) -> None:
        """Write to the port: straight to a serial device's descriptor (non-blocking, as
        pyserial opened it), pyserial's own write for another kind of port. What the device's
        driver does not take now waits in order and goes once the descriptor is writable
        again (drivers/unwritten.py): the loop never waits on the line, which a UART held by CTS
        may hold for as long as the board does not drive its RTS."""
        if not self._raw:
            self._port.write(data)
            return
        unwritten = self.unwritten
        before, dropped = unwritten.waiting, unwritten.dropped
        unwritten.write(self._fd, data)
        if unwritten.dropped and not dropped:
            log.warning(
                "%s takes no more bytes (%d wait): what the link sends is dropped until it "
                "does; with board.rtscts, is the board running and its RTS wired to the Pi's CTS?",
                self.url,
                unwritten.waiting,
            )
        if unwritten.waiting and not before:
            assert self._loop is not None
            self._loop.modify(self._fd, EVENT_READ | EVENT_WRITE)

    def _on_ready(self, mask: int) -> None:
        if mask & EVENT_WRITE and self._port is not None:
            dropped = self.unwritten.dropped
            try:
                self.unwritten.flush(self._fd)
            except OSError as exc:
                self._lost_port(exc)
                return
            if not self.unwritten.waiting:
                assert self._loop is not None
                self._loop.modify(self._fd, EVENT_READ)
                if dropped:
                    log.info("%s takes bytes again (%d were dropped)", self.url, dropped)
        if mask & EVENT_READ:
            self._on_readable(mask)

    def _on_readable(self, mask: int) -> None:
        port = self._port
        if port is None:
            return
        try:
            if self._raw:
                try:
                    data = os.read(self._fd, READ_SIZE)
                except BlockingIOError:  # ready, then nothing: another reader took it
                    data = b""
                else:
                    if not data:  # the end of the file: a hang-up
                        raise serial.SerialException("the device hung up")
            else:
                waiting = port.in_waiting
                data = port.read(waiting if waiting else 1)
            if not data:  # gone (a hang-up), or another reader took it: reopening tells
                self._empty_read = True
                raise serial.SerialException("the device reported data but returned none")
            self.bytes_in += len(data)
            with self._lock:
                self._conn.receive_data(data, now_ms())
        except (serial.SerialException, OSError) as exc:
            self._lost_port(exc)
        except Exception as exc:
            self._failed(exc)

    def _watch_sharing(self, ignored: int, downs: int, peer: object) -> None:
        """After the engine's events, given its counts of answers to another host's HELLO and
        of losses of the link, and its peer: a sign of another host on the line, or the quiet
        that ends the suspicion."""
        answered = peer is not None
        lost, self._downs = downs > self._downs, downs
        if ignored > self._ignored:  # the board answered another host's HELLO on this line
            self._ignored = ignored
            # (before this link's first HELLO is answered, it may be the answer to a
            # controller that stopped just before)
            if answered:
                self._note_shared("the board answered another host's HELLO on it")
        elif lost and self.shared is not None:
            # while another program is suspected, each loss of the link is its doing too (the
            # board's NO SESSION answers to its frames, or to ours once it took the session):
            # the quiet that ends the suspicion starts after the last one
            self._shared_until = time.monotonic() + self.shared_quiet_s
        elif self.shared is not None and time.monotonic() >= self._shared_until:
            self.shared = None
            if self._port is not None:
                log.info("%s: no sign of another program for %g s", self.url, self.shared_quiet_s)
                self._emit(PortUp(self.url))

    def _note_shared(self, sign: str) -> None:
        self._shared_until = time.monotonic() + self.shared_quiet_s
        if self.shared is None:
            self.shared = shared_words(self.url, sign)
            log.warning("%s", self.shared)
            self._emit(PortDown(self.url, self.shared))

    def _lost_port(self, exc: Exception) -> None:
        reason = f"lost {self.url}: {exc}"
        log.warning("%s", reason)
        self._lost(reason, 0.0)  # try again at once: a short glitch keeps the session

    def _failed(self, exc: Exception) -> None:
        log.exception("the board link failed")
        self._lost(f"the link to {self.url} failed: {exc}", self.reopen_interval)


__all__ = [
    "HELD_ADVICE",
    "BoardEvent",
    "BoardLink",
    "BoardLinkError",
    "OpenFailure",
    "PortDown",
    "PortUp",
    "now_ms",
    "open_failure",
]
