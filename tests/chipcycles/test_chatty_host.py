"""A host that sends frames without pause while the walls are built, on the chip.

The tile reader names each tile at the head as its code, then none for about 40 ms before the
next tile; a pass of the firmware's main loop that handles the host's frames (and a garbage
collection) lasts longer than that, and a reader sampled once a pass lost the none between two
tiles: the build missed a tile and ended in READER_FAULT or TILE_COUNT (what cycles through
`mjtable run` met on a loaded machine, where the host's heartbeats come every few ms of the
slow chip's time; tests/chip/test_reader.py is the reader's own test). Here the host keeps its
window full of PINGs, each PONG answered at once with the next, from the first tile to the
last: every tile must be read, in the order the head laid them (the board's manifest is the
table's), and every PING answered once, in order.
"""

from __future__ import annotations

import queue
import threading
import time
from pathlib import Path

import pytest

from controller.firmware.build import build, default_source_root
from drivers.board import BoardEvent, BoardLink
from protocol import codes
from protocol import messages as m
from protocol.arq import WINDOW
from simulator.chip.board import ChipBoard
from simulator.chip.config import ChipConfig
from simulator.config import default_layout
from tests.chip.conftest import need_chip, next_event, slow_link, until_link_up

pytestmark = [
    pytest.mark.xdist_group("chip"),
    pytest.mark.once,
    pytest.mark.chip_long,
    pytest.mark.timeout(1800),
]

TILES = 108
#: wall seconds the test waits at most (about 36 s of chip time, 0.1 to 0.3 of real time)
WALL_S = 1200.0


class Chatter:
    """The host's side of the flood: a PING for each PONG, ``WINDOW`` of them outstanding."""

    def __init__(self) -> None:
        self.events: queue.Queue[BoardEvent] = queue.Queue()
        self.on = False
        self.sent = 0
        self.tokens: list[int] = []
        self.link: BoardLink | None = None  # set once the link is made
        self._lock = threading.Lock()

    def on_event(self, event: BoardEvent) -> None:
        if isinstance(event, m.Pong):
            with self._lock:
                self.tokens.append(event.token)
            if self.on:
                self.ping()
            return
        self.events.put(event)

    def ping(self) -> None:
        with self._lock:
            token = self.sent
            self.sent += 1
        assert self.link is not None
        self.link.send(m.Ping(token))


def until_done(chatter: Chatter, board: ChipBoard, command: int, deadline: float) -> list[object]:
    """The board's events up to the DONE of ``command``; a FAULT or REFUSED fails the test."""
    seen: list[object] = []
    while True:
        event = next_event(chatter.events, board, deadline)
        assert not isinstance(event, (m.Fault, m.Refused)), (
            f"{event!r}"
            + (f" ({codes.fault_name(event.code)})" if isinstance(event, m.Fault) else "")
            + f" after {len(chatter.tokens)} PONGs"
        )
        seen.append(event)
        if isinstance(event, m.Done) and event.command == command:
            return seen


def test_every_tile_is_read_while_the_host_sends_without_pause(tmp_path: Path) -> None:
    firmware = build(default_source_root(), tmp_path / "firmware", tiles=TILES).directory
    board = ChipBoard(ChipConfig(build=firmware, tiles=TILES, seed=5, speed=0, shared=need_chip()))
    chatter = Chatter()
    link = slow_link(board.open_pty(), chatter.on_event)
    chatter.link = link
    deadline = time.monotonic() + WALL_S
    try:
        board.start()
        link.start()
        until_link_up(chatter.events, board, deadline, downs=True)
        link.send(m.Shuffle(0))
        until_done(chatter, board, m.Shuffle.TYPE, deadline)

        chatter.on = True
        for _ in range(WINDOW):
            chatter.ping()
        link.send(m.BuildWalls(0, default_layout(TILES)))
        until_done(chatter, board, m.BuildWalls.TYPE, deadline)
        chatter.on = False

        link.send(m.ReadManifest(0))
        chunks = [
            e
            for e in until_done(chatter, board, m.ReadManifest.TYPE, deadline)
            if isinstance(e, m.ManifestChunk)
        ]
        laid = bytes(board.hal.laid[0])
    finally:
        link.stop()
        board.stop()
    manifest = bytes(
        code for chunk in sorted(chunks, key=lambda c: c.offset) for code in chunk.tiles
    )
    assert len(laid) == TILES
    assert manifest == laid  # every tile read, in the order the head laid them
    # the host was chatty throughout: many PINGs a tile, each answered once, in order
    assert len(chatter.tokens) >= 10 * TILES
    assert chatter.tokens == list(range(len(chatter.tokens)))
