"""Following a table: dealt states and floor lines out of step, the journal, a restart."""

from __future__ import annotations

from cli.lang import Phrasebook
from rules.events import Discard, Draw
from rules.follow import Follower, Notice, journal_line, read_journal, replay_journal
from rules.game import replay_game
from rules.game_events import Dealt, GameEvent, WindDraw, event_line
from rules.replay import start
from rules.standings import standings
from rules.words import Seat
from station.lang import translations
from tests.support.games import play_out_events, shuffled, sit

#: the game record's words in French, from the project's catalogue
FRENCH = translations("fr").gettext


def texts(notices: list[Notice]) -> list[str]:
    return [n.text() for n in notices]


def test_lines_before_their_deal_wait_for_it_and_deals_wait_for_the_hand_in_play() -> None:
    follower = Follower()
    first = shuffled("wenzhou", "E", seed=1, cycle_id="c-1")
    second = shuffled("wenzhou", "S", seed=2, cycle_id="c-2")
    plays = play_out_events(start(first))
    # the deal comes before anyone sits: it waits for the floor
    assert follower.table_dealt(first) == []
    assert follower.floor_line(event_line(sit("wenzhou"))) != []
    said = texts(follower.floor_line(event_line(WindDraw(winds=["E", "S", "W", "N"]))))
    assert said == ["line 2: wind_draw", "cycle c-1: hand 1 of game 1, E leading"]
    # the next deal comes while hand 1 is played: it waits for its end
    for event in plays[:10]:
        follower.floor_line(event_line(event))
    assert follower.table_dealt(second) == []
    assert [d.cycle_id for d in follower.dealt_waiting] == ["c-2"]
    said = []
    for event in plays[10:]:
        said += texts(follower.floor_line(event_line(event)))
    assert said[-2:] == [
        "hand 1 of game 1 over: wall exhausted; won by -",
        "cycle c-2: hand 2 of game 1, S leading",
    ]
    # the first draw of hand 3, typed before hand 2 is over and its deal has come, waits
    plays2 = play_out_events(start(second))
    for event in plays2:
        follower.floor_line(event_line(event))
    assert follower.record.expects() == "dealt"
    early = Discard(seat="W", tile=shuffled("wenzhou", "W", seed=3).hands["W"][0])
    assert follower.floor_line(event_line(early)) == []
    assert follower.lines_waiting == [(follower.lines, early)]
    said = texts(follower.table_dealt(shuffled("wenzhou", "W", seed=3, cycle_id="c-3")))
    assert said == ["cycle c-3: hand 3 of game 1, W leading", f"line {follower.lines}: discard"]
    # a cycle received twice (the table's last dealt state again, after a reconnection)
    assert follower.table_dealt(second) == [] and follower.dealt_waiting == []


def test_bad_lines_and_set_aside_deals_are_said_and_the_rest_goes_on() -> None:
    follower = Follower()
    follower.floor_line(event_line(sit("wenzhou")))
    follower.floor_line(event_line(WindDraw(winds=["E", "S", "W", "N"])))
    dealt = shuffled("wenzhou", "E", seed=1, cycle_id="c-1")
    not_json = follower.floor_line("not json")
    assert texts(not_json) == ["line 3: not a game event: not JSON: it goes wrong at character 2"]
    assert not_json[0].text(Phrasebook("fr").table) == (
        "ligne 3 : pas un événement de partie : pas du JSON : l'erreur est au caractère 2"
    )
    bad_seat = follower.floor_line('{"type": "draw", "seat": "X"}')
    assert texts(bad_seat) == [
        "line 4: not a game event: draw.seat: Input should be 'E', 'S', 'W' or 'N'"
    ]
    # in French, pydantic's sentence passed on whole, the field as the line writes it
    assert bad_seat[0].text(Phrasebook("fr").table) == (
        "ligne 4 : pas un événement de partie : draw.seat : doit valoir 'E', 'S', 'W' ou 'N'"
    )
    assert texts(follower.floor_line("x" * 70_000)) == [
        "line 5: not a game event: longer than 65536 characters"
    ]
    assert texts(follower.floor_line('{"floor": "\udcff"}')) == [
        "line 6: not a game event: not UTF-8 text"
    ]
    assert texts(follower.floor_line(event_line(Dealt(dealt=dealt)))) == [
        "line 7: not a game event: dealt states come from the table, not from the floor's lines"
    ]
    said = follower.table_dealt(shuffled("wenzhou", "S", seed=2, cycle_id="c-9"))
    assert [n.kind for n in said] == ["set_aside"]
    assert said[0].text().startswith("cycle c-9 set aside: cycle c-9 was dealt with S leading")
    assert said[0].text(FRENCH).startswith("cycle c-9 écarté : le cycle c-9 a été donné avec S")
    said = follower.floor_line(event_line(Draw(seat="S")))  # waits: no deal yet
    assert said == []
    said = follower.table_dealt(dealt)
    assert [n.kind for n in said] == ["opened", "refused"]
    assert said[1].text() == (
        "line 8 refused: hand 1 of game 1, draw refused: seat E must discard first"
    )
    # in French, the hand record's refusal passed on too (as mjtable game follow says it)
    assert said[1].text(Phrasebook("fr").table) == (
        "ligne 8 refusée : manche 1 de la partie 1, draw refusé : la place E doit d'abord se "
        "défausser"
    )
    assert follower.lines == 8 and follower.record.hand is not None


def test_the_journal_replays_to_the_same_follower_and_a_torn_line_is_left_out() -> None:
    follower = Follower()
    journal: list[str] = []

    def table(dealt_id: str, leader: Seat, seed: int) -> None:
        dealt = shuffled("wenzhou", leader, seed=seed, cycle_id=dealt_id)
        journal.append(journal_line(dealt))
        follower.table_dealt(dealt)

    def floor(event: GameEvent | str) -> None:
        text = event if isinstance(event, str) else event_line(event)
        journal.append(journal_line(text))
        follower.floor_line(text)

    floor(sit("wenzhou"))
    floor("{ bad")
    floor(WindDraw(winds=["E", "S", "W", "N"]))
    table("c-1", "E", 1)
    assert follower.record.hand is not None
    for event in play_out_events(follower.record.hand):
        floor(event)
    table("c-2", "S", 2)
    text = "\n".join(journal) + "\n"
    items, torn = read_journal(text + '{"floor": "cut in the mid')
    assert torn and len(items) == len(journal)
    again = replay_journal(items)
    assert again.lines == follower.lines and again.cycles == follower.cycles
    assert standings(again.record) == standings(follower.record)
    # and the game's own events replay to the same standings
    assert standings(replay_game(again.record.events)) == standings(follower.record)
    assert read_journal(text) == (items, False)
