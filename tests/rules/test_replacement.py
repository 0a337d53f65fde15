"""Draws and kong/flower replacements during play (TABLE.md section 4)."""

from __future__ import annotations

import pytest

from rules.deal import deal
from rules.dealt import DealtState
from rules.profiles import load_profile
from rules.wall import WallExhausted, draw, replacement, take_live_end, wall_state
from tests.support.deals import T, labels, shuffled_manifest

WENZHOU = load_profile("wenzhou")
SICHUAN = load_profile("sichuan")
SIMPLIFIED = load_profile("simplified")


def _wenzhou_example() -> DealtState:
    # Leader N, 1+1 -> wall E; E throws 1+2: T = 5; colline E5..E1, S17..S15; live ends S14b.
    return deal(WENZHOU, shuffled_manifest(WENZHOU, 12), "N", [T("N", 1, 1), T("E", 1, 2)])


def test_wenzhou_kong_replacement_keeps_the_colline_at_16() -> None:
    state = _wenzhou_example()
    wall = wall_state(state)
    assert len(wall.colline) == 16 and len(wall.live) == 55
    got = []
    moved = []
    for _ in range(3):
        r = replacement(WENZHOU, wall)
        got.append(r.tile.pos.label())
        assert r.moved is not None
        moved.append(r.moved.pos.label())
        wall = r.wall
        assert len(wall.colline) == 16
    # First colline tile from the left, top first: E5 top, E5 bottom, E4 top.
    assert got == ["E5t", "E5b", "E4t"]
    # The live wall's last stack is S14: its top moves first, then its bottom.
    assert moved == ["S14t", "S14b", "S13t"]
    assert labels(p.pos for p in wall.colline[-3:]) == moved
    assert len(wall.live) == 52
    assert wall.live[-1].pos.label() == "S13b"
    # The tiles moved are the manifest's.
    assert [p.tile for p in wall.colline[-3:]] == [
        state.manifest.tile_at(p.pos) for p in wall.colline[-3:]
    ]


def test_wenzhou_colline_order_through_the_moved_tiles() -> None:
    """After 16 replacements the colline consists of the 16 moved tiles, in moved order."""
    wall = wall_state(_wenzhou_example())
    moved = []
    for _ in range(16):
        r = replacement(WENZHOU, wall)
        assert r.moved is not None
        moved.append(r.moved)
        wall = r.wall
    assert list(wall.colline) == moved
    r = replacement(WENZHOU, wall)
    assert r.tile == moved[0]


def test_wenzhou_exhaustion() -> None:
    """The hand is a draw once the last live tile is drawn; a replacement then still comes
    from the colline, which can no longer be replenished."""
    wall = wall_state(_wenzhou_example())
    drawn = []
    while not wall.exhausted:
        d = draw(wall)
        drawn.append(d.tile.pos.label())
        wall = d.wall
    assert len(drawn) == 55 and drawn[0] == "W4b" and drawn[-1] == "S14b"
    with pytest.raises(WallExhausted, match="nothing left to draw"):
        draw(wall)
    r = replacement(WENZHOU, wall)
    assert r.moved is None and len(r.wall.colline) == 15
    wall = r.wall
    for _ in range(15):
        wall = replacement(WENZHOU, wall).wall
    with pytest.raises(WallExhausted, match="colline is empty"):
        replacement(WENZHOU, wall)


def test_front_and_back_meet_in_one_stack() -> None:
    state = deal(SICHUAN, shuffled_manifest(SICHUAN), "S", [T("S", 6, 6), T("E", 5, 6)])
    wall = wall_state(state)
    # Draw from the front until two tiles are left, all from the last stack N9.
    while len(wall.live) > 2:
        wall = draw(wall).wall
    assert labels(p.pos for p in wall.live) == ["N9t", "N9b"]
    end = take_live_end(wall)
    assert end.tile.pos.label() == "N9t"
    assert draw(end.wall).tile.pos.label() == "N9b"
    assert draw(wall).tile.pos.label() == "N9t"


def test_sichuan_replacement_from_the_other_end() -> None:
    state = deal(SICHUAN, shuffled_manifest(SICHUAN), "S", [T("S", 6, 6), T("E", 5, 6)])
    wall = wall_state(state)
    taken = []
    for _ in range(4):
        r = replacement(SICHUAN, wall)
        assert r.moved is None
        taken.append(r.tile.pos.label())
        wall = r.wall
    assert taken == ["N9t", "N9b", "N8t", "N8b"]
    assert wall.colline == ()
    assert draw(wall).tile.pos.label() == "S9b"


def test_simplified_flowers_from_the_right_of_the_colline() -> None:
    throws = [T("E", 3), T("S", 5), T("W", 6), T("N", 2), T("W", 4, 5)]
    state = deal(SIMPLIFIED, shuffled_manifest(SIMPLIFIED), "W", throws)
    wall = wall_state(state)
    r1 = replacement(SIMPLIFIED, wall)
    r2 = replacement(SIMPLIFIED, r1.wall)
    assert [r1.tile.pos.label(), r2.tile.pos.label()] == ["W8t", "W8b"]
    assert r2.wall.colline == wall.colline  # the colline is never drawn
    wall = r2.wall
    while wall.live:
        wall = take_live_end(wall).wall
    with pytest.raises(WallExhausted, match="no tile at its far end"):
        replacement(SIMPLIFIED, wall)
