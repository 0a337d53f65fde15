"""Faults as conditions of the hardware: what each fault spec does to the simulated table, when.

The catalogue is simulator/faults.py, the spec language simulator/faultspec.py. Here each armed
spec waits for the run of its phase (``nth``, ``times``), strikes at its point of that run
(``at``, ``wall``, ``motor``, ``plate``) by changing the hardware (simulator/hardware.py: a
mechanism blocked, the feed jammed, a sensor dead or broken, a driver shorted, heat, the cover,
the E-stop, a bus error, the power), and undoes the change ``hold`` seconds after the board
reported its fault, or after the run ended. The firmware is never told: it finds each fault from
what its sensors and currents show, as on a real table. docs/simulator.md, "Faults", has the
table of what each kind does.

``Saboteur.observe(board, now)`` runs after every pass of the firmware's loop: it learns from
the board's public state which motion runs (its persistent record: motions begun, the phase and
the set of the last one) and how far it got (the wall being built, the tiles the stacker laid,
the motors turning). Line faults (``noise``, ``cut``) and ``reboot`` are requests the machine
and the server carry out. No I/O; time (table milliseconds) passed in.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from firmware.hal import SENSE_DOWN
from firmware.hal.mechanics import NTC_OPEN, NTC_SHORTED, STALL, STRAIN
from protocol import codes
from simulator.faults import EXPANDERS, MOTOR_KINDS, FaultSpec
from simulator.faultspec import parse_fault

if TYPE_CHECKING:
    from firmware.config import Timings
    from simulator.hardware import SimHal

#: how far over the firmware's limit an ``overheat`` takes the heat sink (0.1 degC)
OVERHEAT_OVER_DC = 5
#: the lift motor of each plate (0..3 E S W N) and of the centre lift (4)
LIFT_MOTORS = (
    codes.MOTOR_LIFT_E,
    codes.MOTOR_LIFT_S,
    codes.MOTOR_LIFT_W,
    codes.MOTOR_LIFT_N,
    codes.MOTOR_CENTRE_LIFT,
)
#: what a line fault or a reboot asks of the machine and the server: (what, a, b)
Request = tuple[str, float, float]


class MotionRecord(Protocol):
    """The board's persistent record as the saboteur reads it (firmware/store.py's Record)."""

    @property
    def motions_begun(self) -> int: ...

    @property
    def motion_phase(self) -> int: ...

    @property
    def motion_set(self) -> int: ...


class SetLayout(Protocol):
    """A tile set as the saboteur reads it: the stack heights of its walls, when known."""

    @property
    def layout(self) -> tuple[tuple[int, ...], ...] | None: ...


class BoardView(Protocol):
    """What the saboteur reads of the board after each pass: the firmware's Board itself
    (simulator/machine.py), or what the emulated chip's flash and the table show of it
    (simulator/chip/machine.py)."""

    @property
    def record(self) -> MotionRecord: ...

    @property
    def busy(self) -> bool:
        """A motion runs."""
        ...

    @property
    def building_wall(self) -> int:
        """The wall a build is stacking, 0..3."""
        ...

    @property
    def sets(self) -> Sequence[SetLayout]: ...


@dataclass
class Condition:
    """A change of the hardware in force, and how to undo it."""

    spec: FaultSpec
    text: str
    undo: Callable[[], None]
    #: table ms when it is undone (inf: never, until repair); None: when the run ends or the
    #: board reports a fault, plus the spec's hold
    until: float | None = None


@dataclass
class _Pending:
    spec: FaultSpec
    skip: int
    left: int  # 0 = every run


@dataclass
class _Strike:
    armed: _Pending
    done: bool = False
    turned: int = 0  # ms the spec's motor has turned in this run (stall)

    @property
    def spec(self) -> FaultSpec:
        return self.armed.spec


@dataclass
class _Run:
    phase: int
    tile_set: int
    start: int
    nominal: int  # the phase's nominal duration (ms): what ``at`` is a percent of
    tested: int  # the motor of a motor test, else -1
    strikes: list[_Strike] = field(default_factory=list)
    conditions: list[Condition] = field(default_factory=list)


class Saboteur:
    """Arms fault specs and turns them into hardware conditions at their point of their phase."""

    def __init__(self, hal: SimHal, timings: Timings, tiles: int) -> None:
        self.hal = hal
        self.timings = timings
        self.tiles = tiles
        self._pending: list[_Pending] = []
        self.conditions: list[Condition] = []
        #: line faults and reboots for the machine and the server to carry out
        self.requests: list[Request] = []
        self._run: _Run | None = None
        self._begun: int | None = None
        self._last = 0

    # --- arming ----------------------------------------------------------------------------------

    def arm(self, spec: FaultSpec | str, now: int) -> FaultSpec:
        """A fault: at once when its phase is ``now``, else on the matching run of its phase."""
        parsed = parse_fault(spec) if isinstance(spec, str) else spec
        if parsed.phase is None:
            self._strike(parsed, now, None)
        else:
            self._pending.append(_Pending(parsed, parsed.nth - 1, parsed.times))
        return parsed

    def disarm(self) -> None:
        """Forget every armed spec still waiting for its phase (conditions in force stay)."""
        self._pending.clear()

    def pending(self) -> list[FaultSpec]:
        return [p.spec for p in self._pending]

    def repair(self) -> None:
        """A technician: every condition in force is undone (the cover and the E-stop are the
        control's own verbs)."""
        keep = []
        for cond in self.conditions:
            if cond.spec.kind in ("cover", "estop"):
                keep.append(cond)
            else:
                cond.undo()
        self.conditions = keep
        if self._run is not None:
            self._run.conditions = []

    def describe(self) -> list[str]:
        return [c.text for c in self.conditions]

    def next_due(self) -> float | None:
        """Table ms when a condition is next undone (None: no such time)."""
        due = [c.until for c in self.conditions if c.until is not None and math.isfinite(c.until)]
        return min(due) if due else None

    # --- watching the board ----------------------------------------------------------------------

    def observe(self, board: BoardView, now: int) -> None:
        """After a pass of the firmware's loop: start, strike, end, undo."""
        begun = board.record.motions_begun
        if begun != self._begun:
            if self._begun is not None:
                self._end_run(now)
                self._start_run(board, now)
            self._begun = begun
        run = self._run
        if run is not None:
            if board.busy:
                self._watch(run, board, now)
            else:
                self._end_run(now)
        if self.conditions:
            self._undo_due(now)
        self._last = now

    def _start_run(self, board: BoardView, now: int) -> None:
        record = board.record
        phase = record.motion_phase
        hal = self.hal
        tested = -1
        if phase == codes.PHASE_MOTOR_TEST:
            for m in range(codes.MOTOR_COUNT):
                if hal.speed[m] > 0:
                    tested = m
        run = _Run(phase, record.motion_set, now, self._nominal(phase), tested)
        for p in self._pending:
            spec = p.spec
            if spec.phase != phase:
                continue
            if p.skip > 0:
                p.skip -= 1
            elif spec.kind in MOTOR_KINDS and tested >= 0 and spec.motor not in (None, tested):
                continue  # a test of another motor: wait for one of this motor
            else:
                run.strikes.append(_Strike(p))
        self._run = run if run.strikes else None

    def _end_run(self, now: int) -> None:
        """The motion is over (done, stopped, faulted: the supervisor cut it, or the board
        restarted): each condition it struck stays ``hold`` seconds more; a tile fault that never
        struck is forgotten."""
        run = self._run
        if run is None:
            return
        self._run = None
        for cond in run.conditions:
            if cond.until is None:
                cond.until = now + cond.spec.hold * 1000.0
        # a spec that could not strike (its motor never turned, its plate never moved, its wall
        # was never built) stays armed for the next run of its phase
        if any(s.spec.kind in ("short", "extra", "count") for s in run.strikes):
            self.hal.forget_tile_faults()

    def _undo_due(self, now: int) -> None:
        keep = []
        for cond in self.conditions:
            if cond.until is not None and now >= cond.until:
                cond.undo()
            else:
                keep.append(cond)
        self.conditions = keep

    # --- striking --------------------------------------------------------------------------------

    def _watch(self, run: _Run, board: BoardView, now: int) -> None:
        hal = self.hal
        dt = now - self._last
        elapsed = now - run.start
        for strike in run.strikes:
            if strike.done:
                continue
            spec = strike.spec
            kind = spec.kind
            if kind in MOTOR_KINDS:
                motor = run.tested if run.phase == codes.PHASE_MOTOR_TEST else spec.motor
                assert motor is not None
                if not hal.running(motor):
                    continue
                strike.turned += dt
                due = spec.at * self._turning(run.phase, motor) // 100
                if run.phase != codes.PHASE_MOTOR_TEST and strike.turned < due:
                    continue
                hal.block(motor, STALL if kind == "stall" else STRAIN)
                text = f"motor {motor} ({codes.motor_name(motor)}) blocked"
                self._hold(run, spec, text, functools.partial(hal.free, motor))
            elif kind == "lift":
                motor = LIFT_MOTORS[spec.plate]
                if not (hal.running(motor) and hal.between(spec.plate)):
                    continue
                hal.block(motor, STRAIN)
                text = f"lift {spec.plate} stuck between its limit switches"
                self._hold(run, spec, text, functools.partial(hal.free, motor))
            elif kind in ("jam", "headjam", "reader", "short", "extra", "chain"):
                if not self._at_wall(spec, board, run):
                    continue
                self._wall_fault(run, spec)
            elif kind == "count":
                hal.misread_tile()
            elif kind == "overheat":  # from the run's start, the heat sink warms to the limit
                due = spec.at * run.nominal // 100
                self._overheat(run, spec, now, due - elapsed)
            else:  # dice, cover, estop, ntc, amp, driver, expander, internal, reboot, noise,
                # cut: at %
                if elapsed < spec.at * run.nominal // 100:
                    continue
                self._strike(spec, now, run)
            strike.done = True
            self._struck(strike.armed)

    def _struck(self, armed: _Pending) -> None:
        """A spec struck: one run fewer to strike (``times``; 0 = every run)."""
        if armed.left == 1:
            if armed in self._pending:
                self._pending.remove(armed)
        elif armed.left > 1:
            armed.left -= 1

    def _at_wall(self, spec: FaultSpec, board: BoardView, run: _Run) -> bool:
        """The build is at the spec's point of its wall."""
        wall = spec.wall if spec.wall is not None else 0
        if board.building_wall != wall:
            return False
        hal = self.hal
        staged = hal.tiles_staged
        kind = spec.kind
        if kind == "chain":  # the wall is being pushed: the chain turns and left home
            return staged > 0 and hal.running(codes.MOTOR_CHAIN) and not hal.chain_home()
        if not hal.running(codes.MOTOR_STACKER_HEAD):
            return False
        if kind in ("short", "extra"):
            return True
        layout = board.sets[run.tile_set].layout if 0 <= run.tile_set < 2 else None
        need = sum(layout[wall]) if layout is not None else self.tiles // 4
        return staged >= min(need - 1, spec.at * need // 100)

    def _wall_fault(self, run: _Run, spec: FaultSpec) -> None:
        hal = self.hal
        kind = spec.kind
        wall = spec.wall
        if kind == "jam":
            hal.jam_feed()
            text = f"a tile jammed between the disc and the head (wall {wall})"
            self._hold(run, spec, text, hal.unjam_feed)
        elif kind == "headjam":
            hal.block(codes.MOTOR_STACKER_HEAD, STRAIN)
            self._hold(run, spec, f"the stacker head jammed (wall {wall})", hal.free_head)
        elif kind == "reader":
            hal.kill_reader()
            self._hold(run, spec, "the tile reader silent", hal.revive_reader)
        elif kind == "chain":
            hal.block(codes.MOTOR_CHAIN, STRAIN)
            self._hold(run, spec, f"the chain stuck away from home (wall {wall})", hal.free_chain)
        elif kind == "short":
            hal.drop_tile()
        else:  # extra
            hal.extra_tile()

    def _strike(self, spec: FaultSpec, now: int, run: _Run | None) -> None:
        """The kinds that strike at a point of time (a percent of their phase, or now)."""
        hal = self.hal
        kind = spec.kind
        if kind == "cover":
            hal.open_cover()
            self._timed(spec, "the cover open", now, hal.close_cover)
        elif kind == "estop":
            hal.press_estop()
            self._timed(spec, "the E-stop pressed", now, hal.release_estop)
        elif kind == "overheat":
            hal.set_temperature(self.timings.overheat_dc + OVERHEAT_OVER_DC)
        elif kind == "dice":
            assert run is not None
            hal.kill_dice_sensor()
            self._hold(run, spec, "the dice sensor dead", hal.revive_dice_sensor)
        elif kind == "ntc":
            hal.break_ntc(NTC_SHORTED if spec.wire == "short" else NTC_OPEN)
            self._lasting(spec, f"the heat-sink NTC {spec.wire}", now, run, hal.mend_ntc)
        elif kind in ("amp", "driver"):
            motor = spec.motor
            assert motor is not None
            name = f"motor {motor} ({codes.motor_name(motor)})"
            if kind == "amp":
                hal.stick_amp(motor)
                text = f"the current sense of {name} stuck at its rail"
                self._lasting(spec, text, now, run, functools.partial(hal.free_amp, motor))
            else:
                hal.short_driver(motor)
                text = f"the driver of {name} shorted"
                self._lasting(spec, text, now, run, functools.partial(hal.mend_driver, motor))
        elif kind == "expander":
            address = EXPANDERS[spec.part]
            hal.unplug(address)
            text = f"the {spec.part} expander (I2C 0x{address:02x}) not answering"
            self._lasting(spec, text, now, run, hal.plug)
        elif kind == "internal":
            hal.fail_next_read()
        elif kind == "reboot":
            self.requests.append(("reboot", 0.0, 0.0))
        elif kind == "noise":
            self.requests.append(("noise", spec.error, spec.drop))
        elif kind == "cut":
            self.requests.append(("cut", spec.seconds, 0.0))
        else:  # pragma: no cover - the parser allows no other kind here
            raise ValueError(f"fault {spec}: cannot strike at a point of time")

    def _overheat(self, run: _Run, spec: FaultSpec, now: int, within: int) -> None:
        """The drivers' cooling fails: the heat sink warms steadily to just over the limit,
        reaching it ``within`` ms (at once when that is no time)."""
        hal = self.hal
        target = self.timings.overheat_dc + OVERHEAT_OVER_DC
        if within <= 0:
            hal.set_temperature(target)
            return
        rate = -(-(target - hal.heat_sink_dc()) * 1000 // within)  # dc per s, rounded up
        hal.heat(max(rate, 1))
        self._hold(run, spec, "the drivers' cooling failed", lambda: hal.heat(0))

    def _hold(self, run: _Run, spec: FaultSpec, text: str, undo: Callable[[], None]) -> None:
        """A condition of this run: undone ``hold`` s after the run ends (the supervisor ends it
        at the fault it reports)."""
        cond = Condition(spec, text, undo)
        run.conditions.append(cond)
        self.conditions.append(cond)

    def _lasting(
        self, spec: FaultSpec, text: str, now: int, run: _Run | None, undo: Callable[[], None]
    ) -> None:
        """A broken part: ``hold`` s after its run ends, or from now when struck at once
        (forever by default: until repaired)."""
        if run is None:
            self._timed(spec, text, now, undo)
        else:
            self._hold(run, spec, text, undo)

    def _timed(self, spec: FaultSpec, text: str, now: int, undo: Callable[[], None]) -> None:
        """A condition that lasts ``hold`` s from now (the cover, the E-stop)."""
        self.conditions.append(Condition(spec, text, undo, now + spec.hold * 1000.0))

    # --- nominal times ---------------------------------------------------------------------------

    def _nominal(self, phase: int) -> int:
        t = self.timings
        if phase == codes.PHASE_SHUFFLE:
            return t.shuffle_ms(self.tiles)
        if phase == codes.PHASE_BUILD:
            return self.tiles * t.tile_ms + 4 * t.push_ms
        if phase == codes.PHASE_LIFT:
            return t.lift_ms
        if phase == codes.PHASE_COLLECT:
            plates_up = any(self.hal.between(p) or not self._down(p) for p in range(4))
            return (t.lift_ms if plates_up else 0) + 2 * t.centre_ms + t.drop_ms
        if phase == codes.PHASE_DICE:
            return t.dice_ms
        return 0

    def _down(self, plate: int) -> bool:
        return bool(self.hal.level_raw(SENSE_DOWN + plate))

    def _turning(self, phase: int, motor: int) -> int:
        """How long ``motor`` turns in a healthy run of ``phase`` (ms): what a stall's ``at`` is
        a percent of."""
        t = self.timings
        if phase == codes.PHASE_SHUFFLE:
            return t.shuffle_ms(self.tiles)
        if phase == codes.PHASE_BUILD:
            return 4 * t.push_ms if motor == codes.MOTOR_CHAIN else self.tiles * t.tile_ms
        if phase == codes.PHASE_LIFT:
            return t.lift_ms
        if phase == codes.PHASE_COLLECT:
            if motor == codes.MOTOR_SHUFFLE_DISC:
                return t.drop_ms
            return 2 * t.centre_ms if motor == codes.MOTOR_CENTRE_LIFT else t.lift_ms
        if phase == codes.PHASE_DICE:
            return t.dice_ms
        return 0
