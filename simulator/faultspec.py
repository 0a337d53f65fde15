"""The fault spec language of the simulated board: a spec string or a scenario file's entry,
parsed to a :class:`simulator.faults.FaultSpec` (the catalogue and the language are described
in simulator/faults.py and docs/simulator.md). Every refusal is a FaultSpecError naming the
spec, the key and what it takes.
"""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

from protocol import codes
from simulator.faults import (
    BY_MOTOR,
    COMMON_PHASED,
    EXPANDERS,
    FAULT_KINDS,
    FOREVER,
    KEY_HELP,
    MOTOR_KINDS,
    NTC_WIRES,
    PHASE_MOTORS,
    PHASE_WORD_OF,
    PHASE_WORDS,
    STRIKES_AT_A_POINT,
    FaultSpec,
    FaultSpecError,
)


def _int(spec: str, key: str, raw: str, low: int, high: int) -> int:
    try:
        value = int(raw, 10)
    except ValueError:
        raise FaultSpecError(
            f"fault {spec!r}: {key}={raw!r} is not an integer ({KEY_HELP[key]})"
        ) from None
    if not low <= value <= high:
        raise FaultSpecError(f"fault {spec!r}: {key}={value} out of range ({KEY_HELP[key]})")
    return value


def _float(spec: str, key: str, raw: str, low: float, high: float, *, low_open: bool) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise FaultSpecError(
            f"fault {spec!r}: {key}={raw!r} is not a number ({KEY_HELP[key]})"
        ) from None
    if not math.isfinite(value) or value > high or value < low or (low_open and value == low):
        raise FaultSpecError(f"fault {spec!r}: {key}={raw} out of range ({KEY_HELP[key]})")
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
        allowed_keys.update(COMMON_PHASED)
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
    elif kind_word in BY_MOTOR and motor is None:
        values["motor"] = codes.MOTOR_SHUFFLE_DISC
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
    if key == "wire":
        if raw.lower() not in NTC_WIRES:
            raise FaultSpecError(f"fault {spec!r}: wire={raw!r} is not one of {KEY_HELP[key]}")
        return raw.lower()
    if key == "part":
        if raw.lower() not in EXPANDERS:
            raise FaultSpecError(f"fault {spec!r}: part={raw!r} is not {KEY_HELP[key]}")
        return raw.lower()
    raise FaultSpecError(f"fault {spec!r}: unknown key {key!r}")  # pragma: no cover


_TABLE_KEYS = {"kind", "phase", "spec", *KEY_HELP}


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
