"""The game record: one table of four players, game after game, hand after hand.

A :class:`GameRecord` takes the events of :mod:`rules.game_events` one at a time
(:meth:`GameRecord.apply`) and keeps:

- the players and their buy-ins, and the value of the point (``sit``);
- each game: its seats, drawn by the rule set's own procedure from its throws or draws
  (:mod:`rules.seating`), the casino's retention on every buy-in when it starts
  (:func:`rules.settle.pot_share`: « Chaque partie commencée est due en intégralité »), its
  Leader, prevailing wind, hands and end (:mod:`rules.rotation`);
- each hand, opened on the table's dealt state (``dealt``: matched by its cycle id, which
  opens one hand only) and played by the hand record (:mod:`rules.record`);
- each player's balance per hand and per game (:mod:`rules.standings`).

Append-only: an event is checked whole before anything changes; a refused one raises
:class:`GameError` and leaves the record as it was. The error carries its words' key and
fields (:mod:`rules.game_words`), so it can be said in English or in French. :func:`replay_game`
rebuilds a record from its events, to the same standings.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal

from rules.dealt import DealError, GamePosition
from rules.events import RecordError
from rules.game_events import (
    Dealt,
    DiceSeating,
    GameEvent,
    HandEvent,
    Seating,
    Sit,
    WindDraw,
    WindRow,
)
from rules.game_words import Gettext, Words, as_written
from rules.outcome import HandResult
from rules.profiles import Profile
from rules.record import HandRecord
from rules.replay import start
from rules.rotation import SEATING, Turn, after_hand, next_game_leader
from rules.scoring import DEFAULT_TABLE, WenzhouTable
from rules.seating import sichuan_seating, wind_draw, wsom_seating
from rules.settle import pot_share
from rules.words import SEATS, RuleSet, Seat

Expected = Literal["sit", "seating", "dealt", "play"]
#: The seating event of each rule set that draws its seats.
SEATING_EVENT: dict[RuleSet, type[Seating]] = {
    RuleSet.WENZHOU: WindDraw,
    RuleSet.SICHUAN: DiceSeating,
    RuleSet.WSOM: WindRow,
}


class GameError(RecordError):
    """An event the game record refuses, in words of either language (English by str())."""

    def __init__(self, key: str, **fields: object) -> None:
        self.words = Words(key, fields)
        super().__init__(self.words.text())

    @property
    def key(self) -> str:
        return self.words.key

    def text(self, gettext: Gettext = as_written) -> str:
        return self.words.text(gettext)


@dataclass(frozen=True)
class HandSummary:
    """A finished hand: where it stood in its game and what it came to."""

    game: int
    number: int
    cycle_id: str
    leader: Seat
    prevailing: Seat
    seats: dict[Seat, str]
    result: HandResult

    def balance(self) -> dict[str, int]:
        """Each player's units won (positive) or paid in this hand."""
        return {self.seats[s]: self.result.balance[s] for s in SEATS}

    def scores(self) -> dict[str, int]:
        """Simplified rules: each player's points in this hand (empty elsewhere)."""
        return {self.seats[s]: points for s, points in self.result.scores.items()}


@dataclass(frozen=True)
class Game:
    """One game: its seats (seat -> player), where it stands, the retention each player
    paid when it started (euros), and its finished hands."""

    number: int
    seats: dict[Seat, str]
    turn: Turn
    retention: dict[str, int]
    hands: tuple[HandSummary, ...] = ()

    def balance(self) -> dict[str, int]:
        """Each player's units over the game's finished hands."""
        total = dict.fromkeys(self.seats.values(), 0)
        for hand in self.hands:
            for player, units in hand.balance().items():
                total[player] += units
        return total


def procedure_words(rule_set: RuleSet) -> Words:
    """How ``rule_set`` draws its seats, in words."""
    return Words(f"procedure_{rule_set.value}", {})


class GameRecord:
    """The record of one table. ``profile``: the profile the table deals with (default: the
    built-in one the dealt state names); ``table``: the Wenzhou payment table."""

    def __init__(
        self, *, profile: Profile | None = None, table: WenzhouTable = DEFAULT_TABLE
    ) -> None:
        self.profile = profile
        self.table = table
        self.sit: Sit | None = None
        self.games: list[Game] = []
        self.hand: HandRecord | None = None
        self.cycles: dict[str, tuple[int, int]] = {}
        self.events: list[GameEvent] = []

    # ----------------------------------------------------------------- where it stands

    @property
    def rule_set(self) -> RuleSet | None:
        return RuleSet(self.sit.variant) if self.sit is not None else None

    @property
    def game(self) -> Game | None:
        """The last game started (in play, or over)."""
        return self.games[-1] if self.games else None

    def expects(self) -> Expected:
        """What the record can take next: the players (``sit``), the seats of the next game
        (``seating``), a dealt state (``dealt``), or the play of the hand in play (``play``)."""
        rule_set = self.rule_set
        if rule_set is None:
            return "sit"
        if self.hand is not None:
            return "play"
        game = self.game
        policy = SEATING[rule_set]
        if game is None and policy != "none":
            return "seating"
        if game is not None and game.turn.over and policy == "each_game":
            return "seating"
        return "dealt"

    def next_leader(self) -> Seat | None:
        """The Leader the next dealt state must have, when the record knows it: the game's
        Leader (kept after a Wenzhou Leader's win, passed on otherwise), or the next game's
        when the seats stay. None while a hand is in play, before the first deal of a game
        whose seats are not drawn, and in the simplified rules (the dice choose player A)."""
        rule_set = self.rule_set
        if rule_set is None or rule_set is RuleSet.SIMPLIFIED or self.expects() != "dealt":
            return None
        game = self.game
        if game is None:
            return None
        if not game.turn.over:
            return game.turn.leader
        return next_game_leader(rule_set, game.turn)

    def next_position(self) -> GamePosition | None:
        """The game, the hand and the prevailing wind of the next dealt state, when the record
        knows its Leader (:meth:`next_leader`): the hand after the last one played, or the
        next game's first, East prevailing. In the simplified rules, whose dice choose the
        Leader at each deal, whenever a deal is expected: a game is one hand, so the next deal
        opens the next game, East prevailing (docs/rules.md)."""
        game = self.game
        if self.rule_set is RuleSet.SIMPLIFIED and self.expects() == "dealt":
            return GamePosition(game=len(self.games) + 1, hand=1, wind="E")
        if self.next_leader() is None or game is None:
            return None
        turn = game.turn
        if turn.over:
            return GamePosition(game=game.number + 1, hand=1, wind="E")
        return GamePosition(game=game.number, hand=turn.hands_played + 1, wind=turn.prevailing)

    # ----------------------------------------------------------------- events

    def apply(self, event: GameEvent) -> None:
        """Apply one event, or raise GameError and leave the record as it was."""
        if isinstance(event, Sit):
            self._sit(event)
        elif self.sit is None:
            raise GameError("not_sat")
        elif isinstance(event, (WindDraw, DiceSeating, WindRow)):
            self._seating(event)
        elif isinstance(event, Dealt):
            self._dealt(event)
        else:
            self._play(event)
        self.events.append(event)

    def _sit(self, event: Sit) -> None:
        if self.sit is not None:
            names = ", ".join(p.name for p in self.sit.players)
            raise GameError("already_sat", players=names)
        if self.profile is not None and self.profile.variant != event.variant:
            raise GameError(
                "profile_variant",
                profile=self.profile.name,
                profile_variant=self.profile.variant.value,
                variant=event.variant.value,
            )
        self.sit = event

    def _names(self) -> list[str]:
        assert self.sit is not None
        return [p.name for p in self.sit.players]

    def _retention(self) -> dict[str, int]:
        assert self.sit is not None
        return {p.name: pot_share(p.buy_in) for p in self.sit.players}

    def _seating(self, event: Seating) -> None:
        rule_set = self.rule_set
        assert rule_set is not None
        wanted = SEATING_EVENT.get(rule_set)
        if wanted is None:
            raise GameError("seating_none", variant=rule_set.value)
        if not isinstance(event, wanted):
            owner = next(r for r, kind in SEATING_EVENT.items() if isinstance(event, kind))
            raise GameError(
                "seating_foreign",
                kind=event.type,
                owner=owner.value,
                variant=rule_set.value,
                procedure=procedure_words(rule_set),
            )
        game = self.game
        if game is not None and not game.turn.over:
            raise GameError("seating_in_game", game=game.number, hands=len(game.hands))
        names = self._names()
        try:
            if isinstance(event, WindDraw):
                seating = wind_draw(names, event.winds)
            elif isinstance(event, DiceSeating):
                throws = [(t.player, t.dice) for t in event.throws]
                seating = sichuan_seating(names, throws, event.leader_seat)
            else:
                seating = wsom_seating(
                    names, event.row, event.first_thrower, event.first, event.second
                )
        except DealError as exc:
            raise GameError("seating_refused", reason=str(exc)) from None
        number = len(self.games) + 1
        self.games.append(
            Game(number, dict(seating.seats), Turn(seating.leader), self._retention())
        )

    def _next_game(self, event: Dealt) -> Game:
        """The game the dealt state opens a hand of: the one in play, or a new one that needs
        no seating (its seats kept, the retention due again)."""
        rule_set = self.rule_set
        assert rule_set is not None and self.sit is not None
        game = self.game
        if game is not None and not game.turn.over:
            return game
        policy = SEATING[rule_set]
        number = len(self.games) + 1
        if game is None and policy != "none":
            raise GameError("seating_needed", game=number, procedure=procedure_words(rule_set))
        if game is not None and policy == "each_game":
            raise GameError(
                "game_over",
                game=game.number,
                why=self.end_words(game),
                procedure=procedure_words(rule_set),
                next=number,
            )
        if game is None:
            seats = dict(zip(SEATS, self._names(), strict=True))
            leader = event.dealt.leader
        else:
            seats = dict(game.seats)
            leader = next_game_leader(rule_set, game.turn)
        if rule_set is RuleSet.SIMPLIFIED:
            leader = event.dealt.leader  # player A: the dice of the deal choose him
        return Game(number, seats, Turn(leader), self._retention())

    def _dealt(self, event: Dealt) -> None:
        rule_set = self.rule_set
        assert rule_set is not None
        dealt = event.dealt
        if self.hand is not None:
            game = self.game
            assert game is not None
            raise GameError("hand_in_play", hand=len(game.hands) + 1, game=game.number)
        if dealt.variant != rule_set:
            raise GameError("wrong_variant", dealt=dealt.variant.value, variant=rule_set.value)
        if dealt.cycle_id and dealt.cycle_id in self.cycles:
            game_number, hand_number = self.cycles[dealt.cycle_id]
            raise GameError("cycle_used", cycle=dealt.cycle_id, hand=hand_number, game=game_number)
        game = self._next_game(event)
        turn = game.turn
        if dealt.leader != turn.leader:
            kept = rule_set is RuleSet.WENZHOU and turn.streak > 0
            raise GameError(
                "wrong_leader",
                cycle=dealt.cycle_id or "(none)",
                dealt=dealt.leader,
                leader=turn.leader,
                hand=len(game.hands) + 1,
                game=game.number,
                why=Words("why_leader_kept" if kept else "why_none", {}),
            )
        wenzhou = turn.wenzhou() if rule_set is RuleSet.WENZHOU else None
        try:
            hand = start(dealt, self.profile, game=wenzhou, table=self.table)
        except RecordError as exc:
            raise GameError("dealt_refused", reason=str(exc)) from None
        if game is not self.game:
            self.games.append(game)
        if dealt.cycle_id:
            self.cycles[dealt.cycle_id] = (game.number, len(game.hands) + 1)
        self.hand = hand

    def _play(self, event: HandEvent) -> None:
        hand = self.hand
        game = self.game
        if hand is None or game is None:
            raise GameError("no_hand")
        try:
            hand.apply(event)
        except RecordError as exc:
            raise GameError(
                "hand_refused",
                hand=len(game.hands) + 1,
                game=game.number,
                event=event.type,
                reason=str(exc),
            ) from None
        if hand.finished:
            self._close(game, hand)

    def _close(self, game: Game, hand: HandRecord) -> None:
        rule_set = self.rule_set
        assert rule_set is not None
        result = hand.result()
        summary = HandSummary(
            game.number,
            len(game.hands) + 1,
            hand.dealt.cycle_id,
            hand.leader,
            game.turn.prevailing,
            dict(game.seats),
            result,
        )
        winner = result.wins[0].seat if result.wins else None
        turn = after_hand(rule_set, game.turn, winner)
        self.games[-1] = replace(game, turn=turn, hands=(*game.hands, summary))
        self.hand = None

    # ----------------------------------------------------------------- words

    def end_words(self, game: Game) -> Words:
        """Why ``game`` ended, in words (any language)."""
        rule_set = self.rule_set
        assert rule_set is not None and game.turn.end is not None
        return Words(
            f"end_{game.turn.end}", {"leader": game.turn.leader, "variant": rule_set.value}
        )


#: The hand record's reasons for a hand's end, and the words that say them.
_HAND_ENDS = {
    "won": "hand_won",
    "three players have won": "hand_three_won",
    "every player has gone out": "hand_all_out",
    "every player penalised": "hand_all_penalised",
    "wall exhausted": "hand_exhausted",
}


def hand_end_words(reason: str) -> Words:
    """Why a hand ended (:attr:`rules.outcome.HandResult.reason`), in words."""
    return Words(_HAND_ENDS[reason])


def replay_game(
    events: Iterable[GameEvent],
    *,
    profile: Profile | None = None,
    table: WenzhouTable = DEFAULT_TABLE,
) -> GameRecord:
    """A record rebuilt from its events; GameError names the first refused one."""
    record = GameRecord(profile=profile, table=table)
    for number, event in enumerate(events, start=1):
        try:
            record.apply(event)
        except GameError as exc:
            raise GameError(
                "replay_event", number=number, type=event.type, reason=exc.words
            ) from None
    return record
