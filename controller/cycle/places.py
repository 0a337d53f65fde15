"""Where the two tile sets are, as the board reports them, and which command that allows.

The board is the source of truth for what is physically on the table (docs/protocol.md, "The
board's status"): its HELLO_REPLY carries its status at every (re)connect, and READ_STATUS
asks for it at any time. ``BoardView`` is the latest report, advanced by the board's own
words since (each DONE, each FAULT): the controller plans the next command of the cycle from
it (``waiting_set``, ``recovery_steps``) and checks every command against it before sending
(``blocked``). The audit log is history: it never decides where a set is. Nothing here does
I/O; these are the table's rules, as data.

What the board refuses for where the sets are (REFUSED BAD_STATE, the detail of
``protocol.codes.BLOCKS``) is the board's own rule, written once: ``blocked`` calls the
firmware's functions (firmware/places.py, ``shuffle_block`` and the others) with the places the
board reported. COLLECT is always taken (it drops the set that is UP, if any); every motion
(SHUFFLE, BUILD_WALLS, LIFT_WALLS, COLLECT, ROLL_DICE) is refused while the board reports a
fault (FAULTED, ESTOP_HELD) or a motion running (BUSY).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Final

import protocol.codes as codes
import protocol.messages as m
from firmware.places import build_block, lift_block, manifest_block, shuffle_block
from rules.words import TileSetName

#: the tile sets in the order of the board's status (A first)
SETS: tuple[TileSetName, TileSetName] = ("A", "B")
#: the tile set's code on the wire (SHUFFLE, BUILD_WALLS, ...)
SET_CODE: dict[str, int] = {"A": codes.TILE_SET_A, "B": codes.TILE_SET_B}

#: a set's places, by the protocol's names (a bare BUILDING is the table's state, states.py)
PLACE_DISC: Final = codes.PLACE_DISC
PLACE_SHUFFLED: Final = codes.PLACE_SHUFFLED
PLACE_BUILDING: Final = codes.PLACE_BUILDING
PLACE_PARTIAL: Final = codes.PLACE_PARTIAL
PLACE_BUILT: Final = codes.PLACE_BUILT
PLACE_UP: Final = codes.PLACE_UP
PLACE_UNKNOWN: Final = codes.PLACE_UNKNOWN


#: the board's states in which a motion runs
MOVING: frozenset[int] = frozenset(codes.MOVING_STATES)
#: the commands that start a motion (refused while the board is faulted or busy)
MOTIONS: tuple[type[m.Message], ...] = (
    m.Shuffle,
    m.BuildWalls,
    m.LiftWalls,
    m.Collect,
    m.RollDice,
    m.MotorTest,
)
#: where a motion's DONE leaves the set it moved
_PLACED: dict[int, int] = {
    m.Shuffle.TYPE: PLACE_SHUFFLED,
    m.BuildWalls.TYPE: PLACE_BUILT,
    m.LiftWalls.TYPE: PLACE_UP,
}
#: the resting state a motion's DONE leaves the board in
_RESTS: dict[int, int] = {
    m.Shuffle.TYPE: codes.STATE_SHUFFLED,
    m.BuildWalls.TYPE: codes.STATE_BUILT,
    m.LiftWalls.TYPE: codes.STATE_UP,
    m.Collect.TYPE: codes.STATE_IDLE,
    m.Stop.TYPE: codes.STATE_STOPPED,
    m.ClearFault.TYPE: codes.STATE_STOPPED,
}


def place_word(place: int) -> str:
    """The protocol's name of a place (``BUILT``), for records and messages."""
    return codes.place_name(place)


def other(tile_set: TileSetName) -> TileSetName:
    return "B" if tile_set == "A" else "A"


@dataclass(frozen=True)
class BoardView:
    """The board's latest report of itself, advanced by its DONEs and FAULTs since."""

    places: tuple[int, int]
    laid: tuple[int, int] = (0, 0)
    state: int = codes.STATE_IDLE
    fault: int = 0
    subsystem: int = 0
    phase: int = 0
    detail: int = 0
    motions: int = 0
    reset_cause: int = codes.RESET_UNKNOWN
    firmware: str = ""
    build: str = codes.BUILD_UNKNOWN

    @classmethod
    def of(cls, status: m.BoardStatus) -> BoardView:
        """The view a BOARD_STATUS (or HELLO_REPLY's status) gives. A one-set board reports
        one place: the other set is taken as loose in the disc."""
        places = (*status.places, PLACE_DISC)[:2]
        laid = (*status.laid, 0)[:2]
        return cls(
            places=(places[0], places[1]),
            laid=(laid[0], laid[1]),
            state=status.state,
            fault=status.fault,
            subsystem=status.subsystem,
            phase=status.phase,
            detail=status.detail,
            motions=status.motions,
            reset_cause=status.reset_cause,
            firmware=f"{status.fw_major}.{status.fw_minor}.{status.fw_patch}",
            build=status.build_hash,
        )

    def place(self, tile_set: TileSetName) -> int:
        return self.places[SETS.index(tile_set)]

    def sets_in(self, *places: int) -> list[TileSetName]:
        """The sets whose place is one of ``places``, A first."""
        return [s for s, p in zip(SETS, self.places, strict=True) if p in places]

    @property
    def moving(self) -> bool:
        """The board reports a motion running."""
        return self.state in MOVING

    @property
    def faulted(self) -> bool:
        """The board reports a fault latched (FAULT, or the E-stop)."""
        return self.fault != 0 or self.state in (codes.STATE_FAULT, codes.STATE_ESTOP)

    def after_done(self, command: int, tile_set: TileSetName | None = None) -> BoardView:
        """The board's DONE(OK) of ``command`` (on ``tile_set``): where it leaves the sets."""
        places = self.places
        placed = _PLACED.get(command)
        if placed is not None and tile_set is not None:
            i = SETS.index(tile_set)
            places = (placed, places[1]) if i == 0 else (places[0], placed)
        elif command == m.Collect.TYPE:
            a, b = places
            places = (PLACE_DISC if a == PLACE_UP else a, PLACE_DISC if b == PLACE_UP else b)
        rest = _RESTS.get(command)
        if rest is None:
            return self if places == self.places else replace(self, places=places)
        if command == m.ClearFault.TYPE:
            if not self.faulted:
                return self  # nothing was latched: the board stays where it was
            return replace(self, state=rest, fault=0, subsystem=0, phase=0, detail=0)
        return replace(self, places=places, state=rest)  # one copy of the view, not two

    def after_fault(self, event: m.Fault) -> BoardView:
        """The board's FAULT: it is latched until CLEAR_FAULT (ESTOP for the E-stop)."""
        state = codes.STATE_ESTOP if event.code == codes.FAULT_ESTOP else codes.STATE_FAULT
        return replace(
            self,
            state=state,
            fault=event.code,
            subsystem=event.subsystem,
            phase=event.phase,
            detail=event.detail,
        )

    def words(self) -> dict[str, str]:
        """Each set's place by name: ``{"A": "UP", "B": "BUILT"}``."""
        return {s: place_word(p) for s, p in zip(SETS, self.places, strict=True)}

    def record(self) -> dict[str, Any]:
        """The report as an audit record's ``board`` part."""
        return {
            "places": self.words(),
            "laid": dict(zip(SETS, self.laid, strict=True)),
            "state": codes.state_name(self.state),
            "fault": codes.fault_name(self.fault) if self.fault else None,
            "motions": self.motions,
            "reset_cause": codes.reset_cause_name(self.reset_cause),
            "firmware": self.firmware,
            "build": self.build,
        }


def blocked(message: m.Message, view: BoardView) -> str | None:
    """Why the board, as it last reported itself, cannot take ``message``; None when it can.

    The words are the protocol's (``protocol.codes.BLOCKS`` and the refusal table)."""
    if isinstance(message, MOTIONS):
        if view.state == codes.STATE_ESTOP:
            return codes.refusal_info(codes.REFUSE_ESTOP_HELD)[1]
        if view.faulted:
            return codes.refusal_info(codes.REFUSE_FAULTED)[1]
        if view.moving:
            return codes.refusal_info(codes.REFUSE_BUSY)[1]
    block = _place_block(message, view)
    return codes.block_info(block)[1] if block else None


#: the board's rule for each command that needs its set in a given place
_PLACE_RULES: dict[type[m.Message], Callable[[int, int], int]] = {
    m.Shuffle: shuffle_block,
    m.BuildWalls: build_block,
    m.LiftWalls: lift_block,
    m.ReadManifest: manifest_block,
}


def _place_block(message: m.Message, view: BoardView) -> int:
    """The BLOCK detail the board would refuse ``message`` with, 0 when it would not."""
    if not isinstance(message, m.Shuffle | m.BuildWalls | m.LiftWalls | m.ReadManifest):
        return 0
    mine = message.tile_set & 1
    return _PLACE_RULES[type(message)](view.places[mine], view.places[1 - mine])


def waiting_set(view: BoardView) -> TileSetName:
    """The set the next SHUFFLE prepares: walls built underneath (read again, never shuffled);
    else a set whose build was cut short (shuffled again); else the set not up on the table
    (A when neither is)."""
    for places in ((PLACE_BUILT,), (PLACE_PARTIAL, PLACE_BUILDING, PLACE_UNKNOWN)):
        found = view.sets_in(*places)
        if found:
            return found[0]
    up = view.sets_in(PLACE_UP)
    return other(up[0]) if up else "A"


def lost_sets(view: BoardView) -> list[TileSetName]:
    """The sets the board lost track of (its power went while it moved them)."""
    return view.sets_in(PLACE_UNKNOWN)


def recovery_steps(view: BoardView) -> list[m.Message]:
    """The recovery procedure for the sets the board lost track of: COLLECT first, unless a
    set the board knows is up on the table (then a lost set cannot be there, and the hand in
    play stays), then SHUFFLE each lost set (partial walls drop back into the disc first)."""
    lost = lost_sets(view)
    steps: list[m.Message] = [] if view.sets_in(PLACE_UP) else [m.Collect()]
    steps.extend(m.Shuffle(SET_CODE[s]) for s in lost)
    return steps


def describe_recovery(view: BoardView) -> str:
    """The recovery procedure in plain words (``collect the table top, then shuffle set B``)."""
    lost = lost_sets(view)
    shuffles = " and ".join(f"set {s}" for s in lost)
    if view.sets_in(PLACE_UP):
        return f"shuffle {shuffles} again (set {view.sets_in(PLACE_UP)[0]} stays up on the table)"
    return f"collect the table top, then shuffle {shuffles} again"
