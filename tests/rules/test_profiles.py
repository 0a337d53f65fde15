"""Profiles: the built-ins, casino TOML files, and impossible profiles refused by field."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.deal import deal
from rules.dealt import Throw
from rules.dice import next_throw
from rules.profiles import (
    BUILTIN_PROFILES,
    PROFILE_DIR,
    ProfileError,
    load_profile,
    profile_from_data,
)
from rules.words import SEATS
from tests.support.deals import check_accounting, shuffled_manifest


def test_builtins_are_what_table_md_says() -> None:
    w = load_profile("wenzhou")
    assert (w.tiles, w.counting, w.colline.size, w.joker.kind) == (
        136,
        "pair",
        16,
        "indicator",
    )
    assert all(w.layout.heights(s) == (2,) * 17 for s in SEATS)
    assert w.deal.takes() == [(o, 4) for _ in range(4) for o in range(4)] + [(0, 1)]
    assert (w.replacement.source, w.colline.replenish) == ("colline", "live_end")

    s = load_profile("sichuan")
    assert s.tiles == 108 and s.colline.size == 0 and s.joker.kind == "none"
    assert all(s.layout.heights(x) == (2,) * 13 + (1,) for x in SEATS)
    assert s.deal.takes() == [(o, 4) for _ in range(3) for o in range(4)] + [
        (o, 1) for o in range(4)
    ] + [(0, 1)]
    assert s.replacement.source == "live_end"

    wsom = load_profile("wsom")
    assert wsom.tiles == 136 and wsom.deal.takes() == s.deal.takes()

    simple = load_profile("simplified")
    assert simple.tiles == 144 and simple.colline.size == 14
    assert (simple.breach.kind, simple.breach.lift_to) == ("lift", (1, 6))
    assert simple.dice.procedure == "single_die_round"
    assert simple.deal.takes() == [(o, 2) for _ in range(6) for o in range(4)] + [
        (0, 1), (1, 1), (2, 1), (3, 1), (0, 1),
    ]  # fmt: skip
    for name in BUILTIN_PROFILES:
        p = load_profile(name)
        assert p.name == p.variant == name and p.version == "1"


def _data(name: str = "wenzhou") -> dict[str, Any]:
    return copy.deepcopy(load_profile(name).model_dump(mode="json"))


def _refused(data: dict[str, Any]) -> str:
    with pytest.raises(ProfileError) as err:
        profile_from_data(data, "test")
    return str(err.value)


def test_tiles_that_do_not_fit_the_layout() -> None:
    data = _data()
    data["layout"]["E"] = [2] * 16
    assert _refused(data) == "profile test: layout: the walls hold 134 tiles but tiles says 136"


def test_a_deal_larger_than_the_wall() -> None:
    data = _data()
    data["deal"] = {
        "steps": [{"tiles": 36, "rounds": 1}],
        "hand_sizes": {"leader": 36, "others": 36},
    }
    assert _refused(data) == "profile test: deal: deals 144 tiles, more than the 136 of the walls"


def test_a_colline_bigger_than_what_is_left() -> None:
    data = _data()
    data["colline"]["size"] = 72
    assert _refused(data) == (
        "profile test: colline.size: 72 tiles, more than the 71 left after the deal of 65"
    )


def test_hand_sizes_must_match_the_steps() -> None:
    data = _data()
    data["deal"]["hand_sizes"]["leader"] = 16
    assert "deal.hand_sizes: the steps give [17, 16, 16, 16]" in _refused(data)


def test_dice_counts_past_the_ring() -> None:
    data = _data()
    data["dice"]["faces"] = 20  # 2 throws of 2d20: up to 80 > 68 stacks
    assert _refused(data) == (
        "profile test: dice: the largest count 80 goes past the 68 stacks of the whole ring"
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["joker"].update(kind="indicator"), "joker.kind: an indicator needs"),
        (lambda d: d.update(counting="tile"), "breach.kind: a lift breach counts stacks"),
        (lambda d: d["breach"].update(lift_to=[1]), "breach.lift_to: two distinct stack offsets"),
        (lambda d: d["colline"].update(size=16), "colline.size: a lift breach onto stacks up to 6"),
        (lambda d: d["replacement"].update(source="colline"), None),
    ],
)
def test_simplified_variations_refused(change: Any, message: str | None) -> None:
    data = _data("simplified")
    change(data)
    if message is None:
        # A colline that replacements come from is allowed: it is only replenished on request.
        assert profile_from_data(data).replacement.source == "colline"
    else:
        assert message in _refused(data)


def test_more_refusals_name_their_field() -> None:
    data = _data("sichuan")
    data["replacement"]["source"] = "colline"
    assert "replacement.source: 'colline' needs a colline" in _refused(data)
    data = _data("sichuan")
    data["colline"] = {"size": 4, "replenish": "live_end"}
    assert "colline.replenish: only a colline that replacements are drawn from" in _refused(data)
    data = _data("sichuan")
    data["breach"]["kind"] = "lift"
    data["breach"]["lift_to"] = [1, 6]
    assert "layout: a lift breach needs full stacks" in _refused(data)
    data = _data()
    data["layout"]["E"] = [2] * 16 + [3]
    assert _refused(data).startswith("profile test: layout.E.16: Input should be less than or")
    data = _data()
    data["colour"] = "red"
    assert _refused(data) == "profile test: colour: Extra inputs are not permitted"
    data = _data()
    data["deal"]["steps"][0]["seats"] = [0, 4]
    assert "deal.steps.0.seats.1" in _refused(data)
    data = _data()
    data["tiles"] = 100
    assert "tiles: Input should be 108, 136 or 144" in _refused(data)


def test_the_former_name_tile_set_is_still_read(tmp_path: Path) -> None:
    """A profile file written when the number of tiles was called tile_set (a string) loads
    as it did; given beside tiles, or with another value, it is refused in one line."""
    wenzhou = (PROFILE_DIR / "wenzhou.toml").read_text("utf-8")
    assert "\ntiles = 136\n" in wenzhou
    old = tmp_path / "old.toml"
    old.write_text(wenzhou.replace("\ntiles = 136\n", '\ntile_set = "136"\n'), "utf-8")
    assert load_profile(old) == load_profile("wenzhou")
    child = tmp_path / "child.toml"  # its own former key wins over its base's tiles
    child.write_text('base = "sichuan"\nname = "child"\ntile_set = "136"\n', "utf-8")
    with pytest.raises(ProfileError, match=r"child\.toml: layout: the walls hold 108 tiles but"):
        load_profile(child)
    both = tmp_path / "both.toml"
    both.write_text(
        wenzhou.replace("\ntiles = 136\n", '\ntiles = 136\ntile_set = "136"\n'), "utf-8"
    )
    with pytest.raises(ProfileError) as err:
        load_profile(both)
    assert str(err.value) == (
        f"profile {both}: tile_set: the former name of tiles, given beside it; keep tiles"
    )
    wrong = tmp_path / "wrong.toml"
    wrong.write_text(wenzhou.replace("\ntiles = 136\n", "\ntile_set = 136\n"), "utf-8")
    with pytest.raises(ProfileError) as err:
        load_profile(wrong)
    assert str(err.value) == (
        f'profile {wrong}: tile_set: 136 is not "108", "136" or "144" (tile_set is the former '
        "name of tiles: write tiles = 108, 136 or 144)"
    )


def test_une_tuile_option(tmp_path: Path) -> None:
    """Seed 004 rule 10: the built-in simplified profile takes the Decision (one face); a
    casino's profile may take the other reading; other rule sets have no such option."""
    assert load_profile("simplified").announce.une_tuile == "one_face"
    assert load_profile("wenzhou").announce.une_tuile == "one_face"  # the default, unused
    ready = tmp_path / "ready.toml"
    ready.write_text(
        'base = "simplified"\nname = "ready"\n[announce]\nune_tuile = "ready"\n', "utf-8"
    )
    assert load_profile(ready).announce.une_tuile == "ready"
    data = _data("simplified")
    data["announce"] = {"une_tuile": "any"}
    assert "announce.une_tuile: Input should be 'one_face' or 'ready'" in _refused(data)
    data = _data("sichuan")
    data["announce"] = {"une_tuile": "ready"}
    assert _refused(data).endswith("only the simplified rules ask for « une Tuile »")


def test_casino_toml_with_base_and_errors(tmp_path: Path) -> None:
    good = tmp_path / "casino.toml"
    good.write_text(
        'base = "wenzhou"\nname = "casino-lyon"\nversion = "2024.1"\ncounting = "tile"\n'
        "[colline]\nsize = 14\n",
        "utf-8",
    )
    p = load_profile(str(good))
    assert (p.name, p.variant, p.version, p.counting, p.colline.size) == (
        "casino-lyon", "wenzhou", "2024.1", "tile", 14,
    )  # fmt: skip
    assert p.colline.replenish == "live_end" and p.layout == load_profile("wenzhou").layout
    state = deal(
        p, shuffled_manifest(p), "E", [Throw(by="E", dice=[1, 1]), Throw(by="S", dice=[2, 2])]
    )
    check_accounting(p, state)

    child = tmp_path / "child.toml"
    child.write_text('base = "casino.toml"\nname = "child"\n', "utf-8")
    assert load_profile(child).colline.size == 14

    bad = tmp_path / "bad.toml"
    bad.write_text('base = "sichuan"\nname = "bad"\ntiles = 136\n', "utf-8")
    with pytest.raises(ProfileError, match=r"bad.toml: layout: the walls hold 108 tiles"):
        load_profile(bad)

    broken = tmp_path / "broken.toml"
    broken.write_text("name = \n", "utf-8")
    with pytest.raises(ProfileError, match=r"broken\.toml: invalid TOML"):
        load_profile(broken)
    with pytest.raises(ProfileError, match="cannot read"):
        load_profile(tmp_path / "missing.toml")
    with pytest.raises(ProfileError, match="unknown profile 'riichi'"):
        load_profile("riichi")
    loop = tmp_path / "loop.toml"
    loop.write_text('base = "loop.toml"\n', "utf-8")
    with pytest.raises(ProfileError, match="too many levels of 'base'"):
        load_profile(loop)


# --------------------------------------------------------------------------- any layout


@st.composite
def layouts(draw: st.DrawFn) -> tuple[int, dict[str, list[int]]]:
    """Four walls of any mix of full and half stacks holding the tiles of a game."""
    size = draw(st.sampled_from([108, 136, 144]))
    cuts = sorted(draw(st.lists(st.integers(-4, 4), min_size=3, max_size=3)))
    base = size // 4
    parts = [base + cuts[0], base + cuts[1] - cuts[0], base + cuts[2] - cuts[1]]
    parts.append(size - sum(parts))
    walls: dict[str, list[int]] = {}
    for seat, tiles in zip(SEATS, parts, strict=True):
        halves = draw(st.sampled_from([h for h in range(0, 6) if h % 2 == tiles % 2]))
        heights = [2] * ((tiles - halves) // 2) + [1] * halves
        walls[seat] = draw(st.permutations(heights))
    return size, walls


@settings(max_examples=60, deadline=None)
@given(
    layout=layouts(),
    name=st.sampled_from(["wenzhou", "sichuan", "wsom"]),
    counting=st.sampled_from(["pair", "tile"]),
    leader=st.sampled_from(SEATS),
    d=st.lists(st.integers(1, 6), min_size=4, max_size=4),
    seed=st.integers(0, 1000),
)
def test_any_layout_any_counting_accounts_for_every_tile(
    layout: tuple[int, dict[str, list[int]]],
    name: str,
    counting: str,
    leader: str,
    d: list[int],
    seed: int,
) -> None:
    size, walls = layout
    data = _data(name)
    data.update(tiles=size, counting=counting, layout=walls)
    profile = profile_from_data(data)
    throws = [Throw.model_validate({"by": leader, "dice": d[:2]})]
    req = next_throw(profile, leader, throws)  # type: ignore[arg-type]
    assert req is not None
    throws.append(Throw(by=req.by, dice=d[2:]))
    state = deal(profile, shuffled_manifest(profile, seed), leader, throws)  # type: ignore[arg-type]
    assert state.leader == leader  # given, not thrown, in these rule sets
    check_accounting(profile, state)
