"""The API server over real Unix sockets: every op, events, bad input."""

from __future__ import annotations

import json
import socket
import threading

import pytest

from controller.api.server import ApiServer
from controller.cycle.reports import ProgressEvent
from tests.api.server_support import error, ok
from tests.support.fake_controller import WAIT, FakeTable, RawConn, now

# -- every op ----------------------------------------------------------------------


def test_status(conn: RawConn) -> None:
    result = ok(conn.ask({"id": 1, "op": "status"}), 1)
    assert isinstance(result, dict)
    assert result["state"] == "idle"
    assert result["table"] == "7"
    assert result["allowed"] == ["shuffle", "stop"]


def test_commands_reach_the_table_as_api_requests(conn: RawConn, table: FakeTable) -> None:
    result = ok(conn.ask({"id": "a", "op": "shuffle"}), "a")
    assert result == {
        "action": "shuffle",
        "accepted": True,
        "message": "shuffle accepted",
        "state": "ready",
        "cycle": None,
    }
    result = ok(conn.ask({"id": "b", "op": "deal"}), "b")
    assert isinstance(result, dict) and result["accepted"] and result["cycle"] == "c-000001"
    refused = ok(conn.ask({"id": "c", "op": "clear_fault"}), "c")
    assert isinstance(refused, dict) and refused["accepted"] is False
    assert "makes no sense" in refused["message"]
    stopped = ok(conn.ask({"id": "d", "op": "stop"}), "d")
    assert isinstance(stopped, dict) and stopped["state"] == "stopped"
    assert table.requests == [
        ("shuffle", "api"),
        ("deal", "api"),
        ("clear_fault", "api"),
        ("stop", "api"),
    ]


def test_clear_fault_after_a_fault(conn: RawConn, table: FakeTable) -> None:
    table.trip()
    status = ok(conn.ask({"id": 1, "op": "status"}), 1)
    assert isinstance(status, dict)
    assert status["fault"]["code"] == "SORT_TIMEOUT"
    result = ok(conn.ask({"id": 2, "op": "clear_fault"}), 2)
    assert isinstance(result, dict) and result["accepted"] and result["state"] == "idle"


def test_last_dealt_and_get_cycle(conn: RawConn) -> None:
    assert ok(conn.ask({"id": 1, "op": "last_dealt"}), 1) is None
    ok(conn.ask({"id": 2, "op": "shuffle"}), 2)
    ok(conn.ask({"id": 3, "op": "deal"}), 3)
    dealt = ok(conn.ask({"id": 4, "op": "last_dealt"}), 4)
    assert isinstance(dealt, dict) and dealt["cycle_id"] == "c-000001"
    assert ok(conn.ask({"id": 5, "op": "get_cycle", "cycle": "c-000001"}), 5) == dealt
    message = error(
        conn.ask({"id": 6, "op": "get_cycle", "cycle": "c-999999"}), "not_found", request_id=6
    )
    assert "c-999999" in message


@pytest.mark.parametrize("request_id", [7, -3, 2.5, "x-1", True, False, None, 10**30])
def test_ids_are_echoed_unchanged(conn: RawConn, request_id: object) -> None:
    answer = conn.ask({"id": request_id, "op": "status"})
    assert answer["ok"] is True
    assert answer["id"] == request_id and type(answer["id"]) is type(request_id)


def test_pipelined_requests_are_answered_in_order(conn: RawConn) -> None:
    conn.send(b'{"id":1,"op":"status"}\n\n{"id":2,"op":"last_dealt"}\r\n{"id":3,"op":"status"}\n')
    assert [conn.line()["id"] for _ in range(3)] == [1, 2, 3]  # type: ignore[index]


def test_half_closed_client_gets_its_answer_then_end_of_stream(server: ApiServer) -> None:
    c = RawConn(server.path)
    c.send(b'{"id":1,"op":"status"}')  # no newline: the end of stream ends the line
    c.sock.shutdown(socket.SHUT_WR)
    assert ok(c.line(), 1)  # type: ignore[arg-type]
    assert c.line() is None
    c.close()


# -- events ------------------------------------------------------------------------


def test_subscribe_streams_events_in_order(server: ApiServer, table: FakeTable) -> None:
    watcher = RawConn(server.path)
    result = ok(watcher.ask({"id": "s", "op": "subscribe"}), "s")
    assert isinstance(result, dict)
    assert result["subscribed"] is True and result["status"]["state"] == "idle"
    actor = RawConn(server.path)
    ok(actor.ask({"id": 1, "op": "shuffle"}), 1)
    ok(actor.ask({"id": 2, "op": "deal"}), 2)
    types = []
    for _ in range(5):
        line = watcher.line()
        assert line is not None and set(line) == {"event"}
        types.append(line["event"]["type"])
        if line["event"]["type"] == "dealt":
            assert line["event"]["dealt"]["cycle_id"] == "c-000001"
            assert line["event"]["cycle"] == "c-000001"
    assert types == ["phase", "progress", "throw", "dealt", "phase"]
    # The actor did not subscribe: its next line is its answer, not an event.
    ok(actor.ask({"id": 3, "op": "status"}), 3)
    watcher.close()
    actor.close()


def test_unsubscribe_stops_the_stream(server: ApiServer) -> None:
    watcher = RawConn(server.path)
    ok(watcher.ask({"id": 1, "op": "subscribe"}), 1)
    result = ok(watcher.ask({"id": 2, "op": "unsubscribe"}), 2)
    assert result == {"subscribed": False, "status": None}
    actor = RawConn(server.path)
    ok(actor.ask({"id": 1, "op": "shuffle"}), 1)
    # The shuffle's events were delivered before the server read this request;
    # had the watcher still been subscribed they would come first.
    ok(watcher.ask({"id": 3, "op": "status"}), 3)
    watcher.close()
    actor.close()


def test_events_from_another_thread_reach_every_subscriber(
    server: ApiServer, table: FakeTable
) -> None:
    watchers = [RawConn(server.path) for _ in range(5)]
    for i, w in enumerate(watchers):
        ok(w.ask({"id": i, "op": "subscribe"}), i)

    def emit_all() -> None:
        for p in range(101):
            table.emit(ProgressEvent(at=now(), phase="shuffle", percent=p))

    emitter = threading.Thread(target=emit_all)
    emitter.start()
    emitter.join(WAIT)
    assert not emitter.is_alive()
    for w in watchers:
        percents = [w.line()["event"]["percent"] for _ in range(101)]  # type: ignore[index]
        assert percents == list(range(101))
        w.close()


def test_event_lines_are_json_models(server: ApiServer, table: FakeTable) -> None:
    w = RawConn(server.path)
    ok(w.ask({"id": 1, "op": "subscribe"}), 1)
    table.trip()
    fault = w.line()
    assert fault is not None
    assert fault["event"]["type"] == "fault"
    assert json.dumps(fault["event"], sort_keys=True) == json.dumps(
        table.status().fault.model_dump(mode="json"),  # type: ignore[union-attr]
        sort_keys=True,
    )
    w.close()


# -- bad input ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "code", "request_id", "words"),
    [
        (b"{not json", "bad_json", None, "not valid JSON"),
        (b"\xff\xfe\x00", "bad_json", None, "not valid JSON"),
        (b"[" * 100 + b"]" * 100, "bad_json", None, "not valid JSON"),
        (b"[" * 5000 + b"]" * 5000, "bad_request", None, "at most 1024 values"),
        (b"[1, 2]", "bad_request", None, "JSON object"),
        (b'"status"', "bad_request", None, "JSON object"),
        (b'{"id": {"a": 1}, "op": "status"}', "bad_request", None, "id:"),
        (b'{"id": 5}', "bad_request", 5, "op: missing"),
        (b'{"id": 5, "op": "fly"}', "unknown_op", 5, 'unknown operation "fly"'),
        (b'{"id": 5, "op": 3}', "unknown_op", 5, "op:"),
        (b'{"id": 5, "op": "get_cycle"}', "bad_request", 5, "cycle: missing"),
        (b'{"id": 5, "op": "get_cycle", "cycle": ""}', "bad_request", 5, "cycle:"),
        (b'{"id": 5, "op": "get_cycle", "cycle": 12}', "bad_request", 5, "cycle:"),
        (b'{"id": 5, "op": "status", "colour": "red"}', "bad_request", 5, "colour: unknown"),
        (b'{"id": 5, "op": "set_leader"}', "bad_request", 5, "give the seat that leads, the game"),
    ],
)
def test_bad_requests_get_an_error_and_the_connection_stays_usable(
    conn: RawConn, line: bytes, code: str, request_id: object, words: str
) -> None:
    conn.send(line + b"\n")
    answer = conn.line()
    assert answer is not None
    message = error(answer, code, request_id)
    assert words in message
    ok(conn.ask({"id": "after", "op": "status"}), "after")


@pytest.mark.parametrize("with_newline", [False, True])
def test_over_long_line_is_refused_and_the_client_dropped(
    server: ApiServer, with_newline: bool
) -> None:
    bystander = RawConn(server.path)
    c = RawConn(server.path)
    c.send(
        b'{"id": 1, "op": "status", "pad": "' + b"x" * 70_000 + (b'"}\n' if with_newline else b"")
    )
    answer = c.line()
    assert answer is not None
    message = error(answer, "line_too_long")
    assert "65536" in message
    assert c.line() is None
    c.close()
    ok(bystander.ask({"id": 1, "op": "status"}), 1)
    bystander.close()


def test_line_just_under_the_limit_is_read(conn: RawConn) -> None:
    prefix = b'{"id": 1, "op": "status", "pad": "'
    line = prefix + b"x" * (65536 - len(prefix) - 2) + b'"}'
    assert len(line) == 65536
    conn.send(line + b"\n")
    message = error(conn.line(), "bad_request", 1)  # type: ignore[arg-type]
    assert "pad: unknown field" in message


def test_table_exception_becomes_an_internal_error(conn: RawConn, table: FakeTable) -> None:
    def broken(cycle_id: str) -> None:
        raise RuntimeError("disk on fire")

    table.get_cycle = broken  # type: ignore[method-assign]
    answer = conn.ask({"id": 9, "op": "get_cycle", "cycle": "c-1"})
    assert "disk on fire" in error(answer, "internal", 9)
    ok(conn.ask({"id": 10, "op": "status"}), 10)
