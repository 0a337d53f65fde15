"""Strict JSON: every line gets one answer, and no input ever puts a traceback in the log.

Duplicate keys, unpaired surrogates, NaN and infinities, overlong integers, deep nesting and
other encodings than UTF-8 are refused with bad_json (controller/api/decoding.py); a fuzz test
sends random bytes and random JSON-like lines to the real server.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.api.decoding import Refusal, decode_json, read_request
from controller.api.jsonshape import MAX_DEPTH, MAX_INT_DIGITS
from controller.api.messages import OPS, StatusRequest
from controller.api.server import ApiServer
from tests.support.fake_controller import WAIT, FakeTable, RawConn


@pytest.fixture
def quiet_log(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """The log of the test; at the end, not one traceback and not one error in it."""
    caplog.set_level(logging.DEBUG)
    yield caplog
    tracebacks = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert not tracebacks, [r.getMessage() for r in tracebacks]
    assert "Traceback" not in caplog.text


def refusal(line: bytes, role: Any = "full") -> Refusal:
    decoded = read_request(line, role)
    assert isinstance(decoded, Refusal), decoded
    return decoded


# -- what the review found ---------------------------------------------------------


def test_a_duplicate_key_is_refused_not_the_last_one_kept() -> None:
    found = refusal(b'{"op":"status","op":"shuffle"}')
    assert found.code == "bad_json" and 'duplicate key "op"' in found.message
    nested = refusal(b'{"id": 1, "op": "throw", "dice": [1], "x": {"a": 1, "a": 2}}')
    assert nested.code == "bad_json" and 'duplicate key "a"' in nested.message
    # The same key in two objects is not a duplicate.
    assert refusal(b'{"id": {"a": 1}, "op": {"a": 2}}').code == "bad_request"


@pytest.mark.parametrize(
    "line",
    [
        b'{"id": "\\ud800", "op": "status"}',
        b'{"id": "a\\udfffb", "op": "status"}',
        b'{"id": 1, "op": "get_cycle", "cycle": "\\udc00"}',
        b'{"\\ud800": 1, "op": "status"}',
        b'{"id": 1, "op": "status", "x": ["\\ude00"]}',
        b'{"id": "\\ude00\\ud83d", "op": "status"}',  # the pair in the wrong order
    ],
)
def test_an_unpaired_surrogate_is_refused(line: bytes) -> None:
    found = refusal(line)
    assert found.code == "bad_json" and "unpaired surrogate" in found.message
    found.message.encode("ascii")  # the answer itself can always be written


def test_a_surrogate_pair_is_one_character() -> None:
    decoded = read_request(b'{"id": "\\ud83d\\ude00", "op": "status"}', "full")
    assert isinstance(decoded, StatusRequest) and decoded.id == "\U0001f600"


@pytest.mark.parametrize(
    "number", [b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1e999", b"1E400", b"-2.5e308"]
)
def test_numbers_that_are_not_finite_are_refused(number: bytes) -> None:
    found = refusal(b'{"id": ' + number + b', "op": "status"}')
    assert found.code == "bad_json", found
    assert found.request_id is None


def test_tiny_and_ordinary_numbers_pass() -> None:
    for text, value in ((b"1e-999", 0.0), (b"-0.0", -0.0), (b"2.5", 2.5), (b"1e308", 1e308)):
        decoded = read_request(b'{"id": ' + text + b', "op": "status"}', "full")
        assert isinstance(decoded, StatusRequest) and decoded.id == value


def test_integers_are_bounded_whatever_the_interpreter_allows() -> None:
    assert decode_json(str(10 ** (MAX_INT_DIGITS - 1)).encode()) == 10 ** (MAX_INT_DIGITS - 1)
    assert decode_json(b"-" + b"9" * MAX_INT_DIGITS) == -(10**MAX_INT_DIGITS - 1)
    found = refusal(b'{"id": ' + b"1" * (MAX_INT_DIGITS + 1) + b', "op": "status"}')
    assert found.code == "bad_json" and f"at most {MAX_INT_DIGITS}" in found.message
    before = sys.get_int_max_str_digits()
    try:
        for limit in (0, 640):  # no limit at all, and the smallest the interpreter accepts
            sys.set_int_max_str_digits(limit)
            assert refusal(b'{"id": ' + b"7" * 5000 + b"}").code == "bad_json"
    finally:
        sys.set_int_max_str_digits(before)


def test_nesting_is_bounded_on_the_bytes() -> None:
    deep_ok = b'{"id": 1, "op": "status", "x": ' + b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1)
    assert refusal(deep_ok + b"}").code == "bad_request"  # read, then "x: unknown field"
    too_deep = b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1)
    found = refusal(too_deep)
    assert found.code == "bad_json" and f"more than {MAX_DEPTH} deep" in found.message
    # brackets inside a string do not count
    decoded = read_request(b'{"id": "' + b"[" * 500 + b'", "op": "status"}', "full")
    assert isinstance(decoded, StatusRequest)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32", "utf-8-sig", "latin-1"])
def test_only_utf8_is_read(encoding: str) -> None:
    line = '{"id": "é", "op": "status"}'.encode(encoding)
    assert refusal(line).code == "bad_json"


def test_a_line_with_extra_data_is_refused() -> None:
    assert refusal(b'{"op": "status"} {"op": "shuffle"}').code == "bad_json"


# -- over the wire: one answer each, the connection stays usable, a quiet log -----------

WIRE_CASES = [
    (b'{"id": 1, "op": "status", "op": "shuffle"}', "bad_json"),
    (b'{"id": "\\ud800", "op": "status"}', "bad_json"),
    (b'{"id": NaN, "op": "status"}', "bad_json"),
    (b'{"id": 1e999, "op": "status"}', "bad_json"),
    (b'{"id": -Infinity, "op": "status"}', "bad_json"),
    (b'{"id": ' + b"9" * 5000 + b', "op": "status"}', "bad_json"),
    (b"[" * 100 + b"]" * 100, "bad_json"),
    (b"[" * 5000 + b"]" * 5000, "bad_request"),  # more values than any request holds
    (b'{"op": "status", "x": [' + b"0," * 2000 + b"0]}", "bad_request"),
    ('{"op": "status"}'.encode("utf-16"), "bad_json"),
]


def test_each_refusal_is_one_answer_on_the_wire(
    conn: RawConn, table: FakeTable, quiet_log: pytest.LogCaptureFixture
) -> None:
    for line, code in WIRE_CASES:
        conn.send(line + b"\n")
        answer = conn.line()
        assert answer is not None and answer["ok"] is False, line[:60]
        assert answer["error"]["code"] == code and answer["id"] is None, answer
        after = conn.ask({"id": "after", "op": "status"})
        assert after["ok"] is True and after["id"] == "after"
    assert table.requests == []  # the duplicate "op": "shuffle" never ran


# -- fuzz: random bytes and JSON-like lines to the real server ---------------------

_SCALARS = st.one_of(
    st.sampled_from(
        ["null", "true", "false", "NaN", "Infinity", "-Infinity", "1e999", "-1e999", "1e-999"]
        + ["0", "-0", "2.5", "7", '"c-000001"', '"\\ud800"', '"\\udfff"', '"\\ud83d\\ude00"']
        + [json.dumps(op) for op in OPS]
    ),
    st.integers(min_value=-(10**80), max_value=10**80).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.text(max_size=12).map(json.dumps),
    # strings of letters and surrogates, paired or not (json.dumps writes them as escapes)
    st.lists(st.integers(0xD800, 0xDFFF) | st.integers(0x61, 0x7A), max_size=4).map(
        lambda codes: json.dumps("".join(map(chr, codes)))
    ),
)
_KEYS = st.one_of(
    st.sampled_from(['"id"', '"op"', '"cycle"', '"dice"', '"\\ud800"']),
    st.text(max_size=6).map(json.dumps),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(lambda items: "[" + ",".join(items) + "]"),
        st.lists(st.tuples(_KEYS, inner), max_size=4).map(
            lambda pairs: "{" + ",".join(f"{k}:{v}" for k, v in pairs) + "}"
        ),
    ),
    max_leaves=16,
)
_OPS = st.sampled_from([json.dumps(op) for op in OPS])


def _request(id_: str | None, op: str | None, extra: list[tuple[str, str]]) -> str:
    pairs = [('"id"', id_), ('"op"', op), *extra]
    return "{" + ", ".join(f"{k}: {v}" for k, v in pairs if v is not None) + "}"


#: objects shaped like requests: an id, an op, and other keys (maybe "id" or "op" again)
_REQUESTS = st.builds(
    _request,
    st.none() | _SCALARS,
    st.none() | _OPS | _VALUES,
    st.lists(st.tuples(_KEYS, _OPS | _VALUES), max_size=3),
)
_LINES = st.one_of(
    st.binary(max_size=400),
    _REQUESTS.map(str.encode),
    _VALUES.map(str.encode),
    st.integers(min_value=MAX_DEPTH - 2, max_value=MAX_DEPTH + 2).map(
        lambda n: b"[" * n + b"]" * n
    ),
    st.integers(min_value=65_530, max_value=65_600).map(lambda n: b"x" * n),
).map(lambda line: line.replace(b"\n", b" "))


def _send_all(conn: RawConn, data: bytes) -> None:
    with contextlib.suppress(OSError):  # the server may close before it read everything
        conn.send(data)


def _exchange(path: Path, lines: list[bytes]) -> None:
    """Send ``lines`` and a final status; each line must get one answer (a blank one none),
    or the connection must close after an error that says why."""
    conn = RawConn(path)
    data = b"".join(line + b"\n" for line in lines) + b'{"id":"end","op":"status"}\n'
    sender = threading.Thread(target=_send_all, args=(conn, data))
    sender.start()
    try:
        expected = sum(1 for line in lines if line.strip())
        answers: list[dict[str, Any]] = []
        while True:
            try:
                message = conn.line()
            except ConnectionResetError:  # closed with input unread: a close all the same
                message = None
            if message is None:  # closed: only after telling why
                assert answers and answers[-1]["ok"] is False, answers
                assert answers[-1]["error"]["code"] == "line_too_long", answers[-1]
                assert len(answers) <= expected
                return
            if "event" in message:
                continue
            if message.get("id") == "end" and len(answers) == expected:
                assert message["ok"] is True
                return
            answers.append(message)
            assert len(answers) <= expected, (lines, answers)
    finally:
        sender.join(WAIT)
        conn.close()


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(lines=st.lists(_LINES, min_size=1, max_size=4))
def test_fuzz_every_line_gets_one_answer_and_no_traceback(
    server: ApiServer, quiet_log: pytest.LogCaptureFixture, lines: list[bytes]
) -> None:
    _exchange(server.path, lines)
    _exchange(server.status_path, lines)
