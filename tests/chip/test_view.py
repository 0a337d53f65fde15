"""What the saboteur knows of the board on the chip (simulator/chip/machine.py's ChipView: the
persistent record read off the flash, the wall being built from the table) against the firmware's
own memory, with the firmware under CPython on the same SimHal and its store written into a
littlefs image as the chip's would be: the motion, its phase, whether it runs, the wall it
stacks. Fault specs armed on the chip's side strike at the same points as under CPython. No
emulator runs here."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from firmware.board import Board
from firmware.hal.virtual import VirtualHal
from firmware.places import TileSet
from firmware.store import FLAG_MOTION, LOADED, Record, Store
from protocol import codes
from protocol import messages as m
from simulator.chip.flash import file_system
from simulator.chip.machine import STORE_FILES, ChipMachine, ChipView
from simulator.config import default_layout
from simulator.line import Line
from tests.support.simhost import MachineDriver, ends

LAYOUT = default_layout(136)


class Watched:
    """The firmware under CPython, its table also watched as the chip's."""

    def __init__(self, flash: Path) -> None:
        self.driver = MachineDriver()
        self.hal = self.driver.hal
        self.flash = flash
        self._writes = list(self.hal.slot_writes)
        self._write_flash()
        self.cuts = 0
        line = Line(random.Random(1), lambda: 0)
        self.chip = ChipMachine(self.hal, 136, flash, self._cut, line, lambda: 0)
        self.chip.after_slice(flash_written=False, booted=False)  # it sees the board at rest
        #: steps where the view and the firmware disagreed: (what, the view's, the firmware's)
        self.disagreements: list[tuple[str, object, object]] = []

    def _cut(self) -> None:
        self.cuts += 1

    def _write_flash(self) -> None:
        slots = dict(zip(STORE_FILES, self.hal.slots, strict=True))
        self.flash.write_bytes(file_system({path: data for path, data in slots.items() if data}))

    @property
    def board(self) -> Board:
        board = self.driver.board
        assert isinstance(board, Board)
        return board

    def step(self) -> None:
        self.driver.step()
        written = self.hal.slot_writes != self._writes
        if written:
            self._writes = list(self.hal.slot_writes)
            self._write_flash()
        self.chip.after_slice(flash_written=written, booted=False)
        self._compare()

    def _compare(self) -> None:
        view = self.chip.view
        board = self.board
        record = board.record
        pairs: list[tuple[str, object, object]] = [
            ("busy", view.busy, board.busy),
            ("motions begun", view.record.motions_begun, record.motions_begun),
        ]
        if board.busy:
            pairs.append(("phase", view.record.motion_phase, record.motion_phase))
            pairs.append(("set", view.record.motion_set, record.motion_set))
        hal = self.hal
        stacking = hal.running(codes.MOTOR_STACKER_HEAD)
        pushing = hal.running(codes.MOTOR_CHAIN) and not hal.chain_home()
        if board.state == codes.STATE_BUILDING and (stacking or pushing):
            pairs.append(("wall", view.building_wall, board.building_wall))
        self.disagreements += [p for p in pairs if p[1] != p[2]]

    def command(self, message: m.Message) -> list[object]:
        """Send a command and step until what ends it; the events since."""
        driver = self.driver
        mark = driver.send(message)
        while not any(ends(message, e) for e in driver.events[mark:]):
            assert driver.now < 600_000, "the command never ended"
            self.step()
        return driver.events[mark:]


@pytest.fixture
def watched(tmp_path: Path) -> Watched:
    return Watched(tmp_path / "flash.lfs")


def test_the_chips_view_of_a_shuffle_and_a_build_is_the_firmwares(watched: Watched) -> None:
    assert watched.chip.view.found == LOADED  # the record the firmware wrote at its boot
    assert watched.command(m.Shuffle(0))[-1] == m.Done(m.Shuffle.TYPE, 0)
    assert watched.command(m.BuildWalls(0, LAYOUT))[-1] == m.Done(m.BuildWalls.TYPE, 0)
    assert watched.disagreements == []
    assert watched.chip.places() == {"A": "built", "B": "disc"}


def test_a_jam_armed_on_the_chips_side_strikes_at_its_wall(watched: Watched) -> None:
    watched.chip.inject("jam@build:wall=2")
    watched.command(m.Shuffle(0))
    events = watched.command(m.BuildWalls(0, LAYOUT))
    fault = m.Fault(codes.FAULT_SORT_TIMEOUT, codes.SUB_SHUFFLER, codes.PHASE_BUILD, 2)
    assert [e for e in events if isinstance(e, m.Fault)] == [fault]
    wall_tiles = watched.driver.sensors().wall_tiles
    assert wall_tiles[:2] == (34, 34) and 15 <= wall_tiles[2] <= 18 and wall_tiles[3] == 0
    assert watched.chip.saboteur.describe() == []  # hold 0: freed once the motion ended
    assert watched.disagreements == []


def test_a_chain_stuck_on_the_chips_side_pushes_the_wall_it_names(watched: Watched) -> None:
    watched.chip.inject("chain@build:wall=1")
    watched.command(m.Shuffle(0))
    events = watched.command(m.BuildWalls(0, LAYOUT))
    fault = m.Fault(codes.FAULT_CHAIN_HOME, codes.SUB_CHAIN, codes.PHASE_BUILD, 0)
    assert [e for e in events if isinstance(e, m.Fault)] == [fault]
    assert watched.driver.sensors().wall_tiles == (34, 34, 0, 0)


def test_a_power_cut_armed_on_the_chips_side_asks_for_one(watched: Watched) -> None:
    watched.chip.inject("reboot@shuffle:at=10")
    events = watched.command(m.Shuffle(0))  # the CPython board knows nothing of it: it shuffles
    assert events[-1] == m.Done(m.Shuffle.TYPE, 0)
    assert watched.cuts == 1


def test_a_motion_the_record_shows_begun_ends_with_a_boot_until_the_next_record(
    tmp_path: Path,
) -> None:
    hal = VirtualHal(136)
    record, sets = Record(), [TileSet(136), TileSet(136)]
    store = Store(hal, 136)
    flash = tmp_path / "flash.lfs"
    view = ChipView(flash, 136)

    def write(motions: int, flags: int) -> None:
        record.motions_begun, record.flags = motions, flags
        record.motion_phase = codes.PHASE_SHUFFLE
        assert store.save(record, sets)
        slots = dict(zip(STORE_FILES, hal.slots, strict=True))
        flash.write_bytes(file_system({path: data for path, data in slots.items() if data}))
        view.read()

    write(1, FLAG_MOTION)
    assert view.busy and view.record.motions_begun == 1
    view.rebooted()  # the power went: the record on the flash still shows the motion begun
    assert not view.busy
    view.read()  # read again before the new boot writes: still the old boot's
    assert not view.busy
    write(2, FLAG_MOTION)  # the new boot begins a motion
    assert view.busy and view.record.motions_begun == 2
    write(2, 0)
    assert not view.busy


def test_a_store_caught_in_the_middle_of_a_write_keeps_the_view_it_had(tmp_path: Path) -> None:
    """The host reads the chip's flash after each slice that wrote it; a file whose blocks the
    chip is rewriting (here: every data block erased) cannot be read then. The view keeps the
    record it had and reads again after the next write, instead of failing the slice's
    handling (which stopped the chip's slices: a bench run hung so after 7 cycles)."""
    flash = tmp_path / "flash.lfs"
    view = ChipView(flash, 136)
    flash.write_bytes(file_system({path: bytes(range(256)) * 40 for path in STORE_FILES}))
    image = bytearray(flash.read_bytes())
    for block in range(2, len(image) // 4096):  # the metadata pair stays, the data goes
        image[block * 4096 : (block + 1) * 4096] = b"\xff" * 4096
    flash.write_bytes(bytes(image))
    before = (view.found, view.record)
    view.read()  # no exception: the flash cannot be read now
    assert (view.found, view.record) == before
