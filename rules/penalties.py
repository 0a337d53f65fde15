"""Penalties: what each rule set does to a player at fault (seed 000, and the floor's rule).

A wrong number of tiles in a hand (:func:`irregularity`), a false win, or a penalty the floor
gives during play: each rule set has one consequence (:data:`CONSEQUENCES`):

- Wenzhou (seed): out of the hand, which goes on with three; he can no longer win and pays
  the winner;
- Sichuan (seed): he puts his hand back to the right count at once and may not claim a
  discard until his next own draw;
- WSOM and simplified rules (**Decision**, the seeds are silent): dead hand, the usual floor
  rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rules import hand_words as w
from rules.words import RuleSet


@dataclass(frozen=True)
class Irregularity:
    """A hand holding the wrong number of tiles, and what the rule set does about it."""

    rule_set: RuleSet
    held: int
    expected: int
    consequence: str

    @property
    def message(self) -> str:
        how = w.TOO_MANY if self.held > self.expected else w.TOO_FEW
        return w.IRREGULAR.format(
            held=self.held,
            rules=self.rule_set.value,
            expected=self.expected,
            how=how,
            consequence=self.consequence,
        )


CONSEQUENCES: dict[RuleSet, str] = {
    RuleSet.WENZHOU: w.PENALTY_WENZHOU,
    RuleSet.SICHUAN: w.PENALTY_SICHUAN,
    RuleSet.WSOM: w.PENALTY_DEAD_HAND,
    RuleSet.SIMPLIFIED: w.PENALTY_DEAD_HAND,
}


def irregularity(rule_set: RuleSet, held: int, *, expected: Iterable[int]) -> Irregularity | None:
    """None when ``held`` is one of the ``expected`` counts, else the flagged irregularity."""
    allowed = sorted(set(expected))
    if held in allowed:
        return None
    nearest = min(allowed, key=lambda n: (abs(n - held), n))
    return Irregularity(rule_set, held, nearest, CONSEQUENCES[rule_set])
