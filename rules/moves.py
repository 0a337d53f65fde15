"""The moves of play: draws, discards, claims, calls, kongs and flowers, each checked and applied.

:class:`Moves` is a part of the hand record (:class:`rules.record.HandRecord`), which gives it
the hand's state (:class:`rules.hand_state.HandState`) and the way a win is declared
(:meth:`rules.wins.Wins.win`, for a Mah-Jong among several calls). Each move checks the
state (whose turn, which tiles the seat holds, what the wall gives) and refuses with a
:class:`~rules.events.RecordError` naming the problem; the record puts back what a refused
move changed.
"""

from __future__ import annotations

from collections.abc import Callable

from rules import record_words as rw
from rules.calls import CallRecord, call_order, check_call
from rules.events import Call, CallKind, Calls, Claim, Discard, Draw, Flower, Kong, RecordError, Win
from rules.hand import MeldKind, WinSource, make_meld
from rules.hand_state import HandState, require
from rules.profiles import Profile
from rules.tiles import is_bonus
from rules.wall import draw, replacement
from rules.words import Seat


class Moves:
    """The moves of one hand, on ``state``; ``win`` declares a win (a Mah-Jong call)."""

    def __init__(self, state: HandState, profile: Profile, win: Callable[[Win], None]) -> None:
        self._state = state
        self._profile = profile
        self._win = win

    def draw(self, ev: Draw) -> None:
        # every check comes before the first change (apply keeps no copy for a draw); the
        # checks are plain ifs, the most frequent event's words made only when refused
        state = self._state
        seat = ev.seat
        st = state.seats[seat]
        if not state.active(seat):
            raise RecordError(rw.OUT_OF_HAND.format(seat=seat))
        replacing = state.phase in ("kong", "flower")
        if replacing:
            if seat != state.turn:
                raise RecordError(rw.REPLACEMENT_TURN.format(seat=state.turn))
            drawn = replacement(self._profile, state.wall)
            source = WinSource.KONG if state.phase == "kong" else WinSource.WALL
        else:
            if state.phase != "claim":
                raise RecordError(rw.DISCARD_FIRST.format(seat=state.turn))
            expected = state.next_active(state.turn)
            if seat != expected:
                raise RecordError(rw.DRAW_TURN.format(expected=expected, seat=seat))
            drawn = draw(state.wall)
            source = WinSource.WALL
        tile = drawn.tile.tile
        if ev.tile is not None and ev.tile != tile:
            raise RecordError(rw.WALL_GIVES.format(seat=seat, reported=ev.tile, tile=tile))
        if replacing:
            state.pending_kong = None
        else:
            state.last_discard = None
            st.no_claim = False
            st.konged = False
        state.wall = drawn.wall
        st.concealed.append(tile)
        st.draws += 1
        st.drew_from = source
        state.turn = seat
        state.phase = "discard"

    def discard(self, ev: Discard) -> None:
        # every check comes before the first change (apply keeps no copy for a discard)
        state = self._state
        seat = ev.seat
        if state.phase != "discard" or seat != state.turn:
            raise RecordError(rw.NOT_TURN.format(seat=seat))
        state.take(seat, [ev.tile])
        st = state.seats[seat]
        st.discards.append(ev.tile)
        state.last_discard = (seat, ev.tile)
        state.phase = "claim"
        st.drew_from = None

    def claim(self, ev: Claim) -> None:
        state = self._state
        seat = ev.seat
        st = state.seats[seat]
        require(
            state.phase == "claim" and state.last_discard is not None,
            "there is no discard to claim",
        )
        assert state.last_discard is not None
        giver, tile = state.last_discard
        require(seat != giver, f"seat {seat} cannot claim its own discard")
        require(state.active(seat), f"seat {seat} is out of the hand")
        require(not st.no_claim, f"seat {seat} may not claim until its next own draw")
        state.take(seat, ev.tiles)
        meld = make_meld([*ev.tiles, tile])
        if meld.kind is MeldKind.CHOW:
            require(
                seat == state.next_active(giver),
                f"only {state.next_active(giver)} may claim a chow from {giver}",
            )
        state.seats[giver].discards.pop()
        st.melds.append(meld)
        state.last_discard = None
        state.turn = seat
        state.seats[giver].konged = False
        if meld.kind is MeldKind.KONG:
            state.phase = "kong"
            state.kong_made = True
            st.konged = True
        else:
            state.phase = "discard"
            st.drew_from = None

    def calls(self, ev: Calls) -> None:
        state = self._state
        require(
            state.phase == "claim" and state.last_discard is not None,
            "there is no discard to call",
        )
        assert state.last_discard is not None
        giver, tile = state.last_discard
        for call in ev.calls:
            st = state.seats[call.seat]
            require(call.seat != giver, f"seat {call.seat} cannot call its own discard")
            require(state.active(call.seat), f"seat {call.seat} is out of the hand")
            require(not st.no_claim, f"seat {call.seat} may not claim until its next draw")
            check_call(call, tile, st.concealed, state.next_active(giver))
        taken: Call | None = None
        lost: list[tuple[Seat, CallKind]] = []
        false_wins: list[Seat] = []
        for call in call_order(ev.calls, giver):
            if taken is not None:
                lost.append((call.seat, call.call))
            elif call.call == "mahjong":
                won = len(state.wins)
                self._win(Win(seat=call.seat))
                if len(state.wins) > won:
                    taken = call
                else:  # a false win: penalised, and the next call is heard
                    false_wins.append(call.seat)
            else:
                self.claim(Claim(seat=call.seat, tiles=call.tiles))
                taken = call
        state.calls.append(
            CallRecord(
                giver,
                tile,
                taken.seat if taken else None,
                taken.call if taken else None,
                tuple(lost),
                tuple(false_wins),
            )
        )

    def kong(self, ev: Kong) -> None:
        state = self._state
        seat = ev.seat
        st = state.seats[seat]
        require(state.phase == "discard" and seat == state.turn, f"it is not {seat}'s turn")
        if st.concealed.count(ev.tile) >= 4:
            state.take(seat, [ev.tile] * 4)
            st.melds.append(make_meld([ev.tile] * 4, concealed=True))
            state.pending_kong = (seat, ev.tile, False)
        else:
            index = next(
                (
                    i
                    for i, m in enumerate(st.melds)
                    if m.kind is MeldKind.PUNG and m.faces == (ev.tile,) * 3
                ),
                None,
            )
            require(
                index is not None,
                f"seat {seat} has neither four {ev.tile} nor an exposed pung of it",
            )
            assert index is not None
            state.take(seat, [ev.tile])
            st.melds[index] = make_meld([ev.tile] * 4)
            state.pending_kong = (seat, ev.tile, True)
        state.phase = "kong"
        state.kong_made = True
        st.konged = True

    def flower(self, ev: Flower) -> None:
        state = self._state
        seat = ev.seat
        require(is_bonus(ev.tile), f"{ev.tile} is not a flower or season")
        require(
            state.phase == "discard" and seat == state.turn,
            f"seat {seat} lays out flowers in its own turn",
        )
        state.take(seat, [ev.tile])
        state.seats[seat].bonus.append(ev.tile)
        state.phase = "flower"
