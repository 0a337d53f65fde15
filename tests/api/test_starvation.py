"""500 hostile connections cannot lock the table's API.

Idle connections, half-sent lines, subscribers that never read and pipelines whose answers are
never read are held open on both sockets, by the same user as the honest clients (the worst
case: nothing but the first request tells them apart), while a dealer keeps dealing through
the full socket and a floor display keeps asking ``status`` on the status socket, each time
on a new connection like `mjtable status`. Every status is answered and the dealer goes on;
the round trips with and without the crowd are printed (``-s`` shows them), not asserted:
timing depends on the machine.
"""

from __future__ import annotations

import contextlib
import logging
import resource
import socket
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from controller.api.client import ApiClient
from controller.api.server import ApiServer, Limits
from tests.support.fake_controller import WAIT, FakeTable

HOSTILE = 500
ROUNDS = 200
KINDS = ("idle", "half", "reader", "pipeline")


@pytest.fixture
def descriptors() -> Iterator[None]:
    """Room for the crowd: both ends of every connection live in this process."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 4 * HOSTILE + 512
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


class Dealer(threading.Thread):
    """Shuffles and deals through the full socket on one connection, until told to stop."""

    def __init__(self, path: Path) -> None:
        super().__init__(name="dealer", daemon=True)
        self.path = path
        self.deals = 0
        self.error: BaseException | None = None
        self.stopping = threading.Event()

    def run(self) -> None:
        try:
            with ApiClient(self.path, timeout=WAIT) as table:
                while not self.stopping.is_set():
                    assert table.shuffle().accepted
                    assert table.deal().accepted
                    self.deals += 1
        except BaseException as exc:  # reported by the test
            self.error = exc


def status_round_trips(path: Path, rounds: int) -> list[float]:
    """Seconds per `status` on a new connection each time, as the command line asks."""
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        with ApiClient(path, timeout=WAIT) as floor:
            assert floor.status().table == "7"
        times.append(time.perf_counter() - began)
    return times


def hostile(path: Path, kind: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(path))  # blocking: waits while the listener's backlog is full
    sock.setblocking(False)  # what does not fit is not sent: the crowd never waits
    data = {
        "idle": b"",
        "half": b'{"id": 1, "op": "sta',
        "reader": b'{"id": 1, "op": "subscribe"}\n',
        "pipeline": b'{"id": 1, "op": "status"}\n' * 5000,
    }[kind]
    with contextlib.suppress(OSError):  # full, or closed by the server already
        sock.send(data)
    return sock


def summary(times: list[float]) -> str:
    ms = sorted(t * 1000 for t in times)
    p99 = ms[min(len(ms) - 1, round(0.99 * (len(ms) - 1)))]
    return f"median {statistics.median(ms):.2f} ms, p99 {p99:.2f} ms, max {ms[-1]:.2f} ms"


def test_status_and_dealing_go_on_beside_500_hostile_connections(
    table: FakeTable,
    sockdir: Path,
    descriptors: None,
    caplog: pytest.LogCaptureFixture,
    record_property: Callable[[str, object], None],
) -> None:
    caplog.set_level(logging.INFO, logger="mjtable")
    limits = Limits()  # the defaults, as configured out of the box
    srv = ApiServer(table, sockdir / "api.sock", limits=limits)
    srv.start()
    dealer = Dealer(srv.path)
    crowd: list[socket.socket] = []
    try:
        dealer.start()
        while dealer.deals < 3:
            assert dealer.error is None and dealer.is_alive(), dealer.error
            time.sleep(0.01)
        quiet = status_round_trips(srv.status_path, ROUNDS)

        for n in range(HOSTILE):
            path = srv.path if n % 2 else srv.status_path
            crowd.append(hostile(path, KINDS[n // 2 % len(KINDS)]))
        deals_before = dealer.deals
        crowded = status_round_trips(srv.status_path, ROUNDS)
        assert dealer.error is None, dealer.error
        assert dealer.deals > deals_before, "the dealer made no progress beside the crowd"

        # The server holds a bounded number of them: its slots and its reserve, per socket.
        held = srv.stats().clients
        assert held <= 2 * (limits.max_clients_per_peer + limits.reserved_clients)
        # STOP from a new connection on the full socket is answered too.
        dealer.stopping.set()
        dealer.join(WAIT)
        assert not dealer.is_alive() and dealer.error is None
        with ApiClient(srv.path, timeout=WAIT) as technician:
            assert technician.stop().accepted
    finally:
        dealer.stopping.set()
        for sock in crowd:
            sock.close()
        srv.stop()

    report = (
        f"status on a new connection, {ROUNDS} times: without the crowd {summary(quiet)}; "
        f"beside {HOSTILE} hostile connections {summary(crowded)}; "
        f"{dealer.deals} deals; the server held {held} connections"
    )
    print(report)
    record_property("round_trips", report)
    errors = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert not errors, [r.getMessage() for r in errors]
