"""Arranged deals: a wall manifest built so that the deal gives chosen tiles, to show a hand
or a whole game from the seats' tiles (docs/rules.md's worked examples, the benchmarks).

Where each tile goes depends only on the profile, the Leader and the dice, never on the
tiles (:mod:`rules.deal`): one deal of the set in its plain order gives the positions, the
chosen tiles are written at them, the rest of the set fills the other places in its plain
order, and the same throws deal again. Pure: the same arguments give the same deal.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from rules.deal import deal
from rules.dealt import DealError, DealtState, Manifest, Pos, Throw
from rules.manifest import manifest_from_ring
from rules.profiles import Profile
from rules.tiles import tile_list
from rules.words import SEATS, Seat, TileSetName

Key = tuple[str, int, str]


def _key(pos: Pos) -> Key:
    return (pos.wall, pos.stack, pos.tier)


def arranged_deal(
    profile: Profile,
    leader: Seat,
    throws: Sequence[Throw],
    hands: Mapping[Seat, Sequence[str]],
    *,
    live: Sequence[str] = (),
    live_end: Sequence[str] = (),
    joker: str | None = None,
    cycle_id: str = "",
    tile_set: TileSetName = "A",
) -> DealtState:
    """The deal of ``profile`` with these throws in which each seat of ``hands`` receives
    those tiles (in the order it takes them), the live wall begins with ``live`` and ends
    with ``live_end`` (its last tiles, in draw order), and (Wenzhou) the turned tile is
    ``joker``. DealError when the tiles do not fit (a count, or more copies than the set)."""
    base = deal(profile, manifest_from_ring(profile, tile_list(profile.tiles)), leader, throws)
    wanted: dict[Key, str] = {}

    def want(positions: Sequence[Pos], tiles: Sequence[str], what: str) -> None:
        if len(tiles) > len(positions):
            raise DealError(f"{what}: {len(tiles)} tiles where {len(positions)} fit")
        for pos, tile in zip(positions, tiles, strict=False):
            if wanted.setdefault(_key(pos), tile) != tile:
                raise DealError(f"{what}: {pos.label()} is wanted as {wanted[_key(pos)]} too")

    for seat, tiles in hands.items():
        if len(tiles) != len(base.hand_positions[seat]):
            raise DealError(
                f"seat {seat} is dealt {len(base.hand_positions[seat])} tiles, not {len(tiles)}"
            )
        want(base.hand_positions[seat], tiles, f"seat {seat}")
    want(base.live_wall_positions, live, "live wall")
    if live_end:
        want(base.live_wall_positions[-len(live_end) :], live_end, "live wall's end")
    if joker is not None:
        if base.joker is None:
            raise DealError(f"{profile.name} turns no joker")
        want([base.joker.position], [joker], "joker")
    rest = Counter(tile_list(profile.tiles))
    rest.subtract(wanted.values())
    short = sorted(t for t, n in rest.items() if n < 0)
    if short:
        raise DealError(f"more {short[0]} wanted than the {profile.tiles}-tile set holds")
    filler = iter([t for t in tile_list(profile.tiles) if rest[t] > 0 and not rest.subtract([t])])
    walls = {
        seat: [
            [
                wanted.get((seat, number, tier), "") or next(filler)
                for tier in (("top", "bottom") if len(stack) == 2 else ("bottom",))
            ]
            for number, stack in enumerate(base.manifest.walls[seat], start=1)
        ]
        for seat in SEATS
    }
    manifest = Manifest.model_validate({"walls": walls})
    return deal(profile, manifest, leader, throws, cycle_id=cycle_id, tile_set=tile_set)
