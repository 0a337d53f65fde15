"""What MicroPython has built in and CPython lacks, for the files that run on both.

``const(x)`` is ``micropython.const`` on the board (the compiler folds ``NAME = const(3)`` into
the code that uses it) and returns its argument unchanged on CPython. ``ticks_us()`` is
MicroPython's ``time.ticks_us`` (microseconds modulo 2**30, compared only through
``firmware.hal.ticks_diff``); on CPython, the performance counter taken the same way: the
processor's own time, for the main loop's timing of itself (vitals.py), never the table's.
``TYPE_CHECKING`` follows protocol/: a plain module constant, False at run time, which mypy
treats as true, so type-only imports never run on the board.
"""

TYPE_CHECKING = False

if TYPE_CHECKING:

    def const(value: int) -> int:
        return value

else:
    try:
        from micropython import const
    except ImportError:

        def const(value):
            return value


if TYPE_CHECKING:

    def ticks_us() -> int:
        return 0

else:
    try:
        from time import ticks_us
    except ImportError:
        from time import perf_counter_ns

        def ticks_us():
            return (perf_counter_ns() // 1000) & 0x3FFFFFFF


__all__ = ["TYPE_CHECKING", "const", "ticks_us"]
