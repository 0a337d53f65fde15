"""Random hands: winning, nearly winning, or random; the workload of bench.rules.

Every generated hand respects the physical set: at most four copies of a face. The shape tests
draw their random hands from here too (tests may use the benchmarks' tooling; the benchmarks
import nothing from the tests).
"""

from __future__ import annotations

import random
from collections import Counter

FACES: tuple[str, ...] = tuple(f"{n}{s}" for s in "mps" for n in range(1, 10)) + tuple("ESWNCFB")
SUITED: tuple[str, ...] = FACES[:27]


def _fits(tiles: list[str]) -> bool:
    return max(Counter(tiles).values(), default=0) <= 4


def winning_faces(rnd: random.Random, sets: int, faces: tuple[str, ...] = FACES) -> list[str]:
    """``sets`` random sets (chow or pung) and a pair, at most four copies of a face."""
    while True:
        tiles: list[str] = []
        for _ in range(sets):
            if rnd.random() < 0.55:
                suited = [f for f in faces if f in SUITED and int(f[0]) <= 7]
                if suited:
                    start = rnd.choice(suited)
                    n, s = int(start[0]), start[1]
                    tiles += [f"{n}{s}", f"{n + 1}{s}", f"{n + 2}{s}"]
                    continue
            tiles += [rnd.choice(faces)] * 3
        tiles += [rnd.choice(faces)] * 2
        if _fits(tiles):
            return tiles


def pairs_faces(
    rnd: random.Random, pairs: int, spare: int, faces: tuple[str, ...] = FACES
) -> list[str]:
    while True:
        tiles: list[str] = []
        for _ in range(pairs):
            tiles += [rnd.choice(faces)] * 2
        tiles += [rnd.choice(faces) for _ in range(spare)]
        if _fits(tiles):
            return tiles


def random_faces(rnd: random.Random, size: int, faces: tuple[str, ...] = FACES) -> list[str]:
    pool = [f for f in faces for _ in range(4)]
    return rnd.sample(pool, size)


def nudge(rnd: random.Random, tiles: list[str], faces: tuple[str, ...] = FACES) -> list[str]:
    """Swap one tile for another face (keeping the four-copies limit)."""
    while True:
        out = list(tiles)
        out[rnd.randrange(len(out))] = rnd.choice(faces)
        if _fits(out):
            return out


def mixed_faces(rnd: random.Random, size: int, faces: tuple[str, ...] = FACES) -> list[str]:
    """A third winning, a third one swap away from winning, a third random."""
    sets = (size - 2) // 3
    mode = rnd.randrange(4)
    if mode == 0:
        return winning_faces(rnd, sets, faces)
    if mode == 1:
        return nudge(rnd, winning_faces(rnd, sets, faces), faces)
    if mode == 2:
        return pairs_faces(rnd, size // 2, size % 2, faces)
    return random_faces(rnd, size, faces)


def wenzhou_tiles(rnd: random.Random, joker: str, jokers: int, whites: int) -> list[str]:
    """17 physical tiles with ``jokers`` joker-face tiles and (joker not B) ``whites`` whites.

    Built from a natural hand in which tiles are turned into jokers, and natural tiles of the
    joker face are shown as white dragons, as a player would hold them.
    """
    while True:
        natural = mixed_faces(rnd, 17)
        rnd.shuffle(natural)
        tiles = []
        for tile in natural:
            if tile == joker:
                tile = "B" if joker != "B" else rnd.choice(FACES[:27])
            elif tile == "B" and joker != "B":
                tile = rnd.choice(FACES[:27])
            tiles.append(tile)
        for k in range(jokers):
            tiles[k] = joker
        if joker != "B":
            for k in range(jokers, min(17, jokers + whites)):
                tiles[k] = "B"
        if _fits(tiles):
            return tiles
