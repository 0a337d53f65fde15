"""Wenzhou scoring: a documented default table, replaceable by configuration.

The arrêté leaves the table of hands and the payment coefficients to annex I, which is not
among the seeds, and lets the establishment set and change them. The project therefore ships
a default :class:`WenzhouTable` (below) that a casino replaces with a TOML file
(:func:`load_table`). What the seed does say is implemented as fixed rules, not settings:

- a hand won with a single tile left in hand, by drawing, doubles (x2);
- if that drawn tile is a joker, the hand counts as a hand without jokers, unless another
  joker is already in the hand;
- the discarder alone pays a discard win, everyone pays a self-drawn win (rules.settle).

Default table (points are what each payer pays, in units of the table's point):

- hand shapes (``points``): five sets and a pair 1, eight pairs and one tile 2, three jokers 4;
- patterns (``times``): all pungs x2 (five sets and a pair only), one suit with honours x2,
  one suit alone x4, all honours x8 (the strongest of the last three only: all honours
  also excludes all pungs, which it implies);
- a hand without jokers x2;
- the leader's streak: a winning leader who has already won ``n`` hands in a row multiplies
  by ``leader_streak[n]`` (default 1, 2, 3, 4: "sa possibilité de gains se multiplie").

A set made of jokers only fits every pattern (the jokers stand for whatever scores best).
When a hand reads several ways, the reading worth most is taken.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rules import hand_words as hw
from rules import score_words as w
from rules.hand import Hand, HandError
from rules.scoring.common import Effect, Line, Score, Verdict, false_win, self_drawn, total
from rules.seating import LEADER_WINS_END
from rules.shapes import Decomposition, GroupKind, Shape, decompositions


class WenzhouTable(BaseModel):
    """Hand values and coefficients for Wenzhou (annex I as the establishment sets it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "default"
    five_sets: int = Field(default=1, ge=0, description="points of five sets and a pair")
    eight_pairs: int = Field(default=2, ge=0, description="points of eight pairs and one tile")
    three_jokers: int = Field(default=4, ge=0, description="points of a hand won on three jokers")
    all_pungs: int = Field(default=2, ge=1, description="x: every set a pung or kong")
    half_flush: int = Field(default=2, ge=1, description="x: one suit and honours")
    full_flush: int = Field(default=4, ge=1, description="x: one suit alone")
    all_honours: int = Field(default=8, ge=1, description="x: honours alone")
    no_jokers: int = Field(default=2, ge=1, description="x: a hand without jokers")
    leader_streak: tuple[int, ...] = Field(
        default=(1, 2, 3, 4),
        min_length=1,
        description="x for a winning leader by the wins he already made in a row (0, 1, 2...)",
    )


DEFAULT_TABLE = WenzhouTable()


def load_table(path: str | Path) -> WenzhouTable:
    """Read a table from TOML (top-level keys as in :class:`WenzhouTable`; missing keys keep
    their default). Raises :class:`HandError` naming the file and the faulty field."""
    where = Path(path)
    try:
        data: dict[str, Any] = tomllib.loads(where.read_text(encoding="utf-8"))
    except OSError as exc:
        raise HandError(hw.TABLE_UNREADABLE.format(path=where, error=exc.strerror)) from None
    except tomllib.TOMLDecodeError as exc:
        raise HandError(hw.TABLE_NOT_TOML.format(path=where, error=exc)) from None
    try:
        return WenzhouTable.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise HandError(hw.TABLE_FIELD.format(path=where, field=loc, problem=err["msg"])) from None


@dataclass(frozen=True)
class WenzhouContext:
    """What the tiles do not tell: is the winner the leader, and his wins in a row so far."""

    leader: bool = False
    streak: int = 0  # hands the winning leader has already won in a row

    def __post_init__(self) -> None:
        if self.streak < 0:
            raise HandError(hw.STREAK_NEGATIVE)
        if self.streak >= LEADER_WINS_END:
            raise HandError(hw.STREAK_ENDED.format(streak=self.streak, most=LEADER_WINS_END - 1))


def single_tile_self_drawn(hand: Hand) -> bool:
    """Won by drawing, with one tile left standing before the draw."""
    return self_drawn(hand) and len(hand.concealed) == 2


def counts_without_jokers(hand: Hand) -> bool:
    """A hand without jokers, or the seed's exception: the single-tile self-drawn winning
    tile is a joker and no other joker is in the hand."""
    held = hand.jokers_in_hand()
    if held == 0:
        return True
    return single_tile_self_drawn(hand) and hand.win_tile == hand.joker and held == 1


def _pattern_lines(d: Decomposition, table: WenzhouTable) -> list[Line]:
    lines: list[Line] = []
    if d.shape is Shape.THREE_JOKERS:
        return lines
    faces = [f for g in d.groups for f in g.faces if f != "*"]
    suits = {f[1] for f in faces if len(f) == 2}
    honours = any(len(f) == 1 for f in faces)
    if faces and not suits:
        lines.append(Line(w.ALL_HONOURS, Effect.TIMES, table.all_honours))
        return lines
    if d.shape is Shape.SETS and all(
        g.is_pung_like or g.wild for g in d.groups if g.kind is not GroupKind.PAIR
    ):
        lines.append(Line(w.ALL_PUNGS, Effect.TIMES, table.all_pungs))
    if len(suits) == 1:
        if honours:
            lines.append(Line(w.HALF_FLUSH, Effect.TIMES, table.half_flush))
        else:
            lines.append(Line(w.ONE_SUIT, Effect.TIMES, table.full_flush))
    return lines


def hand_lines(
    d: Decomposition, hand: Hand, ctx: WenzhouContext, table: WenzhouTable
) -> list[Line]:
    shape_points = {
        Shape.SETS: (w.FIVE_SETS, table.five_sets),
        Shape.PAIRS: (w.EIGHT_PAIRS, table.eight_pairs),
        Shape.THREE_JOKERS: (w.THREE_JOKERS, table.three_jokers),
    }
    name, value = shape_points[d.shape]
    lines = [Line(name, Effect.POINTS, value)]
    lines.extend(_pattern_lines(d, table))
    if counts_without_jokers(hand):
        note = "" if hand.jokers_in_hand() == 0 else w.ONLY_JOKER
        lines.append(Line(w.NO_JOKERS, Effect.TIMES, table.no_jokers, note))
    if single_tile_self_drawn(hand):
        lines.append(Line(w.SINGLE_SELF_DRAWN, Effect.TIMES, 2))
    if ctx.leader:
        steps = table.leader_streak
        factor = steps[min(ctx.streak, len(steps) - 1)]
        if factor != 1:
            lines.append(
                Line(
                    w.LEADER_STREAK, Effect.TIMES, factor, w.WINS_IN_A_ROW.format(count=ctx.streak)
                )
            )
    return lines


def score_wenzhou(
    hand: Hand, ctx: WenzhouContext | None = None, table: WenzhouTable = DEFAULT_TABLE
) -> Score:
    """Score a complete Wenzhou hand; a false win when it has no winning shape."""
    context = ctx or WenzhouContext()
    if not hand.complete:
        return Score(hand.rule_set, Verdict.INCOMPLETE, points=None)
    readings = decompositions(hand)
    if not readings:
        return false_win(hand, w.NO_WIN_WENZHOU)
    best: tuple[int, Decomposition, list[Line]] | None = None
    for d in readings:
        lines = hand_lines(d, hand, context, table)
        points = total(lines)
        if best is None or points > best[0]:
            best = (points, d, lines)
    assert best is not None
    points, d, lines = best
    notes = (w.TABLE.format(name=table.name),)
    return Score(hand.rule_set, Verdict.WIN, d, tuple(lines), points, self_drawn(hand), notes)
