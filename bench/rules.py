"""Win checks per second: rules.shapes beside the `mahjong` package's Agari().is_agari.

One run prints, on the same joker-free 14-tile hands (winning ones, then random ones drawn
from the 136-tile set), our rate and theirs; then our rate on 17-tile Wenzhou hands holding 0
to 4 jokers (and white dragons); then the time to list the waiting tiles of a 16-tile hand.

Each library gets the hands as its own 34-slot count tuple (its tile order differs from
ours for the dragons). Our verdicts use memo tables: "cold" clears them before the pass,
"warm" is a second pass over the same hands. Figures only; nothing is asserted.

    .venv/bin/python -m bench.rules [--hands N] [--seed S]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence

from mahjong.agari import Agari

from bench import handgen as gen
from rules import shapes
from rules.hand import build_hand
from rules.words import RuleSet

# ours: ... E S W N C F B; theirs: ... E S W N haku hatsu chun
_TO_THEIRS = [*range(27), 27, 28, 29, 30, 33, 32, 31]


def theirs(counts: Sequence[int]) -> tuple[int, ...]:
    out = [0] * 34
    for i, n in enumerate(counts):
        out[_TO_THEIRS[i]] = n
    return tuple(out)


def rate(
    check: Callable[[tuple[int, ...]], bool], hands: list[tuple[int, ...]]
) -> tuple[float, int]:
    start = time.perf_counter()
    wins = 0
    for hand in hands:
        if check(hand):
            wins += 1
    elapsed = time.perf_counter() - start
    return len(hands) / elapsed, wins


def compare(label: str, ours: list[tuple[int, ...]]) -> None:
    other = [theirs(h) for h in ours]
    agari = Agari()
    their_rate, their_wins = rate(agari.is_agari, other)
    shapes.clear_caches()
    cold, our_wins = rate(shapes.is_regular, ours)
    warm, _ = rate(shapes.is_regular, ours)
    print(f"{label} ({len(ours)} hands, {our_wins} regular wins; mahjong says {their_wins})")
    print(f"  mahjong Agari().is_agari   {their_rate:12,.0f} checks/s")
    print(f"  rules.shapes cold caches   {cold:12,.0f} checks/s   ({cold / their_rate:4.1f}x)")
    print(f"  rules.shapes warm caches   {warm:12,.0f} checks/s   ({warm / their_rate:4.1f}x)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    rnd = random.Random(args.seed)
    n = args.hands

    print(f"bench.rules: {n} hands per set, seed {args.seed}, Python {sys.version.split()[0]}")
    winning = [tuple(shapes.counts_of(gen.winning_faces(rnd, 4))) for _ in range(n)]
    compare("joker-free 14-tile winning hands", winning)
    random_hands = [tuple(shapes.counts_of(gen.random_faces(rnd, 14))) for _ in range(n)]
    compare("joker-free 14-tile random hands", random_hands)

    cases = []
    for _ in range(n):
        joker = rnd.choice(gen.FACES)
        jokers = rnd.randrange(5)
        whites = rnd.randrange(3) if joker != "B" else 0
        tiles = gen.wenzhou_tiles(rnd, joker, jokers, whites)
        cases.append((tuple(shapes.counts_of(tiles)), shapes.INDEX[joker]))
    shapes.clear_caches()
    for label in ("cold caches", "warm caches"):
        start = time.perf_counter()
        wins = sum(1 for counts, joker in cases if shapes.wenzhou_is_win(counts, joker))
        elapsed = time.perf_counter() - start
        print(
            f"17-tile Wenzhou hands, 0-4 jokers, {label}: {n / elapsed:12,.0f} checks/s"
            f"   ({wins} wins)"
        )

    waits_hands = []
    for _ in range(min(n, 2000)):
        joker = rnd.choice(gen.FACES)
        tiles = gen.wenzhou_tiles(rnd, joker, rnd.randrange(3), rnd.randrange(2))[:16]
        waits_hands.append(build_hand(RuleSet.WENZHOU, tiles, joker=joker))
    shapes.clear_caches()
    for label in ("cold caches", "warm caches"):
        times = []
        waiting = 0
        for hand in waits_hands:
            start = time.perf_counter()
            found = shapes.winning_tiles(hand)
            times.append(time.perf_counter() - start)
            waiting += bool(found)
        times.sort()
        mean = statistics.fmean(times) * 1000
        median = times[len(times) // 2] * 1000
        p99 = times[int(len(times) * 0.99)] * 1000
        print(
            f"waiting tiles of a 16-tile Wenzhou hand, {label} ({len(times)} hands, {waiting} "
            f"waiting): mean {mean:.3f} ms, median {median:.3f} ms, p99 {p99:.3f} ms, "
            f"max {times[-1] * 1000:.3f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
