"""The board's firmware on its chip: the build of the sources on MicroPython's stock Pico image,
on the emulated RP2040 wired to the simulated table, reached over a pty by the controller's own
link (drivers/board.py): it boots, imports, sets up its I2C expanders, brings the link up,
answers the host's HELLO with its version and build, and a status is read; a RESET goes through
the store on its flash and the chip's watchdog, and the board comes back with a new session."""

from __future__ import annotations

import json
import queue
import time
from pathlib import Path

import pytest

from drivers.board import BoardEvent
from firmware.version import FW_MAJOR, FW_MINOR, FW_PATCH
from protocol import codes
from protocol import messages as m
from protocol.events import LinkUp
from simulator.chip.board import ChipBoard
from simulator.chip.config import ChipConfig
from simulator.chip.expander import GPPUA, IODIRA
from tests.chip.conftest import WALL_LIMIT, need_chip, next_event, slow_link, until_link_up

#: the emulator takes a core: one worker for the chip, and one Python (the chip is the same
#: under each; the host's side runs under each in test_parts and test_cli)
pytestmark = [pytest.mark.xdist_group("chip"), pytest.mark.once]


def test_the_firmware_boots_on_the_chip_and_answers_the_host(firmware_build: Path) -> None:
    shared = need_chip()
    board = ChipBoard(ChipConfig(build=firmware_build, seed=7, speed=0, shared=shared))
    events: queue.Queue[BoardEvent] = queue.Queue()
    link = slow_link(board.open_pty(), events.put)
    deadline = time.monotonic() + WALL_LIMIT
    try:
        board.start()
        link.start()
        up = until_link_up(events, board, deadline)
        reply = up.hello_reply
        event: BoardEvent = up
        manifest = json.loads((firmware_build / "manifest.json").read_text())
        assert (reply.fw_major, reply.fw_minor, reply.fw_patch) == (FW_MAJOR, FW_MINOR, FW_PATCH)
        assert reply.tiles == 136
        assert reply.status.build_hash == manifest["build_hash"][:16]
        assert reply.status.reset_cause == codes.RESET_POWER_ON

        link.send(m.ReadStatus())
        while not isinstance(event, m.BoardStatus):
            event = next_event(events, board, deadline)
        assert event.state == codes.STATE_IDLE
        assert event.fault == 0
        assert event.places == (codes.PLACE_DISC, codes.PLACE_DISC)
        assert event.build_hash == reply.status.build_hash

        # RESET: the firmware records that it asked, and the watchdog restarts the chip
        link.send(m.Reset())
        event = next_event(events, board, deadline)
        while not (isinstance(event, LinkUp) and event.hello_reply.session_id != reply.session_id):
            event = next_event(events, board, deadline)
        assert event.hello_reply.status.reset_cause == codes.RESET_SOFT
        assert event.hello_reply.status.places == (codes.PLACE_DISC, codes.PLACE_DISC)
    finally:
        link.stop()
        board.stop()
    # the firmware set its expanders up over I2C: pull-ups on every input, every output driven
    inputs, outputs = board.table.expanders[0x20], board.table.expanders[0x21]
    assert inputs.reg[GPPUA : GPPUA + 2] == b"\xff\xff"
    assert outputs.reg[IODIRA : IODIRA + 2] == b"\x00\x00"
    assert "Traceback" not in board.console_text()
    assert board.boots == 2 and board.watchdog_resets == 1
