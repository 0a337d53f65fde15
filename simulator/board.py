"""The table's machine, modelled: two tile sets, motors, sensors, timings and faults. No I/O.

BoardModel is driven by the protocol's command objects (``handle(message, now)``) and by time
(``advance(now)``); ``now`` is the table's clock in milliseconds, passed in. What the board has
to say goes to ``outbox`` as protocol event objects. The board's state is a ``transitions``
machine (auto_transitions=False) whose states are the protocol's board states.

The two sets and where they are (``Place``)::

    DISC      loose in the shuffle disc, order unknown (the played tiles after COLLECT)
    SHUFFLED  in the disc, shuffled: the pick-up order is known
    BUILDING  being built into walls under the table
    PARTIAL   a build that stopped or faulted: partial walls under the table, the rest in the disc
    BUILT     four walls built under the table, manifest known (from the tile reader)
    UP        walls raised on the table: the set being played

At most one set is on the bench under the table and one on top. The table's alternation: while
set A is UP and played, set B is shuffled and built underneath; COLLECT drops A into the disc,
LIFT raises B; then A is shuffled and built underneath, and so on. At power-on both sets are loose
in the disc, the surface is empty and the plates are down (a reboot comes back the same way: the
board has forgotten where the tiles were). The disc can hold both sets: the tile reader at the
pick-up tells the sets apart by their backs, so SHUFFLE s takes only the tiles of set s.

Which command is legal (besides the state checks: E-stop, fault, busy, cover open):

    SHUFFLE s        s in DISC, SHUFFLED or PARTIAL        (else BAD_STATE, SET_NOT_IN_DISC)
    BUILD_WALLS s    s SHUFFLED                             (else BAD_STATE, SET_NOT_SHUFFLED)
                     and the bench free: no set BUILT       (else BAD_STATE, BENCH_OCCUPIED)
    LIFT_WALLS s     s BUILT                                (else BAD_STATE, SET_NOT_BUILT)
                     and no set UP                          (else BAD_STATE, SURFACE_OCCUPIED)
    COLLECT          always (at rest); with nothing on top it only lowers the plates and
                     cycles the trap
    READ_MANIFEST s  s BUILT or UP                          (else BAD_STATE, SET_NOT_BUILT)
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

from transitions import Machine

from protocol import codes
from protocol import messages as m

# The detail byte of REFUSED(BAD_STATE) is a protocol table (protocol.codes.BLOCKS).
from protocol.codes import (
    BLOCK_BENCH_OCCUPIED,
    BLOCK_BOOTING,
    BLOCK_COVER_OPEN,
    BLOCK_SET_NOT_BUILT,
    BLOCK_SET_NOT_IN_DISC,
    BLOCK_SET_NOT_SHUFFLED,
    BLOCK_SURFACE_OCCUPIED,
    RESULT_OK,
    RESULT_STOPPED,
)
from protocol.errors import FieldError, UnknownType, WrongRole
from protocol.events import BadMessage, HelloReceived
from simulator.config import MAX_STACKS_PER_WALL, SimConfig, Timings
from simulator.faults import FOREVER, FaultSpec, parse_fault

# --- Physical constants --------------------------------------------------------------------------

AMBIENT_C = 24.0
OVERHEAT_LIMIT_C = 85.0
OVERHEAT_CLEAR_C = 75.0
HEAT_RISE_C = 20.0  # steady rise above ambient with motors running
HEAT_TAU_MS = 600_000.0
COOL_TAU_MS = 120_000.0

#: nominal running current per motor (mA) and the over-current limit
NOMINAL_MA: tuple[int, ...] = (850, 420, 640, 1150, 1150, 1150, 1150, 900, 380)
LIMIT_MA: tuple[int, ...] = tuple(2 * n for n in NOMINAL_MA)
STALL_FACTOR = 2.6
STRAIN_FACTOR = 1.4  # a plate pushing against an obstruction

LIFT_MOTORS = (codes.MOTOR_LIFT_E, codes.MOTOR_LIFT_S, codes.MOTOR_LIFT_W, codes.MOTOR_LIFT_N)

# collect segments, as fractions of collect_ms
COLLECT_PLATES_END = 0.30  # plates down
COLLECT_TRAP_OPEN_END = 0.40  # centre lift down: the trap opens
COLLECT_DROP_END = 0.85  # tiles drop into the disc
# then the centre lift comes back up and closes the trap


class Place(Enum):
    DISC = "disc"
    SHUFFLED = "shuffled"
    BUILDING = "building"
    PARTIAL = "partial"
    BUILT = "built"
    UP = "up"


IN_DISC = (Place.DISC, Place.SHUFFLED, Place.PARTIAL)

#: the protocol's code of each place (BOARD_STATUS.places)
PLACE_CODES: dict[Place, int] = {
    Place.DISC: codes.PLACE_DISC,
    Place.SHUFFLED: codes.PLACE_SHUFFLED,
    Place.BUILDING: codes.PLACE_BUILDING,
    Place.PARTIAL: codes.PLACE_PARTIAL,
    Place.BUILT: codes.PLACE_BUILT,
    Place.UP: codes.PLACE_UP,
}

# --- The state machine ---------------------------------------------------------------------------

STATE_NAMES: tuple[str, ...] = tuple(codes.STATES[c][0] for c in sorted(codes.STATES))
STATE_CODES: dict[str, int] = {codes.STATES[c][0]: c for c in codes.STATES}
RESTING: list[str] = ["IDLE", "SHUFFLED", "BUILT", "UP", "STOPPED"]
MOVING: list[str] = ["SHUFFLING", "BUILDING", "LIFTING", "COLLECTING", "ROLLING", "MOTOR_TEST"]
ASIDE: list[str] = ["ROLLING", "MOTOR_TEST"]

TRANSITIONS: list[dict[str, Any]] = [
    {"trigger": "session_opened", "source": "BOOT", "dest": "IDLE"},
    {"trigger": "start_shuffle", "source": RESTING, "dest": "SHUFFLING"},
    {"trigger": "shuffle_done", "source": "SHUFFLING", "dest": "SHUFFLED"},
    {"trigger": "start_build", "source": RESTING, "dest": "BUILDING"},
    {"trigger": "build_done", "source": "BUILDING", "dest": "BUILT"},
    {"trigger": "start_lift", "source": RESTING, "dest": "LIFTING"},
    {"trigger": "lift_done", "source": "LIFTING", "dest": "UP"},
    {"trigger": "start_collect", "source": RESTING, "dest": "COLLECTING"},
    {"trigger": "collect_done", "source": "COLLECTING", "dest": "IDLE"},
    {"trigger": "start_roll", "source": RESTING, "dest": "ROLLING"},
    {"trigger": "start_motor_test", "source": RESTING, "dest": "MOTOR_TEST"},
    *[
        {
            "trigger": "aside_done",
            "source": ASIDE,
            "dest": rest,
            "conditions": "resumes_" + rest.lower(),
        }
        for rest in RESTING
    ],
    {"trigger": "motion_stopped", "source": MOVING, "dest": "STOPPED"},
    {"trigger": "fault_raised", "source": ["BOOT", *RESTING, *MOVING], "dest": "FAULT"},
    {"trigger": "fault_cleared", "source": "FAULT", "dest": "STOPPED"},
    {"trigger": "estop_pressed", "source": ["BOOT", *RESTING, *MOVING, "FAULT"], "dest": "ESTOP"},
    {"trigger": "estop_released", "source": "ESTOP", "dest": "FAULT"},
    {"trigger": "rebooted", "source": list(STATE_NAMES), "dest": "BOOT"},
]

#: groups drawn as one node in the diagram (an arrow from the group leaves from each member)
DIAGRAM_GROUPS: dict[str, list[str]] = {"Resting": RESTING, "Moving": MOVING}


def mermaid_diagram() -> str:
    """The state diagram (mermaid), generated from the machine of a fresh BoardModel."""
    model = BoardModel(SimConfig(seed=0, speed=0), random.Random(0))
    machine = model.machine
    lines = ["stateDiagram-v2", "    [*] --> BOOT"]
    for group, members in DIAGRAM_GROUPS.items():
        lines.append(f'    state "{group}: any of {" ".join(members)}" as {group}')
    for name, event in machine.events.items():
        by_dest: dict[tuple[str | None, str], list[str]] = {}
        for source, transitions in event.transitions.items():
            for t in transitions:
                label = name
                if t.conditions:
                    label += " [" + ", ".join(str(c.func) for c in t.conditions) + "]"
                by_dest.setdefault((t.dest, label), []).append(source)
        for (dest, label), sources in by_dest.items():
            rest = list(sources)
            for group, members in DIAGRAM_GROUPS.items():
                if all(s in rest for s in members) and len(sources) > 1:
                    lines.append(f"    {group} --> {dest}: {label}")
                    rest = [s for s in rest if s not in members]
            lines.extend(f"    {s} --> {dest}: {label}" for s in rest)
    return "\n".join(lines) + "\n"


# --- Tile sets -----------------------------------------------------------------------------------


def tile_faces(tiles: int) -> tuple[int, ...]:
    """The tile codes of one physical set of 108, 136 or 144 tiles, in code order."""
    out: list[int] = []
    for code, name in sorted(codes.TILE_CODES.items()):
        if name[-1] in "mps" and len(name) == 2:
            out.extend([code] * 4)
        elif name[-1] == "f":
            if tiles == 144:
                out.append(code)
        elif tiles >= 136:
            out.extend([code] * 4)
    if len(out) != tiles:
        raise ValueError(f"no tile set of {tiles} tiles: expected 108, 136 or 144")
    return tuple(out)


class RandomSource(Protocol):
    def shuffle(self, x: list[Any]) -> None: ...
    def randint(self, a: int, b: int) -> int: ...


@dataclass
class TileSetState:
    """Where one physical set is and, when known, in which order its tiles lie.

    ``order`` lists tile indices (into the faces) in pick-up order (SHUFFLED) or in manifest order
    (BUILT, UP): wall 0 stack 1 top, stack 1 bottom, stack 2 ... then walls 1, 2, 3.
    """

    place: Place
    order: list[int] | None = None
    layout: tuple[tuple[int, ...], ...] | None = None


@dataclass
class ActiveFault:
    kind: str  # fault kind name of the catalogue ("estop", "stall", ...)
    code: int
    subsystem: int
    phase: int
    detail: int
    cause_until: float  # table ms; inf = until repaired
    motor: int | None = None


@dataclass
class _Pending:
    spec: FaultSpec
    skip: int
    left: int  # 0 = every run


@dataclass
class _Run:
    token: int
    command: int
    phase: int
    start: int
    end: int
    trigger_done: str
    tile_set: int | None = None
    freeze: int | None = None  # motion stopped advancing at this time (waiting for a timeout)
    layout: tuple[tuple[int, ...], ...] | None = None
    spans: list[tuple[int, int, int]] = field(default_factory=list)  # per wall: s0, s1, p1
    count_adjust: tuple[int, int] | None = None  # (wall, +1 / -1) from WALL_SHORT / EXTRA
    stuck_plate: int | None = None
    stall_motor: int | None = None
    stall_from: int | None = None
    head_jam_from: int | None = None
    chain_stuck_from: int | None = None
    reader_dead_from: int | None = None
    dice_dead_from: int | None = None
    plates_from: str = "down"
    motor: int = 0  # motor test
    tag: int = 0  # dice
    count: int = 2  # dice
    test_stalled: bool = False


class _Thermal:
    """Board temperature: exponential approach to a target, or a linear ramp then approach."""

    def __init__(self, t: int) -> None:
        self.t0 = float(t)
        self.v0 = AMBIENT_C
        self.target = AMBIENT_C
        self.tau = COOL_TAU_MS
        self.ramp_end: float | None = None
        self.ramp_value = 0.0

    def at(self, t: float) -> float:
        if self.ramp_end is not None:
            if t <= self.ramp_end:
                span = self.ramp_end - self.t0
                if span <= 0:
                    return self.ramp_value
                return self.v0 + (self.ramp_value - self.v0) * (t - self.t0) / span
            start, v = self.ramp_end, self.ramp_value
        else:
            start, v = self.t0, self.v0
        dt = max(0.0, t - start)
        return self.target + (v - self.target) * math.exp(-dt / self.tau)

    def approach(self, t: float, target: float, tau: float) -> None:
        self.v0 = self.at(t)
        self.t0 = t
        self.target = target
        self.tau = tau
        self.ramp_end = None

    def ramp(self, t: float, t1: float, value: float) -> None:
        self.v0 = self.at(t)
        self.t0 = t
        self.ramp_end = t1
        self.ramp_value = value

    def set(self, t: float, value: float) -> None:
        self.t0 = t
        self.v0 = value
        self.ramp_end = None


# --- The model -----------------------------------------------------------------------------------


class BoardModel:
    """The simulated table's board: state machine, physics and timings, without any I/O."""

    state: str  # set by the transitions machine
    trigger: Callable[..., bool]  # set by the transitions machine

    def __init__(self, config: SimConfig, rng: RandomSource, now: int = 0) -> None:
        self.config = config
        self.rng = rng
        self.timings: Timings = config.timings
        self.faces = tile_faces(config.tiles)
        self.outbox: list[m.Message] = []
        self.link_actions: list[tuple[str, float, float]] = []
        self.boot_count = 0
        self.machine = Machine(
            model=self,
            states=list(STATE_NAMES),
            transitions=TRANSITIONS,
            initial="BOOT",
            auto_transitions=False,
            ignore_invalid_triggers=False,
        )
        self._now = now
        self._timers: list[tuple[int, int, int, Callable[[int], None]]] = []
        self._seq = 0
        self._token = 0
        self._run: _Run | None = None
        self._resume = "IDLE"
        self._pending: list[_Pending] = []
        self.fault: ActiveFault | None = None
        self.cover_open = False
        self.estop_held = False
        self.displayed_dice: tuple[int, tuple[int, ...]] | None = None
        #: motions begun (BOARD_STATUS.motions): the board's record, kept across reboots
        self.motions = 0
        #: why the board last started (BOARD_STATUS.reset_cause)
        self.reset_cause = codes.RESET_POWER_ON
        self._thermal = _Thermal(now)
        self._handlers: dict[type[m.Message], Callable[[Any, int], None]] = {
            m.Ping: self._on_ping,
            m.Sensors: self._on_sensors,
            m.ReadManifest: self._on_read_manifest,
            m.DisplayDice: self._on_display_dice,
            m.Stop: self._on_stop,
            m.ClearFault: self._on_clear_fault,
            m.Reset: self._on_reset,
            m.Shuffle: self._on_shuffle,
            m.BuildWalls: self._on_build,
            m.LiftWalls: self._on_lift,
            m.Collect: self._on_collect,
            m.RollDice: self._on_roll,
            m.MotorTest: self._on_motor_test,
            m.ReadStatus: self._on_read_status,
        }
        self._power_on()
        for spec in config.fault_specs():
            self.inject(spec, now)

    def _power_on(self) -> None:
        self.sets: list[TileSetState] = [TileSetState(Place.DISC), TileSetState(Place.DISC)]
        self.wall_counts = [0, 0, 0, 0]
        self._counts_set: int | None = None
        self.plates = ["down"] * 4
        self.centre = "up"
        self.fault = None
        self._run = None
        self.outbox.clear()

    # --- public API ------------------------------------------------------------------------------

    @property
    def state_code(self) -> int:
        return STATE_CODES[self.state]

    @property
    def busy(self) -> bool:
        """A motion is running."""
        return self._run is not None

    @property
    def now(self) -> int:
        return self._now

    def place(self, tile_set: int) -> Place:
        return self.sets[tile_set].place

    def truth(self, tile_set: int) -> list[int] | None:
        """The tiles of a built or raised set in manifest order, reader or not (physical truth)."""
        s = self.sets[tile_set]
        if s.place not in (Place.BUILT, Place.UP) or s.order is None:
            return None
        return [self.faces[i] for i in s.order]

    def positions(self, tile_set: int) -> list[tuple[int, int, int]] | None:
        """(wall, stack, tier) of each manifest position; stacks count from 1, tier 0 = top."""
        s = self.sets[tile_set]
        if s.place not in (Place.BUILT, Place.UP) or s.layout is None:
            return None
        out: list[tuple[int, int, int]] = []
        for w, wall in enumerate(s.layout):
            for stack, height in enumerate(wall, start=1):
                out.extend((w, stack, tier) for tier in range(height))
        return out

    def handle(self, message: object, now: int) -> None:
        """A command (or link event) from the connection, at table time ``now``."""
        now = self._clock(now)
        self._run_timers(now)
        if isinstance(message, HelloReceived):
            self._session_opened(now)
            return
        if isinstance(message, BadMessage):
            self._on_bad_message(message)
            return
        if not isinstance(message, m.Message):
            return  # LinkUp, LinkDown, PeerRebooted: nothing for the machine to do
        handler = self._handlers.get(type(message))
        if handler is None:
            # a link message or an event sent to the board: not a command it knows
            self._refuse(message.TYPE, codes.REFUSE_UNKNOWN_COMMAND, message.TYPE)
            return
        handler(message, now)

    def advance(self, now: int) -> int | None:
        """Run the machine up to table time ``now``; return the next time something happens."""
        now = self._clock(now)
        self._run_timers(now)
        return self.next_deadline()

    def next_deadline(self) -> int | None:
        timers = self._timers
        while timers and self._stale(timers[0][2]):
            heapq.heappop(timers)
        return timers[0][0] if timers else None

    def inject(self, spec: FaultSpec | str, now: int | None = None) -> None:
        """Add a fault: at once when its phase is ``now``, else on the matching run of its phase."""
        if isinstance(spec, str):
            spec = parse_fault(spec)
        now = self._clock(self._now if now is None else now)
        self._run_timers(now)
        if spec.phase is None:
            self._strike_now(spec, now)
        else:
            self._pending.append(_Pending(spec, spec.nth - 1, spec.times))

    def disarm(self) -> None:
        """Forget every injected fault still waiting for its phase."""
        self._pending.clear()

    def pending_faults(self) -> list[FaultSpec]:
        return [p.spec for p in self._pending]

    def press_estop(self, now: int | None = None) -> None:
        now = self._clock(self._now if now is None else now)
        self._run_timers(now)
        self._press_estop(now)

    def release_estop(self, now: int | None = None) -> None:
        now = self._clock(self._now if now is None else now)
        self._run_timers(now)
        self._release_estop(now)

    def open_cover(self, now: int | None = None) -> None:
        now = self._clock(self._now if now is None else now)
        self._run_timers(now)
        self._open_cover(now)

    def close_cover(self, now: int | None = None) -> None:
        now = self._clock(self._now if now is None else now)
        self._run_timers(now)
        self.cover_open = False

    def repair(self, now: int | None = None) -> None:
        """A technician removes every held cause (stuck tile, blocked motor) and cools the board."""
        now = self._clock(self._now if now is None else now)
        self._run_timers(now)
        if self.fault is not None:
            self.fault.cause_until = now
        t = self._thermal.at(now)
        if t > OVERHEAT_CLEAR_C:
            self._thermal.set(now, OVERHEAT_CLEAR_C - 5.0)
            self._thermal.approach(now, AMBIENT_C, COOL_TAU_MS)

    def press_button(self, button: int, seat: int, now: int | None = None) -> None:
        """A seat's button is pressed and released: BUTTON events (press, then release)."""
        if button not in codes.BUTTONS:
            raise ValueError(f"button {button!r}: expected one of {sorted(codes.BUTTONS)}")
        if seat not in (0, 1, 2, 3):
            raise ValueError(f"seat {seat!r}: expected 0..3 (E S W N)")
        self._clock(self._now if now is None else now)
        self.outbox.append(m.Button(button, seat, 1))
        self.outbox.append(m.Button(button, seat, 0))

    def reboot(self, now: int | None = None, cause: int = codes.RESET_POWER_ON) -> None:
        """The board restarts (``cause``: codes.RESET_*): state lost, motors stopped, no session
        until the next HELLO."""
        now = self._clock(self._now if now is None else now)
        self._run_timers(now)
        self._end_run(now, "reboot")
        self._power_on()
        self.reset_cause = cause
        self.boot_count += 1
        self.trigger("rebooted")

    def temperature(self, now: int | None = None) -> float:
        return self._thermal.at(self._now if now is None else now)

    def cause_present(self, now: int | None = None) -> bool:
        """Whether the cause of the current fault is still there (CLEAR_FAULT refused)."""
        f = self.fault
        if f is None:
            return False
        t = self._now if now is None else now
        if self.estop_held:
            return True
        if f.kind == "overheat":
            return self._thermal.at(t) > OVERHEAT_CLEAR_C
        if f.kind == "cover":
            return self.cover_open
        return t < f.cause_until

    def sensors(self, now: int | None = None) -> m.SensorData:
        """Every sensor, as SENSOR_DATA."""
        t = self._now if now is None else now
        run = self._run
        flags = 0
        if not self.cover_open:
            flags |= codes.FLAG_COVER_CLOSED
        if self.estop_held:
            flags |= codes.FLAG_ESTOP
        fault_kind = self.fault.kind if self.fault is not None else ""
        head_home = fault_kind != "headjam"
        belt_full = fault_kind == "headjam"
        chain_home = fault_kind != "chain"
        reader_ok = self.config.reader and fault_kind != "reader"
        dice_present = self.config.dice and fault_kind != "dice"
        wall_tiles = list(self.wall_counts)
        plates = list(self.plates)
        centre = self.centre
        currents = [0] * codes.MOTOR_COUNT
        if run is not None:
            tt = t if run.freeze is None else min(t, run.freeze)
            for motor, factor in self._running_motors(run, t).items():
                currents[motor] = self._current(motor, factor, t)
            if run.phase == codes.PHASE_BUILD:
                wall_tiles = self._build_counts(run, tt)
                stacking = any(s0 <= tt < s1 for s0, s1, _ in run.spans)
                pushing = any(s1 <= tt < p1 for _, s1, p1 in run.spans)
                head_home = not stacking and run.head_jam_from is None
                belt_full = run.head_jam_from is not None and t >= run.head_jam_from
                chain_home = not pushing and run.chain_stuck_from is None
                if run.reader_dead_from is not None and t >= run.reader_dead_from:
                    reader_ok = False
            elif run.phase in (codes.PHASE_LIFT, codes.PHASE_COLLECT):
                plates, centre = self._plates_at(run, tt)
            elif run.phase == codes.PHASE_DICE and run.dice_dead_from is not None:
                dice_present = dice_present and t < run.dice_dead_from
        lift_up = lift_down = 0
        for i, pos in enumerate([*plates, centre]):
            if pos == "up":
                lift_up |= 1 << i
            elif pos == "down":
                lift_down |= 1 << i
        if centre != "up":
            flags |= codes.FLAG_TRAP_OPEN
        if head_home:
            flags |= codes.FLAG_HEAD_HOME
        if belt_full:
            flags |= codes.FLAG_BELT_FULL
        if chain_home:
            flags |= codes.FLAG_CHAIN_HOME
        if dice_present:
            flags |= codes.FLAG_DICE_PRESENT
        if reader_ok:
            flags |= codes.FLAG_READER_OK
        temp = round(self._thermal.at(t) * 10)
        return m.SensorData(
            self.state_code,
            self.fault.code if self.fault is not None else 0,
            flags,
            [min(255, max(0, n)) for n in wall_tiles],
            lift_up,
            lift_down,
            currents,
            max(-0x8000, min(0x7FFF, temp)),
        )

    def status(self, now: int | None = None) -> m.BoardStatus:
        """The board's physical truth, as BOARD_STATUS (and HELLO_REPLY's status)."""
        t = self._now if now is None else now
        places = [PLACE_CODES[s.place] for s in self.sets]
        laid = [min(255, self._laid(i, t)) for i in range(len(self.sets))]
        f = self.fault
        fw = self.config.fw_version
        return m.BoardStatus(
            fw[0],
            fw[1],
            fw[2],
            codes.BUILD_UNKNOWN,  # the simulated board runs no built firmware
            self.state_code,
            f.code if f is not None else 0,
            f.subsystem if f is not None else 0,
            f.phase if f is not None else 0,
            f.detail if f is not None else 0,
            self.motions,
            self.reset_cause,
            places,
            laid,
        )

    def _laid(self, tile_set: int, t: int) -> int:
        """Tiles of the set standing in walls: built so far, left by a stopped build, or all."""
        place = self.sets[tile_set].place
        if place in (Place.BUILT, Place.UP):
            return len(self.faces)
        run = self._run
        if place == Place.BUILDING and run is not None and run.tile_set == tile_set:
            return sum(self._build_counts(run, t if run.freeze is None else min(t, run.freeze)))
        if place == Place.PARTIAL and self._counts_set == tile_set:
            return sum(self.wall_counts)
        return 0

    def hello_fields(self) -> dict[str, int]:
        """The board's part of HELLO_REPLY: capabilities, tile sets, tiles, stacks, seed (its
        status is ``status()``)."""
        caps = 0
        if self.config.reader:
            caps |= codes.CAP_READER
        if self.config.dice:
            caps |= codes.CAP_DICE
        if self.config.buttons:
            caps |= codes.CAP_BUTTONS
        if self.config.seed is not None:
            caps |= codes.CAP_SEEDED
        return {
            "capabilities": caps,
            "tile_sets": 2,
            "tiles": self.config.tiles,
            "stacks_per_wall": self.config.stacks_per_wall,
            "seed": self.config.seed if self.config.seed is not None else 0,
        }

    # --- conditions of the machine ----------------------------------------------------------------

    def resumes_idle(self) -> bool:
        return self._resume == "IDLE"

    def resumes_shuffled(self) -> bool:
        return self._resume == "SHUFFLED"

    def resumes_built(self) -> bool:
        return self._resume == "BUILT"

    def resumes_up(self) -> bool:
        return self._resume == "UP"

    def resumes_stopped(self) -> bool:
        return self._resume == "STOPPED"

    # --- time -------------------------------------------------------------------------------------

    def _clock(self, now: int) -> int:
        if now > self._now:
            self._now = now
        return self._now

    def _schedule(self, at: int, token: int, action: Callable[[int], None]) -> None:
        self._seq += 1
        heapq.heappush(self._timers, (at, self._seq, token, action))

    def _stale(self, token: int) -> bool:
        return token != 0 and (self._run is None or self._run.token != token)

    def _run_timers(self, now: int) -> None:
        timers = self._timers
        while timers and timers[0][0] <= now:
            at, _, token, action = heapq.heappop(timers)
            if not self._stale(token):
                action(at)

    # --- commands ---------------------------------------------------------------------------------

    def _refuse(self, command: int, reason: int, detail: int = 0) -> None:
        self.outbox.append(m.Refused(command & 0x1F, reason, detail & 0xFF))

    def _on_bad_message(self, bad: BadMessage) -> None:
        error = bad.error
        if isinstance(error, UnknownType | WrongRole):
            self._refuse(bad.type_code, codes.REFUSE_UNKNOWN_COMMAND, bad.type_code)
        elif isinstance(error, FieldError):
            if bad.type_code == m.BuildWalls.TYPE and error.field.startswith("layout"):
                wall = error.field[7:8]
                self._refuse(
                    bad.type_code, codes.REFUSE_BAD_LAYOUT, int(wall) if wall.isdigit() else 4
                )
            else:
                self._refuse(bad.type_code, codes.REFUSE_BAD_ARGUMENT, error.index)
        else:
            self._refuse(bad.type_code, codes.REFUSE_BAD_ARGUMENT, 0)

    def _session_opened(self, now: int) -> None:
        if self.state == "BOOT":
            self.trigger("session_opened")
            if self.estop_held:
                self._press_estop(now, force=True)

    def _on_ping(self, msg: m.Ping, now: int) -> None:
        self.outbox.append(m.Pong(msg.token))

    def _on_sensors(self, msg: m.Sensors, now: int) -> None:
        self.outbox.append(self.sensors(now))

    def _on_read_status(self, msg: m.ReadStatus, now: int) -> None:
        self.outbox.append(self.status(now))

    def _on_display_dice(self, msg: m.DisplayDice, now: int) -> None:
        if not 1 <= len(msg.values) <= 3 or any(not 1 <= v <= 6 for v in msg.values):
            self._refuse(msg.TYPE, codes.REFUSE_BAD_ARGUMENT, 1)
            return
        self.displayed_dice = (msg.tag, tuple(msg.values))
        self.outbox.append(m.Done(msg.TYPE, RESULT_OK))

    def _on_read_manifest(self, msg: m.ReadManifest, now: int) -> None:
        if msg.tile_set not in (0, 1):
            self._refuse(msg.TYPE, codes.REFUSE_BAD_ARGUMENT, 0)
            return
        if self.state == "BOOT":
            self._refuse(msg.TYPE, codes.REFUSE_BAD_STATE, BLOCK_BOOTING)
            return
        tiles = self.truth(msg.tile_set)
        if tiles is None:
            self._refuse(msg.TYPE, codes.REFUSE_BAD_STATE, BLOCK_SET_NOT_BUILT)
            return
        if not self.config.reader:
            tiles = [codes.TILE_UNKNOWN] * len(tiles)
        total = len(tiles)
        step = m.MAX_CHUNK_TILES
        for offset in range(0, total, step):
            self.outbox.append(
                m.ManifestChunk(msg.tile_set, total, offset, tiles[offset : offset + step])
            )
        self.outbox.append(m.Done(msg.TYPE, RESULT_OK))

    def _on_stop(self, msg: m.Stop, now: int) -> None:
        run = self._run
        if run is not None:
            self._end_run(now, "stop")
            self.outbox.append(m.Done(run.command, RESULT_STOPPED))
            self.trigger("motion_stopped")
        self.outbox.append(m.Done(msg.TYPE, RESULT_OK))

    def _on_clear_fault(self, msg: m.ClearFault, now: int) -> None:
        if self.state == "ESTOP":
            self._refuse(msg.TYPE, codes.REFUSE_ESTOP_HELD, codes.FAULT_ESTOP)
            return
        if self.state == "FAULT":
            assert self.fault is not None
            if self.cause_present(now):
                self._refuse(msg.TYPE, codes.REFUSE_CAUSE_PRESENT, self.fault.code)
                return
            self.fault = None
            self.trigger("fault_cleared")
        self.outbox.append(m.Done(msg.TYPE, RESULT_OK))

    def _on_reset(self, msg: m.Reset, now: int) -> None:
        self.reboot(now, codes.RESET_SOFT)

    def _motion_refusal(self) -> tuple[int, int] | None:
        """The refusal every motion command shares (E-stop, fault, boot, busy, cover)."""
        if self.state == "ESTOP" or self.estop_held:
            return codes.REFUSE_ESTOP_HELD, codes.FAULT_ESTOP
        if self.state == "FAULT":
            return codes.REFUSE_FAULTED, self.fault.code if self.fault is not None else 0
        if self.state == "BOOT":
            return codes.REFUSE_BAD_STATE, BLOCK_BOOTING
        if self._run is not None:
            return codes.REFUSE_BUSY, self._run.command
        return None

    def _check_motion(self, command: int) -> bool:
        refusal = self._motion_refusal()
        if refusal is None and self.cover_open:
            refusal = (codes.REFUSE_BAD_STATE, BLOCK_COVER_OPEN)
        if refusal is not None:
            self._refuse(command, *refusal)
            return False
        return True

    def _on_shuffle(self, msg: m.Shuffle, now: int) -> None:
        if not self._check_motion(msg.TYPE):
            return
        if msg.tile_set not in (0, 1):
            self._refuse(msg.TYPE, codes.REFUSE_BAD_ARGUMENT, 0)
            return
        if self.sets[msg.tile_set].place not in IN_DISC:
            self._refuse(msg.TYPE, codes.REFUSE_BAD_STATE, BLOCK_SET_NOT_IN_DISC)
            return
        s = self.sets[msg.tile_set]
        s.place, s.order, s.layout = Place.DISC, None, None
        if self._counts_set == msg.tile_set:
            self.wall_counts = [0, 0, 0, 0]
            self._counts_set = None
        duration = self.timings.shuffle_ms(self.config.tiles)
        run = self._begin(
            now, msg.TYPE, codes.PHASE_SHUFFLE, duration, "start_shuffle", "shuffle_done"
        )
        run.tile_set = msg.tile_set
        self._schedule_progress(run, [])

    def layout_problem(self, layout: object) -> int | None:
        """None if the layout fits the set, else the BAD_LAYOUT detail: wall 0..3, 4 = total."""
        if not isinstance(layout, tuple | list) or len(layout) != 4:
            return 4
        total = 0
        for w, wall in enumerate(layout):
            if not isinstance(wall, tuple | list) or not 1 <= len(wall) <= MAX_STACKS_PER_WALL:
                return w
            if any(h not in (1, 2) for h in wall):
                return w
            total += sum(wall)
        if total != self.config.tiles:
            return 4
        return None

    def _on_build(self, msg: m.BuildWalls, now: int) -> None:
        if not self._check_motion(msg.TYPE):
            return
        if msg.tile_set not in (0, 1):
            self._refuse(msg.TYPE, codes.REFUSE_BAD_ARGUMENT, 0)
            return
        problem = self.layout_problem(msg.layout)
        if problem is not None:
            self._refuse(msg.TYPE, codes.REFUSE_BAD_LAYOUT, problem)
            return
        s = self.sets[msg.tile_set]
        other = self.sets[1 - msg.tile_set]
        if s.place is not Place.SHUFFLED:
            self._refuse(msg.TYPE, codes.REFUSE_BAD_STATE, BLOCK_SET_NOT_SHUFFLED)
            return
        if other.place in (Place.BUILT, Place.PARTIAL):
            self._refuse(msg.TYPE, codes.REFUSE_BAD_STATE, BLOCK_BENCH_OCCUPIED)
            return
        layout = tuple(tuple(int(h) for h in wall) for wall in msg.layout)
        t = self.timings
        spans = []
        cursor = now
        for wall in layout:
            s0 = cursor
            s1 = s0 + len(wall) * t.stack_ms
            p1 = s1 + t.wall_push_ms
            spans.append((s0, s1, p1))
            cursor = p1
        s.place = Place.BUILDING
        s.layout = layout
        self.wall_counts = [0, 0, 0, 0]
        self._counts_set = msg.tile_set
        run = self._begin(
            now,
            msg.TYPE,
            codes.PHASE_BUILD,
            cursor - now,
            "start_build",
            "build_done",
            spans=spans,
            layout=layout,
        )
        run.tile_set = msg.tile_set
        extra = [(p1, w) for w, (_, _, p1) in enumerate(spans[:-1])]
        self._schedule_progress(run, extra)

    def _on_lift(self, msg: m.LiftWalls, now: int) -> None:
        if not self._check_motion(msg.TYPE):
            return
        if msg.tile_set not in (0, 1):
            self._refuse(msg.TYPE, codes.REFUSE_BAD_ARGUMENT, 0)
            return
        if self.sets[msg.tile_set].place is not Place.BUILT:
            self._refuse(msg.TYPE, codes.REFUSE_BAD_STATE, BLOCK_SET_NOT_BUILT)
            return
        if self.sets[1 - msg.tile_set].place is Place.UP:
            self._refuse(msg.TYPE, codes.REFUSE_BAD_STATE, BLOCK_SURFACE_OCCUPIED)
            return
        run = self._begin(
            now,
            msg.TYPE,
            codes.PHASE_LIFT,
            self.timings.lift_ms,
            "start_lift",
            "lift_done",
            plates_from="down" if all(p == "down" for p in self.plates) else "between",
        )
        run.tile_set = msg.tile_set
        self._schedule_progress(run, [])

    def _on_collect(self, msg: m.Collect, now: int) -> None:
        if not self._check_motion(msg.TYPE):
            return
        top = self._set_at(Place.UP)
        run = self._begin(
            now,
            msg.TYPE,
            codes.PHASE_COLLECT,
            self.timings.collect_ms,
            "start_collect",
            "collect_done",
            plates_from="down" if all(p == "down" for p in self.plates) else "between",
        )
        run.tile_set = top
        self._schedule_progress(run, [])

    def _on_roll(self, msg: m.RollDice, now: int) -> None:
        if not self._check_motion(msg.TYPE):
            return
        if not self.config.dice:
            self._refuse(msg.TYPE, codes.REFUSE_UNSUPPORTED, 0)
            return
        if not 1 <= msg.count <= 3:
            self._refuse(msg.TYPE, codes.REFUSE_BAD_ARGUMENT, 1)
            return
        self._resume = self.state
        run = self._begin(
            now, msg.TYPE, codes.PHASE_DICE, self.timings.dice_ms, "start_roll", "aside_done"
        )
        run.tag, run.count = msg.tag, msg.count
        self._schedule_progress(run, [])

    def _on_motor_test(self, msg: m.MotorTest, now: int) -> None:
        if not self._check_motion(msg.TYPE):
            return
        if not 0 <= msg.motor < codes.MOTOR_COUNT:
            self._refuse(msg.TYPE, codes.REFUSE_BAD_ARGUMENT, 0)
            return
        if msg.motor == codes.MOTOR_DICE and not self.config.dice:
            self._refuse(msg.TYPE, codes.REFUSE_UNSUPPORTED, 0)
            return
        if not 1 <= msg.duration_ms <= self.timings.max_motor_test_ms:
            self._refuse(msg.TYPE, codes.REFUSE_BAD_ARGUMENT, 1)
            return
        self._resume = self.state
        run = self._begin(
            now,
            msg.TYPE,
            codes.PHASE_MOTOR_TEST,
            msg.duration_ms,
            "start_motor_test",
            "aside_done",
            motor=msg.motor,
        )
        self._schedule_progress(run, [], detail=msg.motor)

    def _set_at(self, place: Place) -> int | None:
        for i, s in enumerate(self.sets):
            if s.place is place:
                return i
        return None

    # --- runs -------------------------------------------------------------------------------------

    def _begin(
        self,
        now: int,
        command: int,
        phase: int,
        duration: int,
        trigger: str,
        trigger_done: str,
        **fields: Any,
    ) -> _Run:
        self._token += 1
        self.motions = (self.motions + 1) & 0xFFFFFFFF
        run = _Run(self._token, command, phase, now, now + duration, trigger_done, **fields)
        self._run = run
        self.trigger(trigger)
        self._thermal.approach(now, AMBIENT_C + HEAT_RISE_C, HEAT_TAU_MS)
        self._plan_faults(run)
        self._schedule(run.end, run.token, self._finish)
        return run

    def _schedule_progress(self, run: _Run, extra: list[tuple[int, int]], detail: int = 0) -> None:
        """PROGRESS at every 10 % of the run, plus at the ``extra`` (time, detail) points."""
        duration = run.end - run.start
        points: dict[int, tuple[int, int]] = {}
        for pct in range(10, 100, 10):
            at = run.start + duration * pct // 100
            points[pct] = (at, self._detail_at(run, at, detail))
        for at, d in extra:
            pct = (at - run.start) * 100 // duration if duration else 100
            if 0 < pct < 100:
                points[pct] = (at, d)
        for pct in sorted(points):
            at, d = points[pct]
            self._schedule(at, run.token, self._progress_action(run, pct, d))

    def _detail_at(self, run: _Run, at: int, default: int) -> int:
        if run.phase == codes.PHASE_BUILD:
            for w, (_, _, p1) in enumerate(run.spans):
                if at < p1:
                    return w
            return 3
        return default

    def _progress_action(self, run: _Run, pct: int, detail: int) -> Callable[[int], None]:
        def fire(at: int) -> None:
            if run.freeze is None:
                self.outbox.append(m.Progress(run.command, run.phase, pct, detail))

        return fire

    def _finish(self, at: int) -> None:
        run = self._run
        if run is None or run.freeze is not None:
            return
        if run.phase == codes.PHASE_SHUFFLE:
            assert run.tile_set is not None
            s = self.sets[run.tile_set]
            order = list(range(len(self.faces)))
            self.rng.shuffle(order)
            s.place, s.order = Place.SHUFFLED, order
            event: m.Message = m.Done(run.command, RESULT_OK)
        elif run.phase == codes.PHASE_BUILD:
            assert run.tile_set is not None
            s = self.sets[run.tile_set]
            s.place = Place.BUILT
            self.wall_counts = [sum(w) for w in s.layout or ()]
            event = m.Done(run.command, RESULT_OK)
        elif run.phase == codes.PHASE_LIFT:
            assert run.tile_set is not None
            self.sets[run.tile_set].place = Place.UP
            self.plates = ["up"] * 4
            event = m.Done(run.command, RESULT_OK)
        elif run.phase == codes.PHASE_COLLECT:
            if run.tile_set is not None:
                s = self.sets[run.tile_set]
                s.place, s.order, s.layout = Place.DISC, None, None
                if self._counts_set == run.tile_set:
                    self.wall_counts = [0, 0, 0, 0]
                    self._counts_set = None
            self.plates = ["down"] * 4
            self.centre = "up"
            event = m.Done(run.command, RESULT_OK)
        elif run.phase == codes.PHASE_DICE:
            values = [self.rng.randint(1, 6) for _ in range(run.count)]
            event = m.Dice(run.tag, values)
        else:
            current = self._current(run.motor, STALL_FACTOR if run.test_stalled else 1.0, at)
            ok = 0 if current > LIMIT_MA[run.motor] else 1
            event = m.MotorResult(run.motor, current, ok)
        self._run = None
        self._thermal.approach(at, AMBIENT_C, COOL_TAU_MS)
        self.trigger(run.trigger_done)
        self.outbox.append(event)

    def _end_run(self, now: int, why: str) -> None:
        """A run ends early (fault, stop, E-stop, reboot): motors stop where they are."""
        run = self._run
        if run is None:
            return
        tt = now if run.freeze is None else min(now, run.freeze)
        if run.phase == codes.PHASE_SHUFFLE and run.tile_set is not None:
            self.sets[run.tile_set].place = Place.DISC
        elif run.phase == codes.PHASE_BUILD and run.tile_set is not None:
            s = self.sets[run.tile_set]
            s.place, s.order, s.layout = Place.PARTIAL, None, None
            self.wall_counts = self._build_counts(run, tt)
        elif run.phase in (codes.PHASE_LIFT, codes.PHASE_COLLECT):
            self.plates, _ = self._plates_at(run, tt)
            # the centre lift returns up when motion stops (the trap closes), unless it is stuck
            self.centre = "between" if run.stuck_plate == 4 else "up"
        self._run = None
        self._thermal.approach(now, AMBIENT_C, COOL_TAU_MS)

    # --- physics during a run ---------------------------------------------------------------------

    def _build_counts(self, run: _Run, t: int) -> list[int]:
        counts = [0, 0, 0, 0]
        assert run.layout is not None
        for w, (s0, s1, _) in enumerate(run.spans):
            heights = run.layout[w]
            if t >= s1:
                counts[w] = sum(heights)
                if run.count_adjust is not None and run.count_adjust[0] == w:
                    counts[w] += run.count_adjust[1]
            elif t > s0:
                k = (t - s0) // self.timings.stack_ms
                counts[w] = sum(heights[:k])
        return counts

    def _plates_at(self, run: _Run, t: int) -> tuple[list[str], str]:
        elapsed = t - run.start
        if run.phase == codes.PHASE_LIFT:
            if elapsed >= self.timings.lift_ms:
                plates = ["up"] * 4
            elif elapsed > 0 or run.plates_from == "between":
                plates = ["between"] * 4
            else:
                plates = ["down"] * 4
            if run.stuck_plate is not None and elapsed > 0:
                plates[run.stuck_plate] = "between"
            return plates, "up"
        d = run.end - run.start
        plates_end = d * COLLECT_PLATES_END
        if elapsed >= plates_end or run.plates_from == "down":
            plates = ["down"] * 4
        elif elapsed > 0 or run.plates_from == "between":
            plates = ["between"] * 4
        else:
            plates = list(self.plates)
        if run.stuck_plate is not None and run.stuck_plate < 4 and elapsed > 0:
            plates[run.stuck_plate] = "between"
        if elapsed < plates_end:
            centre = "up"
        elif elapsed < d * COLLECT_TRAP_OPEN_END:
            centre = "between"
        elif elapsed < d * COLLECT_DROP_END:
            centre = "down"
        elif elapsed < d:
            centre = "between"
        else:
            centre = "up"
        if run.stuck_plate == 4 and elapsed >= plates_end:
            centre = "between"
        return plates, centre

    def _running_motors(self, run: _Run, t: int) -> dict[int, float]:
        """Motors turning at time t with their load factor (1 = nominal)."""
        if (
            run.freeze is not None
            and t >= run.freeze
            and run.stall_from is None
            and (run.head_jam_from is None)
        ):
            # waiting for a timeout: only what keeps pushing against the obstruction
            out: dict[int, float] = {}
            if run.stuck_plate is not None:
                out[self._plate_motor(run.stuck_plate)] = STRAIN_FACTOR
            if run.chain_stuck_from is not None:
                out[codes.MOTOR_CHAIN] = STRAIN_FACTOR
            if (
                run.phase == codes.PHASE_BUILD
                and run.reader_dead_from is None
                and (run.chain_stuck_from is None)
            ):
                out[codes.MOTOR_SHUFFLE_DISC] = 1.0  # the disc keeps feeding a jammed path
            return out
        tt = t if run.freeze is None else min(t, run.freeze)
        elapsed = tt - run.start
        motors: dict[int, float] = {}
        if run.phase == codes.PHASE_SHUFFLE:
            motors[codes.MOTOR_SHUFFLE_DISC] = 1.0
        elif run.phase == codes.PHASE_BUILD:
            motors[codes.MOTOR_SHUFFLE_DISC] = 1.0
            if any(s0 <= tt < s1 for s0, s1, _ in run.spans):
                motors[codes.MOTOR_STACKER_HEAD] = 1.0
            if any(s1 <= tt < p1 for _, s1, p1 in run.spans):
                motors[codes.MOTOR_CHAIN] = 1.0
        elif run.phase == codes.PHASE_LIFT:
            if elapsed < self.timings.lift_ms:
                for motor in LIFT_MOTORS:
                    motors[motor] = 1.0
        elif run.phase == codes.PHASE_COLLECT:
            d = run.end - run.start
            if elapsed < d * COLLECT_PLATES_END:
                if run.plates_from != "down":
                    for motor in LIFT_MOTORS:
                        motors[motor] = 1.0
            elif elapsed < d * COLLECT_TRAP_OPEN_END:
                motors[codes.MOTOR_CENTRE_LIFT] = 1.0
            elif elapsed < d * COLLECT_DROP_END:
                motors[codes.MOTOR_SHUFFLE_DISC] = 1.0
            else:
                motors[codes.MOTOR_CENTRE_LIFT] = 1.0
        elif run.phase == codes.PHASE_DICE:
            if run.dice_dead_from is None or t < run.dice_dead_from:
                motors[codes.MOTOR_DICE] = 1.0
        else:
            motors[run.motor] = STALL_FACTOR if run.test_stalled else 1.0
        if run.stall_motor is not None and run.stall_from is not None and t >= run.stall_from:
            motors[run.stall_motor] = STALL_FACTOR
        if run.head_jam_from is not None and t >= run.head_jam_from:
            motors[codes.MOTOR_STACKER_HEAD] = STALL_FACTOR
        return motors

    @staticmethod
    def _plate_motor(plate: int) -> int:
        return codes.MOTOR_CENTRE_LIFT if plate == 4 else LIFT_MOTORS[plate]

    @staticmethod
    def _current(motor: int, factor: float, t: int) -> int:
        ripple = ((t // 37) % 7 - 3) * 0.01  # a deterministic +-3 % ripple
        return max(0, min(0xFFFF, round(NOMINAL_MA[motor] * factor * (1.0 + ripple))))

    # --- faults -----------------------------------------------------------------------------------

    def _plan_faults(self, run: _Run) -> None:
        keep: list[_Pending] = []
        chosen: list[FaultSpec] = []
        for p in self._pending:
            if p.spec.phase != run.phase:
                keep.append(p)
                continue
            if p.skip > 0:
                p.skip -= 1
                keep.append(p)
                continue
            if (
                p.spec.kind == "stall"
                and run.phase == codes.PHASE_MOTOR_TEST
                and p.spec.motor is not None
                and p.spec.motor != run.motor
            ):
                keep.append(p)
                continue
            chosen.append(p.spec)
            if p.left != 1:
                if p.left > 1:
                    p.left -= 1
                keep.append(p)
        self._pending = keep
        for spec in chosen:
            self._plan(run, spec)

    def _pct(self, run: _Run, pct: int) -> int:
        return run.start + (run.end - run.start) * pct // 100

    def _wall_pct(self, run: _Run, wall: int, pct: int) -> int:
        s0, s1, _ = run.spans[wall]
        return s0 + (s1 - s0) * pct // 100

    def _plan(self, run: _Run, spec: FaultSpec) -> None:
        t = self.timings
        token = run.token
        kind = spec.kind
        hold_ms = spec.hold * 1000.0

        def fault_at(at: int, detail: int, motor: int | None = None) -> None:
            def fire(when: int) -> None:
                self._raise_fault(when, spec, detail, hold_ms, motor)

            self._schedule(at, token, fire)

        def freeze_at(at: int, setup: Callable[[], None] | None = None) -> None:
            def fire(when: int) -> None:
                if run.freeze is None:
                    run.freeze = when
                if setup is not None:
                    setup()

            self._schedule(at, token, fire)

        if kind == "jam":
            assert spec.wall is not None
            ts = self._wall_pct(run, spec.wall, spec.at)
            freeze_at(ts)
            fault_at(ts + t.sort_timeout_ms, spec.wall)
        elif kind == "headjam":
            assert spec.wall is not None
            ts = self._wall_pct(run, spec.wall, spec.at)

            def jam() -> None:
                run.head_jam_from = ts

            freeze_at(ts, jam)
            fault_at(ts + t.head_jam_ms, spec.wall)
        elif kind in ("short", "extra"):
            assert spec.wall is not None
            wall = spec.wall
            ts = run.spans[wall][1]

            def miscount() -> None:
                run.count_adjust = (wall, -1 if kind == "short" else 1)

            freeze_at(ts, miscount)
            fault_at(ts, wall)
        elif kind == "stall":
            if run.phase == codes.PHASE_MOTOR_TEST:
                run.test_stalled = True
                return
            assert spec.motor is not None
            motor = spec.motor
            ts = self._pct(run, spec.at)
            if run.phase == codes.PHASE_BUILD and motor in (
                codes.MOTOR_STACKER_HEAD,
                codes.MOTOR_CHAIN,
            ):
                # strike while that motor turns: the head while stacking, the chain while pushing
                wall = min(3, spec.at * 4 // 100)
                s0, s1, p1 = run.spans[wall]
                ts = (s0 + s1) // 2 if motor == codes.MOTOR_STACKER_HEAD else (s1 + p1) // 2
            elif run.phase == codes.PHASE_COLLECT:
                d = run.end - run.start
                if motor in LIFT_MOTORS:
                    ts = run.start + int(d * COLLECT_PLATES_END / 2)
                elif motor == codes.MOTOR_CENTRE_LIFT:
                    ts = run.start + int(d * (COLLECT_PLATES_END + COLLECT_TRAP_OPEN_END) / 2)
                else:
                    ts = run.start + int(d * (COLLECT_TRAP_OPEN_END + COLLECT_DROP_END) / 2)
            elif run.phase == codes.PHASE_LIFT:
                ts = min(ts, run.start + t.lift_ms * spec.at // 100)

            def stall() -> None:
                run.stall_motor, run.stall_from = motor, ts

            freeze_at(ts, stall)
            fault_at(ts + t.stall_trip_ms, motor, motor)
        elif kind == "lift":
            plate = spec.plate
            run.stuck_plate = plate
            if run.phase == codes.PHASE_LIFT:
                freeze_at(run.start + t.lift_ms)
                fault_at(run.start + t.lift_timeout_ms, plate)
            else:
                d = run.end - run.start
                if plate == 4:
                    began = run.start + int(d * COLLECT_PLATES_END)
                    freeze_at(run.start + int(d * COLLECT_TRAP_OPEN_END))
                else:
                    began = run.start
                    freeze_at(run.start + int(d * COLLECT_PLATES_END))
                fault_at(began + t.lift_timeout_ms, plate)
        elif kind == "chain":
            assert spec.wall is not None
            _, s1, p1 = run.spans[spec.wall]

            def chain() -> None:
                run.chain_stuck_from = s1

            freeze_at(p1, chain)
            fault_at(s1 + t.chain_timeout_ms, 0)
        elif kind == "dice":
            ts = self._pct(run, spec.at)

            def dead() -> None:
                run.dice_dead_from = ts

            freeze_at(ts, dead)
            fault_at(ts, 0)
        elif kind == "overheat":
            ts = self._pct(run, spec.at)
            self._thermal.ramp(run.start, ts, OVERHEAT_LIMIT_C + 0.5)
            fault_at(ts, 0)
        elif kind == "reader":
            assert spec.wall is not None
            ts = self._wall_pct(run, spec.wall, spec.at)

            def silent() -> None:
                run.reader_dead_from = ts

            freeze_at(ts, silent)
            fault_at(ts + t.reader_timeout_ms, 0)
        elif kind == "count":
            fault_at(run.end, 0)
        elif kind == "internal":
            fault_at(self._pct(run, spec.at), spec.code)
        else:
            # cover, estop, reboot, noise, cut: the same as at once, at that point of the run
            self._schedule(
                self._pct(run, spec.at), token, lambda when: self._strike_now(spec, when)
            )

    def _strike_now(self, spec: FaultSpec, now: int) -> None:
        kind = spec.kind
        if kind == "cover":
            self._open_cover(now)
            if math.isfinite(spec.hold):
                self._schedule(now + int(spec.hold * 1000), 0, self._auto_close_cover)
        elif kind == "estop":
            self._press_estop(now)
            if math.isfinite(spec.hold):
                self._schedule(now + int(spec.hold * 1000), 0, self._auto_release_estop)
        elif kind == "reboot":
            self.reboot(now)
        elif kind == "noise":
            self.link_actions.append(("noise", spec.error, spec.drop))
        elif kind == "cut":
            self.link_actions.append(("cut", spec.seconds, 0.0))
        elif kind == "overheat":
            self._thermal.set(now, OVERHEAT_LIMIT_C + 0.5)
            self._thermal.approach(now, AMBIENT_C, COOL_TAU_MS)
            self._raise_fault(now, spec, 0, 0.0, None)
        elif kind == "internal":
            self._raise_fault(now, spec, spec.code, 0.0, None)
        else:  # pragma: no cover - the parser only allows "now" for the kinds above
            raise ValueError(f"fault {spec}: cannot strike at once")

    def _auto_close_cover(self, now: int) -> None:
        self.cover_open = False

    def _auto_release_estop(self, now: int) -> None:
        self._release_estop(now)

    def _raise_fault(
        self, now: int, spec: FaultSpec, detail: int, hold_ms: float, motor: int | None
    ) -> None:
        if self.state in ("FAULT", "ESTOP"):
            return
        run = self._run
        phase = run.phase if run is not None else codes.PHASE_NONE
        self._end_run(now, "fault")
        until = FOREVER if math.isinf(hold_ms) else now + hold_ms
        subsystem = spec.subsystem
        self.fault = ActiveFault(spec.kind, spec.fault_code, subsystem, phase, detail, until, motor)
        self.trigger("fault_raised")
        self.outbox.append(m.Fault(spec.fault_code, subsystem, phase, detail & 0xFF))

    def _open_cover(self, now: int) -> None:
        self.cover_open = True
        if self._run is not None and self.state not in ("FAULT", "ESTOP"):
            self._raise_fault(now, FaultSpec("cover", None), 0, 0.0, None)

    def _press_estop(self, now: int, force: bool = False) -> None:
        self.estop_held = True
        if self.state == "ESTOP" and not force:
            return
        run = self._run
        phase = run.phase if run is not None else codes.PHASE_NONE
        self._end_run(now, "estop")
        self.fault = ActiveFault("estop", codes.FAULT_ESTOP, codes.SUB_SAFETY, phase, 0, now)
        if self.state != "ESTOP":
            self.trigger("estop_pressed")
        self.outbox.append(m.Fault(codes.FAULT_ESTOP, codes.SUB_SAFETY, phase, 0))

    def _release_estop(self, now: int) -> None:
        self.estop_held = False
        if self.state == "ESTOP":
            self.trigger("estop_released")
