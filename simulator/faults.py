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

This module is pure parsing and data (no I/O besides reading a scenario file).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path

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

#: subsystem reported for a stall of each motor
MOTOR_SUBSYSTEM: dict[int, int] = {
    codes.MOTOR_SHUFFLE_DISC: codes.SUB_SHUFFLER,
    codes.MOTOR_STACKER_HEAD: codes.SUB_STACKER_HEAD,
    codes.MOTOR_CHAIN: codes.SUB_CHAIN,
    codes.MOTOR_LIFT_E: codes.SUB_LIFTS,
    codes.MOTOR_LIFT_S: codes.SUB_LIFTS,
    codes.MOTOR_LIFT_W: codes.SUB_LIFTS,
    codes.MOTOR_LIFT_N: codes.SUB_LIFTS,
    codes.MOTOR_CENTRE_LIFT: codes.SUB_LIFTS,
    codes.MOTOR_DICE: codes.SUB_DICE,
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
_COMMON_PHASED = ("at", "nth", "times")

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
            "the emergency stop is pressed: the drivers lose power, FAULT ESTOP, state ESTOP; "
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

_KEY_HELP: dict[str, str] = {
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

    @property
    def info(self) -> FaultKind:
        return FAULT_KINDS[self.kind]

    @property
    def fault_code(self) -> int:
        return self.info.code

    @property
    def subsystem(self) -> int:
        if self.kind == "stall" and self.motor is not None:
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
        for name in ("wall", "motor", "plate", "code", "error", "drop", "seconds"):
            if name in info.keys and getattr(self, name) != getattr(default, name):
                keys.append(f"{name}={_fmt(getattr(self, name))}")
        if self.phase is not None:
            for name in _COMMON_PHASED:
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


def _int(spec: str, key: str, raw: str, low: int, high: int) -> int:
    try:
        value = int(raw, 10)
    except ValueError:
        raise FaultSpecError(
            f"fault {spec!r}: {key}={raw!r} is not an integer ({_KEY_HELP[key]})"
        ) from None
    if not low <= value <= high:
        raise FaultSpecError(f"fault {spec!r}: {key}={value} out of range ({_KEY_HELP[key]})")
    return value


def _float(spec: str, key: str, raw: str, low: float, high: float, *, low_open: bool) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise FaultSpecError(
            f"fault {spec!r}: {key}={raw!r} is not a number ({_KEY_HELP[key]})"
        ) from None
    if not math.isfinite(value) or value > high or value < low or (low_open and value == low):
        raise FaultSpecError(f"fault {spec!r}: {key}={raw} out of range ({_KEY_HELP[key]})")
    return value


def parse_fault(spec: str) -> FaultSpec:
    """Parse ``KIND[@PHASE][:KEY=VALUE,...]``; raise FaultSpecError naming what is wrong."""
    if not isinstance(spec, str):
        raise FaultSpecError(f"fault {spec!r}: a spec is a string like 'jam@build:wall=2'")
    text = spec.strip()
    head, colon, tail = text.partition(":")
    kind_word, at_sign, phase_word = head.partition("@")
    kind_word = kind_word.strip().lower()
    info = FAULT_KINDS.get(kind_word)
    if info is None:
        known = ", ".join(sorted(FAULT_KINDS))
        raise FaultSpecError(f"fault {spec!r}: unknown kind {kind_word!r} (known: {known})")
    phase = info.default_phase
    if at_sign:
        word = phase_word.strip().lower()
        if word not in PHASE_WORDS:
            known = ", ".join(PHASE_WORDS)
            raise FaultSpecError(f"fault {spec!r}: unknown phase {word!r} (known: {known})")
        phase = PHASE_WORDS[word]
    if phase not in info.phases:
        allowed = ", ".join(PHASE_WORD_OF[p] for p in info.phases)
        raise FaultSpecError(
            f"fault {spec!r}: {kind_word} cannot strike in phase {PHASE_WORD_OF[phase]} "
            f"(possible: {allowed})"
        )
    allowed_keys = set(info.keys)
    if phase is not None:
        allowed_keys.update(_COMMON_PHASED)
        if kind_word in STRIKES_AT_A_POINT:
            allowed_keys.discard("at")
    values: dict[str, object] = {"hold": info.default_hold}
    seen: set[str] = set()
    if colon:
        if not tail.strip():
            raise FaultSpecError(f"fault {spec!r}: nothing after ':' (expected KEY=VALUE,...)")
        for item in tail.split(","):
            key, eq, raw = item.partition("=")
            key = key.strip().lower()
            raw = raw.strip()
            if not eq or not key or not raw:
                raise FaultSpecError(f"fault {spec!r}: {item.strip()!r} is not KEY=VALUE")
            if key not in allowed_keys:
                possible = ", ".join(sorted(allowed_keys)) or "none"
                raise FaultSpecError(
                    f"fault {spec!r}: unknown key {key!r} for {kind_word}"
                    f"{'' if phase is not None else ' (at once)'} (possible: {possible})"
                )
            if key in seen:
                raise FaultSpecError(f"fault {spec!r}: key {key!r} given twice")
            seen.add(key)
            values[key] = _parse_value(spec, key, raw)
    motor = values.get("motor")
    if kind_word in MOTOR_KINDS:
        assert phase is not None
        running = PHASE_MOTORS[phase]
        if motor is None and phase != codes.PHASE_MOTOR_TEST:
            motor = running[0] if phase != codes.PHASE_BUILD else codes.MOTOR_STACKER_HEAD
        elif motor is not None and motor not in running:
            names = ", ".join(f"{m} {codes.motor_name(m)}" for m in running)
            raise FaultSpecError(
                f"fault {spec!r}: motor {motor} ({codes.motor_name(int(str(motor)))}) does not run "
                f"during {PHASE_WORD_OF[phase]} (running: {names})"
            )
        values["motor"] = motor
    if kind_word == "lift" and values.get("plate") == 4 and phase != codes.PHASE_COLLECT:
        raise FaultSpecError(f"fault {spec!r}: plate 4 (the centre lift) only moves during collect")
    if kind_word == "chain" and "wall" not in values:
        values["wall"] = 3
    if kind_word in ("jam", "headjam", "short", "extra", "reader") and "wall" not in values:
        values["wall"] = 0
    if kind_word == "noise" and "error" not in values and "drop" not in values:
        raise FaultSpecError(f"fault {spec!r}: noise needs error=P and/or drop=P")
    return FaultSpec(kind=kind_word, phase=phase, **values)  # type: ignore[arg-type]


def _parse_value(spec: str, key: str, raw: str) -> object:
    if key == "at":
        return _int(spec, key, raw, 0, 99)
    if key == "nth":
        return _int(spec, key, raw, 1, 1000)
    if key == "times":
        return _int(spec, key, raw, 0, 1000)
    if key == "wall":
        return _int(spec, key, raw, 0, 3)
    if key == "motor":
        return _int(spec, key, raw, 0, codes.MOTOR_COUNT - 1)
    if key == "plate":
        return _int(spec, key, raw, 0, 4)
    if key == "code":
        return _int(spec, key, raw, 0, 255)
    if key == "hold":
        if raw.lower() in ("forever", "inf"):
            return FOREVER
        return _float(spec, key, raw, 0.0, 1e6, low_open=False)
    if key in ("error", "drop"):
        return _float(spec, key, raw, 0.0, 1.0, low_open=False)
    if key == "seconds":
        return _float(spec, key, raw, 0.0, 1e6, low_open=True)
    raise FaultSpecError(f"fault {spec!r}: unknown key {key!r}")  # pragma: no cover


_TABLE_KEYS = {"kind", "phase", "spec", *_KEY_HELP}


def spec_from_table(entry: dict[str, object], where: str = "fault") -> FaultSpec:
    """A FaultSpec from a scenario table: either ``spec = "..."`` or ``kind``, ``phase``, keys."""
    unknown = sorted(set(entry) - _TABLE_KEYS)
    if unknown:
        raise FaultSpecError(f"{where}: unknown key {unknown[0]!r}")
    if "spec" in entry:
        if len(entry) != 1:
            raise FaultSpecError(f"{where}: give either spec = '...' or kind/phase/keys, not both")
        spec = entry["spec"]
        if not isinstance(spec, str):
            raise FaultSpecError(f"{where}: spec must be a string, not {spec!r}")
        try:
            return parse_fault(spec)
        except FaultSpecError as exc:
            raise FaultSpecError(f"{where}: {exc}") from None
    kind = entry.get("kind")
    if not isinstance(kind, str):
        raise FaultSpecError(f"{where}: needs kind = '...' (or spec = '...')")
    text = kind
    phase = entry.get("phase")
    if phase is not None:
        if not isinstance(phase, str):
            raise FaultSpecError(f"{where}: phase must be a string, not {phase!r}")
        text += "@" + phase
    items = []
    for key, value in entry.items():
        if key in ("kind", "phase"):
            continue
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise FaultSpecError(f"{where}: {key} = {value!r} must be a number or a string")
        items.append(f"{key}={value}")
    if items:
        text += ":" + ",".join(items)
    try:
        return parse_fault(text)
    except FaultSpecError as exc:
        raise FaultSpecError(f"{where}: {exc}") from None


def load_scenario(path: str | Path) -> list[FaultSpec]:
    """The faults of a TOML scenario file; FaultSpecError names the file and the entry."""
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise FaultSpecError(f"scenario {str(p)!r}: cannot read it ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise FaultSpecError(f"scenario {str(p)!r}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise FaultSpecError(f"scenario {str(p)!r}: not valid TOML ({exc})") from None
    unknown = sorted(set(data) - {"description", "fault"})
    if unknown:
        raise FaultSpecError(
            f"scenario {str(p)!r}: unknown top-level key {unknown[0]!r} "
            "(expected description and [[fault]] tables)"
        )
    entries = data.get("fault", [])
    if not isinstance(entries, list):
        raise FaultSpecError(f"scenario {str(p)!r}: 'fault' must be an array of tables [[fault]]")
    specs = []
    for i, entry in enumerate(entries):
        where = f"scenario {str(p)!r}, fault #{i + 1}"
        if isinstance(entry, str):
            try:
                specs.append(parse_fault(entry))
            except FaultSpecError as exc:
                raise FaultSpecError(f"{where}: {exc}") from None
        elif isinstance(entry, dict):
            specs.append(spec_from_table(entry, where))
        else:
            raise FaultSpecError(f"{where}: expected a table or a spec string")
    return specs


def catalogue_markdown() -> str:
    """The fault catalogue as a Markdown table (docs/simulator.md carries it; a test compares)."""
    lines = [
        "| kind | FAULT code | subsystem | phases (default first) | keys | the hardware condition, "
        "and what the firmware finds |",
        "|---|---|---|---|---|---|",
    ]
    for kind in FAULT_KINDS.values():
        code = codes.fault_name(kind.code) if kind.code else "(none)"
        subsystem = "by motor" if kind.name == "stall" else codes.subsystem_name(kind.subsystem)
        if kind.code == 0:
            subsystem = "-"
        phases = [kind.default_phase] + [p for p in kind.phases if p != kind.default_phase]
        words = ", ".join(PHASE_WORD_OF[p] for p in phases)
        keys = list(kind.keys)
        if any(p is not None for p in kind.phases):
            keys += ["nth", "times"] if kind.name in STRIKES_AT_A_POINT else ["at", "nth", "times"]
        lines.append(
            f"| `{kind.name}` | {code} | {subsystem} | {words} | {', '.join(keys)} | {kind.text} |"
        )
    return "\n".join(lines) + "\n"
