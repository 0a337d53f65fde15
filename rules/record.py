"""The hand record: a hand from its dealt state, through the events of play, to its result.

A :class:`HandRecord` is opened by :func:`rules.replay.start` on a validated dealt state.
Events (:data:`rules.events.Event`: draw, discard, claim, kong, flower, win, penalty,
exhausted) are applied one by one with :meth:`HandRecord.apply`; each is checked against the
state (whose turn, which tiles the seat holds, what the wall gives) and refused with a
:class:`~rules.events.RecordError` naming the problem, leaving the record unchanged.
:meth:`HandRecord.result` settles the hand so far (:class:`~rules.outcome.HandResult`).

Flow of play (TABLE.md and the seeds):

- the leader starts with the full count and discards first; after a discard the others may
  claim it (``claim``: chow by the next player only, pung, kong) or win on it (``win``); the
  next player ``draw`` s otherwise;
- ``kong`` (concealed from the hand, or added to an exposed pung) is followed by the
  replacement ``draw``, taken where the profile says (colline or live wall's far end); before
  that draw another player may rob an added kong (``win``);
- the source of a win follows from the state: on a discard, robbing a kong (or, Sichuan
  annex II "Kong volé", on the discard a player makes right after his kong), from the wall,
  or from a kong replacement;
- Wenzhou and WSOM end at the first win; Sichuan goes on until three have won, the simplified
  rules until all have; every rule set ends with ``exhausted`` once the live wall is empty;
- a declared win without a winning shape is a false win: the seat is penalised with its
  rule set's consequence (:mod:`rules.penalties`), as with a ``penalty`` event from the floor.

Several calls on one discard are one ``calls`` event carrying every call: the seeds' priority
(Mah-Jong, then kong, then pung, then chow; among equal calls the nearest counter-clockwise
from the discarder first, :mod:`rules.calls`) gives the tile to one call, and the record keeps
who lost the call (:attr:`HandResult.calls`). A false Mah-Jong is penalised and the next call
is heard. A single call may still be its ``claim`` or ``win`` event.

The record owns the hand's state (:class:`~rules.hand_state.HandState`) and the events
applied; two parts it holds do the work on that state: the moves of play
(:class:`~rules.moves.Moves`: draw, discard, claim, calls, kong, flower) and the wins and the
end (:class:`~rules.wins.Wins`: win, penalty, exhausted).
"""

from __future__ import annotations

from typing import assert_never

from rules import record_words as rw
from rules.dealt import DealtState
from rules.events import (
    Calls,
    Claim,
    Discard,
    Draw,
    Event,
    Exhausted,
    Flower,
    Kong,
    Penalty,
    Phase,
    RecordError,
    Win,
)
from rules.hand import Hand, HandError
from rules.hand_state import HandState, Saved, SeatState
from rules.moves import Moves
from rules.outcome import HandResult
from rules.profiles import Profile
from rules.scoring import WenzhouTable, score_unfinished
from rules.seating import WenzhouGame, wenzhou_after_hand
from rules.settle import net
from rules.wall import WallExhausted, WallState
from rules.wins import Wins
from rules.words import SEATS, RuleSet, Seat


class HandRecord:
    """One hand in play. Use :func:`rules.replay.start`; feed events with :meth:`apply`."""

    def __init__(
        self, dealt: DealtState, profile: Profile, game: WenzhouGame | None, table: WenzhouTable
    ) -> None:
        self.dealt = dealt
        self.profile = profile
        self.game = game
        self.table = table
        self.state = HandState.as_dealt(dealt)
        self.events: list[Event] = []
        self._wins = Wins(self.state, profile, game, table)
        self._moves = Moves(self.state, profile, self._wins.win)

    # ----------------------------------------------------------------- the state

    @property
    def joker(self) -> str | None:
        return self.state.joker

    @property
    def leader(self) -> Seat:
        return self.state.leader

    @property
    def seats(self) -> dict[Seat, SeatState]:
        return self.state.seats

    @property
    def wall(self) -> WallState:
        return self.state.wall

    @property
    def turn(self) -> Seat:
        return self.state.turn

    @property
    def phase(self) -> Phase:
        return self.state.phase

    @property
    def finished(self) -> bool:
        return self.state.finished

    def active(self, seat: Seat) -> bool:
        """Still taking turns (not won; in Wenzhou, not put out by a penalty)."""
        return self.state.active(seat)

    def next_active(self, seat: Seat) -> Seat:
        return self.state.next_active(seat)

    # ----------------------------------------------------------------- events

    def apply(self, event: Event) -> None:
        """Apply one event, or raise RecordError and leave the record as it was."""
        state = self.state
        if state.finished:
            raise RecordError(rw.HAND_OVER.format(reason=state.reason))
        saved: Saved | None = None  # a draw or a discard checks all before it changes anything
        if isinstance(event, Flower):
            saved = state.save((event.seat,))  # a flower changes its own seat alone
        elif not isinstance(event, (Draw, Discard)):
            saved = state.save(SEATS)
        try:
            self._hand_to_part(event)
        except (RecordError, HandError, WallExhausted) as exc:
            if saved is not None:
                state.restore(saved)
            raise RecordError(str(exc)) from None
        self.events.append(event)

    def _hand_to_part(self, event: Event) -> None:
        match event:  # the most frequent first
            case Draw():
                self._moves.draw(event)
            case Discard():
                self._moves.discard(event)
            case Claim():
                self._moves.claim(event)
            case Calls():
                self._moves.calls(event)
            case Kong():
                self._moves.kong(event)
            case Flower():
                self._moves.flower(event)
            case Win():
                self._wins.win(event)
            case Penalty():
                self._wins.penalty(event)
            case Exhausted():
                self._wins.exhausted(event)
            case _:
                assert_never(event)

    # ----------------------------------------------------------------- results

    def hand_of(self, seat: Seat) -> Hand:
        """The seat's tiles now, as a hand (no winning tile)."""
        return self.state.hand(seat, None, None)

    def result(self) -> HandResult:
        state = self.state
        payments = [p for w in state.wins for p in w.payments] + list(state.end_payments)
        scores: dict[Seat, int] = {}
        if state.rule_set is RuleSet.SIMPLIFIED:
            won = {w.seat: w.score.points or 0 for w in state.wins}
            for s in SEATS:
                scores[s] = won[s] if s in won else (score_unfinished(self.hand_of(s)).points or 0)
        next_game = None
        if self.game is not None and state.finished:
            winner = state.wins[0].seat if state.wins else None
            next_game = wenzhou_after_hand(self.game, winner)
        return HandResult(
            state.finished,
            state.reason,
            tuple(state.wins),
            tuple(state.penalties),
            tuple(state.end_payments),
            tuple(payments),
            net(payments),
            scores,
            next_game,
            tuple(state.calls),
        )
