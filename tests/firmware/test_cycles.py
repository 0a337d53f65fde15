"""The firmware on virtual hardware, driven by the host's own protocol engine over the board's
UART: full cycles for the three tile sets, the alternation of the two sets, the manifest
against the physical truth, progress, sensors, dice, reader, motor test, buttons."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from firmware.config import default_layout, faces
from firmware.hal import SENSE_DOWN, SENSE_UP
from firmware.hal.mechanics import NOMINAL_MA
from firmware.places import BUILT, DISC, PARTIAL, SHUFFLED, UP
from firmware.status import board_status
from firmware.version import FW_MAJOR, FW_MINOR, FW_PATCH
from protocol import codes
from protocol import messages as m
from protocol.events import LinkUp
from tests.firmware.rig import connected, last, messages, refusal


@pytest.mark.parametrize("tiles", [108, 136, 144])
def test_full_cycle_lays_the_shuffled_set_as_asked_and_reads_it_back(tiles: int) -> None:
    h = connected(tiles=tiles, seed=tiles)
    reply = next(e.hello_reply for e in h.events if isinstance(e, LinkUp))
    stacks = (tiles // 4 + 1) // 2
    assert (reply.tiles, reply.tile_sets, reply.stacks_per_wall) == (tiles, 2, stacks)
    assert (reply.fw_major, reply.fw_minor, reply.fw_patch) == (FW_MAJOR, FW_MINOR, FW_PATCH)
    assert reply.has(codes.CAP_READER) and reply.has(codes.CAP_DICE)
    assert reply.has(codes.CAP_SEEDED) and reply.seed == tiles
    manifest = h.cycle(0)
    # what the reader named is what the head laid, in manifest order, and it is the whole set
    assert manifest == bytes(h.hal.laid[0])
    assert Counter(manifest) == Counter(faces(tiles))
    assert manifest != bytes(faces(tiles))  # shuffled
    status = board_status(h.board)
    assert status.places == (UP, DISC) and status.laid[0] == tiles
    assert status.motions == 5
    assert h.board.state == codes.STATE_UP
    sensors = last(h.command(m.Sensors()))
    assert isinstance(sensors, m.SensorData)
    assert sensors.wall_tiles == tuple(sum(w) for w in default_layout(tiles))
    assert sensors.lift_up & 0x0F == 0x0F and sensors.flags & codes.FLAG_COVER_CLOSED
    assert sensors.currents_ma == (0,) * codes.MOTOR_COUNT
    assert h.app.errors == 0 and h.app.dropped == 0


def test_the_two_sets_alternate_and_each_manifest_is_the_truth() -> None:
    h = connected(seed=5)
    first = h.cycle(0)
    assert first == bytes(h.hal.laid[0])
    second = h.cycle(1)  # B is shuffled and built while A is up; COLLECT drops A
    assert second == bytes(h.hal.laid[1])
    assert board_status(h.board).places == (DISC, UP)
    third = h.cycle(0)
    assert third == bytes(h.hal.laid[0]) and third != first
    assert board_status(h.board).places == (UP, DISC)


def test_a_set_is_built_under_the_table_while_the_other_is_played() -> None:
    h = connected()
    h.cycle(0)
    assert messages(h.command(m.Shuffle(1)))[-1] == m.Done(m.Shuffle.TYPE, 0)
    assert messages(h.command(m.BuildWalls(1, default_layout(136))))[-1] == m.Done(7, 0)
    assert board_status(h.board).places == (UP, BUILT)
    # B cannot rise while A is on the table
    blocked = refusal(h.command(m.LiftWalls(1)))
    assert blocked == (codes.REFUSE_BAD_STATE, codes.BLOCK_SURFACE_OCCUPIED)
    assert last(h.command(m.Collect())) == m.Done(m.Collect.TYPE, 0)
    assert last(h.command(m.LiftWalls(1))) == m.Done(m.LiftWalls.TYPE, 0)
    assert board_status(h.board).places == (DISC, UP)


def test_manifest_follows_a_non_uniform_layout() -> None:
    h = connected()
    layout = ((2,) * 18, (2,) * 16, (2,) * 17, (2,) * 16 + (1, 1))
    h.command(m.Shuffle(0))
    assert last(h.command(m.BuildWalls(0, layout))) == m.Done(m.BuildWalls.TYPE, 0)
    sensors = last(h.command(m.Sensors()))
    assert isinstance(sensors, m.SensorData) and sensors.wall_tiles == (36, 32, 34, 34)
    chunks = [e for e in h.command(m.ReadManifest(0)) if isinstance(e, m.ManifestChunk)]
    assert [c.offset for c in chunks] == [0, 100] and chunks[0].total == 136
    assert b"".join(bytes(c.tiles) for c in chunks) == bytes(h.hal.laid[0])


def test_a_board_without_reader_reports_positions_only() -> None:
    h = connected(reader=False)
    reply = next(e.hello_reply for e in h.events if isinstance(e, LinkUp))
    assert not reply.has(codes.CAP_READER)
    manifest = h.cycle(0)
    assert manifest == bytes([codes.TILE_UNKNOWN]) * 136
    sensors = last(h.command(m.Sensors()))
    assert isinstance(sensors, m.SensorData) and not sensors.flags & codes.FLAG_READER_OK


def test_a_board_without_dice_unit_refuses_to_roll() -> None:
    h = connected(dice=False)
    assert refusal(h.command(m.RollDice(1, 2))) == (codes.REFUSE_UNSUPPORTED, 0)
    test = m.MotorTest(codes.MOTOR_DICE, 100)
    assert refusal(h.command(test)) == (codes.REFUSE_UNSUPPORTED, 0)
    # dice thrown by hand are still displayed
    assert last(h.command(m.DisplayDice(3, [2, 5]))) == m.Done(m.DisplayDice.TYPE, 0)
    assert h.hal.displayed == (2, 5)


def test_dice_are_rolled_and_the_board_returns_to_the_state_it_left() -> None:
    h = connected(seed=9)
    h.command(m.Shuffle(0))
    throws = set()
    for tag in range(6):
        dice = last(h.command(m.RollDice(tag, 3)))
        assert isinstance(dice, m.Dice) and dice.tag == tag and len(dice.values) == 3
        assert all(1 <= v <= 6 for v in dice.values)
        throws.add(dice.values)
        assert h.board.state == codes.STATE_SHUFFLED
    assert len(throws) > 1


@pytest.mark.parametrize(
    "command",
    [
        m.Shuffle(0),
        m.BuildWalls(0, default_layout(136)),
        m.Collect(),
        m.LiftWalls(0),
        m.RollDice(3, 2),
        m.MotorTest(codes.MOTOR_CHAIN, 4000),
    ],
    ids=lambda c: c.NAME,
)
def test_progress_at_least_every_ten_percent_of_each_phase(command: m.Message) -> None:
    h = connected()
    if isinstance(command, m.BuildWalls):
        h.command(m.Shuffle(0))
    elif isinstance(command, m.LiftWalls):
        h.command(m.Shuffle(0))
        h.command(m.BuildWalls(0, default_layout(136)))
    events = h.command(command)
    progress = [e for e in events if isinstance(e, m.Progress)]
    assert progress and all(p.command == command.TYPE for p in progress)
    percents = [0] + [p.percent for p in progress] + [100]
    assert all(0 < b - a <= 10 for a, b in itertools.pairwise(percents)), percents
    if isinstance(command, m.BuildWalls):
        walls = [p.detail for p in progress]
        assert walls == sorted(walls) and set(walls) == {0, 1, 2, 3}


def test_timings_follow_a_real_table() -> None:
    h = connected()
    t0 = h.now
    h.command(m.Shuffle(0))
    shuffle_ms = h.now - t0
    t0 = h.now
    h.command(m.BuildWalls(0, default_layout(136)))
    assert 10_000 <= shuffle_ms + h.now - t0 <= 80_000
    t0 = h.now
    h.command(m.LiftWalls(0))
    assert 800 <= h.now - t0 <= 1_500


def test_motor_test_reports_the_current_and_a_lift_goes_out_and_back() -> None:
    h = connected()
    result = last(h.command(m.MotorTest(codes.MOTOR_STACKER_HEAD, 600)))
    assert isinstance(result, m.MotorResult) and result.ok == 1
    assert NOMINAL_MA[1] * 0.9 <= result.current_ma <= NOMINAL_MA[1] * 1.1
    assert h.board.state == codes.STATE_IDLE
    result = last(h.command(m.MotorTest(codes.MOTOR_LIFT_W, 1200)))
    assert isinstance(result, m.MotorResult) and result.ok == 1
    assert h.hal.level(SENSE_DOWN + 2) and not h.hal.level(SENSE_UP + 2)
    # a technician's test never pushes against an end stop, however long
    result = last(h.command(m.MotorTest(codes.MOTOR_CENTRE_LIFT, 3000)))
    assert isinstance(result, m.MotorResult) and result.ok == 1
    assert h.hal.level(SENSE_UP + 4)
    assert refusal(h.command(m.MotorTest(codes.MOTOR_CHAIN, 10_001))) == (
        codes.REFUSE_BAD_ARGUMENT,
        1,
    )


def test_buttons_wired_to_the_board_are_reported() -> None:
    h = connected(buttons=True)
    reply = next(e.hello_reply for e in h.events if isinstance(e, LinkUp))
    assert reply.has(codes.CAP_BUTTONS)
    mark = len(h.events)
    h.hal.press_button(codes.BUTTON_DICE, 2)
    h.wait(200)
    assert messages(h.events[mark:]) == [
        m.Button(codes.BUTTON_DICE, 2, 1),
        m.Button(codes.BUTTON_DICE, 2, 0),
    ]


def test_stop_halts_motion_at_once_and_a_stopped_build_is_partial() -> None:
    h = connected()
    h.command(m.Shuffle(0))
    h.send(m.BuildWalls(0, default_layout(136)))
    h.until(lambda: board_status(h.board).laid[0] >= 40)
    events = messages(h.command(m.Stop()))
    assert events[-2:] == [m.Done(m.BuildWalls.TYPE, 1), m.Done(m.Stop.TYPE, 0)]
    assert not h.hal.powered and h.board.state == codes.STATE_STOPPED
    status = board_status(h.board)
    assert status.places[0] == PARTIAL and 40 <= status.laid[0] < 136
    # a partial set must be shuffled again
    assert refusal(h.command(m.BuildWalls(0, default_layout(136)))) == (
        codes.REFUSE_BAD_STATE,
        codes.BLOCK_SET_NOT_SHUFFLED,
    )
    assert last(h.command(m.Shuffle(0))) == m.Done(m.Shuffle.TYPE, 0)
    assert board_status(h.board).places[0] == SHUFFLED
    assert last(h.command(m.BuildWalls(0, default_layout(136)))) == m.Done(7, 0)
    assert bytes(h.hal.laid[0]) == b"".join(
        bytes(e.tiles) for e in h.command(m.ReadManifest(0)) if isinstance(e, m.ManifestChunk)
    )


def test_a_stopped_lift_leaves_the_set_built_and_lifting_again_finishes() -> None:
    h = connected()
    h.command(m.Shuffle(0))
    h.command(m.BuildWalls(0, default_layout(136)))
    h.send(m.LiftWalls(0))
    h.until(lambda: h.hal.lift[0] > 300_000)
    h.command(m.Stop())
    assert board_status(h.board).places[0] == BUILT and not h.hal.level(SENSE_UP)
    assert last(h.command(m.LiftWalls(0))) == m.Done(m.LiftWalls.TYPE, 0)
    assert board_status(h.board).places[0] == UP


def test_a_stopped_shuffle_leaves_the_set_unshuffled() -> None:
    h = connected()
    h.send(m.Shuffle(1))
    h.wait(3000)
    h.command(m.Stop())
    assert board_status(h.board).places[1] == DISC
    assert refusal(h.command(m.BuildWalls(1, default_layout(136)))) == (
        codes.REFUSE_BAD_STATE,
        codes.BLOCK_SET_NOT_SHUFFLED,
    )


def test_the_disc_never_turns_without_the_head_in_a_build() -> None:
    """A disc turning without the head mixes the sets in it (a shuffle): in a build the head
    starts before the disc and the disc stops before the head, wall after wall."""
    h = connected(seed=7)
    h.command(m.Shuffle(0))
    running = [0] * codes.MOTOR_COUNT
    alone: list[int] = []
    real = h.hal.motor

    def motor(motor: int, direction: int, speed: int) -> None:
        real(motor, direction, speed)
        running[motor] = speed
        if running[codes.MOTOR_SHUFFLE_DISC] and not running[codes.MOTOR_STACKER_HEAD]:
            alone.append(motor)

    h.hal.motor = motor  # type: ignore[method-assign]
    events = h.command(m.BuildWalls(0, default_layout(136)))
    assert last(events) == m.Done(m.BuildWalls.TYPE, codes.RESULT_OK)
    assert alone == []
