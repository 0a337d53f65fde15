"""The fault catalogue of the simulated board and its spec language.

A fault spec is one line: ``KIND[@PHASE][:KEY=VALUE[,KEY=VALUE]...]``, for example
``jam@build:wall=2`` (a tile jams at the head while wall 2 is built), ``stall@lift:motor=4``,
``cover@shuffle:at=30,hold=10``, ``noise:error=0.001,drop=0.0005``, ``cut:seconds=3``.

- KIND names what goes wrong (table FAULT_KINDS below).
- PHASE is when it strikes: ``shuffle``, ``build``, ``lift``, ``collect``, ``dice``, or ``now``
  (at once, whatever the board is doing). Each kind has the phases it can strike in and a default.
- Keys common to the faults that strike in a phase: ``at`` (percent of the phase, 0..99, where it
  strikes; for wall faults, percent of that wall; for a stall, percent of the time the motor
  turns in that phase), ``nth`` (strike on the nth run of that phase after injection, default
  1 = the next one), ``times`` (how many runs it strikes, default 1, 0 = every run). ``hold``
  (seconds the hardware condition stays after the board reported its fault, or ``forever`` =
  until a technician repairs it; CLEAR_FAULT is refused with CAUSE_PRESENT meanwhile when the
  firmware's sensors show the cause at rest).

Each kind is a condition of the simulated hardware (simulator/sabotage.py sets it, at its point
of its phase): the firmware finds the fault from what its sensors and currents show.

Scenario files (TOML) hold a list of faults, each either a spec string or a table::

    description = "a jam on the second build, then a stuck East plate"
    [[fault]]
    spec = "jam@build:wall=2,nth=2"
    [[fault]]
    kind = "lift"
    phase = "lift"
    plate = 0
    hold = "forever"

This module is the catalogue and the parsed spec (pure data); the language's parser and the
scenario files are simulator/faultspec.py, the catalogue's table in the docs
simulator/faultdoc.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from firmware.supervisor import MOTOR_SUBSYSTEM
from protocol import codes

#: phase words of the spec language -> protocol phase code (None = at once)
PHASE_WORDS: dict[str, int | None] = {
    "now": None,
    "shuffle": codes.PHASE_SHUFFLE,
    "build": codes.PHASE_BUILD,
    "lift": codes.PHASE_LIFT,
    "collect": codes.PHASE_COLLECT,
    "dice": codes.PHASE_DICE,
    "test": codes.PHASE_MOTOR_TEST,
}
PHASE_WORD_OF: dict[int | None, str] = {v: k for k, v in PHASE_WORDS.items()}

MOTION_PHASES: tuple[int, ...] = (
    codes.PHASE_SHUFFLE,
    codes.PHASE_BUILD,
    codes.PHASE_LIFT,
    codes.PHASE_COLLECT,
    codes.PHASE_DICE,
)

#: motors running in each phase (a stall can only strike a running motor)
PHASE_MOTORS: dict[int, tuple[int, ...]] = {
    codes.PHASE_SHUFFLE: (codes.MOTOR_SHUFFLE_DISC,),
    codes.PHASE_BUILD: (codes.MOTOR_SHUFFLE_DISC, codes.MOTOR_STACKER_HEAD, codes.MOTOR_CHAIN),
    codes.PHASE_LIFT: (
        codes.MOTOR_LIFT_E,
        codes.MOTOR_LIFT_S,
        codes.MOTOR_LIFT_W,
        codes.MOTOR_LIFT_N,
    ),
    codes.PHASE_COLLECT: (
        codes.MOTOR_LIFT_E,
        codes.MOTOR_LIFT_S,
        codes.MOTOR_LIFT_W,
        codes.MOTOR_LIFT_N,
        codes.MOTOR_CENTRE_LIFT,
        codes.MOTOR_SHUFFLE_DISC,
    ),
    codes.PHASE_DICE: (codes.MOTOR_DICE,),
    codes.PHASE_MOTOR_TEST: tuple(range(codes.MOTOR_COUNT)),
}

FOREVER = math.inf


class FaultSpecError(ValueError):
    """A fault spec or scenario file is wrong; the message names the spec and what is wrong."""


@dataclass(frozen=True)
class FaultKind:
    """One entry of the catalogue."""

    name: str
    code: int  # protocol fault code; 0 for board or link events that are not FAULTs
    subsystem: int
    phases: tuple[int | None, ...]  # where it may strike; None = at once
    default_phase: int | None
    keys: tuple[str, ...]  # kind-specific keys accepted besides the common ones
    default_hold: float  # seconds the cause stays after the fault
    text: str


_ANY_MOTION: tuple[int | None, ...] = MOTION_PHASES
#: kinds that strike at a fixed point of their phase (no ``at`` key): the end of a wall, the
#: lift's limit-switch timeout, the end of the build
STRIKES_AT_A_POINT = frozenset({"short", "extra", "lift", "chain", "count", "strain"})
#: kinds that block the mechanism of one motor (``motor``; in a motor test, the tested one)
MOTOR_KINDS = frozenset({"stall", "strain"})
#: kinds whose fault's subsystem is their motor's (MOTOR_SUBSYSTEM)
BY_MOTOR = frozenset({"stall", "driver", "amp"})
#: the wire= of an ``ntc`` fault
NTC_WIRES = ("open", "short")
#: the part= of an ``expander`` fault: the I2C address of each expander (protocol.codes.PARTS)
EXPANDERS: dict[str, int] = {
    name.split("_")[0].lower(): address
    for address, (name, _words, _advice) in codes.PARTS.items()
    if name.endswith("_EXPANDER")
}
COMMON_PHASED = ("at", "nth", "times")

FAULT_KINDS: dict[str, FaultKind] = {
    k.name: k
    for k in (
        FaultKind(
            "jam",
            codes.FAULT_SORT_TIMEOUT,
            codes.SUB_SHUFFLER,
            (codes.PHASE_BUILD,),
            codes.PHASE_BUILD,
            ("wall", "hold"),
            0.0,
            "a tile sticks between the disc and the stacker head at `at` % of wall `wall`: no tile "
            "reaches the head, the firmware's tile watch trips after 5 s: SORT_TIMEOUT (detail = "
            "wall); the wall counts stop where they were",
        ),
        FaultKind(
            "headjam",
            codes.FAULT_HEAD_JAM,
            codes.SUB_STACKER_HEAD,
            (codes.PHASE_BUILD,),
            codes.PHASE_BUILD,
            ("wall", "hold"),
            0.0,
            "the stacker head jams at `at` % of wall `wall`: it strains under its current limit, "
            "its hall sensor goes quiet and tiles pile up behind it (belt full): HEAD_JAM after "
            "0.5 s",
        ),
        FaultKind(
            "short",
            codes.FAULT_WALL_SHORT,
            codes.SUB_STACKER_HEAD,
            (codes.PHASE_BUILD,),
            codes.PHASE_BUILD,
            ("wall", "hold"),
            0.0,
            "a tile falls off the belt on wall `wall`: the wall channel counts one tile less than "
            "the head did: WALL_SHORT (detail = wall)",
        ),
        FaultKind(
            "extra",
            codes.FAULT_WALL_EXTRA,
            codes.SUB_STACKER_HEAD,
            (codes.PHASE_BUILD,),
            codes.PHASE_BUILD,
            ("wall", "hold"),
            0.0,
            "a stray tile lands in the wall channel on wall `wall`: one more than the head "
            "counted: WALL_EXTRA (detail = wall)",
        ),
        FaultKind(
            "stall",
            codes.FAULT_MOTOR_STALL,
            codes.SUB_SHUFFLER,  # replaced by the motor's subsystem
            (*_ANY_MOTION, codes.PHASE_MOTOR_TEST),
            codes.PHASE_SHUFFLE,
            ("motor", "hold"),
            0.0,
            "the motor's mechanism seizes once the motor has turned `at` % of its time in the "
            "phase (the head and the chain: about the wall `at` points to): its current goes over "
            "twice its nominal, MOTOR_STALL after 0.2 s (detail = motor); in a motor test (phase "
            "test) the tested motor seizes at once and MOTOR_RESULT says ok = 0, without a fault",
        ),
        FaultKind(
            "strain",
            0,
            codes.SUB_BOARD,
            (codes.PHASE_MOTOR_TEST,),
            codes.PHASE_MOTOR_TEST,
            ("motor", "hold"),
            0.0,
            "the tested motor's mechanism drags (motor `motor`, or the first one tested): it "
            "does not move and its motor strains at 1.4 times its nominal current, under its "
            "limit (twice its nominal), so no stall trips; the motor test finds it: MOTOR_RESULT "
            "ok = 0 once it has strained for 0.2 s, without a fault",
        ),
        FaultKind(
            "lift",
            codes.FAULT_LIFT_LIMIT,
            codes.SUB_LIFTS,
            (codes.PHASE_LIFT, codes.PHASE_COLLECT),
            codes.PHASE_LIFT,
            ("plate", "hold"),
            0.0,
            "a lift plate sticks just after leaving its limit switch, straining under its current "
            "limit: LIFT_LIMIT after 3 s (detail = plate 0..3, 4 = centre lift, collect only); a "
            "plate that does not move in that run is not touched",
        ),
        FaultKind(
            "chain",
            codes.FAULT_CHAIN_HOME,
            codes.SUB_CHAIN,
            (codes.PHASE_BUILD,),
            codes.PHASE_BUILD,
            ("wall", "hold"),
            0.0,
            "the chain sticks away from home while it pushes wall `wall` (default the last): "
            "CHAIN_HOME after 3 s, chain-home sensor off",
        ),
        FaultKind(
            "dice",
            codes.FAULT_DICE_FAULT,
            codes.SUB_DICE,
            (codes.PHASE_DICE,),
            codes.PHASE_DICE,
            ("hold",),
            0.0,
            "the dice sensor dies at `at` % of the roll: no tick while the dice tumble, DICE_FAULT "
            "after 0.5 s, dice-present sensor off",
        ),
        FaultKind(
            "overheat",
            codes.FAULT_OVERHEAT,
            codes.SUB_POWER,
            (None, *_ANY_MOTION),
            codes.PHASE_SHUFFLE,
            (),
            0.0,
            "the drivers' cooling fails: from the start of the phase the heat sink warms "
            "steadily to 85.5 °C at `at` % of it (now: at once): OVERHEAT at 85.0 °C; the board "
            "then cools (120 s time constant) and the cause stays until it is below 75.0 °C",
        ),
        FaultKind(
            "cover",
            codes.FAULT_COVER_OPEN,
            codes.SUB_SAFETY,
            (None, *_ANY_MOTION),
            codes.PHASE_BUILD,
            ("hold",),
            5.0,
            "the cover is opened: COVER_OPEN at once if a motion runs (motions are refused while "
            "it is open); it closes again after hold seconds (default 5; forever = until closed "
            "from the control channel)",
        ),
        FaultKind(
            "estop",
            codes.FAULT_ESTOP,
            codes.SUB_SAFETY,
            (None, *_ANY_MOTION),
            None,
            ("hold",),
            3.0,
            "the emergency stop is pressed: every motor loses power (the dice too), FAULT "
            "ESTOP, state ESTOP; "
            "released after hold seconds (default 3; forever = until released from the control "
            "channel)",
        ),
        FaultKind(
            "reader",
            codes.FAULT_READER_FAULT,
            codes.SUB_READER,
            (codes.PHASE_BUILD,),
            codes.PHASE_BUILD,
            ("wall", "hold"),
            0.0,
            "the tile reader goes silent at `at` % of wall `wall`: the next tile gets no name "
            "within 0.3 s: READER_FAULT, reader-ok sensor off (a board without reader does not "
            "notice)",
        ),
        FaultKind(
            "count",
            codes.FAULT_TILE_COUNT,
            codes.SUB_READER,
            (codes.PHASE_BUILD,),
            codes.PHASE_BUILD,
            ("hold",),
            0.0,
            "the reader names one tile of the build as another face: the manifest is not the set, "
            "TILE_COUNT at the end of the build (a board without reader does not notice)",
        ),
        FaultKind(
            "ntc",
            codes.FAULT_SENSOR_BROKEN,
            codes.SUB_POWER,
            (None, *_ANY_MOTION),
            None,
            ("wire", "hold"),
            FOREVER,
            "the heat-sink NTC's wiring breaks, `wire` open (default: ADC1 reads the pull-up's "
            "3.3 V, 4,094 of 4,095, which the Beta equation would take for -110 °C) or short (0): "
            "outside its range of -20..150 °C, SENSOR_BROKEN (detail 9) at the next pass, at rest "
            "too, and no motion starts; it stays until repaired (hold: seconds, default forever)",
        ),
        FaultKind(
            "amp",
            codes.FAULT_SENSOR_BROKEN,
            codes.SUB_SHUFFLER,  # replaced by the motor's subsystem
            (None, *_ANY_MOTION),
            None,
            ("motor", "hold"),
            FOREVER,
            "motor `motor`'s current-sense amplifier sticks at its supply rail (default motor 0): "
            "its channel reads full scale, over the largest stall current, SENSOR_BROKEN "
            "(detail = motor) within 0.1 s at rest (at the next pass while the motor runs); it "
            "stays until repaired (hold: seconds, default forever)",
        ),
        FaultKind(
            "driver",
            codes.FAULT_DRIVER_SHORT,
            codes.SUB_SHUFFLER,  # replaced by the motor's subsystem
            (None, *_ANY_MOTION),
            None,
            ("motor", "hold"),
            FOREVER,
            "motor `motor`'s driver shorts (default motor 0): the motor runs forward at full "
            "speed and draws its current whatever the firmware, the enable line or the E-stop "
            "say; once the firmware has it off, the current over 200 mA for 0.2 s is DRIVER_SHORT "
            "(detail = motor); it stays until repaired (hold: seconds, default forever)",
        ),
        FaultKind(
            "expander",
            codes.FAULT_PART_MISSING,
            codes.SUB_BOARD,
            (None, *_ANY_MOTION),
            None,
            ("part", "hold"),
            FOREVER,
            "an I2C expander stops answering, `part` input (default: the MCP23017 at 0x20, the "
            "limit switches) or output (0x21: lift directions, set gate, LEDs, the current "
            "multiplexer), its cable out: PART_MISSING (detail = its address) once the firmware "
            "next talks to it, at rest too, and no motion starts; it stays until repaired "
            "(hold: seconds, default forever), and CLEAR_FAULT sets it up again",
        ),
        FaultKind(
            "internal",
            codes.FAULT_INTERNAL,
            codes.SUB_BOARD,
            (None, *_ANY_MOTION),
            None,
            ("code",),
            0.0,
            "a bus error in a sensor read: the firmware's loop catches the exception and reports "
            "INTERNAL (detail 0xEE, the firmware's own; `code` is accepted and not used)",
        ),
        FaultKind(
            "reboot",
            0,
            codes.SUB_BOARD,
            (None, *_ANY_MOTION),
            None,
            (),
            0.0,
            "the board's power goes and comes back: new session id, motors stopped; it answers "
            "NO_SESSION until the host sends HELLO again; where the sets are comes back from its "
            "store (a set a build, lift or collect was moving is UNKNOWN)",
        ),
        FaultKind(
            "noise",
            0,
            codes.SUB_BOARD,
            (None, *_ANY_MOTION),
            None,
            ("error", "drop"),
            0.0,
            "line noise from then on: each byte is corrupted (one bit flipped) with probability "
            "error and lost with probability drop, both directions",
        ),
        FaultKind(
            "cut",
            0,
            codes.SUB_BOARD,
            (None, *_ANY_MOTION),
            None,
            ("seconds",),
            0.0,
            "the line is cut for the given seconds (default 2): every byte both ways is lost",
        ),
    )
}

KEY_HELP: dict[str, str] = {
    "at": "percent of the phase where it strikes, 0..99",
    "nth": "strike on the nth run of the phase, 1..1000",
    "times": "how many runs it strikes, 0 (every run)..1000",
    "hold": "seconds the cause stays, or 'forever'",
    "wall": "wall 0..3 (E S W N)",
    "motor": "motor 0..8",
    "plate": "lift plate 0..3 (E S W N), 4 = centre lift",
    "code": "detail byte 0..255",
    "error": "probability 0..1 that a byte is corrupted",
    "drop": "probability 0..1 that a byte is lost",
    "seconds": "seconds the line stays cut, > 0",
    "wire": "open or short",
    "part": "input or output (the expander at I2C 0x20 or 0x21)",
}


@dataclass(frozen=True)
class FaultSpec:
    """A parsed fault spec. ``phase`` None means at once. ``hold`` is in seconds (inf = forever)."""

    kind: str
    phase: int | None
    at: int = 50
    nth: int = 1
    times: int = 1
    hold: float = 0.0
    wall: int | None = None
    motor: int | None = None
    plate: int = 0
    code: int = 0
    error: float = 0.0
    drop: float = 0.0
    seconds: float = 2.0
    wire: str = "open"
    part: str = "input"

    @property
    def info(self) -> FaultKind:
        return FAULT_KINDS[self.kind]

    @property
    def fault_code(self) -> int:
        return self.info.code

    @property
    def subsystem(self) -> int:
        if self.kind in BY_MOTOR and self.motor is not None:
            return MOTOR_SUBSYSTEM[self.motor]
        return self.info.subsystem

    def __str__(self) -> str:
        """The canonical spec string (parses back to an equal FaultSpec)."""
        info = self.info
        text = self.kind
        if self.phase != info.default_phase:
            text += "@" + PHASE_WORD_OF[self.phase]
        keys: list[str] = []
        default = FaultSpec(self.kind, self.phase)
        for name in ("wall", "motor", "plate", "code", "error", "drop", "seconds", "wire", "part"):
            if name in info.keys and getattr(self, name) != getattr(default, name):
                keys.append(f"{name}={_fmt(getattr(self, name))}")
        if self.phase is not None:
            for name in COMMON_PHASED:
                if name == "at" and self.kind in STRIKES_AT_A_POINT:
                    continue
                if getattr(self, name) != getattr(default, name):
                    keys.append(f"{name}={_fmt(getattr(self, name))}")
        if "hold" in info.keys and self.hold != info.default_hold:
            keys.append("hold=forever" if math.isinf(self.hold) else f"hold={_fmt(self.hold)}")
        if keys:
            text += ":" + ",".join(keys)
        return text


def _fmt(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


#: the kinds that have no meaning on the emulated chip (simulator/chip/, docs/chip.md), and why
#: (no apostrophes: the command line clips a long quoted value); every other kind is a condition
#: of the table's hardware, which the chip's pins are wired to
OFF_THE_CHIP: dict[str, str] = {
    "internal": "it raises an exception inside a sensor read of the simulated HAL, which only "
    "the firmware under CPython calls; on the chip the firmware reads its parts through the "
    "Pico HAL, where a part that stops answering is the fault expander",
}


def chip_refusal(spec: FaultSpec) -> str | None:
    """Why ``spec`` cannot strike on the emulated chip (one line naming it), or None."""
    why = OFF_THE_CHIP.get(spec.kind)
    return None if why is None else f"fault {str(spec)!r} does not go with the chip: {why}"
