"""The state of one hand in play, seat by seat, and what a refused event puts back.

:class:`SeatState` is one seat's tiles and flags; :class:`Saved` is what an event may change,
copied before the event so that :class:`rules.record.HandRecord` restores it on a refusal.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rules.events import Phase
from rules.hand import Meld, MeldKind, WinSource
from rules.settle import Payment
from rules.wall import WallState
from rules.words import Seat


@dataclass(slots=True)
class SeatState:
    concealed: list[str]
    melds: list[Meld] = field(default_factory=list)
    bonus: list[str] = field(default_factory=list)
    discards: list[str] = field(default_factory=list)
    draws: int = 0
    won: bool = False
    penalised: bool = False  # Wenzhou: out of the hand; WSOM, simplified: dead hand
    no_claim: bool = False  # Sichuan: may not claim until its next own draw
    drew_from: WinSource | None = None  # how the tile to discard came (wall / kong)
    konged: bool = False  # its last action was a kong (for the discard that follows)

    def size(self) -> int:
        return len(self.concealed) + 3 * len(self.melds)

    def copy(self) -> SeatState:
        """A copy whose lists can change without touching this one (melds are frozen)."""
        return SeatState(
            list(self.concealed),
            list(self.melds),
            list(self.bonus),
            list(self.discards),
            self.draws,
            self.won,
            self.penalised,
            self.no_claim,
            self.drew_from,
            self.konged,
        )

    def kong_points(self) -> int:
        return sum(3 if m.concealed else 2 for m in self.melds if m.kind is MeldKind.KONG)


@dataclass(frozen=True, slots=True)
class Saved:
    """What an event may change, kept so that a refusal puts it back: the lists of the seats
    it may change are copied; the wall, melds and results are immutable; wins and penalties
    only grow."""

    seats: dict[Seat, SeatState]
    play: tuple[WallState, Seat, Phase, tuple[Seat, str] | None, tuple[Seat, str, bool] | None]
    end: tuple[bool, list[Payment], bool, str]
    counts: tuple[int, int, int]
