"""Configuration of the simulated board: which table it is, how fast it runs, what it lacks.

Kept free of heavy imports: the ``mjtable sim`` parser and the controller build a SimConfig
loading only the firmware's configuration. ``Timings``, the tile counts and the standard
layout are the firmware's own (firmware/config.py): the nominal durations and the limits the
board keeps; the table's mechanisms move at the speeds of
firmware/hal/mechanics.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from firmware.config import MAX_STACKS_PER_WALL, TILE_COUNTS, Timings, stacks_per_wall
from firmware.config import default_layout as _board_layout
from simulator.faults import FaultSpec, FaultSpecError
from simulator.faultspec import parse_fault

__all__ = [
    "MAX_STACKS_PER_WALL",
    "TILE_COUNTS",
    "SimConfig",
    "SimConfigError",
    "Timings",
    "default_layout",
    "stacks_per_wall",
]

# TILE_COUNTS (108 Sichuan, 136 Wenzhou/WSOM, 144 simplified), MAX_STACKS_PER_WALL (the longest
# row a wall channel holds) and stacks_per_wall are the board's (firmware/config.py).


class SimConfigError(ValueError):
    """A SimConfig field is out of range; the message names the field and the value."""


def default_layout(tiles: int) -> tuple[tuple[int, ...], ...]:
    """The standard wall layout of TABLE.md section 2, as stack heights per wall.

    108 tiles: 13 full stacks and one half stack at the wall's left end (position 14);
    136 tiles: 17 stacks; 144 tiles: 18 stacks.
    """
    if tiles not in TILE_COUNTS:
        raise SimConfigError(f"tiles = {tiles!r}: must be one of 108, 136, 144")
    return _board_layout(tiles)


@dataclass
class SimConfig:
    """What the simulated board is.

    tiles: 108, 136 or 144. seed: None draws from the OS's CSPRNG (secrets.SystemRandom);
    an integer 0..2**32-1 makes shuffles and dice reproducible and is reported in HELLO_REPLY.
    speed: 1 real time, 0.1 ten times faster, 0 as fast as possible (no waiting at all: each
    event is due as soon as the host has acknowledged the previous one). reader / dice: whether
    the tile reader and the dice unit are fitted; buttons: seat buttons wired to the board.
    faults: specs injected at start (strings like ``"jam@build:wall=2"`` or FaultSpec objects).
    serial: reported in HELLO_REPLY (the firmware version is the firmware's own). timings: the
    firmware's nominal durations and limits.
    """

    tiles: int = 136
    seed: int | None = None
    speed: float = 1.0
    reader: bool = True
    dice: bool = True
    buttons: bool = True
    faults: list[str | FaultSpec] = field(default_factory=list)
    serial: str = "MJSIM-0001"
    timings: Timings = field(default_factory=Timings)

    def __post_init__(self) -> None:
        if self.tiles not in TILE_COUNTS or isinstance(self.tiles, bool):
            raise SimConfigError(f"tiles = {self.tiles!r}: must be one of 108, 136, 144")
        if self.seed is not None and (
            not isinstance(self.seed, int)
            or isinstance(self.seed, bool)
            or not 0 <= self.seed <= 0xFFFFFFFF
        ):
            raise SimConfigError(f"seed = {self.seed!r}: must be an integer 0..4294967295 or None")
        if (
            isinstance(self.speed, bool)
            or not isinstance(self.speed, int | float)
            or not math.isfinite(self.speed)
            or self.speed < 0
        ):
            raise SimConfigError(f"speed = {self.speed!r}: must be a finite number >= 0")
        serial = self.serial
        if (
            not isinstance(serial, str)
            or len(serial) > 24
            or any(not " " <= ch <= "~" for ch in serial)
        ):
            raise SimConfigError(f"serial = {serial!r}: must be printable ASCII, 24 characters max")
        if not isinstance(self.timings, Timings):
            raise SimConfigError(f"timings = {self.timings!r}: must be a firmware.config.Timings")
        parsed: list[str | FaultSpec] = []
        for spec in self.faults:
            if isinstance(spec, FaultSpec):
                parsed.append(spec)
            elif isinstance(spec, str):
                try:
                    parsed.append(parse_fault(spec))
                except FaultSpecError as exc:
                    raise SimConfigError(f"faults: {exc}") from exc
            else:
                raise SimConfigError(f"faults: {spec!r} is neither a spec string nor a FaultSpec")
        self.faults = parsed

    @property
    def stacks_per_wall(self) -> int:
        return stacks_per_wall(self.tiles)

    def fault_specs(self) -> list[FaultSpec]:
        """The start-up faults, parsed."""
        return [s for s in self.faults if isinstance(s, FaultSpec)]
