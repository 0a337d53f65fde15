"""One client connection: who it is, its bytes in and out, and when it must go.

A :class:`Connection` reads into its input buffer and hands out whole lines
(:meth:`Connection.next_line`); it queues its answers and events in a bounded outbound queue
sent with non-blocking writes; it tells the loop (drivers/ioloop.py) what it waits for; and it
knows its own deadline (:meth:`Connection.deadline`): the end of its linger when closing, the
request timeout while a line is half sent or while a reserve connection has asked nothing,
the idle timeout while it is not subscribed. What to do with a line, and when to close, is
the server's business (controller/api/server.py), which it is told through :class:`Owner`.
"""

from __future__ import annotations

import collections
import functools
import logging
import socket
import struct
import time
from typing import NamedTuple, Protocol

from controller.api.admission import Slot
from controller.api.decoding import Refusal
from controller.api.fanout import event_line
from controller.api.limits import Limits
from controller.api.messages import DroppedNotice, ErrorDetail, ErrorResponse, utc_now
from controller.api.roles import Role
from drivers.ioloop import EVENT_READ, EVENT_WRITE, IoLoop

log = logging.getLogger("mjtable.api")

_SEND_FLAGS = getattr(socket, "MSG_NOSIGNAL", 0)
#: Reads of 64 KiB at most, of input left unhandled, before a connection is closed.
DISCARD_READS = 16
#: The user id counted for a peer whose credentials cannot be read.
UNKNOWN_UID = -1


class Peer(NamedTuple):
    """The connecting process, as the kernel saw it at connect time (SO_PEERCRED)."""

    pid: int
    uid: int
    gid: int


def peer_of(sock: socket.socket) -> Peer | None:
    so_peercred = getattr(socket, "SO_PEERCRED", None)
    if so_peercred is None:
        return None
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, so_peercred, struct.calcsize("3i"))
    except OSError:
        return None
    return Peer(*struct.unpack("3i", raw))


class Owner(Protocol):
    """What a connection tells its server."""

    def ready(self, conn: Connection, mask: int) -> None: ...
    def closed(self, conn: Connection, reason: str) -> None: ...
    def dropped(self, conn: Connection, reason: str) -> None: ...


class TooLong:
    """:meth:`Connection.next_line`'s answer when the next line exceeds the limit."""


TOO_LONG = TooLong()


class Connection:
    __slots__ = (
        "accepted_at",
        "answered",
        "backlogged",
        "closed",
        "closing",
        "eof",
        "inbuf",
        "inpos",
        "last_input",
        "limits",
        "line_started",
        "linger_until",
        "loop",
        "name",
        "out",
        "out_bytes",
        "owner",
        "partial",
        "peer",
        "reason",
        "registered",
        "role",
        "scanned",
        "slot",
        "sock",
        "subscribed",
    )

    def __init__(
        self,
        sock: socket.socket,
        number: int,
        role: Role,
        *,
        limits: Limits,
        loop: IoLoop,
        owner: Owner,
        now: float,
    ) -> None:
        self.sock = sock
        self.peer = peer_of(sock)
        who = f" (pid {self.peer.pid}, uid {self.peer.uid})" if self.peer else ""
        self.name = f"client {number}{who} on the {role} socket"
        self.role: Role = role
        self.slot: Slot = "regular"
        self.limits = limits
        self.loop = loop
        self.owner = owner
        self.inbuf = bytearray()
        self.inpos = 0  # start of the first line not handled yet
        self.scanned = 0  # inbuf[inpos:scanned] holds no newline: never searched twice
        self.out: collections.deque[bytes | memoryview] = collections.deque()
        self.out_bytes = 0
        self.partial = False  # the head of ``out`` is partly sent
        self.subscribed = False
        self.answered = False  # a request was answered on it (the reserve serves one)
        self.backlogged = False  # whole lines wait for the next turn: read no more meanwhile
        self.eof = False
        self.closing = False  # send what is queued, then close
        self.closed = False
        self.reason = ""
        self.accepted_at = now
        self.last_input = now
        self.line_started: float | None = None  # when the half-sent line began
        self.linger_until: float | None = None
        self.registered = 0  # event mask registered with the loop

    @property
    def uid(self) -> int:
        return self.peer.uid if self.peer is not None else UNKNOWN_UID

    @property
    def waiting(self) -> bool:
        """Holds a reserve slot and has asked nothing yet."""
        return self.slot == "reserve" and not self.answered and not self.closing

    # -- input

    def receive(self, now: float) -> bool:
        """Read what the socket has; False when nothing came (would block, or closed)."""
        try:
            data = self.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError as exc:
            self.close(f"receive failed: {exc.strerror or exc}")
            return False
        if not data:
            self.eof = True
            return False
        self.inbuf += data
        self.last_input = now
        if self.line_started is None:
            self.line_started = now
        return True

    def next_line(self) -> bytes | TooLong | None:
        """The next whole line (without its newline), TOO_LONG, or None when there is none.

        The bytes searched for a newline are not searched again when more arrive, so a line
        sent a byte at a time costs time linear in its length."""
        newline = self._newline()
        end = newline if newline >= 0 else len(self.inbuf)
        if end - self.inpos > self.limits.max_line_bytes:
            return TOO_LONG
        if newline < 0:
            return None
        line = bytes(self.inbuf[self.inpos : newline])
        self.inpos = self.scanned = newline + 1
        return line

    def has_line(self) -> bool:
        return self._newline() >= 0

    def _newline(self) -> int:
        newline = self.inbuf.find(b"\n", max(self.inpos, self.scanned))
        if newline < 0:
            self.scanned = len(self.inbuf)
        return newline

    def compact(self, now: float) -> None:
        """Forget the lines handled; a half line left behind starts its clock now if the
        lines before it were handled in this turn."""
        if self.inpos:
            del self.inbuf[: self.inpos]
            self.scanned = max(0, self.scanned - self.inpos)
            self.inpos = 0
            self.line_started = now if self.inbuf else None
        elif not self.inbuf:
            self.line_started = None

    def rest(self) -> bytes:
        """What is left after the last newline (the last line of a client that closed)."""
        rest = bytes(self.inbuf[self.inpos :])
        self.inbuf.clear()
        self.inpos = self.scanned = 0
        self.line_started = None
        return rest

    # -- output

    def send(self, data: bytes) -> None:
        """Queue ``data`` and write what the socket takes; drop the client when its queue
        would overflow."""
        if self.closing or self.closed:
            return
        limits = self.limits
        if (
            self.out_bytes + len(data) > limits.max_queue_bytes
            or len(self.out) >= limits.max_queue_messages
        ):
            self.drop(
                f"too slow: more than {limits.max_queue_bytes} bytes or "
                f"{limits.max_queue_messages} messages waiting to be read"
            )
            return
        self.out.append(data)
        self.out_bytes += len(data)
        self.flush()

    def flush(self) -> None:
        while self.out:
            head = self.out[0]
            try:
                sent = self.sock.send(head, _SEND_FLAGS)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:
                self.close(f"connection lost: {exc.strerror or exc}")
                return
            self.out_bytes -= sent
            if sent < len(head):
                self.out[0] = memoryview(head)[sent:]
                self.partial = True
                break
            self.out.popleft()
            self.partial = False
        if not self.out and self.closing:
            self.close(self.reason)
            return
        self.update_interest()

    def finish(self, reason: str) -> None:
        """Send what is queued (for ``linger_seconds`` at most), then close."""
        if self.closing or self.closed:
            return
        self.closing = True
        self.subscribed = False
        self.reason = reason
        self.linger_until = time.monotonic() + self.limits.linger_seconds
        self.flush()

    def drop(self, reason: str) -> None:
        """Disconnect a client that does not keep up, telling it why if it still reads."""
        if self.closing or self.closed:
            return
        self.owner.dropped(self, reason)
        keep = [self.out[0]] if self.partial and self.out else []
        line = event_line(DroppedNotice(at=utc_now(), reason=reason))
        self.out = collections.deque([*keep, line])
        self.out_bytes = sum(len(part) for part in self.out)
        self.finish(f"dropped: {reason}")

    def close(self, reason: str) -> None:
        if self.closed:
            return
        self.closed = True
        if self.registered and not self.loop.closed:
            self.loop.unregister(self.sock)
        self.registered = 0
        self._discard_input()
        self.sock.close()
        self.owner.closed(self, reason)

    def _discard_input(self) -> None:
        """Read what the client sent and nobody will handle: closing with unread input makes
        the kernel reset the connection, and the client could lose the answer saying why."""
        if self.eof:
            return
        for _ in range(DISCARD_READS):
            try:
                if not self.sock.recv(65536):
                    return
            except OSError:  # BlockingIOError: nothing more for now
                return

    def refuse(self, refusal: Refusal) -> None:
        """Send the error that answers a line (or tells why the connection ends)."""
        detail = ErrorDetail(code=refusal.code, message=refusal.message)
        response = ErrorResponse(id=refusal.request_id, error=detail)
        self.send(response.model_dump_json().encode() + b"\n")

    # -- the clocks

    def time_up(self, now: float) -> bool:
        """Act on the deadline that has passed (:meth:`deadline`): close, or answer
        ``timeout`` and close. True when the connection ran out of its idle or request time."""
        limits = self.limits
        if self.closing:
            self.close(
                f"{self.reason}; its last lines were not read within {limits.linger_seconds:g} s"
            )
            return False
        if self.line_started is not None and self.line_started + limits.request_timeout <= now:
            self.rest()
            message = (
                f"a request line was not finished within {limits.request_timeout:g} s; "
                "closing this connection"
            )
            self.refuse(Refusal("timeout", message))
            self.finish("a request line was not finished in time")
            return True
        if self.waiting and self.accepted_at + limits.request_timeout <= now:
            self.close(f"asked nothing within {limits.request_timeout:g} s")
            return True
        if not self.subscribed and self.last_input + limits.idle_timeout <= now:
            self.close(f"sent nothing for {limits.idle_timeout:g} s")
            return True
        return False

    def deadline(self) -> float | None:
        """When the server must look at this connection again (None: not on a clock)."""
        if self.closed:
            return None
        if self.closing:
            return self.linger_until
        limits = self.limits
        times = []
        if self.line_started is not None:
            times.append(self.line_started + limits.request_timeout)
        if self.waiting:
            times.append(self.accepted_at + limits.request_timeout)
        if not self.subscribed:
            times.append(self.last_input + limits.idle_timeout)
        return min(times) if times else None

    # -- the loop

    def update_interest(self) -> None:
        """Watch for what the connection waits for: requests unless it is closing, has
        half-closed or has lines not handled yet; room to write while output waits."""
        if self.closed or self.loop.closed:
            return
        want = 0
        if not self.eof and not self.closing and not self.backlogged:
            want |= EVENT_READ
        if self.out:
            want |= EVENT_WRITE
        if want == self.registered:
            return
        if self.registered and want:
            self.loop.modify(self.sock, want)
        elif self.registered:
            self.loop.unregister(self.sock)
        else:
            self.loop.register(self.sock, want, functools.partial(self.owner.ready, self))
        self.registered = want
