"""The gateway's side of the table's API socket: subscribe, follow the events, reconnect.

A :class:`CoreWatcher` thread holds one ApiClient (controller.api.client): it subscribes
(which answers with a status), hands every event to its sink in the order received, asks for
a fresh status after each event that changes it and again every ``refresh_s`` seconds (the
gateway's ``head_interval``: the audit head it publishes is never older than that, even on a
quiet table), and when the service goes away (stopped,
restarted, the connection dropped for reading too slowly) tells the sink and connects again
with a growing delay, logging each fault in plain words. Events that happen while the
gateway is not connected are not replayed by the API: the status read on reconnection says
where the table is, and the audit head says what was recorded meanwhile.

The gateway uses the API socket it is given; once the API has roles, the status role is all
it needs (it reads, never commands).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Protocol

from pydantic import ValidationError

from controller.api.client import ApiClient, ClientError, ServiceTimeout
from controller.api.messages import DroppedNotice, Event, Status, parse_event
from gateway.backoff import Backoff

log = logging.getLogger("mjtable.gateway.core")

#: Events after which the status is read again (the others change nothing in it).
STATUS_EVENTS = frozenset({"phase", "fault", "fault_cleared", "link", "dealt"})
#: How long a read waits before the thread looks whether it is asked to stop (seconds).
IDLE_S = 1.0
#: Seconds one request to the service may take.
REQUEST_TIMEOUT_S = 10.0


class CoreSink(Protocol):
    """What the watcher tells (from its thread)."""

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
        *,
        refresh_s: float | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        self.socket_path = socket_path
        self.sink = sink
        self.refresh_s = refresh_s
        self._refresh_at = float("inf")
        self._backoff = backoff or Backoff()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._client: ApiClient | None = None
        self.connected = False
        self.connections = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="core", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        outage = 0
        said = ""
        while not self._stopping.is_set():
            client = ApiClient(self.socket_path, timeout=REQUEST_TIMEOUT_S)
            try:
                status = client.subscribe()
                self.connected = True
                self.connections += 1
                self._backoff.reset()
                if outage:
                    log.info(
                        "the table's service answers again on %s (after %d attempts)",
                        self.socket_path,
                        outage,
                    )
                else:
                    log.info("following the table's service on %s", self.socket_path)
                outage = 0
                said = ""
                self.sink.core_up(status)
                if self.refresh_s is not None:
                    self._refresh_at = time.monotonic() + self.refresh_s
                self._follow(client)
            except ClientError as exc:
                outage += 1
                reason = str(exc)
                if self.connected:
                    self.connected = False
                    self.sink.core_down(reason)
                delay = self._backoff.next()
                # each new fault in words; the same one again only now and then
                quiet = reason == said and outage % 30 != 0
                said = reason
                log.log(
                    logging.DEBUG if quiet else logging.WARNING,
                    "%s; trying again in %.1f s",
                    reason,
                    delay,
                )
                self._stopping.wait(delay)
            finally:
                client.close()
        if self.connected:
            self.connected = False
            self.sink.core_down("the gateway stops")

    def _follow(self, client: ApiClient) -> None:
        """Events until the connection ends (a ClientError) or the watcher is stopped."""
        while not self._stopping.is_set():
            try:
                for raw in client.raw_events(idle_timeout=IDLE_S):
                    self._one(client, raw)
                    self._refresh(client)
                    if self._stopping.is_set():
                        return
            except ServiceTimeout:
                self._refresh(client)  # quiet table: look at the clock and the stop flag
                continue

    def _refresh(self, client: ApiClient) -> None:
        """Read the status again once ``refresh_s`` has passed since the last time (on a
        fixed schedule, whatever happened in between; at most IDLE_S late)."""
        if self.refresh_s is None:
            return
        now = time.monotonic()
        if now < self._refresh_at:
            return
        # the next one on the schedule; after a long stall, from now
        self._refresh_at = max(self._refresh_at + self.refresh_s, now + self.refresh_s / 2)
        self.sink.on_interval(client.status())

    def _one(self, client: ApiClient, raw: dict[str, Any]) -> None:
        try:
            event = parse_event(raw)
        except ValidationError as exc:
            log.warning(
                "the table's service sent an event this gateway does not know (%s): skipped; "
                "are the gateway and the service of the same version?",
                exc.errors()[0].get("msg", exc),
            )
            return
        if isinstance(event, DroppedNotice):
            return  # the client raises Dropped before it yields one
        self.sink.on_event(event, raw)
        if event.type in STATUS_EVENTS:
            self.sink.on_status(client.status())
