"""Whole deal cycles on the emulated chip, through the real controller over a pty.

The board is the firmware's build for the table's tiles on MicroPython's stock Pico image, on
the emulated RP2040 wired to the simulated table (simulator/chip/); the host is `mjtable run
--config` in its own process, opening the chip's pty as it opens a board's port, with
``[board] wait_factor`` for a chip that runs slower than real time and ``rtscts`` as the
reference board is wired (the chip's line then waits on UART0's RTS). Each test deals a cycle to
the end: a shuffle, the walls built, DEAL, the walls lifted, the dice, the dealt state; the
faults (a jam struck by its fault spec, a power cut, the firmware hung until its watchdog resets
the chip) strike the table's mechanics or the board and the table deals again with at most one
CLEAR FAULT.

A cycle takes minutes here (the emulation runs the chip at 0.1 to 0.3 of real time), so these
are not part of `make test`: `make chip-long` runs them, two at a time, and `.ci/run` after
`make test-all` (docs/chip.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from controller.api.client import ApiClient
from controller.audit.verify import verify
from controller.firmware.build import build, default_source_root
from rules.dealt import DealtState
from simulator.chip.board import ChipBoard
from simulator.chip.config import ChipConfig
from tests.chip.conftest import need_chip
from tests.support.api_watcher import Watcher
from tests.support.port_service import PortService

pytestmark = [
    pytest.mark.xdist_group("chip"),
    pytest.mark.once,
    pytest.mark.chip_long,
    pytest.mark.timeout(1800),
]

#: the host's waits on the chip, times a real board's (docs/chip.md)
WAIT_FACTOR = 30.0
#: wall seconds a phase may take here at most (a build: 22 s of chip time)
PHASE_S = 1200.0
#: the profile of each table
PROFILES = {108: "sichuan", 136: "wenzhou", 144: "simplified"}
#: the faults strike the smallest table: the same on each, and its cycle the shortest
FAULTS_ON = 108


class ChipTable:
    """The chip (in this process, its mechanics at hand) and the service on its pty."""

    def __init__(self, where: Path, tiles: int, seed: int) -> None:
        firmware = build(default_source_root(), where / "firmware", tiles=tiles).directory
        # speed 0: the chip is slower than real time while it works anyway (docs/chip.md)
        self.board = ChipBoard(
            ChipConfig(build=firmware, tiles=tiles, seed=seed, speed=0, shared=need_chip())
        )
        path = self.board.open_pty()
        self.board.start()
        self.service = PortService(
            path, profile=PROFILES[tiles], wait_factor=WAIT_FACTOR, rtscts=True, start_s=PHASE_S
        )
        self.watcher: Watcher | None = None
        self.clears = 0

    def start(self) -> Watcher:
        self.service.start()
        self.watcher = Watcher(self.service.socket)
        return self.watcher

    def stop(self) -> None:
        if self.watcher is not None:
            self.watcher.close()
        self.service.stop()
        self.board.stop()

    def client(self) -> ApiClient:
        return ApiClient(self.service.socket)

    def deal(self, since: int = 0) -> DealtState:
        """Shuffle, wait for the walls, DEAL, wait for the dealt state; return it."""
        assert self.watcher is not None
        with self.client() as client:
            shuffle = client.shuffle()
            assert shuffle.accepted, shuffle
            self.watcher.wait(lambda e: e.type == "phase" and e.state == "ready", PHASE_S, since)
            deal = client.deal()
            assert deal.accepted, deal
            event = self.watcher.wait(lambda e: e.type == "dealt", PHASE_S, since)
            dealt = client.last_dealt()
        assert dealt is not None and dealt.cycle_id == event.cycle
        return dealt

    def clear_fault(self) -> None:
        """One CLEAR FAULT; return once the table is at rest again (the board's report read)."""
        assert self.watcher is not None
        mark = self.watcher.mark()
        with self.client() as client:
            self.clears += 1
            result = client.clear_fault()
            assert result.accepted, result
        self.watcher.wait(lambda e: e.type == "phase" and e.state == "idle", PHASE_S, mark)


@pytest.fixture
def table_of(tmp_path: Path) -> Iterator[Callable[..., ChipTable]]:
    made: list[ChipTable] = []

    def make(tiles: int, seed: int = 11) -> ChipTable:
        table = ChipTable(tmp_path, tiles, seed)
        made.append(table)
        return table

    try:
        yield make
    finally:
        for table in made:
            table.stop()


@pytest.mark.parametrize("tiles", sorted(PROFILES))
def test_the_table_deals_on_the_chip(table_of: Callable[..., ChipTable], tiles: int) -> None:
    table = table_of(tiles)
    watcher = table.start()
    assert table.board.transport.host_cts()  # the service's port waits on the board's RTS
    dealt = table.deal()
    hands = sum(len(hand) for hand in dealt.hands.values())
    walls = len(dealt.live_wall) + len(dealt.colline)
    assert hands + walls == tiles
    assert dealt.profile.name == PROFILES[tiles]
    with table.client() as client:
        status = client.status()
    assert status.state == "dealt" and status.fault is None
    assert watcher.of("fault") == []
    chain = verify(table.service.audit)
    assert chain.ok, str(chain)


def test_a_jam_on_the_chip_is_cleared_with_one_press(table_of: Callable[..., ChipTable]) -> None:
    table = table_of(FAULTS_ON)
    watcher = table.start()
    # the fault spec, as `mjtable sim --chip --fault` takes it: the saboteur strikes when the
    # chip builds wall 1 (the motion read from the board's record on the chip's flash, the wall
    # from the chain): a tile sticks between the disc and the head
    spec = table.board.control.inject("jam@build:wall=1")
    assert (spec.kind, spec.wall) == ("jam", 1), spec
    assert table.board.snapshot()["pending_faults"] == [str(spec)]
    with table.client() as client:
        assert client.shuffle().accepted
    fault = watcher.wait(lambda e: e.type == "fault", PHASE_S)
    assert (fault.code, fault.phase) == ("SORT_TIMEOUT", "BUILD"), fault
    assert table.board.snapshot()["pending_faults"] == []  # the saboteur struck
    table.board.control.repair()  # the technician frees it
    mark = watcher.mark()
    table.clear_fault()
    table.deal(since=mark)
    assert table.clears == 1


def restart_and_deal(table: ChipTable, restart: Callable[[], None]) -> None:
    """``restart`` the chip; the host sees the board back with a new session; at most one
    CLEAR FAULT, then the next deal."""
    watcher = table.watcher
    assert watcher is not None
    with table.client() as client:
        before = client.status().board
    assert before is not None
    mark = watcher.mark()
    restart()
    down = watcher.wait(lambda e: e.type == "link" and not e.up, PHASE_S, mark)
    back = watcher.wait(lambda e: e.type == "link" and e.up, PHASE_S, watcher.events.index(down))
    assert back.board["session"] != before["session"]
    at_rest = watcher.wait(
        lambda e: e.type == "phase" and e.state in ("fault", "idle"), PHASE_S, mark
    )
    if at_rest.state == "fault":
        table.clear_fault()
    table.deal(since=watcher.mark())
    assert table.clears <= 1


def test_a_power_cut_on_the_chip_mid_shuffle_deals_again(
    table_of: Callable[..., ChipTable],
) -> None:
    table = table_of(FAULTS_ON)
    watcher = table.start()
    with table.client() as client:
        assert client.shuffle().accepted
    watcher.wait(lambda e: e.type == "progress", PHASE_S)
    # the board comes back from its flash
    restart_and_deal(table, table.board.power_cut)
    assert (table.board.boots, table.board.watchdog_resets) == (2, 0)


def test_a_watchdog_reset_on_the_chip_mid_build_deals_again(
    table_of: Callable[..., ChipTable],
) -> None:
    table = table_of(FAULTS_ON)
    watcher = table.start()
    with table.client() as client:
        assert client.shuffle().accepted
    watcher.wait(lambda e: e.type == "phase" and e.state == "building", PHASE_S)
    # the firmware stops in the middle of the build: its watchdog, not fed, restarts the chip
    restart_and_deal(table, table.board.hang)
    assert (table.board.boots, table.board.watchdog_resets) == (2, 1)
