"""The controller's phase deadlines: how long each may last, and the one timer thread.

``Deadlines`` holds the seconds of each deadline; its defaults (``DEFAULT_DEADLINES``) are
written here once, and the service's configuration (``[deadlines]``) takes them from here.
Which state each deadline bounds is in the state table (controller/cycle/states.py).

A phase arms a deadline; the next phase replaces it. Creating a thread per
phase (``threading.Timer``) costs more than the rest of a cycle's bookkeeping,
so one long-lived thread sleeps on a condition until the single armed deadline
is due, then calls its callback (outside the condition's lock).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, get_args

log = logging.getLogger("mjtable.controller")

#: Boards declare a shuffle or a build that takes longer than this (seconds) a fault
#: themselves, and say which part failed.
BOARD_MOTION_LIMIT_S = 80.0
#: The controller's own deadline for shuffle and build: past the board's limit, so the
#: board reports its fault (with its code and detail) before the controller gives up.
MOTION_DEADLINE_S = BOARD_MOTION_LIMIT_S + 10.0

#: The names of the deadlines: the fields of Deadlines, the keys of ``[deadlines]``.
DeadlineName = Literal[
    "shuffle", "build", "manifest", "collect", "lift", "dice", "clear", "stop", "test"
]


@dataclass(frozen=True)
class Deadlines:
    """Seconds each phase may take before the controller declares a fault."""

    shuffle: float = MOTION_DEADLINE_S
    build: float = MOTION_DEADLINE_S
    manifest: float = 10.0
    collect: float = 30.0
    lift: float = 5.0
    dice: float = 30.0
    clear: float = 10.0
    stop: float = 5.0
    #: a technician's motor test: what it may take beyond the time it was asked to run
    test: float = 5.0

    def scaled(self, factor: float) -> Deadlines:
        """Each deadline ``factor`` times as long: for a board whose clock runs slower than real
        time (the emulated chip; ``[board] wait_factor``)."""
        return Deadlines(**{name: getattr(self, name) * factor for name in DEADLINE_NAMES})

    def seconds(self, name: DeadlineName) -> float:
        """The seconds of the deadline ``name``."""
        value: float = getattr(self, name)
        return value


#: Every deadline's name, in the order of the fields.
DEADLINE_NAMES: tuple[DeadlineName, ...] = get_args(DeadlineName)

#: The defaults, for the service's configuration and the docs.
DEFAULT_DEADLINES = Deadlines()


class DeadlineTimer:
    """At most one armed deadline; ``arm`` replaces it, ``cancel`` drops it."""

    def __init__(self, name: str = "deadline") -> None:
        self._cond = threading.Condition()
        self._due: float | None = None
        self._callback: Callable[[], None] | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    @property
    def alive(self) -> bool:
        """Whether the timer's thread runs (the service's watchdog asks)."""
        return self._thread.is_alive()

    def arm(self, seconds: float, callback: Callable[[], None]) -> None:
        with self._cond:
            self._due = time.monotonic() + seconds
            self._callback = callback
            self._cond.notify()

    def cancel(self) -> None:
        with self._cond:
            self._due = None
            self._callback = None

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._due = None
            self._callback = None
            self._cond.notify()
        if threading.current_thread() is not self._thread:
            self._thread.join(5)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._closed:
                    if self._due is None:
                        self._cond.wait()
                        continue
                    remaining = self._due - time.monotonic()
                    if remaining <= 0:
                        break
                    self._cond.wait(remaining)
                if self._closed:
                    return
                callback, self._callback, self._due = self._callback, None, None
            if callback is not None:
                try:
                    callback()
                except Exception:  # the thread must outlive a failing callback
                    log.exception("a deadline callback failed")
