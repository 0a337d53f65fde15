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

from rules import score_words as sw
from rules.hand import Hand
from rules.shapes import Decomposition, Shape
from rules.words import RuleSet


class Verdict(StrEnum):
    WIN = sw.VERDICT_WIN
    FALSE_WIN = sw.VERDICT_FALSE_WIN
    INCOMPLETE = sw.VERDICT_INCOMPLETE


class Effect(StrEnum):
    POINTS = "points"
    ADD = "add"
    TIMES = "times"


#: The English words of the scoring lines the seeds name in French (Sichuan's annex II, the
#: simplified rules' barème). A line's ``name`` stays the seeds' own: it is the line's code,
#: in the JSON of `mjtable hand` and in the game record; what a person reads in English is
#: this (docs/rules.md, "Scoring").
LINE_WORDS: dict[str, str] = {
    # Sichuan
    "Faux Mah-Jong": "mixed chows and pungs",
    "Tout Chow": "all chows",
    "1 Chow et 3 Pungs": "one chow and three pungs",
    "Tout Pung": "all pungs",
    "Suite Serpentin": "serpentine",
    "7 Paires": "seven pairs",
    "Mah-Jong tiré du mur": "Mah-Jong from the wall",
    "Kong exposé": "exposed kongs",
    "Kong caché": "concealed kongs",
    "Points Kong de l'adversaire": "the robbed player's kong points",
    "Une tuile restante": "one tile left",
    "Gloire du Kong": "won on a kong's replacement",
    "Kong volé": "robbed kong",
    "Dieu gagne en second": "won on the leader's first discard",
    "Dieu gagne": "heavenly hand",
    # the simplified rules
    "fleurs et saisons": "flowers and seasons",
    "brelans": "pungs",
    "carrés": "kongs",
    "que des honneurs": "honours only",
    "brelans ou carrés": "pungs or kongs only",
    "une seule famille": "one suit",
    "une Tuile non annoncée": "waiting on one tile, not announced",
}


@dataclass(frozen=True)
class Line:
    name: str
    effect: Effect
    value: int
    note: str = ""

    @property
    def words(self) -> str:
        """The line's name in English."""
        return LINE_WORDS.get(self.name, self.name)


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
