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
from protocol.wirecodes import (
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
    from collections.abc import Callable, Sequence

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


def shuffle_block(mine: int, other: int) -> int:
    """0 when SHUFFLE may take a set in place ``mine`` (the other set in ``other``), else the
    BLOCK detail. The four rules take the two places, so the host checks a command against the
    board's report with these same functions (controller/cycle/places.py)."""
    if not in_disc(mine):
        return BLOCK_SET_NOT_IN_DISC
    return 0


def build_block(mine: int, other: int) -> int:
    if mine != SHUFFLED:
        return BLOCK_SET_NOT_SHUFFLED
    if on_bench(other):
        return BLOCK_BENCH_OCCUPIED
    return 0


def lift_block(mine: int, other: int) -> int:
    if mine != BUILT:
        return BLOCK_SET_NOT_BUILT
    if other == UP:
        return BLOCK_SURFACE_OCCUPIED
    return 0


def manifest_block(mine: int, other: int) -> int:
    if mine != BUILT and mine != UP:
        return BLOCK_SET_NOT_BUILT
    return 0


def set_block(sets: "Sequence[TileSet]", rule: "Callable[[int, int], int]", tile_set: int) -> int:
    """``rule`` (one of the four above) for ``tile_set`` among the board's ``sets``."""
    return rule(sets[tile_set].place, sets[1 - tile_set].place)


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
