"""The link's state machine as data: the two roles, their states, every legal transition.

``Connection`` (protocol/connection.py) moves only along TRANSITIONS; anything else is a bug and
raises one typed error. docs/protocol.md shows each role's machine as a diagram made by
``state_diagram()`` (a test keeps the two equal).

MicroPython-compatible: no imports.
"""

HOST = 0
BOARD = 1
ROLE_NAMES = {HOST: "host", BOARD: "board"}

# Link states
IDLE = "IDLE"  # host: nothing started yet
CONNECTING = "CONNECTING"  # host: sending HELLO every hello_interval_ms
UP = "UP"  # both: session open, frames flow
DOWN = "DOWN"  # both: link lost (host re-HELLOs from its next tick; board waits)
MISMATCH = "MISMATCH"  # host: the board speaks another major version (terminal)
WAITING = "WAITING"  # board: no session with a host yet (answers NO_SESSION)

#: (role, state, trigger, new state): every legal transition; anything else is a bug and raises
TRANSITIONS: "tuple[tuple[int, str, str, str], ...]" = (
    (HOST, IDLE, "connect", CONNECTING),
    (HOST, CONNECTING, "hello_sent", CONNECTING),
    (HOST, CONNECTING, "hello_reply", UP),
    (HOST, CONNECTING, "major_mismatch", MISMATCH),
    (HOST, UP, "hello_reply", UP),
    (HOST, UP, "link_timeout", DOWN),
    (HOST, UP, "retries_exhausted", DOWN),
    (HOST, UP, "board_lost_session", DOWN),
    (HOST, UP, "major_mismatch", MISMATCH),
    (HOST, DOWN, "hello_sent", CONNECTING),
    (HOST, DOWN, "hello_reply", UP),
    (HOST, DOWN, "major_mismatch", MISMATCH),
    (BOARD, WAITING, "hello", UP),
    (BOARD, WAITING, "major_mismatch", WAITING),
    (BOARD, UP, "hello", UP),
    (BOARD, UP, "link_timeout", DOWN),
    (BOARD, UP, "retries_exhausted", DOWN),
    (BOARD, DOWN, "hello", UP),
    (BOARD, DOWN, "traffic", UP),
)

#: (role, state, trigger) -> new state, built from TRANSITIONS
TABLE: "dict[tuple[int, str, str], str]" = {}
for _role, _state, _trigger, _new in TRANSITIONS:
    TABLE[(_role, _state, _trigger)] = _new

#: the state each role starts in
INITIAL = {HOST: IDLE, BOARD: WAITING}


def state_diagram(role: int) -> str:
    """The state machine of one role as a mermaid ``stateDiagram-v2`` (for docs/protocol.md)."""
    lines = ["stateDiagram-v2", "    [*] --> " + INITIAL[role]]
    for r, state, trigger, new in TRANSITIONS:
        if r == role:
            lines.append("    " + state + " --> " + new + ": " + trigger)
    if role == HOST:
        lines.append("    " + MISMATCH + " --> [*]")
    return "\n".join(lines)
