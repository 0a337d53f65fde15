"""No client can starve the others: idle and half-sent connections are closed, one user has a
share of the slots, and beyond them the reserve still answers status and stop."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.api.admission import Slots
from controller.api.client import ApiClient
from controller.api.server import ApiServer, Limits
from tests.support.fake_controller import WAIT, FakeTable, RawConn

SHORT = 0.3  # seconds: a timeout short enough to wait for


def start(table: FakeTable, sockdir: Path, **limits: Any) -> ApiServer:
    srv = ApiServer(table, sockdir / "api.sock", limits=Limits(**limits))
    srv.start()
    return srv


@pytest.fixture
def conns() -> Iterator[list[RawConn]]:
    opened: list[RawConn] = []
    yield opened
    for conn in opened:
        conn.close()


def connect(conns: list[RawConn], path: Path) -> RawConn:
    conn = RawConn(path)
    conns.append(conn)
    return conn


def closed_silently(conn: RawConn) -> bool:
    return conn.line() is None


def code(answer: dict[str, Any] | None) -> str:
    assert answer is not None and answer["ok"] is False, answer
    error = answer["error"]["code"]
    assert isinstance(error, str)
    return error


# -- timeouts -----------------------------------------------------------------------


def test_an_idle_connection_is_closed_unless_subscribed(
    table: FakeTable, sockdir: Path, conns: list[RawConn]
) -> None:
    srv = start(table, sockdir, idle_timeout=SHORT)
    try:
        idle, watcher = connect(conns, srv.path), connect(conns, srv.status_path)
        assert watcher.ask({"id": 1, "op": "subscribe"})["ok"] is True
        began = time.monotonic()  # the server reads the request after this
        assert idle.ask({"id": 1, "op": "status"})["ok"] is True
        assert closed_silently(idle)
        assert time.monotonic() - began >= SHORT
        # The subscriber, silent since before the idle connection's last request, has
        # outlived the idle timeout too: the server, closing connections as their times come,
        # would have closed it first...
        table.trip()
        event = watcher.line()
        assert event is not None and event["event"]["type"] == "fault"  # ...and still hears
        assert srv.stats().expired == 1
    finally:
        srv.stop()


def test_the_client_reconnects_after_an_idle_close(table: FakeTable, sockdir: Path) -> None:
    srv = start(table, sockdir, idle_timeout=SHORT)
    try:
        with ApiClient(srv.path, timeout=WAIT) as client:
            assert client.status().state == "idle"
            deadline = time.monotonic() + WAIT
            while srv.stats().expired == 0:
                assert time.monotonic() < deadline
                time.sleep(SHORT / 3)
            assert client.shuffle().accepted  # on a new connection, sent once
        assert table.requests == [("shuffle", "api")]
    finally:
        srv.stop()


def test_a_half_sent_line_times_out_with_an_answer(
    table: FakeTable, sockdir: Path, conns: list[RawConn]
) -> None:
    srv = start(table, sockdir, request_timeout=SHORT, idle_timeout=WAIT)
    try:
        half = connect(conns, srv.path)
        half.send(b'{"id": 1, "op": "sta')
        answer = half.line()
        assert code(answer) == "timeout" and answer is not None and answer["id"] is None
        assert f"not finished within {SHORT:g} s" in answer["error"]["message"]
        assert half.line() is None
        # A trickle keeps no line alive: the clock runs from the line's first byte.
        trickle = connect(conns, srv.path)
        began = time.monotonic()
        for byte in b'{"id": 2, "op": "status"':
            try:
                trickle.send(bytes([byte]))
            except OSError:  # closed already
                break
            time.sleep(SHORT / 10)
            if time.monotonic() - began > 3 * SHORT:
                break
        assert code(trickle.line()) == "timeout"
        # Whole lines do not start the clock; the line after them does, from its own start.
        steady = connect(conns, srv.path)
        for n in range(5):
            assert steady.ask({"id": n, "op": "status"})["ok"] is True
            time.sleep(SHORT / 2)
        assert srv.stats().expired == 2
    finally:
        srv.stop()


# -- slots: per user, and the reserve ------------------------------------------------


def test_one_user_has_a_share_and_the_reserve_answers_status_and_stop(
    table: FakeTable, sockdir: Path, conns: list[RawConn]
) -> None:
    srv = start(table, sockdir, max_clients=8, max_clients_per_peer=2, reserved_clients=4)
    try:
        first, second = connect(conns, srv.path), connect(conns, srv.path)
        assert first.ask({"id": 1, "op": "subscribe"})["ok"] is True
        assert second.ask({"id": 2, "op": "last_dealt"})["ok"] is True
        # This user's share is taken: a third connection may ask status or stop, once.
        third = connect(conns, srv.path)
        assert third.ask({"id": 3, "op": "status"})["result"]["state"] == "idle"
        assert third.line() is None
        fourth = connect(conns, srv.path)
        assert fourth.ask({"id": 4, "op": "stop"})["result"]["action"] == "stop"
        assert fourth.line() is None
        fifth = connect(conns, srv.path)
        answer = fifth.ask({"id": 5, "op": "subscribe"})
        assert code(answer) == "busy" and answer["id"] == 5
        assert "8 clients at most, 2 per user" in answer["error"]["message"]
        assert "status or stop" in answer["error"]["message"]
        assert fifth.line() is None
        assert table.requests == [("stop", "api")]
        assert srv.stats().busy == 1
        # The status socket has its own slots, and its reserve answers status only.
        floor = [connect(conns, srv.status_path) for _ in range(3)]
        assert floor[0].ask({"id": 1, "op": "subscribe"})["ok"] is True
        assert floor[1].ask({"id": 2, "op": "status"})["ok"] is True
        assert code(floor[2].ask({"id": 3, "op": "stop"})) == "forbidden"
        assert floor[2].line() is None
        # The regular connections were never disturbed.
        assert second.ask({"id": 6, "op": "status"})["ok"] is True
        table.trip()
        events = [first.line()["event"]["type"] for _ in range(3)]  # type: ignore[index]
        assert events == ["phase", "fault", "phase"]  # stopped, the fault, into fault
    finally:
        srv.stop()


def test_a_full_reserve_makes_room_for_a_newcomer(
    table: FakeTable, sockdir: Path, conns: list[RawConn]
) -> None:
    srv = start(table, sockdir, max_clients=4, max_clients_per_peer=1, reserved_clients=2)
    try:
        holder = connect(conns, srv.path)
        assert holder.ask({"id": 0, "op": "status"})["ok"] is True
        squatters = [connect(conns, srv.path) for _ in range(2)]  # ask nothing
        squatters[1].send(b'{"id": 9, "op"')  # or half a line
        for n in range(5):
            asker = connect(conns, srv.path)
            assert asker.ask({"id": n, "op": "status"})["ok"] is True
        assert closed_silently(squatters[0])  # the oldest waiting one made room
        assert srv.stats().evicted >= 1
        assert holder.ask({"id": 1, "op": "status"})["ok"] is True
    finally:
        srv.stop()


def test_a_flood_of_pipelined_lines_is_served_in_order_across_turns(
    table: FakeTable, sockdir: Path, conns: list[RawConn]
) -> None:
    srv = start(table, sockdir)
    try:
        flood, other = connect(conns, srv.path), connect(conns, srv.path)
        flood.send(b"".join(b'{"id": %d, "op": "status"}\n' % n for n in range(1000)))
        assert other.ask({"id": "other", "op": "status"})["ok"] is True
        assert [flood.line()["id"] for _ in range(1000)] == list(range(1000))  # type: ignore[index]
    finally:
        srv.stop()


# -- the slots' bookkeeping, for several users -------------------------------------


def test_slots_share_by_user_then_reserve() -> None:
    slots: Slots[str] = Slots(max_clients=4, max_per_peer=2, reserved=2)
    assert [slots.take(f"a{n}", 1000) for n in range(3)] == ["regular", "regular", "reserve"]
    assert [slots.take(f"b{n}", 1001) for n in range(2)] == ["regular", "regular"]
    assert slots.take("c0", 1002) == "reserve"  # every regular slot is taken
    assert slots.take("c1", 1002) is None
    assert (slots.regular, slots.reserve, slots.of_peer(1000)) == (4, 2, 2)
    slots.release("b0")
    assert slots.take("c1", 1002) == "regular"
    slots.release("a2")
    assert slots.slot_of("a2") is None and slots.reserve == 1
    with pytest.raises(ValueError, match="already"):
        slots.take("c1", 1002)


def test_the_reserve_victim_is_the_oldest_waiting_of_the_user_holding_most() -> None:
    slots: Slots[str] = Slots(max_clients=1, max_per_peer=1, reserved=5)
    slots.take("regular", 0)
    for name, peer in (("x1", 7), ("y1", 8), ("x2", 7), ("y2", 8), ("y3", 8)):
        assert slots.take(name, peer) == "reserve"
    waiting = {"x1", "y1", "x2", "y2", "y3"}
    assert slots.victim(lambda m: m in waiting) == "y1"  # user 8 holds 3 of the 5
    waiting -= {"y1", "y2", "y3"}  # answered already: x1 and x2 are still waiting
    assert slots.victim(lambda m: m in waiting) == "x1"
    assert slots.victim(lambda m: False) == "y1"  # nobody waits: the oldest of the most
    empty: Slots[str] = Slots(max_clients=1, max_per_peer=1, reserved=1)
    assert empty.victim(lambda m: True) is None
