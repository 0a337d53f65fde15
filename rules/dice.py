"""The dice of a deal: who throws, what each throw decides, and who leads (TABLE.md sections
3 and 4). Pure functions of the throws they are given.

- :func:`next_throw` -- who throws next, how many dice, what for (drives the dice);
- :func:`settle` -- what complete throws decide: the leader, the designated wall, the count;
- :func:`progress` -- both in one reading of the throws: who throws next, or what they decide;
- :func:`throws_from_dice` -- the thrower of each throw written without one (``3+4,5+6``);
- :func:`joker_position` -- where the Wenzhou joker indicator lies after the first throw.

**Who leads.** In Wenzhou, Sichuan and WSOM the leader is given (the seating, then the
rotation) and throws first. In the simplified rules the dice choose him: the single-die round
makes player A the leader, whatever seat the table expected. :func:`settle` is the one place
that says so; :func:`rules.deal.deal` records the leader it returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from rules.dealt import Pos, Throw, ThrowError, parse_seat
from rules.profiles import Profile
from rules.ring import ring, unit_first
from rules.seating import WrongThrower, rank_prefix
from rules.words import SEAT_INDEX, SEATS, Seat, seat_at

Purpose = Literal["wall", "breach", "order", "tie"]

#: What each throw is for, in words (a throw request's ``purpose``)
PURPOSE_TEXT: dict[str, str] = {
    "wall": "the designated wall",
    "breach": "the breach",
    "order": "the single-die round",
    "tie": "a re-throw of a tie",
}


class ThrowRequest(BaseModel):
    """Who must throw next, how many dice, and what the throw is for.

    ``purpose``: ``wall`` (the leader's throw that designates the wall, and in Wenzhou the
    joker stack), ``breach`` (the throw whose total is added to find the breach), ``order``
    (a single die of the Simplified round that picks player A), ``tie`` (a re-throw of a tie
    in that round).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    by: Seat
    count: int
    purpose: Purpose

    def describe(self) -> str:
        return f"{self.by} throws {_n_dice(self.count)} for {PURPOSE_TEXT[self.purpose]}"


@dataclass(frozen=True)
class Settled:
    """What complete throws decide: the leader (Simplified: player A), the designated wall,
    the first count (the leader's d1, or A's deciding die) and the breach count T."""

    leader: Seat
    designated: Seat
    first: int
    count: int


def designated_wall(thrower: Seat, total: int) -> Seat:
    """Dice counting (TABLE.md section 3): the thrower counts 1, then counter-clockwise."""
    return seat_at(SEAT_INDEX[thrower] + total - 1)


@dataclass(frozen=True)
class _Dice:
    """What a sequence of throws has settled so far."""

    request: ThrowRequest | None
    leader: Seat | None = None  # Simplified: player A, once the round settles
    designated: Seat | None = None
    first: int | None = None  # d1 (leader_then_owner) or A's deciding die
    count: int | None = None  # T, once complete


def _n_dice(n: int) -> str:
    return "1 die" if n == 1 else f"{n} dice"


def _check_dice(profile: Profile, index: int, throw: Throw, req: ThrowRequest) -> None:
    where = f"throw {index + 1} ({throw.text()})"
    if throw.by != req.by:
        raise ThrowError(f"{where}: thrown by {throw.by}, but {req.describe()}")
    if len(throw.dice) != req.count:
        raise ThrowError(f"{where}: {_n_dice(len(throw.dice))}, but {req.describe()}")
    faces = profile.dice.faces
    for die in throw.dice:
        if not 1 <= die <= faces:
            raise ThrowError(f"{where}: die {die} is out of range 1..{faces}")


def _extra(throws: Sequence[Throw], used: int) -> None:
    if len(throws) > used:
        raise ThrowError(
            f"throw {used + 1} ({throws[used].text()}): not expected, "
            f"the dice are complete after {used} throws"
        )


def _replay_leader_then_owner(profile: Profile, leader: Seat, throws: Sequence[Throw]) -> _Dice:
    n = profile.dice.dice
    first_req = ThrowRequest(by=leader, count=n, purpose="wall")
    if not throws:
        return _Dice(request=first_req, leader=leader)
    _check_dice(profile, 0, throws[0], first_req)
    d1 = throws[0].total()
    wall = designated_wall(leader, d1)
    second_req = ThrowRequest(by=wall, count=n, purpose="breach")
    if len(throws) == 1:
        return _Dice(request=second_req, leader=leader, designated=wall, first=d1)
    _check_dice(profile, 1, throws[1], second_req)
    _extra(throws, 2)
    return _Dice(
        request=None, leader=leader, designated=wall, first=d1, count=d1 + throws[1].total()
    )


def _replay_single_die_round(profile: Profile, throws: Sequence[Throw]) -> _Dice:
    faces = profile.dice.faces
    values: list[tuple[Seat, int]] = []
    for i, throw in enumerate(throws):
        if len(throw.dice) != 1:
            break
        if not 1 <= throw.dice[0] <= faces:
            raise ThrowError(f"throw {i + 1} ({throw.text()}): die out of range 1..{faces}")
        values.append((throw.by, throw.dice[0]))
    try:
        ranking = rank_prefix(list(SEATS), values, ties=profile.dice.ties, resolve="top")
    except WrongThrower as wrong:
        expected: Seat = wrong.expected  # type: ignore[assignment]
        req = ThrowRequest(by=expected, count=1, purpose="tie" if wrong.rethrow else "order")
        _check_dice(profile, wrong.index, throws[wrong.index], req)
        raise
    if ranking.order is None:
        assert ranking.next_thrower is not None
        req = ThrowRequest(
            by=ranking.next_thrower, count=1, purpose="tie" if ranking.rethrow else "order"
        )
        if len(values) < len(throws):
            _check_dice(profile, len(values), throws[len(values)], req)
        return _Dice(request=req)
    used = ranking.used
    player_a = ranking.order[0]
    deciding = [v for by, v in values[:used] if by == player_a][-1]
    req = ThrowRequest(by=player_a, count=profile.dice.dice, purpose="breach")
    if len(throws) == used:
        return _Dice(request=req, leader=player_a, designated=player_a, first=deciding)
    _check_dice(profile, used, throws[used], req)
    _extra(throws, used + 1)
    count = deciding + throws[used].total()
    return _Dice(request=None, leader=player_a, designated=player_a, first=deciding, count=count)


def _replay_short_form(profile: Profile, throws: Sequence[Throw]) -> _Dice:
    """Simplified written short: player A's deciding single die, then his dice."""
    player_a = throws[0].by
    die = throws[0].dice[0]
    faces = profile.dice.faces
    if not 2 <= die <= faces:
        raise ThrowError(
            f"throw 1 ({die}): player A's deciding die must be 2..{faces} "
            "(a 1 cannot be the highest of the round)"
        )
    req = ThrowRequest(by=player_a, count=profile.dice.dice, purpose="breach")
    _check_dice(profile, 1, throws[1], req)
    _extra(throws, 2)
    return _Dice(
        request=None,
        leader=player_a,
        designated=player_a,
        first=die,
        count=die + throws[1].total(),
    )


def _is_short_form(throws: Sequence[Throw]) -> bool:
    return len(throws) >= 2 and len(throws[0].dice) == 1 and len(throws[1].dice) > 1


def _dice_choose_leader(profile: Profile) -> bool:
    return profile.dice.procedure == "single_die_round"


def next_throw(profile: Profile, leader: Seat, throws: Sequence[Throw]) -> ThrowRequest | None:
    """Who throws next, how many dice and what for, given the throws so far; None when the
    dice are complete. Raises ThrowError when a throw so far is out of range, has the wrong
    number of dice, is by the wrong seat, or comes after the dice are complete.

    Wenzhou, Sichuan, WSOM: the leader throws, then the owner of the designated wall.
    Simplified: one die each in the order E, S, W, N (``leader`` is not used: the round picks
    player A), ties re-thrown as the profile says, then A throws two dice.
    """
    answer = progress(profile, leader, throws)
    return answer if isinstance(answer, ThrowRequest) else None


def progress(profile: Profile, leader: Seat, throws: Sequence[Throw]) -> ThrowRequest | Settled:
    """:func:`next_throw` and :func:`settle` in one reading of the throws: who throws next, or,
    once the dice are complete, what they decide (a table asking throw by throw deals on the
    answer that ends them, without reading the throws again). Raises ThrowError as
    :func:`next_throw` does."""
    leader = parse_seat(leader)
    if not _dice_choose_leader(profile):
        result = _replay_leader_then_owner(profile, leader, throws)
    else:
        result = _replay_single_die_round(profile, throws)
    return result.request if result.request is not None else _settled(result)


def _settled(result: _Dice) -> Settled:
    assert result.leader is not None and result.designated is not None
    assert result.first is not None and result.count is not None
    return Settled(result.leader, result.designated, result.first, result.count)


def settle(profile: Profile, leader: Seat | None, throws: Sequence[Throw]) -> Settled:
    """What complete throws decide, the leader first.

    ``leader`` is the seat the table expects to lead (the seating, then the rotation). In
    Wenzhou, Sichuan and WSOM he leads and must be given. In the simplified rules the dice
    choose: the single-die round (or, written short, player A's deciding die and his dice)
    makes player A the leader, and ``leader`` plays no part, as in :func:`next_throw`.
    Raises ThrowError naming the throw at fault, or the one still missing.
    """
    given = parse_seat(leader) if leader is not None else None
    if not _dice_choose_leader(profile):
        if given is None:
            raise ThrowError(f"the leader must be named for {profile.name}")
        result = _replay_leader_then_owner(profile, given, throws)
    elif _is_short_form(throws):
        result = _replay_short_form(profile, throws)
    else:
        result = _replay_single_die_round(profile, throws)
    if result.request is not None:
        raise ThrowError(f"the throws are incomplete: {result.request.describe()}")
    return _settled(result)


def throws_from_dice(
    profile: Profile, leader: Seat | None, groups: Sequence[Sequence[int]]
) -> list[Throw]:
    """Attach the thrower to each group of dice written without one (``3+4,5+6``), following
    the profile's dice procedure. A Simplified record may be short: player A's deciding die
    then his two dice, with ``leader`` naming A; with the whole round a ``leader`` given must
    be the player A the round picks."""
    throws: list[Throw] = []
    simplified = _dice_choose_leader(profile)
    singles = 0
    for g in groups:
        if len(g) != 1:
            break
        singles += 1
    if simplified and singles == 1 and len(groups) >= 2:
        if leader is None:
            raise ThrowError("with only player A's single die the leader (player A) must be named")
        return [Throw(by=leader, dice=list(g)) for g in groups]
    if not simplified and leader is None:
        raise ThrowError(f"the leader must be named for {profile.name}")
    start: Seat = leader if leader is not None else "E"
    for i, g in enumerate(groups):
        req = next_throw(profile, start, throws)
        text = "+".join(str(d) for d in g)
        if req is None:
            raise ThrowError(
                f"throw {i + 1} ({text}): not expected, the dice are complete after {i} throws"
            )
        if len(g) != req.count:
            raise ThrowError(f"throw {i + 1} ({text}): {_n_dice(len(g))}, but {req.describe()}")
        throws.append(Throw(by=req.by, dice=list(g)))
    if next_throw(profile, start, throws) is None and simplified and leader is not None:
        chosen = settle(profile, leader, throws).leader
        if chosen != leader:
            raise ThrowError(
                f"leader {leader} does not match the throws: the single-die round makes "
                f"{chosen} player A"
            )
    return throws


def joker_position(profile: Profile, leader: Seat, first: Throw) -> Pos | None:
    """Where the joker indicator lies once the leader's first throw is known (Wenzhou: the
    first tile of the d1-th unit from the designated wall's right end); None without joker."""
    if profile.joker.kind != "indicator":
        return None
    result = _replay_leader_then_owner(profile, parse_seat(leader), [first])
    assert result.designated is not None and result.first is not None
    walls = ring(profile.layout, result.designated)
    return walls.pos[unit_first(profile, walls, result.first)]
