"""WSOM: the validity of a declared win (regular or irregular hand), not its value.

The WSOM rules (seed 001) define the winning hand: a regular hand (four sets and the eyes) or
one of the two irregular hands (thirteen orphans, seven pairs); a hand that meets a scoring
pattern without one of those shapes is a false win. Scoring by fan (the points chapter of the
WSOM rules) is not in the seeds and is out of scope: the score carries the verdict and the
shape, and no points.
"""

from __future__ import annotations

from rules import score_words as w
from rules.hand import Hand
from rules.scoring.common import Score, Verdict, false_win, self_drawn
from rules.shapes import Shape, decompositions

SHAPE_NAMES = {
    Shape.SETS: "main régulière (4 ensembles et les yeux)",
    Shape.PAIRS: "Sept Paires",
    Shape.ORPHANS: "Treize Terminales",
}


def score_wsom(hand: Hand) -> Score:
    if not hand.complete:
        return Score(hand.rule_set, Verdict.INCOMPLETE, points=None)
    readings = decompositions(hand)
    if not readings:
        score = false_win(hand, w.NO_WIN_WSOM)
        return Score(hand.rule_set, score.verdict, None, (), None, score.self_drawn, score.notes)
    note = w.VALIDITY_ONLY
    return Score(hand.rule_set, Verdict.WIN, readings[0], (), None, self_drawn(hand), (note,))
