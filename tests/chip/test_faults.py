"""The fault specs and the control channel on the chip: the firmware's build on the emulated RP2040
over the same table the CPython simulator's faults act on (simulator/chip/machine.py), with the
controller's link on its pty and the control channel (JSON lines) on a Unix socket.

In one boot of the chip: a dead sensor armed from the start, a missing expander injected, the
E-stop and the cover from the channel, an overheat, a stall struck at its point of a shuffle (the
saboteur reads the motion from the board's record on the flash), a power cut; each found by the
firmware from its pins and cleared with one CLEAR_FAULT once its cause is gone, and what the chip
cannot be asked (the firmware's state, a fault inside the simulated HAL) refused in one line.
In another: the power cut half-way through the record a SHUFFLE writes, and the table moves
again."""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from drivers.board import BoardEvent
from protocol import codes
from protocol import messages as m
from protocol.events import LinkDown, LinkUp
from simulator.chip.board import ChipBoard
from simulator.chip.config import ChipConfig
from simulator.control import ControlServer
from tests.chip.conftest import WALL_LIMIT, need_chip, next_event, slow_link, until_link_up
from tests.support.control import ControlClient

pytestmark = [pytest.mark.xdist_group("chip"), pytest.mark.once, pytest.mark.chip_long]

CLEARED = m.Done(m.ClearFault.TYPE, codes.RESULT_OK)


class Chip:
    """The chip board, the controller's link on its pty, the control channel's client."""

    def __init__(self, board: ChipBoard, link_events: queue.Queue[BoardEvent]) -> None:
        self.board = board
        self.events = link_events
        self.deadline = time.monotonic() + WALL_LIMIT

    def until(self, wanted: Callable[[m.Message], bool]) -> m.Message:
        """The board's next message ``wanted`` takes (the others skipped; the link stays up)."""
        while True:
            event = next_event(self.events, self.board, self.deadline)
            assert not isinstance(event, LinkDown), event
            if isinstance(event, m.Message) and wanted(event):
                return event


def test_fault_specs_and_the_control_channel_on_the_chip(
    firmware_build: Path, tmp_path: Path
) -> None:
    config = ChipConfig(
        build=firmware_build, seed=3, speed=0, shared=need_chip(), faults=("ntc:wire=short",)
    )
    board = ChipBoard(config)
    socket = str(tmp_path / "control.sock")
    server = ControlServer(board.control, socket)
    events: queue.Queue[BoardEvent] = queue.Queue()
    link = slow_link(board.open_pty(), events.put)
    chip = Chip(board, events)
    ctl: ControlClient | None = None

    def fault() -> m.Message:
        return chip.until(lambda e: isinstance(e, m.Fault))

    def answer(command: m.Message) -> m.Message:
        link.send(command)
        return chip.until(lambda e: isinstance(e, m.Done | m.Refused))

    try:
        board.start()
        server.start()
        link.start()
        ctl = ControlClient(socket)
        up = until_link_up(events, board, chip.deadline)

        # a dead sensor, armed from the start: the NTC shorted (ADC1 at 0)
        assert up.hello_reply.status.fault == codes.FAULT_SENSOR_BROKEN
        assert fault() == m.Fault(
            codes.FAULT_SENSOR_BROKEN, codes.SUB_POWER, codes.PHASE_NONE, codes.SENSOR_NTC
        )
        status = ctl("status")
        assert isinstance(status, dict) and status["conditions"] == ["the heat-sink NTC short"]
        ctl("repair")
        assert answer(m.ClearFault()) == CLEARED

        # a missing expander, from a spec on the channel: found, refused, reseated, cleared
        assert ctl("inject", spec="expander:part=output") == "expander:part=output"
        assert fault() == m.Fault(codes.FAULT_PART_MISSING, codes.SUB_BOARD, codes.PHASE_NONE, 0x21)
        assert answer(m.ClearFault()) == m.Refused(
            m.ClearFault.TYPE, codes.REFUSE_CAUSE_PRESENT, codes.FAULT_PART_MISSING
        )
        ctl("repair")
        assert answer(m.ClearFault()) == CLEARED

        # the E-stop and the cover, from the channel
        ctl("press_estop")
        assert fault() == m.Fault(codes.FAULT_ESTOP, codes.SUB_SAFETY, codes.PHASE_NONE, 0)
        assert answer(m.Shuffle(0)) == m.Refused(
            m.Shuffle.TYPE, codes.REFUSE_ESTOP_HELD, codes.FAULT_ESTOP
        )
        ctl("release_estop")
        assert answer(m.ClearFault()) == CLEARED
        ctl("open_cover")
        assert answer(m.Shuffle(0)) == m.Refused(
            m.Shuffle.TYPE, codes.REFUSE_BAD_STATE, codes.BLOCK_COVER_OPEN
        )
        ctl("close_cover")

        # the drivers' cooling fails: over its limit at once; a technician cools it
        ctl("inject", spec="overheat@now")
        assert fault() == m.Fault(codes.FAULT_OVERHEAT, codes.SUB_POWER, codes.PHASE_NONE, 0)
        ctl("repair")
        assert answer(m.ClearFault()) == CLEARED

        # a stall at its point of a shuffle: the disc seizes once it has turned 5 % of its time
        ctl("inject", spec="stall@shuffle:at=5")
        link.send(m.Shuffle(0))
        assert fault() == m.Fault(
            codes.FAULT_MOTOR_STALL, codes.SUB_SHUFFLER, codes.PHASE_SHUFFLE, 0
        )
        status = ctl("status")
        assert isinstance(status, dict)
        assert status["sets"] == {"A": "disc", "B": "disc"}  # the record on the chip's flash
        assert status["motions_begun"] >= 1
        assert answer(m.ClearFault()) == CLEARED  # hold 0: freed once reported

        # what the chip cannot be asked, in one line each
        assert "does not go with the chip" in ctl.refused("inject", spec="internal")
        assert "in the chip's memory" in ctl.refused("state")
        assert "no seat buttons" in ctl.refused("press_button", button=2, seat=0)

        # a power cut from the channel: the board comes back from its flash, a new session
        ctl("reboot")
        event = next_event(events, board, chip.deadline)
        while not (
            isinstance(event, LinkUp) and event.hello_reply.session_id != up.hello_reply.session_id
        ):
            event = next_event(events, board, chip.deadline)
        status_after = event.hello_reply.status
        assert status_after.reset_cause == codes.RESET_POWER_ON
        assert status_after.fault == 0
        assert status_after.places == (codes.PLACE_DISC, codes.PLACE_DISC)
    finally:
        if ctl is not None:
            ctl.close()
        link.stop()
        server.stop()
        board.stop()
    assert "Traceback" not in board.console_text()
    assert board.boots == 2 and board.watchdog_resets == 0


def test_a_power_cut_in_the_middle_of_the_records_write_and_the_table_moves_again(
    firmware_build: Path,
) -> None:
    """The power goes half-way through the flash program of the record a SHUFFLE writes before
    its motor turns: the board comes back from its flash with the record before or the one it
    was writing (either way both sets in the disc, no fault to clear), and shuffles again."""
    board = ChipBoard(ChipConfig(build=firmware_build, seed=5, speed=0, shared=need_chip()))
    events: queue.Queue[BoardEvent] = queue.Queue()
    link = slow_link(board.open_pty(), events.put)
    chip = Chip(board, events)
    try:
        board.start()
        link.start()
        up = until_link_up(events, board, chip.deadline)
        link.send(m.ReadStatus())
        before = chip.until(lambda e: isinstance(e, m.BoardStatus))
        assert isinstance(before, m.BoardStatus) and before.fault == 0

        board.power_cut_in_flash("program", nth=1, percent=50)
        link.send(m.Shuffle(0))
        event = next_event(events, board, chip.deadline)
        while not (
            isinstance(event, LinkUp) and event.hello_reply.session_id != up.hello_reply.session_id
        ):
            event = next_event(events, board, chip.deadline)
        assert board.flash_cuts == 1
        back = event.hello_reply.status
        assert (back.reset_cause, back.fault) == (codes.RESET_POWER_ON, 0)
        assert back.places == (codes.PLACE_DISC, codes.PLACE_DISC)
        assert back.motions in (before.motions, before.motions + 1)  # the old record or the new

        link.send(m.Shuffle(0))  # the table moves again: the disc turns, the shuffle progresses
        progress = chip.until(lambda e: isinstance(e, m.Progress | m.Refused | m.Fault))
        assert isinstance(progress, m.Progress) and progress.phase == codes.PHASE_SHUFFLE
        link.send(m.Stop())
        assert chip.until(lambda e: isinstance(e, m.Done)) == m.Done(m.Shuffle.TYPE, 1)
    finally:
        link.stop()
        board.stop()
    assert "Traceback" not in board.console_text()
    assert board.boots == 2 and board.watchdog_resets == 0
