"""Real deals (rules.deal.deal) arranged so that seats receive chosen tiles.

A deal's positions depend only on the profile, the leader and the dice, not on the tiles; so
one deal of a plain manifest gives the positions, the chosen tiles are written at them, the
other tiles fill the rest, and the same dice deal again.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence

from rules.deal import deal
from rules.dealt import DealtState, Manifest, Pos, parse_seat
from rules.dice import throws_from_dice
from rules.manifest import manifest_from_ring
from rules.profiles import load_profile
from rules.tiles import tile_list
from rules.words import SEATS, Seat

DICE: dict[str, list[list[int]]] = {
    "wenzhou": [[3, 4], [2, 3]],
    "sichuan": [[3, 4], [2, 3]],
    "wsom": [[3, 4], [2, 3]],
    "simplified": [[5], [3, 4]],
}


def plain_deal(variant: str, leader: Seat = "E", seed: int | None = None) -> DealtState:
    profile = load_profile(variant)
    tiles = tile_list(profile.tiles)
    if seed is not None:
        random.Random(seed).shuffle(tiles)
    manifest = manifest_from_ring(profile, tiles)
    return deal(profile, manifest, leader, throws_from_dice(profile, leader, DICE[variant]))


def _put(walls: dict[str, list[list[str]]], pos: Pos, tile: str) -> None:
    stack = walls[pos.wall][pos.stack - 1]
    if len(stack) == 1:
        stack[0] = tile
    else:
        stack[0 if pos.tier == "top" else 1] = tile


def arranged_deal(
    variant: str,
    hands: Mapping[str, Sequence[str]],
    *,
    live: Sequence[str] = (),
    live_end: Sequence[str] = (),
    joker: str | None = None,
    leader: Seat = "E",
) -> DealtState:
    """A deal where each seat in ``hands`` receives those tiles (in that order), the live
    wall starts with ``live``, ends with ``live_end`` (its last tiles, in draw order), and
    (Wenzhou) the turned tile is ``joker``. Every other tile goes where there is room."""
    profile = load_profile(variant)
    base = plain_deal(variant, leader)
    wanted: dict[tuple[str, int, str], str] = {}

    def want(pos: Pos, tile: str) -> None:
        key = (pos.wall, pos.stack, pos.tier)
        if key in wanted and wanted[key] != tile:
            raise ValueError(f"position {pos.label()} wanted as {wanted[key]} and {tile}")
        wanted[key] = tile

    for name, tiles in hands.items():
        seat = parse_seat(name)
        positions = base.hand_positions[seat]
        if len(tiles) != len(positions):
            raise ValueError(f"seat {seat} is dealt {len(positions)} tiles, not {len(tiles)}")
        for pos, tile in zip(positions, tiles, strict=True):
            want(pos, tile)
    for pos, tile in zip(base.live_wall_positions, live, strict=False):
        want(pos, tile)
    if live_end:
        for pos, tile in zip(base.live_wall_positions[-len(live_end) :], live_end, strict=True):
            want(pos, tile)
    if joker is not None:
        assert base.joker is not None
        want(base.joker.position, joker)
    rest = Counter(tile_list(profile.tiles))
    rest.subtract(Counter(wanted.values()))
    if any(n < 0 for n in rest.values()):
        raise ValueError(f"more copies wanted than the set holds: {-rest}")
    filler = [t for t in tile_list(profile.tiles) if rest[t] > 0 and not rest.subtract([t])]
    walls: dict[str, list[list[str]]] = {
        s: [list(stack) for stack in base.manifest.walls[s]] for s in SEATS
    }
    fill = iter(filler)
    for seat in SEATS:
        for number, stack in enumerate(walls[seat], start=1):
            tiers = ("top", "bottom") if len(stack) == 2 else ("bottom",)
            for tier in tiers:
                key = (seat, number, tier)
                pos = Pos(wall=seat, stack=number, tier=tier)  # type: ignore[arg-type]
                _put(walls, pos, wanted[key] if key in wanted else next(fill))
    manifest = Manifest.model_validate({"walls": walls})
    dealt = deal(profile, manifest, leader, list(base.throws))
    for name, tiles in hands.items():
        assert list(dealt.hands[parse_seat(name)]) == list(tiles)
    return dealt
