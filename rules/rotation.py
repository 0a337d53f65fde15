"""How a game goes on from hand to hand, when it ends, and when the seats are drawn again.

Each rule set's seed, or a **Decision** of docs/rules.md where the seed is silent:

- **Wenzhou** (seed 000): East leads first; the Leader role passes counter-clockwise every
  hand unless the Leader wins; a game is at most sixteen hands, and four wins in a row by one
  Leader end it; then the winds are drawn again (:func:`rules.seating.wenzhou_after_hand`).
- **WSOM** (seed 001 gives the seating "at the start of each quarter or half", nothing of the
  hands): **Decision**, as the Chinese Official rules WSOM plays by: the Leader role passes
  after every hand, won or drawn; a game is sixteen hands; the seats are drawn again for the
  next one.
- **Sichuan** (seed 000: « Une partie commence par la distribution des tuiles et se termine
  lorsque trois joueurs ont fait Mah-Jong ou que la muraille est épuisée »): a game is one
  hand. **Decision**: the seats are thrown once, when the players sit down (« Avant de
  s'installer »), and kept; the Leader of the next game is the seat at the last one's right,
  as the table passes the role on.
- **Simplified** (seed 004 scores one hand, « Fin de la partie »): a game is one hand; its
  Leader is player A, whom the dice of each deal choose. **Decision**: no seats are drawn: the
  players sit in the order they are listed (E, S, W, N).

The prevailing wind (**Decision**, no seed names one): East, and the next wind each time the
Leader role has passed on four times in the game (E, S, W, N over sixteen hands when it
passes every hand).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from rules.seating import (
    LEADER_WINS_END,
    MAX_HANDS,
    WenzhouGame,
    next_leader,
    wenzhou_after_hand,
)
from rules.words import RuleSet, Seat, seat_at

EndReason = Literal["four_wins", "sixteen_hands", "one_hand"]
#: When each rule set draws its seats: before every game, before the first only, never.
SeatingPolicy = Literal["each_game", "first_game", "none"]
SEATING: dict[RuleSet, SeatingPolicy] = {
    RuleSet.WENZHOU: "each_game",
    RuleSet.WSOM: "each_game",
    RuleSet.SICHUAN: "first_game",
    RuleSet.SIMPLIFIED: "none",
}


@dataclass(frozen=True)
class Turn:
    """Where a game stands between hands: its Leader, the hands played, the Leader's wins
    in a row, how many times the role passed on (for the prevailing wind), and why it ended."""

    leader: Seat
    hands_played: int = 0
    streak: int = 0
    passes: int = 0
    end: EndReason | None = None

    @property
    def over(self) -> bool:
        return self.end is not None

    @property
    def prevailing(self) -> Seat:
        """The prevailing wind: E, then the next each time the role has passed four times."""
        return seat_at(min(self.passes // 4, 3))

    def wenzhou(self) -> WenzhouGame:
        """The Wenzhou game state the hand record takes (for the Leader's streak)."""
        return WenzhouGame(
            leader=self.leader, hands_played=self.hands_played, streak=self.streak, over=self.over
        )


def after_hand(rule_set: RuleSet, turn: Turn, winner: Seat | None) -> Turn:
    """The game after one more hand, won first by ``winner`` (None: nobody won)."""
    if rule_set is RuleSet.WENZHOU:
        game = wenzhou_after_hand(turn.wenzhou(), winner)
        end: EndReason | None = None
        if game.streak == LEADER_WINS_END:
            end = "four_wins"
        elif game.over:
            end = "sixteen_hands"
        passed = int(game.leader != turn.leader)
        return Turn(game.leader, game.hands_played, game.streak, turn.passes + passed, end)
    played = turn.hands_played + 1
    if rule_set is RuleSet.WSOM:
        end = "sixteen_hands" if played == MAX_HANDS else None
        return Turn(next_leader(turn.leader), played, 0, turn.passes + 1, end)
    return replace(turn, hands_played=played, end="one_hand")


def next_game_leader(rule_set: RuleSet, last: Turn) -> Seat:
    """Who leads a game that starts without drawing the seats again (Sichuan: the seat at
    the last Leader's right; the simplified rules' dice choose theirs at the deal)."""
    if rule_set is RuleSet.SICHUAN:
        return next_leader(last.leader)
    return last.leader
