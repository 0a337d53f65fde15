"""The table's lifecycle as data: states, transitions, and the Machine built from them.

The table is read top to bottom; ``docs/controller.md`` carries a mermaid diagram
generated from these same lists (``mermaid()``), and a test checks the committed
diagram still matches, so the picture cannot drift from the code.
"""

from __future__ import annotations

from typing import Any

from transitions import Machine

#: States, in the order of a cycle, then the exceptional ones.
STATES: tuple[str, ...] = (
    "offline",  # no HELLO answered yet (or the controller just started)
    "idle",  # board connected, nothing built underneath
    "shuffling",  # SHUFFLE of the waiting set
    "building",  # BUILD_WALLS of the waiting set
    "reading",  # READ_MANIFEST: which tile lies where
    "ready",  # walls built underneath, manifest known: DEAL may be pressed
    "collecting",  # COLLECT: the played set drops through the trap
    "lifting",  # LIFT_WALLS: the new walls rise
    "dice",  # throws of the dice, as the rule set asks
    "dealt",  # dealt state published; the hand is in play
    "stopped",  # STOP pressed: motion halted, the cycle abandoned
    "fault",  # a fault: motion halted, nothing published for the cycle
    "recovering",  # CLEAR_FAULT sent, waiting for the board to confirm
)

MOTION_STATES: frozenset[str] = frozenset(
    {"shuffling", "building", "reading", "collecting", "lifting", "dice"}
)
#: States in which nothing moves: a link lost or a board restart here is no fault.
AT_REST: frozenset[str] = frozenset({"idle", "ready", "dealt", "stopped"})
ANY_BUT_FAULT: list[str] = [s for s in STATES if s != "fault"]

#: (trigger, source(s), destination); a list source means any of them.
TRANSITIONS: tuple[tuple[str, str | list[str], str], ...] = (
    ("link_up", "offline", "idle"),
    ("start_shuffle", ["idle", "dealt"], "shuffling"),
    ("start_reread", ["idle", "dealt"], "reading"),
    ("shuffled", "shuffling", "building"),
    ("built", "building", "reading"),
    ("manifest_read", "reading", "ready"),
    ("start_collect", "ready", "collecting"),
    ("collected", "collecting", "lifting"),
    ("start_lift", "ready", "lifting"),
    ("lifted", "lifting", "dice"),
    ("publish", "dice", "dealt"),
    ("board_reset", ["ready", "dealt"], "idle"),
    ("halt", [*sorted(MOTION_STATES), "recovering"], "stopped"),
    ("fail", ANY_BUT_FAULT, "fault"),
    ("clear", ["fault", "stopped"], "recovering"),
    ("recovered", "recovering", "idle"),
)


class LifecycleModel:
    """The object the Machine drives; the controller reads ``state`` from it."""

    state: str


def build_machine(model: LifecycleModel) -> Any:
    """A transitions Machine over STATES and TRANSITIONS, without auto transitions."""
    return Machine(
        model=model,
        states=list(STATES),
        transitions=[
            {"trigger": trigger, "source": source, "dest": dest}
            for trigger, source, dest in TRANSITIONS
        ],
        initial="offline",
        auto_transitions=False,
        ignore_invalid_triggers=False,
    )


def mermaid() -> str:
    """The state diagram in mermaid syntax, generated from TRANSITIONS."""
    lines = ["stateDiagram-v2", "    [*] --> offline"]
    for trigger, source, dest in TRANSITIONS:
        sources = source if isinstance(source, list) else [source]
        if trigger == "fail":
            lines.append(f"    note right of {dest} : entered from every other state by {trigger}")
            continue
        for src in sources:
            lines.append(f"    {src} --> {dest}: {trigger}")
    return "\n".join(lines) + "\n"
