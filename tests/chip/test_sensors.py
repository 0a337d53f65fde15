"""The board's hardware truths about its analogue inputs, on the chip: the firmware's build on the
emulated RP2040, its ADC fed from the simulated table through the wiring (simulator/chip/
wiring.py). An open heat-sink NTC (ADC1 at 4,094 of 4,095, which the Beta equation takes for
-110 degC) is a broken sensor, SENSOR_BROKEN naming it, and a SHUFFLE is refused; a shorted
driver runs its motor with the firmware's outputs off, and the current read on that motor's
channel of the multiplexer is DRIVER_SHORT naming it."""

from __future__ import annotations

import queue
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from drivers.board import BoardEvent, BoardLink
from firmware.hal.mechanics import NTC_OPEN
from protocol import codes
from protocol import messages as m
from protocol.events import LinkDown, LinkUp
from simulator.chip.board import ChipBoard
from simulator.chip.config import ChipConfig
from tests.chip.conftest import WALL_LIMIT, need_chip, slow_link

pytestmark = [pytest.mark.xdist_group("chip"), pytest.mark.once, pytest.mark.chip_long]

#: chip time (ms) the firmware has to find a broken part at rest: each input is read at least
#: every 100 ms, a short trips after 200 ms; the rest is margin for the emulated loop
FIND_WITHIN_MS = 2_000


class Linked:
    """The chip board with the controller's link over its pty, once the link is up."""

    def __init__(self, board: ChipBoard, link: BoardLink, events: queue.Queue[BoardEvent]) -> None:
        self.board = board
        self.link = link
        self.events = events
        self.deadline = time.monotonic() + WALL_LIMIT

    def next(self, within_chip_ms: int | None = None) -> BoardEvent:
        """The link's next event; a failure once the chip has run ``within_chip_ms`` more
        (or WALL_LIMIT has passed) without one, with what the chip printed."""
        board = self.board
        until = board.chip_us + within_chip_ms * 1000 if within_chip_ms is not None else None
        while True:
            assert time.monotonic() < self.deadline and board.running and not board.at_repl, (
                f"the firmware did not answer ({board.snapshot()}); "
                f"its console: {board.console_text()!r}"
            )
            assert until is None or board.chip_us < until, (
                f"nothing from the board in {within_chip_ms} ms of chip time ({board.snapshot()})"
            )
            try:
                return self.events.get(timeout=0.5)
            except queue.Empty:
                continue

    def until(self, wanted: Callable[[BoardEvent], bool], within_chip_ms: int) -> BoardEvent:
        """The first event ``wanted`` takes, within ``within_chip_ms`` of chip time from now."""
        start = self.board.chip_us
        while True:
            left = within_chip_ms - int((self.board.chip_us - start) / 1000)
            event = self.next(max(left, 1))
            if wanted(event):
                return event


@contextmanager
def linked(firmware_build: Path) -> Iterator[Linked]:
    board = ChipBoard(ChipConfig(build=firmware_build, seed=11, speed=0, shared=need_chip()))
    events: queue.Queue[BoardEvent] = queue.Queue()
    link = slow_link(board.open_pty(), events.put)
    try:
        board.start()
        link.start()
        up = Linked(board, link, events)
        event = up.next()
        while not isinstance(event, LinkUp):
            assert not isinstance(event, LinkDown), event
            event = up.next()
        assert event.hello_reply.status.fault == 0  # every sensor in its range at boot
        yield up
    finally:
        link.stop()
        board.stop()
    assert "Traceback" not in board.console_text()


def test_an_open_ntc_on_the_chip_is_a_broken_sensor_and_no_shuffle_starts(
    firmware_build: Path,
) -> None:
    with linked(firmware_build) as up:
        up.board.alter(lambda hal: hal.break_ntc(NTC_OPEN))
        fault = up.until(lambda e: isinstance(e, m.Fault | m.Progress), FIND_WITHIN_MS)
        assert fault == m.Fault(
            codes.FAULT_SENSOR_BROKEN, codes.SUB_POWER, codes.PHASE_NONE, codes.SENSOR_NTC
        )
        up.link.send(m.Shuffle(0))
        answer = up.until(lambda e: isinstance(e, m.Refused | m.Progress | m.Done), 5_000)
        assert answer == m.Refused(m.Shuffle.TYPE, codes.REFUSE_FAULTED, codes.FAULT_SENSOR_BROKEN)
        up.link.send(m.Sensors())
        sensors = up.until(lambda e: isinstance(e, m.SensorData), 5_000)
        assert isinstance(sensors, m.SensorData) and sensors.temperature_dc == -0x8000


def test_a_shorted_driver_on_the_chip_is_driver_short_naming_its_motor(
    firmware_build: Path,
) -> None:
    with linked(firmware_build) as up:
        up.board.alter(lambda hal: hal.short_driver(codes.MOTOR_DICE))
        fault = up.until(lambda e: isinstance(e, m.Fault), FIND_WITHIN_MS)
        assert fault == m.Fault(
            codes.FAULT_DRIVER_SHORT, codes.SUB_DICE, codes.PHASE_NONE, codes.MOTOR_DICE
        )
        up.link.send(m.ClearFault())
        answer = up.until(lambda e: isinstance(e, m.Refused | m.Done), 5_000)
        assert answer == m.Refused(
            m.ClearFault.TYPE, codes.REFUSE_CAUSE_PRESENT, codes.FAULT_DRIVER_SHORT
        )
