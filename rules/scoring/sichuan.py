"""Sichuan scoring: annex II of the arrêté (seed 003), exactly, and how its lines combine.

Winning combinations (``points``):

==============================  ======  ============================================
Faux Mah-Jong                   0       2 or 3 chows, 1 or 2 pungs/kongs, a pair
Tout Chow                       1       4 chows and a pair
1 Chow et 3 Pungs               1       1 chow, 3 pungs/kongs, a pair
Tout Pung                       2       4 pungs/kongs and a pair
Suite Serpentin                 4       1-4-7, 2-5-8 or 3-6-9 in each suit
2, 5, 8 Only                    4       4 pungs/kongs and a pair, all of 2, 5 or 8
Tail 1-9                        4       every set holds a 1 or a 9, the pair is 1s or 9s
Full flush                      4       every tile of one suit
7 Paires                        4       seven pairs
==============================  ======  ============================================

Then ``add``: +1 for a tile drawn from the wall (self-drawn), +2 for each exposed kong, +3 for
each concealed kong; ``times``: x2 when won with one tile left in the concealed hand; and the
coefficients: kong glory x2, robbed kong x2, second-hand heaven x4 (nothing when a kong was
made before: the hand holds one, or the winning tile is a kong's replacement or a robbed
kong's), heavenly hand x6 (a hand complete before the first draw: never with a kong).

How they combine (Decisions, documented in docs/rules.md):

- a sets-and-a-pair hand takes exactly one of the four structural lines (Faux Mah-Jong, Tout
  Chow, 1 Chow et 3 Pungs, Tout Pung: they cover every mix of chows and pungs); seven pairs
  and the serpentine are structures of their own;
- the other combinations (2-5-8 Only, Tail 1-9, Full flush) add their points on top, except
  that 2, 5, 8 Only *replaces* Tout Pung, since it is defined as a Tout Pung;
- a heavenly hand counts as self-drawn (its tiles came from the wall): the hand carries
  :data:`rules.hand.DEALT_HAND_SOURCE` as its source, and the +1 comes from there;
- additions are summed with the combinations; the one-tile double and the coefficients
  multiply that sum, and several coefficients multiply together;
- "Kong volé" adds the robbed player's kong points (+2 exposed, +3 concealed, as given in the
  context) to the sum before the multipliers ("attribution de tous les points Kong");
- when a hand reads several ways, the reading worth most is taken.
"""

from __future__ import annotations

from dataclasses import dataclass

from rules import hand_words as hw
from rules import score_words as w
from rules.hand import Hand, HandError, MeldKind, WinSource
from rules.scoring.common import Effect, Line, Score, Verdict, false_win, self_drawn, total
from rules.shapes import Decomposition, Group, GroupKind, Shape, decompositions


@dataclass(frozen=True)
class SichuanContext:
    """What the tiles do not tell: the moment of the win and the robbed player's kongs."""

    heavenly: bool = False  # won on the dealt tiles, before the first draw (leader)
    second_heaven: bool = False  # won on the first discard or first draw, no kong before
    robbed_kong_points: int = 0  # the kong points of the player robbed ("Kong volé")

    def __post_init__(self) -> None:
        if self.heavenly and self.second_heaven:
            raise HandError(hw.TWO_HEAVENS)
        if self.robbed_kong_points < 0:
            raise HandError(hw.ROBBED_POINTS_NEGATIVE)


def _number(face: str) -> int:
    return int(face[0])


def _sets(d: Decomposition) -> list[Group]:
    return [g for g in d.groups if g.is_set]


def _pair(d: Decomposition) -> Group | None:
    return next((g for g in d.groups if g.kind is GroupKind.PAIR), None)


def combination_lines(d: Decomposition) -> list[Line]:
    lines: list[Line] = []
    faces = [f for g in d.groups for f in g.faces]
    if d.shape is Shape.SETS:
        sets = _sets(d)
        chows = sum(1 for g in sets if g.kind is GroupKind.CHOW)
        pair = _pair(d)
        all_258 = all(_number(f) in (2, 5, 8) for f in faces)
        if chows == 0 and all_258:
            lines.append(Line(w.ONLY_258, Effect.POINTS, 4, w.REPLACES_PUNGS))
        elif chows == 0:
            lines.append(Line("Tout Pung", Effect.POINTS, 2))
        elif chows == 1:
            lines.append(Line("1 Chow et 3 Pungs", Effect.POINTS, 1))
        elif chows == 4:
            lines.append(Line("Tout Chow", Effect.POINTS, 1))
        else:
            lines.append(Line("Faux Mah-Jong", Effect.POINTS, 0))
        ends = all(any(_number(f) in (1, 9) for f in g.faces) for g in sets)
        if ends and pair is not None and _number(pair.faces[0]) in (1, 9):
            lines.append(Line(w.TAIL_19, Effect.POINTS, 4))
    elif d.shape is Shape.PAIRS:
        lines.append(Line("7 Paires", Effect.POINTS, 4))
    elif d.shape is Shape.SERPENTINE:
        lines.append(Line("Suite Serpentin", Effect.POINTS, 4))
    if len({f[1] for f in faces}) == 1:
        lines.append(Line(w.FULL_FLUSH, Effect.POINTS, 4))
    return lines


def hand_lines(d: Decomposition, hand: Hand, ctx: SichuanContext) -> list[Line]:
    lines = combination_lines(d)
    if self_drawn(hand):
        lines.append(Line("Mah-Jong tiré du mur", Effect.ADD, 1, w.SELF_DRAWN))
    exposed = sum(1 for m in hand.melds if m.kind is MeldKind.KONG and not m.concealed)
    concealed = sum(1 for m in hand.melds if m.kind is MeldKind.KONG and m.concealed)
    if exposed:
        lines.append(
            Line("Kong exposé", Effect.ADD, 2 * exposed, w.TIMES_EACH.format(count=exposed, each=2))
        )
    if concealed:
        lines.append(
            Line(
                "Kong caché",
                Effect.ADD,
                3 * concealed,
                w.TIMES_EACH.format(count=concealed, each=3),
            )
        )
    if hand.win_from is WinSource.ROBBED and ctx.robbed_kong_points:
        lines.append(
            Line("Points Kong de l'adversaire", Effect.ADD, ctx.robbed_kong_points, w.ROBBED_KONG)
        )
    if len(hand.concealed) == 2:
        lines.append(Line("Une tuile restante", Effect.TIMES, 2, w.ONE_TILE_LEFT))
    if hand.win_from is WinSource.KONG:
        lines.append(Line("Gloire du Kong", Effect.TIMES, 2))
    if hand.win_from is WinSource.ROBBED:
        lines.append(Line("Kong volé", Effect.TIMES, 2))
    if ctx.second_heaven and not kong_before(hand):
        lines.append(Line("Dieu gagne en second", Effect.TIMES, 4))
    if ctx.heavenly:
        lines.append(Line("Dieu gagne", Effect.TIMES, 6))
    return lines


def kong_before(hand: Hand) -> bool:
    """A kong was made before this win: the hand holds one, the winning tile is its
    replacement, or it was robbed from an opponent's kong."""
    return hand.win_from in (WinSource.KONG, WinSource.ROBBED) or any(
        m.kind is MeldKind.KONG for m in hand.melds
    )


def score_sichuan(hand: Hand, ctx: SichuanContext | None = None) -> Score:
    """Score a complete Sichuan hand; a false win when it has no winning shape."""
    context = ctx or SichuanContext()
    if not hand.complete:
        return Score(hand.rule_set, Verdict.INCOMPLETE, points=None)
    readings = decompositions(hand)
    if not readings:
        return false_win(hand, w.NO_WIN_SICHUAN)
    best: tuple[int, Decomposition, list[Line]] | None = None
    for d in readings:
        lines = hand_lines(d, hand, context)
        points = total(lines)
        if best is None or points > best[0]:
            best = (points, d, lines)
    assert best is not None
    points, d, lines = best
    notes = (w.SECOND_HEAVEN_AFTER_KONG,) if context.second_heaven and kong_before(hand) else ()
    return Score(hand.rule_set, Verdict.WIN, d, tuple(lines), points, self_drawn(hand), notes)
