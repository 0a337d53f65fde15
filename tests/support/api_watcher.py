"""A real API client subscribed to a service's events, in a thread, waited on with deadlines."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from controller.api.client import ApiClient


class Watcher:
    """A subscribed API client in a thread; ``events`` is every event it received."""

    def __init__(self, path: str) -> None:
        self.client = ApiClient(path)
        self.client.subscribe()
        self.events: list[Any] = []
        self.cond = threading.Condition()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            for event in self.client.events():
                with self.cond:
                    self.events.append(event)
                    self.cond.notify_all()
        except Exception:  # the stream ends when the service stops or the test closes it
            return

    def mark(self) -> int:
        """Index of the next event: wait(..., since=mark) ignores what came before."""
        with self.cond:
            return len(self.events)

    def wait(self, predicate: Callable[[Any], bool], timeout: float = 60, since: int = 0) -> Any:
        """The first event from ``since`` on that satisfies ``predicate``, waited for."""
        with self.cond:
            ok = self.cond.wait_for(
                lambda: any(predicate(e) for e in self.events[since:]), timeout=timeout
            )
            assert ok, f"no matching event in {[e.type for e in self.events[since:]]}"
            return next(e for e in self.events[since:] if predicate(e))

    def of(self, kind: str) -> list[Any]:
        """Every event of type ``kind`` received so far."""
        with self.cond:
            return [e for e in self.events if e.type == kind]

    def close(self) -> None:
        self.client.close()
