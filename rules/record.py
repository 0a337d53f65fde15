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
"""

from __future__ import annotations

from collections.abc import Sequence

from rules.calls import CallRecord, call_order, check_call
from rules.dealt import DealtState
from rules.events import (
    Call,
    CallKind,
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
from rules.hand import DEALT_HAND_SOURCE, Hand, HandError, MeldKind, WinSource, make_meld
from rules.outcome import HandResult, PenaltyRecord, WinRecord
from rules.penalties import CONSEQUENCES
from rules.profiles import Profile
from rules.scoring import (
    SichuanContext,
    SimplifiedContext,
    WenzhouContext,
    WenzhouTable,
    score,
    score_unfinished,
)
from rules.seat_state import Saved, SeatState
from rules.seating import WenzhouGame, wenzhou_after_hand
from rules.settle import Payment, net, sichuan_exhaustion, win_payments
from rules.tiles import is_bonus, sorted_tiles
from rules.wall import WallExhausted, WallState, draw, replacement, wall_state
from rules.words import SEAT_INDEX, SEATS, RuleSet, Seat, seat_at


def _next(seat: Seat, step: int = 1) -> Seat:
    return seat_at(SEAT_INDEX[seat] + step)


# --------------------------------------------------------------------------- the record


class HandRecord:
    """One hand in play. Use :func:`start`; feed events with :meth:`apply`."""

    def __init__(
        self, dealt: DealtState, profile: Profile, game: WenzhouGame | None, table: WenzhouTable
    ) -> None:
        self.dealt = dealt
        self.profile = profile
        self.rule_set = RuleSet(dealt.variant)
        self.game = game
        self.table = table
        self.joker: str | None = dealt.joker.face if dealt.joker else None
        self.wall: WallState = wall_state(dealt)
        self.seats: dict[Seat, SeatState] = {
            s: SeatState(concealed=list(dealt.hands[s])) for s in SEATS
        }
        self.leader: Seat = dealt.leader
        self.turn: Seat = dealt.leader
        self.phase: Phase = "discard"
        self.last_discard: tuple[Seat, str] | None = None
        self.pending_kong: tuple[Seat, str, bool] | None = None  # seat, tile, added to a pung
        self.kong_made = False
        self.events: list[Event] = []
        self.wins: list[WinRecord] = []
        self.penalties: list[PenaltyRecord] = []
        self.calls: list[CallRecord] = []
        self.end_payments: list[Payment] = []
        self.finished = False
        self.reason = "in play"
        self.seats[self.leader].drew_from = DEALT_HAND_SOURCE  # a heavenly hand is self-drawn

    # ----------------------------------------------------------------- helpers

    def active(self, seat: Seat) -> bool:
        """Still taking turns (not won; in Wenzhou, not put out by a penalty)."""
        st = self.seats[seat]
        return not st.won and not (st.penalised and self.rule_set is RuleSet.WENZHOU)

    def next_active(self, seat: Seat) -> Seat:
        for step in range(1, 5):
            other = _next(seat, step)
            if self.active(other):
                return other
        return seat

    def _hand(
        self,
        seat: Seat,
        win_tile: str | None,
        source: WinSource | None,
        concealed: Sequence[str] | None = None,
    ) -> Hand:
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

    def _take(self, seat: Seat, tiles: Sequence[str]) -> None:
        st = self.seats[seat]
        left = list(st.concealed)
        for tile in tiles:
            if tile not in left:
                raise RecordError(f"seat {seat} does not hold {tile}")
            left.remove(tile)
        st.concealed = left

    def _require(self, condition: bool, message: str) -> None:
        if not condition:
            raise RecordError(message)

    # ----------------------------------------------------------------- events

    def apply(self, event: Event) -> None:
        """Apply one event, or raise RecordError and leave the record as it was."""
        if self.finished:
            raise RecordError(f"the hand is over ({self.reason})")
        saved: Saved | None = None  # a draw or a discard checks all before it changes anything
        if isinstance(event, Flower):
            saved = self._snapshot((event.seat,))  # a flower changes its own seat alone
        elif not isinstance(event, (Draw, Discard)):
            saved = self._snapshot(SEATS)
        try:
            getattr(self, f"_{event.type}")(event)  # _draw, _discard, _claim, _calls, ...
        except (RecordError, HandError, WallExhausted) as exc:
            if saved is not None:
                self._restore(saved)
            raise RecordError(str(exc)) from None
        self.events.append(event)

    def _snapshot(self, seats: Sequence[Seat]) -> Saved:
        return Saved(
            {seat: self.seats[seat].copy() for seat in seats},
            (self.wall, self.turn, self.phase, self.last_discard, self.pending_kong),
            (self.kong_made, self.end_payments, self.finished, self.reason),
            (len(self.wins), len(self.penalties), len(self.calls)),
        )

    def _restore(self, saved: Saved) -> None:
        self.seats.update(saved.seats)
        self.wall, self.turn, self.phase, self.last_discard, self.pending_kong = saved.play
        self.kong_made, self.end_payments, self.finished, self.reason = saved.end
        del self.wins[saved.counts[0] :]
        del self.penalties[saved.counts[1] :]
        del self.calls[saved.counts[2] :]

    def _draw(self, ev: Draw) -> None:
        # every check comes before the first change (apply keeps no copy for a draw); the
        # checks are plain ifs, the most frequent event's words made only when refused
        seat = ev.seat
        st = self.seats[seat]
        if not self.active(seat):
            raise RecordError(f"seat {seat} is out of the hand")
        replacing = self.phase in ("kong", "flower")
        if replacing:
            if seat != self.turn:
                raise RecordError(f"the replacement is {self.turn}'s to draw")
            drawn = replacement(self.profile, self.wall)
            source = WinSource.KONG if self.phase == "kong" else WinSource.WALL
        else:
            if self.phase != "claim":
                raise RecordError(f"seat {self.turn} must discard first")
            expected = self.next_active(self.turn)
            if seat != expected:
                raise RecordError(f"it is {expected}'s turn to draw, not {seat}'s")
            drawn = draw(self.wall)
            source = WinSource.WALL
        tile = drawn.tile.tile
        if ev.tile is not None and ev.tile != tile:
            raise RecordError(f"seat {seat} reports {ev.tile}, the wall gives {tile}")
        if replacing:
            self.pending_kong = None
        else:
            self.last_discard = None
            st.no_claim = False
            st.konged = False
        self.wall = drawn.wall
        st.concealed.append(tile)
        st.draws += 1
        st.drew_from = source
        self.turn = seat
        self.phase = "discard"

    def _discard(self, ev: Discard) -> None:
        # every check comes before the first change (apply keeps no copy for a discard)
        seat = ev.seat
        if self.phase != "discard" or seat != self.turn:
            raise RecordError(f"it is not {seat}'s turn")
        self._take(seat, [ev.tile])
        st = self.seats[seat]
        st.discards.append(ev.tile)
        self.last_discard = (seat, ev.tile)
        self.phase = "claim"
        st.drew_from = None

    def _claim(self, ev: Claim) -> None:
        seat = ev.seat
        st = self.seats[seat]
        self._require(
            self.phase == "claim" and self.last_discard is not None, "there is no discard to claim"
        )
        assert self.last_discard is not None
        giver, tile = self.last_discard
        self._require(seat != giver, f"seat {seat} cannot claim its own discard")
        self._require(self.active(seat), f"seat {seat} is out of the hand")
        self._require(not st.no_claim, f"seat {seat} may not claim until its next own draw")
        self._take(seat, ev.tiles)
        meld = make_meld([*ev.tiles, tile])
        if meld.kind is MeldKind.CHOW:
            self._require(
                seat == self.next_active(giver),
                f"only {self.next_active(giver)} may claim a chow from {giver}",
            )
        self.seats[giver].discards.pop()
        st.melds.append(meld)
        self.last_discard = None
        self.turn = seat
        self.seats[giver].konged = False
        if meld.kind is MeldKind.KONG:
            self.phase = "kong"
            self.kong_made = True
            st.konged = True
        else:
            self.phase = "discard"
            st.drew_from = None

    def _calls(self, ev: Calls) -> None:
        self._require(
            self.phase == "claim" and self.last_discard is not None, "there is no discard to call"
        )
        assert self.last_discard is not None
        giver, tile = self.last_discard
        for call in ev.calls:
            st = self.seats[call.seat]
            self._require(call.seat != giver, f"seat {call.seat} cannot call its own discard")
            self._require(self.active(call.seat), f"seat {call.seat} is out of the hand")
            self._require(not st.no_claim, f"seat {call.seat} may not claim until its next draw")
            check_call(call, tile, st.concealed, self.next_active(giver))
        taken: Call | None = None
        lost: list[tuple[Seat, CallKind]] = []
        false_wins: list[Seat] = []
        for call in call_order(ev.calls, giver):
            if taken is not None:
                lost.append((call.seat, call.call))
            elif call.call == "mahjong":
                won = len(self.wins)
                self._win(Win(seat=call.seat))
                if len(self.wins) > won:
                    taken = call
                else:  # a false win: penalised, and the next call is heard
                    false_wins.append(call.seat)
            else:
                self._claim(Claim(seat=call.seat, tiles=call.tiles))
                taken = call
        self.calls.append(
            CallRecord(
                giver,
                tile,
                taken.seat if taken else None,
                taken.call if taken else None,
                tuple(lost),
                tuple(false_wins),
            )
        )

    def _kong(self, ev: Kong) -> None:
        seat = ev.seat
        st = self.seats[seat]
        self._require(self.phase == "discard" and seat == self.turn, f"it is not {seat}'s turn")
        if st.concealed.count(ev.tile) >= 4:
            self._take(seat, [ev.tile] * 4)
            st.melds.append(make_meld([ev.tile] * 4, concealed=True))
            self.pending_kong = (seat, ev.tile, False)
        else:
            index = next(
                (
                    i
                    for i, m in enumerate(st.melds)
                    if m.kind is MeldKind.PUNG and m.faces == (ev.tile,) * 3
                ),
                None,
            )
            self._require(
                index is not None,
                f"seat {seat} has neither four {ev.tile} nor an exposed pung of it",
            )
            assert index is not None
            self._take(seat, [ev.tile])
            st.melds[index] = make_meld([ev.tile] * 4)
            self.pending_kong = (seat, ev.tile, True)
        self.phase = "kong"
        self.kong_made = True
        st.konged = True

    def _flower(self, ev: Flower) -> None:
        seat = ev.seat
        self._require(is_bonus(ev.tile), f"{ev.tile} is not a flower or season")
        self._require(
            self.phase == "discard" and seat == self.turn,
            f"seat {seat} lays out flowers in its own turn",
        )
        self._take(seat, [ev.tile])
        self.seats[seat].bonus.append(ev.tile)
        self.phase = "flower"

    def _win(self, ev: Win) -> None:
        seat = ev.seat
        st = self.seats[seat]
        self._require(self.active(seat), f"seat {seat} is out of the hand")
        giver: Seat | None = None
        robbed_from: Seat | None = None
        if self.phase == "discard":
            self._require(seat == self.turn, f"it is not {seat}'s turn")
            self._require(
                st.drew_from is not None,
                f"seat {seat} has drawn nothing since its claim: a win on a discard is "
                "declared instead of the claim",
            )
            assert st.drew_from is not None
            source = st.drew_from
            win_tile = st.concealed[-1]
            concealed = list(st.concealed)
        elif self.phase == "claim":
            self._require(self.last_discard is not None, "there is no discard to win on")
            assert self.last_discard is not None
            giver, win_tile = self.last_discard
            self._require(seat != giver, f"seat {seat} cannot win on its own discard")
            self._require(not st.no_claim, f"seat {seat} may not claim until its next own draw")
            source = WinSource.DISCARD
            if self.seats[giver].konged:
                source = WinSource.ROBBED  # annex II "Kong volé": the discard after a kong
                robbed_from = giver
            concealed = [*st.concealed, win_tile]
        elif self.phase == "kong" and self.pending_kong is not None and self.pending_kong[2]:
            giver, win_tile, _ = self.pending_kong
            self._require(seat != giver, f"seat {seat} cannot rob its own kong")
            source = WinSource.ROBBED
            robbed_from = giver
            concealed = [*st.concealed, win_tile]
        else:
            raise RecordError(f"seat {seat} cannot declare a win now")
        hand = self._hand(seat, win_tile, source, concealed)
        if st.penalised:
            raise RecordError(f"seat {seat} has a dead hand and cannot win")
        result = score(
            hand, self._context(seat, source, giver, robbed_from, ev.announced), table=self.table
        )
        if not result.won:
            self._penalise(seat, "false win: no winning shape")
            return
        # the win stands: move the tiles
        if self.phase == "claim" and giver is not None:
            self.seats[giver].discards.pop()
        if self.phase == "kong" and giver is not None:
            gst = self.seats[giver]
            for i, m in enumerate(gst.melds):
                if m.kind is MeldKind.KONG and m.faces[0] == win_tile and not m.concealed:
                    gst.melds[i] = make_meld([win_tile] * 3)
                    break
        st.concealed = concealed
        st.won = True
        playing = [s for s in SEATS if not self.seats[s].won or s == seat]
        penalised = [
            s for s in SEATS if self.seats[s].penalised and self.rule_set is RuleSet.WENZHOU
        ]
        points = result.points or 0
        payments = win_payments(
            self.rule_set,
            points,
            seat,
            source,
            discarder=giver,
            playing=playing,
            penalised=penalised,
        )
        self.wins.append(WinRecord(seat, source, result, tuple(payments), len(self.wins) + 1))
        self.last_discard = None
        self.pending_kong = None
        for other in self.seats.values():
            other.konged = False
        self._after_win(seat)

    def _after_win(self, seat: Seat) -> None:
        winners = len(self.wins)
        if self.rule_set in (RuleSet.WENZHOU, RuleSet.WSOM):
            self._finish("won")
            return
        if self.rule_set is RuleSet.SICHUAN and winners >= 3:
            self._finish("three players have won")
            return
        if not any(self.active(s) for s in SEATS):
            self._finish("every player has gone out")
            return
        self.turn = seat
        self.phase = "claim"  # the next active seat draws
        self.last_discard = None

    def _context(
        self,
        seat: Seat,
        source: WinSource,
        giver: Seat | None,
        robbed: Seat | None,
        announced: bool,
    ) -> SichuanContext | WenzhouContext | SimplifiedContext | None:
        st = self.seats[seat]
        if self.rule_set is RuleSet.SICHUAN:
            no_discard_yet = all(not s.discards for s in self.seats.values()) and not any(
                s.melds for s in self.seats.values()
            )
            heavenly = seat == self.leader and st.draws == 0 and no_discard_yet
            second = False
            if not heavenly and not self.kong_made:
                if source is WinSource.DISCARD and giver is not None:
                    first_discard = len(self.seats[giver].discards) == 1
                    before = giver == self.leader or self.next_active(giver) == seat
                    second = first_discard and before and st.draws == 0
                elif source is WinSource.WALL:
                    second = st.draws == 1 and seat != self.leader
            points = self.seats[robbed].kong_points() if robbed is not None else 0
            if robbed is not None and self.pending_kong is not None:
                points -= 2  # the robbed kong falls back to a pung
            return SichuanContext(heavenly, second, max(points, 0))
        if self.rule_set is RuleSet.WENZHOU:
            leader = seat == self.leader
            return WenzhouContext(leader=leader, streak=self.game.streak if self.game else 0)
        if self.rule_set is RuleSet.SIMPLIFIED:
            return SimplifiedContext(len(self.wins) + 1, announced, self.profile.announce.une_tuile)
        return None

    def _penalise(self, seat: Seat, reason: str) -> None:
        st = self.seats[seat]
        if self.rule_set is RuleSet.SICHUAN:
            st.no_claim = True
        else:
            st.penalised = True
        self.penalties.append(PenaltyRecord(seat, reason, CONSEQUENCES[self.rule_set]))
        if self.rule_set is RuleSet.WENZHOU and seat == self.turn and self.phase == "discard":
            # the seat was to play: play passes on without it
            self.phase = "claim"
            self.last_discard = None
        if self.rule_set is RuleSet.WENZHOU and not any(
            self.active(s) for s in SEATS if s != seat
        ):  # pragma: no cover - four penalties in one hand
            self._finish("every player penalised")

    def _penalty(self, ev: Penalty) -> None:
        self._require(not self.seats[ev.seat].won, f"seat {ev.seat} has already won")
        self._penalise(ev.seat, ev.reason)

    def _exhausted(self, ev: Exhausted) -> None:
        self._require(not self.wall.live, f"the live wall still holds {len(self.wall.live)} tiles")
        self._require(self.phase == "claim", "the hand ends after the last discard")
        if self.rule_set is RuleSet.SICHUAN:
            left = {s: self.seats[s].concealed for s in SEATS if not self.seats[s].won}
            self.end_payments = sichuan_exhaustion(left)
        self._finish("wall exhausted")

    def _finish(self, reason: str) -> None:
        self.finished = True
        self.reason = reason
        self.phase = "over"

    # ----------------------------------------------------------------- results

    def hand_of(self, seat: Seat) -> Hand:
        """The seat's tiles now, as a hand (no winning tile)."""
        return self._hand(seat, None, None)

    def result(self) -> HandResult:
        payments = [p for w in self.wins for p in w.payments] + list(self.end_payments)
        scores: dict[Seat, int] = {}
        if self.rule_set is RuleSet.SIMPLIFIED:
            won = {w.seat: w.score.points or 0 for w in self.wins}
            for s in SEATS:
                scores[s] = won[s] if s in won else (score_unfinished(self.hand_of(s)).points or 0)
        next_game = None
        if self.game is not None and self.finished:
            winner = self.wins[0].seat if self.wins else None
            next_game = wenzhou_after_hand(self.game, winner)
        return HandResult(
            self.finished,
            self.reason,
            tuple(self.wins),
            tuple(self.penalties),
            tuple(self.end_payments),
            tuple(payments),
            net(payments),
            scores,
            next_game,
            tuple(self.calls),
        )
