"""Winning shapes: fast verdicts on tile counts, every decomposition, and waiting tiles.

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
from dataclasses import dataclass
from enum import StrEnum

from rules.hand import Hand, Meld, MeldKind, Variant, WinSource
from rules.tiles import HONOURS, SUITED, WHITE_DRAGON, sort_key

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


# --------------------------------------------------------------------------- decompositions


class Shape(StrEnum):
    SETS = "sets and a pair"
    PAIRS = "pairs"
    ORPHANS = "thirteen orphans"
    SERPENTINE = "serpentine"
    THREE_JOKERS = "three jokers"


class GroupKind(StrEnum):
    CHOW = "chow"
    PUNG = "pung"
    KONG = "kong"
    PAIR = "pair"
    KNITTED = "knitted"  # 1-4-7, 2-5-8 or 3-6-9 of one suit (serpentine)
    SINGLE = "single"  # the odd tile of eight pairs and one tile; thirteen orphans' tiles
    JOKERS = "jokers"  # the three jokers of a three-jokers hand


@dataclass(frozen=True, order=True)
class Group:
    """One group of a decomposition.

    ``faces`` are the faces the group stands for (``*`` for a joker standing for any face
    in a group made of jokers only); ``jokers`` marks, face by face, a joker standing in.
    """

    kind: GroupKind
    faces: tuple[str, ...]
    jokers: tuple[bool, ...]
    exposed: bool = False
    concealed_kong: bool = False

    @property
    def wild(self) -> bool:
        return "*" in self.faces

    @property
    def is_set(self) -> bool:
        return self.kind in (GroupKind.CHOW, GroupKind.PUNG, GroupKind.KONG)

    @property
    def is_pung_like(self) -> bool:
        return self.kind in (GroupKind.PUNG, GroupKind.KONG)

    @property
    def joker_count(self) -> int:
        return sum(self.jokers)

    def text(self) -> str:
        body = " ".join(
            f"{f}*" if j and f != "*" else f for f, j in zip(self.faces, self.jokers, strict=True)
        )
        if self.concealed_kong:
            return f"[{body}]"
        return f"({body})" if self.exposed else body


@dataclass(frozen=True)
class Decomposition:
    shape: Shape
    groups: tuple[Group, ...]

    def text(self) -> str:
        return " + ".join(g.text() for g in self.groups)

    @property
    def jokers(self) -> int:
        return sum(g.joker_count for g in self.groups)


def group_from_meld(meld: Meld, joker: str | None) -> Group:
    kind = {
        MeldKind.CHOW: GroupKind.CHOW,
        MeldKind.PUNG: GroupKind.PUNG,
        MeldKind.KONG: GroupKind.KONG,
    }[meld.kind]
    flags = tuple(joker is not None and tile == joker for tile in meld.tiles)
    return Group(kind, meld.faces, flags, exposed=True, concealed_kong=meld.concealed)


_Raw = tuple[str, tuple[int, ...], tuple[bool, ...]]


def _raw_group(raw: _Raw) -> Group:
    kind, faces, flags = raw
    names = tuple("*" if f < 0 else FACES[f] for f in faces)
    return Group(GroupKind(kind), names, flags)


def regular_decompositions(counts: Sequence[int], jokers: int, sets: int) -> list[list[Group]]:
    """Every way to read natural ``counts`` plus ``jokers`` as ``sets`` sets and one pair.

    Distinct readings are distinct multisets of groups (which physical joker plays which
    role is not told apart). Slower than the verdicts; meant for scoring a hand known to
    be complete.
    """
    c = list(counts)
    if sum(c) + jokers != 3 * sets + 2:
        return []
    found: set[tuple[_Raw, ...]] = set()
    _enumerate(c, jokers, sets, 1, [], found)
    return [[_raw_group(raw) for raw in combo] for combo in sorted(found)]


def _enumerate(
    c: list[int], jokers: int, sets: int, pair: int, acc: list[_Raw], out: set[tuple[_Raw, ...]]
) -> None:
    i = 0
    while i < 34 and c[i] == 0:
        i += 1
    if i == 34:
        if jokers == 3 * sets + 2 * pair:
            tail: list[_Raw] = [("pung", (-1, -1, -1), (True, True, True))] * sets
            if pair:
                tail.append(("pair", (-1, -1), (True, True)))
            out.add(tuple(sorted(acc + tail)))
        return
    if sets == 0 and pair == 0:
        return
    options: list[tuple[str, tuple[int, ...]]] = []
    if sets:
        options.append(("pung", (i, i, i)))
        if i < 27:
            base = i - i % 9
            for start in (i - 2, i - 1, i):
                if start >= base and start + 2 < base + 9:
                    options.append(("chow", (start, start + 1, start + 2)))
    if pair:
        options.append(("pair", (i, i)))
    for kind, faces in options:
        flags: list[bool] = []
        cost = 0
        for f in faces:
            if c[f] > 0:
                c[f] -= 1
                flags.append(False)
            else:
                flags.append(True)
                cost += 1
        if cost <= jokers:
            raw: _Raw = (kind, faces, tuple(flags))
            acc.append(raw)
            if kind == "pair":
                _enumerate(c, jokers - cost, sets, 0, acc, out)
            else:
                _enumerate(c, jokers - cost, sets - 1, pair, acc, out)
            acc.pop()
        for f, joker in zip(faces, flags, strict=True):
            if not joker:
                c[f] += 1


def pairs_decompositions(counts: Sequence[int], jokers: int, pairs: int) -> list[list[Group]]:
    """Every reading as ``pairs`` pairs (plus one odd tile when the total is odd)."""
    if not is_pairs(counts, jokers, pairs):
        return []
    base: list[Group] = []
    singles: list[int] = []
    for i, n in enumerate(counts):
        for _ in range(n // 2):
            base.append(Group(GroupKind.PAIR, (FACES[i], FACES[i]), (False, False)))
        if n & 1:
            singles.append(i)
    total = sum(counts) + jokers
    spare = total - 2 * pairs
    results: list[list[Group]] = []
    # which single tile (natural or a joker) stays alone, when one must
    leftovers: list[int | None] = [None]
    if spare:
        leftovers = list(singles) if len(singles) == jokers + 1 else [None]
        if len(singles) < jokers + 1:
            leftovers = [-1]  # a joker stays alone
    for left in leftovers:
        groups = list(base)
        j = jokers
        for i in singles:
            if i == left:
                groups.append(Group(GroupKind.SINGLE, (FACES[i],), (False,)))
                continue
            groups.append(Group(GroupKind.PAIR, (FACES[i], FACES[i]), (False, True)))
            j -= 1
        if left == -1:
            groups.append(Group(GroupKind.SINGLE, ("*",), (True,)))
            j -= 1
        groups.extend(Group(GroupKind.PAIR, ("*", "*"), (True, True)) for _ in range(j // 2))
        results.append(groups)
    return results


def orphans_decomposition(counts: Sequence[int]) -> list[Group] | None:
    if not is_thirteen_orphans(counts):
        return None
    groups: list[Group] = []
    for i in ORPHANS:
        if counts[i] == 2:
            groups.append(Group(GroupKind.PAIR, (FACES[i], FACES[i]), (False, False)))
        else:
            groups.append(Group(GroupKind.SINGLE, (FACES[i],), (False,)))
    return groups


def serpentine_decompositions(counts: Sequence[int], sets: int) -> list[list[Group]]:
    """Sichuan serpentine: in each suit 1-4-7, 2-5-8 or 3-6-9, then ``sets`` sets and a pair.

    ``sets`` is what is left for the concealed tiles once the knitted triples (three
    elements) and the exposed melds are counted.
    """
    if sets < 0:
        return []
    results: list[list[Group]] = []
    for a in range(3):
        for b in range(3):
            for d in range(3):
                c = list(counts)
                knitted: list[Group] = []
                ok = True
                for suit, offset in ((0, a), (1, b), (2, d)):
                    faces = [suit * 9 + offset + 3 * k for k in range(3)]
                    if any(c[f] == 0 for f in faces):
                        ok = False
                        break
                    for f in faces:
                        c[f] -= 1
                    names = tuple(FACES[f] for f in faces)
                    knitted.append(Group(GroupKind.KNITTED, names, (False, False, False)))
                if not ok:
                    continue
                for rest in regular_decompositions(c, 0, sets):
                    results.append(knitted + rest)
    return results


def _sorted_groups(groups: Iterable[Group]) -> tuple[Group, ...]:
    def key(g: Group) -> tuple[int, int, str]:
        first = next((f for f in g.faces if f != "*"), None)
        return (1 if g.exposed else 0, sort_key(first) if first else 99, g.kind.value)

    return tuple(sorted(groups, key=key))


# --------------------------------------------------------------------------- hands


def hand_counts(hand: Hand) -> tuple[Counts, int]:
    """Natural counts and joker count of the tiles standing in a hand."""
    joker = INDEX[hand.joker] if hand.joker is not None else None
    return natural_counts(counts_of(hand.concealed), joker)


def is_win(hand: Hand) -> bool:
    """Does this complete hand have a winning shape of its variant (fast verdict)?"""
    if not hand.complete:
        return False
    joker = INDEX[hand.joker] if hand.joker is not None else None
    return counts_win(
        hand.variant, counts_of(hand.concealed), joker, len(hand.melds), meld_jokers(hand)
    )


def counts_win(
    variant: Variant, counts: Sequence[int], joker: int | None, melds: int, meld_jokers: int = 0
) -> bool:
    """The verdict of :func:`is_win` on the concealed counts of a complete hand."""
    if variant is Variant.WENZHOU:
        return wenzhou_is_win(counts, joker, melds, meld_jokers)
    if is_regular(counts):
        return True
    if variant is Variant.SICHUAN and melds <= 1 and serpentine_decompositions(counts, 1 - melds):
        return True
    if melds or variant is Variant.SIMPLIFIED:
        return False
    if is_pairs(counts, 0, 7):
        return True
    return variant is Variant.WSOM and is_thirteen_orphans(counts)


def meld_jokers(hand: Hand) -> int:
    """Jokers laid in the hand's melds."""
    if hand.joker is None:
        return 0
    return sum(1 for m in hand.melds for t in m.tiles if t == hand.joker)


def decompositions(hand: Hand) -> list[Decomposition]:
    """Every winning reading of a complete hand under its variant's shapes.

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
        out.append(Decomposition(Shape.SETS, _sorted_groups(groups) + tuple(melds)))
    if not hand.melds and hand.variant is not Variant.SIMPLIFIED:
        pairs = spec.hand_size // 2
        for groups in pairs_decompositions(natural, jokers, pairs):
            out.append(Decomposition(Shape.PAIRS, _sorted_groups(groups)))
    if hand.variant is Variant.WSOM and not hand.melds:
        orphans = orphans_decomposition(natural)
        if orphans is not None:
            out.append(Decomposition(Shape.ORPHANS, tuple(orphans)))
    if hand.variant is Variant.SICHUAN and len(hand.melds) <= 1:
        for groups in serpentine_decompositions(natural, spec.sets - 3 - len(hand.melds)):
            out.append(Decomposition(Shape.SERPENTINE, _sorted_groups(groups) + tuple(melds)))
    if hand.variant is Variant.WENZHOU and hand.joker is not None:
        held = sum(1 for t in hand.concealed if t == hand.joker)
        if held + meld_jokers(hand) >= 3:
            rest = [t for t in hand.concealed if t != hand.joker]
            singles = [Group(GroupKind.SINGLE, (t,), (False,)) for t in rest]
            three = Group(GroupKind.JOKERS, (hand.joker,) * held, (True,) * held)
            out.append(Decomposition(Shape.THREE_JOKERS, (three, *_sorted_groups(singles), *melds)))
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
    last = 27 if spec.tile_set == 108 else 34
    result: list[str] = []
    for i in range(last):
        if held[i] >= 4:
            continue
        counts[i] += 1
        if counts_win(hand.variant, counts, joker, melds, in_melds):
            result.append(FACES[i])
        counts[i] -= 1
    return result


def is_self_drawn(hand: Hand) -> bool:
    return hand.win_from is not None and hand.win_from.self_drawn


__all__ = [
    "FACES",
    "INDEX",
    "Decomposition",
    "Group",
    "GroupKind",
    "Shape",
    "WinSource",
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
