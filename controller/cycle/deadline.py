"""One timer thread for the controller's phase deadlines.

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

log = logging.getLogger("mjtable.controller")


class DeadlineTimer:
    """At most one armed deadline; ``arm`` replaces it, ``cancel`` drops it."""

    def __init__(self, name: str = "deadline") -> None:
        self._cond = threading.Condition()
        self._due: float | None = None
        self._callback: Callable[[], None] | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

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
