"""Simplified rules scoring: the barème of seed 004.

Every player scores, winner or not:

- 5 points per flower or season laid out;
- 5 per pung, 10 per kong (exposed or concealed);

and a player who went Mah-Jong adds 100, 40, 20 or 10 as the first, second, third or fourth
to go out, then multiplies his total by:

- x2 when, honours aside, the hand is made of pungs or kongs only;
- x3 when, honours aside, all its tiles are of one suit;
- x10 when it holds honours only (instead of x2 and x3, which an honours-only hand would
  otherwise meet vacuously);

x2 and x3 both apply (x6) to a one-suit hand of pungs. A player who had to announce
« une Tuile » and did not scores nothing for his Mah-Jong (seed rule 10); who had to is the
profile's ``announce.une_tuile``: a hand waiting on one face only (the Decision), or any hand
one tile short (:class:`rules.profiles.Announce`).

For a player who did not go out, his pungs are his exposed pungs and the three-alike in his
concealed tiles (four alike concealed and not declared count as a pung).
"""

from __future__ import annotations

from dataclasses import dataclass

from rules import score_words as w
from rules.hand import Hand, MeldKind
from rules.profiles import UneTuile
from rules.scoring.common import Effect, Line, Score, Verdict, false_win, self_drawn, total
from rules.shapes import Decomposition, GroupKind, decompositions, winning_tiles

ORDER_POINTS: tuple[int, ...] = (100, 40, 20, 10)


@dataclass(frozen=True)
class SimplifiedContext:
    order: int = 1  # 1..4: the winner's rank among those who went Mah-Jong
    announced: bool = True  # announced "une Tuile" before going Mah-Jong
    une_tuile: UneTuile = "one_face"  # who must announce (the profile's announce.une_tuile)


def _count_lines(pungs: int, kongs: int, bonus: int) -> list[Line]:
    lines: list[Line] = []
    if bonus:
        lines.append(
            Line(
                "fleurs et saisons", Effect.ADD, 5 * bonus, w.TIMES_EACH.format(count=bonus, each=5)
            )
        )
    if pungs:
        lines.append(
            Line("brelans", Effect.ADD, 5 * pungs, w.TIMES_EACH.format(count=pungs, each=5))
        )
    if kongs:
        lines.append(
            Line("carrés", Effect.ADD, 10 * kongs, w.TIMES_EACH.format(count=kongs, each=10))
        )
    return lines


def hand_lines(d: Decomposition, hand: Hand, order: int) -> list[Line]:
    pungs = sum(1 for g in d.groups if g.kind is GroupKind.PUNG)
    kongs = sum(1 for g in d.groups if g.kind is GroupKind.KONG)
    lines = _count_lines(pungs, kongs, len(hand.bonus))
    rank = ORDER_POINTS[order - 1]
    lines.append(Line(w.MAH_JONG, Effect.ADD, rank, w.GOING_OUT.format(order=order)))
    faces = [f for g in d.groups for f in g.faces]
    suited = [f for f in faces if len(f) == 2]
    if not suited:
        lines.append(Line("que des honneurs", Effect.TIMES, 10))
        return lines
    sets = [g for g in d.groups if g.is_set]
    if all(g.is_pung_like for g in sets):
        lines.append(Line("brelans ou carrés", Effect.TIMES, 2))
    if len({f[1] for f in suited}) == 1:
        lines.append(Line("une seule famille", Effect.TIMES, 3))
    return lines


def single_wait(hand: Hand) -> bool:
    """Did the hand, before its winning tile, wait on one face only?"""
    if hand.win_tile is None:
        return False
    before = list(hand.concealed)
    before.remove(hand.win_tile)
    waiting = Hand(hand.rule_set, tuple(before), hand.melds, joker=hand.joker, bonus=hand.bonus)
    return len(winning_tiles(waiting)) == 1


def must_announce(hand: Hand, une_tuile: UneTuile) -> bool:
    """Did this winning hand have to announce « une Tuile » before its winning tile?
    ``one_face``: only when it waited on one face; ``ready``: always, since every winning
    hand was one tile short before its winning tile."""
    return une_tuile == "ready" or single_wait(hand)


def score_simplified(hand: Hand, ctx: SimplifiedContext | None = None) -> Score:
    """Score a declared Mah-Jong under the barème; a false win when it has no shape."""
    context = ctx or SimplifiedContext()
    if not 1 <= context.order <= 4:
        raise ValueError(f"order of going out must be 1..4, not {context.order}")
    if not hand.complete:
        return Score(hand.rule_set, Verdict.INCOMPLETE, points=None)
    readings = decompositions(hand)
    if not readings:
        return false_win(hand, w.NO_WIN_SIMPLIFIED)
    best: tuple[int, Decomposition, list[Line]] | None = None
    for d in readings:
        lines = hand_lines(d, hand, context.order)
        points = total(lines)
        if best is None or points > best[0]:
            best = (points, d, lines)
    assert best is not None
    points, d, lines = best
    if not context.announced and must_announce(hand, context.une_tuile):
        lines = [Line("une Tuile non annoncée", Effect.TIMES, 0, w.NOT_COUNTED)]
        points = 0
    return Score(hand.rule_set, Verdict.WIN, d, tuple(lines), points, self_drawn(hand))


def score_unfinished(hand: Hand) -> Score:
    """The points of a player who did not go Mah-Jong: flowers, pungs and kongs."""
    pungs = sum(1 for m in hand.melds if m.kind is MeldKind.PUNG)
    kongs = sum(1 for m in hand.melds if m.kind is MeldKind.KONG)
    for tile in set(hand.concealed):
        if hand.concealed.count(tile) >= 3:
            pungs += 1
    lines = tuple(_count_lines(pungs, kongs, len(hand.bonus)))
    return Score(hand.rule_set, Verdict.INCOMPLETE, None, lines, total(lines), False)
