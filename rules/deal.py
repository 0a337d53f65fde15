"""The table procedures: dice counting, the joker turn, the breach, the colline, the deal, the
live wall and replacements (TABLE.md sections 3, 4 and 8). Pure functions of their inputs.

The walls form a ring (TABLE.md section 2): wall D stacks 1..n, then wall D-1, and so on,
"leftward". Every procedure works on the **tile sequence** of that ring starting at the
designated wall's right end: stack by stack, the top tile before the bottom one (a half stack
has one tile). In pair mode one pip counts one stack, in tile mode one tile; either way the
breach falls after one tile of the sequence, the deal takes the tiles after it in sequence
order, the live wall follows the deal, and the colline is the tiles just before the breach.

Public entry points:

- :func:`next_throw` -- who throws next, how many dice, what for (drives the dice);
- :func:`deal` -- the :class:`~rules.dealt.DealtState` for a manifest and throws;
- :func:`manifest_from_ring` -- a :class:`~rules.dealt.Manifest` from the board's flat list;
- :func:`wall_state`, :func:`draw`, :func:`replacement`, :func:`take_live_end` -- the live
  wall and the colline during play.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from rules.dealt import (
    SEAT_INDEX,
    SEATS,
    UNKNOWN,
    DealError,
    DealtState,
    Joker,
    Manifest,
    ManifestError,
    Pos,
    ProfileRef,
    Seat,
    Throw,
    ThrowError,
    Tile,
    TileSetName,
    manifest_from_data,
    parse_seat,
    seat_at,
)
from rules.profiles import Layout, Profile, load_profile
from rules.seating import WrongThrower, rank_prefix
from rules.tiles import tile_set

__all__ = [
    "DealError",
    "DealtState",
    "Drawn",
    "Manifest",
    "ManifestError",
    "Placed",
    "Pos",
    "Profile",
    "Throw",
    "ThrowError",
    "ThrowRequest",
    "WallExhausted",
    "WallState",
    "deal",
    "designated_wall",
    "dice_leader",
    "draw",
    "joker_position",
    "load_profile",
    "manifest_from_ring",
    "next_throw",
    "replacement",
    "take_live_end",
    "throws_from_dice",
    "validate_manifest",
    "wall_state",
]

Purpose = Literal["wall", "breach", "order", "tie"]

_PURPOSE_TEXT: dict[str, str] = {
    "wall": "the designated wall",
    "breach": "the breach",
    "order": "the single-die round",
    "tie": "a re-throw of a tie",
}


class WallExhausted(DealError):
    """No tile left where a draw or a replacement must come from."""


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
        return f"{self.by} throws {_n_dice(self.count)} for {_PURPOSE_TEXT[self.purpose]}"


def designated_wall(thrower: Seat, total: int) -> Seat:
    """Dice counting (TABLE.md section 3): the thrower counts 1, then counter-clockwise."""
    return seat_at(SEAT_INDEX[thrower] + total - 1)


# --------------------------------------------------------------------------- throws


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
    if len(throws) == 1:
        req = ThrowRequest(by=player_a, count=profile.dice.dice, purpose="breach")
        return _Dice(request=req, leader=player_a, designated=player_a, first=die)
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


def next_throw(profile: Profile, leader: Seat, throws: Sequence[Throw]) -> ThrowRequest | None:
    """Who throws next, how many dice and what for, given the throws so far; None when the
    dice are complete. Raises ThrowError when a throw so far is out of range, has the wrong
    number of dice, is by the wrong seat, or comes after the dice are complete.

    Wenzhou, Sichuan, WSOM: the leader throws, then the owner of the designated wall.
    Simplified: one die each in the order E, S, W, N (``leader`` is not used: the round picks
    player A), ties re-thrown as the profile says, then A throws two dice.
    """
    leader = parse_seat(leader)
    if profile.dice.procedure == "leader_then_owner":
        return _replay_leader_then_owner(profile, leader, throws).request
    return _replay_single_die_round(profile, throws).request


def _settle(profile: Profile, leader: Seat, throws: Sequence[Throw]) -> _Dice:
    if profile.dice.procedure == "leader_then_owner":
        result = _replay_leader_then_owner(profile, leader, throws)
    elif _is_short_form(throws):
        result = _replay_short_form(profile, throws)
    else:
        result = _replay_single_die_round(profile, throws)
    if result.request is not None:
        raise ThrowError(f"the throws are incomplete: {result.request.describe()}")
    if result.leader != leader:
        raise ThrowError(
            f"leader {leader} does not match the throws: the single-die round makes "
            f"{result.leader} player A"
        )
    return result


def dice_leader(profile: Profile, throws: Sequence[Throw]) -> Seat | None:
    """The leader the dice themselves pick (Simplified: player A), or None when the profile's
    leader is given rather than thrown, or the throws do not settle it yet."""
    if profile.dice.procedure == "leader_then_owner" or not throws:
        return None
    if _is_short_form(throws):
        return throws[0].by
    return _replay_single_die_round(profile, throws).leader


def throws_from_dice(
    profile: Profile, leader: Seat | None, groups: Sequence[Sequence[int]]
) -> list[Throw]:
    """Attach the thrower to each group of dice written without one (``3+4,5+6``), following
    the profile's dice procedure. A Simplified record may be short: player A's deciding die
    then his two dice, with ``leader`` naming A."""
    throws: list[Throw] = []
    simplified = profile.dice.procedure == "single_die_round"
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
    next_throw(profile, start, throws)  # validates the ranges of the last throw
    return throws


# --------------------------------------------------------------------------- the ring


@dataclass(frozen=True)
class _Ring:
    """The tile sequence from a designated wall's right end, and its stacks."""

    pos: tuple[Pos, ...]  # tile index -> position
    look: tuple[tuple[Seat, int, int], ...]  # tile index -> (wall, stack index, index in stack)
    stack_of: tuple[int, ...]  # tile index -> ring stack index (0-based)
    first: tuple[int, ...]  # ring stack index -> its first tile index
    last: tuple[int, ...]  # ring stack index -> its last tile index


@lru_cache(maxsize=64)
def _ring(layout: Layout, designated: Seat) -> _Ring:
    pos: list[Pos] = []
    look: list[tuple[Seat, int, int]] = []
    stack_of: list[int] = []
    first: list[int] = []
    last: list[int] = []
    d = SEAT_INDEX[designated]
    for k in range(4):
        wall = seat_at(d - k)
        for number, height in enumerate(layout.heights(wall), start=1):
            first.append(len(pos))
            tiers: tuple[Literal["top", "bottom"], ...] = (
                ("top", "bottom") if height == 2 else ("bottom",)
            )
            for j, tier in enumerate(tiers):
                pos.append(Pos(wall=wall, stack=number, tier=tier))
                look.append((wall, number - 1, j))
                stack_of.append(len(first) - 1)
            last.append(len(pos) - 1)
    return _Ring(tuple(pos), tuple(look), tuple(stack_of), tuple(first), tuple(last))


@lru_cache(maxsize=8)
def _set_counts(size: int) -> Counter[str]:
    return tile_set(size)


def validate_manifest(profile: Profile, manifest: Manifest) -> None:
    """Check a manifest against a profile's layout and tile set; ManifestError names the
    first fault. ``?`` tiles are allowed (a board without a reader); the known tiles must
    then not exceed the set."""
    layout = profile.layout
    for seat in SEATS:
        want = layout.heights(seat)
        stacks = manifest.walls[seat]
        if len(stacks) != len(want):
            raise ManifestError(
                f"manifest: wall {seat} has {len(stacks)} stacks, the layout has {len(want)}"
            )
        for number, (stack, height) in enumerate(zip(stacks, want, strict=True), start=1):
            if len(stack) != height:
                held = f"{len(stack)} tile" + ("s" if len(stack) != 1 else "")
                raise ManifestError(
                    f"manifest: wall {seat} stack {number} holds {held}, "
                    f"the layout has {height} there"
                )
    expected = _set_counts(int(profile.tile_set))
    counts = Counter(t for t in manifest.board_order() if t != UNKNOWN)
    for tile, n in counts.items():
        have = expected.get(tile, 0)
        if have == 0:
            raise ManifestError(f"manifest: tile {tile} is not in the {profile.tile_set}-tile set")
        if n > have:
            raise ManifestError(f"manifest: tile {tile} appears {n} times, the set has {have}")


def manifest_from_ring(profile_or_layout: Profile | Layout, tiles: Sequence[str]) -> Manifest:
    """The manifest from the board's flat list: wall E (stack 1 top, stack 1 bottom, stack 2
    top, ...; a half stack gives one tile), then walls S, W, N. Tiles may be ``?``."""
    layout = (
        profile_or_layout.layout if isinstance(profile_or_layout, Profile) else profile_or_layout
    )
    total = layout.tiles()
    if len(tiles) != total:
        raise ManifestError(
            f"manifest: the board sent {len(tiles)} tiles, the layout holds {total}"
        )
    walls: dict[str, list[list[str]]] = {}
    i = 0
    for seat in SEATS:
        stacks: list[list[str]] = []
        for height in layout.heights(seat):
            stacks.append(list(tiles[i : i + height]))
            i += height
        walls[seat] = stacks
    return manifest_from_data({"walls": walls})


def joker_position(profile: Profile, leader: Seat, first: Throw) -> Pos | None:
    """Where the joker indicator lies once the leader's first throw is known (Wenzhou: the
    first tile of the d1-th unit from the designated wall's right end); None without joker."""
    if profile.joker.kind != "indicator":
        return None
    result = _replay_leader_then_owner(profile, parse_seat(leader), [first])
    assert result.designated is not None and result.first is not None
    ring = _ring(profile.layout, result.designated)
    return ring.pos[_unit_first(profile, ring, result.first)]


def _unit_first(profile: Profile, ring: _Ring, units: int) -> int:
    """Tile index of the first tile of the ``units``-th unit counted (1-based)."""
    return ring.first[units - 1] if profile.counting == "pair" else units - 1


def _unit_last(profile: Profile, ring: _Ring, units: int) -> int:
    """Tile index of the last tile of the ``units``-th unit counted (1-based)."""
    return ring.last[units - 1] if profile.counting == "pair" else units - 1


def _colline_order(profile: Profile, ring: _Ring, breach: int) -> list[int]:
    """Colline tile indices in replacement order."""
    n = len(ring.pos)
    size = profile.colline.size
    if profile.breach.kind == "lift":
        # Stack T (index breach-1 top, breach bottom) is lifted; its first tile lies on the
        # stack lift_to[0] places right of the breach, the second on lift_to[1]. Order: from
        # the breach rightward, each pile from the top (a lifted tile lies on top).
        lifted = {off: (breach - 1 + j) % n for j, off in enumerate(profile.breach.lift_to)}
        order: list[int] = []
        for k in range(1, max(profile.breach.lift_to) + 1):
            if k in lifted:
                order.append(lifted[k])
            order.extend([(breach - 2 * k - 1) % n, (breach - 2 * k) % n])
        return order
    # Going right from the breach the sequence meets each stack bottom-first; group the
    # tiles by stack and take each stack top first.
    backward = [(breach - k) % n for k in range(size)]
    order = []
    group: list[int] = []
    for idx in backward:
        if group and ring.stack_of[idx] != ring.stack_of[group[0]]:
            order.extend(reversed(group))
            group = []
        group.append(idx)
    order.extend(reversed(group))
    return order


def deal(
    profile: Profile,
    manifest: Manifest,
    leader: Seat,
    throws: Sequence[Throw],
    *,
    cycle_id: str = "",
    tile_set: TileSetName = "A",
) -> DealtState:
    """The dealt state for this manifest and these throws (TABLE.md sections 3, 4, 8).

    ``leader`` is the seat that deals first (Simplified: player A, who must match the
    single-die round when all four dice are given). Raises DealError (ThrowError,
    ManifestError) naming what is wrong.
    """
    leader = parse_seat(leader)
    if tile_set not in ("A", "B"):
        raise DealError(f"unknown tile set {tile_set!r}: expected A or B")
    validate_manifest(profile, manifest)
    dice = _settle(profile, leader, throws)
    assert dice.designated is not None and dice.count is not None and dice.first is not None
    ring = _ring(profile.layout, dice.designated)
    n = len(ring.pos)
    walls = manifest.walls

    def tile(idx: int) -> str:
        wall, stack, j = ring.look[idx]
        return walls[wall][stack][j]

    breach = _unit_last(profile, ring, dice.count)
    joker: Joker | None = None
    if profile.joker.kind == "indicator":
        j = _unit_first(profile, ring, dice.first)
        joker = Joker(face=tile(j), position=ring.pos[j])

    colline = _colline_order(profile, ring, breach)
    start = breach + 1
    lead = SEAT_INDEX[leader]
    hand_idx: dict[Seat, list[int]] = {s: [] for s in SEATS}
    cursor = start
    for offset, count in profile.deal.takes():
        hand_idx[seat_at(lead + offset)].extend((cursor + k) % n for k in range(count))
        cursor += count
    live_len = n - (cursor - start) - profile.colline.size
    live = [(cursor + k) % n for k in range(live_len)]

    pos = ring.pos
    return DealtState(
        variant=profile.variant,
        profile=ProfileRef(name=profile.name, version=profile.version),
        cycle_id=cycle_id,
        tile_set=tile_set,
        counting=profile.counting,
        leader=leader,
        seats=[seat_at(lead + k) for k in range(4)],
        throws=list(throws),
        designated_wall=dice.designated,
        count=dice.count,
        joker=joker,
        breach=pos[breach],
        hands={s: [tile(i) for i in hand_idx[s]] for s in SEATS},
        hand_positions={s: [pos[i] for i in hand_idx[s]] for s in SEATS},
        colline=[tile(i) for i in colline],
        colline_positions=[pos[i] for i in colline],
        live_wall=[tile(i) for i in live],
        live_wall_positions=[pos[i] for i in live],
        manifest=manifest,
    )


# --------------------------------------------------------------------------- play


class Placed(BaseModel):
    """A tile and the wall position it was dealt from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tile: Tile
    pos: Pos


class WallState(BaseModel):
    """The live wall (front first, in draw order) and the colline (in replacement order)
    during play. Immutable: every operation returns a new state."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    live: tuple[Placed, ...]
    colline: tuple[Placed, ...]

    @property
    def exhausted(self) -> bool:
        """True once the last live tile has been drawn (Wenzhou: the hand is a draw)."""
        return not self.live


class Drawn(BaseModel):
    """The result of a draw or a replacement: the tile taken, the tile moved from the live
    wall's end to the colline's right end (Wenzhou) if any, and the wall afterwards."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tile: Placed
    moved: Placed | None = None
    wall: WallState


def wall_state(dealt: DealtState) -> WallState:
    """The wall right after the deal."""
    live = tuple(
        Placed(tile=t, pos=p)
        for t, p in zip(dealt.live_wall, dealt.live_wall_positions, strict=True)
    )
    colline = tuple(
        Placed(tile=t, pos=p) for t, p in zip(dealt.colline, dealt.colline_positions, strict=True)
    )
    return WallState(live=live, colline=colline)


def draw(wall: WallState) -> Drawn:
    """An ordinary draw: the first tile of the live wall."""
    if not wall.live:
        raise WallExhausted("the live wall is exhausted: nothing left to draw")
    return Drawn(tile=wall.live[0], wall=WallState(live=wall.live[1:], colline=wall.colline))


def _end_index(live: tuple[Placed, ...]) -> int:
    """Index of the tile taken from the live wall's far end: the top of its last stack."""
    if len(live) >= 2:
        a, b = live[-2].pos, live[-1].pos
        if a.wall == b.wall and a.stack == b.stack:
            return len(live) - 2
    return len(live) - 1


def take_live_end(wall: WallState) -> Drawn:
    """A tile from the live wall's far end (the stack next to the colline, or to the breach
    without colline): the top tile of the last stack first (TABLE.md section 2)."""
    if not wall.live:
        raise WallExhausted("the live wall is exhausted: no tile at its far end")
    i = _end_index(wall.live)
    rest = wall.live[:i] + wall.live[i + 1 :]
    return Drawn(tile=wall.live[i], wall=WallState(live=rest, colline=wall.colline))


def replacement(profile: Profile, wall: WallState) -> Drawn:
    """A kong (or flower) replacement as the profile says (TABLE.md section 4).

    ``colline``: the colline's first tile (from the left, top first); then, when the colline
    is replenished, the live wall's last tile moves to the colline's right end so it keeps
    its size (while the live wall has tiles). ``live_end``: :func:`take_live_end`.
    """
    if profile.replacement.source == "live_end":
        return take_live_end(wall)
    if not wall.colline:
        raise WallExhausted("the colline is empty: no replacement tile")
    taken = wall.colline[0]
    colline = wall.colline[1:]
    live = wall.live
    moved: Placed | None = None
    if profile.colline.replenish == "live_end" and live:
        i = _end_index(live)
        moved = live[i]
        live = live[:i] + live[i + 1 :]
        colline = (*colline, moved)
    return Drawn(tile=taken, moved=moved, wall=WallState(live=live, colline=colline))
