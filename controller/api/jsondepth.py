"""The nesting limit of a request line, checked on its bytes before it is decoded.

A request nests two or three levels deep; a line nested deeper than :data:`MAX_DEPTH` is
``bad_json`` (docs/api.md). The check reads the raw line, so the answer is the same on every
supported Python whatever its recursion limit: CPython 3.11 and 3.12 raise ``RecursionError``
on JSON nested 5,000 deep, 3.13 decodes it.
"""

from __future__ import annotations

import re

#: The deepest nesting of arrays and objects a request line may have.
MAX_DEPTH = 64

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(rb"[\[\]{}]")


def check_depth(line: bytes) -> None:
    """Raise ValueError when arrays and objects in ``line`` nest deeper than MAX_DEPTH.

    Brackets inside strings do not count. A line with no more than MAX_DEPTH opening
    brackets cannot be too deep, so the common case costs two counts in C.
    """
    if line.count(b"[") + line.count(b"{") <= MAX_DEPTH:
        return
    depth = 0
    for bracket in _BRACKET.findall(_STRING.sub(b'""', line)):
        depth += 1 if bracket in b"[{" else -1
        if depth > MAX_DEPTH:
            raise ValueError(f"arrays and objects nested more than {MAX_DEPTH} deep")
