"""The board's own health: how long each pass of its main loop takes, and its heap.

The main loop (app.py) times every pass with ``ticks_us()`` (MicroPython's microsecond ticks;
CPython's performance counter in the simulator) and gives it to ``LoopStats.record``, which
allocates nothing: a pass falls in a bucket of a histogram made once (100 us wide below 6.4 ms,
400 us wide up to 32 ms, one bucket above), and the count of passes, their total time and the
longest are kept beside it. SENSORS asks for them with SENSORS_VITALS (protocol 2.2,
BoardVitals at the end of SENSOR_DATA): the median and the 99th percentile are worked out from
the histogram then, each as the upper bound of its bucket. ``heap()`` counts the interpreter's
heap, after a collection when asked for, and times that collection: MicroPython's
``gc.mem_free()`` walks the whole heap, so it runs only when asked, never in a pass of the
loop.
"""

import gc
from array import array

from firmware.compat import TYPE_CHECKING, const, ticks_us
from firmware.hal import ticks_diff
from protocol.messages import HEAP_UNKNOWN

if TYPE_CHECKING:
    from collections.abc import Callable

#: the histogram: FINE buckets of FINE_US, then COARSE buckets of COARSE_US, then one above
FINE = const(64)
FINE_US = const(100)
COARSE = const(64)
COARSE_US = const(400)
BUCKETS = const(129)
#: where the coarse buckets start, and where the last one (everything longer) starts
COARSE_FROM_US = const(6400)
ABOVE_US = const(32000)

#: MicroPython's heap counters (absent on CPython)
_mem_free: "Callable[[], int] | None" = getattr(gc, "mem_free", None)
_mem_alloc: "Callable[[], int] | None" = getattr(gc, "mem_alloc", None)


def bucket(us: int) -> int:
    """The histogram bucket of a pass of ``us`` microseconds."""
    if us < COARSE_FROM_US:
        return us // FINE_US if us > 0 else 0
    if us >= ABOVE_US:
        return BUCKETS - 1
    return FINE + (us - COARSE_FROM_US) // COARSE_US


def bucket_top(index: int) -> int:
    """The upper bound (us) of a bucket below the last one."""
    if index < FINE:
        return (index + 1) * FINE_US
    return COARSE_FROM_US + (index - FINE + 1) * COARSE_US


class LoopStats:
    """The main loop's passes since ``since`` (the board's ms ticks): count, total, longest,
    and their histogram."""

    def __init__(self, now: int) -> None:
        self.hist = array("I", [0] * BUCKETS)
        self.since = now
        self.passes = 0
        self.busy_ms = 0
        self._busy_us = 0  # the part of a millisecond not yet in busy_ms
        self.max_us = 0

    def restart(self, now: int) -> None:
        """Count again from ``now``."""
        hist = self.hist
        for i in range(BUCKETS):
            hist[i] = 0
        self.since = now
        self.passes = 0
        self.busy_ms = 0
        self._busy_us = 0
        self.max_us = 0

    def record(self, us: int) -> None:
        """One pass of ``us`` microseconds (allocates nothing)."""
        if us < 0:
            us = 0
        self.hist[bucket(us)] += 1
        self.passes += 1
        rest = self._busy_us + us
        if rest >= 1000:
            self.busy_ms += rest // 1000
            rest %= 1000
        self._busy_us = rest
        if us > self.max_us:
            self.max_us = us

    def percentile(self, per_mille: int) -> int:
        """An upper bound (us) of the pass at ``per_mille``/1000 of the passes, shortest first:
        the top of its bucket, or the longest pass when that is less (or the bucket is the
        last); 0 without passes."""
        n = self.passes
        if n == 0:
            return 0
        rank = (n * per_mille + 999) // 1000
        if rank < 1:
            rank = 1
        hist = self.hist
        seen = 0
        for i in range(BUCKETS - 1):
            seen += hist[i]
            if seen >= rank:
                return min(bucket_top(i), self.max_us)
        return self.max_us


def heap(collect: bool) -> "tuple[int, int, int]":
    """The heap's free bytes and size (HEAP_UNKNOWN each where the interpreter does not say),
    and how long the collection took (us; 0 when not asked for or not possible): a collection
    first when ``collect``."""
    spent = 0
    if collect and _mem_free is not None:
        t = ticks_us()
        gc.collect()
        spent = ticks_diff(ticks_us(), t)
    if _mem_free is None or _mem_alloc is None:
        return HEAP_UNKNOWN, HEAP_UNKNOWN, spent
    free = _mem_free()
    return free, free + _mem_alloc(), spent
