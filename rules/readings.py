"""Readings of winning tiles: every decomposition into sets, pairs and the special shapes.

Slower than the verdicts of :mod:`rules.counts`, and meant for scoring a hand known to be
complete: each reading is a :class:`Decomposition` of :class:`Group` s (chows, pungs, kongs,
pairs, knitted triples, single tiles, jokers), a joker shown as the face it stands for.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from rules import score_words as sw
from rules.counts import FACES, ORPHANS, is_pairs, is_thirteen_orphans
from rules.hand import Meld, MeldKind
from rules.tiles import sort_key


class Shape(StrEnum):
    SETS = sw.SHAPE_SETS
    PAIRS = sw.SHAPE_PAIRS
    ORPHANS = sw.SHAPE_ORPHANS
    SERPENTINE = sw.SHAPE_SERPENTINE
    THREE_JOKERS = sw.SHAPE_THREE_JOKERS


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


def sorted_groups(groups: Iterable[Group]) -> tuple[Group, ...]:
    def key(g: Group) -> tuple[int, int, str]:
        first = next((f for f in g.faces if f != "*"), None)
        return (1 if g.exposed else 0, sort_key(first) if first else 99, g.kind.value)

    return tuple(sorted(groups, key=key))
