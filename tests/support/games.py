"""Game records played from real deals: the players, the throws, a hand played out."""

from __future__ import annotations

import random
from collections.abc import Mapping

from rules.arrange import arranged_deal
from rules.deal import deal
from rules.dealt import DealtState, parse_seat
from rules.dice import throws_from_dice
from rules.events import Discard, Draw, Exhausted
from rules.game import GameRecord
from rules.game_events import HandEvent, Sit
from rules.hand import parse_tiles
from rules.manifest import manifest_from_ring
from rules.profiles import load_profile
from rules.record import HandRecord
from rules.tiles import tile_list
from rules.words import Seat

NAMES = ("Ana", "Bo", "Cy", "Di")
BUY_INS = ("1000", "1010", "250", "75")  # retention 20, 21, 5, 2 (docs/rules.md)
DICE: dict[str, list[list[int]]] = {
    "wenzhou": [[3, 4], [2, 3]],
    "sichuan": [[3, 4], [2, 3]],
    "wsom": [[3, 4], [2, 3]],
    "simplified": [[5], [3, 4]],
}


def sit(variant: str, point: str | None = "0.50") -> Sit:
    players = [{"name": n, "buy_in": b} for n, b in zip(NAMES, BUY_INS, strict=True)]
    return Sit.model_validate({"variant": variant, "players": players, "point": point})


def shuffled(variant: str, leader: Seat, seed: int, cycle_id: str = "") -> DealtState:
    """A deal of a shuffled set, ``leader`` throwing first (player A in the simplified rules)."""
    profile = load_profile(variant)
    tiles = tile_list(profile.tiles)
    random.Random(seed).shuffle(tiles)
    throws = throws_from_dice(profile, leader, DICE[variant])
    manifest = manifest_from_ring(profile, tiles)
    return deal(profile, manifest, leader, throws, cycle_id=cycle_id)


def arranged(
    variant: str,
    hands: Mapping[str, str],
    *,
    leader: Seat = "E",
    live: str = "",
    live_end: str = "",
    joker: str | None = None,
    cycle_id: str = "",
) -> DealtState:
    """A deal where each seat in ``hands`` receives those tiles (the seeds' notation)."""
    profile = load_profile(variant)
    return arranged_deal(
        profile,
        leader,
        throws_from_dice(profile, leader, DICE[variant]),
        {parse_seat(seat): parse_tiles(text) for seat, text in hands.items()},
        live=parse_tiles(live) if live else (),
        live_end=parse_tiles(live_end) if live_end else (),
        joker=joker,
        cycle_id=cycle_id,
    )


def play_out_events(hand: HandRecord) -> list[HandEvent]:
    """Events that play the hand to its exhausted wall: whoever is to play draws and throws
    the tile drawn (the Leader first throws his first tile); the hand is left untouched."""
    events: list[HandEvent] = []
    turn, phase = hand.turn, hand.phase
    live = [p.tile for p in hand.wall.live]
    if phase == "discard":
        events.append(Discard(seat=turn, tile=hand.seats[turn].concealed[0]))
    for tile in live:
        turn = hand.next_active(turn)
        events += [Draw(seat=turn, tile=tile), Discard(seat=turn, tile=tile)]
    events.append(Exhausted())
    return events


def play_out(game: GameRecord) -> None:
    """Play the hand in play to its exhausted wall (see :func:`play_out_events`)."""
    assert game.hand is not None
    for event in play_out_events(game.hand):
        game.apply(event)
