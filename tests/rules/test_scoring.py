"""Scoring per variant: the seeds' tables as named worked examples."""

from __future__ import annotations

from pathlib import Path

import pytest

from rules.hand import DEALT_HAND_SOURCE, HandError, WinSource, parse_hand
from rules.scoring import (
    DEFAULT_TABLE,
    Score,
    SichuanContext,
    SimplifiedContext,
    Verdict,
    WenzhouContext,
    load_table,
    score,
    score_unfinished,
    score_wenzhou,
)
from rules.scoring.common import total
from rules.shapes import Shape


def names(s: Score) -> list[str]:
    return [line.name for line in s.lines]


def sichuan(
    tiles: str,
    melds: str = "",
    win: str | None = None,
    source: str | None = None,
    ctx: SichuanContext | None = None,
) -> Score:
    return score(parse_hand("sichuan", tiles, melds, win_tile=win, win_from=source), ctx)


# --------------------------------------------------------------------------- Sichuan, annex II


def test_annex_ii_faux_mah_jong_is_worth_nothing_on_a_discard() -> None:
    s = sichuan("123m 456m 789p 111s 55s", win="5s", source="discard")
    assert s.verdict is Verdict.WIN
    assert names(s) == ["Faux Mah-Jong"]
    assert s.points == 0
    s = sichuan("123m 456m 222p 111s 55s", win="5s", source="discard")
    assert names(s) == ["Faux Mah-Jong"]


def test_annex_ii_faux_mah_jong_self_drawn_is_worth_one() -> None:
    s = sichuan("123m 456m 789p 111s 55s", win="5s", source="wall")
    assert names(s) == ["Faux Mah-Jong", "Mah-Jong tiré du mur"]
    assert s.points == 1


def test_annex_ii_tout_chow() -> None:
    s = sichuan("123m 456m 789p 234s 55s", win="5s", source="discard")
    assert names(s) == ["Tout Chow"]
    assert s.points == 1


def test_annex_ii_one_chow_three_pungs() -> None:
    s = sichuan("123m 444m 777p 222s 55s", win="5s", source="discard")
    assert names(s) == ["1 Chow et 3 Pungs"]
    assert s.points == 1


def test_annex_ii_tout_pung() -> None:
    s = sichuan("333m 444m 777p 222s 66s", win="6s", source="discard")
    assert names(s) == ["Tout Pung"]
    assert s.points == 2


def test_annex_ii_two_five_eight_only_replaces_tout_pung() -> None:
    s = sichuan("222m 555m 888p 222s 55s", win="5s", source="discard")
    assert names(s) == ["2, 5, 8 Only"]
    assert s.points == 4


def test_annex_ii_serpentine() -> None:
    s = sichuan("147m 258p 369s 555m 99p", win="9p", source="discard")
    assert s.shape is Shape.SERPENTINE
    assert names(s) == ["Suite Serpentin"]
    assert s.points == 4


def test_annex_ii_tail_one_nine_adds_to_the_structure() -> None:
    s = sichuan("123m 789m 123p 789s 99s", win="9s", source="discard")
    assert names(s) == ["Tout Chow", "Tail 1-9"]
    assert s.points == 5
    # a set without 1 or 9: no tail
    s = sichuan("123m 456m 123p 789s 99s", win="9s", source="discard")
    assert "Tail 1-9" not in names(s)


def test_annex_ii_full_flush_adds_to_the_structure() -> None:
    s = sichuan("123s 444s 777s 222s 55s", win="5s", source="discard")
    assert names(s) == ["1 Chow et 3 Pungs", "Full flush"]
    assert s.points == 5


def test_annex_ii_seven_pairs_and_seven_pairs_flush() -> None:
    s = sichuan("11m 33m 55p 77p 99s 22s 44s", win="4s", source="discard")
    assert names(s) == ["7 Paires"]
    assert s.points == 4
    s = sichuan("11223355667799s", win="9s", source="discard")
    assert s.shape is Shape.PAIRS
    assert names(s) == ["7 Paires", "Full flush"]
    assert s.points == 8


def test_annex_ii_kongs_add_two_exposed_three_concealed() -> None:
    s = sichuan("123m 789p 55s", "4444s, [7777m]", win="5s", source="discard")
    assert names(s) == ["Faux Mah-Jong", "Kong exposé", "Kong caché"]
    assert s.points == 5


def test_annex_ii_one_tile_left_doubles_the_hand() -> None:
    s = sichuan("55s", "123m, 444m, 777p, 222s", win="5s", source="discard")
    assert names(s) == ["1 Chow et 3 Pungs", "Une tuile restante"]
    assert s.points == 2
    s = sichuan("55s", "123m, 4444m, 777p, 222s", win="5s", source="wall")
    # (1 + self-drawn 1 + exposed kong 2) x 2
    assert s.points == 8


def test_annex_ii_kong_glory_doubles() -> None:
    s = sichuan("123m 777p 222s 55s", "4444m", win="5s", source="kong")
    assert names(s) == [
        "1 Chow et 3 Pungs",
        "Mah-Jong tiré du mur",
        "Kong exposé",
        "Gloire du Kong",
    ]
    assert s.points == (1 + 1 + 2) * 2


def test_annex_ii_kong_glory_needs_a_kong() -> None:
    """« Gloire du Kong »: the tile drawn after making a kong; without one it cannot be."""
    with pytest.raises(HandError, match="needs a kong in the hand"):
        sichuan("123m 456m 789p 234s 55s", win="5s", source="kong")
    with pytest.raises(HandError, match="needs a kong in the hand"):
        sichuan("123m 777p 222s 55s", "444m", win="5s", source="kong")  # a pung is no kong
    concealed = sichuan("123m 777p 222s 55s", "[4444m]", win="5s", source="kong")
    assert concealed.points == (1 + 1 + 3) * 2


def test_annex_ii_robbed_kong_doubles_and_takes_the_kong_points() -> None:
    ctx = SichuanContext(robbed_kong_points=2)
    s = sichuan("123m 456m 789p 234s 55s", win="5s", source="robbed", ctx=ctx)
    assert names(s) == ["Tout Chow", "Points Kong de l'adversaire", "Kong volé"]
    assert s.points == (1 + 2) * 2


def test_heavenly_hand_counts_as_self_drawn_with_or_without_its_winning_tile() -> None:
    """One rule, DEALT_HAND_SOURCE: the dealt hand came from the wall. Scored from the text
    (as `mjtable hand --heavenly` does) it is worth what the hand record gives (below)."""
    ctx = SichuanContext(heavenly=True)
    for win in (None, "6s"):
        hand = parse_hand("sichuan", "333m 444m 777p 222s 66s", win_tile=win, heavenly=True)
        assert hand.win_from is DEALT_HAND_SOURCE is WinSource.WALL
        s = score(hand, ctx)
        assert names(s) == ["Tout Pung", "Mah-Jong tiré du mur", "Dieu gagne"]
        assert s.points == (2 + 1) * 6
    assert parse_hand("sichuan", "333m444m777p222s66s", win_from="wall", heavenly=True).win_from


@pytest.mark.parametrize(
    ("source", "melds", "how"),
    [
        ("discard", "", "on a discard"),
        ("robbed", "", "by robbing a kong"),
        ("kong", "4444s", "on a kong replacement"),
    ],
)
def test_heavenly_hand_is_not_won_on_a_discard(source: str, melds: str, how: str) -> None:
    tiles = "333m 444m 777p 66s" if melds else "333m 444m 777p 222s 66s"
    with pytest.raises(HandError, match=f"complete before the first tile is drawn.*{how}"):
        parse_hand("sichuan", tiles, melds, win_tile="6s", win_from=source, heavenly=True)


def test_heavenly_hand_and_second_heaven_are_two_moments() -> None:
    with pytest.raises(HandError, match="two different moments"):
        SichuanContext(heavenly=True, second_heaven=True)
    with pytest.raises(HandError, match="scored in sichuan"):
        parse_hand("wsom", "123m 456m 789p 234s 55s", heavenly=True)


def test_annex_ii_second_heaven_and_heavenly_hand() -> None:
    s = sichuan(
        "333m 444m 777p 222s 66s",
        win="6s",
        source="discard",
        ctx=SichuanContext(second_heaven=True),
    )
    assert s.points == 2 * 4
    s = sichuan(
        "333m 444m 777p 222s 66s", win="6s", source="wall", ctx=SichuanContext(heavenly=True)
    )
    assert s.points == (2 + 1) * 6


def test_sichuan_takes_the_best_reading() -> None:
    # 111 222 333m reads as three pungs (Tout Pung, 2) or three chows (Faux Mah-Jong, 0)
    s = sichuan("111m 222m 333m 999p 55s", win="5s", source="discard")
    assert names(s) == ["Tout Pung"]
    assert s.points == 2


def test_sichuan_false_win() -> None:
    s = sichuan("123m 456m 789p 234s 56s", win="6s", source="discard")
    assert s.verdict is Verdict.FALSE_WIN
    assert s.points == 0
    assert s.decomposition is None


# --------------------------------------------------------------------------- Wenzhou


def wenzhou(
    tiles: str,
    joker: str,
    melds: str = "",
    win: str | None = None,
    source: str | None = None,
    ctx: WenzhouContext | None = None,
) -> Score:
    return score(
        parse_hand("wenzhou", tiles, melds, win_tile=win, win_from=source, joker=joker), ctx
    )


def test_wenzhou_default_five_sets_with_a_joker() -> None:
    s = wenzhou("123m 456m 789p 111s 9s F EE", joker="F", win="E", source="discard")
    assert names(s) == ["five sets and a pair"]
    assert s.points == 1


def test_wenzhou_default_no_jokers_doubles() -> None:
    s = wenzhou("123m 456m 789p 111s 999s EE", joker="F", win="E", source="discard")
    assert names(s) == ["five sets and a pair", "no jokers"]
    assert s.points == 2


def test_wenzhou_white_dragon_is_not_a_joker_for_the_no_joker_count() -> None:
    s = wenzhou("123m 456m 789p 111s 4s B 6s EE", joker="5s", win="E", source="discard")
    assert "no jokers" in names(s)


def test_wenzhou_default_patterns() -> None:
    s = wenzhou("111m 444m 777p 222s 555s EE", joker="F", win="E", source="discard")
    assert names(s) == ["five sets and a pair", "all pungs", "no jokers"]
    assert s.points == 4
    s = wenzhou("123m 456m 789m 111m 99m EE", joker="F", win="E", source="discard")
    assert names(s) == ["five sets and a pair", "one suit and honours", "no jokers"]
    s = wenzhou("123m 456m 789m 111m 222m 99m", joker="F", win="9m", source="discard")
    assert "one suit" in names(s)
    s = wenzhou("CC", joker="1m", melds="EEE, SSS, WWW, NNN, FFF", win="C", source="discard")
    assert names(s) == ["five sets and a pair", "all honours", "no jokers"]
    assert s.points == 16


def test_wenzhou_eight_pairs_and_three_jokers() -> None:
    s = wenzhou("11m 22m 55p 66p 88s 99s EE NN C", joker="F", win="C", source="discard")
    assert s.shape is Shape.PAIRS
    assert names(s) == ["eight pairs and one tile", "no jokers"]
    assert s.points == 4
    s = wenzhou("1m 4m 7m 2p 5p 8p 3s 6s 9s E S W N C FFF", joker="F", win="F", source="wall")
    assert s.shape is Shape.THREE_JOKERS
    assert names(s) == ["three jokers"]
    assert s.points == 4


def test_wenzhou_single_tile_self_drawn_doubles() -> None:
    melds = "123m, 456m, 789p, 111s, 999s"
    s = wenzhou("EE", joker="F", melds=melds, win="E", source="wall")
    assert names(s) == ["five sets and a pair", "no jokers", "single tile, self-drawn"]
    assert s.points == 4
    # the same on a discard: no doubling
    s = wenzhou("EE", joker="F", melds=melds, win="E", source="discard")
    assert s.points == 2


def test_wenzhou_drawn_joker_as_single_tile_counts_as_a_hand_without_jokers() -> None:
    melds = "123m, 456m, 789p, 111s, 999s"
    s = wenzhou("E F", joker="F", melds=melds, win="F", source="wall")
    assert names(s) == ["five sets and a pair", "no jokers", "single tile, self-drawn"]
    assert s.points == 4
    # ... unless another joker is already in the hand
    melds_with_joker = "123m, 456m, 789p, 111s, 99s 9s*"
    s = wenzhou("E F", joker="F", melds=melds_with_joker, win="F", source="wall")
    assert names(s) == ["five sets and a pair", "single tile, self-drawn"]
    assert s.points == 2


def test_wenzhou_leader_streak_multiplies_the_leaders_gain() -> None:
    tiles = "123m 456m 789p 111s 999s EE"
    first = wenzhou(tiles, "F", win="E", source="discard", ctx=WenzhouContext(leader=True))
    assert first.points == 2
    third = wenzhou(
        tiles, "F", win="E", source="discard", ctx=WenzhouContext(leader=True, streak=2)
    )
    assert third.points == 2 * 3
    assert "leader's streak" in names(third)


def test_wenzhou_table_from_configuration(tmp_path: Path) -> None:
    path = tmp_path / "casino.toml"
    path.write_text('name = "casino"\nfive_sets = 3\nno_jokers = 5\nleader_streak = [2, 4]\n')
    table = load_table(path)
    assert table.name == "casino"
    assert table.eight_pairs == DEFAULT_TABLE.eight_pairs
    hand = parse_hand("wenzhou", "123m 456m 789p 111s 999s EE", joker="F", win_tile="E")
    # a streak past the table (3 wins, 2 factors) takes its last factor
    s = score_wenzhou(hand, WenzhouContext(leader=True, streak=3), table)
    assert s.points == 3 * 5 * 4
    assert s.notes == ("table: casino",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("five_sets = -1\n", "five_sets"),
        ("bogus = 2\n", "bogus"),
        ("five_sets = [\n", "not valid TOML"),
        ("leader_streak = []\n", "leader_streak"),
    ],
)
def test_wenzhou_bad_table_is_refused_naming_the_field(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(HandError, match=message):
        load_table(path)


def test_wenzhou_false_win() -> None:
    s = wenzhou("123m 456m 789p 111s 999s EC", joker="F", win="C", source="discard")
    assert s.verdict is Verdict.FALSE_WIN


# --------------------------------------------------------------------------- simplified


def test_simplified_bareme_first_out_all_honours() -> None:
    hand = parse_hand("simplified", "EEE SSS WWW NNN CC 1f 5f", win_tile="C", win_from="wall")
    s = score(hand)
    assert s.points == (10 + 20 + 100) * 10
    assert names(s) == ["fleurs et saisons", "brelans", "Mah-Jong", "que des honneurs"]


def test_simplified_bareme_order_and_multipliers() -> None:
    hand = parse_hand("simplified", "111m 222m 345m 999m CC", win_tile="C", win_from="discard")
    s = score(hand, SimplifiedContext(order=2))
    assert s.points == (15 + 40) * 3
    hand = parse_hand("simplified", "111m 222m 999m CC", "5555m", win_tile="C")
    s = score(hand, SimplifiedContext(order=3))
    assert s.points == (15 + 10 + 20) * 2 * 3
    hand = parse_hand("simplified", "123m 456p 789s 123s EE", win_tile="E")
    s = score(hand, SimplifiedContext(order=4))
    assert s.points == 10


def test_simplified_unannounced_single_wait_scores_nothing() -> None:
    # waiting on E alone (the pair), not announced
    hand = parse_hand("simplified", "111m 456p 789s 234s EE", win_tile="E")
    assert score(hand, SimplifiedContext(announced=False)).points == 0
    assert score(hand, SimplifiedContext(announced=True)).points == 105
    # a two-sided wait (1s or 4s) needs no announcement
    hand = parse_hand("simplified", "111m 456p 789s 234s EE", win_tile="4s")
    assert score(hand, SimplifiedContext(announced=False)).points == 105


def test_simplified_une_tuile_decision_both_ways() -> None:
    """Seed 004 rule 10, "n'attendant plus qu'une seule tuile": the Decision (one face, the
    default) and the other reading (any ready hand), chosen by the profile's option."""
    two_sided = parse_hand("simplified", "111m 456p 789s 234s EE", win_tile="4s")  # 1s or 4s
    single = parse_hand("simplified", "111m 456p 789s 234s EE", win_tile="E")  # E alone
    one_face = SimplifiedContext(announced=False, une_tuile="one_face")
    ready = SimplifiedContext(announced=False, une_tuile="ready")
    assert score(two_sided, one_face).points == 105
    assert score(two_sided, ready).points == 0
    assert names(score(two_sided, ready)) == ["une Tuile non annoncée"]
    assert score(single, one_face).points == score(single, ready).points == 0
    announced = SimplifiedContext(announced=True, une_tuile="ready")
    assert score(two_sided, announced).points == score(single, announced).points == 105
    assert SimplifiedContext().une_tuile == "one_face"  # the Decision is the default


def test_simplified_player_who_did_not_go_out() -> None:
    hand = parse_hand("simplified", "111m 45p 12s E 2f 6f 7f", "SSS, 9999p")
    s = score_unfinished(hand)
    assert total(s.lines) == 15 + 10 + 10
    assert s.points == 35


def test_simplified_has_no_seven_pairs() -> None:
    hand = parse_hand("simplified", "11m 33m 55p 77p 99s EE CC", win_tile="C")
    assert score(hand).verdict is Verdict.FALSE_WIN


# --------------------------------------------------------------------------- WSOM


def test_wsom_validity_only() -> None:
    s = score(parse_hand("wsom", "19m 19p 19s ESWN CFB B", win_tile="B"))
    assert s.verdict is Verdict.WIN
    assert s.shape is Shape.ORPHANS
    assert s.points is None
    s = score(parse_hand("wsom", "EEE SSS WWW NNN CF", win_tile="F"))
    assert s.verdict is Verdict.FALSE_WIN
    assert s.points is None


def test_incomplete_hand_is_not_scored() -> None:
    s = score(parse_hand("sichuan", "123m 456m 789p 234s 5s"))
    assert s.verdict is Verdict.INCOMPLETE
