"""The local API's server: newline-delimited JSON over two Unix sockets, one per role.

:class:`ApiServer` listens on the full socket (``api.socket``: every operation, dealt states
included) and on the status socket (``api.status_socket``: status and events without dealt
states), each with its own mode and group (controller/api/roles.py says who may ask what). It
is served by an I/O loop (drivers/ioloop.py; the service's own, which the board link shares):
non-blocking sockets, no polling. Events
reach it from the controller's thread through the ``ApiBackend.subscribe`` callback, which
only appends to a queue and wakes the loop, so the table never waits for a client.

No client can starve the others (docs/api.md, "Limits"): each socket has regular slots with a
share per user id, and a reserve where a connection beyond them is answered one ``status`` or
``stop`` and closed; a connection that sends nothing is closed after ``idle_timeout`` unless
it is subscribed, a half-sent line after ``request_timeout``; one connection's lines are
handled a few per turn so that the others get theirs; a client that does not read its
answers or events is dropped.

The pieces: doors.py (the two listening sockets and who is let in), socketfile.py (the socket
files), admission.py (the slots), connection.py (one client's bytes and clocks), decoding.py
(strict JSON, a request or a refusal), dispatch.py (the table's answer), fanout.py (events to
subscribers by role).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import math
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from controller.api.connection import TOO_LONG, Connection
from controller.api.decoding import Refusal, read_request
from controller.api.dispatch import CLEAR_ANSWER_WAIT, answer, unanswered
from controller.api.doors import Doors
from controller.api.fanout import EventQueue, lines_by_role
from controller.api.limits import (
    DEFAULT_SOCKET_MODE,
    LINE_BYTES_PER_TURN,
    LINES_PER_TURN,
    MAX_SOCKET_PATH_BYTES,
    STATUS_SOCKET_NAME,
    Limits,
)
from controller.api.messages import BaseRequest, BaseResponse
from controller.api.roles import Endpoint, reserve_serves, reserve_words
from controller.api.socketfile import ApiServerError
from controller.cycle.reports import ApiBackend, Event
from drivers.ioloop import EVENT_READ, EVENT_WRITE, IoLoop, IoLoopError

__all__ = [
    "DEFAULT_SOCKET_MODE",
    "MAX_SOCKET_PATH_BYTES",
    "ApiServer",
    "ApiServerError",
    "Limits",
    "ServerStats",
]

log = logging.getLogger("mjtable.api")


@dataclasses.dataclass(frozen=True)
class ServerStats:
    """Counters of a running server (for tests, logs and diagnostics)."""

    clients: int
    subscribers: int
    requests: int
    events: int
    dropped: int
    #: connections answered ``busy`` from the reserve (they asked something else)
    busy: int = 0
    #: connections closed for idleness or for a request not sent in time
    expired: int = 0
    #: reserve connections closed to make room for a newer one
    evicted: int = 0


@dataclasses.dataclass
class _Pending:
    """A request whose answer is the board's (dispatch.answer gave None): the connection's
    next lines wait for it, until ``due``."""

    request: BaseRequest
    due: float


class ApiServer:
    """Serves a :class:`ApiBackend` on its two Unix sockets until :meth:`stop`."""

    def __init__(
        self,
        table: ApiBackend,
        path: str | os.PathLike[str],
        mode: int = DEFAULT_SOCKET_MODE,
        group: str | None = None,
        *,
        status_path: str | os.PathLike[str] | None = None,
        status_mode: int = DEFAULT_SOCKET_MODE,
        status_group: str | None = None,
        limits: Limits | None = None,
        loop: IoLoop | None = None,
    ) -> None:
        self.table = table
        self.path = Path(path)
        self.status_path = (
            Path(status_path) if status_path is not None else self.path.parent / STATUS_SOCKET_NAME
        )
        if self.status_path == self.path:
            raise ApiServerError(f"the full and the status socket are both {self.path}")
        self.mode = mode
        self.group = group
        self.limits = limits if limits is not None else Limits()
        self.endpoints = (
            Endpoint(self.path, mode, group, "full"),
            Endpoint(self.status_path, status_mode, status_group, "status"),
        )
        self.doors = Doors(self.endpoints, self.limits, self, self._admitted)

        self._loop: IoLoop | None = None
        # the process's loop, if given: the server neither starts nor stops it
        self._shared_loop = loop
        self._remove_tick: Callable[[], None] | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._backlog: dict[Connection, None] = {}  # connections with lines left, in order
        self._pending: dict[Connection, _Pending] = {}  # answers the board gives
        self._queue = EventQueue(self.limits.max_pending_events)
        self._next_check = math.inf
        self._requests = 0
        self._events = 0
        self._dropped = 0
        self._busy = 0
        self._expired = 0
        self._stats_lock = threading.Lock()
        self._stats = ServerStats(clients=0, subscribers=0, requests=0, events=0, dropped=0)

    # -- lifecycle

    def start(self) -> None:
        """Create both sockets and serve them from the process's loop, or a thread of the
        server's own."""
        if self._loop is not None:
            raise RuntimeError("the API server is already started")
        try:
            self.doors.open()
            shared = self._shared_loop
            loop = (
                shared if shared is not None else IoLoop("mjtable-api", tick=self._tick, logger=log)
            )
            self._loop = loop
            loop.run(lambda: self.doors.listen(loop))
            self._unsubscribe = self.table.subscribe(self._on_event)
            if shared is not None:
                self._remove_tick = shared.add_tick(self._tick)
            else:
                loop.start()
        except BaseException:
            self._teardown()
            raise
        for endpoint in self.endpoints:
            log.info("API listening on the %s (mode %#o)", endpoint.label, endpoint.mode)

    def stop(self) -> None:
        """Close every client, remove the socket files and stop the thread."""
        self._teardown()

    def __enter__(self) -> ApiServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._loop is not None and self._loop.running

    def stats(self) -> ServerStats:
        """Counters, safe to read from any thread."""
        with self._stats_lock:
            stats = self._stats
        # The counters are plain ints written by the server thread: read them live.
        return dataclasses.replace(stats, **self._counters())

    def _counters(self) -> dict[str, int]:
        """The counters the server thread writes (the stats but the connections now open)."""
        return {
            "requests": self._requests,
            "events": self._events,
            "dropped": self._dropped,
            "busy": self._busy,
            "expired": self._expired,
            "evicted": self.doors.evicted,
        }

    def _teardown(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        remove, self._remove_tick = self._remove_tick, None
        if remove is not None:
            remove()
        loop, self._loop = self._loop, None
        if loop is not None and loop is not self._shared_loop:
            loop.stop(timeout=None)
        if loop is None or not loop.run(self._close_all, timeout=None):
            self._close_all()

    def _close_all(self) -> None:
        """Close every client and both sockets (in the loop's thread, when it runs)."""
        self.doors.close()
        self._update_stats()

    # -- called from the controller's thread: must never block

    def _on_event(self, event: Event) -> None:
        self._queue.push(event)
        loop = self._loop
        if loop is not None:
            loop.wake()  # never blocks; a no-op once stopped

    # -- the loop (drivers.ioloop): callbacks of ready sockets, then _tick

    def _tick(self) -> float | None:
        """After every wake-up: hand out the events, serve the lines left from the last
        turn, close the connections whose time is up, accept again after a pause; return the
        seconds to the next deadline."""
        self._deliver_events()
        for conn in list(self._backlog):
            del self._backlog[conn]
            self._serve(conn, time.monotonic())
        now = time.monotonic()
        for conn, pending in list(self._pending.items()):
            if pending.due <= now:
                self._answered(conn, pending, unanswered(self.table, pending.request))
        self._expire(now)
        paused = self.doors.resume(now)
        self._update_stats()
        if self._backlog:
            return 0.0
        due = min(self._next_check, paused, *(p.due for p in self._pending.values()))
        return None if due == math.inf else max(0.0, due - now)

    def ready(self, conn: Connection, mask: int) -> None:
        """A client's socket is ready (connection.Owner)."""
        try:
            if mask & EVENT_READ and not conn.closed:
                self._read(conn)
            if mask & EVENT_WRITE and not conn.closed:
                conn.flush()
        except Exception:
            log.exception("%s: unexpected error; disconnecting it", conn.name)
            conn.close("internal error")

    def closed(self, conn: Connection, reason: str) -> None:
        """A client's connection is closed (connection.Owner): free its slot."""
        self.doors.release(conn)
        self._backlog.pop(conn, None)
        self._pending.pop(conn, None)
        log.debug("%s disconnected: %s", conn.name, reason)

    def dropped(self, conn: Connection, reason: str) -> None:
        """A client is dropped for not reading (connection.Owner)."""
        self._dropped += 1
        self._next_check = min(self._next_check, time.monotonic() + self.limits.linger_seconds)
        log.warning("%s dropped: %s", conn.name, reason)

    def _admitted(self, conn: Connection) -> None:
        """A client came in (doors.py): watch its clocks, serve what it sent already."""
        conn.update_interest()
        self._watch(conn)
        self._read(conn)  # a request sent before accept() is served at once

    # -- requests

    def _read(self, conn: Connection) -> None:
        if conn.eof or conn.closing or conn.backlogged:
            return
        now = time.monotonic()
        if conn.receive(now) or conn.eof:
            self._serve(conn, now)

    def _serve(self, conn: Connection, now: float) -> None:
        """Handle the connection's whole lines, a few per turn: at most LINES_PER_TURN
        lines and, past its first line, LINE_BYTES_PER_TURN bytes, so that one client's large
        lines cannot hold the loop while the others wait."""
        conn.backlogged = False
        handled = handled_bytes = 0
        while not conn.closing and not conn.closed and handled < LINES_PER_TURN:
            if conn in self._pending or (handled and handled_bytes >= LINE_BYTES_PER_TURN):
                break
            line = conn.next_line()
            if line is None:
                break
            handled += 1
            if line is TOO_LONG:
                conn.rest()
                limit = self.limits.max_line_bytes
                conn.refuse(
                    Refusal(
                        "line_too_long",
                        f"a request line is limited to {limit} bytes; closing this connection",
                    ),
                )
                self._finish(conn, "sent an over-long line")
                return
            assert isinstance(line, bytes)
            handled_bytes += len(line)
            self._handle_line(conn, line)
        if conn.closing or conn.closed:
            return
        if conn in self._pending:
            conn.backlogged = True  # read no more until the answer is sent (_answered)
        elif conn.has_line():
            conn.backlogged = True
            self._backlog[conn] = None
        elif conn.eof:
            last = conn.rest()
            if last.strip():
                self._handle_line(conn, last)
            if not conn.subscribed and conn not in self._pending:
                self._finish(conn, "the client closed the connection")
        conn.compact(now)
        conn.update_interest()
        self._watch(conn)

    def _handle_line(self, conn: Connection, line: bytes) -> None:
        if not line.strip():
            return
        self._requests += 1
        decoded = read_request(line, conn.role)
        if conn.slot == "regular":
            self._respond(conn, decoded)
            return
        conn.answered = True
        if not isinstance(decoded, Refusal) and not reserve_serves(decoded):
            self._busy += 1
            limits = self.limits
            decoded = Refusal(
                "busy",
                f"no place for this connection on the {conn.role} socket "
                f"({limits.max_clients} clients at most, {limits.max_clients_per_peer} per "
                f"user): it is answered one {reserve_words(conn.role)} and closed; try again later",
                decoded.id,
            )
        self._respond(conn, decoded)
        self._finish(conn, "answered from the reserve")

    def _respond(self, conn: Connection, decoded: BaseRequest | Refusal) -> None:
        if isinstance(decoded, Refusal):
            conn.refuse(decoded)
            return
        op = getattr(decoded, "op", "?")
        pending = _Pending(decoded, time.monotonic() + CLEAR_ANSWER_WAIT)
        try:
            response = answer(
                self.table, decoded, conn, functools.partial(self._later, conn, pending)
            )
        except Exception as exc:
            log.exception("%s: the table failed to answer %s", conn.name, op)
            message = f"the table could not answer {op}: {type(exc).__name__}: {exc}"
            conn.refuse(Refusal("internal", message, decoded.id))
            return
        if response is None:  # the board's answer comes later (_later)
            self._pending[conn] = pending
            return
        self._send(conn, response, op)

    def _later(self, conn: Connection, pending: _Pending, response: BaseResponse) -> None:
        """The board's answer to a pending request, from the thread that has it."""
        loop = self._loop
        if loop is None:
            return
        # the server may have stopped meanwhile: the connection is gone with it
        with contextlib.suppress(IoLoopError):
            loop.call_soon(self._answered, conn, pending, response)

    def _answered(self, conn: Connection, pending: _Pending, response: BaseResponse) -> None:
        """Send the answer of ``pending``, unless it was given already (the board's answer
        after the wait's end, or the other way round), and serve the lines behind it."""
        if self._pending.get(conn) is not pending:
            return
        del self._pending[conn]
        self._send(conn, response, getattr(pending.request, "op", "?"))
        self._backlog[conn] = None

    def _send(self, conn: Connection, response: BaseResponse, op: str) -> None:
        try:
            data = response.model_dump_json().encode() + b"\n"
        except Exception as exc:
            log.exception("%s: cannot serialise the answer to %s", conn.name, op)
            conn.refuse(Refusal("internal", f"cannot serialise the answer: {exc}", response.id))
            return
        conn.send(data)

    # -- output and clocks

    def _finish(self, conn: Connection, reason: str) -> None:
        conn.finish(reason)
        self._watch(conn)

    def _watch(self, conn: Connection) -> None:
        """Make sure the next look at the clocks is no later than ``conn``'s deadline."""
        due = conn.deadline()
        if due is not None and due < self._next_check:
            self._next_check = due

    def _expire(self, now: float) -> None:
        """Close the connections whose time is up; note when the next one is due."""
        if now < self._next_check:
            return
        next_check = math.inf
        for conn in list(self.doors.conns):
            due = conn.deadline()
            if due is not None and due <= now:
                self._expired += conn.time_up(now)
                due = conn.deadline()
            if due is not None:
                next_check = min(next_check, due)
        self._next_check = next_check

    def _deliver_events(self) -> None:
        overflow, events = self._queue.take()
        if overflow:
            for conn in list(self.doors.conns):
                if conn.subscribed:
                    conn.drop("the API server fell behind the table's events")
        for event in events:
            self._events += 1
            lines = lines_by_role(event)
            if lines is None:
                continue
            for conn in list(self.doors.conns):
                if conn.subscribed and not conn.closing:
                    line = lines.get(conn.role)
                    if line is not None:
                        conn.send(line)

    def _update_stats(self) -> None:
        stats = ServerStats(
            clients=len(self.doors.conns),
            subscribers=sum(1 for c in self.doors.conns if c.subscribed),
            **self._counters(),
        )
        with self._stats_lock:
            self._stats = stats
