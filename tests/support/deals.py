"""Shared helpers for the deal tests: throws, manifests and position labels."""

from __future__ import annotations

import random
from collections.abc import Iterable

from rules.dealt import DealtState, Manifest, Pos, Throw
from rules.manifest import manifest_from_ring
from rules.profiles import Profile, load_profile
from rules.tiles import tile_list
from rules.words import SEATS

WENZHOU = load_profile("wenzhou")
SICHUAN = load_profile("sichuan")
WSOM = load_profile("wsom")
SIMPLIFIED = load_profile("simplified")


def T(by: str, *dice: int) -> Throw:
    """A throw written short: ``T("E", 3, 4)`` is East throwing 3 and 4."""
    return Throw.model_validate({"by": by, "dice": list(dice)})


def shuffled_manifest(profile: Profile, seed: int = 1) -> Manifest:
    tiles = tile_list(profile.tiles)
    random.Random(seed).shuffle(tiles)
    return manifest_from_ring(profile, tiles)


def labels(positions: Iterable[Pos]) -> list[str]:
    """``W7t``-style labels, easy to write out by hand in a test."""
    return [p.label() for p in positions]


def stacks(wall: str, first: int, last: int) -> list[str]:
    """Labels of whole stacks ``first..last`` of ``wall``, top then bottom."""
    out: list[str] = []
    for n in range(first, last + 1):
        out += [f"{wall}{n}t", f"{wall}{n}b"]
    return out


def all_positions(state: DealtState) -> list[Pos]:
    out: list[Pos] = []
    for seat in SEATS:
        out += state.hand_positions[seat]
    return out + state.colline_positions + state.live_wall_positions


def check_accounting(profile: Profile, state: DealtState) -> None:
    """Every tile of the manifest is in exactly one of a hand, the colline, the live wall;
    each listed tile is the manifest's tile at its position; sizes are the profile's."""
    manifest = state.manifest
    positions = all_positions(state)
    keys = [(p.wall, p.stack, p.tier) for p in positions]
    expected = {
        (s, n, ("top", "bottom")[j] if len(st) == 2 else "bottom")
        for s in SEATS
        for n, st in enumerate(manifest.walls[s], start=1)
        for j in range(len(st))
    }
    assert len(keys) == len(expected) == profile.tiles
    assert set(keys) == expected
    for seat in SEATS:
        tiles = state.hands[seat]
        assert tiles == [manifest.tile_at(p) for p in state.hand_positions[seat]]
        assert len(tiles) == profile.hand_size(seat == state.leader)
    assert state.colline == [manifest.tile_at(p) for p in state.colline_positions]
    assert state.live_wall == [manifest.tile_at(p) for p in state.live_wall_positions]
    assert len(state.colline) == profile.colline.size
    assert len(state.live_wall) == (profile.tiles - profile.deal.total() - profile.colline.size)
