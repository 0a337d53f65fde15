"""Scoring per rule set, behind one entry point: :func:`score`.

- Sichuan: annex II exactly (:mod:`rules.scoring.sichuan`);
- Wenzhou: a configurable table with a documented default (:mod:`rules.scoring.wenzhou`);
- simplified rules: the barème (:mod:`rules.scoring.simplified`);
- WSOM: validity of the win only (:mod:`rules.scoring.wsom`).
"""

from __future__ import annotations

from rules.hand import Hand
from rules.scoring.common import Effect, Line, Score, Verdict, total
from rules.scoring.sichuan import SichuanContext, score_sichuan
from rules.scoring.simplified import SimplifiedContext, score_simplified, score_unfinished
from rules.scoring.wenzhou import (
    DEFAULT_TABLE,
    WenzhouContext,
    WenzhouTable,
    load_table,
    score_wenzhou,
)
from rules.scoring.wsom import score_wsom
from rules.words import RuleSet

Context = SichuanContext | WenzhouContext | SimplifiedContext


def score(hand: Hand, ctx: Context | None = None, *, table: WenzhouTable = DEFAULT_TABLE) -> Score:
    """Score a declared hand under its rule set's rules (see each module)."""
    if hand.rule_set is RuleSet.SICHUAN:
        return score_sichuan(hand, ctx if isinstance(ctx, SichuanContext) else None)
    if hand.rule_set is RuleSet.WENZHOU:
        return score_wenzhou(hand, ctx if isinstance(ctx, WenzhouContext) else None, table)
    if hand.rule_set is RuleSet.SIMPLIFIED:
        return score_simplified(hand, ctx if isinstance(ctx, SimplifiedContext) else None)
    return score_wsom(hand)


__all__ = [
    "DEFAULT_TABLE",
    "Context",
    "Effect",
    "Line",
    "Score",
    "SichuanContext",
    "SimplifiedContext",
    "Verdict",
    "WenzhouContext",
    "WenzhouTable",
    "load_table",
    "score",
    "score_sichuan",
    "score_simplified",
    "score_unfinished",
    "score_wenzhou",
    "score_wsom",
    "total",
]
