"""Win checks per second: rules.shapes beside the `mahjong` package's Agari().is_agari.

One run prints, on the same joker-free 14-tile hands (winning ones, then random ones drawn
from the 136-tile set), our rate and theirs; then our rate on 17-tile Wenzhou hands holding 0
to 4 jokers (and white dragons); then the time to list the waiting tiles of a 16-tile hand;
then the time to replay a sixteen-hand Wenzhou game from its events (goal: under 20 ms), from
the event objects and from its JSON lines. The game's sixteen hands are played to the
exhausted wall, every tile drawn and thrown: the most events a hand has. The replay's goal is
judged on the process's CPU time, which other programs on a busy machine do not inflate; the
elapsed time is printed beside it.

Each library gets the hands as its own 34-slot count tuple (its tile order differs from
ours for the dragons). Our verdicts use memo tables: "cold" clears them before the pass,
"warm" is a second pass over the same hands. Figures only; nothing is asserted.

    .venv/bin/python -m bench.rules [--hands N] [--seed S] [--game-only]
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
from rules.deal import deal
from rules.dice import throws_from_dice
from rules.events import Discard, Draw, Exhausted
from rules.game import GameRecord, replay_game
from rules.game_events import Dealt, GameEvent, Sit, WindDraw, event_line, parse_game_log
from rules.hand import build_hand
from rules.manifest import manifest_from_ring
from rules.profiles import load_profile
from rules.standings import standings
from rules.tiles import tile_list
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
    parser.add_argument(
        "--game-only", action="store_true", help="only the replay of a sixteen-hand game"
    )
    args = parser.parse_args(argv)
    rnd = random.Random(args.seed)
    n = args.hands
    if args.game_only:
        game_replay(rnd)
        return 0

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
    game_replay(rnd)
    return 0


REPLAY_GOAL_MS = 20.0


def sixteen_hand_game(rnd: random.Random) -> list[GameEvent]:
    """A Wenzhou game of sixteen shuffled hands, each played to the exhausted wall."""
    profile = load_profile("wenzhou")
    players = [{"name": n, "buy_in": 1000} for n in ("Ana", "Bo", "Cy", "Di")]
    record = GameRecord()
    record.apply(Sit.model_validate({"variant": "wenzhou", "players": players, "point": "1"}))
    record.apply(WindDraw(winds=["E", "S", "W", "N"]))
    while not record.games[0].turn.over:
        leader = record.games[0].turn.leader
        tiles = tile_list(136)
        rnd.shuffle(tiles)
        dice = [[rnd.randint(1, 6), rnd.randint(1, 6)] for _ in range(2)]
        throws = throws_from_dice(profile, leader, dice)
        cycle = f"c-{len(record.games[0].hands) + 1}"
        dealt = deal(profile, manifest_from_ring(profile, tiles), leader, throws, cycle_id=cycle)
        record.apply(Dealt(dealt=dealt))
        hand = record.hand
        assert hand is not None
        turn = leader
        record.apply(Discard(seat=turn, tile=hand.seats[turn].concealed[0]))
        for placed in list(hand.wall.live):
            turn = hand.next_active(turn)
            record.apply(Draw(seat=turn, tile=placed.tile))
            record.apply(Discard(seat=turn, tile=placed.tile))
        record.apply(Exhausted())
    return list(record.events)


def game_replay(rnd: random.Random, runs: int = 20) -> None:
    events = sixteen_hand_game(rnd)
    log = "\n".join(event_line(e) for e in events)
    expected = standings(replay_game(events))
    replays: list[tuple[str, Callable[[], GameRecord]]] = [
        ("from its events", lambda: replay_game(events)),
        ("from its JSON lines", lambda: replay_game(parse_game_log(log))),
    ]
    for label, replay in replays:
        times: list[float] = []
        cpu: list[float] = []
        for _ in range(runs):
            start, start_cpu = time.perf_counter(), time.process_time()
            record = replay()
            cpu.append((time.process_time() - start_cpu) * 1000)
            times.append((time.perf_counter() - start) * 1000)
        assert standings(record) == expected
        times.sort()
        cpu.sort()
        median, cpu_median = times[len(times) // 2], cpu[len(cpu) // 2]
        verdict = "met" if cpu_median < REPLAY_GOAL_MS else "NOT met"
        print(
            f"replay of a sixteen-hand Wenzhou game {label} ({len(events)} events, "
            f"{len(log) // 1024} KiB), {runs} runs: CPU median {cpu_median:.1f} ms, elapsed "
            f"median {median:.1f} ms (best {times[0]:.1f}, worst {times[-1]:.1f}); goal under "
            f"{REPLAY_GOAL_MS:.0f} ms of CPU: {verdict}"
        )


if __name__ == "__main__":
    sys.exit(main())
