"""Seating procedures of TABLE.md section 5, as pure functions of their random inputs.

- :func:`wind_draw`: Wenzhou, each player draws one of the four face-down wind tiles;
  East is the first leader. :func:`wenzhou_after_hand` moves the leader role on.
- :func:`next_leader`: the leader role passing on, counter-clockwise (the table's rotation
  from one deal to the next, and Wenzhou's when the leader does not win).
- :func:`sichuan_seating` (and :func:`sichuan_next_thrower` to drive it): each player
  throws two dice, ties re-thrown by the tied players only, the highest is leader and
  chooses a seat, the others sit counter-clockwise from his right by their throws.
- :func:`wsom_seating`: the row of four winds between an odd and an even tile, two dice
  counts, draws counter-clockwise from the player the second count picks.

Also the ranking engine :func:`rank_by_throws` that orders players by throws with re-throws
of ties; the Simplified single-die round of :mod:`rules.deal` uses it too.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from rules.dealt import DealError, ThrowError
from rules.words import SEAT_INDEX, SEATS, Seat, seat_at

P = TypeVar("P", bound=Hashable)


class _NeedThrow(Exception):
    """Raised inside the ranking when the throws run out: who must throw, and whether it is
    a re-throw of a tie."""

    def __init__(self, who: object, rethrow: bool) -> None:
        super().__init__(who)
        self.who = who
        self.rethrow = rethrow


class WrongThrower(ThrowError):
    """A throw by another player than the one whose turn it is."""

    def __init__(self, index: int, by: object, expected: object, rethrow: bool) -> None:
        again = " (re-throw of a tie)" if rethrow else ""
        super().__init__(f"throw {index + 1}: thrown by {by}, but {expected} throws now{again}")
        self.index = index
        self.by = by
        self.expected = expected
        self.rethrow = rethrow


@dataclass(frozen=True)
class Ranking(Generic[P]):
    """The outcome of :func:`rank_by_throws` so far.

    ``order`` is the complete ranking (highest first) once every needed throw is in, else
    None and ``next_thrower`` says who throws next; ``rethrow`` is True when that throw is a
    re-throw of a tie.
    """

    order: tuple[P, ...] | None
    next_thrower: P | None
    rethrow: bool
    used: int = 0  # throws consumed once the order is complete


def _groups(members: list[P], values: dict[P, int]) -> list[list[P]]:
    """Members grouped by value, highest value first, each group in members' order."""
    out: list[list[P]] = []
    for value in sorted(set(values.values()), reverse=True):
        out.append([m for m in members if values[m] == value])
    return out


def _rank(
    group: list[P],
    throws: Sequence[tuple[P, int]],
    start: int,
    *,
    ties: Literal["tied", "all"],
    resolve: Literal["top", "all"],
) -> tuple[list[P], int]:
    """Rank ``group`` from ``throws[start:]``; return the order and the next unused index."""
    i = start
    current = list(group)
    lower: list[list[P]] = []
    first_pass = True
    while True:
        values: dict[P, int] = {}
        for member in current:
            if i >= len(throws):
                raise _NeedThrow(member, not first_pass or start > 0)
            by, value = throws[i]
            if by != member:
                raise WrongThrower(i, by, member, not first_pass or start > 0)
            values[member] = value
            i += 1
        first_pass = False
        groups = _groups(current, values)
        top = groups[0]
        if len(top) > 1 and ties == "all":
            continue
        lower = groups[1:] + lower
        if len(top) == 1:
            order = [top[0]]
            break
        current = top
    for g in lower:
        if len(g) > 1 and resolve == "all":
            sub, i = _rank(g, throws, i, ties="tied", resolve="all")
            order.extend(sub)
        else:
            order.extend(g)
    return order, i


def rank_prefix(
    players: Sequence[P],
    throws: Sequence[tuple[P, int]],
    *,
    ties: Literal["tied", "all"] = "tied",
    resolve: Literal["top", "all"] = "top",
) -> Ranking[P]:
    """As :func:`rank_by_throws`, but throws after the settling one are left alone: the
    ranking says in ``used`` how many it consumed."""
    if len(set(players)) != len(players) or not players:
        raise DealError("players must be distinct and at least one")
    try:
        order, used = _rank(list(players), throws, 0, ties=ties, resolve=resolve)
    except _NeedThrow as need:
        who: P = need.who  # type: ignore[assignment]
        return Ranking(order=None, next_thrower=who, rethrow=need.rethrow)
    return Ranking(order=tuple(order), next_thrower=None, rethrow=False, used=used)


def rank_by_throws(
    players: Sequence[P],
    throws: Sequence[tuple[P, int]],
    *,
    ties: Literal["tied", "all"] = "tied",
    resolve: Literal["top", "all"] = "top",
) -> Ranking[P]:
    """Order ``players`` by their throws, highest first, re-throwing ties.

    Every player throws once, in the order given. A tie for the highest is thrown again by
    the tied players (``ties="tied"``, in their original order) or by everybody
    (``ties="all"``), until one is highest. With ``resolve="all"`` lower ties are then
    settled the same way, highest group first; with ``"top"`` they keep the players' order.
    ``throws`` is the sequence of (thrower, value) so far; a throw by the wrong player or
    one too many raises ThrowError.
    """
    ranking = rank_prefix(players, throws, ties=ties, resolve=resolve)
    if ranking.order is not None and ranking.used < len(throws):
        raise ThrowError(
            f"throw {ranking.used + 1}: not expected, the order is settled after {ranking.used}"
        )
    return ranking


class Seating(BaseModel):
    """Who sits where: seat -> player, and the first leader."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seats: dict[Seat, str]
    leader: Seat = Field(description="the first leader (East in Wenzhou and WSOM)")

    def seat_of(self, player: str) -> Seat:
        for seat, who in self.seats.items():
            if who == player:
                return seat
        raise DealError(f"unknown player {player!r}")


def _four_players(players: Sequence[str]) -> list[str]:
    names = list(players)
    if len(names) != 4 or len(set(names)) != 4:
        raise DealError(f"four distinct players are needed, got {names!r}")
    return names


def _seating(by_seat: dict[Seat, str], leader: Seat) -> Seating:
    return Seating(seats={s: by_seat[s] for s in SEATS}, leader=leader)


def wind_draw(players: Sequence[str], winds: Sequence[str]) -> Seating:
    """Wenzhou: player ``players[i]`` draws the face-down wind tile ``winds[i]`` and sits at
    that wind's place; East is the first leader. ``winds`` must be E, S, W, N in some order."""
    names = _four_players(players)
    if sorted(winds, key=lambda w: SEAT_INDEX.get(w, 9)) != list(SEATS):
        raise DealError(f"winds must be E, S, W, N in some order, got {list(winds)!r}")
    by_seat: dict[Seat, str] = {
        seat_at(SEAT_INDEX[w]): p for p, w in zip(names, winds, strict=True)
    }
    return _seating(by_seat, "E")


def next_leader(leader: Seat) -> Seat:
    """The leader after ``leader`` when the role passes on: the seat at his right, as play
    goes counter-clockwise (TABLE.md section 5)."""
    return seat_at(SEAT_INDEX[leader] + 1)


#: The most hands of a Wenzhou game (seed: « Une partie se joue en seize manches maximum »).
MAX_HANDS = 16
#: A Leader's wins in a row that end a Wenzhou game (seed: « Si le même Leader gagne quatre
#: manches de suite, la partie est terminée »).
LEADER_WINS_END = 4


class WenzhouGame(BaseModel):
    """Where a Wenzhou game stands between hands: who leads next and whether it is over."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    leader: Seat = "E"
    hands_played: int = Field(default=0, ge=0, le=MAX_HANDS)
    streak: int = Field(
        default=0, ge=0, le=LEADER_WINS_END, description="consecutive wins of this leader"
    )
    over: bool = False


def wenzhou_after_hand(game: WenzhouGame, winner: Seat | None) -> WenzhouGame:
    """The game after one hand won by ``winner`` (None: a drawn hand).

    A leader who wins stays leader; otherwise (another winner or a draw) the role passes
    counter-clockwise. Four consecutive wins by one leader, or 16 hands, end the game (then
    the winds are drawn again with :func:`wind_draw`).
    """
    if game.over:
        raise DealError("the game is over: draw the winds again for a new game")
    played = game.hands_played + 1
    if winner == game.leader:
        streak = game.streak + 1
        leader = game.leader
    else:
        streak = 0
        leader = next_leader(game.leader)
    over = streak == LEADER_WINS_END or played == MAX_HANDS
    return WenzhouGame(leader=leader, hands_played=played, streak=streak, over=over)


def _check_dice(dice: Sequence[int], count: int, what: str) -> int:
    if len(dice) != count:
        got = "1 die" if len(dice) == 1 else f"{len(dice)} dice"
        raise ThrowError(f"{what}: {got}, expected {count}")
    for d in dice:
        if not 1 <= d <= 6:
            raise ThrowError(f"{what}: die {d} is out of range 1..6")
    return sum(dice)


def sichuan_next_thrower(
    players: Sequence[str], throws: Sequence[tuple[str, Sequence[int]]]
) -> str | None:
    """Who throws next in the Sichuan seating (None once the order is settled)."""
    names = _four_players(players)
    values = [(p, _check_dice(d, 2, f"throw {i + 1}")) for i, (p, d) in enumerate(throws)]
    return rank_by_throws(names, values, ties="tied", resolve="all").next_thrower


def sichuan_seating(
    players: Sequence[str], throws: Sequence[tuple[str, Sequence[int]]], leader_seat: str
) -> Seating:
    """Sichuan: each player throws two dice (``players`` in throwing order); a tie for the
    highest is thrown again by the tied players only. **Decision:** lower ties are settled
    the same way, highest group first, so that the order of the others is strict. The highest
    is leader and sits at ``leader_seat`` (his choice); the others sit counter-clockwise from
    his right in the order of their throws, highest first."""
    names = _four_players(players)
    if leader_seat not in SEAT_INDEX:
        raise DealError(f"unknown seat {leader_seat!r}: expected E, S, W or N")
    values = [(p, _check_dice(d, 2, f"throw {i + 1}")) for i, (p, d) in enumerate(throws)]
    ranking = rank_by_throws(names, values, ties="tied", resolve="all")
    if ranking.order is None:
        raise ThrowError(
            f"the seating throws are incomplete: {ranking.next_thrower} must throw next"
        )
    base = SEAT_INDEX[leader_seat]
    by_seat: dict[Seat, str] = {seat_at(base + k): p for k, p in enumerate(ranking.order)}
    return _seating(by_seat, seat_at(base))


def wsom_seating(
    players: Sequence[str],
    row: Sequence[str],
    first_thrower: str,
    first: Sequence[int],
    second: Sequence[int],
) -> Seating:
    """WSOM seating.

    ``players`` sit arbitrarily, listed counter-clockwise (``players[i + 1]`` at the right of
    ``players[i]``). ``row`` is the four face-down winds as laid, from the odd-number end to
    the even-number end. ``first_thrower`` throws ``first``; the player it counts (the thrower
    is 1, counter-clockwise) throws ``second``; the player that count gives draws first, from
    the odd end when ``second`` is odd, from the even end when even; the others draw in turn
    counter-clockwise. Each player then sits at the wind drawn; East leads first.
    """
    names = _four_players(players)
    if sorted(row, key=lambda w: SEAT_INDEX.get(w, 9)) != list(SEATS):
        raise DealError(f"row must hold the winds E, S, W, N in some order, got {list(row)!r}")
    if first_thrower not in names:
        raise DealError(f"unknown player {first_thrower!r}")
    t1 = _check_dice(first, 2, "first throw")
    t2 = _check_dice(second, 2, "second throw")
    second_thrower = (names.index(first_thrower) + t1 - 1) % 4
    first_drawer = (second_thrower + t2 - 1) % 4
    tiles = list(row) if t2 % 2 == 1 else list(reversed(row))
    by_seat: dict[Seat, str] = {}
    for k, wind in enumerate(tiles):
        by_seat[seat_at(SEAT_INDEX[wind])] = names[(first_drawer + k) % 4]
    return _seating(by_seat, "E")
