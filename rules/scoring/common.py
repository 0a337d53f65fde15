"""What every rule set's scoring returns: a verdict, the reading chosen, and its lines.

A score is a list of lines, each a named pattern with its effect:

- ``points``: a winning combination's points (summed);
- ``add``: points added to the combinations (self-drawn, kongs, flowers...);
- ``times``: a multiplier applied to the sum.

The hand's points are ``(sum of points and adds) x (product of times)``, so the lines alone
explain every figure. For Sichuan and Wenzhou those points are what each payer pays the
winner, in units of the table's point; for the simplified rules they are the player's score.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from math import prod

from rules.hand import Hand
from rules.shapes import Decomposition, Shape
from rules.words import RuleSet


class Verdict(StrEnum):
    WIN = "win"
    FALSE_WIN = "false win"  # declared complete, but no winning shape
    INCOMPLETE = "incomplete"  # one tile short: not a declaration, only waits


class Effect(StrEnum):
    POINTS = "points"
    ADD = "add"
    TIMES = "times"


@dataclass(frozen=True)
class Line:
    name: str
    effect: Effect
    value: int
    note: str = ""

    def text(self) -> str:
        sign = {Effect.POINTS: "", Effect.ADD: "+", Effect.TIMES: "x"}[self.effect]
        tail = f"  ({self.note})" if self.note else ""
        return f"{self.name}: {sign}{self.value}{tail}"


def total(lines: tuple[Line, ...] | list[Line]) -> int:
    base = sum(line.value for line in lines if line.effect is not Effect.TIMES)
    return base * prod(line.value for line in lines if line.effect is Effect.TIMES)


@dataclass(frozen=True)
class Score:
    """The scoring of one declared hand.

    ``points`` is None where the rule set's scoring is out of scope (WSOM: validity only).
    """

    rule_set: RuleSet
    verdict: Verdict
    decomposition: Decomposition | None = None
    lines: tuple[Line, ...] = ()
    points: int | None = 0
    self_drawn: bool = False
    notes: tuple[str, ...] = field(default=())

    @property
    def shape(self) -> Shape | None:
        return self.decomposition.shape if self.decomposition else None

    @property
    def won(self) -> bool:
        return self.verdict is Verdict.WIN


def self_drawn(hand: Hand) -> bool:
    return hand.win_from is not None and hand.win_from.self_drawn


def false_win(hand: Hand, note: str = "") -> Score:
    notes = (note,) if note else ()
    return Score(hand.rule_set, Verdict.FALSE_WIN, None, (), 0, self_drawn(hand), notes)
