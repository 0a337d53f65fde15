"""`mjtable diag`'s report in words: what diag.py gathered, as sentences and small tables.

Each function turns one section of the report (the dict ``mjtable diag --json`` prints)
into lines for a person, in the language of its ``words`` (cli/lang.py): no Python reprs,
names of flags and motors in the protocol's own words (protocol/codes.py), translated as the
table's words are, one row a subject.
"""

from __future__ import annotations

import functools
from typing import Any

from cli.audit import CHAIN_BROKEN, CHAIN_HOLDS
from cli.lang import ENGLISH, Phrasebook
from controller.firmware.words import IMAGE_BUILD
from rules.lang import Lang

WIDTH = 13  # the first column of a section's rows, at least


def row(key: str, value: object) -> str:
    return f"  {key + ' ':<{WIDTH}}{value}"


def listed(items: list[str], words: Phrasebook, empty: str) -> str:
    return ", ".join(words.table(item) for item in items) if items else empty


def version_lines(versions: dict[str, Any], words: Phrasebook = ENGLISH) -> list[str]:
    _, pgettext = words._, words.pgettext
    fields = {"firmware": versions["firmware"], "build": versions["build"]}
    board = words.table(IMAGE_BUILD.format(**fields))
    if versions.get("build_unknown"):
        board += " " + _("(not built by mjtable firmware build)")
    controller = _("mjtable %(version)s, board protocol %(protocol)s") % {
        "version": versions["controller"],
        "protocol": versions["protocol"],
    }
    return [
        _("versions"),
        row(pgettext("row", "controller"), controller),
        row(
            pgettext("row", "board"),
            _("%(board)s, board protocol %(protocol)s")
            % {"board": board, "protocol": versions["board_protocol"]},
        ),
    ]


def board_lines(
    where: str, hello: dict[str, Any], status: dict[str, Any], words: Phrasebook = ENGLISH
) -> list[str]:
    """``where``: "on PORT", or "through the service on SOCKET" (in ``words``' language)."""
    _, pgettext, table = words._, words.pgettext, words.table
    seed = hello["seed"]
    shuffles = (
        _("random") if seed is None else _("seeded with %(seed)s (reproducible)") % {"seed": seed}
    )
    sizes = {
        "sets": hello["tile_sets"],
        "tiles": hello["tiles"],
        "stacks": hello["stacks_per_wall"],
    }
    sets = "; ".join(f"{name}: {table(text)}" for name, text in status["tile_sets"].items())
    fitted = _("no tile reader, no dice unit, no seat buttons")
    motions = _("%(motions)s begun since the board was made") % {"motions": status["motions"]}
    return [
        _("board %(where)s") % {"where": where},
        row(
            pgettext("row", "serial"),
            _("%(serial)s, session %(session)s")
            % {"serial": hello["serial"], "session": hello["session"]},
        ),
        row(pgettext("row", "fitted"), listed(hello["fitted"], words, fitted)),
        row(
            pgettext("row", "tiles"),
            _("%(sets)s set(s) of %(tiles)s, %(stacks)s stacks a wall") % sizes,
        ),
        row(pgettext("row", "shuffles"), shuffles),
        row(pgettext("row", "tile sets"), sets or _("none reported")),
        row(pgettext("row", "last start"), table(status["reset_cause"])),
        row(pgettext("row", "motions"), motions),
    ]


def sensor_lines(sensors: dict[str, Any], words: Phrasebook = ENGLISH) -> list[str]:
    _, pgettext, table = words._, words.pgettext, words.table
    walls = ", ".join(f"{seat} {count}" for seat, count in sensors["wall_tiles"].items())
    drawing = [
        f"{table(motor)} {ma} mA"
        if ma is not None
        else _("%(motor)s: no reading (its current sense is broken)") % {"motor": table(motor)}
        for motor, ma in sensors["currents"].items()
        if ma != 0
    ]
    celsius = sensors["temperature_c"]
    lines = [
        _("sensors"),
        row(pgettext("row", "state"), table(sensors["state"])),
        row(pgettext("row", "fault"), table(sensors["fault"]) if sensors["fault"] else _("none")),
    ]
    if sensors.get("advice"):
        lines.append(row(pgettext("row", "check"), table(sensors["advice"])))
    none = _("none")
    lines += [
        row(pgettext("row", "switches"), listed(sensors["switches"], words, none)),
        row(pgettext("row", "walls"), _("%(walls)s tiles standing") % {"walls": walls}),
        row(pgettext("row", "lifts up"), listed(sensors["lifts_up"], words, none)),
        row(pgettext("row", "lifts down"), listed(sensors["lifts_down"], words, none)),
        row(pgettext("row", "currents"), ", ".join(drawing) or _("no motor draws current")),
        row(
            pgettext("row", "temperature"),
            f"{celsius:.1f} °C"
            if celsius is not None
            else _("no reading: the heat-sink NTC is open or shorted"),
        ),
    ]
    return lines


def motors_skipped(motor_ms: int, words: Phrasebook = ENGLISH) -> list[str]:
    _ = words._
    return [
        _("motors: not tested (mjtable diag --motors runs each for %(ms)s ms)") % {"ms": motor_ms}
    ]


def motor_line(number: int, count: int, entry: dict[str, Any], words: Phrasebook = ENGLISH) -> str:
    """One motor's test: its current, then the verdict with the limits, in words."""
    table = words.table
    head = f"  [{number}/{count}] {table(entry['words']):<{_motor_width(words.lang)}}"
    verdict = table(entry["verdict"])
    if entry["ok"] is None:
        return f"{head} {verdict}"
    advice = f"; {table(entry['advice'])}" if entry.get("advice") else ""
    return f"{head} {entry['current_ma']:5d} mA  {verdict}{advice}"


@functools.cache
def _motor_width(lang: Lang) -> int:
    """The column of the motors' names: the longest in the language, 18 at least (once a
    language, not once a motor's line)."""
    from protocol.codes import MOTORS  # lazy: the protocol's tables, for the motor tests only

    table = Phrasebook(lang).table
    return max(18, *(len(table(name)) for _code, name, _check in MOTORS.values()))


def audit_lines(summary: dict[str, Any], words: Phrasebook = ENGLISH) -> list[str]:
    _, pgettext, table = words._, words.pgettext, words.table
    lines = [_("audit log %(path)s") % {"path": summary["path"]}]
    verdict = pgettext("row", "verdict")
    if "error" in summary:
        return [*lines, row(verdict, _("cannot read it: %(error)s") % {"error": summary["error"]})]
    if "held" in summary:
        said = _(CHAIN_HOLDS) % summary["held"]
    elif "broken" in summary:
        broken = summary["broken"]  # the file and line as written, the problem translated
        said = _(CHAIN_BROKEN) % {
            **broken,
            "path": summary["path"],
            "problem": table(broken["problem"]),
        }
    else:
        said = summary["verdict"]
    lines.append(row(verdict, said))
    faults = summary["last_faults"]
    if not faults:
        lines.append(row(pgettext("row", "last faults"), _("none recorded")))
    else:
        last = _("the last %(count)s, oldest first") % {"count": len(faults)}
        lines.append(row(pgettext("row", "last faults"), last))
    check = _("check: %(advice)s")
    for fault in faults:
        lines.append(f"    {fault['time']} {fault['code']}: {table(fault['message'])}")
        if fault.get("advice"):
            lines.append("      " + check % {"advice": table(fault["advice"])})
    return lines
