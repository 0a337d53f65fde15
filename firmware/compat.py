"""What MicroPython has built in and CPython lacks, for the files that run on both.

``const(x)`` is ``micropython.const`` on the board (the compiler folds ``NAME = const(3)`` into
the code that uses it) and returns its argument unchanged on CPython. ``TYPE_CHECKING`` follows
protocol/: a plain module constant, False at run time, which mypy treats as true, so type-only
imports never run on the board.
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


__all__ = ["TYPE_CHECKING", "const"]
