"""A small Python client for the table's local API (see docs/api.md).

    with ApiClient("/run/mjtable/api.sock") as table:
        print(table.status().state)
        result = table.shuffle()
        for event in table.events():
            ...

One connection per client object, opened on first use. Not thread-safe: use one
client per thread. Errors are typed and worded for the person at the terminal:
:class:`ServiceNotRunning`, :class:`PermissionDenied`, :class:`ServiceTimeout`,
:class:`ConnectionLost`, :class:`Dropped`, :class:`RequestError`.
"""

from __future__ import annotations

import collections
import grp
import json
import os
import socket
import stat
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from controller.api import client_words as words
from controller.api.limits import DEFAULT_SOCKET_PATH
from controller.api.messages import DroppedNotice, parse_event
from controller.cycle.reports import CommandResult, DiagStarted, Event, Status
from rules.dealt import DealtState, GamePosition, first_error

MAX_RESPONSE_BYTES = 16 * 1024 * 1024


class ClientError(Exception):
    """Base of the client's errors; the message is meant for a person."""


class ServiceNotRunning(ClientError):
    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(words.NOT_RUNNING.format(path=path))


class PermissionDenied(ClientError):
    def __init__(self, path: Path, group: str | None) -> None:
        self.path = path
        self.group = group
        if group:
            said = words.PERMISSION_GROUP.format(path=path, group=repr(group), name=group)
        else:
            said = words.PERMISSION.format(path=path)
        super().__init__(said)


class ServiceTimeout(ClientError):
    pass


class ConnectionLost(ClientError):
    pass


class ProtocolError(ClientError):
    """The service sent something that is not the API's wire format."""


class Dropped(ClientError):
    """The service disconnected this subscriber (it read events too slowly)."""

    def __init__(self, path: Path, reason: str) -> None:
        self.reason = reason
        super().__init__(words.DISCONNECTED.format(path=path, reason=reason))


class RequestError(ClientError):
    """The service answered with an error (``code`` is the wire error code)."""

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        super().__init__(message)


class NotASocket(ClientError):
    """The path names something else than a socket: a directory, a plain file."""


def _refuse_not_a_socket(path: Path) -> None:
    """NotASocket when ``path`` exists and is no socket (connect says only "refused")."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return
    if not stat.S_ISSOCK(mode):
        kind = words.A_DIRECTORY if stat.S_ISDIR(mode) else words.A_PLAIN_FILE
        if not stat.S_ISDIR(mode) and not stat.S_ISREG(mode):
            kind = words.A_DEVICE
        raise NotASocket(words.NOT_A_SOCKET.format(path=path, kind=kind))


def _group_of(path: Path) -> str | None:
    for candidate in (path, *path.parents):
        try:
            gid = os.stat(candidate).st_gid
        except PermissionError:
            continue
        except OSError:
            return None
        try:
            return grp.getgrgid(gid).gr_name
        except KeyError:
            return str(gid)
    return None


class ApiClient:
    """A connection to the mjtable service's API socket."""

    def __init__(
        self, path: str | os.PathLike[str] = DEFAULT_SOCKET_PATH, *, timeout: float | None = 10.0
    ) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self._sock: socket.socket | None = None
        self._buffer = bytearray()
        self._events: collections.deque[dict[str, Any]] = collections.deque()
        self._subscribed = False
        self._next_id = 0

    # -- connection

    def connect(self) -> None:
        if self._sock is not None:
            return
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # A blocking connect waits while the service's backlog is full (a non-blocking one
        # would fail at once with EAGAIN); the kernel gives up after the send timeout.
        if self.timeout is not None:
            seconds = max(self.timeout, 0.001)
            sock.setsockopt(
                socket.SOL_SOCKET,
                socket.SO_SNDTIMEO,
                struct.pack("ll", int(seconds), int(seconds % 1 * 1_000_000)),
            )
        try:
            sock.connect(str(self.path))
            sock.settimeout(self.timeout)
        except (FileNotFoundError, ConnectionRefusedError, NotADirectoryError):
            sock.close()
            _refuse_not_a_socket(self.path)
            raise ServiceNotRunning(self.path) from None
        except PermissionError:
            sock.close()
            raise PermissionDenied(self.path, _group_of(self.path)) from None
        except (TimeoutError, BlockingIOError):
            sock.close()
            raise ServiceTimeout(
                words.NOT_ACCEPTED.format(path=self.path, seconds=self.timeout)
            ) from None
        except OSError as exc:
            sock.close()
            said = words.CANNOT_CONNECT.format(path=self.path, why=exc.strerror or exc)
            raise ClientError(said) from None
        self._sock = sock

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self._buffer.clear()
        self._events.clear()
        self._subscribed = False

    def __enter__(self) -> ApiClient:
        self.connect()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- wire

    def _reopen_if_closed(self) -> None:
        """Connect again when the service closed this connection while it was idle.

        The service closes a connection that sent nothing for ``api.idle_timeout`` seconds
        (unless subscribed) and one it answered beyond its capacity (docs/api.md, "Limits").
        It does so only between requests, so a request not sent yet is safe to send on a new
        connection; one already sent is never sent twice.
        """
        sock = self._sock
        if sock is None or self._subscribed or self._buffer or self._events:
            return
        sock.settimeout(0.0)  # a look, not a wait
        try:
            pending = sock.recv(1, socket.MSG_PEEK)
        except (BlockingIOError, InterruptedError):
            return  # open, nothing waiting
        except OSError:
            pending = b""
        finally:
            sock.settimeout(self.timeout)
        if not pending:
            self.close()

    def _write(self, message: dict[str, Any]) -> None:
        self._reopen_if_closed()
        self.connect()
        assert self._sock is not None
        data = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        try:
            self._sock.sendall(data)
        except TimeoutError:
            raise ServiceTimeout(
                words.NOT_TAKEN.format(path=self.path, seconds=self.timeout)
            ) from None
        except OSError as exc:
            raise self._lost(exc) from None

    def _lost(self, exc: OSError) -> ConnectionLost:
        """The connection is gone (closed here): the error that says so."""
        self.close()
        return ConnectionLost(words.LOST.format(path=self.path, why=exc.strerror or exc))

    def _read_line(self, timeout: float | None) -> dict[str, Any]:
        assert self._sock is not None
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self._buffer[:newline])
                del self._buffer[: newline + 1]
                if not line.strip():
                    continue
                try:
                    message = json.loads(line)
                except ValueError:
                    raise ProtocolError(words.NOT_JSON.format(path=self.path)) from None
                if not isinstance(message, dict):
                    raise ProtocolError(words.NOT_AN_OBJECT.format(path=self.path))
                return message
            if len(self._buffer) > MAX_RESPONSE_BYTES:
                raise ProtocolError(words.TOO_LONG.format(path=self.path, most=MAX_RESPONSE_BYTES))
            self._sock.settimeout(timeout)
            try:
                data = self._sock.recv(65536)
            except TimeoutError:
                raise ServiceTimeout(
                    words.NO_ANSWER.format(path=self.path, seconds=timeout)
                ) from None
            except OSError as exc:
                raise self._lost(exc) from None
            if not data:
                self.close()
                raise ConnectionLost(words.CLOSED.format(path=self.path))
            self._buffer += data

    def call(self, op: str, **fields: Any) -> Any:
        """Send one request and return its ``result``; raise RequestError on an error answer.

        Event lines that arrive meanwhile are kept for :meth:`events`.
        """
        self._next_id += 1
        request_id = self._next_id
        self._write({"id": request_id, "op": op, **fields})
        while True:
            message = self._read_line(self.timeout)
            if "event" in message:
                self._on_event_line(message)
                continue
            if message.get("id") != request_id:
                if message.get("ok") is False and message.get("id") is None:
                    error = message.get("error") or {}
                    raise RequestError(str(error.get("code")), str(error.get("message")))
                continue  # an answer to an earlier request that timed out
            if message.get("ok") is True:
                return message.get("result")
            error = message.get("error")
            if not isinstance(error, dict):
                raise ProtocolError(words.NO_DETAILS.format(path=self.path))
            raise RequestError(str(error.get("code")), str(error.get("message")))

    def _on_event_line(self, message: dict[str, Any]) -> None:
        event = message.get("event")
        if not isinstance(event, dict):
            raise ProtocolError(f"the service on {self.path} sent an event that is not an object")
        if event.get("type") == "dropped":
            self.close()
            raise Dropped(self.path, str(event.get("reason")))
        if self._subscribed:
            self._events.append(event)

    # -- operations

    def status(self) -> Status:
        return Status.model_validate(self.call("status"))

    def shuffle(self) -> CommandResult:
        return CommandResult.model_validate(self.call("shuffle"))

    def deal(self) -> CommandResult:
        return CommandResult.model_validate(self.call("deal"))

    def stop(self) -> CommandResult:
        return CommandResult.model_validate(self.call("stop"))

    def set_leader(self, seat: str | None, game: GamePosition | None = None) -> CommandResult:
        """Who leads the next deal (the rules layer's word: a Wenzhou Leader who wins keeps
        the role), and where the game stands when the rules layer knows; None: the game
        alone (the simplified rules' dice choose the Leader)."""
        fields: dict[str, Any] = {} if seat is None else {"seat": seat}
        if game is not None:
            fields["game"] = game.model_dump()
        return CommandResult.model_validate(self.call("set_leader", **fields))

    def throw(self, dice: list[int]) -> CommandResult:
        """Enter the dice of a throw made by hand (dice.source = dealer)."""
        return CommandResult.model_validate(self.call("throw", dice=list(dice)))

    def clear_fault(self) -> CommandResult:
        return CommandResult.model_validate(self.call("clear_fault"))

    def diag(self, motors: bool = False, motor_ms: int | None = None) -> DiagStarted:
        """Ask for a diagnosis: the board's sensors, with ``motors`` each motor's test (full
        socket). Its ``diag`` events follow: subscribe first to receive them."""
        fields: dict[str, Any] = {"motors": motors}
        if motor_ms is not None:
            fields["motor_ms"] = motor_ms
        return DiagStarted.model_validate(self.call("diag", **fields))

    def last_dealt(self) -> DealtState | None:
        """The last dealt state the table published, or None before its first deal."""
        result = self.call("last_dealt")
        return None if result is None else self._dealt_state(result)

    def get_cycle(self, cycle_id: str) -> DealtState | None:
        """The dealt state of cycle ``cycle_id``, or None if the table does not know it."""
        try:
            result = self.call("get_cycle", cycle=cycle_id)
        except RequestError as exc:
            if exc.code == "not_found":
                return None
            raise
        return self._dealt_state(result)

    def _dealt_state(self, result: Any) -> DealtState:
        try:
            return DealtState.model_validate(result)
        except ValidationError as exc:
            raise ProtocolError(
                f"the service on {self.path} sent a dealt state that does not fit the "
                f"model: {first_error(exc)}"
            ) from None

    def subscribe(self) -> Status:
        """Start receiving events; returns a status snapshot taken after the start."""
        self._subscribed = True
        try:
            result = self.call("subscribe")
        except BaseException:
            self._subscribed = False
            raise
        return Status.model_validate(result["status"])

    def unsubscribe(self) -> None:
        self.call("unsubscribe")
        self._subscribed = False
        self._events.clear()

    def raw_events(self, idle_timeout: float | None = None) -> Iterator[dict[str, Any]]:
        """Subscribe now (if not yet) and return an iterator over the events, each the JSON
        object received.

        The iterator blocks until the next event; ``idle_timeout`` (seconds) raises
        ServiceTimeout after that long without one. It ends only by an error:
        Dropped, ConnectionLost.
        """
        if not self._subscribed:
            self.subscribe()
        return self._iter_raw(idle_timeout)

    def events(self, idle_timeout: float | None = None) -> Iterator[Event]:
        """Like :meth:`raw_events`, each event validated into its model."""
        return self._iter_events(self.raw_events(idle_timeout))

    def _iter_raw(self, idle_timeout: float | None) -> Iterator[dict[str, Any]]:
        while True:
            while self._events:
                yield self._events.popleft()
            if self._sock is None:
                raise ConnectionLost(f"not connected to the mjtable service on {self.path}")
            message = self._read_line(idle_timeout)
            if "event" in message:
                self._on_event_line(message)

    def _iter_events(self, raw: Iterator[dict[str, Any]]) -> Iterator[Event]:
        for data in raw:
            try:
                event = parse_event(data)
            except ValidationError as exc:
                raise ProtocolError(
                    f"the service on {self.path} sent an event that does not fit the API's "
                    f"models: {first_error(exc)}"
                ) from None
            assert not isinstance(event, DroppedNotice)
            yield event
