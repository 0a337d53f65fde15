"""The deal's exhaustive properties: every throw on every leader, in stack and tile mode."""

from __future__ import annotations

import pytest

from rules.deal import deal
from rules.dealt import Manifest, Throw
from rules.profiles import Profile, load_profile, profile_from_data
from rules.words import SEATS, Seat
from tests.support.deals import (
    SICHUAN,
    SIMPLIFIED,
    WENZHOU,
    T,
    check_accounting,
    labels,
    shuffled_manifest,
)

# --------------------------------------------------------------------------- exhaustive

DICE2 = [(a, b) for a in range(1, 7) for b in range(1, 7)]


def _uniform_oracle(n: int, designated: int, unit: int) -> tuple[str, int]:
    """Wall and stack of the ``unit``-th stack counted from the designated wall's right end
    (1-based; 0 and below continue onto the wall to the right), for four walls of n units."""
    if unit >= 1:
        return SEATS[(designated - (unit - 1) // n) % 4], (unit - 1) % n + 1
    return SEATS[(designated + 1) % 4], n + unit


@pytest.mark.slow
@pytest.mark.parametrize("name", ["wenzhou", "sichuan", "wsom"])
def test_every_throw_on_every_leader(name: str) -> None:
    """All 4 leaders x 36 x 36 ordered throws: accounting, and the breach, joker, colline
    and first dealt stack where closed-form counting puts them."""
    profile = load_profile(name)
    n = len(profile.layout.E)
    m = shuffled_manifest(profile, seed=3)
    seen_walls: set[str] = set()
    crossings: set[str] = set()
    for leader_index, leader in enumerate(SEATS):
        for first in DICE2:
            d1 = sum(first)
            d_index = (leader_index + d1 - 1) % 4
            wall = SEATS[d_index]
            for second in DICE2:
                t = d1 + sum(second)
                s = deal(profile, m, leader, [T(leader, *first), T(wall, *second)])
                check_accounting(profile, s)
                assert s.designated_wall == wall and s.count == t
                bw, bs = _uniform_oracle(n, d_index, t)
                assert (s.breach.wall, s.breach.stack) == (bw, bs)
                seen_walls.add(bw)
                if bw != wall:
                    crossings.add(wall)
                fw, fs = _uniform_oracle(n, d_index, t + 1)
                first_pos = s.hand_positions[leader][0]
                assert (first_pos.wall, first_pos.stack) == (fw, fs)
                if profile.joker.kind == "indicator":
                    assert s.joker is not None
                    assert s.joker.position.label() == "{}{}t".format(
                        *_uniform_oracle(n, d_index, d1)
                    )
                    # The turned tile is never dealt: colline iff d2 <= 7, else live wall.
                    in_colline = s.joker.position in s.colline_positions
                    assert in_colline == (sum(second) <= 7)
                    assert in_colline or s.joker.position in s.live_wall_positions
                if profile.colline.size:
                    assert labels(s.colline_positions[:2]) == [f"{bw}{bs}t", f"{bw}{bs}b"]
                    lw, ls = _uniform_oracle(n, d_index, t - 7)
                    assert labels(s.colline_positions[-2:]) == [f"{lw}{ls}t", f"{lw}{ls}b"]
                    ew, es = _uniform_oracle(n, d_index, t - 8)
                    assert s.live_wall_positions[-1].label() == f"{ew}{es}b"
                else:
                    assert s.live_wall_positions[-1].label() == s.breach.label()
    assert seen_walls == set(SEATS)
    assert crossings == set(SEATS)  # every designated wall sees a count go past its end


@pytest.mark.slow
def test_every_simplified_throw() -> None:
    """Every player A, every deciding die 2..6 and every ordered pair of his two dice."""
    m = shuffled_manifest(SIMPLIFIED, seed=4)
    crossed = False
    for a_index, a in enumerate(SEATS):
        for die in range(2, 7):
            for pair in DICE2:
                t = die + sum(pair)
                s = deal(SIMPLIFIED, m, a, [T(a, die), T(a, *pair)])
                check_accounting(SIMPLIFIED, s)
                assert (s.breach.wall, s.breach.stack, s.count) == (a, t, t)
                expect = [_uniform_oracle(18, a_index, t - k) for k in range(1, 7)]
                got = [
                    (p.wall, p.stack) for p in s.colline_positions if p.stack != t or p.wall != a
                ]
                assert got == [x for x in expect for _ in range(2)]
                assert labels(s.colline_positions)[0] == f"{a}{t}t"
                assert labels(s.colline_positions)[11] == f"{a}{t}b"
                crossed = crossed or expect[-1][0] != a
                first_pos = s.hand_positions[a][0]
                assert (first_pos.wall, first_pos.stack) == _uniform_oracle(18, a_index, t + 1)
    assert crossed


@pytest.mark.slow
@pytest.mark.parametrize("name", ["wenzhou", "sichuan"])
def test_tile_mode_every_throw(name: str) -> None:
    """Tile mode: one pip = one tile (top, bottom, stack by stack). Same accounting; the
    breach follows the T-th tile, which may split a stack."""
    base = load_profile(name)
    profile = profile_from_data(base.model_dump() | {"counting": "tile", "name": f"{name}-tile"})
    m = shuffled_manifest(profile, seed=5)
    for leader in SEATS:
        for d1 in range(2, 13):
            wall = SEATS[(SEATS.index(leader) + d1 - 1) % 4]
            for d2 in range(2, 13):
                first = (1, d1 - 1) if d1 <= 7 else (6, d1 - 6)
                second = (1, d2 - 1) if d2 <= 7 else (6, d2 - 6)
                s = deal(profile, m, leader, [T(leader, *first), T(wall, *second)])
                check_accounting(profile, s)
                t = d1 + d2
                # Count tiles on the designated wall (T <= 24 stays within its full stacks).
                stack, tier = (t + 1) // 2, "top" if t % 2 else "bottom"
                assert s.breach.label() == f"{wall}{stack}{tier[0]}"
                if profile.joker.kind == "indicator":
                    assert s.joker is not None
                    js, jt = (d1 + 1) // 2, "t" if d1 % 2 else "b"
                    assert s.joker.position.label() == f"{wall}{js}{jt}"
                # The colline's first replacement is the top of the breach stack when the
                # breach splits it (tile T is a top tile), else the top of stack T/2.
                if profile.colline.size:
                    assert s.colline_positions[0].label() == f"{wall}{stack}t"


def test_same_inputs_give_identical_json() -> None:
    cases: list[tuple[Profile, Seat, list[Throw]]] = [
        (WENZHOU, "S", [T("S", 2, 5), T("N", 6, 1)]),
        (SICHUAN, "N", [T("N", 4, 4), T("W", 3, 3)]),
        (SIMPLIFIED, "N", [T("E", 2), T("S", 2), T("W", 1), T("N", 2), T("E", 3), T("S", 3),
                           T("N", 4), T("N", 6, 6)]),
    ]  # fmt: skip
    for profile, leader, throws in cases:
        m = shuffled_manifest(profile, seed=9)
        a = deal(profile, m, leader, throws, cycle_id="c-1", tile_set="B").to_json()
        again = Manifest.model_validate_json(m.model_dump_json())
        b = deal(profile, again, leader, list(throws), cycle_id="c-1", tile_set="B").to_json()
        assert a == b
        # Recompute from the record itself, as the audit does.
        rec = type(deal(profile, m, leader, throws)).model_validate_json(a)
        c = deal(profile, rec.manifest, rec.leader, rec.throws, cycle_id=rec.cycle_id,
                 tile_set=rec.tile_set)  # fmt: skip
        assert c.to_json() == a


def test_order_of_dice_within_a_throw_changes_only_the_record() -> None:
    m = shuffled_manifest(WENZHOU)
    a = deal(WENZHOU, m, "E", [T("E", 2, 6), T("N", 1, 5)])
    b = deal(WENZHOU, m, "E", [T("E", 6, 2), T("N", 5, 1)])
    assert a.hands == b.hands and a.colline == b.colline and a.live_wall == b.live_wall
    assert a.throws != b.throws
