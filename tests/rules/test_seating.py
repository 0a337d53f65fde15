"""Seating procedures (TABLE.md section 5) and the ranking with re-throws of ties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.dealt import DealError, ThrowError
from rules.seating import (
    WenzhouGame,
    next_leader,
    rank_by_throws,
    sichuan_next_thrower,
    sichuan_seating,
    wenzhou_after_hand,
    wind_draw,
    wsom_seating,
)
from rules.words import SEATS

PLAYERS = ["ana", "ben", "chloé", "dan"]


def test_wind_draw() -> None:
    s = wind_draw(PLAYERS, ["W", "E", "N", "S"])
    assert s.seats == {"E": "ben", "S": "dan", "W": "ana", "N": "chloé"}
    assert s.leader == "E" and s.seat_of("chloé") == "N"
    with pytest.raises(DealError, match="winds must be E, S, W, N in some order"):
        wind_draw(PLAYERS, ["W", "E", "E", "S"])
    with pytest.raises(DealError, match="four distinct players"):
        wind_draw(["a", "a", "b", "c"], ["W", "E", "N", "S"])


def test_wenzhou_leader_rotation() -> None:
    g = WenzhouGame()
    g = wenzhou_after_hand(g, "S")  # East loses: the role passes to South
    assert (g.leader, g.hands_played, g.streak, g.over) == ("S", 1, 0, False)
    g = wenzhou_after_hand(g, None)  # a drawn hand: the leader did not win, it passes
    assert g.leader == "W"
    for n in range(1, 4):
        g = wenzhou_after_hand(g, "W")
        assert (g.leader, g.streak, g.over) == ("W", n, False)
    g = wenzhou_after_hand(g, "W")  # fourth consecutive win: the game ends
    assert (g.streak, g.over, g.hands_played) == (4, True, 6)
    with pytest.raises(DealError, match="the game is over"):
        wenzhou_after_hand(g, "W")


def test_wenzhou_sixteen_hands_at_most() -> None:
    g = WenzhouGame()
    leaders = []
    for _ in range(16):
        leaders.append(g.leader)
        g = wenzhou_after_hand(g, "N" if g.leader != "N" else "E")
    assert g.over and g.hands_played == 16
    assert leaders == ["E", "S", "W", "N"] * 4


def test_sichuan_seating_with_ties() -> None:
    throws = [
        ("ana", [3, 4]),  # 7
        ("ben", [6, 5]),  # 11
        ("chloé", [5, 6]),  # 11: ties with ben for the highest
        ("dan", [2, 5]),  # 7: ties with ana
        ("ben", [1, 2]),  # re-throw of the top tie: 3
        ("chloé", [4, 4]),  # 8: chloé leads
        ("ana", [6, 6]),  # then the lower tie: 12
        ("dan", [1, 1]),  # 2
    ]
    assert sichuan_next_thrower(PLAYERS, throws[:4]) == "ben"
    assert sichuan_next_thrower(PLAYERS, throws[:6]) == "ana"
    assert sichuan_next_thrower(PLAYERS, throws) is None
    s = sichuan_seating(PLAYERS, throws, "W")
    # chloé picks W; then counter-clockwise from her right: ben (11), ana, dan.
    assert s.seats == {"W": "chloé", "N": "ben", "E": "ana", "S": "dan"}
    assert s.leader == "W"
    with pytest.raises(ThrowError, match="incomplete: ben must throw next"):
        sichuan_seating(PLAYERS, throws[:4], "E")
    with pytest.raises(ThrowError, match="throw 5: thrown by chloé, but ben throws now"):
        sichuan_seating(PLAYERS, [*throws[:4], ("chloé", [1, 1])], "E")
    with pytest.raises(ThrowError, match="throw 2: die 7 is out of range"):
        sichuan_next_thrower(PLAYERS, [("ana", [1, 1]), ("ben", [7, 1])])
    with pytest.raises(ThrowError, match="not expected"):
        sichuan_seating(PLAYERS, [*throws, ("dan", [1, 1])], "E")


def test_wsom_seating() -> None:
    """ana (first thrower, chair 0) throws 3+3 = 6: the count lands on her right, ben. Ben
    throws 4+3 = 7: opposite ben, dan, draws first; 7 is odd, so from the odd end."""
    row = ["N", "E", "W", "S"]  # from the odd tile to the even tile
    s = wsom_seating(PLAYERS, row, "ana", [3, 3], [4, 3])
    assert s.seats == {"N": "dan", "E": "ana", "W": "ben", "S": "chloé"}
    # An even second throw draws from the even end: 2+2 = 4 -> left of ben = ana.
    s = wsom_seating(PLAYERS, row, "ana", [3, 3], [2, 2])
    assert s.seats == {"S": "ana", "W": "ben", "E": "chloé", "N": "dan"}
    assert s.leader == "E"
    with pytest.raises(DealError, match="unknown player 'eve'"):
        wsom_seating(PLAYERS, row, "eve", [3, 3], [2, 2])
    with pytest.raises(ThrowError, match="second throw: 1 die, expected 2"):
        wsom_seating(PLAYERS, row, "ana", [3, 3], [2])


@settings(max_examples=80, deadline=None)
@given(
    values=st.lists(st.integers(1, 6), min_size=4, max_size=60),
    resolve=st.sampled_from(["top", "all"]),
)
def test_ranking_is_a_permutation_and_respects_first_values(
    values: list[int], resolve: str
) -> None:
    """Feeding throws as the ranking asks for them: a full order of the players once done,
    and a player with a strictly higher first throw always ranks above."""
    players = ["a", "b", "c", "d"]
    throws: list[tuple[str, int]] = []
    it = iter(values)
    while True:
        r = rank_by_throws(players, throws, resolve=resolve)  # type: ignore[arg-type]
        if r.order is not None:
            break
        v = next(it, None)
        if v is None:
            return  # ran out of dice before the ties settled: nothing to check
        assert r.next_thrower is not None
        throws.append((r.next_thrower, v))
    assert sorted(r.order) == players
    first = dict(throws[:4])
    for hi in players:
        for lo in players:
            if first[hi] > first[lo]:
                assert r.order.index(hi) < r.order.index(lo)
    if resolve == "all":
        assert r.used == len(throws)


def test_the_leader_role_passes_to_the_right() -> None:
    """TABLE.md section 5: counter-clockwise, the seat at the leader's right (s + 1)."""
    assert [next_leader(s) for s in SEATS] == ["S", "W", "N", "E"]
    game = WenzhouGame(leader="W")
    assert wenzhou_after_hand(game, "S").leader == next_leader("W") == "N"
    assert wenzhou_after_hand(game, None).leader == "N"
    assert wenzhou_after_hand(game, "W").leader == "W"  # a leader who wins stays
