"""The board's state machine drawn: a mermaid ``stateDiagram-v2`` of ``firmware.board``'s
TRANSITIONS, with the states by their names (docs/firmware.md and docs/simulator.md carry it, and
``mjtable sim`` prints it). The host's alone: the board never draws itself, and the states' names
are protocol/codes.py's, which stay off the board (nothing the board imports imports this
module).
"""

from firmware.board import MOVING, RESTING, RESUME, TRANSITIONS
from protocol.codes import state_name


def state_diagram() -> str:
    """The machine as a mermaid ``stateDiagram-v2`` (docs/firmware.md carries it)."""
    groups = (("Resting", RESTING), ("Moving", MOVING))
    lines = ["stateDiagram-v2", "    [*] --> BOOT"]
    for name, members in groups:
        words = " ".join([state_name(s) for s in members])
        lines.append('    state "' + name + ": any of " + words + '" as ' + name)
    for trigger, sources, dest in TRANSITIONS:
        target = "Resting" if dest == RESUME else state_name(dest)
        if dest == RESUME:
            trigger += " (back to the resting state it left)"
        rest = list(sources)
        for name, members in groups:
            if len(rest) > 1 and all([s in rest for s in members]):
                lines.append("    " + name + " --> " + target + ": " + trigger)
                rest = [s for s in rest if s not in members]
        for s in rest:
            lines.append("    " + state_name(s) + " --> " + target + ": " + trigger)
    return "\n".join(lines) + "\n"
