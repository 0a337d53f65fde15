"""Several calls on one discard: which one takes the tile, and who lost the call.

The seeds' priority (seed 000, article 15, which Sichuan takes up: « les ordres de priorité
sont : annonce de Mah-Jong, puis de Kong, puis de Pung et enfin de Chow [...] Si plusieurs
joueurs annoncent la même combinaison, le joueur le plus proche de celui qui s'est défaussé de
la tuile dans le sens contraire des aiguilles d'une montre est prioritaire »; seed 004 rule 6
the same: Mah-Jong first, then kong and pung before chow, and « c'est le premier à jouer,
selon le tour, qui gagne »). Play turns counter-clockwise, so the nearest counter-clockwise
is the discarder's next player (at his right), then the one opposite, then the one at his
left. WSOM's seed gives no priority: the same order (**Decision**).

:func:`call_order` sorts the calls; :func:`check_call` refuses a call that could not be
made (a chow by another than the next player, tiles the caller does not hold, tiles that do
not make the set called). :class:`rules.record.HandRecord` applies the first call in order,
and, when it is a Mah-Jong without a winning shape (a false win, penalised), the next one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rules import record_words as rw
from rules.events import Call, CallKind, RecordError
from rules.hand import HandError, MeldKind, make_meld
from rules.words import SEAT_INDEX, Seat

PRIORITY: dict[CallKind, int] = {"mahjong": 0, "kong": 1, "pung": 2, "chow": 3}
_TILES: dict[CallKind, int] = {"mahjong": 0, "kong": 3, "pung": 2, "chow": 2}


@dataclass(frozen=True)
class CallRecord:
    """Calls made on one discard: who took the tile with which call (None when every call
    came to nothing: a false Mah-Jong alone), the calls that lost, the false Mah-Jongs."""

    discarder: Seat
    tile: str
    taken_by: Seat | None
    call: CallKind | None
    lost: tuple[tuple[Seat, CallKind], ...]
    false_wins: tuple[Seat, ...] = ()


def distance(discarder: Seat, seat: Seat) -> int:
    """Steps counter-clockwise (in the order of play) from the discarder to ``seat``."""
    return (SEAT_INDEX[seat] - SEAT_INDEX[discarder]) % 4


def call_order(calls: Sequence[Call], discarder: Seat) -> list[Call]:
    """The calls by priority: Mah-Jong, kong, pung, chow; among equal calls the nearest to
    the discarder counter-clockwise first."""
    return sorted(calls, key=lambda c: (PRIORITY[c.call], distance(discarder, c.seat)))


def check_call(call: Call, tile: str, held: Sequence[str], chow_seat: Seat) -> None:
    """Refuse a call that could not be made on ``tile`` by a player holding ``held``;
    ``chow_seat`` is the only player who may call a chow (the discarder's next)."""
    want = _TILES[call.call]
    if len(call.tiles) != want:
        what = rw.TAKES_FROM_HAND.format(count=want) if want else rw.TAKES_NONE
        said = {"seat": call.seat, "call": call.call, "count": len(call.tiles), "what": what}
        raise RecordError(rw.CALL_SIZE.format(**said))
    if call.call == "mahjong":
        return
    if call.call == "chow" and call.seat != chow_seat:
        raise RecordError(rw.CHOW_SEAT.format(seat=call.seat, chow_seat=chow_seat))
    try:
        meld = make_meld([*call.tiles, tile])
    except HandError:
        meld = None
    if meld is None or meld.kind is not MeldKind(call.call):
        shown = " ".join(call.tiles)
        said = {"seat": call.seat, "call": call.call, "shown": shown, "tile": tile}
        raise RecordError(rw.MAKES_NO.format(**said))
    missing = Counter(call.tiles) - Counter(held)
    if missing:
        raise RecordError(rw.NOT_HELD.format(seat=call.seat, tile=sorted(missing)[0]))
