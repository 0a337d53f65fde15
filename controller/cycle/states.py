"""The table's lifecycle as data: its states, what each one means, the transitions, the Machine.

Read top to bottom: the names of the states; one row per state (what it means, the deadline
that bounds it, the DONE that ends it, the buttons it accepts and the words of a refusal, the
LEDs of the dealer's panel); the transitions; the Machine built from them. docs/controller.md
carries the table (``table_markdown()``) and the diagram (``mermaid()``) generated from these
same declarations, and tests check both still match, so the docs cannot drift from the code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from transitions import Machine

import protocol.messages as m
from controller.cycle.deadline import BOARD_DEADLINES, LINK_MARGIN_S, DeadlineName
from controller.cycle.faults import DEADLINE, STOP_UNCONFIRMED, FaultKind
from controller.cycle.leds import (
    CARRY_ON,
    DARK,
    DEAL_NEXT,
    FAULT_LED,
    MOVING,
    PATTERNS,
    SETTLING,
    SHUFFLE_NEXT,
    LedPattern,
    Leds,
    led_words,
)
from controller.cycle.reports import Action

State = Literal[
    "offline",
    "idle",
    "shuffling",
    "building",
    "reading",
    "ready",
    "collecting",
    "lifting",
    "dice",
    "dealt",
    "stopped",
    "fault",
    "recovering",
    "restoring",
    "testing",
]

OFFLINE: Final = "offline"
IDLE: Final = "idle"
SHUFFLING: Final = "shuffling"
BUILDING: Final = "building"
READING: Final = "reading"
READY: Final = "ready"
COLLECTING: Final = "collecting"
LIFTING: Final = "lifting"
DICE: Final = "dice"
DEALT: Final = "dealt"
STOPPED: Final = "stopped"
FAULT: Final = "fault"
RECOVERING: Final = "recovering"
RESTORING: Final = "restoring"
TESTING: Final = "testing"

#: The states of the machine, in the order of a cycle, then the exceptional ones.
STATES: tuple[State, ...] = (
    OFFLINE,
    IDLE,
    SHUFFLING,
    BUILDING,
    READING,
    READY,
    COLLECTING,
    LIFTING,
    DICE,
    DEALT,
    STOPPED,
    FAULT,
    RECOVERING,
    RESTORING,
    TESTING,
)


#: The words of a refused button, unless the state's row says better ({state}: its name).
REFUSALS: Mapping[Action, str] = {
    "shuffle": "the table is busy ({state})",
    "deal": "there are no walls ready to deal (the table is {state})",
    "stop": "nothing is moving (the table is {state})",
    "clear_fault": "there is no fault to clear (the table is {state})",
}
#: Refusals that do not depend on the state.
NOT_CONNECTED = "the board is not connected"
NOT_CONNECTED_CLEAR = "the board is not connected; the fault cannot be cleared yet"
#: any button but STOP while the board's firmware reports no motion deadlines ({version}: its
#: protocol version): nothing may move without them
NO_DEADLINES = (
    "the board's firmware is older than this controller (protocol {version}: it reports no "
    "motion deadlines), so nothing may move: flash this controller's firmware onto the board "
    "(mjtable firmware flash) and restart the board"
)
#: SHUFFLE or DEAL while the board's report of where the sets are is on its way (READ_STATUS)
REPORT_DUE = "the board is reporting where the tile sets are: press again in a moment"
AUDIT_UNWRITABLE = "the audit log cannot be written ({error})"
#: SHUFFLE or DEAL while the installed firmware's build is still being made to compare
FIRMWARE_PENDING = (
    "the board's firmware is being compared with the installed build: press again in a moment"
)


@dataclass(frozen=True)
class StateRow:
    """What one state of the table means."""

    state: State
    #: one line, for people
    meaning: str
    #: the panel's LEDs in this state
    leds: Leds
    #: the buttons this state accepts (a lost link or an unwritable log may still refuse them)
    accepts: frozenset[Action] = frozenset()
    #: the words of a refused button, where the generic ones (REFUSALS) would say less
    refusals: Mapping[Action, str] = field(default_factory=dict)
    #: the deadline (a field of Deadlines) that bounds the time spent here, if any
    deadline: DeadlineName | None = None
    #: the fault declared when that deadline passes
    overdue: FaultKind = DEADLINE
    #: the commands whose DONE the state waits for (each step, in turn), if any
    done: tuple[type[m.Message], ...] = ()
    #: the state ends only with the board's report (BOARD_STATUS) of where the sets are
    report: bool = False
    #: a step of the deal cycle: the board works on a command and reports its progress, and
    #: a refused command faults the cycle
    step: bool = False
    #: nothing moves: a lost link or a board restart here costs no fault
    at_rest: bool = False
    #: the link lost and back: "wait" (the board works on alone; its events follow in order,
    #: within the state's deadline, and the loss costs no fault) or "stop" (a board that
    #: reports a motion is stopped, and asked where the sets are)
    returning: Literal["wait", "stop"] = "stop"

    @property
    def link_loss(self) -> str:
        """What a lost link costs here, in words (the docs' table; links.py acts on it)."""
        if self.state in (OFFLINE, FAULT):
            return "—"
        if self.at_rest:
            return "no fault"
        if self.returning == "wait":
            return (
                "no fault: the board goes on, its events follow (past the board's grace, it "
                "stops a motion: `HOST_LOST`)"
            )
        return "`LINK_DOWN`"

    def waits_for(self, command: int) -> bool:
        """Whether a DONE of ``command`` (a TYPE code) is what this state waits for."""
        return any(command == awaited.TYPE for awaited in self.done)

    @property
    def stoppable(self) -> bool:
        """STOP is accepted here, and sent on a fault: the board may be moving."""
        return "stop" in self.accepts

    def refusal(self, action: Action) -> str:
        """Why ``action`` makes no sense in this state, in one sentence."""
        return self.refusals.get(action, REFUSALS[action]).format(state=self.state)


_IN_FAULT = "the table is in fault: a technician must clear it first"
_UNDER_TEST = (
    "the table is under test (motor tests asked with mjtable diag --motors): wait for them "
    "to end, or press STOP"
)
_STOP: frozenset[Action] = frozenset({"stop"})

#: One row per state, in the order of STATES.
STATE_TABLE: tuple[StateRow, ...] = (
    StateRow(OFFLINE, "no HELLO answered yet (or the controller just started)", DARK),
    StateRow(
        IDLE,
        "board connected, no walls ready to deal: SHUFFLE prepares the set the board reports "
        "waiting",
        SHUFFLE_NEXT,
        accepts=frozenset({"shuffle"}),
        refusals={"deal": "there are no walls ready to deal: press SHUFFLE first"},
        at_rest=True,
    ),
    StateRow(
        SHUFFLING,
        "SHUFFLE of the waiting set",
        MOVING,
        accepts=_STOP,
        deadline="shuffle",
        done=(m.Shuffle,),
        step=True,
        returning="wait",
    ),
    StateRow(
        BUILDING,
        "BUILD_WALLS of the waiting set",
        MOVING,
        accepts=_STOP,
        deadline="build",
        done=(m.BuildWalls,),
        step=True,
        returning="wait",
    ),
    StateRow(
        READING,
        "READ_MANIFEST: which tile lies where",
        MOVING,
        accepts=_STOP,
        deadline="manifest",
        done=(m.ReadManifest,),
        step=True,
        returning="wait",
    ),
    StateRow(
        READY,
        "walls built underneath, manifest known: DEAL may be pressed",
        DEAL_NEXT,
        accepts=frozenset({"deal"}),
        refusals={"shuffle": "walls are already built and waiting: press DEAL"},
        at_rest=True,
    ),
    StateRow(
        COLLECTING,
        "COLLECT: the played set drops through the trap",
        MOVING,
        accepts=_STOP,
        deadline="collect",
        done=(m.Collect,),
        step=True,
        returning="wait",
    ),
    StateRow(
        LIFTING,
        "LIFT_WALLS: the new walls rise",
        MOVING,
        accepts=_STOP,
        deadline="lift",
        done=(m.LiftWalls,),
        step=True,
        returning="wait",
    ),
    StateRow(
        DICE,
        "throws of the dice, as the rule set asks",
        MOVING,
        accepts=_STOP,
        deadline="dice",
        done=(m.DisplayDice,),  # dice the controller threw, shown on the table: taken
        step=True,
        returning="wait",
    ),
    StateRow(
        DEALT,
        "dealt state published; the hand is in play",
        SHUFFLE_NEXT,
        accepts=frozenset({"shuffle"}),
        refusals={"deal": "the next walls are not built yet: press SHUFFLE first"},
        at_rest=True,
    ),
    StateRow(
        STOPPED,
        "STOP pressed: motion halted, the cycle abandoned; SHUFFLE carries on (the board "
        "confirms and reports where the sets are, then a new shuffle starts), DEAL carries on "
        "to the deal (the same, then the deal starts once the walls are ready), CLEAR FAULT "
        "leaves the table idle",
        CARRY_ON,  # no fault: DEAL or SHUFFLE is what comes next
        accepts=frozenset({"shuffle", "deal", "clear_fault"}),
        deadline="stop",
        overdue=STOP_UNCONFIRMED,
        done=(m.Stop,),
        at_rest=True,
    ),
    StateRow(
        FAULT,
        "a fault: motion halted, nothing published for the cycle",
        FAULT_LED,
        accepts=frozenset({"clear_fault"}),
        refusals={"shuffle": _IN_FAULT, "deal": _IN_FAULT},
    ),
    StateRow(
        RECOVERING,
        "CLEAR_FAULT sent, waiting for the board to confirm and report where the sets are",
        SETTLING,
        accepts=_STOP,
        deadline="clear",
        done=(m.ClearFault,),
        report=True,
    ),
    StateRow(
        RESTORING,
        "the board lost track of a set: COLLECT (unless a set is up on the table), then "
        "SHUFFLE of each lost set",
        SETTLING,
        accepts=_STOP,
        deadline="shuffle",  # armed again for each step
        done=(m.Collect, m.Shuffle),
        report=True,
        step=True,
        returning="wait",
    ),
    StateRow(
        TESTING,
        "motor tests asked by a technician (mjtable diag --motors): MOTOR_TEST of each motor in "
        "turn, each bounded by its time and a margin; nothing else moves",
        SETTLING,
        accepts=_STOP,
        refusals={"shuffle": _UNDER_TEST, "deal": _UNDER_TEST},
        deadline="test",  # beyond each test's own time
    ),
)

#: state name -> its row
ROWS: dict[str, StateRow] = {row.state: row for row in STATE_TABLE}
#: the states in which the board works on a step the table sent (its progress reported, its
#: refusal a fault)
STEP_STATES: frozenset[str] = frozenset(row.state for row in STATE_TABLE if row.step)
#: the states STOP halts (the board may be moving)
STOPPABLE: tuple[State, ...] = tuple(row.state for row in STATE_TABLE if row.stoppable)
#: states in which nothing moves: a link lost or a board restart here is no fault
AT_REST: frozenset[str] = frozenset(row.state for row in STATE_TABLE if row.at_rest)
#: states in which the board works on alone while the link is lost (its events follow)
WAITING: frozenset[str] = frozenset(row.state for row in STATE_TABLE if row.returning == "wait")
ANY_BUT_FAULT: list[str] = [s for s in STATES if s != FAULT]
#: the states motor tests may start from: at rest, no fault to clear
TEST_FROM: tuple[State, ...] = (IDLE, READY, DEALT)


def panel_leds(state: str) -> Leds:
    """The panel's LEDs for a state (all dark for a name that is not a state)."""
    row = ROWS.get(state)
    return row.leds if row is not None else DARK


def refusal_sentences() -> tuple[str, ...]:
    """Every refusal of a button the state table gives, as written (``{state}`` and the like
    not filled in): what a client that translates the table's words matches a refusal with."""
    rows = [words for row in STATE_TABLE for words in row.refusals.values()]
    others = (NOT_CONNECTED, NOT_CONNECTED_CLEAR, NO_DEADLINES, REPORT_DUE, AUDIT_UNWRITABLE)
    return tuple(dict.fromkeys([*REFUSALS.values(), *rows, *others, FIRMWARE_PENDING]))


def panel_pattern(state: str) -> LedPattern:
    """What the panel's LEDs tell the dealer in a state: the table's condition and what to
    press or do next (the words of docs/panel.md, which the dealer's view shows)."""
    leds = panel_leds(state)
    return next(pattern for pattern in PATTERNS if pattern.leds == leds)


#: (trigger, source(s), destination); a list source means any of them.
TRANSITIONS: tuple[tuple[str, str | list[str], str], ...] = (
    ("link_up", OFFLINE, IDLE),
    ("start_shuffle", [IDLE, DEALT], SHUFFLING),
    ("start_reread", [IDLE, DEALT], READING),
    ("shuffled", SHUFFLING, BUILDING),
    ("built", BUILDING, READING),
    ("manifest_read", READING, READY),
    ("start_collect", READY, COLLECTING),
    ("collected", COLLECTING, LIFTING),
    ("start_lift", READY, LIFTING),
    ("lifted", LIFTING, DICE),
    ("publish", DICE, DEALT),
    ("board_reset", [READY, DEALT], IDLE),
    ("halt", list(STOPPABLE), STOPPED),
    ("fail", ANY_BUT_FAULT, FAULT),
    ("clear", [FAULT, STOPPED], RECOVERING),
    ("recovered", RECOVERING, IDLE),
    ("restore", RECOVERING, RESTORING),
    ("restored", RESTORING, IDLE),
    ("start_test", list(TEST_FROM), TESTING),
    ("tested", TESTING, IDLE),
)


class LifecycleModel:
    """The object the Machine drives; the controller reads ``state`` from it."""

    state: State


def build_machine(model: LifecycleModel) -> Any:
    """A transitions Machine over STATES and TRANSITIONS, without auto transitions."""
    return Machine(
        model=model,
        states=list(STATES),
        transitions=[
            {"trigger": trigger, "source": source, "dest": dest}
            for trigger, source, dest in TRANSITIONS
        ],
        initial=OFFLINE,
        auto_transitions=False,
        ignore_invalid_triggers=False,
    )


def mermaid() -> str:
    """The state diagram in mermaid syntax, generated from TRANSITIONS."""
    lines = ["stateDiagram-v2", f"    [*] --> {OFFLINE}"]
    for trigger, source, dest in TRANSITIONS:
        sources = source if isinstance(source, list) else [source]
        if trigger == "fail":
            lines.append(f"    note right of {dest} : entered from every other state by {trigger}")
            continue
        for src in sources:
            lines.append(f"    {src} --> {dest}: {trigger}")
    return "\n".join(lines) + "\n"


def patterns_markdown() -> str:
    """The LED patterns as the markdown table of docs/panel.md: each, what it says, what to
    press, and the states that show it."""
    rows = ["| the LEDs | the table | what to do | states |", "|---|---|---|---|"]
    for pattern in PATTERNS:
        states = ", ".join(f"`{row.state}`" for row in STATE_TABLE if row.leds == pattern.leds)
        rows.append(f"| {led_words(pattern.leds)} | {pattern.says} | {pattern.next} | {states} |")
    return "\n".join(rows) + "\n"


def table_markdown() -> str:
    """The state table as the markdown table of docs/controller.md."""
    rows = [
        "| state | what it means | deadline | waits for | buttons accepted | link lost "
        "| panel LEDs |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in STATE_TABLE:
        deadline = f"`deadlines.{row.deadline}`" if row.deadline else "—"
        if row.deadline in BOARD_DEADLINES:
            deadline = f"the board's `{row.deadline}` + {LINK_MARGIN_S:g} s"
        done = " or ".join(f"`{awaited.NAME}`" for awaited in row.done)
        done = f"`DONE` of {done}" if row.done else "—"
        if row.report:
            done += ", then `BOARD_STATUS`"
        accepts = ", ".join(a.upper().replace("_", " ") for a in sorted(row.accepts)) or "—"
        leds = led_words(row.leds)
        rows.append(
            f"| `{row.state}` | {row.meaning} | {deadline} | {done} | {accepts} "
            f"| {row.link_loss} | {leds} |"
        )
    return "\n".join(rows) + "\n"
