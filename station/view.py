"""What the station knows of its table, for readers inside its process.

The station keeps the latest status (and when it came), whether it follows the table, the
recent faults and the picture of the last deal here; a reader in the
same process (the technicians' page, station/web/) asks :class:`TableView` and never touches
the MQTT or API connections. Thread-safe: the station's loop writes, any thread reads;
``version`` grows with every change, and :meth:`TableView.listen` tells a reader of each
change as it happens, so that it follows the changes rather than asking again and again.
"""

from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from controller.api.messages import (
    ButtonEvent,
    FaultClearedEvent,
    FaultEvent,
    Status,
    ThrowWantedEvent,
)
from station.picture import Picture

#: Faults kept, newest last.
FAULT_HISTORY = 100


@dataclass(frozen=True)
class FaultRecord:
    """A fault and, once cleared, when."""

    fault: FaultEvent
    cleared_at: str | None = None


@dataclass(frozen=True)
class Snapshot:
    status: Status | None
    core_connected: bool
    faults: tuple[FaultRecord, ...]
    status_at: float | None = None  # time.monotonic() when the status came
    picture: Picture | None = None
    version: int = 0
    #: the last press the table refused, with its reason (None once a press is accepted)
    refused: ButtonEvent | None = None
    #: the throw the rules ask the dealer to make by hand and enter (``dice.source =
    #: "dealer"``), until it is entered, the deal ends or a fault stops it
    wanted: ThrowWantedEvent | None = None


class TableView:
    def __init__(self, history: int = FAULT_HISTORY) -> None:
        self._lock = threading.Lock()
        self._status: Status | None = None
        self._faults: collections.deque[FaultRecord] = collections.deque(maxlen=history)
        self._core = False
        self._status_at: float | None = None
        self._picture: Picture | None = None
        self._refused: ButtonEvent | None = None
        self._wanted: ThrowWantedEvent | None = None
        self._version = 0
        self._listeners: tuple[Callable[[], object], ...] = ()

    def listen(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Call ``callback()`` after every change, in the writer's thread and outside the
        view's lock (it must not block: hand the news to the reader's own thread). Returns
        what stops it."""
        with self._lock:
            self._listeners = (*self._listeners, callback)

        def remove() -> None:
            with self._lock:
                self._listeners = tuple(c for c in self._listeners if c is not callback)

        return remove

    def _changed(self) -> None:
        for callback in self._listeners:
            callback()

    # -- readers

    def status(self) -> Status | None:
        with self._lock:
            return self._status

    def faults(self) -> list[FaultRecord]:
        """The recent faults, oldest first."""
        with self._lock:
            return list(self._faults)

    def snapshot(self) -> Snapshot:
        with self._lock:
            return Snapshot(
                self._status,
                self._core,
                tuple(self._faults),
                self._status_at,
                self._picture,
                self._version,
                self._refused,
                self._wanted,
            )

    @property
    def version(self) -> int:
        with self._lock:
            return self._version

    # -- the station's loop

    def set_status(self, status: Status) -> None:
        with self._lock:
            self._status = status
            self._status_at = time.monotonic()
            self._version += 1
        self._changed()

    def set_core(self, connected: bool) -> None:
        with self._lock:
            self._core = connected
            self._version += 1
        self._changed()

    def set_picture(self, picture: Picture) -> None:
        with self._lock:
            self._picture = picture
            self._version += 1
        self._changed()

    def pressed(self, event: ButtonEvent) -> None:
        """A press and the table's answer: a refusal is kept, with its reason, until a press
        is accepted."""
        with self._lock:
            self._refused = None if event.accepted else event
            self._version += 1
        self._changed()

    def throw_wanted(self, event: ThrowWantedEvent | None) -> None:
        """The throw the dealer is asked for; None once it is entered (or no longer wanted)."""
        with self._lock:
            if event is None and self._wanted is None:
                return
            self._wanted = event
            self._version += 1
        self._changed()

    def fault(self, event: FaultEvent) -> None:
        with self._lock:
            self._wanted = None
            self._faults.append(FaultRecord(event))
            self._version += 1
        self._changed()

    def cleared(self, event: FaultClearedEvent) -> None:
        with self._lock:
            self._version += 1
            for index in range(len(self._faults) - 1, -1, -1):
                record = self._faults[index]
                if record.cleared_at is not None:
                    break
                self._faults[index] = FaultRecord(record.fault, event.at)
        self._changed()
