"""A slow, plainly-correct reference for winning shapes, to check rules.shapes against.

Nothing here is clever: no memo tables, no cost arithmetic. Jokers are handled two ways,
each following the rule's words directly:

- substitution: a joker stands for any tile, so try every face for every joker and ask the
  joker-free question (used for up to two jokers, where it stays affordable);
- search: the lowest natural tile left must lie in some group (a pung, a pair, or a chow
  holding it in any of its three places); try every such group, every slot of it filled by
  a natural tile when one is left or by a joker, and recurse.

White dragons (Wenzhou) are rewritten to the joker face before either, as TABLE.md section 6
says they stand for it and nothing else; tiles of the joker face become jokers.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations_with_replacement, product

FACES: tuple[str, ...] = tuple(f"{n}{s}" for s in "mps" for n in range(1, 10)) + tuple("ESWNCFB")
INDEX = {f: i for i, f in enumerate(FACES)}


def _suit_run(i: int) -> list[tuple[int, int, int]]:
    """Chows (as three faces) that hold face i."""
    if i >= 27:
        return []
    base = i - i % 9
    runs = []
    for start in (i - 2, i - 1, i):
        if base <= start and start + 2 <= base + 8:
            runs.append((start, start + 1, start + 2))
    return runs


def plain_regular(counts: Sequence[int], sets: int, pair: int = 1) -> bool:
    """Joker-free: ``sets`` sets and ``pair`` pairs, by trying every group at the lowest tile."""
    c = list(counts)
    i = next((k for k, n in enumerate(c) if n), None)
    if i is None:
        return sets == 0 and pair == 0
    if sets and c[i] >= 3:
        c[i] -= 3
        if plain_regular(c, sets - 1, pair):
            return True
        c[i] += 3
    if pair and c[i] >= 2:
        c[i] -= 2
        if plain_regular(c, sets, 0):
            return True
        c[i] += 2
    if sets and i < 27 and i % 9 <= 6 and c[i + 1] and c[i + 2]:
        c[i] -= 1
        c[i + 1] -= 1
        c[i + 2] -= 1
        if plain_regular(c, sets - 1, pair):
            return True
    return False


def substitution_regular(counts: Sequence[int], jokers: int) -> bool:
    """Every face for every joker, then the joker-free question."""
    total = sum(counts) + jokers
    if total % 3 != 2:
        return False
    sets = (total - 2) // 3
    for faces in combinations_with_replacement(range(34), jokers):
        c = list(counts)
        for f in faces:
            c[f] += 1
        if plain_regular(c, sets):
            return True
    return False


def search_regular(counts: Sequence[int], jokers: int) -> bool:
    """Group search with jokers filling any slot (natural or not)."""
    total = sum(counts) + jokers
    if total % 3 != 2:
        return False
    return _search(list(counts), jokers, (total - 2) // 3, 1)


def _search(c: list[int], jokers: int, sets: int, pair: int) -> bool:
    i = next((k for k, n in enumerate(c) if n), None)
    if i is None:
        return jokers == 3 * sets + 2 * pair
    groups: list[tuple[int, ...]] = []
    if sets:
        groups.append((i, i, i))
        groups.extend(_suit_run(i))
    if pair:
        groups.append((i, i))
    for group in groups:
        for natural in product((True, False), repeat=len(group)):
            # the lowest tile itself must be placed in this group as a natural tile
            if not any(nat and f == i for nat, f in zip(natural, group, strict=True)):
                continue
            need = sum(1 for nat in natural if not nat)
            if need > jokers:
                continue
            d = list(c)
            ok = True
            for nat, f in zip(natural, group, strict=True):
                if nat:
                    if d[f] == 0:
                        ok = False
                        break
                    d[f] -= 1
            if not ok:
                continue
            if len(group) == 2:
                if _search(d, jokers - need, sets, 0):
                    return True
            elif _search(d, jokers - need, sets - 1, pair):
                return True
    return False


def plain_pairs(counts: Sequence[int], jokers: int, pairs: int) -> bool:
    """``pairs`` pairs (+ one odd tile on an odd total), matching tiles one by one."""
    total = sum(counts) + jokers
    if total not in (2 * pairs, 2 * pairs + 1):
        return False
    spare = total - 2 * pairs
    return _pairs(list(counts), jokers, spare)


def _pairs(c: list[int], jokers: int, spare: int) -> bool:
    i = next((k for k, n in enumerate(c) if n), None)
    if i is None:
        # jokers left: pairs of jokers, or one joker alone when a spare tile is allowed
        return jokers % 2 == 0 or spare == 1
    if c[i] >= 2:
        c[i] -= 2
        if _pairs(c, jokers, spare):
            return True
        c[i] += 2
    if jokers:
        c[i] -= 1
        if _pairs(c, jokers - 1, spare):
            return True
        c[i] += 1
    if spare:
        c[i] -= 1
        if _pairs(c, jokers, 0):
            return True
        c[i] += 1
    return False


def wenzhou_natural(tiles: Sequence[str], joker: str) -> tuple[list[int], int]:
    """Joker-face tiles become jokers; white dragons become the joker face (unless jokers)."""
    counts = [0] * 34
    jokers = 0
    for tile in tiles:
        if tile == joker:
            jokers += 1
        elif tile == "B":
            counts[INDEX[joker]] += 1
        else:
            counts[INDEX[tile]] += 1
    return counts, jokers


def wenzhou_reference(tiles: Sequence[str], joker: str) -> bool:
    """The Wenzhou verdict for 17 concealed tiles, the slow way."""
    counts, jokers = wenzhou_natural(tiles, joker)
    if jokers >= 3:
        return True
    if plain_pairs(counts, jokers, 8):
        return True
    if jokers <= 2:
        return substitution_regular(counts, jokers)
    return search_regular(counts, jokers)  # pragma: no cover - three jokers win above


def orphans_reference(counts: Sequence[int]) -> bool:
    orphans = [0, 8, 9, 17, 18, 26, *range(27, 34)]
    if sum(counts) != 14 or any(counts[k] for k in range(34) if k not in orphans):
        return False
    return all(counts[k] >= 1 for k in orphans)
