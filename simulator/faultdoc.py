"""The fault catalogue as the Markdown table docs/simulator.md carries (a test compares)."""

from __future__ import annotations

from protocol import codes
from simulator.faults import BY_MOTOR, FAULT_KINDS, PHASE_WORD_OF, STRIKES_AT_A_POINT


def catalogue_markdown() -> str:
    """The fault catalogue as a Markdown table (docs/simulator.md carries it; a test compares)."""
    lines = [
        "| kind | FAULT code | subsystem | phases (default first) | keys | the hardware condition, "
        "and what the firmware finds |",
        "|---|---|---|---|---|---|",
    ]
    for kind in FAULT_KINDS.values():
        code = codes.fault_name(kind.code) if kind.code else "(none)"
        subsystem = "by motor" if kind.name in BY_MOTOR else codes.subsystem_name(kind.subsystem)
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
