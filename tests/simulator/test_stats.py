"""Uniformity of the simulated table's shuffles and dice (chi-square tests).

The hardware draws them (simulator/hardware.py: the order the pick-up takes the tiles of a set
mixed by the disc, the dice a tumble leaves), from its source of randomness: ``random.Random``
with a seed, or the OS's CSPRNG. The tests count what the hardware drew, then check once,
through the firmware, that what the reader names is that draw.

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

from firmware.config import faces
from protocol import codes
from protocol import messages as m
from simulator.config import default_layout
from simulator.hardware import SimHal
from tests.support.simhost import MachineDriver

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
    """counts[tile][position] over the seeded draws of the table's pick-up order."""
    counts = [[0] * TILES for _ in range(TILES)]
    for seed in SEEDS:
        hal = SimHal(TILES, seed)
        hal.source = rng_for_seed(seed)
        for _ in range(SHUFFLES_PER_SEED):
            hal.draw(0)
            for position, tile in enumerate(hal.pickup_order(0)):
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
    """Face counts of every die, and pair counts (first die, second die), over tumbles of the
    table's dice unit (its motor runs 600 ms, then stops: the dice come to rest)."""
    hal = SimHal(TILES, 1)
    hal.source = rng
    hal.motors_enable()
    counts = [0] * 6
    pairs = [0] * 36
    for _ in range(rolls):
        hal.motor(codes.MOTOR_DICE, 1, 1000)
        hal.advance(600)
        hal.motor(codes.MOTOR_DICE, 0, 0)
        values = [hal.dice_value(i) for i in range(3)]
        for v in values:
            counts[v - 1] += 1
        pairs[(values[0] - 1) * 6 + values[1] - 1] += 1
    return counts, pairs


def test_dice_faces_are_uniform() -> None:
    rolls = 2000
    counts, pairs = roll_faces(random.Random(424242), rolls)
    assert chi2_sf(chi2(counts, rolls * 3 / 6), 5) > ALPHA, counts
    assert chi2_sf(chi2(pairs, rolls / 36), 35) > ALPHA, pairs
    loaded, _ = roll_faces(LoadedDice(424242), rolls)
    assert chi2_sf(chi2(loaded, rolls * 3 / 6), 5) < ALPHA, loaded


def test_chi2_sf_matches_known_quantiles() -> None:
    # upper 0.001 quantiles of the chi-square distribution (published tables)
    for k, x in ((1, 10.828), (5, 20.515), (35, 66.619), (100, 149.449)):
        assert abs(chi2_sf(x, k) - 0.001) < 0.000005, (k, chi2_sf(x, k))
    assert abs(chi2_sf(4.0, 2) - math.exp(-2.0)) < 1e-12  # closed form for k = 2


def test_the_reader_names_the_draw_and_the_dice_unit_answers_the_firmware() -> None:
    """Through the firmware: the manifest is the hardware's draw, the dice are the unit's."""
    d = MachineDriver(seed=77, tiles=TILES)
    d.ready(0, default_layout(TILES))
    set_faces = faces(TILES)
    assert d.machine.truth(0) == [set_faces[i] for i in d.hal.pickup_order(0)]
    dice = d.command(m.RollDice(5, 3))[-1]
    assert isinstance(dice, m.Dice)
    assert list(dice.values) == [d.hal.dice_value(i) for i in range(3)]


def test_a_tumble_too_short_leaves_the_dice_as_they_were() -> None:
    hal = SimHal(TILES, 3)
    hal.motors_enable()
    hal.motor(codes.MOTOR_DICE, 1, 1000)
    hal.advance(600)
    hal.motor(codes.MOTOR_DICE, 0, 0)
    before = [hal.dice_value(i) for i in range(3)]
    hal.motor(codes.MOTOR_DICE, 1, 1000)
    hal.advance(100)  # not long enough to tumble
    hal.motor(codes.MOTOR_DICE, 0, 0)
    assert [hal.dice_value(i) for i in range(3)] == before
