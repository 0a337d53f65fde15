"""The build: four walls stacked, checked and pushed onto their plates; the manifest read.

For each wall, E S W N:

1. stack: the disc feeds and the head lays tiles until the tile counter at the head has
   counted the wall's tiles. Watched: a tile at the head at least every sort_timeout_ms
   (SORT_TIMEOUT), the head's hall sensor every head_jam_ms (HEAD_JAM), the disc index every
   disc_gap_ms (MOTOR_STALL of the disc). Each tile counted at the head is read by the tile
   reader: its code must come within reader_timeout_ms (READER_FAULT), and the reader must
   see no tile between two tiles (so one tile is never read twice);
2. check: settle_ms after the last tile, the wall channel's own counter must show the wall's
   tiles: fewer is WALL_SHORT, more WALL_EXTRA (detail = wall);
3. push: the chain runs until it comes home again, within chain_timeout_ms (CHAIN_HOME).

Before the first wall the chain is brought home if it is not there. After the last wall, with a
reader, the manifest must be exactly the set (every face as often as the set holds it), else
TILE_COUNT. PROGRESS: every 10 % of the nominal time, and at the end of each wall (detail = the
wall being built).
"""

from firmware.compat import TYPE_CHECKING
from firmware.hal import (
    FORWARD,
    SENSE_CHAIN_HOME,
    SENSE_DISC_INDEX,
    SENSE_HEAD_HOME,
    SENSE_TILE,
    SENSE_WALL,
    SPEED_FULL,
    TILE_NONE,
    ticks_diff,
)
from protocol.wirecodes import (
    FAULT_CHAIN_HOME,
    FAULT_HEAD_JAM,
    FAULT_MOTOR_STALL,
    FAULT_READER_FAULT,
    FAULT_SORT_TIMEOUT,
    FAULT_TILE_COUNT,
    FAULT_WALL_EXTRA,
    FAULT_WALL_SHORT,
    MOTOR_CHAIN,
    MOTOR_SHUFFLE_DISC,
    MOTOR_STACKER_HEAD,
    SUB_CHAIN,
    SUB_READER,
    SUB_SHUFFLER,
    SUB_STACKER_HEAD,
    TILE_UNKNOWN,
)

if TYPE_CHECKING:
    from firmware.board import Board, Step, Steps

_EDGE_MASK = 0xFFFF


def _push(b: "Board", base: int, total: int) -> "Step":
    """Run the chain until its home sensor ticks (it came home); False after CHAIN_HOME.
    ``base`` is the build's progress (in nominal ms) when the push starts, of ``total``."""
    hal = b.hal
    start = b.now
    count = hal.edges(SENSE_CHAIN_HOME)
    b.sup.drive(MOTOR_CHAIN, FORWARD, SPEED_FULL)
    limit = b.timings.chain_timeout_ms
    while hal.edges(SENSE_CHAIN_HOME) == count:
        if ticks_diff(b.now, start) >= limit:
            b.fail(FAULT_CHAIN_HOME, SUB_CHAIN, 0)
            return False
        if total:
            elapsed = ticks_diff(b.now, start)
            push_ms = b.timings.push_ms
            done = base + (elapsed if elapsed < push_ms else push_ms)
            b.progress_of(done, total, b.building_wall)
        yield
    b.sup.stop(MOTOR_CHAIN)
    return True


def build(b: "Board", tile_set: int, layout: "tuple[tuple[int, ...], ...]") -> "Steps":
    hal = b.hal
    sup = b.sup
    t = b.timings
    s = b.sets[tile_set]
    manifest = s.manifest
    reader = hal.has_reader()
    counts = b.wall_counts
    tiles = 0
    for wall in layout:
        for h in wall:
            tiles += h
    total = tiles * t.tile_ms + 4 * t.push_ms  # nominal, for progress
    b.building_wall = 0
    if not hal.level(SENSE_CHAIN_HOME) and not (yield from _push(b, 0, 0)):
        return
    hal.select_set(tile_set)
    index = 0  # manifest position of the next tile
    for w in range(4):
        b.building_wall = w
        need = 0
        for h in layout[w]:
            need += h
        # 1. stack
        now = b.now
        # the head first and the disc stopped first: a disc turning without the head mixes
        # the sets in it (a shuffle), so it never does so in a build, not even for a pass
        sup.drive(MOTOR_STACKER_HEAD, FORWARD, SPEED_FULL)
        sup.drive(MOTOR_SHUFFLE_DISC, FORWARD, SPEED_FULL)
        sup.watch(0, SENSE_TILE, t.sort_timeout_ms, FAULT_SORT_TIMEOUT, SUB_SHUFFLER, w, now)
        sup.watch(1, SENSE_HEAD_HOME, t.head_jam_ms, FAULT_HEAD_JAM, SUB_STACKER_HEAD, w, now)
        disc = MOTOR_SHUFFLE_DISC
        sup.watch(2, SENSE_DISC_INDEX, t.disc_gap_ms, FAULT_MOTOR_STALL, SUB_SHUFFLER, disc, now)
        tiles0 = hal.edges(SENSE_TILE)
        wall0 = hal.edges(SENSE_WALL)
        got = 0  # tiles counted at the head
        named = 0  # of which the reader has named
        armed = True  # the reader saw no tile since the last one it named
        last_at = now  # when the last tile was counted
        while got < need or named < got:
            n = (hal.edges(SENSE_TILE) - tiles0) & _EDGE_MASK
            if n > got:
                got = n
                last_at = b.now
                if got >= need:
                    sup.unwatch(0)
                    sup.unwatch(1)
                    sup.unwatch(2)
                    sup.stop(MOTOR_SHUFFLE_DISC)
                    sup.stop(MOTOR_STACKER_HEAD)
            if reader:
                code = hal.tile_at_head()
                if code == TILE_NONE:
                    armed = True
                elif armed and named < got:
                    armed = False
                    if index + named < len(manifest):
                        manifest[index + named] = code
                    named += 1
                if named < got and ticks_diff(b.now, last_at) >= t.reader_timeout_ms:
                    b.fail(FAULT_READER_FAULT, SUB_READER, 0)
                    return
            else:
                while named < got:
                    if index + named < len(manifest):
                        manifest[index + named] = TILE_UNKNOWN
                    named += 1
            s.laid = index + (named if named < need else need)
            counts[w] = min(255, (hal.edges(SENSE_WALL) - wall0) & _EDGE_MASK)
            b.progress_of((index + got) * t.tile_ms + w * t.push_ms, total, w)
            yield
        index += need
        # 2. check the wall channel's count
        while ticks_diff(b.now, last_at) < t.settle_ms:
            counts[w] = min(255, (hal.edges(SENSE_WALL) - wall0) & _EDGE_MASK)
            yield
        landed = (hal.edges(SENSE_WALL) - wall0) & _EDGE_MASK
        counts[w] = min(255, landed)
        if landed != need:
            b.fail(FAULT_WALL_SHORT if landed < need else FAULT_WALL_EXTRA, SUB_STACKER_HEAD, w)
            return
        # 3. push the wall onto its plate
        if not (yield from _push(b, index * t.tile_ms + w * t.push_ms, total)):
            return
        b.progress_of(index * t.tile_ms + (w + 1) * t.push_ms, total, w, True)
    if reader and not b.manifest_is_the_set(manifest):
        b.fail(FAULT_TILE_COUNT, SUB_READER, 0)
        return
    b.build_done(tile_set)
