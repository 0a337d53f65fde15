"""Helpers of the IoLoop's tests: the open descriptors, the select timeouts, the next turn."""

from __future__ import annotations

import os
import selectors
import threading

import pytest

from drivers.ioloop import IoLoop

WAIT = 10.0


def fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def record_selects(loop: IoLoop, monkeypatch: pytest.MonkeyPatch) -> list[float | None]:
    """The timeout of each ``select`` the loop makes, as it makes it (before the loop starts:
    its thread takes the selector's method then). None: it sleeps until a file or a wake-up."""
    timeouts: list[float | None] = []
    select = loop._selector.select

    def recorded(timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        timeouts.append(timeout)
        return select(timeout)

    monkeypatch.setattr(loop._selector, "select", recorded)
    return timeouts


def next_turn(loop: IoLoop) -> None:
    """Until the loop has been through ``select`` once more and done all it found: a call
    queued by a queued call waits for the next wake-up, and runs after the callbacks of the
    files that select found ready."""
    done = threading.Event()
    loop.call_soon(loop.call_soon, done.set)
    assert done.wait(WAIT)


class AskedLock:
    """A lock that counts how often it was asked for (with ``with``)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.asked = 0

    def __enter__(self) -> AskedLock:
        self.asked += 1
        self.lock.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.lock.release()
