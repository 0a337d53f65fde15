"""What an emulated board is: ``ChipConfig``, checked when it is made (the firmware a build or an
image, the tiles, the seed, the speed, the slice, the I2C parts absent, the fault specs), and the
tiles a firmware build drives. simulator/chip/board.py's ``ChipBoard`` runs one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from simulator.chip.wiring import board
from simulator.config import TILE_COUNTS
from simulator.faults import FaultSpec, FaultSpecError, chip_refusal
from simulator.faultspec import parse_fault
from simulator.transport import SimulatorError

#: the parts on the board's I2C bus (the two expanders, the dice unit): what ``absent`` may name
I2C_PARTS: tuple[int, ...] = (board()["XIN"], board()["XOUT"], board()["DICE_I2C"])


@dataclass(frozen=True)
class ChipConfig:
    """What the emulated board is. ``build``: a `mjtable firmware build` directory, put on the
    flash when ``flash`` does not exist yet; or ``image``: the UF2 (or raw image) of `mjtable
    firmware image`, booted instead of MicroPython's stock image. ``flash``: the flash file
    system's file (None: a temporary one). ``tiles``: the table's, which must be the build's
    (main.py's TILES) or the image's.
    ``seed``: the table's shuffles and dice. ``speed``: 1, the chip's clock never ahead of real
    time; 0, as fast as the emulation runs. ``shared``: the folder with MicroPython's image and
    the boot ROM (None: $MJTABLE_RP2040_DIR, else ../shared/rp2040 beside the checkout).
    ``absent``: the I2C addresses that do not answer from power-on (an expander unplugged,
    0x20 or 0x21; the dice unit, 0x30); ``ChipBoard.plug()`` brings one back. ``faults``: fault
    specs armed at start (docs/simulator.md; those that mean nothing on a chip are refused)."""

    build: Path | None = None
    flash: Path | None = None
    tiles: int = 136
    seed: int | None = None
    reader: bool = True
    dice: bool = True
    speed: float = 1.0
    shared: Path | None = None
    slice_ms: int = 1
    absent: tuple[int, ...] = ()
    faults: tuple[str | FaultSpec, ...] = ()
    image: Path | None = None

    def __post_init__(self) -> None:
        if (self.build is None) == (self.image is None):
            raise SimulatorError(
                "the chip runs a firmware build (on the flash of MicroPython's stock image) or "
                "an image with the firmware frozen in: give one of the two"
            )
        if self.tiles not in TILE_COUNTS:
            raise SimulatorError(f"tiles = {self.tiles!r}: must be one of 108, 136, 144")
        seed = self.seed
        if seed is not None and (isinstance(seed, bool) or not 0 <= seed <= 0xFFFFFFFF):
            raise SimulatorError(f"seed {seed!r}: must be an integer 0..4294967295")
        if self.speed not in (0, 1):
            raise SimulatorError(
                f"speed {self.speed:g}: the chip runs at speed 1 (its clock never ahead of real "
                "time) or 0 (as fast as it emulates); its link keeps the time of the chip"
            )
        if not 1 <= self.slice_ms <= 100:
            raise SimulatorError(f"slice {self.slice_ms} ms: must be 1..100")
        for address in self.absent:
            if address not in I2C_PARTS:
                raise SimulatorError(
                    f"absent I2C address {address!r}: the board's parts are at "
                    + ", ".join(f"0x{a:02x}" for a in I2C_PARTS)
                )
        for spec in self.faults:
            try:
                parsed = parse_fault(spec) if isinstance(spec, str) else spec
            except FaultSpecError as exc:
                raise SimulatorError(str(exc)) from None
            refusal = chip_refusal(parsed)
            if refusal is not None:
                raise SimulatorError(refusal)


def build_tiles(build: Path) -> int | None:
    """The tile sets the build's main.py drives (its ``TILES = N``), None when it says none."""
    try:
        text = (build / "main.py").read_text(encoding="utf-8")
    except OSError:
        return None
    found = re.search(r"^TILES\s*=\s*(\d+)\s*$", text, re.MULTILINE)
    return int(found.group(1)) if found else None
