"""The game record: whole games from the seeds' text, from the seating to the standings."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rules.dealt import GamePosition
from rules.events import Discard, Draw, Exhausted, Penalty, Win
from rules.game import GameError, GameRecord, replay_game
from rules.game_events import (
    Dealt,
    DiceSeating,
    EventError,
    GameEvent,
    SeatThrow,
    WindDraw,
    WindRow,
    event_line,
    parse_game_event,
    parse_game_log,
)
from rules.game_words import as_written
from rules.settle import Payment
from rules.standings import standings
from rules.words import Seat
from station.lang import translations
from tests.support.games import arranged, play_out, shuffled, sit

#: the game record's words in French, from the project's catalogue
FRENCH = translations("fr").gettext

RETENTION = {"Ana": 20, "Bo": 21, "Cy": 5, "Di": 2}
# Bo draws East, Ana South, Di West, Cy North
WINDS = WindDraw(winds=["S", "E", "N", "W"])
SEATS_1 = {"E": "Bo", "S": "Ana", "W": "Di", "N": "Cy"}


def wenzhou_game() -> GameRecord:
    game = GameRecord()
    game.apply(sit("wenzhou"))
    game.apply(WINDS)
    return game


def assert_replays(game: GameRecord) -> None:
    """The record's events, as JSON lines, replay to the same standings, in both languages."""
    log = "\n".join(event_line(e) for e in game.events)
    again = replay_game(parse_game_log(log))
    for gettext in (as_written, FRENCH):
        assert standings(again, gettext) == standings(game, gettext)
    assert again.events == game.events


def apply_all(game: GameRecord, events: list[GameEvent]) -> None:
    for event in events:
        game.apply(event)


# --------------------------------------------------------------------------- Wenzhou


def test_wenzhou_game_ended_by_four_leader_wins_then_new_seats_and_retention() -> None:
    game = wenzhou_game()
    assert game.games[0].seats == SEATS_1
    assert game.games[0].retention == RETENTION
    heavenly = {"E": "123m 456m 789m 123p 456p 99s"}  # five sets and a pair, dealt complete
    waiting = {"E": "123m 456m 789m 123p 456p 9s N"}  # throws N, waits on 9s
    # hand 1: the Leader's dealt hand is complete (self-drawn: all pay 1 x 2 no jokers)
    assert game.next_leader() == "E"  # the seats drawn: E leads the first deal
    assert game.next_position() == GamePosition(game=1, hand=1, wind="E")
    game.apply(Dealt(dealt=arranged("wenzhou", heavenly, joker="C", cycle_id="c-1")))
    assert game.next_leader() is None  # a hand in play: the next Leader is not known yet
    assert game.next_position() is None
    game.apply(Win(seat="E"))
    assert game.next_leader() == "E"  # the Leader won: he keeps the role (the table is told)
    assert game.next_position() == GamePosition(game=1, hand=2, wind="E")
    # hand 2: E throws N, the others draw and throw, E draws his 9s (x2 for his streak of 1)
    game.apply(Dealt(dealt=arranged("wenzhou", waiting, live="1m 2m 3m 9s", joker="C")))
    apply_all(game, [Discard(seat="E", tile="N")])
    turns: list[tuple[Seat, str]] = [("S", "1m"), ("W", "2m"), ("N", "3m")]
    for seat, tile in turns:
        apply_all(game, [Draw(seat=seat, tile=tile), Discard(seat=seat, tile=tile)])
    apply_all(game, [Draw(seat="E", tile="9s"), Win(seat="E")])
    # hand 3: E wins on S's discard: S alone pays (x3 for a streak of 2)
    game.apply(Dealt(dealt=arranged("wenzhou", waiting, live="9s", joker="C", cycle_id="c-3")))
    apply_all(game, [Discard(seat="E", tile="N"), Draw(seat="S"), Discard(seat="S", tile="9s")])
    game.apply(Win(seat="E"))
    # hand 4: dealt complete again, x4: the fourth win in a row ends the game
    game.apply(Dealt(dealt=arranged("wenzhou", heavenly, joker="C", cycle_id="c-4")))
    assert game.hand is not None and game.hand.game is not None
    assert game.hand.game.streak == 3
    game.apply(Win(seat="E"))

    first = game.games[0]
    assert first.turn.over and first.turn.end == "four_wins" and first.turn.streak == 4
    assert game.next_leader() is None  # the next game's seats are not drawn yet
    assert game.next_position() is None
    assert [h.balance()["Bo"] for h in first.hands] == [6, 12, 6, 24]
    assert first.hands[2].result.payments == (Payment("S", "E", 6, "discard"),)
    assert first.balance() == {"Bo": 48, "Ana": -20, "Di": -14, "Cy": -14}
    with pytest.raises(GameError, match=r"game 1 is over \(E won four hands in a row as Leader\)"):
        game.apply(Dealt(dealt=arranged("wenzhou", heavenly, joker="C", cycle_id="c-5")))
    with pytest.raises(GameError) as refused:
        game.apply(Dealt(dealt=arranged("wenzhou", heavenly, joker="C", cycle_id="c-5")))
    assert refused.value.text(FRENCH) == (
        "la partie 1 est terminée (E a gagné quatre manches de suite comme Leader) : pour la "
        "partie 2, chaque joueur tire un Vent (wind_draw)"
    )

    game.apply(WindDraw(winds=["E", "W", "S", "N"]))  # Ana draws East: a new game
    assert game.next_position() == GamePosition(game=2, hand=1, wind="E")
    second = game.games[1]
    assert second.seats == {"E": "Ana", "S": "Cy", "W": "Bo", "N": "Di"}
    assert second.retention == RETENTION and second.turn.leader == "E"
    game.apply(Dealt(dealt=shuffled("wenzhou", "E", seed=5, cycle_id="c-5")))
    play_out(game)
    table = standings(game)
    bo = next(p for p in table.players if p.name == "Bo")
    assert (bo.games, bo.units, bo.retention, bo.seat) == ([48, 0], 48, 42, "W")
    assert str(bo.net) == "-18.00"  # 48 x 0.50 - 2 x 21
    assert table.games[1].leader == "S"  # the drawn hand passed the role on
    assert table.next == "the dealt state of hand 2 of game 2, S leading"
    assert_replays(game)


def test_sixteen_hands_end_a_wenzhou_game_and_the_wind_turns() -> None:
    game = wenzhou_game()
    leaders: list[Seat] = []
    for number in range(1, 17):
        leader = game.games[0].turn.leader
        leaders.append(leader)
        if number == 6:  # the Leader (S) wins: he stays Leader for hand 7
            hands: dict[str, str] = {leader: "123m 456m 789m 123p 456p 99s"}
            game.apply(Dealt(dealt=arranged("wenzhou", hands, leader=leader, joker="C")))
            game.apply(Win(seat=leader))
            continue
        game.apply(Dealt(dealt=shuffled("wenzhou", leader, seed=number, cycle_id=f"c-{number}")))
        play_out(game)
    first = game.games[0]
    assert leaders == [*"ESWNES", *"SWNESWNESW"]
    assert first.turn.end == "sixteen_hands" and len(first.hands) == 16
    # the wind turns each time the role has passed on four times
    assert [h.prevailing for h in first.hands] == [*"EEEE", *"SSSSS", *"WWWW", *"NNN"]
    assert first.balance()[SEATS_1["S"]] == 3 * 2
    with pytest.raises(GameError, match="sixteen hands played"):
        game.apply(Dealt(dealt=shuffled("wenzhou", "E", seed=99)))
    assert_replays(game)


def test_a_penalised_wenzhou_player_pays_the_winner() -> None:
    game = wenzhou_game()
    hands = {"E": "123m 456m 789m 123p 456p 9s N", "S": "123m 456m 789m 123p 456p 9s"}
    game.apply(Dealt(dealt=arranged("wenzhou", hands, joker="C")))
    game.apply(Penalty(seat="W", reason="drew a tile out of turn"))
    game.apply(Discard(seat="E", tile="9s"))
    game.apply(Win(seat="S"))
    hand = game.games[0].hands[0]
    assert hand.result.payments == (
        Payment("E", "S", 2, "discard"),
        Payment("W", "S", 2, "penalised: pays the winner"),
    )
    assert hand.balance() == {"Bo": -2, "Ana": 4, "Di": -2, "Cy": 0}
    assert game.games[0].turn.leader == "S"  # the Leader lost: the role passes
    assert standings(game).hands[0].penalised == ["Di"]


# --------------------------------------------------------------------------- Sichuan


def sichuan_game() -> GameRecord:
    game = GameRecord()
    game.apply(sit("sichuan"))
    throws = [("Ana", [3, 4]), ("Bo", [6, 5]), ("Cy", [2, 2]), ("Di", [1, 2])]
    seating = DiceSeating(throws=[SeatThrow(player=p, dice=d) for p, d in throws], leader_seat="E")
    game.apply(seating)
    return game


def test_sichuan_three_successive_winners_end_the_hand_and_the_game() -> None:
    game = sichuan_game()
    assert game.games[0].seats == {"E": "Bo", "S": "Ana", "W": "Cy", "N": "Di"}
    hands = {
        "E": "123456789m 1234p 5s",
        "S": "123m 456m 789p 234s 5s",  # waits on 5s
        "W": "11s 22s 33s 66s 77s 88s 9s",  # seven pairs on 9s
        "N": "111p 222p 333p 567s 9p",  # waits on 9p
    }
    game.apply(Dealt(dealt=arranged("sichuan", hands, live="9s 9p", cycle_id="s-1")))
    game.apply(Discard(seat="E", tile="5s"))
    game.apply(Win(seat="S"))  # on E's first discard: Dieu gagne en second
    game.apply(Draw(seat="W", tile="9s"))
    game.apply(Win(seat="W"))  # self-drawn on his first draw
    game.apply(Draw(seat="N", tile="9p"))
    game.apply(Win(seat="N"))
    hand = game.games[0].hands[0]
    assert hand.result.reason == "three players have won"
    assert [w.seat for w in hand.result.wins] == ["S", "W", "N"]
    assert game.games[0].turn.end == "one_hand"
    assert hand.balance()["Bo"] == -sum(v for k, v in hand.balance().items() if k != "Bo")
    # a Sichuan game is one hand: the next deal opens game 2, same seats, retention again,
    # the Leader passing to the right
    assert game.next_position() == GamePosition(game=2, hand=1, wind="E")
    game.apply(Dealt(dealt=shuffled("sichuan", "S", seed=3, cycle_id="s-2")))
    second = game.games[1]
    assert second.seats == game.games[0].seats and second.retention == RETENTION
    assert second.turn.leader == "S"


def test_sichuan_hand_ends_on_the_exhausted_wall_with_ready_not_ready_and_pig_flower() -> None:
    game = sichuan_game()
    hands = {
        "E": "123456789m 1234p 5s",  # two suits once 5s is gone: Non Prêt
        "S": "123m 456m 789p 234s 5s",  # wins on 5s
        "W": "11s 22s 33s 66s 77s 88s 9s",  # one suit: Prêt
        "N": "19m 19p 19s 567p 9p 1m 1p 1s",  # three suits: Pig Flower
    }
    game.apply(Dealt(dealt=arranged("sichuan", hands)))
    game.apply(Discard(seat="E", tile="5s"))
    game.apply(Win(seat="S"))
    play_out(game)
    hand = game.games[0].hands[0]
    assert hand.result.reason == "wall exhausted"
    assert sorted(p.text() for p in hand.result.end_payments) == [
        "E pays W 2 (not ready pays ready)",
        "N pays E 6 (pig flower)",
        "N pays W 6 (pig flower)",
    ]
    assert hand.balance() == {"Bo": -4 - 2 + 6, "Ana": 4, "Cy": 8, "Di": -12}
    assert_replays(game)


# --------------------------------------------------------------------------- WSOM, simplified


def test_wsom_the_role_passes_every_hand_even_after_a_leader_win() -> None:
    game = GameRecord()
    game.apply(sit("wsom", point=None))
    game.apply(WindRow(row=["N", "E", "W", "S"], first_thrower="Ana", first=[1, 1], second=[2, 2]))
    first = game.games[0]
    assert first.turn.leader == "E"
    game.apply(Dealt(dealt=arranged("wsom", {"E": "19m 19p 19s ESWN CFB B"})))
    game.apply(Win(seat="E"))
    assert game.games[0].turn.leader == "S" and game.next_leader() == "S"
    assert game.next_position() == GamePosition(game=1, hand=2, wind="E")
    game.games[0] = replace(game.games[0], turn=replace(game.games[0].turn, passes=4))
    assert game.next_position() == GamePosition(game=1, hand=2, wind="S")  # four passes: South
    table = standings(game)
    assert table.hands[0].winners == [game.games[0].seats["E"]]
    assert all(p.units == 0 and p.net is None for p in table.players)  # WSOM pays nothing


def test_simplified_hand_with_flowers_and_one_hand_games() -> None:
    game = GameRecord()
    game.apply(sit("simplified"))
    with pytest.raises(GameError, match="the simplified rules draw no seats"):
        game.apply(WINDS)
    # the dice choose the Leader at each deal; where the game stands is known all the same
    assert game.next_leader() is None
    assert game.next_position() == GamePosition(game=1, hand=1, wind="E")
    hands = {"E": "1f 123m 456p 789s EE S 9m", "S": "111m 222p 333s CC SS"}
    game.apply(Dealt(dealt=arranged("simplified", hands, live_end="2f 9m")))
    assert game.next_position() is None  # a hand in play
    assert game.games[0].seats == {"E": "Ana", "S": "Bo", "W": "Cy", "N": "Di"}
    hand = game.hand
    assert hand is not None
    game.apply(parse_game_event('{"type": "flower", "seat": "E", "tile": "1f"}'))
    game.apply(Draw(seat="E"))
    if hand.seats["E"].concealed[-1] == "2f":  # the far end gave the second flower
        apply_all(game, [parse_game_event('{"type":"flower","seat":"E","tile":"2f"}')])
        game.apply(Draw(seat="E"))
    game.apply(Discard(seat="E", tile="S"))
    game.apply(Win(seat="S"))
    play_out(game)
    first = game.games[0]
    scores = first.hands[0].scores()
    assert scores["Bo"] == (20 + 100) * 2  # four pungs, first out, all pungs
    assert scores["Ana"] == 5 * len(first.hands[0].result.wins and hand.seats["E"].bonus)
    assert first.turn.end == "one_hand"
    # a game is one hand: the next deal opens game 2, East prevailing
    assert game.next_position() == GamePosition(game=2, hand=1, wind="E")
    game.apply(Dealt(dealt=shuffled("simplified", "W", seed=4)))  # the dice make W player A
    assert game.games[1].turn.leader == "W" and game.games[1].retention == RETENTION
    assert standings(game).players[1].score == scores["Bo"]


# --------------------------------------------------------------------------- refusals


def test_refusals_say_why_and_leave_the_record_unchanged() -> None:
    game = GameRecord()
    with pytest.raises(GameError, match="nobody sits at the table yet"):
        game.apply(WINDS)
    game.apply(sit("wenzhou"))
    with pytest.raises(GameError, match="already seated"):
        game.apply(sit("sichuan"))
    with pytest.raises(GameError, match="game 1 has no seats yet: each player draws a wind"):
        game.apply(Dealt(dealt=shuffled("wenzhou", "E", seed=1)))
    row = WindRow(row=["N", "E", "W", "S"], first_thrower="Ana", first=[1, 1], second=[2, 2])
    with pytest.raises(GameError, match="wind_row seats the players of wsom; at wenzhou"):
        game.apply(row)
    with pytest.raises(GameError, match="winds must be E, S, W, N"):
        game.apply(WindDraw(winds=["E", "E", "W", "N"]))
    game.apply(WINDS)
    with pytest.raises(GameError, match="game 1 is in play"):
        game.apply(WINDS)
    with pytest.raises(GameError, match="no hand is in play"):
        game.apply(Draw(seat="S"))
    with pytest.raises(GameError, match="a sichuan deal, the table plays wenzhou"):
        game.apply(Dealt(dealt=shuffled("sichuan", "E", seed=1)))
    with pytest.raises(GameError, match="dealt with S leading, but E leads hand 1 of game 1:"):
        game.apply(Dealt(dealt=shuffled("wenzhou", "S", seed=1, cycle_id="c-9")))
    game.apply(Dealt(dealt=shuffled("wenzhou", "E", seed=1, cycle_id="c-1")))
    before = (standings(game), list(game.events), game.hand and game.hand.turn)
    with pytest.raises(GameError, match="hand 1 of game 1, draw refused: seat E must discard"):
        game.apply(Draw(seat="E"))
    with pytest.raises(GameError, match="hand 1 of game 1 is still in play"):
        game.apply(Dealt(dealt=shuffled("wenzhou", "S", seed=2)))
    assert (standings(game), list(game.events), game.hand and game.hand.turn) == before
    play_out(game)
    with pytest.raises(GameError, match="cycle c-1 was already dealt as hand 1 of game 1"):
        game.apply(Dealt(dealt=shuffled("wenzhou", "S", seed=1, cycle_id="c-1")))
    bad = shuffled("wenzhou", "S", seed=2)
    hands = {s: list(t) for s, t in bad.hands.items()}
    positions = {s: list(t) for s, t in bad.hand_positions.items()}
    hands["S"], positions["S"] = hands["S"][:-1], positions["S"][:-1]
    short = bad.model_copy(update={"hands": hands, "hand_positions": positions})
    with pytest.raises(
        GameError, match="cannot open a hand: seat S holds 16 tiles; the leader is dealt 17"
    ):
        game.apply(Dealt(dealt=short))


def test_the_leader_kept_after_a_win_is_said() -> None:
    game = wenzhou_game()
    game.apply(Dealt(dealt=arranged("wenzhou", {"E": "123m 456m 789m 123p 456p 99s"}, joker="C")))
    game.apply(Win(seat="E"))
    with pytest.raises(GameError) as refused:
        game.apply(Dealt(dealt=shuffled("wenzhou", "S", seed=1, cycle_id="c-2")))
    assert str(refused.value) == (
        "cycle c-2 was dealt with S leading, but E leads hand 2 of game 1 (he won the last "
        "hand and stays Leader): the table must deal with E leading"
    )


FOUR = ", ".join(f'{{"name": "{n}", "buy_in": 100}}' for n in "ABCD")


def test_events_are_strict() -> None:
    bad = [
        ('{"type": "wind_row", "row": ["E","S","W","N"], "first_thrower": "Ana", '
         '"first": [true, 1], "second": [2, 2]}', "first.0"),
        ('{"type": "wind_row", "row": ["E","S","W","N"], "first_thrower": "Ana", '
         '"first": ["6", 1], "second": [2, 2]}', "first.0"),
        ('{"type": "wind_row", "row": ["E","S","W","N"], "first_thrower": "Ana", '
         '"first": [5.0, 1], "second": [2, 2]}', "first.0"),
        ('{"type": "wind_row", "row": ["E","S","W","N"], "first_thrower": "Ana", '
         '"first": [7, 1], "second": [2, 2]}', "first.0"),
        ('{"type": "sit", "variant": "wenzhou", "point": 0.5, "players": [' + FOUR + "]}",
         "point"),
        ('{"type": "sit", "variant": "wenzhou", "players": [{"name": "A\\u0007", '
         '"buy_in": 1}]}', "players.0.name"),
        ('{"type": "sit", "variant": "wenzhou", "players": [{"name": "A", '
         '"buy_in": "-5"}]}', "players.0.buy_in"),
        ('{"type": "dance"}', "type"),
        ("{", "Invalid JSON"),
    ]  # fmt: skip
    for text, where in bad:
        with pytest.raises(EventError, match=where):
            parse_game_event(text)
    with pytest.raises(EventError, match="line 2: "):
        parse_game_log('{"type": "exhausted"}\n{"type": "dance"}\n')
    with pytest.raises(EventError, match="four players need four names"):
        parse_game_event(
            '{"type": "sit", "variant": "sichuan", "players": [{"name": "A", "buy_in": 1}, '
            '{"name": "A", "buy_in": 1}, {"name": "B", "buy_in": 1}, {"name": "C", "buy_in": 1}]}'
        )


def test_a_replay_names_the_event_it_refuses() -> None:
    events: list[GameEvent] = [sit("wenzhou"), WINDS, Draw(seat="E"), Exhausted()]
    with pytest.raises(GameError) as refused:
        replay_game(events)
    assert str(refused.value) == (
        "event 3 (draw): no hand is in play: the next event is the table's dealt state (dealt)"
    )
    assert refused.value.text(FRENCH) == (
        "événement 3 (draw) : aucune manche n'est en jeu : l'événement suivant est la donne de "
        "la table (dealt)"
    )
