"""One owner of the board's port: the service holds it, a second opener is told who does, and
a program that ignores the lock never leaves the status saying the link is up.

Real processes on a real pseudo-terminal: the board (`mjtable sim --pty`) in its own process,
the service (`mjtable run --config`) opening the pty with pyserial as it opens a real board.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import pytest
import serial

from controller.api.client import ApiClient
from drivers.portlock import EXIT_HELD, lockers
from tests.support.commands import mjtable
from tests.support.port_service import BoardOnPty, PortService, Watcher
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
    assert diag.stdout == ""

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


def test_a_program_that_ignores_the_lock_never_leaves_the_status_saying_link_up(
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
        for _ in range(200):  # and as long as the program is at it, it never says up
            steal(thief)
            assert not client.status().link_up
        thief.close()
        while not client.status().link_up:  # once it is gone, the link is up again
            assert time.monotonic() < deadline + 60, "the link never came back"
            time.sleep(0.05)
        assert client.status().state == "idle"
    log = service.log.read_text()
    assert f"another program uses the board's port {board.path} (" in log


def steal(thief: SimHost) -> None:
    """The other program's turn: read what it can of the board's bytes, answer its engine."""
    for _ in range(5):
        with contextlib.suppress(serial.SerialException):  # its reads come up empty too
            thief.pump()
