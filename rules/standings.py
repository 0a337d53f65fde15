"""Where a table stands: each player's balance per hand, per game and in all, from the game
record (:class:`rules.game.GameRecord`), as a model that prints as a table or as JSON.

Units are the table's point (« l'unité de mise ») as the hand records pay them; the simplified
rules pay nothing and score points instead (``score``); WSOM computes no payment. ``net`` is
the money a player is up or down: his units times the point value, less the retention he
paid at each game's start (only when ``sit`` gave the point value). Only finished hands
count; a hand in play shows in ``next``.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

from pydantic import BaseModel, ConfigDict, PlainSerializer

from rules.dealt import RuleSetField
from rules.game import GameRecord, hand_end_words, procedure_words
from rules.game_events import Amount
from rules.game_words import Gettext, Words, as_written
from rules.settle import to_money
from rules.words import Seat

#: Euros a player is up (positive) or down, exactly: a string in JSON.
Euros = Annotated[Decimal, PlainSerializer(str, return_type=str)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PlayerStanding(_Model):
    name: str
    seat: Seat | None  # in the last game
    buy_in: Amount
    games: list[int]  # units per game, in order
    units: int
    score: int  # simplified rules: points over every hand
    retention: int  # euros, over every game started
    net: Euros | None  # euros: units x point - retention; None without a point value


class CallLine(_Model):
    """Several calls on one discard: who took the tile with which call, who lost the call."""

    discarder: str
    tile: str
    taken_by: str | None
    call: str | None
    lost: list[tuple[str, str]]  # (player, call)


class HandLine(_Model):
    game: int
    hand: int
    cycle_id: str
    leader: Seat
    prevailing: Seat
    end: str  # why it ended, in words: "won", "wall exhausted", ...
    winners: list[str]
    penalised: list[str]
    balance: dict[str, int]
    scores: dict[str, int]
    calls: list[CallLine]


class GameLine(_Model):
    number: int
    seats: dict[Seat, str]
    hands: int
    leader: Seat
    prevailing: Seat
    streak: int
    end: str | None  # why it ended, in words; None while in play
    retention: dict[str, int]
    balance: dict[str, int]


class Standings(_Model):
    variant: RuleSetField | None
    point: Amount | None
    players: list[PlayerStanding]
    games: list[GameLine]
    hands: list[HandLine]
    next: str  # what the record waits for, in words


def _next(record: GameRecord) -> Words:
    rule_set = record.rule_set
    game = record.game
    expected = record.expects()
    if rule_set is None or expected == "sit":
        return Words("next_sit")
    number = 1 if game is None else game.number + (1 if game.turn.over else 0)
    if expected == "seating":
        return Words("next_seating", {"game": number, "procedure": procedure_words(rule_set)})
    if game is None or game.turn.over:
        return Words("next_game", {"game": number})
    hand = {"hand": len(game.hands) + 1, "game": game.number}
    if expected == "play":
        return Words("next_play", hand)
    return Words("next_deal", {**hand, "leader": game.turn.leader})


def standings(record: GameRecord, gettext: Gettext = as_written) -> Standings:
    """The record's standings, its words in the language of ``gettext``."""
    sit = record.sit
    players = [p.name for p in sit.players] if sit is not None else []
    games: list[GameLine] = []
    hands: list[HandLine] = []
    score = dict.fromkeys(players, 0)
    for game in record.games:
        turn = game.turn
        end = record.end_words(game).text(gettext) if turn.over else None
        games.append(
            GameLine(
                number=game.number,
                seats=game.seats,
                hands=len(game.hands),
                leader=turn.leader,
                prevailing=turn.prevailing,
                streak=turn.streak,
                end=end,
                retention=game.retention,
                balance=game.balance(),
            )
        )
        for hand in game.hands:
            result = hand.result
            for player, points in hand.scores().items():
                score[player] += points
            hands.append(
                HandLine(
                    game=hand.game,
                    hand=hand.number,
                    cycle_id=hand.cycle_id,
                    leader=hand.leader,
                    prevailing=hand.prevailing,
                    end=hand_end_words(result.reason).text(gettext),
                    winners=[hand.seats[w.seat] for w in result.wins],
                    penalised=[hand.seats[p.seat] for p in result.penalties],
                    balance=hand.balance(),
                    scores=hand.scores(),
                    calls=[
                        CallLine(
                            discarder=hand.seats[c.discarder],
                            tile=c.tile,
                            taken_by=hand.seats[c.taken_by] if c.taken_by else None,
                            call=c.call,
                            lost=[(hand.seats[seat], call) for seat, call in c.lost],
                        )
                        for c in result.calls
                    ],
                )
            )
    standing: list[PlayerStanding] = []
    last = record.game
    for p in sit.players if sit is not None else []:
        per_game = [g.balance[p.name] for g in games]
        units = sum(per_game)
        retention = sum(g.retention[p.name] for g in games)
        net: Decimal | None = None
        if sit is not None and sit.point is not None:
            net = to_money(units, sit.point) - retention
        seat = next((s for s, n in last.seats.items() if n == p.name), None) if last else None
        standing.append(
            PlayerStanding(
                name=p.name,
                seat=seat,
                buy_in=p.buy_in,
                games=per_game,
                units=units,
                score=score[p.name],
                retention=retention,
                net=net,
            )
        )
    return Standings(
        variant=record.rule_set,
        point=sit.point if sit is not None else None,
        players=standing,
        games=games,
        hands=hands,
        next=_next(record).text(gettext),
    )
