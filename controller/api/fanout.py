"""The table's events, from the controller's thread to each subscriber its role lets see.

The controller calls :meth:`EventQueue.push` from its own thread: an append to a deque, never
a wait. The server's thread takes the events in order (:meth:`EventQueue.take`) and writes each
one once as a line (:func:`event_line`), which every subscriber whose role sees it
(controller/api/roles.py) receives: the status socket's subscribers never get ``dealt``.
"""

from __future__ import annotations

import collections
import logging

from controller.api.messages import DroppedNotice
from controller.api.roles import ROLES, Role, sees
from controller.cycle.reports import Event

log = logging.getLogger("mjtable.api")


class EventQueue:
    """At most ``max_pending`` events waiting for the server's thread; past that it stops
    keeping them and says so once (:meth:`take`), so that every subscriber is dropped rather
    than sent a stream with a hole."""

    def __init__(self, max_pending: int) -> None:
        self.max_pending = max_pending
        self._pending: collections.deque[Event] = collections.deque()
        self._overflow = False

    def push(self, event: Event) -> None:
        """From any thread; never blocks."""
        if len(self._pending) >= self.max_pending:
            self._overflow = True
        else:
            self._pending.append(event)

    def take(self) -> tuple[bool, list[Event]]:
        """(whether events were lost since the last take, the events waiting, oldest first)."""
        overflow = self._overflow
        if overflow:
            self._overflow = False
            self._pending.clear()
        events = []
        while self._pending:
            events.append(self._pending.popleft())
        return overflow, events


def event_line(event: Event | DroppedNotice) -> bytes:
    """The wire line of an event: ``{"event": {...}}`` and a newline."""
    return b'{"event":' + event.model_dump_json().encode() + b"}\n"


def lines_by_role(event: Event) -> dict[Role, bytes] | None:
    """The line each role receives for ``event`` (a role that does not see it is absent);
    None, logged, when the event cannot be written."""
    try:
        line = event_line(event)
    except Exception:
        log.exception("cannot serialise event %r", event)
        return None
    return {role: line for role in ROLES if sees(role, event)}
