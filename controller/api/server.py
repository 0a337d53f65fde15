"""The local API's server: newline-delimited JSON over a Unix socket.

The server (:class:`ApiServer`) is one thread around a selector (a
``drivers.ioloop.IoLoop``): non-blocking sockets, no polling. Events reach it
from the controller's thread through the ``ApiBackend.subscribe`` callback,
which only appends to a queue and wakes the loop (one byte on a socket pair),
so it never blocks. Each client has a bounded
outbound queue; a client that lets it overflow is told why (if it still reads)
and disconnected, and the table never waits for it.

See docs/api.md for the wire format and error codes; the messages are in
controller/api/messages.py.
"""

from __future__ import annotations

import collections
import dataclasses
import errno
import functools
import grp
import json
import logging
import os
import socket
import stat
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import (
    ValidationError,
)

from controller.api.jsondepth import check_depth
from controller.cycle.reports import ApiBackend, Event
from drivers.ioloop import EVENT_READ, EVENT_WRITE, IoLoop

if TYPE_CHECKING:
    from controller.service.config import ApiSection

from controller.api.messages import (
    OPS,
    REQUEST_MODELS,
    BaseRequest,
    BaseResponse,
    ClearFaultRequest,
    CommandResponse,
    DealRequest,
    DealtResponse,
    DroppedNotice,
    ErrorCode,
    ErrorDetail,
    ErrorResponse,
    GetCycleRequest,
    LastDealtRequest,
    ShuffleRequest,
    StatusRequest,
    StatusResponse,
    StopRequest,
    SubscribeRequest,
    SubscriptionResponse,
    SubscriptionResult,
    ThrowRequest,
    UnsubscribeRequest,
    utc_now,
)

log = logging.getLogger("mjtable.api")

MAX_LINE_BYTES = 64 * 1024
DEFAULT_MAX_QUEUE_BYTES = 1024 * 1024
DEFAULT_MAX_QUEUE_MESSAGES = 4096
DEFAULT_LINGER_SECONDS = 2.0
DEFAULT_MAX_CLIENTS = 128
MAX_PENDING_EVENTS = 65536
#: The socket's permissions unless told otherwise (config: api.mode).
DEFAULT_SOCKET_MODE = 0o660
#: sun_path is 108 bytes on Linux, including the terminating NUL.
MAX_SOCKET_PATH_BYTES = 107


class ApiServerError(Exception):
    """The API socket cannot be set up; the message says why in plain words."""


class _Client:
    __slots__ = (
        "closed",
        "closing",
        "deadline",
        "eof",
        "inbuf",
        "name",
        "out",
        "out_bytes",
        "partial",
        "reason",
        "registered",
        "sock",
        "subscribed",
    )

    def __init__(self, sock: socket.socket, name: str) -> None:
        self.sock = sock
        self.name = name
        self.inbuf = bytearray()
        self.out: collections.deque[bytes | memoryview] = collections.deque()
        self.out_bytes = 0
        self.partial = False  # the head of ``out`` is partly sent
        self.subscribed = False
        self.eof = False
        self.closing = False  # send what is queued, then close
        self.closed = False
        self.reason = ""
        self.deadline: float | None = None
        self.registered = 0  # event mask currently registered with the loop


@dataclasses.dataclass(frozen=True)
class ServerStats:
    """Counters of a running server (for tests, logs and diagnostics)."""

    clients: int
    subscribers: int
    requests: int
    events: int
    dropped: int


_SEND_FLAGS = getattr(socket, "MSG_NOSIGNAL", 0)


def _peer_name(sock: socket.socket, number: int) -> str:
    so_peercred = getattr(socket, "SO_PEERCRED", None)
    if so_peercred is None:
        return f"client {number}"
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, so_peercred, struct.calcsize("3i"))
        pid, uid, _gid = struct.unpack("3i", raw)
    except OSError:
        return f"client {number}"
    return f"client {number} (pid {pid}, uid {uid})"


def _first_error(op: str, exc: ValidationError) -> str:
    error = exc.errors(include_url=False)[0]
    loc = ".".join(str(part) for part in error["loc"]) or "request"
    fields = ", ".join(REQUEST_MODELS[op].model_fields)
    if error["type"] == "missing":
        return f"{loc}: missing; {op} needs it"
    if error["type"] == "extra_forbidden":
        return f"{loc}: unknown field for {op}; expected only {fields}"
    return f"{loc}: {error['msg']}"


class ApiServer:
    """Serves a :class:`ApiBackend` on a Unix socket until :meth:`stop`."""

    def __init__(
        self,
        table: ApiBackend,
        path: str | os.PathLike[str],
        mode: int = DEFAULT_SOCKET_MODE,
        group: str | None = None,
        *,
        max_line_bytes: int = MAX_LINE_BYTES,
        max_queue_bytes: int = DEFAULT_MAX_QUEUE_BYTES,
        max_queue_messages: int = DEFAULT_MAX_QUEUE_MESSAGES,
        max_clients: int = DEFAULT_MAX_CLIENTS,
        linger_seconds: float = DEFAULT_LINGER_SECONDS,
        max_pending_events: int = MAX_PENDING_EVENTS,
    ) -> None:
        self.table = table
        self.path = Path(path)
        self.mode = mode
        self.group = group
        self.max_line_bytes = max_line_bytes
        self.max_queue_bytes = max_queue_bytes
        self.max_queue_messages = max_queue_messages
        self.max_clients = max_clients
        self.linger_seconds = linger_seconds
        self.max_pending_events = max_pending_events

        self._listener: socket.socket | None = None
        self._identity: tuple[int, int] | None = None
        self._loop: IoLoop | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._clients: set[_Client] = set()
        self._pending: collections.deque[Any] = collections.deque()
        self._overflow = False
        self._accept_paused_until: float | None = None
        self.accept_retry_seconds = 1.0
        self._counter = 0
        self._requests = 0
        self._events = 0
        self._dropped = 0
        self._stats_lock = threading.Lock()
        self._stats = ServerStats(clients=0, subscribers=0, requests=0, events=0, dropped=0)

    @classmethod
    def from_config(cls, table: ApiBackend, api: ApiSection) -> ApiServer:
        return cls(table, api.socket, api.mode, api.group)

    # -- lifecycle

    def start(self) -> None:
        """Create the socket and serve from a background thread."""
        if self._loop is not None:
            raise RuntimeError("the API server is already started")
        self._listener = self._open_listener()
        try:
            self._loop = IoLoop("mjtable-api", tick=self._tick, logger=log)
            self._loop.register(self._listener, EVENT_READ, self._on_listener)
            self._unsubscribe = self.table.subscribe(self._on_event)
            self._loop.start()
        except BaseException:
            self._teardown()
            raise
        log.info("API listening on %s (mode %#o)", self.path, self.mode)

    def stop(self) -> None:
        """Close every client, remove the socket file and stop the thread."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        loop = self._loop
        if loop is not None:
            loop.stop(timeout=None)
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
        return dataclasses.replace(
            stats, requests=self._requests, events=self._events, dropped=self._dropped
        )

    # -- called from the controller's thread: must never block

    def _on_event(self, event: Event) -> None:
        if len(self._pending) >= self.max_pending_events:
            self._overflow = True
        else:
            self._pending.append(event)
        loop = self._loop
        if loop is not None:
            loop.wake()  # never blocks; a no-op once stopped

    # -- socket setup

    def _open_listener(self) -> socket.socket:
        path = self.path
        if len(os.fsencode(str(path))) > MAX_SOCKET_PATH_BYTES:
            raise ApiServerError(
                f"the API socket path {path} is too long for a Unix socket "
                f"({MAX_SOCKET_PATH_BYTES} bytes at most)"
            )
        if not path.parent.is_dir():
            raise ApiServerError(
                f"cannot create the API socket {path}: the directory {path.parent} does not exist"
            )
        self._remove_stale_socket()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(str(path))
        except OSError as exc:
            sock.close()
            raise ApiServerError(
                f"cannot create the API socket {path}: {exc.strerror or exc}"
            ) from None
        try:
            # Nobody can connect before listen(), so the mode and group are in place first.
            os.chmod(path, self.mode)
            if self.group is not None:
                self._give_to_group(path, self.group)
            info = os.stat(path)
            self._identity = (info.st_dev, info.st_ino)
            sock.listen(128)
            sock.setblocking(False)
        except BaseException:
            sock.close()
            self._unlink_own_socket(force=True)
            raise
        return sock

    def _give_to_group(self, path: Path, group: str) -> None:
        try:
            gid = grp.getgrnam(group).gr_gid
        except KeyError:
            log.warning("api.group %r does not exist here; the socket keeps its group", group)
            return
        try:
            os.chown(path, -1, gid)
        except PermissionError:
            raise ApiServerError(
                f"cannot give the API socket {path} to group {group!r}: not permitted "
                f"(the service's user must be a member of {group!r})"
            ) from None

    def _remove_stale_socket(self) -> None:
        path = self.path
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            return
        if not stat.S_ISSOCK(info.st_mode):
            raise ApiServerError(
                f"{path} exists and is not a socket; refusing to remove it "
                "(move it away or set another api.socket)"
            )
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(2.0)
        try:
            probe.connect(str(path))
        except ConnectionRefusedError:
            os.unlink(path)
            log.info("removed the stale socket %s left by a previous run", path)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise ApiServerError(
                f"{path} exists and could not be probed ({exc.strerror or 'no answer'}); "
                "refusing to remove it"
            ) from None
        else:
            raise ApiServerError(
                f"another service already answers on {path}; refusing to take it over"
            )
        finally:
            probe.close()

    def _unlink_own_socket(self, force: bool = False) -> None:
        try:
            info = os.lstat(self.path)
        except OSError:
            return
        if force or (info.st_dev, info.st_ino) == self._identity:
            try:
                os.unlink(self.path)
            except OSError as exc:
                log.warning("could not remove the API socket %s: %s", self.path, exc)

    def _teardown(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        loop, self._loop = self._loop, None
        if loop is not None:
            loop.stop(timeout=None)
        for client in list(self._clients):
            self._close(client, "the service is stopping")
        if self._listener is not None:
            self._listener.close()
            self._listener = None
            self._unlink_own_socket()
        self._update_stats()

    # -- the loop (drivers.ioloop): callbacks of ready sockets, then _tick

    def _tick(self) -> float | None:
        """After every wake-up: hand out the table's events, close clients whose linger
        time is over, accept again after a pause; return the seconds to the next deadline."""
        self._deliver_events()
        self._expire()
        self._resume_accepting()
        self._update_stats()
        return self._timeout()

    def _on_listener(self, mask: int) -> None:
        self._accept()

    def _service(self, client: _Client, mask: int) -> None:
        try:
            if mask & EVENT_READ and not client.closed:
                self._read(client)
            if mask & EVENT_WRITE and not client.closed:
                self._flush(client)
        except Exception:
            log.exception("%s: unexpected error; disconnecting it", client.name)
            self._close(client, "internal error")

    def _pause_accepting(self) -> None:
        listener, loop = self._listener, self._loop
        if self._accept_paused_until is None and listener is not None and loop is not None:
            loop.unregister(listener)
            self._accept_paused_until = time.monotonic() + self.accept_retry_seconds

    def _resume_accepting(self) -> None:
        until = self._accept_paused_until
        listener, loop = self._listener, self._loop
        if until is None or until > time.monotonic() or listener is None or loop is None:
            return
        self._accept_paused_until = None
        loop.register(listener, EVENT_READ, self._on_listener)
        log.info("accepting API clients again")

    def _timeout(self) -> float | None:
        deadlines = [c.deadline for c in self._clients if c.deadline is not None]
        if self._accept_paused_until is not None:
            deadlines.append(self._accept_paused_until)
        if not deadlines:
            return None
        return max(0.0, min(deadlines) - time.monotonic())

    def _accept(self) -> None:
        assert self._listener is not None
        while True:
            try:
                sock, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    # Out of descriptors or memory: the listener would stay readable and
                    # the loop would spin. Stop accepting for a moment; clients wait in
                    # the backlog meanwhile.
                    self._pause_accepting()
                log.warning("accept failed: %s", exc)
                return
            sock.setblocking(False)
            self._counter += 1
            client = _Client(sock, _peer_name(sock, self._counter))
            self._clients.add(client)
            if len(self._clients) > self.max_clients:
                self._reply_error(
                    client,
                    None,
                    "busy",
                    f"too many clients ({self.max_clients}); try again later",
                )
                self._finish(client, "too many clients")
            else:
                log.debug("%s connected", client.name)
                self._update_interest(client)

    def _update_interest(self, client: _Client) -> None:
        loop = self._loop
        if client.closed or loop is None:
            return
        want = 0
        if not client.eof and not client.closing:
            want |= EVENT_READ
        if client.out:
            want |= EVENT_WRITE
        if want == client.registered:
            return
        if client.registered and want:
            loop.modify(client.sock, want)
        elif client.registered:
            loop.unregister(client.sock)
        else:
            loop.register(client.sock, want, functools.partial(self._service, client))
        client.registered = want

    def _read(self, client: _Client) -> None:
        if client.eof or client.closing:
            return
        try:
            data = client.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._close(client, f"receive failed: {exc.strerror or exc}")
            return
        if not data:
            client.eof = True
            if client.inbuf.strip():
                line = bytes(client.inbuf)
                client.inbuf.clear()
                self._handle_line(client, line)
            if not client.subscribed:
                self._finish(client, "the client closed the connection")
            else:
                self._update_interest(client)
            return
        client.inbuf += data
        start = 0
        while not client.closing and not client.closed:
            newline = client.inbuf.find(b"\n", start)
            if newline < 0:
                break
            if newline - start > self.max_line_bytes:
                break
            line = bytes(client.inbuf[start:newline])
            start = newline + 1
            self._handle_line(client, line)
        del client.inbuf[:start]
        if client.closing or client.closed:
            return
        pending = client.inbuf.find(b"\n")
        if len(client.inbuf) > self.max_line_bytes and (
            pending < 0 or pending > self.max_line_bytes
        ):
            client.inbuf.clear()
            self._reply_error(
                client,
                None,
                "line_too_long",
                f"a request line is limited to {self.max_line_bytes} bytes; "
                "closing this connection",
            )
            self._finish(client, "sent an over-long line")

    # -- requests

    def _handle_line(self, client: _Client, line: bytes) -> None:
        if not line.strip():
            return
        self._requests += 1
        try:
            check_depth(line)
            raw = json.loads(line)
        except (ValueError, RecursionError) as exc:
            self._reply_error(client, None, "bad_json", f"not valid JSON: {exc}")
            return
        if not isinstance(raw, dict):
            self._reply_error(
                client,
                None,
                "bad_request",
                'a request is a JSON object such as {"id": 1, "op": "status"}',
            )
            return
        request_id = raw.get("id")
        if not isinstance(request_id, str | int | float | bool) and request_id is not None:
            self._reply_error(
                client,
                None,
                "bad_request",
                "id: expected a JSON scalar (string, number, true, false or null)",
            )
            return
        op = raw.get("op")
        if "op" not in raw:
            self._reply_error(
                client, request_id, "bad_request", "op: missing; expected one of " + ", ".join(OPS)
            )
            return
        if not isinstance(op, str) or op not in REQUEST_MODELS:
            self._reply_error(
                client,
                request_id,
                "unknown_op",
                f"op: unknown operation {json.dumps(op)}; expected one of " + ", ".join(OPS),
            )
            return
        try:
            request = REQUEST_MODELS[op].model_validate(raw)
        except ValidationError as exc:
            self._reply_error(client, request_id, "bad_request", _first_error(op, exc))
            return
        try:
            response = self._dispatch(client, request)
        except Exception as exc:
            log.exception("%s: the table failed to answer %s", client.name, op)
            self._reply_error(
                client,
                request_id,
                "internal",
                f"the table could not answer {op}: {type(exc).__name__}: {exc}",
            )
            return
        try:
            data = response.model_dump_json().encode() + b"\n"
        except Exception as exc:
            log.exception("%s: cannot serialise the answer to %s", client.name, op)
            self._reply_error(client, request_id, "internal", f"cannot serialise the answer: {exc}")
            return
        self._send(client, data)

    def _dispatch(self, client: _Client, request: BaseRequest) -> BaseResponse:
        rid = request.id
        table = self.table
        if isinstance(request, StatusRequest):
            return StatusResponse(id=rid, result=table.status())
        if isinstance(request, ShuffleRequest):
            return CommandResponse(id=rid, result=table.request("shuffle", "api"))
        if isinstance(request, DealRequest):
            return CommandResponse(id=rid, result=table.request("deal", "api"))
        if isinstance(request, StopRequest):
            return CommandResponse(id=rid, result=table.request("stop", "api"))
        if isinstance(request, ClearFaultRequest):
            return CommandResponse(id=rid, result=table.request("clear_fault", "api"))
        if isinstance(request, ThrowRequest):
            return CommandResponse(id=rid, result=table.enter_dice(list(request.dice), "api"))
        if isinstance(request, LastDealtRequest):
            return DealtResponse(id=rid, result=table.last_dealt())
        if isinstance(request, GetCycleRequest):
            dealt = table.get_cycle(request.cycle)
            if dealt is None:
                return ErrorResponse(
                    id=rid,
                    error=ErrorDetail(
                        code="not_found",
                        message=f"cycle: no cycle {request.cycle!r} is known to this table",
                    ),
                )
            return DealtResponse(id=rid, result=dealt)
        if isinstance(request, SubscribeRequest):
            # Subscribed first, snapshot second: no event can fall between the two.
            client.subscribed = True
            return SubscriptionResponse(
                id=rid, result=SubscriptionResult(subscribed=True, status=table.status())
            )
        if isinstance(request, UnsubscribeRequest):
            client.subscribed = False
            return SubscriptionResponse(
                id=rid, result=SubscriptionResult(subscribed=False, status=None)
            )
        raise AssertionError(f"no handler for {request!r}")

    def _reply_error(self, client: _Client, request_id: Any, code: ErrorCode, message: str) -> None:
        response = ErrorResponse(id=request_id, error=ErrorDetail(code=code, message=message))
        self._send(client, response.model_dump_json().encode() + b"\n")

    # -- output

    def _send(self, client: _Client, data: bytes) -> None:
        if client.closing or client.closed:
            return
        if (
            client.out_bytes + len(data) > self.max_queue_bytes
            or len(client.out) >= self.max_queue_messages
        ):
            self._drop(
                client,
                f"too slow: more than {self.max_queue_bytes} bytes or "
                f"{self.max_queue_messages} messages waiting to be read",
            )
            return
        client.out.append(data)
        client.out_bytes += len(data)
        self._flush(client)

    def _flush(self, client: _Client) -> None:
        while client.out:
            head = client.out[0]
            try:
                sent = client.sock.send(head, _SEND_FLAGS)
            except (BlockingIOError, InterruptedError):
                break
            except OSError as exc:
                self._close(client, f"connection lost: {exc.strerror or exc}")
                return
            client.out_bytes -= sent
            if sent < len(head):
                client.out[0] = memoryview(head)[sent:]
                client.partial = True
                break
            client.out.popleft()
            client.partial = False
        if not client.out and client.closing:
            self._close(client, client.reason)
            return
        self._update_interest(client)

    def _finish(self, client: _Client, reason: str) -> None:
        """Send what is queued (for a while at most), then close."""
        if client.closing or client.closed:
            return
        client.closing = True
        client.subscribed = False
        client.reason = reason
        client.deadline = time.monotonic() + self.linger_seconds
        self._flush(client)

    def _drop(self, client: _Client, reason: str) -> None:
        """Disconnect a client that does not keep up, telling it why if it still reads."""
        self._dropped += 1
        log.warning("%s dropped: %s", client.name, reason)
        keep = [client.out[0]] if client.partial and client.out else []
        notice = DroppedNotice(at=utc_now(), reason=reason)
        line = b'{"event":' + notice.model_dump_json().encode() + b"}\n"
        client.out = collections.deque([*keep, line])
        client.out_bytes = sum(len(part) for part in client.out)
        self._finish(client, f"dropped: {reason}")

    def _close(self, client: _Client, reason: str) -> None:
        if client.closed:
            return
        client.closed = True
        if client.registered and self._loop is not None:
            self._loop.unregister(client.sock)
        client.registered = 0
        client.sock.close()
        self._clients.discard(client)
        log.debug("%s disconnected: %s", client.name, reason)

    def _expire(self) -> None:
        now = time.monotonic()
        for client in list(self._clients):
            if client.deadline is not None and client.deadline <= now:
                self._close(
                    client,
                    f"{client.reason}; its last messages were not read within "
                    f"{self.linger_seconds} s",
                )

    def _deliver_events(self) -> None:
        if self._overflow:
            self._overflow = False
            self._pending.clear()
            for client in list(self._clients):
                if client.subscribed:
                    self._drop(client, "the API server fell behind the table's events")
        while self._pending:
            event = self._pending.popleft()
            self._events += 1
            try:
                line = b'{"event":' + event.model_dump_json().encode() + b"}\n"
            except Exception:
                log.exception("cannot serialise event %r", event)
                continue
            for client in list(self._clients):
                if client.subscribed and not client.closing and not client.closed:
                    self._send(client, line)

    def _update_stats(self) -> None:
        stats = ServerStats(
            clients=len(self._clients),
            subscribers=sum(1 for c in self._clients if c.subscribed),
            requests=self._requests,
            events=self._events,
            dropped=self._dropped,
        )
        with self._stats_lock:
            self._stats = stats
