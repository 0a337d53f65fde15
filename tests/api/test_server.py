"""The API server over real Unix sockets: every op, events, bad input, many and slow clients."""

from __future__ import annotations

import grp
import json
import os
import socket
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from controller.api.server import ApiServer, ApiServerError, Limits
from controller.cycle.reports import DealtEvent, ProgressEvent
from tests.support.fake_controller import WAIT, FakeTable, RawConn, dealt_state, now
from tests.support.waiting import wait_for


def ok(answer: dict[str, Any], request_id: object) -> object:
    assert answer["id"] == request_id, answer
    assert answer["ok"] is True, answer
    return answer["result"]


def error(answer: dict[str, Any], code: str, request_id: object = None) -> str:
    assert answer["ok"] is False, answer
    assert answer["id"] == request_id, answer
    assert answer["error"]["code"] == code, answer
    message = answer["error"]["message"]
    assert isinstance(message, str) and message
    return message


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


# -- many clients, slow clients ----------------------------------------------------


def test_many_clients_at_once(table: FakeTable, sockdir: Path) -> None:
    # Every connection here is of one user: let one user take every regular slot.
    limits = Limits(max_clients_per_peer=Limits().max_clients)
    with ApiServer(table, sockdir / "api.sock", limits=limits) as server:
        _many_clients(server)


def _many_clients(server: ApiServer) -> None:
    conns = [RawConn(server.path) for _ in range(60)]
    for i, c in enumerate(conns):
        c.request({"id": i, "op": "status"})
    for i, c in enumerate(conns):
        ok(c.line(), i)  # type: ignore[arg-type]
    assert server.stats().requests >= 60

    failures: list[BaseException] = []

    def hammer(n: int) -> None:
        try:
            c = RawConn(server.path)
            for k in range(30):
                ok(c.ask({"id": f"{n}-{k}", "op": "status"}), f"{n}-{k}")
            c.close()
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=hammer, args=(n,)) for n in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    assert not failures
    assert not any(t.is_alive() for t in threads)
    for c in conns:
        c.close()


def _big_event(n: int) -> DealtEvent:
    return DealtEvent(at=now(), cycle=f"c-{n:06d}", dealt=dealt_state(str(n)))


def test_slow_client_is_dropped_while_the_table_and_others_go_on(
    table: FakeTable, sockdir: Path
) -> None:
    srv = ApiServer(
        table, sockdir / "api.sock", limits=Limits(max_queue_bytes=64 * 1024, linger_seconds=WAIT)
    )
    srv.start()
    try:
        slow = RawConn(srv.path)
        ok(slow.ask({"id": "slow", "op": "subscribe"}), "slow")
        fast = RawConn(srv.path)
        ok(fast.ask({"id": "fast", "op": "subscribe"}), "fast")

        emitted = 0
        for _batch in range(200):
            for _ in range(5):
                emitted += 1
                table.emit(_big_event(emitted))  # the test thread plays the controller
            # The fast client reads everything, in order.
            for expected in range(emitted - 4, emitted + 1):
                line = fast.line()
                assert line is not None
                assert line["event"]["dealt"]["cycle_id"] == str(expected)
            if srv.stats().dropped:
                break
        assert srv.stats().dropped == 1, "the slow client was never dropped"
        # Every callback returned: the table was never held up by the slow client.
        assert table.callbacks_started == table.callbacks_returned == emitted

        # The table and the fast client go on.
        for _ in range(3):
            emitted += 1
            table.emit(_big_event(emitted))
            assert fast.line()["event"]["dealt"]["cycle_id"] == str(emitted)  # type: ignore[index]
        ok(fast.ask({"id": 1, "op": "shuffle"}), 1)

        # The slow client now reads: a prefix of the events, then why it was dropped, then EOF.
        seen = []
        last = None
        while (line := slow.line()) is not None:
            last = line["event"]
            if last["type"] == "dealt":
                seen.append(int(last["dealt"]["cycle_id"]))
        assert last is not None and last["type"] == "dropped"
        assert "too slow" in last["reason"]
        assert seen == list(range(1, len(seen) + 1))
        assert len(seen) < emitted
        slow.close()
        fast.close()
    finally:
        srv.stop()


def test_callback_never_blocks_even_when_the_server_thread_is_stuck(
    table: FakeTable, sockdir: Path
) -> None:
    srv = ApiServer(table, sockdir / "api.sock", limits=Limits(max_pending_events=500))
    srv.start()
    try:
        watcher = RawConn(srv.path)
        ok(watcher.ask({"id": 1, "op": "subscribe"}), 1)
        # Hold the server thread inside table.status().
        table.status_gate = threading.Event()
        asker = RawConn(srv.path)
        asker.request({"id": "held", "op": "status"})
        assert table.status_entered.wait(WAIT)
        for n in range(5000):
            table.emit(ProgressEvent(at=now(), phase="shuffle", percent=n % 101))
        assert table.callbacks_started == table.callbacks_returned == 5000
        table.status_gate.set()
        ok(asker.line(), "held")  # type: ignore[arg-type]
        # The subscriber missed events while the server was stuck: it is told and dropped.
        last = None
        while (line := watcher.line()) is not None:
            last = line["event"]
        assert last is not None and last["type"] == "dropped"
        assert "fell behind" in last["reason"]
        # The server itself still serves.
        table.status_gate = None
        ok(asker.ask({"id": 2, "op": "status"}), 2)
        watcher.close()
        asker.close()
    finally:
        srv.stop()


# -- the socket file ---------------------------------------------------------------


def test_socket_mode_is_0660_by_default(server: ApiServer) -> None:
    info = os.stat(server.path)
    assert stat.S_ISSOCK(info.st_mode)
    assert stat.S_IMODE(info.st_mode) == 0o660


def test_socket_mode_and_group_from_arguments(table: FakeTable, sockdir: Path) -> None:
    mine = os.getegid()
    if os.geteuid() == 0:
        others = [g for g in grp.getgrall() if g.gr_gid != mine]
    else:
        others = [grp.getgrgid(g) for g in os.getgroups() if g != mine]
    group = others[0] if others else grp.getgrgid(mine)
    with ApiServer(table, sockdir / "api.sock", mode=0o640, group=group.gr_name) as srv:
        info = os.stat(srv.path)
        assert stat.S_IMODE(info.st_mode) == 0o640
        assert info.st_gid == group.gr_gid


def test_unknown_group_is_a_warning_not_a_failure(
    table: FakeTable, sockdir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with ApiServer(table, sockdir / "api.sock", group="no-such-group-mj") as srv:
        assert os.stat(srv.path).st_gid == os.getegid()
        c = RawConn(srv.path)
        ok(c.ask({"id": 1, "op": "status"}), 1)
        c.close()
    assert "no-such-group-mj" in caplog.text


def test_stale_socket_from_a_previous_run_is_replaced(table: FakeTable, sockdir: Path) -> None:
    path = sockdir / "api.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # the file stays, nobody listens
    assert stat.S_ISSOCK(os.lstat(path).st_mode)
    with ApiServer(table, path) as srv:
        c = RawConn(srv.path)
        ok(c.ask({"id": 1, "op": "status"}), 1)
        c.close()


def test_a_file_that_is_not_a_socket_is_left_alone(table: FakeTable, sockdir: Path) -> None:
    path = sockdir / "api.sock"
    path.write_text("precious")
    with pytest.raises(ApiServerError, match="not a socket; refusing to remove it"):
        ApiServer(table, path).start()
    assert path.read_text() == "precious"
    assert table.subscriber_count == 0


def test_a_live_service_is_not_taken_over(server: ApiServer, table: FakeTable) -> None:
    with pytest.raises(ApiServerError, match="already answers"):
        ApiServer(FakeTable(), server.path).start()
    c = RawConn(server.path)  # the first one still serves
    ok(c.ask({"id": 1, "op": "status"}), 1)
    c.close()


def test_missing_directory_and_long_path(table: FakeTable, sockdir: Path) -> None:
    with pytest.raises(ApiServerError, match="does not exist"):
        ApiServer(table, sockdir / "nowhere" / "api.sock").start()
    with pytest.raises(ApiServerError, match="too long"):
        ApiServer(table, sockdir / ("x" * 120)).start()


def test_stop_closes_clients_removes_the_socket_and_unsubscribes(
    table: FakeTable, sockdir: Path
) -> None:
    srv = ApiServer(table, sockdir / "api.sock")
    srv.start()
    assert table.subscriber_count == 1 and srv.running
    c = RawConn(srv.path)
    ok(c.ask({"id": 1, "op": "subscribe"}), 1)
    srv.stop()
    assert c.line() is None
    assert not srv.path.exists()
    assert table.subscriber_count == 0 and not srv.running
    c.close()
    srv.stop()  # a second stop is harmless


def test_stop_leaves_a_socket_that_is_no_longer_its_own(table: FakeTable, sockdir: Path) -> None:
    srv = ApiServer(table, sockdir / "api.sock")
    srv.start()
    srv.path.unlink()
    other = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    other.bind(str(srv.path))
    srv.stop()
    assert srv.path.exists()
    other.close()


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


def test_out_of_descriptors_pauses_accepting_then_recovers(
    table: FakeTable, sockdir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """accept() failing with EMFILE must not make the loop spin; clients wait, then get in."""
    import logging
    import resource

    caplog.set_level(logging.INFO, logger="mjtable.api")
    srv = ApiServer(table, sockdir / "api.sock")
    srv.doors.accept_retry_seconds = 0.2
    srv.start()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    waiting = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(3)]
    fillers: list[int] = []

    def said_once() -> bool:
        assert srv.running
        return "accept failed" in caplog.text

    try:
        for s in waiting:
            s.settimeout(WAIT)
        # Allow no new descriptor at all: fill every free number below the highest one
        # in use, then lower the limit to it. The server's accept() now fails with EMFILE.
        limit = max(int(fd) for fd in os.listdir("/proc/self/fd")) + 1
        while (fd := os.open(os.devnull, os.O_RDONLY)) < limit:
            fillers.append(fd)
        os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, hard))
        for s in waiting:
            s.connect(str(srv.path))  # queued in the listener's backlog
            s.sendall(b'{"id": 1, "op": "status"}\n')
        # Nothing can be accepted; the server logs once per pause instead of spinning.
        wait_for(said_once, WAIT, "the failed accept in the log")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        for fd in fillers:
            os.close(fd)
    try:
        for s in waiting:
            data = b""
            while not data.endswith(b"\n"):
                chunk = s.recv(65536)
                assert chunk, "closed without an answer"
                data += chunk
            assert json.loads(data)["ok"] is True
        # Each failure paused accepting once, and each pause ended.
        failures = caplog.text.count("accept failed")
        assert failures >= 1
        assert failures == caplog.text.count("accepting API clients again")
    finally:
        for s in waiting:
            s.close()
        srv.stop()
