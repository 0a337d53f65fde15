"""The API's nesting limit on a request line: the same answer under every supported Python.

CPython 3.11 and 3.12 raise RecursionError on JSON nested 5,000 deep, 3.13 decodes it; the
limit is checked on the raw bytes (controller/api/jsonshape.py), so the API answers
``bad_json`` on each (tests/api/test_server.py sends such a line to the real server, and
`make test` runs the suite under each supported Python).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from controller.api.jsonshape import MAX_DEPTH, MAX_VALUES, check_depth, check_shape, shape


def arrays(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def objects(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


@pytest.mark.parametrize("nest", [arrays, objects])
def test_the_limit_is_accepted_and_one_more_is_refused(nest: Callable[[int], bytes]) -> None:
    line = nest(MAX_DEPTH)
    check_shape(line)
    json.loads(line)
    with pytest.raises(ValueError, match=f"nested more than {MAX_DEPTH} deep"):
        check_shape(nest(MAX_DEPTH + 1))


def test_mixed_nesting_counts_both() -> None:
    half = MAX_DEPTH // 2
    check_shape(b'{"a":[' * half + b"1" + b"]}" * half)
    with pytest.raises(ValueError):
        check_shape(b'{"a":[' * half + b"[1]" + b"]}" * half)


def test_depth_is_the_deepest_point_not_the_number_of_brackets() -> None:
    line = json.dumps({"id": 1, "op": "status", "many": [[1]] * 10_000}).encode()
    check_depth(shape(line))
    few = json.dumps({"id": 1, "op": "status", "many": [[1]] * (MAX_VALUES // 4)}).encode()
    check_shape(few)
    with pytest.raises(ValueError, match=f"at most {MAX_VALUES} values"):
        check_shape(line)


def test_brackets_inside_strings_do_not_count() -> None:
    for text in ["[" * 1000, '\\"[' * 500, '"' * 10 + "{" * 500, "\\" * 7 + "[" * 500]:
        line = json.dumps({"id": text, "op": "status", "pad": text + "]" * 3}).encode()
        assert line.count(b"[") + line.count(b"{") > MAX_DEPTH
        check_shape(line)


def test_a_string_ending_in_an_escaped_backslash_closes() -> None:
    # "a\\" is a whole string: the brackets after it are structure and count.
    prefix = b'{"id": "a\\\\", "x": '
    check_shape(prefix + arrays(MAX_DEPTH - 1) + b"}")
    with pytest.raises(ValueError):
        check_shape(prefix + arrays(MAX_DEPTH) + b"}")


@pytest.mark.parametrize("depth", [5_000, 200_000])
def test_very_deep_lines_are_refused_without_recursion(depth: int) -> None:
    with pytest.raises(ValueError):
        check_shape(arrays(depth))
    with pytest.raises(ValueError, match=f"nested more than {MAX_DEPTH} deep"):
        check_depth(shape(arrays(depth)))


@pytest.mark.parametrize(
    "line",
    [
        b'["' + b'\\"' * 1000 + b'"]',  # escaped quotes: still one string
        b'["' + b"\\\\" * 1000 + b'", ' + b"[" * 10 + b"]" * 10 + b"]",  # escaped backslashes
        b'["\\\\\\"[[[["]',  # \\ then \" inside one string
    ],
)
def test_escapes_are_read_as_json_reads_them(line: bytes) -> None:
    value = json.loads(line)
    assert shape(line).count(b'"') == 2 * sum(isinstance(v, str) for v in value)
