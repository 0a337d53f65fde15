"""What the gateway knows of its table, for readers inside its process.

The gateway keeps the latest status and the recent faults here; a reader in the same process
(the technicians' web page, to come) asks :class:`TableView` and never touches the MQTT or
API connections. Thread-safe: the core's thread writes, any thread reads.
"""

from __future__ import annotations

import collections
import threading
from dataclasses import dataclass

from controller.cycle.reports import FaultClearedEvent, FaultEvent, Status

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
    broker_connected: bool
    faults: tuple[FaultRecord, ...]


class TableView:
    def __init__(self, history: int = FAULT_HISTORY) -> None:
        self._lock = threading.Lock()
        self._status: Status | None = None
        self._faults: collections.deque[FaultRecord] = collections.deque(maxlen=history)
        self._core = False
        self._broker = False

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
            return Snapshot(self._status, self._core, self._broker, tuple(self._faults))

    # -- the gateway

    def set_status(self, status: Status) -> None:
        with self._lock:
            self._status = status

    def set_core(self, connected: bool) -> None:
        with self._lock:
            self._core = connected

    def set_broker(self, connected: bool) -> None:
        with self._lock:
            self._broker = connected

    def fault(self, event: FaultEvent) -> None:
        with self._lock:
            self._faults.append(FaultRecord(event))

    def cleared(self, event: FaultClearedEvent) -> None:
        with self._lock:
            for index in range(len(self._faults) - 1, -1, -1):
                record = self._faults[index]
                if record.cleared_at is not None:
                    break
                self._faults[index] = FaultRecord(record.fault, event.at)
