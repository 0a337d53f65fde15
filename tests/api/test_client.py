"""The Python client against a real server over a real Unix socket, and its typed errors."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.api.client import (
    ApiClient,
    ConnectionLost,
    Dropped,
    PermissionDenied,
    RequestError,
    ServiceNotRunning,
    ServiceTimeout,
)
from controller.api.server import ApiServer, Limits
from controller.cycle.reports import DealtEvent, PhaseEvent, ProgressEvent, ThrowEvent
from tests.support.asuser import as_nobody
from tests.support.fake_controller import WAIT, FakeTable, dealt_state, now


@pytest.fixture
def client(server: ApiServer) -> Iterator[ApiClient]:
    with ApiClient(server.path, timeout=WAIT) as c:
        yield c


def test_every_operation(client: ApiClient, table: FakeTable) -> None:
    status = client.status()
    assert status.state == "idle" and status.cycles_dealt == 0
    assert client.last_dealt() is None
    shuffled = client.shuffle()
    assert shuffled.accepted and shuffled.action == "shuffle" and shuffled.state == "ready"
    dealt = client.deal()
    assert dealt.accepted and dealt.cycle == "c-000001"
    last = client.last_dealt()
    assert last is not None and last.cycle_id == "c-000001"
    assert client.get_cycle("c-000001") == last
    assert client.get_cycle("c-424242") is None
    refused = client.clear_fault()
    assert not refused.accepted and refused.state == "idle"
    stopped = client.stop()
    assert stopped.accepted and stopped.state == "stopped"
    assert client.status().cycles_dealt == 1
    assert [action for action, _ in table.requests] == ["shuffle", "deal", "clear_fault", "stop"]


def test_throw_reaches_the_table_and_bad_dice_are_refused_by_the_server(
    client: ApiClient, table: FakeTable
) -> None:
    refused = client.throw([3, 4])
    assert refused.action == "throw" and not refused.accepted  # the fake table is idle
    table.state = "dice"
    assert client.throw([3, 4]).accepted
    assert table.requests[-2:] == [("throw", "api"), ("throw", "api")]
    for bad in ([], [7], [1, 2, 3, 4]):
        with pytest.raises(RequestError) as caught:
            client.throw(bad)
        assert caught.value.code == "bad_request" and "dice" in str(caught.value)
    assert len(table.requests) == 2  # a malformed throw never reaches the table


def test_error_answers_are_typed(client: ApiClient) -> None:
    with pytest.raises(RequestError) as caught:
        client.call("fly")
    assert caught.value.code == "unknown_op"
    assert "fly" in str(caught.value)
    with pytest.raises(RequestError) as caught:
        client.call("status", colour="red")
    assert caught.value.code == "bad_request" and "colour" in str(caught.value)
    assert client.status().state == "idle"  # the connection is still good


def test_events_iterator(server: ApiServer, table: FakeTable) -> None:
    with ApiClient(server.path, timeout=WAIT) as watcher, ApiClient(server.path) as actor:
        events = watcher.events(idle_timeout=WAIT)  # subscribed from here on
        actor.shuffle()
        actor.deal()
        got = [next(events) for _ in range(5)]
        assert [type(e) for e in got] == [
            PhaseEvent,
            ProgressEvent,
            ThrowEvent,
            DealtEvent,
            PhaseEvent,
        ]
        dealt = got[3]
        assert isinstance(dealt, DealtEvent) and dealt.dealt.cycle_id == "c-000001"
        # Requests on the subscribed connection still work; events meanwhile are kept.
        table.emit(ProgressEvent(at=now(), phase="lift", percent=50))
        assert watcher.status().state == "idle"
        kept = next(events)
        assert isinstance(kept, ProgressEvent) and kept.phase == "lift"
        watcher.unsubscribe()
        table.emit(ProgressEvent(at=now(), phase="lift", percent=60))
        assert watcher.status().state == "idle"


def test_subscribe_returns_a_snapshot(client: ApiClient, table: FakeTable) -> None:
    table.trip()
    snapshot = client.subscribe()
    assert snapshot.state == "fault" and snapshot.fault is not None


def test_idle_timeout(client: ApiClient) -> None:
    events = client.events(idle_timeout=0.2)
    with pytest.raises(ServiceTimeout, match="did not answer"):
        next(events)


def test_slow_subscriber_learns_it_was_dropped(table: FakeTable, sockdir: Path) -> None:
    limits = Limits(max_queue_bytes=32 * 1024, linger_seconds=WAIT)
    with ApiServer(table, sockdir / "api.sock", limits=limits) as srv:
        slow = ApiClient(srv.path, timeout=WAIT)
        events = slow.events()
        n = 0
        while not srv.stats().dropped and n < 2000:
            n += 1
            table.emit(DealtEvent(at=now(), cycle=f"c-{n}", dealt=dealt_state(f"c-{n}")))
            srv_answer = ApiClient(srv.path, timeout=WAIT)
            srv_answer.status()  # a round trip: the server has handled the event by now
            srv_answer.close()
        assert srv.stats().dropped == 1
        with pytest.raises(Dropped, match="too slow"):
            for _ in events:
                pass
        slow.close()


def test_service_not_running(sockdir: Path) -> None:
    path = sockdir / "api.sock"
    with pytest.raises(ServiceNotRunning) as caught:
        ApiClient(path).status()
    assert str(caught.value) == (
        f"no mjtable service answers on {path}: is it running? (systemctl status mjtable)"
    )
    # A socket file left behind by a dead service: same answer.
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()
    with pytest.raises(ServiceNotRunning):
        ApiClient(path).status()


def test_service_that_stops_mid_connection(table: FakeTable, sockdir: Path) -> None:
    srv = ApiServer(table, sockdir / "api.sock")
    srv.start()
    client = ApiClient(srv.path, timeout=WAIT)
    events = client.events()
    srv.stop()
    with pytest.raises(ConnectionLost, match="closed the connection"):
        next(events)


def test_service_that_never_answers(sockdir: Path) -> None:
    path = sockdir / "api.sock"
    mute = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mute.bind(str(path))
    mute.listen(1)  # the kernel accepts; nobody ever answers
    try:
        with pytest.raises(ServiceTimeout, match=r"did not answer within 0\.3 s"):
            ApiClient(path, timeout=0.3).status()
    finally:
        mute.close()


def test_permission_denied_names_the_group(server: ApiServer, sockdir: Path) -> None:
    """A user outside the socket's group: the message says which group to join."""
    import grp

    group = grp.getgrgid(os.stat(server.path).st_gid).gr_name
    if os.geteuid() == 0:
        # root passes every permission check: ask from a forked child turned into the
        # unprivileged user nobody (the interpreter itself may not be reachable by nobody,
        # so no exec: the child runs the client code already loaded here).
        os.chmod(sockdir, 0o755)
        message = as_nobody(lambda: ApiClient(server.path).status().state)
        message = message.removeprefix("PermissionDenied: ")
    else:
        os.chmod(server.path, 0o000)
        with pytest.raises(PermissionDenied) as caught:
            ApiClient(server.path).status()
        message = str(caught.value)
    assert message.startswith(f"permission denied on {server.path}")
    assert f"the group {group!r}" in message
    assert f"usermod -aG {group}" in message


def test_clients_in_threads(server: ApiServer) -> None:
    failures: list[BaseException] = []

    def work() -> None:
        try:
            with ApiClient(server.path, timeout=WAIT) as c:
                for _ in range(20):
                    assert c.status().table == "7"
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    assert not failures and not any(t.is_alive() for t in threads)
