"""One owner of the board's port: the service holds it, a second opener is told who does, and
`mjtable diag` asks the service instead of breaking its link.

Real processes on a real pseudo-terminal: the board (`mjtable sim --pty`) in its own process,
the service (`mjtable run --config`) opening the pty with pyserial as it opens a real board.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator

import pytest
import serial

from controller.api.client import ApiClient
from controller.audit.files import iter_records
from drivers.portlock import EXIT_HELD, lockers
from tests.support.api_watcher import Watcher
from tests.support.commands import mjtable
from tests.support.port_service import BoardOnPty, PortService
from tests.support.simhost import SimHost


def one_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.fixture
def board() -> Iterator[BoardOnPty]:
    board = BoardOnPty(speed=0.0)
    try:
        yield board
    finally:
        board.stop()


@pytest.fixture
def service(board: BoardOnPty) -> Iterator[PortService]:
    service = PortService(board.path)
    try:
        service.start()
        yield service
    finally:
        service.stop()


def link_downs(watcher: Watcher) -> list[str]:
    return [e.reason for e in watcher.of("link") if not e.up]


def test_a_second_opener_is_refused_and_told_who_holds_the_port(
    board: BoardOnPty, service: PortService
) -> None:
    watcher = Watcher(service.socket)
    holder = f"pid {service.pid} (mjtable run --config {service.config})"
    # pyserial, as every program that asks for the port exclusively (mpremote too)
    with pytest.raises(serial.SerialException):
        serial.serial_for_url(board.path, exclusive=True).close()
    assert [str(h) for h in lockers(board.path)] == [holder]

    diag = mjtable("diag", "--port", board.path, timeout=60)
    assert diag.returncode == EXIT_HELD == 4
    line = one_line(diag.stderr)
    assert line.startswith(f"mjtable diag: {board.path} is held by {holder}: "), line
    assert "mjtable diag --config FILE" in line and diag.stdout == ""

    flash = mjtable("firmware", "verify", "--port", board.path, timeout=60)
    assert flash.returncode == EXIT_HELD
    line = one_line(flash.stderr)
    assert line.startswith(f"mjtable firmware: {board.path} is held by {holder}: "), line
    assert "sudo systemctl stop mjtable" in line

    second = PortService(board.path, name="two")
    try:
        run = mjtable("run", "--config", str(second.config), timeout=60)
    finally:
        second.stop()
    assert run.returncode == EXIT_HELD
    line = one_line(run.stderr)
    assert f"the service could not start: {board.path} is held by {holder}: " in line, line

    with ApiClient(service.socket) as client:
        status = client.status()
    assert status.link_up and status.state == "idle"
    assert link_downs(watcher) == []  # none of them broke the service's link


def test_diag_asks_the_running_service_and_the_link_never_drops(
    board: BoardOnPty, service: PortService
) -> None:
    watcher = Watcher(service.socket)
    run = mjtable("diag", "--config", str(service.config), "--motors", "--json", timeout=120)
    assert run.returncode == 0, run.stderr + run.stdout
    report = json.loads(run.stdout)
    assert report["service"] == service.socket and "port" not in report
    assert report["hello"]["serial"] == "MJSIM-0001"
    assert report["sensors"]["state"].startswith("idle")
    assert [m["ok"] for m in report["motors"]] == [True] * 9
    assert report["motor_tests"] == "9 motor(s) tested, all ok"

    done = watcher.wait(lambda e: e.type == "diag" and e.step == "done")
    assert done.ok and done.test.startswith("diag-")
    # (the start-up's offline -> idle may reach a subscriber that came just after it, while it
    # still waited in the server's queue: it is not of the diagnosis)
    phases = [(e.previous, e.state) for e in watcher.of("phase") if e.previous != "offline"]
    assert phases == [("idle", "testing"), ("testing", "idle")]  # the table was under test
    # (the start-up's link up may reach it the same way; a link that came back would say
    # "after a gap of")
    ups = [e for e in watcher.of("link") if not (e.up and e.reason == "board answered HELLO")]
    assert link_downs(watcher) == [] and ups == []
    with ApiClient(service.socket) as client:
        assert client.status().link_up
    kinds = [r.record.kind for r in iter_records(service.audit)]
    assert kinds.count("motor_tests") == 1 and kinds.count("motor_test") == 9


def test_without_motors_diag_reads_the_sensors_through_the_service(
    service: PortService,
) -> None:
    run = mjtable("diag", "--config", str(service.config), timeout=60)
    assert run.returncode == 0, run.stderr + run.stdout
    text = run.stdout
    assert f"asking the service on {service.socket} (reading the board's sensors)" in text
    assert f"board through the service on {service.socket}\n" in text
    assert "  state        idle: waiting for a command\n" in text
    assert "motors: not tested" in text


@pytest.fixture
def slow_service() -> Iterator[PortService]:
    """A service on a board that moves four times slower than a real table (a shuffle takes
    72 s): on a loaded machine, a command line started in the middle of a shuffle still finds it
    under way."""
    board = BoardOnPty(speed=4.0)
    service = PortService(board.path)
    try:
        service.start()
        yield service
    finally:
        service.stop()
        board.stop()


def test_motor_tests_are_refused_while_a_cycle_runs(slow_service: PortService) -> None:
    config = str(slow_service.config)
    watcher = Watcher(slow_service.socket)
    with ApiClient(slow_service.socket) as client:
        assert client.shuffle().accepted
    watcher.wait(lambda e: e.type == "progress")  # the shuffle is under way
    run = mjtable("diag", "--config", config, "--motors", timeout=60)
    assert run.returncode == 1, run.stderr + run.stdout
    assert (
        f"service on {slow_service.socket}: refused: motor tests need the table "
        "at rest, and it is shuffling: ask again once the cycle is dealt (or press STOP, then "
        "CLEAR FAULT); the sensors can be read now (mjtable diag without --motors)\n"
    ) in run.stdout
    sensors = mjtable("diag", "--config", config, timeout=60)  # nothing moves for these
    assert sensors.returncode == 0, sensors.stderr + sensors.stdout
    assert "  state        shuffling: " in sensors.stdout
    with ApiClient(slow_service.socket) as client:
        assert client.status().state == "shuffling"
    assert watcher.of("fault") == [] and link_downs(watcher) == []


def test_under_test_nothing_else_moves_and_stop_ends_the_tests(
    slow_service: PortService,
) -> None:
    watcher = Watcher(slow_service.socket)
    with ApiClient(slow_service.socket) as client:
        started = client.diag(motors=True, motor_ms=10_000)  # long enough to be caught in it
        assert started.accepted, started
        assert client.status().state == "testing"
        shuffle = client.shuffle()
        assert not shuffle.accepted
        assert shuffle.message == (
            "the table is under test (motor tests asked with mjtable diag --motors): wait for "
            "them to end, or press STOP"
        )
        assert client.status().allowed == ["stop"]
        again = client.diag(motors=False)
        assert not again.accepted and again.message.startswith(
            f"a diagnosis is under way ({started.test}, asked from api)"
        )
        assert client.stop().accepted
        done = watcher.wait(lambda e: e.type == "diag" and e.step == "done")
        assert done.test == started.test and done.ok is False
        assert done.message == (
            "the motor tests were stopped (STOP); no motor tested: press CLEAR FAULT to go on"
        )
        assert client.status().state == "stopped"


def test_a_program_that_ignores_the_lock_is_named_and_the_link_comes_back_once_it_is_gone(
    board: BoardOnPty, service: PortService
) -> None:
    # A program that opens the port without asking for it exclusively (on a pty anyone may:
    # the link sets no TIOCEXCL there; on a real port, root may) and says HELLO to the board,
    # as diag did: the board takes its session, the service's link keeps breaking.
    thief = SimHost(board.path)
    thief.conn.connect(thief.now())
    seen: list[bool] = []
    with ApiClient(service.socket) as client:
        deadline = time.monotonic() + 30
        while not seen or seen[-1]:  # until the service says its link is down
            assert time.monotonic() < deadline, "the status kept saying link up"
            steal(thief)
            seen.append(client.status().link_up)
        # and, as long as it is at it, the service comes to name it: its sign (the board's
        # answer to its HELLO, read by the service) is the service's to read when it wins the
        # race for the line's bytes. (That the link stays down while such signs keep coming is
        # the link's own test, tests/drivers/test_board_link.py, on a board the test drives
        # step by step: here two readers race for every byte, and which one gets which is the
        # kernel's choice.)
        named = f"another program uses the board's port {board.path} ("
        while named not in service.log.read_text():
            assert time.monotonic() < deadline, "the service never named the other program"
            steal(thief)
            client.status()
        watcher = Watcher(service.socket)
        thief.close()
        # once it is gone, the link is up again (after the quiet window without a sign of it;
        # the link's events until then may still be the last of its ping-pong with the program)
        while True:
            mark = watcher.mark()  # before asking: a link up between the two is not missed
            if client.status().link_up:
                break
            watcher.wait(lambda e: e.type == "link" and e.up, timeout=60, since=mark)
        assert client.status().state == "idle"
        watcher.close()


def steal(thief: SimHost) -> None:
    """The other program's turn: read what it can of the board's bytes, answer its engine."""
    for _ in range(5):
        with contextlib.suppress(serial.SerialException):  # its reads come up empty too
            thief.pump()
