"""The persistent record: two slots with a sequence number and a CRC, written at phase
boundaries and only on change; what a reset, a watchdog or a power cut leaves the board
believing about its sets."""

from __future__ import annotations

import pytest

from firmware.board import Board
from firmware.config import BoardConfig, default_layout
from firmware.hal import RESET_POWER_ON, RESET_SOFT
from firmware.hal.virtual import VirtualHal
from firmware.harness import Harness
from firmware.places import BUILT, DISC, PARTIAL, SHUFFLED, UNKNOWN, UP, TileSet
from firmware.status import board_status
from firmware.store import BLANK, CORRUPT, FLAG_MOTION, LOADED, Record, Store
from protocol import codes
from protocol import messages as m
from protocol.events import PeerRebooted
from tests.firmware.rig import connected, last, refusal

LAYOUT = default_layout(144)


def two_sets(tiles: int = 144) -> list[TileSet]:
    a, b = TileSet(tiles), TileSet(tiles)
    a.place, a.laid, a.layout = UP, tiles, ((2,) * 17 + (1, 1), (2,) * 18, (2,) * 18, (2,) * 18)
    a.manifest[:] = bytes(range(1, tiles + 1))
    b.place, b.laid = PARTIAL, 57
    return [a, b]


def test_a_record_reads_back_as_written_and_fits_its_slot() -> None:
    hal = VirtualHal(tiles=144)
    store = Store(hal, 144)
    record = Record()
    record.motions_begun = 70_000
    record.flags = FLAG_MOTION
    record.motion_phase, record.motion_set = codes.PHASE_LIFT, 0
    record.counts_set, record.wall_counts[:] = 1, bytes((36, 21, 0, 0))
    sets = two_sets()
    assert store.save(record, sets)
    assert len(hal.slots[0]) <= hal.STORE_SLOT_SIZE
    back, back_sets = Record(), [TileSet(144), TileSet(144)]
    assert Store(hal, 144).load(back, back_sets) == LOADED
    assert vars(back) == vars(record)
    for ours, theirs in zip(back_sets, sets, strict=True):
        assert (ours.place, ours.laid, ours.layout) == (theirs.place, theirs.laid, theirs.layout)
    assert back_sets[0].manifest == sets[0].manifest


def test_it_writes_only_what_changed_alternating_the_slots() -> None:
    hal = VirtualHal()
    store = Store(hal, 136)
    record, sets = Record(), [TileSet(136), TileSet(136)]
    assert store.save(record, sets)
    assert not store.save(record, sets)  # nothing changed: no write
    sets[0].place = SHUFFLED
    assert store.save(record, sets)
    record.motions_begun += 1
    assert store.save(record, sets)
    assert hal.slot_writes == [2, 1] and store.seq == 3


def test_a_write_cut_by_a_power_loss_leaves_the_record_before_it() -> None:
    hal = VirtualHal()
    store = Store(hal, 136)
    record, sets = Record(), [TileSet(136), TileSet(136)]
    sets[0].place = SHUFFLED
    store.save(record, sets)
    sets[0].place = DISC
    record.motions_begun = 1
    hal.tear_next_write = True
    store.save(record, sets)
    back, back_sets = Record(), [TileSet(136), TileSet(136)]
    assert Store(hal, 136).load(back, back_sets) == LOADED
    assert back_sets[0].place == SHUFFLED and back.motions_begun == 0


def test_a_new_board_has_both_sets_in_the_disc_and_a_spoilt_store_knows_nothing() -> None:
    hal = VirtualHal()
    assert Store(hal, 136).load(Record(), [TileSet(136), TileSet(136)]) == BLANK
    board = Board(hal, BoardConfig(136))
    assert board_status(board).places == (DISC, DISC)
    hal.slots = [b"MJ\x01garbage", b"\x00" * 40]
    assert Store(hal, 136).load(Record(), [TileSet(136), TileSet(136)]) == CORRUPT
    board = Board(hal, BoardConfig(136))
    assert board_status(board).places == (UNKNOWN, UNKNOWN)


def start_build(h: Harness, laid: int) -> None:
    h.command(m.Shuffle(0))
    h.send(m.BuildWalls(0, default_layout(h.config.tiles)))
    h.until(lambda: board_status(h.board).laid[0] >= laid)


def test_a_reset_mid_build_comes_back_partial_with_how_far_it_got() -> None:
    h = connected(tiles=144)
    start_build(h, 50)
    session = h.app.session
    h.send(m.Reset())
    h.until(lambda: h.boots == 2, 2000)
    status = board_status(h.board)
    assert status.reset_cause == RESET_SOFT  # the chip said WATCHDOG; the record knows better
    assert status.places == (PARTIAL, DISC) and 50 <= status.laid[0] < 144
    assert status.motions == 2
    h.until(lambda: any(isinstance(e, PeerRebooted) for e in h.events), 5000)
    h.connect()
    assert h.app.session != session
    assert last(h.command(m.Shuffle(0))) == m.Done(m.Shuffle.TYPE, 0)


@pytest.mark.parametrize(
    ("phase", "expected"),
    [("shuffle", DISC), ("build", UNKNOWN), ("lift", UNKNOWN), ("collect", UNKNOWN)],
)
def test_a_power_cut_in_motion_leaves_what_the_motion_moved_unknown(
    phase: str, expected: int
) -> None:
    h = connected()
    if phase != "shuffle":
        h.command(m.Shuffle(0))
    if phase in ("lift", "collect"):
        h.command(m.BuildWalls(0, default_layout(136)))
    if phase == "collect":
        h.command(m.LiftWalls(0))
    command = {
        "shuffle": m.Shuffle(0),
        "build": m.BuildWalls(0, default_layout(136)),
        "lift": m.LiftWalls(0),
        "collect": m.Collect(),
    }[phase]
    h.send(command)
    h.until(lambda: h.board.busy)
    h.wait(400)
    begun = board_status(h.board).motions
    h.power_cycle()
    status = board_status(h.board)
    assert status.reset_cause == RESET_POWER_ON
    assert status.places == (expected, DISC) and status.motions == begun
    h.connect()
    if expected == UNKNOWN:
        # it may be anywhere: nothing is built over it, and it must be shuffled again
        assert refusal(h.command(m.ReadManifest(0))) == (
            codes.REFUSE_BAD_STATE,
            codes.BLOCK_SET_NOT_BUILT,
        )
        h.command(m.Shuffle(1))
        assert refusal(h.command(m.BuildWalls(1, default_layout(136)))) == (
            codes.REFUSE_BAD_STATE,
            codes.BLOCK_BENCH_OCCUPIED,
        )
        assert last(h.command(m.Shuffle(0))) == m.Done(m.Shuffle.TYPE, 0)


def test_walls_built_before_a_power_cut_are_still_known_and_readable() -> None:
    h = connected(seed=8)
    h.command(m.Shuffle(0))
    h.command(m.BuildWalls(0, default_layout(136)))
    before = [e for e in h.command(m.ReadManifest(0)) if isinstance(e, m.ManifestChunk)]
    h.send(m.RollDice(1, 2))  # a power cut in a motion that moves no set changes nothing
    h.until(lambda: h.board.busy)
    h.power_cycle()
    h.connect()
    assert board_status(h.board).places == (BUILT, DISC)
    after = [e for e in h.command(m.ReadManifest(0)) if isinstance(e, m.ManifestChunk)]
    assert after == before
    assert last(h.command(m.LiftWalls(0))) == m.Done(m.LiftWalls.TYPE, 0)


def test_the_store_is_written_at_phase_boundaries_only() -> None:
    h = connected()
    writes = sum(h.hal.slot_writes)
    for command in (m.Ping(1), m.Sensors(), m.ReadManifest(0), m.LiftWalls(0), m.ClearFault()):
        h.command(command)
    assert sum(h.hal.slot_writes) == writes  # nothing changed
    h.cycle(0)
    motions = 5
    assert sum(h.hal.slot_writes) - writes == 2 * motions  # a motion begins, a motion ends
    assert board_status(h.board).motions == motions
    h.power_cycle()  # a boot that finds the record true writes nothing
    assert sum(h.hal.slot_writes) - writes == 2 * motions
    assert board_status(h.board).motions == motions
