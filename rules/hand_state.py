"""The state of one hand in play, and what a refused event puts back.

:class:`HandState` is what the hand's events change: each seat's tiles and flags
(:class:`SeatState`), the wall, whose turn and which phase, the wins, penalties and calls so
far. The hand record (:class:`rules.record.HandRecord`) owns it and lends it to its parts, the
moves of play (:mod:`rules.moves`) and the wins and the end (:mod:`rules.wins`); before an
event that may fail half way, :meth:`HandState.save` copies what it may change (a
:class:`Saved`) and :meth:`HandState.restore` puts it back on a refusal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rules import record_words as rw
from rules.calls import CallRecord
from rules.dealt import DealtState
from rules.events import Phase, RecordError
from rules.hand import DEALT_HAND_SOURCE, Hand, Meld, MeldKind, WinSource
from rules.outcome import PenaltyRecord, WinRecord
from rules.settle import Payment
from rules.tiles import sorted_tiles
from rules.wall import WallState, wall_state
from rules.words import SEAT_INDEX, SEATS, RuleSet, Seat, seat_at


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


def require(condition: bool, message: str) -> None:
    """Refuse the event (RecordError with ``message``) unless ``condition`` holds."""
    if not condition:
        raise RecordError(message)


@dataclass(slots=True)
class HandState:
    """One hand's state of play. Open it on a dealt state with :meth:`as_dealt`."""

    rule_set: RuleSet
    joker: str | None
    leader: Seat
    wall: WallState
    seats: dict[Seat, SeatState]
    turn: Seat
    phase: Phase = "discard"
    last_discard: tuple[Seat, str] | None = None
    pending_kong: tuple[Seat, str, bool] | None = None  # seat, tile, added to a pung
    kong_made: bool = False
    wins: list[WinRecord] = field(default_factory=list)
    penalties: list[PenaltyRecord] = field(default_factory=list)
    calls: list[CallRecord] = field(default_factory=list)
    end_payments: list[Payment] = field(default_factory=list)
    finished: bool = False
    reason: str = "in play"

    @classmethod
    def as_dealt(cls, dealt: DealtState) -> HandState:
        """The hand as dealt: the leader holds the full count and discards first."""
        seats = {s: SeatState(concealed=list(dealt.hands[s])) for s in SEATS}
        seats[dealt.leader].drew_from = DEALT_HAND_SOURCE  # a heavenly hand is self-drawn
        joker = dealt.joker.face if dealt.joker else None
        return cls(
            RuleSet(dealt.variant), joker, dealt.leader, wall_state(dealt), seats, dealt.leader
        )

    def active(self, seat: Seat) -> bool:
        """Still taking turns (not won; in Wenzhou, not put out by a penalty)."""
        st = self.seats[seat]
        return not st.won and not (st.penalised and self.rule_set is RuleSet.WENZHOU)

    def next_active(self, seat: Seat) -> Seat:
        for step in range(1, 5):
            other = seat_at(SEAT_INDEX[seat] + step)
            if self.active(other):
                return other
        return seat

    def hand(
        self,
        seat: Seat,
        win_tile: str | None,
        source: WinSource | None,
        concealed: Sequence[str] | None = None,
    ) -> Hand:
        """The seat's tiles as a hand (its concealed tiles, or ``concealed`` instead)."""
        st = self.seats[seat]
        return Hand(
            self.rule_set,
            tuple(sorted_tiles(st.concealed if concealed is None else concealed)),
            tuple(st.melds),
            win_tile,
            source,
            self.joker,
            tuple(sorted_tiles(st.bonus)),
        )

    def take(self, seat: Seat, tiles: Sequence[str]) -> None:
        """Take ``tiles`` from the seat's concealed ones; RecordError if it lacks one."""
        st = self.seats[seat]
        left = list(st.concealed)
        for tile in tiles:
            if tile not in left:
                raise RecordError(rw.NOT_HELD.format(seat=seat, tile=tile))
            left.remove(tile)
        st.concealed = left

    def save(self, seats: Sequence[Seat]) -> Saved:
        """What an event may change, the lists of ``seats`` copied."""
        return Saved(
            {seat: self.seats[seat].copy() for seat in seats},
            (self.wall, self.turn, self.phase, self.last_discard, self.pending_kong),
            (self.kong_made, self.end_payments, self.finished, self.reason),
            (len(self.wins), len(self.penalties), len(self.calls)),
        )

    def restore(self, saved: Saved) -> None:
        """Put back what :meth:`save` kept."""
        self.seats.update(saved.seats)
        self.wall, self.turn, self.phase, self.last_discard, self.pending_kong = saved.play
        self.kong_made, self.end_payments, self.finished, self.reason = saved.end
        del self.wins[saved.counts[0] :]
        del self.penalties[saved.counts[1] :]
        del self.calls[saved.counts[2] :]

    def finish(self, reason: str) -> None:
        """The hand is over, for ``reason``."""
        self.finished = True
        self.reason = reason
        self.phase = "over"
