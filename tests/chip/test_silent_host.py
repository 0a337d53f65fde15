"""A motion never runs on unattended, on the chip: the controller goes silent while the board
shuffles, the firmware on the emulated RP2040 stops the disc once its link has been down for its
grace (in the chip's time), and a controller that comes back reads HOST_LOST in the board's
report (docs/firmware.md, "Motion deadlines and a silent host")."""

from __future__ import annotations

import queue
import time
from pathlib import Path

import pytest

from drivers.board import BoardEvent
from firmware.config import Timings
from protocol import codes
from protocol import messages as m
from protocol.arq import LINK_TIMEOUT_MS
from simulator.chip.board import ChipBoard
from simulator.chip.config import ChipConfig
from tests.chip.conftest import WALL_LIMIT, need_chip, next_event, slow_link, until_link_up

pytestmark = [pytest.mark.xdist_group("chip"), pytest.mark.once, pytest.mark.chip_long]


def wait_for(board: ChipBoard, done: object, deadline: float, what: str) -> None:
    assert callable(done)
    while not done():
        assert time.monotonic() < deadline and board.running, (
            f"{what}: not within the wall limit ({board.snapshot()}); "
            f"its console: {board.console_text()!r}"
        )
        time.sleep(0.05)


def test_a_silent_host_during_a_shuffle_stops_the_chips_motors(firmware_build: Path) -> None:
    shared = need_chip()
    board = ChipBoard(ChipConfig(build=firmware_build, seed=7, speed=0, shared=shared))
    path = board.open_pty()
    events: queue.Queue[BoardEvent] = queue.Queue()
    link = slow_link(path, events.put)
    deadline = time.monotonic() + WALL_LIMIT
    grace = Timings().host_grace_ms
    disc = board.hal
    try:
        board.start()
        link.start()
        until_link_up(events, board, deadline, downs=True)
        link.send(m.Shuffle(0))
        while not isinstance(next_event(events, board, deadline), m.Progress):
            pass  # the disc turns: 130 ms a tile, 17.7 s of the chip's time
        assert disc.speed[codes.MOTOR_SHUFFLE_DISC] > 0
        link.stop()  # the controller goes silent
        silent_at = board.snapshot()["chip_ms"]
        wait_for(board, lambda: disc.speed[codes.MOTOR_SHUFFLE_DISC] == 0, deadline, "disc")
        stopped_after = board.snapshot()["chip_ms"] - silent_at
        # the link's own timeout at most, then the grace; the shuffle had 15 s and more to go
        assert grace <= stopped_after <= LINK_TIMEOUT_MS + grace + 500
        assert not disc.enabled

        back: queue.Queue[BoardEvent] = queue.Queue()  # a controller started again
        again = slow_link(path, back.put)
        again.start()
        try:
            event = until_link_up(back, board, deadline, downs=True)
        finally:
            again.stop()
    finally:
        link.stop()
        board.stop()
    status = event.hello_reply.status
    assert (status.state, status.fault) == (codes.STATE_FAULT, codes.FAULT_HOST_LOST)
    assert (status.phase, status.detail) == (codes.PHASE_SHUFFLE, 3)
    assert status.places[0] == codes.PLACE_DISC
    assert event.hello_reply.deadlines_ms == (40360, 49080, 7000, 9000, 10900)
    assert "Traceback" not in board.console_text()
