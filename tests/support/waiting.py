"""Waiting for an event with a deadline, never for a fixed time."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: how often the condition is asked again while it is false (seconds)
POLL = 0.01


def wait_for(predicate: Callable[[], T], timeout: float, what: str | Callable[[], object]) -> T:
    """The first true value of ``predicate()``, asked until ``timeout`` seconds have passed;
    then the test fails, naming ``what`` it waited for (a callable: asked only then, e.g. for
    the end of a log)."""
    end = time.monotonic() + timeout
    while not (value := predicate()):
        if time.monotonic() > end:
            said = what() if callable(what) else what
            raise AssertionError(f"waited {timeout:g} s in vain for {said}")
        time.sleep(POLL)
    return value
