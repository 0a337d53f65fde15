"""The deal: hand-worked examples, every position written out."""

from __future__ import annotations

from rules.deal import deal
from rules.dice import joker_position
from rules.wall import take_live_end, wall_state
from rules.words import SEATS
from tests.support.deals import (
    SICHUAN,
    SIMPLIFIED,
    WENZHOU,
    WSOM,
    T,
    check_accounting,
    labels,
    shuffled_manifest,
    stacks,
)

# --------------------------------------------------------------------------- by hand


def test_wenzhou_by_hand_breach_past_the_wall_end() -> None:
    """Leader E throws 3+4 = 7: counting E=1, S=2, W=3, N=4, E=5, S=6, W=7 -> wall W.
    Joker: top tile of W stack 7. W throws 5+6 = 11: T = 18 > 17, so the count goes on
    onto wall W-1 = S: stack 1 of S is the 18th stack, the breach is on its left.
    Colline: S1 and the 7 stacks to its right, W17..W11. Deal from S2, 2 stacks a take."""
    m = shuffled_manifest(WENZHOU, seed=11)
    s = deal(WENZHOU, m, "E", [T("E", 3, 4), T("W", 5, 6)])
    assert s.designated_wall == "W"
    assert s.count == 18
    assert s.breach.label() == "S1b"
    assert s.joker is not None
    assert s.joker.position.label() == "W7t"
    assert s.joker.face == m.walls["W"][6][0]
    assert labels(s.colline_positions) == stacks("S", 1, 1) + [
        label for n in range(17, 10, -1) for label in stacks("W", n, n)
    ]
    assert s.seats == ["E", "S", "W", "N"]
    hp = {seat: labels(s.hand_positions[seat]) for seat in SEATS}
    assert hp["E"] == (
        stacks("S", 2, 3) + stacks("S", 10, 11) + stacks("E", 1, 2) + stacks("E", 9, 10) + ["E17t"]
    )
    assert hp["S"] == stacks("S", 4, 5) + stacks("S", 12, 13) + stacks("E", 3, 4) + stacks(
        "E", 11, 12
    )
    assert hp["W"] == stacks("S", 6, 7) + stacks("S", 14, 15) + stacks("E", 5, 6) + stacks(
        "E", 13, 14
    )
    assert hp["N"] == stacks("S", 8, 9) + stacks("S", 16, 17) + stacks("E", 7, 8) + stacks(
        "E", 15, 16
    )
    # Live wall: E17 bottom, all of N, then W1..W10; its last tile is next to the colline.
    assert labels(s.live_wall_positions) == ["E17b", *stacks("N", 1, 17), *stacks("W", 1, 10)]
    # The turned tile is in the live wall (d2 = 11 > 7), 47th tile from its front.
    assert s.live_wall_positions.index(s.joker.position) == 47
    assert s.hands["E"][0] == m.walls["S"][1][0]
    check_accounting(WENZHOU, s)


def test_wenzhou_by_hand_colline_crosses_onto_the_next_wall_and_holds_the_joker() -> None:
    """Leader N throws 1+1 = 2: N=1, E=2 -> wall E. Joker: E2 top. E throws 1+2: T = 5.
    Colline: E5 and 7 stacks to its right: E4..E1, then wall E+1 = S from its left end,
    S17, S16, S15. The joker's stack E2 lies in the colline (d2 = 3 <= 7)."""
    m = shuffled_manifest(WENZHOU, seed=12)
    s = deal(WENZHOU, m, "N", [T("N", 1, 1), T("E", 1, 2)])
    assert (s.designated_wall, s.count, s.breach.label()) == ("E", 5, "E5b")
    assert s.joker is not None and s.joker.position.label() == "E2t"
    assert labels(s.colline_positions) == [
        "E5t", "E5b", "E4t", "E4b", "E3t", "E3b", "E2t", "E2b",
        "E1t", "E1b", "S17t", "S17b", "S16t", "S16b", "S15t", "S15b",
    ]  # fmt: skip
    assert s.colline_positions.index(s.joker.position) == 6
    assert s.seats == ["N", "E", "S", "W"]
    hp = {seat: labels(s.hand_positions[seat]) for seat in SEATS}
    assert hp["N"] == (
        stacks("E", 6, 7) + stacks("E", 14, 15) + stacks("N", 5, 6) + stacks("N", 13, 14) + ["W4t"]
    )
    assert hp["E"] == stacks("E", 8, 9) + stacks("E", 16, 17) + stacks("N", 7, 8) + stacks(
        "N", 15, 16
    )
    assert hp["S"] == (
        stacks("E", 10, 11)
        + stacks("N", 1, 2)
        + stacks("N", 9, 10)
        + ["N17t", "N17b", "W1t", "W1b"]
    )
    assert hp["W"] == stacks("E", 12, 13) + stacks("N", 3, 4) + stacks("N", 11, 12) + stacks(
        "W", 2, 3
    )
    assert labels(s.live_wall_positions) == ["W4b", *stacks("W", 5, 17), *stacks("S", 1, 14)]
    check_accounting(WENZHOU, s)


def test_sichuan_by_hand_with_half_stacks() -> None:
    """Leader S throws 6+6 = 12 -> the seat at his left, E. E throws 5+6: T = 23. Wall E
    has 14 units (13 stacks and the half stack 14), so the count goes on onto wall N:
    the 23rd unit is N9. Deal from N10; N14 is a half stack (one tile, bottom tier); takes
    are 4 tiles, so they do not follow stack boundaries after it."""
    m = shuffled_manifest(SICHUAN, seed=13)
    s = deal(SICHUAN, m, "S", [T("S", 6, 6), T("E", 5, 6)])
    assert (s.designated_wall, s.count, s.breach.label(), s.joker) == ("E", 23, "N9b", None)
    assert s.colline == [] and s.colline_positions == []
    hp = {seat: labels(s.hand_positions[seat]) for seat in SEATS}
    assert hp["S"] == [
        "N10t", "N10b", "N11t", "N11b",
        "W4b", "W5t", "W5b", "W6t",
        "W12b", "W13t", "W13b", "W14b",
        "S7t", "S9t",
    ]  # fmt: skip
    assert hp["W"] == [
        "N12t", "N12b", "N13t", "N13b",
        "W6b", "W7t", "W7b", "W8t",
        "S1t", "S1b", "S2t", "S2b",
        "S7b",
    ]  # fmt: skip
    assert hp["N"] == [
        "N14b", "W1t", "W1b", "W2t",
        "W8b", "W9t", "W9b", "W10t",
        "S3t", "S3b", "S4t", "S4b",
        "S8t",
    ]  # fmt: skip
    assert hp["E"] == [
        "W2b", "W3t", "W3b", "W4t",
        "W10b", "W11t", "W11b", "W12t",
        "S5t", "S5b", "S6t", "S6b",
        "S8b",
    ]  # fmt: skip
    assert labels(s.live_wall_positions) == (
        ["S9b", *stacks("S", 10, 13), "S14b", *stacks("E", 1, 13), "E14b", *stacks("N", 1, 9)]
    )
    # A kong replacement comes from the other end: the top of N9 first, then its bottom.
    w = wall_state(s)
    first = take_live_end(w)
    second = take_live_end(first.wall)
    third = take_live_end(second.wall)
    assert [d.tile.pos.label() for d in (first, second, third)] == ["N9t", "N9b", "N8t"]
    check_accounting(SICHUAN, s)


def test_sichuan_breach_on_the_half_stack() -> None:
    """T = 14 is the half stack of the designated wall: the breach follows its single
    (bottom) tile, the deal starts at stack 1 of the wall on its left."""
    m = shuffled_manifest(SICHUAN, seed=14)
    s = deal(SICHUAN, m, "E", [T("E", 1, 4), T("E", 4, 5)])  # 5 -> E itself; T = 14
    assert (s.designated_wall, s.breach.label()) == ("E", "E14b")
    assert labels(s.hand_positions["E"])[:4] == ["N1t", "N1b", "N2t", "N2b"]
    assert s.live_wall_positions[-1].label() == "E14b"
    assert take_live_end(wall_state(s)).tile.pos.label() == "E14b"


def test_simplified_by_hand_lift_onto_t_minus_1_and_t_minus_6() -> None:
    """Single dice E 3, S 5, W 6, N 2: W is player A, his wall is designated. W throws 4+5:
    T = 6 + 9 = 15. Stack W15 is lifted: its top onto W14, its bottom onto W9 (the sixth
    stack to the right). Colline: W14..W9 and the two lifted tiles, 14 tiles, never drawn.
    Deal from W16, 2 tiles a take from W, six rounds, then 1 each W N E S W."""
    m = shuffled_manifest(SIMPLIFIED, seed=15)
    throws = [T("E", 3), T("S", 5), T("W", 6), T("N", 2), T("W", 4, 5)]
    s = deal(SIMPLIFIED, m, "W", throws)
    assert (s.designated_wall, s.count, s.breach.label(), s.joker) == ("W", 15, "W15b", None)
    assert s.seats == ["W", "N", "E", "S"]
    assert labels(s.colline_positions) == [
        "W15t", "W14t", "W14b", "W13t", "W13b", "W12t", "W12b",
        "W11t", "W11b", "W10t", "W10b", "W15b", "W9t", "W9b",
    ]  # fmt: skip
    hp = {seat: labels(s.hand_positions[seat]) for seat in SEATS}
    assert hp["W"] == [
        "W16t", "W16b", "S2t", "S2b", "S6t", "S6b", "S10t", "S10b",
        "S14t", "S14b", "S18t", "S18b", "E4t", "E6t",
    ]  # fmt: skip
    assert hp["N"] == stacks("W", 17, 17) + [
        lab for n in (3, 7, 11, 15) for lab in stacks("S", n, n)
    ] + stacks("E", 1, 1) + ["E4b"]
    assert hp["E"] == stacks("W", 18, 18) + [
        lab for n in (4, 8, 12, 16) for lab in stacks("S", n, n)
    ] + stacks("E", 2, 2) + ["E5t"]
    assert hp["S"] == [lab for n in (1, 5, 9, 13, 17) for lab in stacks("S", n, n)] + stacks(
        "E", 3, 3
    ) + ["E5b"]
    assert labels(s.live_wall_positions) == (
        ["E6b", *stacks("E", 7, 18), *stacks("N", 1, 18), *stacks("W", 1, 8)]
    )
    # Flowers and kongs draw from the wall at the right of the colline: W8 top first.
    assert take_live_end(wall_state(s)).tile.pos.label() == "W8t"
    check_accounting(SIMPLIFIED, s)


def test_simplified_t_below_7_lifts_onto_the_wall_to_the_right() -> None:
    """A = E with die 2, E throws 1+1: T = 4. E4's top goes onto E3; T-6 = -2 counts past
    E1 onto the left end of wall E+1 = S: stacks S18, S17, S16, and E4's bottom goes on
    S16."""
    m = shuffled_manifest(SIMPLIFIED, seed=16)
    s = deal(SIMPLIFIED, m, "E", [T("E", 2), T("E", 1, 1)])
    assert (s.count, s.breach.label()) == (4, "E4b")
    assert labels(s.colline_positions) == [
        "E4t", "E3t", "E3b", "E2t", "E2b", "E1t", "E1b",
        "S18t", "S18b", "S17t", "S17b", "E4b", "S16t", "S16b",
    ]  # fmt: skip
    assert labels(s.hand_positions["E"])[:2] == ["E5t", "E5b"]
    assert s.live_wall_positions[-1].label() == "S15b"
    check_accounting(SIMPLIFIED, s)


def test_wsom_breach_exactly_at_the_wall_end() -> None:
    """Leader W throws 2+3 = 5 -> his own wall. W throws 6+6: T = 17, the last stack of W;
    the deal starts at stack 1 of wall S (W-1)."""
    m = shuffled_manifest(WSOM, seed=17)
    s = deal(WSOM, m, "W", [T("W", 2, 3), T("W", 6, 6)])
    assert (s.designated_wall, s.breach.label()) == ("W", "W17b")
    hp = {seat: labels(s.hand_positions[seat]) for seat in SEATS}
    assert s.seats == ["W", "N", "E", "S"]
    # Three rounds of 4 (2 stacks), then 1 each, then the leader 1 more.
    assert hp["W"] == stacks("S", 1, 2) + stacks("S", 9, 10) + ["S17t", "S17b", "E1t", "E1b"] + [
        "E8t",
        "E10t",
    ]
    assert hp["N"] == stacks("S", 3, 4) + stacks("S", 11, 12) + stacks("E", 2, 3) + ["E8b"]
    assert hp["E"] == stacks("S", 5, 6) + stacks("S", 13, 14) + stacks("E", 4, 5) + ["E9t"]
    assert hp["S"] == stacks("S", 7, 8) + stacks("S", 15, 16) + stacks("E", 6, 7) + ["E9b"]
    assert labels(s.live_wall_positions) == (
        ["E10b", *stacks("E", 11, 17), *stacks("N", 1, 17), *stacks("W", 1, 17)]
    )
    check_accounting(WSOM, s)


def test_joker_position_after_the_first_throw_matches_the_deal() -> None:
    m = shuffled_manifest(WENZHOU)
    first = T("S", 6, 5)  # 11 -> opposite of S: N
    pos = joker_position(WENZHOU, "S", first)
    assert pos is not None and pos.label() == "N11t"
    s = deal(WENZHOU, m, "S", [first, T("N", 2, 2)])
    assert s.joker is not None and s.joker.position == pos
    assert joker_position(SICHUAN, "S", first) is None
