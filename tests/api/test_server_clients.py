"""The API server's clients: many at once, slow ones, a stuck server thread, no descriptors left."""

from __future__ import annotations

import json
import os
import socket
import threading
from pathlib import Path

import pytest

from controller.api.server import ApiServer, Limits
from controller.cycle.reports import DealtEvent, ProgressEvent
from tests.api.server_support import ok
from tests.support.fake_controller import WAIT, FakeTable, RawConn, dealt_state, now
from tests.support.waiting import wait_for

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
