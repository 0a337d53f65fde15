"""Reconnection delays: exponential with full jitter, reset by a success."""

from __future__ import annotations

import random

#: First delay after a failure, and the longest one (seconds).
FIRST_DELAY_S = 0.2
MAX_DELAY_S = 10.0


class Backoff:
    """``next()`` gives the delay before the next attempt; ``reset()`` after a success."""

    def __init__(
        self,
        first: float = FIRST_DELAY_S,
        limit: float = MAX_DELAY_S,
        rng: random.Random | None = None,
    ) -> None:
        self.first = first
        self.limit = limit
        self.failures = 0
        self._rng = rng or random.Random()

    def next(self) -> float:
        ceiling = min(self.limit, self.first * (2**self.failures))
        self.failures += 1
        return self._rng.uniform(ceiling / 2, ceiling)

    def reset(self) -> None:
        self.failures = 0
