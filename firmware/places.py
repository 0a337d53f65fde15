"""Where each tile set is, and which command its place allows.

The two sets and their places (the simulator's, plus ``UNKNOWN``)::

    DISC      loose in the shuffle disc, order unknown (both sets at first power-on)
    SHUFFLED  in the disc, shuffled
    BUILDING  being built into walls under the table
    PARTIAL   a build that stopped or faulted: ``laid`` tiles in walls under the table
    BUILT     four walls under the table, manifest known (from the tile reader)
    UP        walls raised on the table: the set being played
    UNKNOWN   the power went while a motion moved this set: it may be anywhere

The rules (REFUSED BAD_STATE with the detail of protocol.codes.BLOCKS), exactly the
simulator's, UNKNOWN counting as PARTIAL (it must be shuffled again)::

    SHUFFLE s        s in DISC, SHUFFLED, PARTIAL or UNKNOWN   else SET_NOT_IN_DISC
    BUILD_WALLS s    s SHUFFLED                                else SET_NOT_SHUFFLED
                     the other not BUILT, PARTIAL or UNKNOWN   else BENCH_OCCUPIED
    LIFT_WALLS s     s BUILT                                   else SET_NOT_BUILT
                     the other not UP                          else SURFACE_OCCUPIED
    READ_MANIFEST s  s BUILT or UP                             else SET_NOT_BUILT
"""

from firmware.compat import TYPE_CHECKING, const
from firmware.config import MAX_STACKS_PER_WALL
from protocol.codes import (
    BLOCK_BENCH_OCCUPIED,
    BLOCK_SET_NOT_BUILT,
    BLOCK_SET_NOT_IN_DISC,
    BLOCK_SET_NOT_SHUFFLED,
    BLOCK_SURFACE_OCCUPIED,
    PLACE_BUILDING,
    PLACE_BUILT,
    PLACE_DISC,
    PLACE_PARTIAL,
    PLACE_SHUFFLED,
    PLACE_UNKNOWN,
    PLACE_UP,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

# the protocol's place codes (BOARD_STATUS.places): one name for one thing
DISC = PLACE_DISC
SHUFFLED = PLACE_SHUFFLED
BUILDING = PLACE_BUILDING
PARTIAL = PLACE_PARTIAL
BUILT = PLACE_BUILT
UP = PLACE_UP
UNKNOWN = PLACE_UNKNOWN

#: BAD_LAYOUT detail when the walls do not add up to the set (or are not four)
LAYOUT_TOTAL = const(4)


class TileSet:
    """One physical set: its place, how far its last build got, its layout and manifest."""

    def __init__(self, tiles: int) -> None:
        self.place = DISC
        #: tiles laid in walls by the set's last build (the progress of a PARTIAL set)
        self.laid = 0
        #: stack heights per wall of the walls being built, built or up (else None)
        self.layout: tuple[tuple[int, ...], ...] | None = None
        #: tile codes in manifest order (valid while BUILT or UP); 0xFF = not read
        self.manifest = bytearray(tiles)

    def forget(self, place: int) -> None:
        """The set drops back into the disc (or is lost track of): no walls, no manifest."""
        self.place = place
        self.laid = 0
        self.layout = None


def in_disc(place: int) -> bool:
    return place in (DISC, SHUFFLED, PARTIAL, UNKNOWN)


def on_bench(place: int) -> bool:
    """Walls (whole or partial, or maybe) wait under the table."""
    return place in (BUILT, PARTIAL, UNKNOWN)


def shuffle_block(sets: "Sequence[TileSet]", tile_set: int) -> int:
    """0 when SHUFFLE may start, else the BLOCK detail."""
    if not in_disc(sets[tile_set].place):
        return BLOCK_SET_NOT_IN_DISC
    return 0


def build_block(sets: "Sequence[TileSet]", tile_set: int) -> int:
    if sets[tile_set].place != SHUFFLED:
        return BLOCK_SET_NOT_SHUFFLED
    if on_bench(sets[1 - tile_set].place):
        return BLOCK_BENCH_OCCUPIED
    return 0


def lift_block(sets: "Sequence[TileSet]", tile_set: int) -> int:
    if sets[tile_set].place != BUILT:
        return BLOCK_SET_NOT_BUILT
    if sets[1 - tile_set].place == UP:
        return BLOCK_SURFACE_OCCUPIED
    return 0


def manifest_block(sets: "Sequence[TileSet]", tile_set: int) -> int:
    place = sets[tile_set].place
    if place != BUILT and place != UP:
        return BLOCK_SET_NOT_BUILT
    return 0


def layout_problem(layout: object, tiles: int) -> int:
    """-1 if the layout fits a set of ``tiles``, else the BAD_LAYOUT detail: the first bad wall
    0..3, or 4 when there are not four walls or the heights do not add up to the set."""
    if not isinstance(layout, (tuple, list)) or len(layout) != 4:
        return LAYOUT_TOTAL
    total = 0
    for w in range(4):
        wall = layout[w]
        if not isinstance(wall, (tuple, list, bytes)) or not 1 <= len(wall) <= MAX_STACKS_PER_WALL:
            return w
        for h in wall:
            if h != 1 and h != 2:
                return w
            total += h
    if total != tiles:
        return LAYOUT_TOTAL
    return -1


def set_at(sets: "Sequence[TileSet]", place: int) -> int:
    """The first set in ``place``, or -1."""
    for i in range(len(sets)):
        if sets[i].place == place:
            return i
    return -1
