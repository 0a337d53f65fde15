"""The board's link on its chip: every byte value goes through UART0 as data.

The protocol is on the Pico's UART0, wired to the Pi's UART (docs/firmware.md, "Wiring"): the
Pico's USB port is MicroPython's REPL, where 0x03 is Ctrl-C and would stop the firmware. On
UART0 the REPL is not there (MicroPython's rp2 port builds with MICROPY_HW_ENABLE_UART_REPL 0,
and nothing calls os.dupterm), so 0x03, 0x04 and every other byte are data. Here the
controller's own link (drivers/board.py) sends the firmware on the emulated chip, over the pty
and UART0, HELLO then 64 PINGs whose tokens hold the 256 byte values, with the heartbeats and
acknowledgements between; the bytes the chip was given are collected, and the board keeps its
session, its boot count and its reset cause, and answers every PING with its token."""

from __future__ import annotations

import queue
import time
from pathlib import Path

import pytest

from drivers.board import BoardEvent
from protocol import codes
from protocol import messages as m
from protocol.events import LinkDown, LinkUp, PeerRebooted
from simulator.chip.board import ChipBoard
from simulator.chip.config import ChipConfig
from tests.chip.conftest import WALL_LIMIT, need_chip, next_event, slow_link, until_link_up

pytestmark = [pytest.mark.xdist_group("chip"), pytest.mark.once, pytest.mark.chip_long]

#: 64 tokens of 4 bytes (big-endian on the wire): every byte value 0..255 once
TOKENS = [int.from_bytes(bytes(range(4 * k, 4 * k + 4)), "big") for k in range(64)]


class RecordingChipBoard(ChipBoard):
    """The chip board, keeping every byte the host sent to the chip's UART0."""

    def __init__(self, config: ChipConfig) -> None:
        super().__init__(config)
        self.to_uart0 = bytearray()

    def _receive(self, data: bytes) -> None:
        self.to_uart0 += data
        super()._receive(data)


def test_every_byte_value_on_uart0_is_data_and_the_board_never_resets(
    firmware_build: Path,
) -> None:
    shared = need_chip()
    board = RecordingChipBoard(ChipConfig(build=firmware_build, seed=11, speed=0, shared=shared))
    events: queue.Queue[BoardEvent] = queue.Queue()
    link = slow_link(board.open_pty(), events.put)
    deadline = time.monotonic() + WALL_LIMIT
    try:
        board.start()
        link.start()
        up = until_link_up(events, board, deadline)
        hello = up.hello_reply
        event: BoardEvent = up
        assert hello.status.reset_cause == codes.RESET_POWER_ON
        before = len(board.to_uart0)  # HELLO (and its repeats) so far

        for token in TOKENS:
            link.send(m.Ping(token))
        answered: list[int] = []
        while len(answered) < len(TOKENS):
            event = next_event(events, board, deadline)
            # a reset would show as the link lost, or a new session of the board's
            assert not isinstance(event, (LinkDown, LinkUp, PeerRebooted)), event
            if isinstance(event, m.Pong):
                answered.append(event.token)
        assert answered == TOKENS  # every one, in order, its token intact

        link.send(m.ReadStatus())
        while not isinstance(event, m.BoardStatus):
            event = next_event(events, board, deadline)
            assert not isinstance(event, (LinkDown, LinkUp, PeerRebooted)), event
        assert event.reset_cause == hello.status.reset_cause == codes.RESET_POWER_ON
        assert event.state == codes.STATE_IDLE and event.fault == 0
        assert link.peer.session_id == hello.session_id
    finally:
        link.stop()
        board.stop()
    sent = bytes(board.to_uart0)
    # every byte value went to UART0, inside the frames after HELLO: 0x03 (Ctrl-C on a REPL)
    # and 0x04 (Ctrl-D, a soft reboot there) among them
    assert set(sent[before:]) == set(range(256))
    assert sent[before:].count(3) >= 1 and sent[before:].count(4) >= 1
    # one boot, no watchdog reset, the firmware still running (no REPL, no traceback)
    assert board.boots == 1 and board.watchdog_resets == 0
    assert not board.at_repl
    assert "Traceback" not in board.console_text()
    assert "KeyboardInterrupt" not in board.console_text()
