"""The hand record: real dealt states from rules.deal, events of play, settlement."""

from __future__ import annotations

import json

import pytest

from rules.deal import deal
from rules.dealt import Joker, ProfileRef
from rules.dice import throws_from_dice
from rules.events import (
    Claim,
    Discard,
    Draw,
    Event,
    Exhausted,
    Flower,
    Kong,
    Penalty,
    RecordError,
    Win,
    parse_events,
)
from rules.hand import WinSource, parse_hand
from rules.manifest import manifest_from_ring
from rules.profiles import load_profile, profile_from_data
from rules.record import HandRecord
from rules.replay import replay, start
from rules.scoring import SichuanContext, score
from rules.seating import WenzhouGame
from rules.settle import Payment
from rules.words import SEATS, Seat
from tests.support.rule_deals import arranged_deal, plain_deal


def tiles(text: str) -> list[str]:
    from rules.hand import parse_tiles

    return parse_tiles(text)


def play_out(record: HandRecord) -> None:
    """Every seat in turn draws and throws the drawn tile, until the live wall is empty."""
    while record.wall.live:
        seat = record.next_active(record.turn)
        tile = record.wall.live[0].tile
        record.apply(Draw(seat=seat, tile=tile))
        record.apply(Discard(seat=seat, tile=tile))
    record.apply(Exhausted())


# --------------------------------------------------------------------------- starting


@pytest.mark.parametrize("variant", ["wenzhou", "sichuan", "wsom", "simplified"])
@pytest.mark.parametrize("seed", [1, 2])
def test_start_accepts_real_deals(variant: str, seed: int) -> None:
    dealt = plain_deal(variant, seed=seed)
    record = start(dealt)
    profile = load_profile(variant)
    for seat in SEATS:
        assert len(record.seats[seat].concealed) == profile.hand_size(seat == dealt.leader)
    assert record.turn == dealt.leader
    assert record.joker == (dealt.joker.face if dealt.joker else None)


def test_start_refuses_a_seat_with_a_tile_missing() -> None:
    dealt = plain_deal("sichuan", seed=3)
    hands = {s: list(t) for s, t in dealt.hands.items()}
    hands["S"] = hands["S"][:-1]
    with pytest.raises(RecordError, match="seat S holds 12 tiles; a player is dealt 13"):
        start(dealt.model_copy(update={"hands": hands}))


def test_start_refuses_a_tile_twice() -> None:
    dealt = plain_deal("sichuan", seed=3)
    hands = {s: list(t) for s, t in dealt.hands.items()}
    other = next(t for t in ("1m", "2m", "3m") if t != hands["E"][0])
    hands["E"][0] = other
    with pytest.raises(RecordError, match="not one 108-tile set"):
        start(dealt.model_copy(update={"hands": hands}))


def test_start_refuses_tiles_not_where_the_manifest_says() -> None:
    dealt = plain_deal("wsom", seed=4)
    hands = {s: list(t) for s, t in dealt.hands.items()}
    i = next(k for k, t in enumerate(hands["S"]) if t != hands["E"][0])
    hands["E"][0], hands["S"][i] = hands["S"][i], hands["E"][0]
    with pytest.raises(RecordError, match="where the manifest has"):
        start(dealt.model_copy(update={"hands": hands}))


def test_start_checks_the_joker() -> None:
    dealt = plain_deal("wenzhou", seed=5)
    assert dealt.joker is not None
    wrong = "1m" if dealt.joker.face != "1m" else "2m"
    bad = Joker(face=wrong, position=dealt.joker.position)
    with pytest.raises(RecordError, match="joker face"):
        start(dealt.model_copy(update={"joker": bad}))
    with pytest.raises(RecordError, match="needs a joker"):
        start(dealt.model_copy(update={"joker": None}))
    sichuan = plain_deal("sichuan", seed=5)
    with pytest.raises(RecordError, match="without joker"):
        start(sichuan.model_copy(update={"joker": dealt.joker}))


def test_start_refuses_unknown_tiles_and_profile_version() -> None:
    profile = load_profile("sichuan")
    manifest = manifest_from_ring(profile, ["?"] * 108)
    dealt = deal(profile, manifest, "E", throws_from_dice(profile, "E", [[3, 4], [2, 3]]))
    with pytest.raises(RecordError, match="unidentified"):
        start(dealt)
    dealt = plain_deal("sichuan", seed=6)
    with pytest.raises(RecordError, match="version"):
        start(dealt.model_copy(update={"profile": ProfileRef(name="sichuan", version="99")}))


# --------------------------------------------------------------------------- Sichuan


def sichuan_second_heaven_deal() -> dict[str, list[str]]:
    return {
        "E": tiles("123456789m 1234p 5s"),  # two suits once 5s is gone: not ready
        "S": tiles("123m 456m 789p 234s 5s"),  # waits on 5s
        "W": tiles("11s 22s 33s 66s 77s 88s 9s"),  # one suit: ready
        "N": tiles("19m 19p 19s 567p 9p 1m 1p 1s"),  # three suits: pig flower
    }


def test_sichuan_second_heaven_then_play_on_to_exhaustion() -> None:
    record = start(arranged_deal("sichuan", sichuan_second_heaven_deal()))
    record.apply(Discard(seat="E", tile="5s"))
    record.apply(Win(seat="S"))
    first = record.result().wins[0]
    assert first.source is WinSource.DISCARD
    assert [ln.name for ln in first.score.lines] == ["Tout Chow", "Dieu gagne en second"]
    assert first.payments == (Payment("E", "S", 4, "discard"),)
    assert not record.finished  # Sichuan goes on
    assert record.next_active(record.turn) == "W"
    play_out(record)
    result = record.result()
    assert result.finished and result.reason == "wall exhausted"
    assert sorted(p.text() for p in result.end_payments) == [
        "E pays W 2 (not ready pays ready)",
        "N pays E 6 (pig flower)",
        "N pays W 6 (pig flower)",
    ]
    assert result.balance == {"E": -4 - 2 + 6, "S": 4, "W": 8, "N": -12}
    assert sum(result.balance.values()) == 0


def test_sichuan_heavenly_hand_paid_by_all() -> None:
    hands = {"E": tiles("123m 456m 789p 234s 55s")}
    record = start(arranged_deal("sichuan", hands))
    record.apply(Win(seat="E"))
    win = record.result().wins[0]
    assert win.source is WinSource.WALL
    assert [ln.name for ln in win.score.lines] == [
        "Tout Chow",
        "Mah-Jong tiré du mur",
        "Dieu gagne",
    ]
    assert win.score.points == (1 + 1) * 6
    assert sorted(p.payer for p in win.payments) == ["N", "S", "W"]
    # One rule for both: the hand written out, as `mjtable hand --heavenly` reads it.
    text = parse_hand("sichuan", "123m 456m 789p 234s 55s", heavenly=True)
    assert score(text, SichuanContext(heavenly=True)).lines == win.score.lines


def test_sichuan_concealed_kong_and_kong_glory() -> None:
    hands = {"E": tiles("4444m 123p 456p 789s 5s")}
    record = start(arranged_deal("sichuan", hands, live_end=["5s", "1m"]))
    record.apply(Kong(seat="E", tile="4m"))
    assert record.phase == "kong"
    record.apply(Draw(seat="E", tile="5s"))
    record.apply(Win(seat="E"))
    win = record.result().wins[0]
    assert win.source is WinSource.KONG
    names = [ln.name for ln in win.score.lines]
    assert names == ["Faux Mah-Jong", "Mah-Jong tiré du mur", "Kong caché", "Gloire du Kong"]
    assert win.score.points == (0 + 1 + 3) * 2
    assert len(win.payments) == 3


def test_sichuan_robbing_an_added_kong() -> None:
    hands = {
        "E": tiles("123456789m 123s 9s 7p"),
        "S": tiles("77p 123456789m 99s"),
        "W": tiles("56p 111s 444s 777s 88s"),
    }
    record = start(arranged_deal("sichuan", hands, live=["1p", "2p", "3p", "7p"]))
    record.apply(Discard(seat="E", tile="7p"))
    record.apply(Claim(seat="S", tiles=["7p", "7p"]))
    record.apply(Discard(seat="S", tile="9s"))
    turns: list[tuple[Seat, str]] = [("W", "1p"), ("N", "2p"), ("E", "3p")]
    for seat, tile in turns:
        record.apply(Draw(seat=seat))
        record.apply(Discard(seat=seat, tile=tile))
    record.apply(Draw(seat="S", tile="7p"))
    record.apply(Kong(seat="S", tile="7p"))
    record.apply(Win(seat="W"))
    win = record.result().wins[0]
    assert win.source is WinSource.ROBBED
    assert win.score.points == 1 * 2  # 1 Chow et 3 Pungs, Kong volé x2
    assert win.payments == (Payment("S", "W", 2, "robbed"),)
    assert [m.kind.value for m in record.seats["S"].melds] == ["pung"]


# --------------------------------------------------------------------------- Wenzhou


def test_wenzhou_leader_win_with_streak_and_next_game() -> None:
    hands = {"E": tiles("123m 456m 789m 123p 456p 99s")}
    game = WenzhouGame(leader="E", hands_played=3, streak=1)
    record = start(arranged_deal("wenzhou", hands, joker="C"), game=game)
    record.apply(Win(seat="E"))
    result = record.result()
    win = result.wins[0]
    assert [ln.name for ln in win.score.lines] == [
        "five sets and a pair", "no jokers", "leader's streak",
    ]  # fmt: skip
    assert win.score.points == 1 * 2 * 2
    assert result.balance == {"E": 12, "S": -4, "W": -4, "N": -4}
    assert result.finished
    assert result.next_game == WenzhouGame(leader="E", hands_played=4, streak=2)


def test_wenzhou_false_win_puts_the_seat_out_and_it_pays_the_winner() -> None:
    hands = {
        "E": tiles("147m 258p 369s ESWN F 11m 1p"),
        "S": tiles("123m 456m 789p 111s 999s E"),
    }
    record = start(arranged_deal("wenzhou", hands, live=["E"], joker="C"))
    record.apply(Win(seat="E"))
    result = record.result()
    assert result.penalties[0].seat == "E"
    assert "out of the hand" in result.penalties[0].consequence
    assert not record.active("E")
    record.apply(Draw(seat="S", tile="E"))
    record.apply(Win(seat="S"))
    win = record.result().wins[0]
    assert win.source is WinSource.WALL
    assert sorted((p.payer, p.reason) for p in win.payments) == [
        ("E", "penalised: pays the winner"),
        ("N", "self-drawn"),
        ("W", "self-drawn"),
    ]


def test_wenzhou_penalty_from_the_floor() -> None:
    record = start(plain_deal("wenzhou", seed=8))
    record.apply(Penalty(seat="W", reason="showed his hand before declaring"))
    assert record.result().penalties[0].reason == "showed his hand before declaring"
    assert not record.active("W")


# --------------------------------------------------------------------------- WSOM, simplified


def test_wsom_first_win_ends_the_hand() -> None:
    hands = {"E": tiles("19m 19p 19s ESWN CFB B")}
    record = start(arranged_deal("wsom", hands))
    with pytest.raises(RecordError, match="still holds"):
        record.apply(Exhausted())
    record.apply(Win(seat="E"))
    assert record.finished
    assert record.result().wins[0].score.points is None
    with pytest.raises(RecordError, match="the hand is over"):
        record.apply(Draw(seat="S"))


def test_simplified_flowers_order_and_scores() -> None:
    hands = {
        "E": tiles("1f 123m 456p 789s EE S 9m"),
        "S": tiles("111m 222p 333s CC SS"),
    }
    dealt = arranged_deal("simplified", hands, live_end=["2f", "9m"])
    record = start(dealt)
    record.apply(Flower(seat="E", tile="1f"))
    assert record.phase == "flower"
    record.apply(Draw(seat="E"))
    assert record.seats["E"].bonus == ["1f"]
    drawn = record.seats["E"].concealed[-1]
    if drawn == "2f":  # the far end gave the second flower first
        record.apply(Flower(seat="E", tile="2f"))
        record.apply(Draw(seat="E"))
    record.apply(Discard(seat="E", tile="S"))
    record.apply(Win(seat="S"))
    win = record.result().wins[0]
    assert win.order == 1
    assert win.score.points == (20 + 100) * 2  # four pungs, first out, all pungs
    play_out(record)
    scores = record.result().scores
    assert scores["S"] == win.score.points
    assert scores["E"] == 5 * len(record.seats["E"].bonus)


# --------------------------------------------------------------------------- refusals, replay


def test_refused_events_leave_the_record_unchanged() -> None:
    hands = {
        "E": tiles("123456789m 123s 9s 7p"),
        "S": tiles("77p 123456789m 99s"),
        "W": tiles("56p 111s 444s 777s 88s"),
    }
    record = start(arranged_deal("sichuan", hands, live=["1p"]))
    before = (record.turn, record.phase, {s: list(st.concealed) for s, st in record.seats.items()})
    refusals: list[tuple[Event, str]] = [
        (Draw(seat="S"), "must discard first"),
        (Discard(seat="S", tile="7p"), "not S's turn"),
        (Discard(seat="E", tile="5p"), "does not hold 5p"),
        (Kong(seat="E", tile="1m"), "neither four 1m"),
        (Claim(seat="S", tiles=["7p", "7p"]), "no discard to claim"),
        (Win(seat="S"), "not S's turn"),
    ]
    for event, message in refusals:
        with pytest.raises(RecordError, match=message):
            record.apply(event)
    after = (record.turn, record.phase, {s: list(st.concealed) for s, st in record.seats.items()})
    assert after == before
    record.apply(Discard(seat="E", tile="7p"))
    with pytest.raises(RecordError, match="its own discard"):
        record.apply(Claim(seat="E", tiles=["7p", "7p"]))
    with pytest.raises(RecordError, match="only S may claim a chow"):
        record.apply(Claim(seat="W", tiles=["5p", "6p"]))
    with pytest.raises(RecordError, match="S's turn to draw, not N's"):
        record.apply(Draw(seat="N"))
    with pytest.raises(RecordError, match="the wall gives 1p"):
        record.apply(Draw(seat="S", tile="9m"))
    record.apply(Claim(seat="S", tiles=["7p", "7p"]))
    assert record.turn == "S"
    with pytest.raises(RecordError, match="has drawn nothing since its claim"):
        record.apply(Win(seat="S"))


def test_events_replay_from_json() -> None:
    hands = sichuan_second_heaven_deal()
    dealt = arranged_deal("sichuan", hands)
    text = json.dumps(
        [{"type": "discard", "seat": "E", "tile": "5s"}, {"type": "win", "seat": "S"}]
    )
    events = parse_events(text)
    record = replay(dealt, events)
    assert record.result().wins[0].seat == "S"
    assert [e.type for e in record.events] == ["discard", "win"]
    with pytest.raises(RecordError, match=r"event 3 \(draw\): it is W's turn"):
        replay(dealt, [*events, Draw(seat="N")])
    with pytest.raises(RecordError, match="events: "):
        parse_events('[{"type": "dance", "seat": "E"}]')


def test_sichuan_false_win_bars_claims_until_the_next_draw() -> None:
    hands = sichuan_second_heaven_deal()
    hands["S"] = tiles("123m 456m 789p 234s 6s")  # does not wait on 5s
    record = start(arranged_deal("sichuan", hands))
    record.apply(Discard(seat="E", tile="5s"))
    record.apply(Win(seat="S"))
    assert "may not claim a discard until his next own draw" in (
        record.result().penalties[0].consequence
    )
    assert record.seats["S"].no_claim
    with pytest.raises(RecordError, match="may not claim until its next own draw"):
        record.apply(Claim(seat="S", tiles=["3s", "4s"]))
    record.apply(Draw(seat="S"))
    assert not record.seats["S"].no_claim
    assert record.result().wins == ()


@pytest.mark.parametrize(("une_tuile", "points"), [("one_face", 105), ("ready", 0)])
def test_simplified_une_tuile_follows_the_profile(une_tuile: str, points: int) -> None:
    """S waits on 1s or 4s (two faces) and does not announce « une Tuile »: the profile's
    announce.une_tuile decides whether his Mah-Jong counts."""
    data = load_profile("simplified").model_dump()
    data["announce"] = {"une_tuile": une_tuile}
    profile = profile_from_data(data)
    hands = {"S": tiles("111m 456p 789s 23s EE")}
    record = start(arranged_deal("simplified", hands, live=["4s"]), profile)
    record.apply(Discard(seat="E", tile=record.seats["E"].concealed[0]))
    record.apply(Draw(seat="S", tile="4s"))
    record.apply(Win(seat="S", announced=False))
    assert record.result().wins[0].score.points == points


def test_dead_hand_cannot_win_in_the_simplified_rules() -> None:
    hands = {"E": tiles("123m 456p 789s 123s EE")}
    record = start(arranged_deal("simplified", hands))
    record.apply(Penalty(seat="E", reason="wrong tile count"))
    assert record.active("E")  # a dead hand keeps playing
    with pytest.raises(RecordError, match="dead hand"):
        record.apply(Win(seat="E"))
