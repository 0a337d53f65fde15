"""The deal's manifests: from the board's order, checked against the set and the profile."""

from __future__ import annotations

import pytest

from rules.deal import deal
from rules.dealt import DealError, Manifest, ManifestError, ThrowError
from rules.dice import settle
from rules.manifest import ManifestSizeError, manifest_from_ring, validate_manifest
from rules.tiles import tile_list
from rules.words import SEATS
from tests.support.deals import (
    SICHUAN,
    SIMPLIFIED,
    WENZHOU,
    T,
    check_accounting,
    labels,
    shuffled_manifest,
)

# --------------------------------------------------------------------------- manifests


def test_manifest_from_the_board_order() -> None:
    tiles = tile_list(108)
    m = manifest_from_ring(SICHUAN, tiles)
    assert [len(st) for st in m.walls["E"]] == [2] * 13 + [1]
    assert m.walls["E"][0] == tiles[0:2] and m.walls["E"][13] == [tiles[26]]
    assert m.walls["S"][0] == tiles[27:29]
    assert m.walls["N"][13] == [tiles[107]]
    assert m.board_order() == tiles
    with pytest.raises(ManifestSizeError, match="the board sent 107 tiles, the layout holds 108"):
        manifest_from_ring(SICHUAN, tiles[:-1])
    with pytest.raises(ManifestSizeError) as err:
        manifest_from_ring(SICHUAN, [*tiles, "1m"])
    assert (err.value.got, err.value.expected) == (109, 108)
    assert isinstance(err.value, ManifestError)


def test_the_board_order_is_checked_against_the_set_once() -> None:
    """manifest_from_ring is the one check of the board's list: a face too many is refused
    there, and deal(checked=True) trusts it instead of checking again."""
    tiles = ["?"] * 131 + ["1m"] * 5
    with pytest.raises(ManifestError, match="tile 1m appears 5 times, the set has 4"):
        manifest_from_ring(WENZHOU, tiles)
    with pytest.raises(ManifestError, match="tile 1f is not in the 136-tile set"):
        manifest_from_ring(WENZHOU, ["?"] * 135 + ["1f"])
    bad = Manifest.model_validate({"walls": {**shuffled_manifest(WENZHOU).walls}})
    walls = {seat: [list(st) for st in bad.walls[seat]] for seat in SEATS}
    walls["N"][0] = ["1f", "1f"]  # not in the set: only a check would see it
    unchecked = Manifest.model_validate({"walls": walls})
    throws = [T("E", 3, 4), T("W", 5, 6)]
    with pytest.raises(ManifestError, match="1f is not in the 136-tile set"):
        deal(WENZHOU, unchecked, "E", throws)
    assert deal(WENZHOU, unchecked, "E", throws, checked=True).manifest == unchecked


def test_deal_settles_the_leader() -> None:
    """rules.dice.settle: given in Wenzhou, Sichuan, WSOM; the dice's player A in Simplified."""
    m = shuffled_manifest(WENZHOU)
    assert deal(WENZHOU, m, "S", [T("S", 3, 4), T("N", 5, 6)]).leader == "S"
    with pytest.raises(ThrowError, match="the leader must be named for wenzhou"):
        deal(WENZHOU, m, None, [T("S", 3, 4), T("N", 5, 6)])
    simplified = shuffled_manifest(SIMPLIFIED)
    round_ = [T("E", 3), T("S", 5), T("W", 6), T("N", 2), T("W", 4, 5)]
    for given in (*SEATS, None):
        state = deal(SIMPLIFIED, simplified, given, round_)
        assert (state.leader, state.seats[0], state.designated_wall) == ("W", "W", "W")
        assert settle(SIMPLIFIED, given, round_).leader == "W"


def test_manifest_input_is_canonical() -> None:
    m = shuffled_manifest(WENZHOU)
    data = m.model_dump()
    walls = data["walls"]
    # West written as the French O, walls in another order: same manifest.
    for st in walls["S"]:
        st[:] = ["O" if t == "W" else t for t in st]
    reordered = {"walls": {k: walls[k] for k in ("N", "W", "S", "E")}}
    m2 = Manifest.model_validate(reordered)
    assert m2.model_dump_json() == m.model_dump_json()


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda w: w["E"].pop(), "manifest: wall E has 16 stacks, the layout has 17"),
        (
            lambda w: w["S"][3].pop(),
            "manifest: wall S stack 4 holds 1 tile, the layout has 2 there",
        ),
        (lambda w: w["W"][0].__setitem__(0, "1f"), "manifest: tile 1f is not in the 136-tile set"),
    ],
)
def test_manifest_against_the_profile(mutate: object, message: str) -> None:
    data = shuffled_manifest(WENZHOU).model_dump()
    mutate(data["walls"])  # type: ignore[operator]
    with pytest.raises(ManifestError) as err:
        validate_manifest(WENZHOU, Manifest.model_validate(data))
    assert str(err.value) == message


def test_manifest_with_a_tile_too_many() -> None:
    data = shuffled_manifest(WENZHOU).model_dump()
    face = data["walls"]["E"][0][0]
    other = next(t for st in data["walls"]["N"] for t in st if t != face)
    for st in data["walls"]["N"]:
        if other in st:
            st[st.index(other)] = face
            break
    with pytest.raises(ManifestError, match=f"tile {face} appears 5 times, the set has 4"):
        deal(WENZHOU, Manifest.model_validate(data), "E", [T("E", 1, 1), T("E", 1, 1)])


def test_malformed_manifests_name_the_place() -> None:
    data = shuffled_manifest(WENZHOU).model_dump()
    data["walls"]["S"][2][1] = "X9"
    with pytest.raises(ManifestError, match=r"walls: wall S stack 3: unknown tile 'X9'"):
        Manifest.from_json(Manifest.model_construct(**data).model_dump_json())
    with pytest.raises(ManifestError, match="wall N is missing"):
        Manifest.from_json('{"walls": {"E": [], "S": [], "W": []}}')
    with pytest.raises(ManifestError, match="not valid JSON"):
        Manifest.from_json("{walls")
    with pytest.raises(ManifestError, match=r"stack 1: expected \[top, bottom\] or \[single\]"):
        Manifest.from_json('{"walls": {"E": [["1m","2m","3m"]], "S": [], "W": [], "N": []}}')


def test_unknown_tiles_deal_positions() -> None:
    """A board without a reader: every tile '?'; the deal deals positions."""
    m = manifest_from_ring(WENZHOU, ["?"] * 136)
    s = deal(WENZHOU, m, "E", [T("E", 3, 4), T("W", 5, 6)])
    assert s.joker is not None and s.joker.face == "?"
    assert labels(s.hand_positions["E"])[:2] == ["S2t", "S2b"]
    check_accounting(WENZHOU, s)
    # Partly read: the known tiles may not exceed the set.
    tiles = ["?"] * 131 + ["1m"] * 5
    with pytest.raises(ManifestError, match="tile 1m appears 5 times"):
        deal(WENZHOU, manifest_from_ring(WENZHOU, tiles), "E", [T("E", 1, 1), T("E", 1, 1)])


def test_bad_leader_and_tile_set() -> None:
    m = shuffled_manifest(WENZHOU)
    with pytest.raises(DealError, match="unknown seat 'X'"):
        deal(WENZHOU, m, "X", [T("E", 1, 1), T("E", 1, 1)])  # type: ignore[arg-type]
    with pytest.raises(DealError, match="unknown tile set 'C'"):
        deal(WENZHOU, m, "E", [T("E", 1, 1), T("E", 1, 1)], tile_set="C")  # type: ignore[arg-type]
