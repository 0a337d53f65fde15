"""The API server's doors: its two listening sockets, each with its slots, and the clients let in.

:class:`Doors` opens both sockets (socketfile.py), accepts clients on the server's loop a
few at a time, gives each a regular slot or a place in the reserve (admission.py; the oldest
reserve connection that asked nothing makes room for a newer one), stops accepting for a
moment when the process is out of descriptors, and frees a slot when its connection closes.
What a connection then asks is the server's business (server.py).
"""

from __future__ import annotations

import dataclasses
import errno
import logging
import math
import time
from collections.abc import Callable, Iterable

from controller.api.admission import Slots
from controller.api.connection import Connection, Owner
from controller.api.limits import ACCEPTS_PER_TURN, Limits
from controller.api.roles import Endpoint, Role, reserve_words
from controller.api.socketfile import Listener
from drivers.ioloop import EVENT_READ, IoLoop

log = logging.getLogger("mjtable.api")

#: At most one warning per socket and this many seconds that it serves from its reserve.
FULL_WARNING_SECONDS = 60.0


@dataclasses.dataclass
class _Door:
    listener: Listener
    slots: Slots[Connection]
    paused_until: float | None = None
    warned_at: float = -math.inf


class Doors:
    """Both sockets of the server, and who came in through them."""

    def __init__(
        self,
        endpoints: Iterable[Endpoint],
        limits: Limits,
        owner: Owner,
        admitted: Callable[[Connection], None],
    ) -> None:
        """``owner``: what each connection reports to; ``admitted(conn)``: called for each
        client let in, in the loop's thread."""
        self.endpoints = tuple(endpoints)
        self.limits = limits
        self._owner = owner
        self._admitted = admitted
        self._doors: dict[Role, _Door] = {}
        self._loop: IoLoop | None = None
        self._counter = 0
        self.accept_retry_seconds = 1.0
        #: every connection let in and not yet closed
        self.conns: set[Connection] = set()
        #: reserve connections closed to make room for a newer one
        self.evicted = 0

    def open(self) -> None:
        """Create both socket files (ApiServerError says why one cannot be)."""
        limits = self.limits
        for endpoint in self.endpoints:
            listener = Listener(endpoint)
            slots: Slots[Connection] = Slots(
                limits.max_clients, limits.max_clients_per_peer, limits.reserved_clients
            )
            self._doors[endpoint.role] = _Door(listener, slots)
            listener.open()

    def listen(self, loop: IoLoop) -> None:
        """Accept on ``loop`` (from its thread, or before it runs)."""
        self._loop = loop
        for door in self._doors.values():
            self._listen(door)

    def close(self) -> None:
        """Close every connection and both sockets (removing their files)."""
        for conn in list(self.conns):
            conn.close("the service is stopping")
        loop = self._loop
        for door in self._doors.values():
            sock = door.listener.sock
            if sock is not None and loop is not None:
                loop.unregister(sock)
            door.listener.close()
        self._doors.clear()

    def release(self, conn: Connection) -> None:
        """``conn`` closed: its slot is free."""
        self.conns.discard(conn)
        door = self._doors.get(conn.role)
        if door is not None:
            door.slots.release(conn)

    def resume(self, now: float) -> float:
        """Accept again on the sockets whose pause is over; the next pause's end (inf: none)."""
        due = math.inf
        for door in self._doors.values():
            if door.paused_until is not None and door.paused_until <= now:
                door.paused_until = None
                self._listen(door)
                log.info("accepting API clients again")
            elif door.paused_until is not None:
                due = min(due, door.paused_until)
        return due

    def _listen(self, door: _Door) -> None:
        assert self._loop is not None and door.listener.sock is not None
        self._loop.register(door.listener.sock, EVENT_READ, lambda mask: self._accept(door))

    def _accept(self, door: _Door) -> None:
        sock_listener, loop = door.listener.sock, self._loop
        assert sock_listener is not None and loop is not None
        for _ in range(ACCEPTS_PER_TURN):
            try:
                sock, _ = sock_listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    # Out of descriptors or memory: the listener would stay readable and
                    # the loop would spin. Stop accepting for a moment; clients wait in
                    # the backlog meanwhile.
                    loop.unregister(sock_listener)
                    door.paused_until = time.monotonic() + self.accept_retry_seconds
                log.warning("accept failed: %s", exc)
                return
            sock.setblocking(False)
            now = time.monotonic()
            self._counter += 1
            conn = Connection(
                sock,
                self._counter,
                door.listener.endpoint.role,
                limits=self.limits,
                loop=loop,
                owner=self._owner,
                now=now,
            )
            self._admit(door, conn, now)

    def _admit(self, door: _Door, conn: Connection, now: float) -> None:
        slot = door.slots.take(conn, conn.uid)
        if slot is None:  # the reserve is full: the oldest who asked nothing makes room
            victim = door.slots.victim(lambda c: c.waiting)
            if victim is not None:
                self.evicted += 1
                victim.close("made room in the reserve for a newer connection")
            slot = door.slots.take(conn, conn.uid)
        assert slot is not None, "a reserve of at least one place always makes room"
        conn.slot = slot
        self.conns.add(conn)
        if slot == "reserve" and now - door.warned_at >= FULL_WARNING_SECONDS:
            door.warned_at = now
            log.warning(
                "the %s has no regular place left for a new connection (%d clients at most, "
                "%d per user): such connections are answered one %s each, from the reserve",
                door.listener.endpoint.label,
                self.limits.max_clients,
                self.limits.max_clients_per_peer,
                reserve_words(conn.role),
            )
        log.debug("%s connected (%s slot)", conn.name, slot)
        self._admitted(conn)
