"""Uniformity of the simulated table's shuffles and dice (chi-square tests).

Significance: each test rejects at alpha = 0.001 (the per-tile check uses the Bonferroni bound
alpha / tiles). The seeds are fixed, so a run is deterministic: the tests cannot flake; they
would fail for good if the shuffle or the dice lost their uniformity. Each test also shows its
power: the same statistic rejects a known-biased generator (the naive "swap with any position"
shuffle, a loaded die) on the same number of samples.

The p-values come from the regularized incomplete gamma function (exact to rounding), checked
against published quantiles.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, MutableSequence
from typing import Any

from protocol import messages as m
from tests.support.simhost import ModelDriver

ALPHA = 0.001
TILES = 136
SHUFFLES_PER_SEED = 100
SEEDS = range(1000, 1015)  # 1500 shuffles: 11 expected per (tile, position) cell


def chi2_sf(x: float, k: int) -> float:
    """P(X >= x) for X ~ chi-square with k degrees of freedom: Q(k/2, x/2), the regularized
    upper incomplete gamma function (series below a + 1, continued fraction above)."""
    a, y = k / 2, x / 2
    if y <= 0:
        return 1.0
    log_front = -y + a * math.log(y) - math.lgamma(a)
    if y < a + 1:
        term = total = 1.0 / a
        n = a
        while abs(term) > abs(total) * 1e-15:
            n += 1
            term *= y / n
            total += term
        return max(0.0, 1.0 - total * math.exp(log_front))
    tiny = 1e-300
    b = y + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    i = 0
    while True:
        i += 1
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = d if abs(d) > tiny else tiny
        c = b + an / c
        c = c if abs(c) > tiny else tiny
        d = 1 / d
        h *= d * c
        if abs(d * c - 1) < 1e-15:
            return math.exp(log_front) * h


def chi2(observed: list[int], expected: float) -> float:
    return sum((o - expected) ** 2 / expected for o in observed)


class NaiveShuffle(random.Random):
    """A classic bug: swap each position with ANY position (not uniform)."""

    def shuffle(self, x: MutableSequence[Any]) -> None:
        n = len(x)
        for i in range(n):
            j = self.randrange(n)
            x[i], x[j] = x[j], x[i]


class LoadedDice(random.Random):
    """Six comes up a little too often."""

    def randint(self, a: int, b: int) -> int:
        return 6 if self.random() < 0.03 else super().randint(a, b)


def position_counts(rng_for_seed: Callable[[int], random.Random]) -> list[list[int]]:
    """counts[tile][position] over the seeded shuffles, through the board model."""
    counts = [[0] * TILES for _ in range(TILES)]
    for seed in SEEDS:
        d = ModelDriver(seed=seed, tiles=TILES)
        d.model.rng = rng_for_seed(seed)
        for _ in range(SHUFFLES_PER_SEED):
            assert isinstance(d.run(m.Shuffle(0))[-1], m.Done)
            order = d.model.sets[0].order
            assert order is not None
            for position, tile in enumerate(order):
                counts[tile][position] += 1
    return counts


def uniformity_p_values(counts: list[list[int]]) -> tuple[float, float]:
    """(p of the whole tile x position table, smallest p of one tile's positions)."""
    n = sum(counts[0])
    expected = n / TILES
    whole = sum(chi2(row, expected) for row in counts)
    p_whole = chi2_sf(whole, (TILES - 1) ** 2)
    p_min = min(chi2_sf(chi2(row, expected), TILES - 1) for row in counts)
    return p_whole, p_min


def test_each_tile_position_is_uniform() -> None:
    counts = position_counts(random.Random)
    assert all(sum(row) == len(SEEDS) * SHUFFLES_PER_SEED for row in counts)
    p_whole, p_min = uniformity_p_values(counts)
    assert p_whole > ALPHA, p_whole
    assert p_min > ALPHA / TILES, p_min
    # power: the naive shuffle is rejected on the same number of shuffles
    p_naive, _ = uniformity_p_values(position_counts(NaiveShuffle))
    assert p_naive < ALPHA, p_naive


def roll_faces(rng: random.Random, rolls: int) -> tuple[list[int], list[int]]:
    """Face counts of every die, and pair counts (first die, second die), over ROLL_DICE."""
    d = ModelDriver(seed=1)
    d.model.rng = rng
    faces = [0] * 6
    pairs = [0] * 36
    for i in range(rolls):
        dice = d.run(m.RollDice(i & 0xFF, 3))[-1]
        assert isinstance(dice, m.Dice)
        for v in dice.values:
            faces[v - 1] += 1
        pairs[(dice.values[0] - 1) * 6 + dice.values[1] - 1] += 1
    return faces, pairs


def test_dice_faces_are_uniform() -> None:
    rolls = 2000
    faces, pairs = roll_faces(random.Random(424242), rolls)
    assert chi2_sf(chi2(faces, rolls * 3 / 6), 5) > ALPHA, faces
    assert chi2_sf(chi2(pairs, rolls / 36), 35) > ALPHA, pairs
    loaded, _ = roll_faces(LoadedDice(424242), rolls)
    assert chi2_sf(chi2(loaded, rolls * 3 / 6), 5) < ALPHA, loaded


def test_chi2_sf_matches_known_quantiles() -> None:
    # upper 0.001 quantiles of the chi-square distribution (published tables)
    for k, x in ((1, 10.828), (5, 20.515), (35, 66.619), (100, 149.449)):
        assert abs(chi2_sf(x, k) - 0.001) < 0.000005, (k, chi2_sf(x, k))
    assert abs(chi2_sf(4.0, 2) - math.exp(-2.0)) < 1e-12  # closed form for k = 2
