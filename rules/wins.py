"""The wins and the end of a hand: declared wins scored and paid, penalties, the exhausted wall.

:class:`Wins` is a part of the hand record (:class:`rules.record.HandRecord`), which gives it
the hand's state (:class:`rules.hand_state.HandState`), the profile, the Wenzhou game before
the hand and the Wenzhou table. The source of a win follows from the state: on a discard,
robbing a kong (or, Sichuan annex II "Kong volé", on the discard a player makes right after his
kong), from the wall, or from a kong replacement. A declared win without a winning shape is
a false win: the seat is penalised with its rule set's consequence (:mod:`rules.penalties`), as
with a ``penalty`` event from the floor. Wenzhou and WSOM end at the first win; Sichuan goes on
until three have won, the simplified rules until all have; every rule set ends with
``exhausted`` once the live wall is empty.
"""

from __future__ import annotations

from rules import record_words as rw
from rules.events import Exhausted, Penalty, RecordError, Win
from rules.hand import MeldKind, WinSource, make_meld
from rules.hand_state import HandState, require
from rules.outcome import PenaltyRecord, WinRecord
from rules.penalties import CONSEQUENCES
from rules.profiles import Profile
from rules.scoring import SichuanContext, SimplifiedContext, WenzhouContext, WenzhouTable, score
from rules.seating import WenzhouGame
from rules.settle import sichuan_exhaustion, win_payments
from rules.words import SEATS, RuleSet, Seat


class Wins:
    """How the seats of one hand, on ``state``, go out and how the hand ends."""

    def __init__(
        self, state: HandState, profile: Profile, game: WenzhouGame | None, table: WenzhouTable
    ) -> None:
        self._state = state
        self._profile = profile
        self._game = game
        self._table = table

    def win(self, ev: Win) -> None:
        state = self._state
        seat = ev.seat
        st = state.seats[seat]
        require(state.active(seat), f"seat {seat} is out of the hand")
        giver: Seat | None = None
        robbed_from: Seat | None = None
        if state.phase == "discard":
            require(seat == state.turn, f"it is not {seat}'s turn")
            require(
                st.drew_from is not None,
                f"seat {seat} has drawn nothing since its claim: a win on a discard is "
                "declared instead of the claim",
            )
            assert st.drew_from is not None
            source = st.drew_from
            win_tile = st.concealed[-1]
            concealed = list(st.concealed)
        elif state.phase == "claim":
            require(state.last_discard is not None, "there is no discard to win on")
            assert state.last_discard is not None
            giver, win_tile = state.last_discard
            require(seat != giver, f"seat {seat} cannot win on its own discard")
            require(not st.no_claim, f"seat {seat} may not claim until its next own draw")
            source = WinSource.DISCARD
            if state.seats[giver].konged:
                source = WinSource.ROBBED  # annex II "Kong volé": the discard after a kong
                robbed_from = giver
            concealed = [*st.concealed, win_tile]
        elif state.phase == "kong" and state.pending_kong is not None and state.pending_kong[2]:
            giver, win_tile, _ = state.pending_kong
            require(seat != giver, f"seat {seat} cannot rob its own kong")
            source = WinSource.ROBBED
            robbed_from = giver
            concealed = [*st.concealed, win_tile]
        else:
            raise RecordError(rw.NO_WIN_NOW.format(seat=seat))
        hand = state.hand(seat, win_tile, source, concealed)
        if st.penalised:
            raise RecordError(rw.DEAD_HAND.format(seat=seat))
        result = score(
            hand, self._context(seat, source, giver, robbed_from, ev.announced), table=self._table
        )
        if not result.won:
            self._penalise(seat, "false win: no winning shape")
            return
        # the win stands: move the tiles
        if state.phase == "claim" and giver is not None:
            state.seats[giver].discards.pop()
        if state.phase == "kong" and giver is not None:
            gst = state.seats[giver]
            for i, m in enumerate(gst.melds):
                if m.kind is MeldKind.KONG and m.faces[0] == win_tile and not m.concealed:
                    gst.melds[i] = make_meld([win_tile] * 3)
                    break
        st.concealed = concealed
        st.won = True
        playing = [s for s in SEATS if not state.seats[s].won or s == seat]
        penalised = [
            s for s in SEATS if state.seats[s].penalised and state.rule_set is RuleSet.WENZHOU
        ]
        points = result.points or 0
        payments = win_payments(
            state.rule_set,
            points,
            seat,
            source,
            discarder=giver,
            playing=playing,
            penalised=penalised,
        )
        state.wins.append(WinRecord(seat, source, result, tuple(payments), len(state.wins) + 1))
        state.last_discard = None
        state.pending_kong = None
        for other in state.seats.values():
            other.konged = False
        self._after_win(seat)

    def _after_win(self, seat: Seat) -> None:
        state = self._state
        winners = len(state.wins)
        if state.rule_set in (RuleSet.WENZHOU, RuleSet.WSOM):
            state.finish("won")
            return
        if state.rule_set is RuleSet.SICHUAN and winners >= 3:
            state.finish("three players have won")
            return
        if not any(state.active(s) for s in SEATS):
            state.finish("every player has gone out")
            return
        state.turn = seat
        state.phase = "claim"  # the next active seat draws
        state.last_discard = None

    def _context(
        self,
        seat: Seat,
        source: WinSource,
        giver: Seat | None,
        robbed: Seat | None,
        announced: bool,
    ) -> SichuanContext | WenzhouContext | SimplifiedContext | None:
        state = self._state
        st = state.seats[seat]
        if state.rule_set is RuleSet.SICHUAN:
            no_discard_yet = all(not s.discards for s in state.seats.values()) and not any(
                s.melds for s in state.seats.values()
            )
            heavenly = seat == state.leader and st.draws == 0 and no_discard_yet
            second = False
            if not heavenly and not state.kong_made:
                if source is WinSource.DISCARD and giver is not None:
                    first_discard = len(state.seats[giver].discards) == 1
                    before = giver == state.leader or state.next_active(giver) == seat
                    second = first_discard and before and st.draws == 0
                elif source is WinSource.WALL:
                    second = st.draws == 1 and seat != state.leader
            points = state.seats[robbed].kong_points() if robbed is not None else 0
            if robbed is not None and state.pending_kong is not None:
                points -= 2  # the robbed kong falls back to a pung
            return SichuanContext(heavenly, second, max(points, 0))
        if state.rule_set is RuleSet.WENZHOU:
            leader = seat == state.leader
            return WenzhouContext(leader=leader, streak=self._game.streak if self._game else 0)
        if state.rule_set is RuleSet.SIMPLIFIED:
            return SimplifiedContext(
                len(state.wins) + 1, announced, self._profile.announce.une_tuile
            )
        return None

    def _penalise(self, seat: Seat, reason: str) -> None:
        state = self._state
        st = state.seats[seat]
        if state.rule_set is RuleSet.SICHUAN:
            st.no_claim = True
        else:
            st.penalised = True
        state.penalties.append(PenaltyRecord(seat, reason, CONSEQUENCES[state.rule_set]))
        if state.rule_set is RuleSet.WENZHOU and seat == state.turn and state.phase == "discard":
            # the seat was to play: play passes on without it
            state.phase = "claim"
            state.last_discard = None
        if state.rule_set is RuleSet.WENZHOU and not any(
            state.active(s) for s in SEATS if s != seat
        ):  # pragma: no cover - four penalties in one hand
            state.finish("every player penalised")

    def penalty(self, ev: Penalty) -> None:
        state = self._state
        require(not state.seats[ev.seat].won, f"seat {ev.seat} has already won")
        self._penalise(ev.seat, ev.reason)

    def exhausted(self, ev: Exhausted) -> None:
        state = self._state
        require(not state.wall.live, f"the live wall still holds {len(state.wall.live)} tiles")
        require(state.phase == "claim", "the hand ends after the last discard")
        if state.rule_set is RuleSet.SICHUAN:
            left = {s: state.seats[s].concealed for s in SEATS if not state.seats[s].won}
            state.end_payments = sichuan_exhaustion(left)
        state.finish("wall exhausted")
