"""The emulated board's table for the fault specs and the control channel: the same saboteur
(simulator/sabotage.py) on the same SimHal the chip's pins are wired to (simulator/chip/
wiring.py), so a fault spec is the same condition of the table's hardware on the chip as under
CPython, and the firmware finds it from what its pins, its ADC and its I2C bus show.

The saboteur strikes at its point of a motion: it has to know which motion runs, of which set,
and how far a build got. Under CPython it reads that from the firmware's own Board; on the chip
the firmware's memory is the chip's, and ``ChipView`` reads it from what a technician could
read: the board's persistent record (firmware/store.py: the motions begun, the phase and the
set of the last one, whether it ended), which the firmware writes at every motion's start and
end, read from the chip's flash file system with the firmware's own Store each time the chip
has written its flash; and the wall being built from the table (the walls the chain has carried
onto their plates since the build began).

What only the firmware's memory holds (its state, its readings) is not read here: the control
channel's ``state``, ``sensors`` and ``wait_state`` are refused in one line each (the board
answers READ_STATUS and SENSORS on its link), and so is ``press_button`` (the reference board
wires no seat buttons). The fault kinds that mean nothing on a chip are refused the same way
(simulator/faults.py, OFF_THE_CHIP).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from firmware.config import Timings
from firmware.hal import Hal
from firmware.places import TileSet
from firmware.store import BLANK, FLAG_MOTION, LOADED, Record, Store
from protocol import codes
from protocol import messages as m
from simulator.chip.flash import read_files
from simulator.control import ControlError
from simulator.faults import FaultSpec, FaultSpecError, chip_refusal
from simulator.faultspec import parse_fault
from simulator.sabotage import Saboteur
from simulator.transport import SimulatorError

if TYPE_CHECKING:
    from simulator.hardware import SimHal
    from simulator.line import Line

__all__ = ["STORE_FILES", "ChipMachine", "ChipView"]

#: the store's two slots on the board's flash: firmware/hal/rp2.py's files under its store_dir,
#: "/"
STORE_FILES = ("/store0.bin", "/store1.bin")


class _Slots(Hal):
    """The two slots as the flash holds them, for the firmware's Store to read."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self._slots = [files.get(path, b"") for path in STORE_FILES]

    def store_read(self, slot: int, buf: bytearray) -> int:
        data = self._slots[slot][: len(buf)]
        buf[: len(data)] = data
        return len(data)


class ChipView:
    """The board as the saboteur sees it on the chip (simulator/sabotage.py's BoardView): the
    persistent record on the chip's flash, and the wall a build stacks, from the table."""

    def __init__(self, flash: Path, tiles: int) -> None:
        self.flash = flash
        self.tiles = tiles
        self.record = Record()
        self.sets = [TileSet(tiles), TileSet(tiles)]
        #: what the store found on the flash at the last read (firmware/store.py: BLANK...)
        self.found = BLANK
        self._seq = -1  # the sequence number of the record read
        self._stale = -2  # the record the last boot left (a motion it shows ended then)
        self._build: int | None = None  # motions_begun of the build being watched
        self._walls = 0
        self._staged = 0

    def read(self) -> None:
        """Read the record again from the flash (the chip wrote it); a flash the host cannot
        read now (littlefs in the middle of a write reads as before it) keeps the last one."""
        try:
            files = read_files(self.flash.read_bytes(), STORE_FILES)
        except (OSError, SimulatorError):
            return
        record = Record()
        sets = [TileSet(self.tiles), TileSet(self.tiles)]
        store = Store(_Slots(files), self.tiles)
        self.found = store.load(record, sets)
        if self.found == LOADED:
            self.record, self.sets, self._seq = record, sets, store.seq

    def rebooted(self) -> None:
        """The chip started again: the motion the record shows begun ended with it."""
        self._stale = self._seq

    @property
    def busy(self) -> bool:
        return bool(self.record.flags & FLAG_MOTION) and self._seq != self._stale

    @property
    def building_wall(self) -> int:
        return min(self._walls, 3)

    def watch(self, hal: SimHal) -> None:
        """After each slice: a wall is done when the chain carries the staged tiles away."""
        record = self.record
        if not (self.busy and record.motion_phase == codes.PHASE_BUILD):
            self._build = None
            return
        staged = hal.tiles_staged
        if self._build != record.motions_begun:
            self._build = record.motions_begun
            self._walls = 0
        elif self._staged and not staged:
            self._walls += 1
        self._staged = staged


class ChipMachine:
    """The table under the chip, as BoardControl acts on it (simulator/control.py's
    TableMachine): faults armed and struck by the saboteur, the power, the technician."""

    def __init__(
        self,
        hal: SimHal,
        tiles: int,
        flash: Path,
        power_cut: Callable[[], None],
        line: Line,
        wall_ms: Callable[[], int],
    ) -> None:
        self.hal = hal
        self.saboteur = Saboteur(hal, Timings(), tiles)
        self.view = ChipView(flash, tiles)
        self.view.read()
        self._power_cut = power_cut
        self._line = line
        self._wall_ms = wall_ms

    def inject(self, spec: FaultSpec | str) -> FaultSpec:
        """Arm a fault (at once when its phase is ``now``); FaultSpecError for a spec that is
        wrong or means nothing on a chip."""
        parsed = parse_fault(spec) if isinstance(spec, str) else spec
        refusal = chip_refusal(parsed)
        if refusal is not None:
            raise FaultSpecError(refusal)
        parsed = self.saboteur.arm(parsed, self.hal.now)
        self._carry_out()
        return parsed

    def after_slice(self, *, flash_written: bool, booted: bool) -> None:
        """The chip ran a slice (it wrote its flash, it started again): the saboteur watches."""
        view = self.view
        if flash_written:  # what the chip wrote before it started again, if it did
            view.read()
        if booted:
            view.rebooted()
        view.watch(self.hal)
        self.saboteur.observe(view, self.hal.now)
        self._carry_out()

    def _carry_out(self) -> None:
        requests = self.saboteur.requests
        for what, a, b in requests:
            if what == "reboot":
                self._power_cut()
            elif what == "noise":
                self._line.set_noise(a, b)
            else:
                self._line.cut_until_ms(self._wall_ms() + int(a * 1000))
        requests.clear()

    def reboot(self) -> None:
        """The board's power goes and comes back (the chip, its expanders; the flash kept)."""
        self._power_cut()

    def repair(self) -> None:
        """A technician undoes every hardware condition (but the cover and the E-stop)."""
        self.saboteur.repair()
        self.hal.repair()

    def truth(self, tile_set: int) -> list[int] | None:
        """The faces of a set whose walls all stand, in manifest order."""
        if tile_set not in (0, 1):
            raise ValueError(f"tile_set {tile_set!r}: expected 0 (A) or 1 (B)")
        return self.hal.truth(tile_set)

    def places(self) -> dict[str, str]:
        """Where the board's record on the flash says each set is: {"A": "disc", ...}."""
        return {
            name: codes.place_name(self.view.sets[i].place).lower()
            for i, (name, _, _) in codes.TILE_SETS.items()
        }

    # --- what only the firmware's memory holds -----------------------------------------------

    @property
    def state(self) -> str:
        raise ControlError(
            "state: the board's state is in the chip's memory, not the simulator's; ask the "
            "board itself (READ_STATUS on its link: mjtable status)"
        )

    def sensors(self) -> m.SensorData:
        raise ControlError(
            "sensors: what the firmware reads is in the chip's memory, not the simulator's; ask "
            "the board itself (SENSORS on its link)"
        )

    def press_button(self, button: int, seat: int) -> None:
        raise ControlError(
            "press_button: the reference board wires no seat buttons (the panel is the "
            "controller's own USB device)"
        )
