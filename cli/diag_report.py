"""`mjtable diag`'s report in words: what diag.py gathered, as sentences and small tables.

Each function turns one section of the report (the dict ``mjtable diag --json`` prints)
into lines for a person: no Python reprs, names of flags and motors in the protocol's own
words (protocol/codes.py), one row a subject.
"""

from __future__ import annotations

from typing import Any

WIDTH = 13  # the first column of a section's rows


def row(key: str, value: object) -> str:
    return f"  {key:<{WIDTH}}{value}"


def listed(items: list[str], empty: str = "none") -> str:
    return ", ".join(items) if items else empty


def version_lines(versions: dict[str, Any]) -> list[str]:
    board = f"firmware {versions['firmware']}, build {versions['build']}"
    if versions.get("build_unknown"):
        board += " (not built by mjtable firmware build)"
    return [
        "versions",
        row(
            "controller", f"mjtable {versions['controller']}, board protocol {versions['protocol']}"
        ),
        row("board", f"{board}, board protocol {versions['board_protocol']}"),
    ]


def board_lines(where: str, hello: dict[str, Any], status: dict[str, Any]) -> list[str]:
    """``where``: "on PORT", or "through the service on SOCKET"."""
    seed = hello["seed"]
    shuffles = "random" if seed is None else f"seeded with {seed} (reproducible)"
    stacks = hello["stacks_per_wall"]
    sets = "; ".join(f"{name}: {words}" for name, words in status["tile_sets"].items())
    return [
        f"board {where}",
        row("serial", f"{hello['serial']}, session {hello['session']}"),
        row("fitted", listed(hello["fitted"], "no tile reader, no dice unit, no seat buttons")),
        row("tiles", f"{hello['tile_sets']} set(s) of {hello['tiles']}, {stacks} stacks a wall"),
        row("shuffles", shuffles),
        row("tile sets", sets or "none reported"),
        row("last start", status["reset_cause"]),
        row("motions", f"{status['motions']} begun since the board was made"),
    ]


def sensor_lines(sensors: dict[str, Any]) -> list[str]:
    walls = ", ".join(f"{seat} {count}" for seat, count in sensors["wall_tiles"].items())
    drawing = [
        f"{motor} {ma} mA"
        if ma is not None
        else f"{motor}: no reading (its current sense is broken)"
        for motor, ma in sensors["currents"].items()
        if ma != 0
    ]
    celsius = sensors["temperature_c"]
    lines = [
        "sensors",
        row("state", sensors["state"]),
        row("fault", sensors["fault"] or "none"),
    ]
    if sensors.get("advice"):
        lines.append(row("check", sensors["advice"]))
    lines += [
        row("switches", listed(sensors["switches"])),
        row("walls", f"{walls} tiles standing"),
        row("lifts up", listed(sensors["lifts_up"])),
        row("lifts down", listed(sensors["lifts_down"])),
        row("currents", listed(drawing, "no motor draws current")),
        row(
            "temperature",
            f"{celsius:.1f} °C"
            if celsius is not None
            else "no reading: the heat-sink NTC is open or shorted",
        ),
    ]
    return lines


def motors_skipped(motor_ms: int) -> list[str]:
    return [f"motors: not tested (mjtable diag --motors runs each for {motor_ms} ms)"]


def motor_line(number: int, count: int, entry: dict[str, Any]) -> str:
    """One motor's test: its current, then the verdict with the limits, in words."""
    head = f"  [{number}/{count}] {entry['words']:<18}"
    if entry["ok"] is None:
        return f"{head} {entry['verdict']}"
    advice = f"; {entry['advice']}" if entry.get("advice") else ""
    return f"{head} {entry['current_ma']:5d} mA  {entry['verdict']}{advice}"


def audit_lines(summary: dict[str, Any]) -> list[str]:
    lines = [f"audit log {summary['path']}"]
    if "error" in summary:
        return [*lines, row("verdict", f"cannot read it: {summary['error']}")]
    lines.append(row("verdict", summary["verdict"]))
    faults = summary["last_faults"]
    if not faults:
        lines.append(row("last faults", "none recorded"))
    else:
        lines.append(row("last faults", f"the last {len(faults)}, oldest first"))
    for fault in faults:
        lines.append(f"    {fault['time']} {fault['code']}: {fault['message']}")
        if fault.get("advice"):
            lines.append(f"      check: {fault['advice']}")
    return lines
