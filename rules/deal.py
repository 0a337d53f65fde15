"""The deal: the joker turn, the breach, the colline, each seat's tiles and the live wall
(TABLE.md sections 3, 4 and 8), as one pure function of the manifest and the throws.

Every procedure works on the tile sequence of :mod:`rules.ring`: the breach falls after one
tile of the sequence, the deal takes the tiles after it in sequence order, the live wall
follows the deal, and the colline is the tiles just before the breach. The dice are read by
:mod:`rules.dice` (who leads, the designated wall, the count), the manifest checked by
:mod:`rules.manifest`, and play goes on with :mod:`rules.wall`.
"""

from __future__ import annotations

from collections.abc import Sequence

from rules.dealt import DealError, DealtState, Joker, Manifest, Throw
from rules.dice import Settled, settle
from rules.manifest import validate_manifest
from rules.profiles import Profile
from rules.ring import Ring, ring, unit_first, unit_last
from rules.words import SEAT_INDEX, SEATS, TILE_SETS, Seat, TileSetName, seat_at


def _colline_order(profile: Profile, walls: Ring, breach: int) -> list[int]:
    """Colline tile indices in replacement order."""
    n = len(walls.pos)
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
        if group and walls.stack_of[idx] != walls.stack_of[group[0]]:
            order.extend(reversed(group))
            group = []
        group.append(idx)
    order.extend(reversed(group))
    return order


def deal(
    profile: Profile,
    manifest: Manifest,
    leader: Seat | None,
    throws: Sequence[Throw],
    *,
    cycle_id: str = "",
    tile_set: TileSetName = "A",
    checked: bool = False,
    settled: Settled | None = None,
) -> DealtState:
    """The dealt state for this manifest and these throws (TABLE.md sections 3, 4, 8).

    ``leader`` is the seat the table expects to lead; the dealt state records the leader the
    rules settle (:func:`rules.dice.settle`: in the simplified rules, player A of the dice,
    whatever seat is given; elsewhere ``leader``, who must be given). ``checked``: the
    manifest was already checked against this profile (:func:`rules.manifest.
    manifest_from_ring`), so it is not checked again. ``settled``: what these throws decide,
    as :func:`rules.dice.progress` answered when they completed, so they are not read again.
    Raises DealError (ThrowError, ManifestError) naming what is wrong.
    """
    if tile_set not in TILE_SETS:
        raise DealError(f"unknown tile set {tile_set!r}: expected A or B")
    if not checked:
        validate_manifest(profile, manifest)
    dice = settled if settled is not None else settle(profile, leader, throws)
    walls = ring(profile.layout, dice.designated)
    n = len(walls.pos)
    stacks = manifest.walls

    def tile(idx: int) -> str:
        wall, stack, j = walls.look[idx]
        return stacks[wall][stack][j]

    breach = unit_last(profile, walls, dice.count)
    joker: Joker | None = None
    if profile.joker.kind == "indicator":
        j = unit_first(profile, walls, dice.first)
        joker = Joker(face=tile(j), position=walls.pos[j])

    colline = _colline_order(profile, walls, breach)
    start = breach + 1
    lead = SEAT_INDEX[dice.leader]
    hand_idx: dict[Seat, list[int]] = {s: [] for s in SEATS}
    cursor = start
    for offset, count in profile.deal.takes():
        hand_idx[seat_at(lead + offset)].extend((cursor + k) % n for k in range(count))
        cursor += count
    live_len = n - (cursor - start) - profile.colline.size
    live = [(cursor + k) % n for k in range(live_len)]

    pos = walls.pos
    return DealtState(
        variant=profile.variant,
        profile=profile.ref(),
        cycle_id=cycle_id,
        tile_set=tile_set,
        counting=profile.counting,
        leader=dice.leader,
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
