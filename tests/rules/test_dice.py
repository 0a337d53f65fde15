"""Dice counting, next_throw (the controller drives the dice with it) and throw validation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.deal import deal
from rules.dealt import Throw, ThrowError
from rules.dice import (
    Settled,
    ThrowRequest,
    designated_wall,
    next_throw,
    progress,
    settle,
    throws_from_dice,
)
from rules.profiles import load_profile
from rules.words import SEATS
from tests.support.deals import T, check_accounting, shuffled_manifest

WENZHOU = load_profile("wenzhou")
SICHUAN = load_profile("sichuan")
SIMPLIFIED = load_profile("simplified")


def R(by: str, count: int, purpose: str) -> ThrowRequest:
    return ThrowRequest.model_validate({"by": by, "count": count, "purpose": purpose})


# The seeds' table (WSOM "comptage des dés", arrêté Sichuan chapter), thrower-relative:
# 5, 9 -> the thrower; 2, 6, 10 -> his right (s+1); 3, 7, 11 -> opposite; 4, 8, 12 -> left.
SEED_TABLE = {5: 0, 9: 0, 2: 1, 6: 1, 10: 1, 3: 2, 7: 2, 11: 2, 4: 3, 8: 3, 12: 3}


@pytest.mark.parametrize("thrower", SEATS)
@pytest.mark.parametrize("total", sorted(SEED_TABLE))
def test_dice_counting_matches_the_seeds(thrower: str, total: int) -> None:
    expected = SEATS[(SEATS.index(thrower) + SEED_TABLE[total]) % 4]
    assert designated_wall(thrower, total) == expected  # type: ignore[arg-type]


def test_wenzhou_text_for_leader_east() -> None:
    """The arrêté's Wenzhou text (leader East): 2/6/10 South, 3/7/11 West, 4/8/12 North."""
    names = {2: "S", 6: "S", 10: "S", 3: "W", 7: "W", 11: "W", 4: "N", 8: "N", 12: "N"}
    names |= {5: "E", 9: "E"}
    for total, wall in names.items():
        assert designated_wall("E", total) == wall


def test_next_throw_leader_then_owner() -> None:
    assert next_throw(WENZHOU, "S", []) == R("S", 2, "wall")
    assert next_throw(WENZHOU, "S", [T("S", 1, 2)]) == R("N", 2, "breach")  # 3 -> opposite
    assert next_throw(WENZHOU, "S", [T("S", 1, 3)]) == R("E", 2, "breach")  # 4 -> his left
    assert next_throw(WENZHOU, "S", [T("S", 1, 1)]) == R("W", 2, "breach")  # 2 -> his right
    assert next_throw(WENZHOU, "S", [T("S", 4, 5)]) == R("S", 2, "breach")  # 9 -> himself
    assert next_throw(WENZHOU, "S", [T("S", 1, 3), T("E", 6, 6)]) is None
    assert next_throw(SICHUAN, "N", [T("N", 1, 1)]) == R("E", 2, "breach")


@pytest.mark.parametrize(
    ("throws", "message"),
    [
        ([T("E", 1, 2)], r"throw 1 \(1\+2\): thrown by E, but S throws 2 dice for the designated"),
        ([T("S", 1, 2, 3)], r"throw 1 \(1\+2\+3\): 3 dice, but S throws 2 dice"),
        ([T("S", 7, 1)], r"throw 1 \(7\+1\): die 7 is out of range 1..6"),
        ([T("S", 1, 2), T("S", 1, 1)], r"throw 2 \(1\+1\): thrown by S, but N throws 2 dice"),
        ([T("S", 1, 2), T("N", 6)], r"throw 2 \(6\): 1 die, but N throws 2 dice for the breach"),
        (
            [T("S", 1, 2), T("N", 1, 1), T("S", 1, 1)],
            r"throw 3 \(1\+1\): not expected, the dice are complete after 2 throws",
        ),
    ],
)
def test_next_throw_refuses_bad_throws(throws: list[Throw], message: str) -> None:
    with pytest.raises(ThrowError, match=message):
        next_throw(WENZHOU, "S", throws)


def test_throw_model_refuses_nonsense() -> None:
    with pytest.raises(ValueError, match="by"):
        T("X", 1, 2)
    with pytest.raises(ValueError, match="dice"):
        T("E")
    with pytest.raises(ValueError, match="greater than or equal to 1"):
        T("E", 0, 3)


def test_deal_refuses_incomplete_throws() -> None:
    m = shuffled_manifest(WENZHOU)
    with pytest.raises(ThrowError, match="incomplete: W throws 2 dice for the breach"):
        deal(WENZHOU, m, "E", [T("E", 1, 2)])
    with pytest.raises(ThrowError, match="thrown by S, but E throws"):
        deal(WENZHOU, m, "E", [T("S", 1, 2), T("W", 1, 1)])


# --------------------------------------------------------------------------- simplified


def test_simplified_round_then_player_a() -> None:
    assert next_throw(SIMPLIFIED, "E", []) == R("E", 1, "order")
    so_far = [T("E", 3), T("S", 5)]
    assert next_throw(SIMPLIFIED, "E", so_far) == R("W", 1, "order")
    so_far += [T("W", 6), T("N", 2)]
    assert next_throw(SIMPLIFIED, "E", so_far) == R("W", 2, "breach")
    assert next_throw(SIMPLIFIED, "E", [*so_far, T("W", 4, 5)]) is None
    # ``leader`` plays no part: the round picks A.
    assert next_throw(SIMPLIFIED, "N", so_far) == R("W", 2, "breach")


def test_simplified_ties_are_rethrown_by_the_tied_only() -> None:
    so_far = [T("E", 5), T("S", 5), T("W", 3), T("N", 5)]
    assert next_throw(SIMPLIFIED, "E", so_far) == R("E", 1, "tie")
    so_far += [T("E", 4)]
    assert next_throw(SIMPLIFIED, "E", so_far) == R("S", 1, "tie")
    so_far += [T("S", 6)]
    assert next_throw(SIMPLIFIED, "E", so_far) == R("N", 1, "tie")
    so_far += [T("N", 6)]  # S and N tie again on 6
    assert next_throw(SIMPLIFIED, "E", so_far) == R("S", 1, "tie")
    so_far += [T("S", 1), T("N", 2)]
    assert next_throw(SIMPLIFIED, "E", so_far) == R("N", 2, "breach")
    full = [*so_far, T("N", 3, 3)]
    s = deal(SIMPLIFIED, shuffled_manifest(SIMPLIFIED), "E", full)
    assert s.leader == "N"  # the round picks N, whatever seat the table expected
    assert s.count == 2 + 6  # N's deciding die is his last single die, 2
    with pytest.raises(
        ThrowError,
        match=r"throw 5 \(2\): thrown by W, but E throws 1 die for a re-throw of a tie",
    ):
        next_throw(SIMPLIFIED, "E", [T("E", 5), T("S", 5), T("W", 3), T("N", 5), T("W", 2)])


def test_simplified_ties_all_rethrow_when_the_profile_says_so() -> None:
    data = SIMPLIFIED.model_dump()
    data["dice"]["ties"] = "all"
    from rules.profiles import profile_from_data

    profile = profile_from_data(data)
    so_far = [T("E", 5), T("S", 5), T("W", 3), T("N", 1)]
    assert next_throw(profile, "E", so_far) == R("E", 1, "tie")
    so_far += [T("E", 2)]
    assert next_throw(profile, "E", so_far) == R("S", 1, "tie")
    so_far += [T("S", 2), T("W", 4)]
    assert next_throw(profile, "E", so_far) == R("N", 1, "tie")
    so_far += [T("N", 1)]
    assert next_throw(profile, "E", so_far) == R("W", 2, "breach")


def test_simplified_short_form() -> None:
    m = shuffled_manifest(SIMPLIFIED)
    short = deal(SIMPLIFIED, m, "W", [T("W", 6), T("W", 4, 5)])
    full = deal(SIMPLIFIED, m, "W", [T("E", 3), T("S", 5), T("W", 6), T("N", 2), T("W", 4, 5)])
    assert short.hands == full.hands and short.colline == full.colline
    assert short.count == full.count == 15
    with pytest.raises(ThrowError, match=r"deciding die must be 2\.\.6"):
        deal(SIMPLIFIED, m, "W", [T("W", 1), T("W", 4, 5)])
    with pytest.raises(ThrowError, match="thrown by S, but W throws 2 dice"):
        deal(SIMPLIFIED, m, "W", [T("W", 4), T("S", 4, 5)])
    # The dice choose the leader: the seat the table expected plays no part in the deal.
    assert deal(SIMPLIFIED, m, "E", [T("W", 4), T("W", 4, 5)]).leader == "W"
    assert deal(SIMPLIFIED, m, None, [T("W", 4), T("W", 4, 5)]).leader == "W"
    # A leader named with the dice written out must be the one they pick.
    with pytest.raises(ThrowError, match=r"leader E does not match.*makes W player A"):
        throws_from_dice(SIMPLIFIED, "E", [[3], [5], [6], [2], [4, 5]])
    assert throws_from_dice(SIMPLIFIED, "W", [[3], [5], [6], [2], [4, 5]])[-1] == T("W", 4, 5)


def test_throws_from_dice_assigns_the_throwers() -> None:
    assert throws_from_dice(WENZHOU, "E", [[3, 4], [5, 6]]) == [T("E", 3, 4), T("W", 5, 6)]
    assert throws_from_dice(SIMPLIFIED, "S", [[5], [3, 4]]) == [T("S", 5), T("S", 3, 4)]
    assert throws_from_dice(SIMPLIFIED, None, [[5], [5], [3], [1], [2], [6], [3, 4]]) == [
        T("E", 5), T("S", 5), T("W", 3), T("N", 1), T("E", 2), T("S", 6), T("S", 3, 4),
    ]  # fmt: skip
    with pytest.raises(ThrowError, match=r"throw 2 \(5\): 1 die, but W throws 2 dice"):
        throws_from_dice(WENZHOU, "E", [[3, 4], [5]])
    with pytest.raises(ThrowError, match=r"throw 3 \(1\+1\): not expected"):
        throws_from_dice(WENZHOU, "E", [[3, 4], [5, 6], [1, 1]])
    with pytest.raises(ThrowError, match="die 9 is out of range"):
        throws_from_dice(WENZHOU, "E", [[3, 4], [5, 9]])
    with pytest.raises(ThrowError, match="the leader must be named for wenzhou"):
        throws_from_dice(WENZHOU, None, [[3, 4], [5, 6]])
    with pytest.raises(ThrowError, match=r"the leader \(player A\) must be named"):
        throws_from_dice(SIMPLIFIED, None, [[5], [3, 4]])


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(["wenzhou", "sichuan", "wsom", "simplified"]),
    leader=st.sampled_from(SEATS),
    seed=st.integers(0, 2**16),
    dice=st.lists(st.integers(1, 6), min_size=80, max_size=80),
)
def test_driving_the_dice_with_next_throw_always_ends_in_a_deal(
    name: str, leader: str, seed: int, dice: list[int]
) -> None:
    """Whatever the dice show, following next_throw gives throws that deal() accepts."""
    profile = load_profile(name)
    throws: list[Throw] = []
    faces = iter(dice)
    boosted = False
    while (req := next_throw(profile, leader, throws)) is not None:  # type: ignore[arg-type]
        values = [next(faces, 6 - len(throws) % 6) for _ in range(req.count)]
        if len(throws) > 40 and req.count == 1:
            # Ties that go on and on: the next single die wins, the others lose.
            values, boosted = [1 if boosted else 6], True
        throws.append(Throw(by=req.by, dice=values))
    state = deal(profile, shuffled_manifest(profile, seed), leader, throws)  # type: ignore[arg-type]
    # The rules settle the leader: given in three rule sets; the simplified rules' player A
    # throws the last two dice.
    simplified = profile.dice.procedure == "single_die_round"
    assert state.leader == (throws[-1].by if simplified else leader)
    check_accounting(profile, state)
    assert state.throws == throws
    # one reading of the complete throws says what they decide, and deals the same
    ended = progress(profile, leader, throws)  # type: ignore[arg-type]
    assert isinstance(ended, Settled)
    assert ended == settle(profile, leader, throws)  # type: ignore[arg-type]
    manifest = shuffled_manifest(profile, seed)
    assert deal(profile, manifest, leader, throws, settled=ended) == state  # type: ignore[arg-type]
