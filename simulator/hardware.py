"""The simulated table's hardware: the firmware's HAL over CPython physics. No I/O, no clock.

``SimHal`` is the firmware's virtual hardware (firmware/hal/virtual.py over the mechanics of
firmware/hal/mechanics.py: motors that move mechanisms, sensors that see them, edge counters,
limit switches, a tile reader, a dice unit, a store, a UART) with what a simulated table adds:

- the shuffles and the dice come from Python's generators: ``random.Random(seed)`` (reproducible,
  reported in HELLO_REPLY) or ``secrets.SystemRandom()`` (the OS's CSPRNG); the session ids from
  ``secrets`` always, so two runs never share one;
- every tile of a set is a distinct physical object: ``pickup_order(s)`` says which tile (0..n-1,
  in the set's face order) the pick-up takes in turn, ``truth(s)`` the faces standing in walls;
- the temperature follows an exact exponential (so the table may take long steps at rest);
- the link's clock (``link_ms``) is given by the server: real time, while the table's clock
  (``now``) runs at ``speed``;
- the flasher's manifest describes the sources the simulator runs (``source_manifest()``), so
  the firmware reports their build hash, computed by firmware/buildinfo.py's one function;
- faults are hardware conditions set by simulator/sabotage.py through the Mechanics methods
  (``block``, ``jam_feed``, ``kill_reader``, ``short_driver``, ``break_ntc``...), plus
  ``fail_next_read()`` (a bus error the firmware meets in a HAL call) and ``repair()``, which
  also cools an overheated board.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import platform
import random
import secrets
from pathlib import Path

import firmware
import protocol
from firmware.buildinfo import build_hash
from firmware.config import faces
from firmware.hal import SENSE_CHAIN_HOME, SENSE_DOWN, SENSE_UP, TICKS_MASK
from firmware.hal.mechanics import (
    AMBIENT_DC,
    COOL_TAU_MS,
    DICE_THROW_MS,
    HEAT_TAU_MS,
    NTC_WIRED,
    RUN_RISE_DC,
)
from firmware.hal.virtual import VirtualHal
from firmware.version import FW_MAJOR, FW_MINOR, FW_PATCH

#: what repair() cools an overheated board to (0.1 degC): below the 75.0 degC of overheat_clear
REPAIRED_DC = 700
#: the largest step the mechanisms take while a motor turns (ms): edges are counted whatever the
#: step, the positions of what moves are exact to it (the server's passes are no longer)
MOVING_STEP_MS = 100


class BusError(OSError):
    """What a HAL call raises when the board's bus fails (the ``internal`` fault)."""


@functools.cache
def source_manifest() -> bytes:
    """A flasher's manifest for the sources the simulator runs: every .py file of firmware/ and
    protocol/ (paths as on a board, ``firmware/app.py``), their SHA-256 and the build hash of
    firmware/buildinfo.py over them."""
    files: list[tuple[str, str, int]] = []
    for package in (firmware, protocol):
        assert package.__file__ is not None
        root = Path(package.__file__).resolve().parent
        for path in sorted(root.rglob("*.py")):
            data = path.read_bytes()
            rel = f"{package.__name__}/{path.relative_to(root).as_posix()}"
            files.append((rel, hashlib.sha256(data).hexdigest(), len(data)))
    manifest = {
        "format": 1,
        "firmware_version": f"{FW_MAJOR}.{FW_MINOR}.{FW_PATCH}",
        "build_hash": build_hash((path, digest) for path, digest, _ in files),
        "compiler": f"none: the sources, run by {platform.python_implementation()} "
        f"{platform.python_version()}",
        "files": [{"path": p, "sha256": d, "size": n} for p, d, n in files],
    }
    return json.dumps(manifest, indent=1).encode()


class SimHal(VirtualHal):
    """The simulated table: VirtualHal's mechanisms with Python's randomness and real time."""

    def __init__(
        self,
        tiles: int,
        seed: int | None,
        reader: bool = True,
        dice: bool = True,
        buttons: bool = True,
        serial: str = "MJSIM-0001",
    ) -> None:
        super().__init__(tiles, seed if seed is not None else 1, reader, dice, buttons, serial)
        self._sim_seed = seed
        #: the shuffles and the dice: seeded, or the OS's CSPRNG
        self.source: random.Random = (
            random.Random(seed) if seed is not None else secrets.SystemRandom()
        )
        self._faces = bytes(faces(tiles))
        #: which tile (index into the set's faces) the pick-up takes in turn, per set
        self._ids = [list(range(tiles)), list(range(tiles))]
        self.manifest_bytes = source_manifest()
        #: the link's clock (real milliseconds), given by the server
        self.link_ms = 0
        self._bus_error = False
        self._heat_exact = float(self._temp)

    # --- what differs from the ideal hardware ------------------------------------------------

    def seed(self) -> int | None:
        return self._sim_seed

    def random_u32(self) -> int:
        session = 0
        while session == 0:
            session = secrets.randbits(32)
        return session

    def link_ticks_ms(self) -> int:
        return self.link_ms & TICKS_MASK

    def level(self, sensor: int) -> int:
        if self._bus_error:
            self._bus_error = False
            raise BusError("I2C bus error reading the input expander")
        return super().level(sensor)

    def fail_next_read(self) -> None:
        """The next sensor read fails (a bus error): the firmware meets it in its own logic."""
        self._bus_error = True

    # --- the tiles -----------------------------------------------------------------------------

    def draw(self, tile_set: int) -> None:
        """The order the set's tiles will be picked up in, drawn now (a uniform permutation:
        the source's Fisher-Yates). The pick-up draws it when it first takes a mixed set."""
        ids = list(range(self.tiles))
        self.source.shuffle(ids)
        self._ids[tile_set] = ids
        faces_ = self._faces
        self.order[tile_set][:] = bytes(faces_[i] for i in ids)
        self._mixed[tile_set] = False

    def _draw(self, s: int) -> None:
        self.draw(s)

    def pickup_order(self, tile_set: int) -> list[int]:
        """The tiles (indices into the set's faces, code order) in the order of the last draw."""
        return list(self._ids[tile_set])

    def truth(self, tile_set: int) -> list[int] | None:
        """The faces of the set's walls in manifest order, when all of them stand (under the
        table or on it); None otherwise. The physical truth, reader or not."""
        laid = self.laid[tile_set]
        if len(laid) != self.tiles or tile_set not in (self.bench, self.top):
            return None
        return list(laid)

    @property
    def tiles_staged(self) -> int:
        """Tiles laid since the chain last pushed a wall (the wall being stacked)."""
        return self._staged

    # --- the dice --------------------------------------------------------------------------------

    def _throw(self) -> None:
        if self._tumbled >= DICE_THROW_MS:  # long enough to tumble
            for i in range(3):
                self._dice[i] = self.source.randint(1, 6)
        self._tumbled = 0

    # --- time and heat ---------------------------------------------------------------------------

    def advance(self, ms: int) -> None:
        """Time passes. While a motor turns the mechanisms move in steps of MOVING_STEP_MS; at
        rest nothing moves but the heat, in one step."""
        while ms > 0:
            if self.powered or self._landings:
                dt = ms if ms < MOVING_STEP_MS else MOVING_STEP_MS
            else:
                dt = ms
            self._step(dt)
            ms -= dt

    def _warm(self, dt: int, running: bool) -> None:
        """Exact exponential approach to ambient (+ the running rise), plus a heat source."""
        target = (AMBIENT_DC + (RUN_RISE_DC if running else 0)) * 1000.0
        tau = HEAT_TAU_MS if running else COOL_TAU_MS
        value = target + (self._heat_exact - target) * math.exp(-dt / tau)
        value += self.heat_dc_per_s * dt
        self._heat_exact = value
        self._temp = int(value)

    def set_temperature(self, dc: int) -> None:
        super().set_temperature(dc)
        self._heat_exact = float(self._temp)

    def repair(self) -> None:
        """A technician frees every mechanism, homes the head and the chain, clears the belt,
        stops the heat, revives the reader and the dice sensor, and cools an overheated
        board."""
        super().repair()
        self._bus_error = False
        self.absent_part = 0
        if self._temp > REPAIRED_DC * 1000:
            self.set_temperature(REPAIRED_DC)

    # --- what the injector does and undoes ------------------------------------------------------

    def free(self, motor: int) -> None:
        """The motor's mechanism moves again (a blocked motor, a stuck plate)."""
        self.blocked[motor] = 0

    def free_head(self) -> None:
        """The stacker head moves again, back at home, the tiles behind it cleared."""
        self.blocked[1] = 0
        self.belt_full = False
        self._head = 0

    def free_chain(self) -> None:
        """The chain moves again, back at home."""
        self.blocked[2] = 0
        self._chain = 0

    def mend_driver(self, motor: int) -> None:
        """The motor's shorted driver is replaced."""
        self.shorted[motor] = False

    def mend_ntc(self) -> None:
        """The heat-sink NTC is wired again."""
        self.ntc_wire = NTC_WIRED

    def free_amp(self, motor: int) -> None:
        """The motor's current-sense amplifier reads again."""
        self.amp_stuck[motor] = False

    def unjam_feed(self) -> None:
        self.feed_jammed = False

    def revive_reader(self) -> None:
        self.reader_dead = False

    def revive_dice_sensor(self) -> None:
        self.dice_dead = False

    def unplug(self, address: int) -> None:
        """The part at I2C ``address`` stops answering (its cable out): the firmware finds it
        missing the next time it talks to it."""
        self.absent_part = address

    def plug(self) -> None:
        """The part that stopped answering answers again (its cable reseated)."""
        self.absent_part = 0

    def forget_tile_faults(self) -> None:
        """No tile still to drop, add or misread (a tile fault that did not strike)."""
        self._drop = self._extra = self._misread = 0

    # --- what the injector reads -----------------------------------------------------------------

    def between(self, lift: int) -> bool:
        """Lift ``lift`` (0..3 plates E S W N, 4 the centre lift) is at neither limit switch."""
        return not self.level_raw(SENSE_UP + lift) and not self.level_raw(SENSE_DOWN + lift)

    def chain_home(self) -> bool:
        return bool(self.level_raw(SENSE_CHAIN_HOME))

    def level_raw(self, sensor: int) -> int:
        """A sensor's level, read by the simulator (never a bus error)."""
        return super().level(sensor)
