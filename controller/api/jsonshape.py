"""A request line's shape, checked on its bytes before it is decoded, in linear time.

A request nests two or three levels deep and carries small numbers. Before the JSON decoder
sees a line, its *shape* (the line with every string's contents taken out) is checked for
what the decoder would handle badly or differently on each Python:

- arrays and objects nested deeper than :data:`MAX_DEPTH` (CPython 3.11 and 3.12 raise
  ``RecursionError`` on JSON nested 5,000 deep, 3.13 decodes it);
- an integer of more than :data:`MAX_INT_DIGITS` digits (``int()`` would refuse one of over
  4,300 digits on one Python and take it on another, and the conversion is quadratic);
- a number that would be infinite as a float (``1e999``).

Every step is a pass of the ``re`` module or a bytes method over the line (C loops, no
backtracking), so a line costs time linear in its length with a small constant whatever it
holds: a 64 KiB line is checked in well under a millisecond. A line of more than
:data:`MAX_VALUES` values is refused before it is decoded, so the decoder's Python-level work
(the duplicate-key hook, one call per object) is bounded whatever the line holds.
"""

from __future__ import annotations

import itertools
import math
import operator
import re

#: The deepest nesting of arrays and objects a request line may have.
MAX_DEPTH = 64
#: The most digits an integer in a request may have.
MAX_INT_DIGITS = 64
#: The most values a request may hold, counted as its arrays, objects, items and members
#: (each comma, colon and opening bracket outside strings): a request holds a dozen.
MAX_VALUES = 1024


class TooManyValues(ValueError):
    """A line that may be valid JSON but holds more values than any request has."""


# Inside a string, an escaped backslash and an escaped quote are the only escapes that touch a
# quote or a backslash. Blanking every ``\\`` first, then every ``\"``, reads them exactly as
# JSON does (outside strings a backslash is invalid JSON, refused by the decoder); what is left
# of a string is then a quote, no quote, and a quote.
# Possessive: an unterminated string (only the last quote can be one) is scanned once.
_STRING = re.compile(rb'"[^"]*+"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
# '[' and '{' become 2, ']' and '}' become 0: the depth after the i-th bracket is the running
# sum of those values less i.
_BRACKET_STEP = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")
# An integer token of too many digits: no digit, sign, point or exponent mark before it (so
# not a fraction or an exponent), no point or exponent after it (so not a float's mantissa).
_LONG_INT = re.compile(rb"(?<![0-9.eE+\-])-?([0-9]{%d,}+)(?![.eE])" % (MAX_INT_DIGITS + 1))
# A number that can overflow a float: a mantissa of more than MAX_INT_DIGITS digits, or an
# exponent of three digits or more (with fewer, the value is below 1e64 * 1e99).
# Each alternative starts where a number starts, so every run of digits is tried once.
_BIG_FLOAT = re.compile(
    rb"(?<![0-9.])(?:-?[0-9]++(?:\.[0-9]++)?+[eE][+\-]?+[0-9]{3,}+"
    rb"|[0-9]{%d,}+(?:\.[0-9]++)?+)" % (MAX_INT_DIGITS + 1)
)


def shape(line: bytes) -> bytes:
    """``line`` with every string's contents taken out (``"a[b"`` becomes ``""``)."""
    blanked = line.replace(b"\\\\", b"__").replace(b'\\"', b"__")
    return _STRING.sub(b'""', blanked)


def check_depth(shaped: bytes) -> None:
    """Raise ValueError when arrays and objects in ``shaped`` nest deeper than MAX_DEPTH.

    ``shaped`` is a line passed through :func:`shape`, so brackets inside strings do not
    count. A line with no more than MAX_DEPTH opening brackets cannot be too deep, so the
    common case costs two counts.
    """
    if shaped.count(b"[") + shaped.count(b"{") <= MAX_DEPTH:
        return
    steps = shaped.translate(None, _NOT_BRACKETS).translate(_BRACKET_STEP)
    depths = map(operator.sub, itertools.accumulate(steps), itertools.count(1))
    if max(depths, default=0) > MAX_DEPTH:
        raise ValueError(f"arrays and objects nested more than {MAX_DEPTH} deep")


def check_numbers(shaped: bytes) -> None:
    """Raise ValueError for an integer of more than MAX_INT_DIGITS digits, or a number
    that is infinite as a float, in a line passed through :func:`shape`."""
    long_int = _LONG_INT.search(shaped)
    if long_int is not None:
        digits = len(long_int.group(1))
        raise ValueError(f"an integer of {digits} digits (at most {MAX_INT_DIGITS})")
    for number in _BIG_FLOAT.finditer(shaped):
        if math.isinf(float(number.group())):
            text = number.group().decode("ascii")
            if len(text) > 40:
                text = text[:37] + "..."
            raise ValueError(f"the number {text} is out of range")


def check_values(shaped: bytes) -> None:
    """Raise TooManyValues when ``shaped`` holds more than MAX_VALUES values."""
    count = sum(shaped.count(mark) for mark in (b",", b":", b"[", b"{"))
    if count > MAX_VALUES:
        raise TooManyValues(
            f"a request holds at most {MAX_VALUES} values (items, members, arrays and "
            f"objects); this line holds about {count}"
        )


def check_shape(line: bytes) -> None:
    """Raise ValueError when ``line`` nests too deep or holds a number over the limits, and
    TooManyValues when it holds more values than any request; each costs at most a few
    passes over the line in C, and the decoder then has at most MAX_VALUES values to make."""
    shaped = shape(line)
    check_values(shaped)
    check_depth(shaped)
    check_numbers(shaped)
