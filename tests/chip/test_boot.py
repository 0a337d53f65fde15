"""Boot never dies silently, on the chip: the firmware's build on the emulated RP2040 with one of
its I2C expanders unplugged still brings the controller's link up, reports PART_MISSING naming the
expander, refuses a SHUFFLE; once the expander is plugged back one CLEAR_FAULT clears it."""

from __future__ import annotations

import queue
import time
from pathlib import Path

import pytest

from controller.cycle.faults import board_fault_words
from drivers.board import BoardEvent
from protocol import codes
from protocol import messages as m
from protocol.events import LinkDown
from simulator.chip.board import ChipBoard
from simulator.chip.config import ChipConfig
from simulator.chip.expander import GPPUA, IODIRA
from tests.chip.conftest import WALL_LIMIT, need_chip, next_event, slow_link, until_link_up

pytestmark = [pytest.mark.xdist_group("chip"), pytest.mark.once, pytest.mark.chip_long]


def answer(events: queue.Queue[BoardEvent], board: ChipBoard, deadline: float) -> m.Message:
    """The board's next message (link events skipped; the link must stay up)."""
    while True:
        event = next_event(events, board, deadline)
        assert not isinstance(event, LinkDown), event
        if isinstance(event, m.Message):
            return event


@pytest.mark.parametrize(("address", "part"), [(0x20, "input expander"), (0x21, "output expander")])
def test_a_missing_expander_is_reported_and_cleared_once_back(
    firmware_build: Path, address: int, part: str
) -> None:
    shared = need_chip()
    config = ChipConfig(build=firmware_build, seed=5, speed=0, shared=shared, absent=(address,))
    board = ChipBoard(config)
    events: queue.Queue[BoardEvent] = queue.Queue()
    link = slow_link(board.open_pty(), events.put)
    deadline = time.monotonic() + WALL_LIMIT
    try:
        board.start()
        link.start()
        event = until_link_up(events, board, deadline)
        status = event.hello_reply.status
        assert (status.state, status.fault) == (codes.STATE_FAULT, codes.FAULT_PART_MISSING)
        assert status.detail == address
        name, words, _advice = board_fault_words(
            status.fault, status.subsystem, status.phase, status.detail
        )
        assert name == "PART_MISSING" and part in words and f"I2C 0x{address:02x}" in words

        # the FAULT the board found at its first pass follows the session's opening
        assert answer(events, board, deadline) == m.Fault(
            codes.FAULT_PART_MISSING, codes.SUB_BOARD, codes.PHASE_NONE, address
        )
        link.send(m.Shuffle(0))
        refused = answer(events, board, deadline)
        assert refused == m.Refused(m.Shuffle.TYPE, codes.REFUSE_FAULTED, codes.FAULT_PART_MISSING)
        link.send(m.ClearFault())
        refused = answer(events, board, deadline)
        assert refused == m.Refused(
            m.ClearFault.TYPE, codes.REFUSE_CAUSE_PRESENT, codes.FAULT_PART_MISSING
        )

        board.plug(address)  # the technician reseats the cable, then presses CLEAR FAULT once
        link.send(m.ClearFault())
        assert answer(events, board, deadline) == m.Done(m.ClearFault.TYPE, codes.RESULT_OK)
        link.send(m.ReadStatus())
        after = answer(events, board, deadline)
        assert isinstance(after, m.BoardStatus)
        assert (after.state, after.fault) == (codes.STATE_STOPPED, 0)
    finally:
        link.stop()
        board.stop()
    inputs, outputs = board.table.expanders[0x20], board.table.expanders[0x21]
    assert inputs.reg[GPPUA : GPPUA + 2] == b"\xff\xff"  # set up by the clear, or at boot
    assert outputs.reg[IODIRA : IODIRA + 2] == b"\x00\x00"
    assert "Traceback" not in board.console_text()
    assert board.boots == 1
