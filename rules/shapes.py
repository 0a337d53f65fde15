"""Winning shapes of a hand: the verdict, every reading, and the waiting tiles.

The verdicts come from the tile counts (:mod:`rules.counts`), the readings from
:mod:`rules.readings`; here each rule set's shapes are put together for a :class:`Hand`:

- Wenzhou: five sets and a pair, eight pairs and one tile, or any hand holding three jokers;
- Sichuan: four sets and a pair, seven pairs, or the serpentine;
- WSOM: four sets and a pair, seven pairs, or thirteen orphans;
- simplified rules: four sets and a pair.
"""

from __future__ import annotations

from collections.abc import Sequence

from rules.counts import (
    FACES,
    INDEX,
    Counts,
    clear_caches,
    counts_of,
    is_pairs,
    is_regular,
    is_regular_with_jokers,
    is_thirteen_orphans,
    natural_counts,
    regular_jokers_needed,
    wenzhou_is_win,
)
from rules.hand import Hand
from rules.readings import (
    Decomposition,
    Group,
    GroupKind,
    Shape,
    group_from_meld,
    orphans_decomposition,
    pairs_decompositions,
    regular_decompositions,
    serpentine_decompositions,
    sorted_groups,
)
from rules.words import RuleSet

# --------------------------------------------------------------------------- hands


def hand_counts(hand: Hand) -> tuple[Counts, int]:
    """Natural counts and joker count of the tiles standing in a hand."""
    joker = INDEX[hand.joker] if hand.joker is not None else None
    return natural_counts(counts_of(hand.concealed), joker)


def is_win(hand: Hand) -> bool:
    """Does this complete hand have a winning shape of its rule set (fast verdict)?"""
    if not hand.complete:
        return False
    joker = INDEX[hand.joker] if hand.joker is not None else None
    return counts_win(
        hand.rule_set, counts_of(hand.concealed), joker, len(hand.melds), meld_jokers(hand)
    )


def counts_win(
    rule_set: RuleSet, counts: Sequence[int], joker: int | None, melds: int, meld_jokers: int = 0
) -> bool:
    """The verdict of :func:`is_win` on the concealed counts of a complete hand."""
    if rule_set is RuleSet.WENZHOU:
        return wenzhou_is_win(counts, joker, melds, meld_jokers)
    if is_regular(counts):
        return True
    if rule_set is RuleSet.SICHUAN and melds <= 1 and serpentine_decompositions(counts, 1 - melds):
        return True
    if melds or rule_set is RuleSet.SIMPLIFIED:
        return False
    if is_pairs(counts, 0, 7):
        return True
    return rule_set is RuleSet.WSOM and is_thirteen_orphans(counts)


def meld_jokers(hand: Hand) -> int:
    """Jokers laid in the hand's melds."""
    if hand.joker is None:
        return 0
    return sum(1 for m in hand.melds for t in m.tiles if t == hand.joker)


def decompositions(hand: Hand) -> list[Decomposition]:
    """Every winning reading of a complete hand under its rule set's shapes.

    Exposed melds come first in each reading's groups. An empty list means no winning shape.
    """
    if not hand.complete:
        return []
    spec = hand.spec
    melds = [group_from_meld(m, hand.joker) for m in hand.melds]
    natural, jokers = hand_counts(hand)
    sets = spec.sets - len(hand.melds)
    out: list[Decomposition] = []
    for groups in regular_decompositions(natural, jokers, sets):
        out.append(Decomposition(Shape.SETS, sorted_groups(groups) + tuple(melds)))
    if not hand.melds and hand.rule_set is not RuleSet.SIMPLIFIED:
        pairs = spec.hand_size // 2
        for groups in pairs_decompositions(natural, jokers, pairs):
            out.append(Decomposition(Shape.PAIRS, sorted_groups(groups)))
    if hand.rule_set is RuleSet.WSOM and not hand.melds:
        orphans = orphans_decomposition(natural)
        if orphans is not None:
            out.append(Decomposition(Shape.ORPHANS, tuple(orphans)))
    if hand.rule_set is RuleSet.SICHUAN and len(hand.melds) <= 1:
        for groups in serpentine_decompositions(natural, spec.sets - 3 - len(hand.melds)):
            out.append(Decomposition(Shape.SERPENTINE, sorted_groups(groups) + tuple(melds)))
    if hand.rule_set is RuleSet.WENZHOU and hand.joker is not None:
        held = sum(1 for t in hand.concealed if t == hand.joker)
        if held + meld_jokers(hand) >= 3:
            rest = [t for t in hand.concealed if t != hand.joker]
            singles = [Group(GroupKind.SINGLE, (t,), (False,)) for t in rest]
            three = Group(GroupKind.JOKERS, (hand.joker,) * held, (True,) * held)
            out.append(Decomposition(Shape.THREE_JOKERS, (three, *sorted_groups(singles), *melds)))
    return out


def winning_tiles(hand: Hand) -> list[str]:
    """Every tile that completes a hand one tile short (its waits).

    A face already held four times (in hand and melds) is left out: no fifth copy exists.
    In Wenzhou the joker face is listed when a joker completes the hand, and the white
    dragon when it completes the hand standing for the joker face.
    """
    spec = hand.spec
    if hand.size != spec.waiting_size:
        return []
    held = counts_of(t for t in hand.physical_tiles() if t in INDEX)
    counts = counts_of(hand.concealed)
    joker = INDEX[hand.joker] if hand.joker is not None else None
    melds = len(hand.melds)
    in_melds = meld_jokers(hand)
    last = 27 if spec.tiles == 108 else 34
    result: list[str] = []
    for i in range(last):
        if held[i] >= 4:
            continue
        counts[i] += 1
        if counts_win(hand.rule_set, counts, joker, melds, in_melds):
            result.append(FACES[i])
        counts[i] -= 1
    return result


__all__ = [
    "FACES",
    "INDEX",
    "Decomposition",
    "Group",
    "GroupKind",
    "Shape",
    "clear_caches",
    "counts_of",
    "decompositions",
    "hand_counts",
    "is_pairs",
    "is_regular",
    "is_regular_with_jokers",
    "is_thirteen_orphans",
    "is_win",
    "natural_counts",
    "regular_decompositions",
    "regular_jokers_needed",
    "wenzhou_is_win",
    "winning_tiles",
]
