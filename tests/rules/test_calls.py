"""Several calls on one discard: one event, the seeds' priority, who lost the call."""

from __future__ import annotations

import pytest

from rules.calls import CallRecord, call_order
from rules.events import Call, Calls, Discard, Draw, RecordError, parse_events
from rules.game import GameRecord
from rules.game_events import Dealt, parse_game_event
from rules.record import HandRecord
from rules.replay import start
from rules.settle import Payment
from rules.words import Seat
from tests.support.games import arranged, sit

E_DISCARDS_5P = {
    "E": "123456789m 1234p 5p",
    "S": "4p 6p 111s 222s 333s 99s",  # a chow 456p
    "W": "5p 5p 444s 555s 666s 77s",  # a pung of 5p
    "N": "123m 456m 789m 34p 99s",  # Mah-Jong on 5p (345p)
}


def after_discard(hands: dict[str, str]) -> HandRecord:
    record = start(arranged("sichuan", hands))
    record.apply(Discard(seat="E", tile="5p"))
    return record


def test_three_calls_on_one_discard_mah_jong_takes_it() -> None:
    record = after_discard(E_DISCARDS_5P)
    calls = Calls(
        calls=[
            Call(seat="S", call="chow", tiles=["4p", "6p"]),
            Call(seat="W", call="pung", tiles=["5p", "5p"]),
            Call(seat="N", call="mahjong"),
        ]
    )
    record.apply(calls)
    result = record.result()
    assert [w.seat for w in result.wins] == ["N"]
    assert result.wins[0].payments == (Payment("E", "N", 4, "discard"),)  # Tout Chow x4
    assert result.calls == (CallRecord("E", "5p", "N", "mahjong", (("W", "pung"), ("S", "chow"))),)
    assert record.seats["W"].melds == [] and record.seats["S"].melds == []
    assert record.events == [Discard(seat="E", tile="5p"), calls]


def test_a_pung_beats_a_chow_and_play_goes_on_from_the_caller() -> None:
    record = after_discard(E_DISCARDS_5P)
    record.apply(
        Calls(
            calls=[
                Call(seat="S", call="chow", tiles=["4p", "6p"]),
                Call(seat="W", call="pung", tiles=["5p", "5p"]),
            ]
        )
    )
    assert [m.faces for m in record.seats["W"].melds] == [("5p", "5p", "5p")]
    assert (record.turn, record.phase) == ("W", "discard")
    assert record.result().calls[0].lost == (("S", "chow"),)
    record.apply(Discard(seat="W", tile="7s"))
    record.apply(Draw(seat="N"))


def test_among_equal_calls_the_nearest_counter_clockwise_from_the_discarder_wins() -> None:
    hands = {
        "E": "123456789m 1234p 5p",
        "W": "123s 456s 789s 46p 99m",  # Mah-Jong on 5p, two seats from E
        "N": "123m 456m 789m 34p 99s",  # Mah-Jong on 5p, three seats from E
    }
    record = after_discard(hands)
    record.apply(Calls(calls=[Call(seat="N", call="mahjong"), Call(seat="W", call="mahjong")]))
    result = record.result()
    assert [w.seat for w in result.wins] == ["W"]
    assert result.calls[0].taken_by == "W" and result.calls[0].lost == (("N", "mahjong"),)
    # the order itself, from another discarder: N's next player is E, then S, then W
    seats: list[Seat] = ["W", "S", "E"]
    pungs = [Call(seat=s, call="pung", tiles=["1m", "1m"]) for s in seats]
    assert [c.seat for c in call_order(pungs, "N")] == ["E", "S", "W"]


def test_a_false_mah_jong_is_penalised_and_the_next_call_takes_the_tile() -> None:
    hands = dict(E_DISCARDS_5P, N="123m 456m 789m 35p 99s")  # 5p makes no Mah-Jong
    record = after_discard(hands)
    record.apply(
        Calls(calls=[Call(seat="N", call="mahjong"), Call(seat="W", call="pung", tiles=["5p"] * 2)])
    )
    result = record.result()
    assert result.wins == () and result.penalties[0].seat == "N"
    assert result.calls == (CallRecord("E", "5p", "W", "pung", (), ("N",)),)
    assert record.turn == "W"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (Call(seat="W", call="chow", tiles=["4p", "6p"]), "only S may call a chow here"),
        (Call(seat="S", call="pung", tiles=["5p", "5p"]), "S does not hold 5p"),
        (Call(seat="S", call="pung", tiles=["4p", "6p"]), "4p 6p and 5p make no pung"),
        (Call(seat="W", call="kong", tiles=["5p", "5p"]), "it takes 3 tiles from the hand"),
        (Call(seat="N", call="mahjong", tiles=["5p"]), "it takes no tiles"),
        (Call(seat="E", call="mahjong"), "E cannot call its own discard"),
    ],
)
def test_a_call_that_cannot_be_made_refuses_the_whole_event(call: Call, message: str) -> None:
    record = after_discard(E_DISCARDS_5P)
    fine = (
        Call(seat="N", call="mahjong")
        if call.seat != "N"
        else Call(seat="W", call="pung", tiles=["5p"] * 2)
    )
    with pytest.raises(RecordError, match=message):
        record.apply(Calls(calls=[fine, call]))
    assert record.result().wins == () and record.result().calls == ()
    assert record.phase == "claim" and all(not st.melds for st in record.seats.values())


def test_calls_come_as_json_through_the_game_record() -> None:
    with pytest.raises(RecordError, match="one call per player"):
        parse_events('[{"type": "calls", "calls": [{"seat": "S", "call": "mahjong"}, '
                     '{"seat": "S", "call": "pung", "tiles": ["5p", "5p"]}]}]')  # fmt: skip
    game = GameRecord()
    game.apply(sit("sichuan"))
    game.apply(parse_game_event(
        '{"type": "dice_seating", "leader_seat": "E", "throws": [{"player": "Ana", "dice": '
        '[6, 6]}, {"player": "Bo", "dice": [5, 5]}, {"player": "Cy", "dice": [4, 4]}, '
        '{"player": "Di", "dice": [3, 3]}]}'
    ))  # fmt: skip
    game.apply(Dealt(dealt=arranged("sichuan", E_DISCARDS_5P)))
    game.apply(Discard(seat="E", tile="5p"))
    game.apply(parse_game_event(
        '{"type": "calls", "calls": [{"seat": "S", "call": "chow", "tiles": ["4p", "6p"]}, '
        '{"seat": "W", "call": "pung", "tiles": ["5p", "5p"]}, {"seat": "N", "call": "mahjong"}]}'
    ))  # fmt: skip
    assert game.hand is not None
    assert game.hand.result().calls[0].taken_by == "N"
