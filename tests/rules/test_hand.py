"""Reading hands from text, and refusing the impossible ones with a message naming why."""

from __future__ import annotations

from typing import Any

import pytest

from rules.hand import (
    HandError,
    MeldKind,
    WinSource,
    build_hand,
    make_meld,
    parse_hand,
    parse_melds,
    parse_tiles,
)
from rules.penalties import irregularity
from rules.words import RuleSet


def test_spaced_and_compact_forms_read_the_same() -> None:
    spaced = parse_tiles("1m 2m 3m E E E C C")
    compact = parse_tiles("123m EEE CC")
    assert spaced == compact == ["1m", "2m", "3m", "E", "E", "E", "C", "C"]
    assert parse_tiles("123m456p789sEEO") == [
        "1m", "2m", "3m", "4p", "5p", "6p", "7s", "8s", "9s", "E", "E", "W",
    ]  # fmt: skip
    assert parse_tiles("O o 1f58f") == ["W", "W", "1f", "5f", "8f"]


@pytest.mark.parametrize(
    ("text", "message"),
    [("1x", "cannot read '1x'"), ("0m", "0m is not a tile"), ("12", "cannot read"),
     ("9f", "9f is not a tile"), ("123mZ", "at 'Z'")],
)  # fmt: skip
def test_unreadable_tiles_are_named(text: str, message: str) -> None:
    with pytest.raises(HandError, match=message):
        parse_tiles(text)


def test_melds_kinds_and_concealed_kong() -> None:
    melds = parse_melds("123m, EEE, 5p 5p 5p 5p, [7777s]")
    assert [m.kind for m in melds] == [MeldKind.CHOW, MeldKind.PUNG, MeldKind.KONG, MeldKind.KONG]
    assert [m.concealed for m in melds] == [False, False, False, True]
    assert melds[3].text() == "[7s 7s 7s 7s]"


def test_meld_jokers_and_white_dragons() -> None:
    (meld,) = parse_melds("5p 5p* 5p", joker="C")
    assert meld.faces == ("5p", "5p", "5p")
    assert sorted(meld.tiles) == ["5p", "5p", "C"]
    (meld,) = parse_melds("4s B 6s", joker="5s")
    assert meld.faces == ("4s", "5s", "6s")
    assert meld.tiles == ("4s", "B", "6s")
    (meld,) = parse_melds("BBB", joker="B")
    assert meld.faces == ("B", "B", "B")  # whites are the jokers, standing for themselves


@pytest.mark.parametrize(
    ("text", "message"),
    [("124m", "neither a chow"), ("EES", "neither"), ("12m", "a set has 3 tiles"),
     ("[123m]", "only a kong"), ("1111m2m", "a set has 3 tiles"), ("[111m, 1m]", "brackets"),
     ("5p 5p 5p*", "no joker is set"), ("8s9s1m", "neither"), ("SWN", "neither")],
)  # fmt: skip
def test_bad_melds_are_refused(text: str, message: str) -> None:
    with pytest.raises(HandError, match=message):
        parse_melds(text)


def test_winning_tile_added_or_found() -> None:
    short = parse_hand("sichuan", "123m 456m 789p 234s 5s", win_tile="5s", win_from="wall")
    full = parse_hand("sichuan", "123m 456m 789p 234s 55s", win_tile="5s", win_from="wall")
    assert short == full
    assert full.complete
    assert full.win_from is WinSource.WALL
    assert parse_hand("sichuan", "123m 456m 789p 234s 5s", win_tile="5s").win_from is (
        WinSource.DISCARD
    )


@pytest.mark.parametrize(
    ("variant", "tiles", "kwargs", "message"),
    [
        ("sichuan", "11111m 23456789p", {}, "5 copies of 1m: the 108-tile set holds 4"),
        ("simplified", "1f 1f 123m 456m 789m 11p 2p", {}, "2 copies of 1f"),
        ("sichuan", "123m 456m 789p 234s E", {}, "honour"),
        ("wenzhou", "123m 456m 789p 234s 555s EE 1f", {"joker": "C"}, "flower or season"),
        ("wsom", "123m 456m 789p 234s 55s", {"joker": "C"}, "without jokers"),
        ("wenzhou", "123m", {"joker": "1f"}, "joker face 1f"),
        ("wenzhou", "123m", {"joker": "Q"}, "joker face"),
        ("sichuan", "123m 456m 789p 234s 55s", {"win_from": "air"}, "unknown winning source"),
        ("sichuan", "123m 456m 789p 234s 55s", {"win_from": "wall"}, "needs the winning tile"),
        ("sichuan", "123m 456m 789p 234s 55s", {"win_tile": "1m 2m"}, "exactly one tile"),
        ("sichuan", "123m 456m 789p 234s 55s", {"win_tile": "1f"}, "flower or season"),
        ("sichuan", "123m 456m 789p 234s 5s", {"win_tile": "E"}, "winning tile: E is an honour"),
        ("sichuan", "123m 456m 789p 555s 5s", {"win_tile": "5s"}, "5 copies of 5s"),
        ("sichuan", "123m 456m 789p 234s", {"win_tile": "5s"}, "13 tiles where sichuan needs 14"),
    ],
)
def test_impossible_hands_are_refused(
    variant: str, tiles: str, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(HandError, match=message):
        parse_hand(variant, tiles, **kwargs)


def test_meld_white_dragon_only_for_the_joker_face() -> None:
    with pytest.raises(HandError, match="no joker is set"):
        parse_hand("sichuan", "123m 456m 789p 55s", "4s 5s* 6s")
    odd = make_meld(["4s", "5s", "6s"], ["4s", "7s", "6s"])
    with pytest.raises(HandError, match="7s cannot stand for 5s"):
        build_hand(RuleSet.SICHUAN, parse_tiles("123m 456m 789p 55s"), [odd])
    whites = make_meld(["4s", "5s", "6s"], ["4s", "B", "6s"])
    with pytest.raises(HandError, match="stands only for the joker face C"):
        build_hand(RuleSet.WENZHOU, parse_tiles("123m 456m 789p 111s 55s"), [whites], joker="C")
    # a white dragon written for itself in a Wenzhou meld means the joker face
    hand = parse_hand("wenzhou", "123m 456m 789p 111s 99s", "4s B 6s", joker="5s")
    assert hand.melds[0].faces == ("4s", "5s", "6s")


@pytest.mark.parametrize(
    ("variant", "tiles", "held", "expected", "penalty"),
    [
        ("wenzhou", "123m 456m 789p 111s 999s EEE", 18, 17, "pays the winner"),
        ("wenzhou", "123m 456m 789p 111s 999s", 15, 16, "out of the hand"),
        ("sichuan", "123m 456m 789p 111s 99s", 14, 14, None),
        ("sichuan", "123m 456m 789p 111s 999s", 15, 14, "next own draw"),
        ("sichuan", "123m 456m 789p 11s", 11, 13, "regularise"),
        ("wsom", "123m 456m 789p 11s EEE SSS", 17, 14, "dead hand"),
        ("simplified", "123m 456m 789p 11s 5f", 11, 13, "dead hand"),
    ],
)
def test_wrong_counts_are_irregular_with_the_variants_penalty(
    variant: str, tiles: str, held: int, expected: int, penalty: str | None
) -> None:
    if penalty is None:
        assert parse_hand(variant, tiles).size == held
        return
    with pytest.raises(HandError) as caught:
        parse_hand(variant, tiles, joker="C" if variant == "wenzhou" else None)
    text = str(caught.value)
    assert f"{held} tiles where {variant} needs {expected}" in text
    assert penalty in text.replace("puts the hand back to the right count", "regularise")


def test_irregularity_flag() -> None:
    assert irregularity(RuleSet.SICHUAN, 13, expected=(13, 14)) is None
    flag = irregularity(RuleSet.WENZHOU, 15, expected=(16, 17))
    assert flag is not None
    assert flag.expected == 16
    assert "pays the winner" in flag.consequence
    assert "too few" in flag.message


def test_wenzhou_needs_its_joker_face() -> None:
    with pytest.raises(HandError, match="needs the joker face"):
        parse_hand("wenzhou", "123m 456m 789p 111s 999s EE")
