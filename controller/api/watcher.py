"""A follower of the table's API socket on an I/O loop: subscribe, follow the events,
reconnect. The floor gateway and the station each hold one, on their own loop.

A :class:`CoreWatcher` holds one connection to the table's API socket at a time, as a file and
timers of an I/O loop (drivers/ioloop.py, its holder's): it subscribes, and the answer's
status is the snapshot its holder starts from; then it hands every event to its sink in the
order received. The status the gateway keeps retained on the floor and the station shows
is the API's ``Status``, and some of its fields no event carries (the tile sets, the leader,
the actions allowed, the audit head, the clock), so after an event that changes it (``phase``,
``fault``, ``fault_cleared``, ``link``, ``dealt``) the watcher asks for it again on the same
connection, without waiting: the events behind keep flowing to the sink meanwhile, and the
ones that change the status while a request is out ask for one more after its answer, however
many they are. Every ``refresh_s`` seconds
(the gateway's ``head_interval``) it asks for the status too: the audit head the gateway
publishes is never older than that, even on a quiet table (records without an event move it).

When the service goes away (stopped, restarted, the connection dropped for reading too
slowly, the subscription unanswered for ``REQUEST_TIMEOUT_S``) the watcher tells the sink and
connects again with a growing delay, logging each fault in the API client's plain words.
Events that happen while the watcher is not connected are not replayed by the API: the
status of the next subscription says where the table is, and the audit head says what was
recorded meanwhile.

The watcher uses the API socket it is given; the status role is all it needs unless its
holder forwards or draws the dealt states (it reads, never commands).
"""

from __future__ import annotations

import itertools
import json
import logging
import socket
import time
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import ValidationError

from controller.api.backoff import Backoff
from controller.api.client import (
    MAX_RESPONSE_BYTES,
    ApiClient,
    ClientError,
    ConnectionLost,
    Dropped,
    ProtocolError,
    RequestError,
    ServiceTimeout,
)
from controller.api.messages import DroppedNotice, Event, Status, parse_event
from drivers.ioloop import EVENT_READ, EVENT_WRITE, IoLoop, Timer

log = logging.getLogger("mjtable.controller.api.watcher")

#: Events after which the status is asked for again (the others change nothing in it).
STATUS_EVENTS = frozenset({"phase", "fault", "fault_cleared", "link", "panel", "dealt", "leader"})
#: Seconds the service has to answer a request.
REQUEST_TIMEOUT_S = 10.0
#: Seconds the API client may wait when asked for the words of a failed connection.
WORDS_TIMEOUT_S = 1.0

#: What a request was for: the subscription, a status after an event, the interval's status.
Asked = Literal["subscribe", "status", "interval"]


class CoreSink(Protocol):
    """What the watcher tells (in the loop's thread)."""

    def core_up(self, status: Status) -> None: ...
    def core_down(self, reason: str) -> None: ...
    def on_status(self, status: Status) -> None: ...
    def on_event(self, event: Event, raw: dict[str, Any]) -> None: ...
    def on_interval(self, status: Status) -> None: ...  # read every refresh_s seconds


class CoreWatcher:
    def __init__(
        self,
        socket_path: str,
        sink: CoreSink,
        loop: IoLoop,
        *,
        refresh_s: float | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        self.socket_path = socket_path
        self.path = Path(socket_path)
        self.sink = sink
        self.refresh_s = refresh_s
        self._loop = loop
        self._backoff = backoff or Backoff()
        self._sock: socket.socket | None = None
        self._inbox = bytearray()
        self._outbox = bytearray()
        self._ids = itertools.count(1)
        self._asked: dict[int, tuple[Asked, Timer]] = {}  # request id -> what for, its timeout
        self._early: list[dict[str, Any]] = []  # events before the subscription's answer
        self._again = False  # a status-changing event came while a status request was out
        self._retry: Timer | None = None
        self._refresh: Timer | None = None
        self._refresh_at = 0.0
        self._stopped = False
        self._outage = 0  # failed attempts since the last connection
        self._said = ""  # the last fault logged
        self.connected = False
        self.connections = 0

    # -- from any thread

    def start(self) -> None:
        self._loop.call_soon(self._connect)

    def stop(self, timeout: float = 5.0) -> None:
        """Close the connection (the sink hears ``core_down``) and stop retrying."""
        self._loop.run(self._stop, timeout)

    # -- the loop's thread

    def _stop(self) -> None:
        self._stopped = True
        if self._retry is not None:
            self._retry.cancel()
        self._close()
        if self.connected:
            self.connected = False
            self.sink.core_down("the watcher stops")

    def _connect(self) -> None:
        self._retry = None
        if self._stopped or self._sock is not None:
            return
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            sock.connect(str(self.path))
        except BlockingIOError:
            sock.close()
            self._failed(
                ServiceTimeout(
                    f"the mjtable service on {self.path} did not accept the connection: "
                    "its queue of new connections is full"
                )
            )
            return
        except OSError as exc:
            sock.close()
            self._failed(_connect_error(self.path, exc))
            return
        self._sock = sock
        self._loop.register(sock, EVENT_READ, self._ready)
        self._ask("subscribe")

    def _ask(self, what: Asked) -> None:
        number = next(self._ids)
        timer = self._loop.call_later(REQUEST_TIMEOUT_S, self._unanswered, number)
        self._asked[number] = (what, timer)
        op = "subscribe" if what == "subscribe" else "status"
        self._send(json.dumps({"id": number, "op": op}).encode() + b"\n")

    def _asking(self, what: Asked) -> bool:
        return any(kind == what for kind, _ in self._asked.values())

    def _send(self, data: bytes) -> None:
        self._outbox += data
        self._flush()

    def _flush(self) -> None:
        sock = self._sock
        if sock is None:
            return
        try:
            while self._outbox:
                sent = sock.send(self._outbox)
                del self._outbox[:sent]
        except BlockingIOError:
            pass
        except OSError as exc:
            self._failed(_lost(self.path, exc))
            return
        self._loop.modify(sock, EVENT_READ | (EVENT_WRITE if self._outbox else 0))

    def _ready(self, mask: int) -> None:
        if mask & EVENT_WRITE:
            self._flush()
        sock = self._sock
        if not mask & EVENT_READ or sock is None:
            return
        try:
            data = sock.recv(65536)
        except BlockingIOError:
            return
        except OSError as exc:
            self._failed(_lost(self.path, exc))
            return
        if not data:
            self._failed(
                ConnectionLost(f"the mjtable service on {self.path} closed the connection")
            )
            return
        self._inbox += data
        while self._sock is sock:
            newline = self._inbox.find(b"\n")
            if newline < 0:
                break
            line = bytes(self._inbox[:newline])
            del self._inbox[: newline + 1]
            if line.strip():
                try:
                    self._line(line)
                except ClientError as exc:
                    self._failed(exc)
                except Exception:  # a sink's fault: said, and the next lines are still read
                    log.exception("the watcher's holder failed on a line from the table's service")
        if self._sock is sock and len(self._inbox) > MAX_RESPONSE_BYTES:
            self._failed(
                ProtocolError(
                    f"the service on {self.path} sent a line longer than {MAX_RESPONSE_BYTES} bytes"
                )
            )

    def _line(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            raise ProtocolError(
                f"the service on {self.path} sent a line that is not JSON"
            ) from None
        if not isinstance(message, dict):
            raise ProtocolError(f"the service on {self.path} sent a non-object line")
        if "event" in message:
            event = message["event"]
            if not isinstance(event, dict):
                raise ProtocolError(
                    f"the service on {self.path} sent an event that is not an object"
                )
            if event.get("type") == "dropped":
                raise Dropped(self.path, str(event.get("reason")))
            if self.connected:
                self._event(event)
            else:
                self._early.append(event)  # before the subscription's answer: after it
            return
        number = message.get("id")
        asked = self._asked.pop(number, None) if isinstance(number, int) else None
        if asked is None:
            if message.get("ok") is False and message.get("id") is None:
                error = message.get("error") or {}
                raise RequestError(str(error.get("code")), str(error.get("message")))
            return  # not an answer to a request of this connection
        what, timer = asked
        timer.cancel()
        if message.get("ok") is not True:
            error = message.get("error")
            if not isinstance(error, dict):
                raise ProtocolError(f"the service on {self.path} sent an error without details")
            raise RequestError(str(error.get("code")), str(error.get("message")))
        result = message.get("result")
        if what == "subscribe":
            if not isinstance(result, dict):
                raise ProtocolError(f"the service on {self.path} answered subscribe without status")
            self._subscribed(self._status(result.get("status")))
        elif what == "status":
            self.sink.on_status(self._status(result))
            if self._again:
                self._again = False
                self._ask("status")
        else:
            self.sink.on_interval(self._status(result))

    def _status(self, data: object) -> Status:
        try:
            return Status.model_validate(data)
        except ValidationError as exc:
            raise ProtocolError(
                f"the service on {self.path} sent a status that does not fit the API's models: "
                f"{exc.errors()[0].get('msg', exc)}"
            ) from None

    def _subscribed(self, status: Status) -> None:
        self.connected = True
        self.connections += 1
        self._backoff.reset()
        if self._outage:
            log.info(
                "the table's service answers again on %s (after %d attempts)",
                self.socket_path,
                self._outage,
            )
        else:
            log.info("following the table's service on %s", self.socket_path)
        self._outage = 0
        self._said = ""
        self.sink.core_up(status)
        if self.refresh_s is not None:
            self._refresh_at = time.monotonic() + self.refresh_s
            self._refresh = self._loop.call_later(self.refresh_s, self._interval)
        early, self._early = self._early, []
        for event in early:
            if self._sock is None:
                break
            self._event(event)

    def _event(self, raw: dict[str, Any]) -> None:
        try:
            event = parse_event(raw)
        except ValidationError as exc:
            log.warning(
                "the table's service sent an event this program does not know (%s): skipped; "
                "are it and the service of the same version?",
                exc.errors()[0].get("msg", exc),
            )
            return
        if isinstance(event, DroppedNotice):
            return  # handled before (the connection ends)
        self.sink.on_event(event, raw)
        if event.type in STATUS_EVENTS and self._sock is not None:
            if self._asking("status"):
                self._again = True  # its answer may predate this event: once more after it
            else:
                self._ask("status")

    def _interval(self) -> None:
        """The status again, ``refresh_s`` after the last time (on a fixed schedule, whatever
        happened in between)."""
        if self._sock is None or self.refresh_s is None:
            return
        now = time.monotonic()
        # the next one on the schedule; after a long stall, from now
        self._refresh_at = max(self._refresh_at + self.refresh_s, now + self.refresh_s / 2)
        self._refresh = self._loop.call_later(self._refresh_at - now, self._interval)
        if not self._asking("interval"):
            self._ask("interval")

    def _unanswered(self, number: int) -> None:
        """A request unanswered for REQUEST_TIMEOUT_S: the subscription's ends the connection;
        a status's is given up (its answer, if it comes, is ignored) while the events go on."""
        asked = self._asked.pop(number, None)
        if asked is None:
            return
        what, _ = asked
        if what == "subscribe":
            self._failed(
                ServiceTimeout(
                    f"the mjtable service on {self.path} did not answer within "
                    f"{REQUEST_TIMEOUT_S:g} s"
                )
            )
            return
        log.warning(
            "the mjtable service on %s did not answer a status request within %g s; the floor "
            "keeps the status it has until the next one",
            self.socket_path,
            REQUEST_TIMEOUT_S,
        )
        if what == "status" and self._again:
            self._again = False
            self._ask("status")

    def _close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            self._loop.unregister(sock)
            sock.close()
        for _, timer in self._asked.values():
            timer.cancel()
        if self._refresh is not None:
            self._refresh.cancel()
        self._asked.clear()
        self._inbox.clear()
        self._outbox.clear()
        self._early.clear()
        self._again = False

    def _failed(self, exc: ClientError) -> None:
        """The connection ended or never began: tell the sink, say why, try again later."""
        self._close()
        self._outage += 1
        reason = str(exc)
        if self.connected:
            self.connected = False
            self.sink.core_down(reason)
        if self._stopped:
            return
        delay = self._backoff.next()
        # each new fault in words; the same one again only now and then
        quiet = reason == self._said and self._outage % 30 != 0
        self._said = reason
        log.log(
            logging.DEBUG if quiet else logging.WARNING, "%s; trying again in %.1f s", reason, delay
        )
        self._retry = self._loop.call_later(delay, self._connect)


def _lost(path: Path, exc: OSError) -> ConnectionLost:
    return ConnectionLost(
        f"lost the connection to the mjtable service on {path}: {exc.strerror or exc}"
    )


def _connect_error(path: Path, exc: OSError) -> ClientError:
    """The API client's own words for a connection that failed: it connects once more, which
    for these failures (no socket there, refused, no permission) fails at once, saying what
    to check (the service, the path, the group to join)."""
    try:
        with ApiClient(path, timeout=WORDS_TIMEOUT_S):
            pass
    except ClientError as words:
        return words
    return ClientError(f"cannot connect to {path}: {exc.strerror or exc}")  # there now: again
