"""Winning shapes on tile counts: fast verdicts, with and without jokers.

Tiles are counted in a 34-slot array in the order of :data:`FACES` (1m..9m, 1p..9p,
1s..9s, E S W N, C F B). The fast verdicts split it into four groups (three suits and the
honours) and look each group up in a memo keyed by the group's count tuple:

- joker-free: a group is *complete* (class 1: sets only), *complete with the pair*
  (class 2: sets and exactly one pair) or neither (class 0); a hand of sets and one pair is
  a win exactly when the product of the four classes is 2;
- with jokers: a group maps to ``(f0, delta, odd)``: the fewest jokers that complete it
  into sets only, how many more (possibly fewer) complete it into sets and one pair, and
  how many of its faces are held an odd number of times. A hand of sets and one pair is a
  win with ``J`` jokers exactly when ``sum(f0) + min(2, min(delta)) <= J`` (jokers left
  over always fill whole sets, or a pair and sets, because the tile count is fixed).

The memo tables fill themselves on first use of a count tuple; :func:`clear_caches` empties
them (benchmarks use it to time cold caches).

Jokers (Wenzhou, TABLE.md section 6): every tile of the joker face is a joker; white dragons
stand for the joker face only, so they are counted as natural tiles of that face; when the
joker face is the white dragon itself, white dragons are the jokers and nothing stands in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rules.tiles import HONOURS, SUITED, WHITE_DRAGON

FACES: tuple[str, ...] = SUITED + HONOURS
INDEX: dict[str, int] = {face: i for i, face in enumerate(FACES)}
WHITE = INDEX[WHITE_DRAGON]
#: Terminals and honours: the thirteen faces of thirteen orphans.
ORPHANS: tuple[int, ...] = (0, 8, 9, 17, 18, 26, *range(27, 34))

Counts = tuple[int, ...]


def counts_of(tiles: Iterable[str]) -> list[int]:
    """The 34-slot count array of some tiles (bonus tiles are not counted here)."""
    counts = [0] * 34
    for tile in tiles:
        counts[INDEX[tile]] += 1
    return counts


# --------------------------------------------------------------------------- memo tables


def _suit_class(v: Counts) -> int:
    """0, 1 (sets only) or 2 (sets and one pair) for one suit's nine counts, no jokers."""
    total = sum(v)
    rest = total % 3
    if rest == 1:
        return 0
    if rest == 0:
        return 1 if _sets_only(list(v)) else 0
    for i in range(9):
        if v[i] >= 2:
            w = list(v)
            w[i] -= 2
            if _sets_only(w):
                return 2
    return 0


def _sets_only(w: list[int]) -> bool:
    """Greedy: the chows starting at the lowest face are forced modulo three."""
    for i in range(9):
        c = w[i]
        if c < 0:
            return False
        r = c % 3
        if r:
            if i > 6:
                return False
            w[i + 1] -= r
            w[i + 2] -= r
    return True


def _honour_class(v: Counts) -> int:
    pairs = 0
    for c in v:
        if c == 2:
            pairs += 1
        elif c not in (0, 3):
            return 0
    return 1 if pairs == 0 else (2 if pairs == 1 else 0)


_DP: dict[Counts, tuple[int, int]] = {}


def _suit_dp(v: Counts) -> tuple[int, int]:
    """(fewest jokers for sets only, fewest jokers for sets and one pair) of one suit.

    The lowest face held must be in some group: a pung of it, a pair of it, or a chow
    holding it (starting at most two faces lower, the lower faces then being jokers).
    Natural tiles are used wherever the group needs their face (exchanging a natural tile
    with a joker elsewhere never costs more).
    """
    known = _DP.get(v)
    if known is not None:
        return known
    i = 0
    while i < 9 and v[i] == 0:
        i += 1
    if i == 9:
        _DP[v] = (0, 2)
        return (0, 2)
    w = list(v)
    c = w[i]
    take = 3 if c > 3 else c
    w[i] -= take
    sub = _suit_dp(tuple(w))
    w[i] += take
    best0 = 3 - take + sub[0]
    best1 = 3 - take + sub[1]
    for start in (i - 2, i - 1, i):
        if start < 0 or start > 6:
            continue
        cost = 0
        used = []
        for f in (start, start + 1, start + 2):
            if w[f] > 0:
                w[f] -= 1
                used.append(f)
            else:
                cost += 1
        sub = _suit_dp(tuple(w))
        for f in used:
            w[f] += 1
        if cost + sub[0] < best0:
            best0 = cost + sub[0]
        if cost + sub[1] < best1:
            best1 = cost + sub[1]
    take = 2 if c > 2 else c
    w[i] -= take
    sub = _suit_dp(tuple(w))
    if 2 - take + sub[0] < best1:
        best1 = 2 - take + sub[0]
    result = (best0, best1)
    _DP[v] = result
    return result


_HONOUR_F0 = (0, 2, 1, 0, 2)


def _honour_costs(v: Counts) -> tuple[int, int, int]:
    f0 = 0
    odd = 0
    pair_helps = False
    for c in v:
        f0 += _HONOUR_F0[c]
        odd += c & 1
        if c in (1, 2, 4):
            pair_helps = True
    return (f0, -1 if pair_helps else 2, odd)


class _SuitClassMemo(dict[Counts, int]):
    def __missing__(self, key: Counts) -> int:
        value = _suit_class(key)
        self[key] = value
        return value


class _HonourClassMemo(dict[Counts, int]):
    def __missing__(self, key: Counts) -> int:
        value = _honour_class(key)
        self[key] = value
        return value


class _SuitCostMemo(dict[Counts, tuple[int, int, int]]):
    def __missing__(self, key: Counts) -> tuple[int, int, int]:
        f0, f1 = _suit_dp(key)
        value = (f0, f1 - f0, sum(c & 1 for c in key))
        self[key] = value
        return value


class _HonourCostMemo(dict[Counts, tuple[int, int, int]]):
    def __missing__(self, key: Counts) -> tuple[int, int, int]:
        value = _honour_costs(key)
        self[key] = value
        return value


_SUIT_CLASS = _SuitClassMemo()
_HONOUR_CLASS = _HonourClassMemo()
_SUIT_COST = _SuitCostMemo()
_HONOUR_COST = _HonourCostMemo()


def clear_caches() -> None:
    """Empty every memo table (for cold-cache measurements)."""
    _SUIT_CLASS.clear()
    _HONOUR_CLASS.clear()
    _SUIT_COST.clear()
    _HONOUR_COST.clear()
    _DP.clear()


# --------------------------------------------------------------------------- fast verdicts


def is_regular(counts: Sequence[int]) -> bool:
    """Joker-free: do these tiles form sets and exactly one pair (any number of sets)?

    ``counts`` is a 34-slot array; a tuple is used as it is, anything else is copied.
    """
    c = counts if type(counts) is tuple else tuple(counts)
    h = _HONOUR_CLASS[c[27:34]]
    if not h:
        return False
    m = _SUIT_CLASS[c[0:9]]
    if not m:
        return False
    return h * m * _SUIT_CLASS[c[9:18]] * _SUIT_CLASS[c[18:27]] == 2


def regular_jokers_needed(counts: Sequence[int]) -> int:
    """Fewest jokers that turn these natural tiles into sets and one pair."""
    c = counts if type(counts) is tuple else tuple(counts)
    a = _SUIT_COST[c[0:9]]
    b = _SUIT_COST[c[9:18]]
    d = _SUIT_COST[c[18:27]]
    h = _HONOUR_COST[c[27:34]]
    delta = min(a[1], b[1], d[1], h[1], 2)
    return a[0] + b[0] + d[0] + h[0] + delta


def is_regular_with_jokers(counts: Sequence[int], jokers: int) -> bool:
    """Natural tiles ``counts`` plus ``jokers`` wild tiles form sets and one pair.

    The caller sees to the tile count (natural tiles plus jokers = 3 × sets + 2).
    """
    if jokers == 0:
        return is_regular(counts)
    return regular_jokers_needed(counts) <= jokers


def odd_faces(counts: Sequence[int]) -> int:
    """Faces held an odd number of times (single tiles left once pairs are taken)."""
    return counts.count(1) + counts.count(3)


def is_pairs(counts: Sequence[int], jokers: int, pairs: int) -> bool:
    """``pairs`` pairs (and one odd tile when the total is odd); four alike are two pairs.

    A joker pairs with any single tile, or with another joker.
    """
    total = sum(counts) + jokers
    if total not in (2 * pairs, 2 * pairs + 1):
        return False
    singles = odd_faces(counts)
    spare = total - 2 * pairs  # 0 for seven pairs, 1 for eight pairs and one tile
    return singles <= jokers + spare


def is_thirteen_orphans(counts: Sequence[int]) -> bool:
    """One of each terminal and honour, and one more of any of them (14 tiles)."""
    if sum(counts) != 14:
        return False
    return all(counts[i] >= 1 for i in ORPHANS) and sum(counts[i] for i in ORPHANS) == 14


def natural_counts(counts: Sequence[int], joker: int | None) -> tuple[Counts, int]:
    """Split held counts into natural tiles and jokers for a joker face index.

    Tiles of the joker face are jokers; white dragons count as natural tiles of the joker
    face, unless the joker face is the white dragon itself.
    """
    if joker is None:
        return (counts if type(counts) is tuple else tuple(counts)), 0
    c = list(counts)
    jokers = c[joker]
    if joker == WHITE:
        c[WHITE] = 0
    else:
        c[joker] = c[WHITE]
        c[WHITE] = 0
    return tuple(c), jokers


def wenzhou_is_win(
    counts: Sequence[int], joker: int | None, melds: int = 0, meld_jokers: int = 0
) -> bool:
    """Wenzhou verdict on the concealed tiles of a complete hand (17 with the melds).

    Three jokers (standing in the hand or laid in its melds) win any hand; otherwise five
    sets and a pair, or (no melds) eight pairs and one tile, jokers standing for any tile.
    """
    if joker is not None and counts[joker] + meld_jokers >= 3:
        return True
    c, jokers = natural_counts(counts, joker)
    if not melds and c.count(1) + c.count(3) <= jokers + 1:
        return True  # eight pairs and one tile (17 tiles: the odd one is the spare)
    if jokers == 0:
        return is_regular(c)
    a = _SUIT_COST[c[0:9]]
    b = _SUIT_COST[c[9:18]]
    d = _SUIT_COST[c[18:27]]
    h = _HONOUR_COST[c[27:34]]
    return a[0] + b[0] + d[0] + h[0] + min(a[1], b[1], d[1], h[1], 2) <= jokers
