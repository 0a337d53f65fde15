"""Opening a hand record from a dealt state, and replaying a hand from its log.

:func:`start` validates a :class:`~rules.dealt.DealtState` (:func:`validate_dealt`: each
seat's count, the joker, every tile once and where the manifest says it is) and opens a
:class:`~rules.record.HandRecord`; :func:`replay` applies a whole list of events, so a hand
can be recomputed from the log and settled.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from rules.dealt import UNKNOWN, DealtState
from rules.events import Event, RecordError
from rules.profiles import Profile, load_profile
from rules.record import HandRecord
from rules.scoring import DEFAULT_TABLE, WenzhouTable
from rules.seating import WenzhouGame
from rules.tiles import is_bonus, sort_key, tile_copies
from rules.words import SEATS, RuleSet


def validate_dealt(dealt: DealtState, profile: Profile) -> None:
    """Refuse a dealt state the rules cannot play, naming the fault."""
    if dealt.variant != profile.variant:
        raise RecordError(
            f"dealt state is {dealt.variant} but profile {profile.name} is {profile.variant}"
        )
    every = [t for s in SEATS for t in dealt.hands[s]] + dealt.colline + dealt.live_wall
    if UNKNOWN in every:
        raise RecordError("the dealt state holds unidentified tiles ('?'): nothing to score")
    for seat in SEATS:
        want = profile.hand_size(seat == dealt.leader)
        got = len(dealt.hands[seat])
        if got != want:
            role = "the leader" if seat == dealt.leader else "a player"
            raise RecordError(f"seat {seat} holds {got} tiles; {role} is dealt {want}")
        if len(dealt.hand_positions[seat]) != got:
            raise RecordError(
                f"seat {seat}: {got} tiles but {len(dealt.hand_positions[seat])} positions"
            )
    expected = tile_copies(profile.tiles)
    found = Counter(every)
    if found != expected:
        extra = sorted((found - expected).elements(), key=sort_key)
        missing = sorted((expected - found).elements(), key=sort_key)
        what = f"{extra[0]} more than the set holds" if extra else f"{missing[0]} missing"
        raise RecordError(f"the dealt tiles are not one {profile.tiles}-tile set: {what}")
    placed = [
        (t, p) for s in SEATS for t, p in zip(dealt.hands[s], dealt.hand_positions[s], strict=True)
    ]
    if len(dealt.colline) != len(dealt.colline_positions) or len(dealt.live_wall) != len(
        dealt.live_wall_positions
    ):
        raise RecordError("colline or live wall: tiles and positions differ in number")
    placed += list(zip(dealt.colline, dealt.colline_positions, strict=True))
    placed += list(zip(dealt.live_wall, dealt.live_wall_positions, strict=True))
    seen: set[tuple[str, int, str]] = set()
    for tile, pos in placed:
        key = (pos.wall, pos.stack, pos.tier)
        if key in seen:
            raise RecordError(f"tile position {pos.label()} is used twice")
        seen.add(key)
        try:
            at = dealt.manifest.tile_at(pos)
        except (KeyError, IndexError):
            raise RecordError(f"position {pos.label()} is not in the manifest") from None
        if at != tile:
            raise RecordError(f"{tile} listed at {pos.label()}, where the manifest has {at}")
    if profile.joker.kind == "indicator":
        if dealt.joker is None:
            raise RecordError(f"{profile.variant} needs a joker: the dealt state has none")
        try:
            turned = dealt.manifest.tile_at(dealt.joker.position)
        except (KeyError, IndexError):
            raise RecordError("the joker's position is not in the manifest") from None
        if turned != dealt.joker.face:
            raise RecordError(
                f"joker face {dealt.joker.face} but the tile turned at "
                f"{dealt.joker.position.label()} is {turned}"
            )
        if is_bonus(dealt.joker.face):
            raise RecordError(f"joker face {dealt.joker.face} is a flower or season")
    elif dealt.joker is not None:
        raise RecordError(f"{profile.variant} plays without joker, but the dealt state has one")


def start(
    dealt: DealtState,
    profile: Profile | None = None,
    *,
    game: WenzhouGame | None = None,
    table: WenzhouTable = DEFAULT_TABLE,
) -> HandRecord:
    """Validate a dealt state and open its hand record.

    ``profile``: the profile the deal was computed with (default: the built-in one named in
    the dealt state, whose version must match). ``game`` (Wenzhou): the game before this hand,
    for the leader's streak and the next game; its leader must be the dealt leader.
    """
    if profile is None:
        profile = load_profile(dealt.profile.name)
        if profile.version != dealt.profile.version:
            raise RecordError(
                f"profile {profile.name} is version {profile.version}, the deal used "
                f"version {dealt.profile.version}: pass the profile it was computed with"
            )
    validate_dealt(dealt, profile)
    if game is not None:
        if dealt.variant is not RuleSet.WENZHOU:
            raise RecordError("a Wenzhou game state was given for a non-Wenzhou hand")
        if game.over:
            raise RecordError("the Wenzhou game is over: draw the winds again")
        if game.leader != dealt.leader:
            raise RecordError(f"the game's leader is {game.leader}, the deal's is {dealt.leader}")
    return HandRecord(dealt, profile, game, table)


def replay(
    dealt: DealtState,
    events: Iterable[Event],
    profile: Profile | None = None,
    *,
    game: WenzhouGame | None = None,
    table: WenzhouTable = DEFAULT_TABLE,
) -> HandRecord:
    """Start a record and apply every event; RecordError names the first refused one."""
    record = start(dealt, profile, game=game, table=table)
    for number, event in enumerate(events, start=1):
        try:
            record.apply(event)
        except RecordError as exc:
            raise RecordError(f"event {number} ({event.type}): {exc}") from None
    return record
