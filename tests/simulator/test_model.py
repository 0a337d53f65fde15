"""The board model driven directly: cycle, alternation of the two sets, legality, timings,
progress, sensors, dice, reader, STOP, reboot, bad input. No serial line."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from pathlib import Path

import pytest

from protocol import codes
from protocol import messages as m
from protocol.codes import (
    BLOCK_BENCH_OCCUPIED,
    BLOCK_COVER_OPEN,
    BLOCK_SET_NOT_BUILT,
    BLOCK_SET_NOT_IN_DISC,
    BLOCK_SET_NOT_SHUFFLED,
    BLOCK_SURFACE_OCCUPIED,
    RESULT_STOPPED,
)
from protocol.errors import DecodeError, UnknownType, WrongRole
from protocol.events import BadMessage
from simulator import board as sim_board
from simulator.board import Place, mermaid_diagram
from simulator.config import SimConfig, SimConfigError, Timings, default_layout
from tests.support.simhost import ModelDriver, expected_codes

ROOT = Path(__file__).resolve().parents[2]
LAYOUT = default_layout(136)


def refused(events: list[m.Message], reason: int, detail: int | None = None) -> m.Refused:
    assert len(events) == 1 and isinstance(events[0], m.Refused), events
    r = events[0]
    assert r.reason == reason, (codes.refusal_name(r.reason), events)
    if detail is not None:
        assert r.detail == detail, events
    return r


@pytest.mark.parametrize("tiles", [108, 136, 144])
def test_full_cycle_gives_a_permutation_of_the_set_laid_out_as_asked(tiles: int) -> None:
    d = ModelDriver(tiles=tiles, seed=tiles)
    layout = default_layout(tiles)
    d.ready(0, layout)
    assert d.model.place(0) is Place.BUILT
    assert d.sensors().wall_tiles == tuple(sum(w) for w in layout)
    assert isinstance(d.run(m.Collect())[-1], m.Done)
    assert isinstance(d.run(m.LiftWalls(0))[-1], m.Done)
    assert d.model.state == "UP"
    dice = d.run(m.RollDice(9, 2))[-1]
    assert isinstance(dice, m.Dice) and dice.tag == 9 and len(dice.values) == 2
    events = d.send(m.ReadManifest(0))
    chunks = [e for e in events if isinstance(e, m.ManifestChunk)]
    assert events[-1] == m.Done(m.ReadManifest.TYPE, 0)
    tiles_read = [t for c in chunks for t in c.tiles]
    assert [c.offset for c in chunks] == list(range(0, tiles, 100))
    assert all(c.total == tiles for c in chunks)
    assert sorted(tiles_read) == expected_codes(tiles)
    assert tiles_read == d.model.truth(0)
    positions = d.model.positions(0)
    assert positions is not None and len(positions) == tiles
    # 108 tiles: 13 full stacks and a single tile at stack 14 on every wall
    last = [p for p in positions if p[0] == 0][-1]
    assert last == ((0, 14, 0) if tiles == 108 else (0, tiles // 8, 1))


def test_manifest_follows_a_non_uniform_layout() -> None:
    d = ModelDriver(tiles=136)
    layout = ((2,) * 18, (2,) * 16, (2,) * 17, (2,) * 16 + (1, 1))
    d.ready(0, layout)
    assert d.sensors().wall_tiles == (36, 32, 34, 34)
    positions = d.model.positions(0)
    assert positions is not None
    assert positions[36] == (1, 1, 0)  # the first tile of wall 1 (S), stack 1 top
    assert positions[-2:] == [(3, 17, 0), (3, 18, 0)]  # two half stacks at N's left end


def test_alternation_of_the_two_sets() -> None:
    d = ModelDriver()
    assert [d.model.place(0), d.model.place(1)] == [Place.DISC, Place.DISC]
    d.ready(0)
    d.run(m.LiftWalls(0))
    assert d.model.place(0) is Place.UP
    # while A is played, B is shuffled and built underneath
    d.ready(1)
    assert d.model.place(1) is Place.BUILT
    # B cannot rise while A is on the table: COLLECT first
    refused(d.send(m.LiftWalls(1)), codes.REFUSE_BAD_STATE, BLOCK_SURFACE_OCCUPIED)
    assert isinstance(d.run(m.Collect())[-1], m.Done)
    assert d.model.place(0) is Place.DISC
    assert d.run(m.LiftWalls(1))[-1] == m.Done(m.LiftWalls.TYPE, 0)
    assert [d.model.place(0), d.model.place(1)] == [Place.DISC, Place.UP]
    # the manifest of a collected set is gone; the raised one is still readable
    refused(d.send(m.ReadManifest(0)), codes.REFUSE_BAD_STATE, BLOCK_SET_NOT_BUILT)
    assert d.send(m.ReadManifest(1))[-1] == m.Done(m.ReadManifest.TYPE, 0)
    d.ready(0)
    assert d.model.place(0) is Place.BUILT


def test_motion_in_the_wrong_state_is_refused_and_changes_nothing() -> None:
    d = ModelDriver()
    # LIFT before BUILD
    refused(d.send(m.LiftWalls(0)), codes.REFUSE_BAD_STATE, BLOCK_SET_NOT_BUILT)
    # BUILD before SHUFFLE
    refused(d.send(m.BuildWalls(0, LAYOUT)), codes.REFUSE_BAD_STATE, BLOCK_SET_NOT_SHUFFLED)
    d.ready(0)
    # a second set cannot be built while the first waits under the table
    d.run(m.Shuffle(1))
    refused(d.send(m.BuildWalls(1, LAYOUT)), codes.REFUSE_BAD_STATE, BLOCK_BENCH_OCCUPIED)
    # SHUFFLE of a built set
    refused(d.send(m.Shuffle(0)), codes.REFUSE_BAD_STATE, BLOCK_SET_NOT_IN_DISC)
    d.run(m.LiftWalls(0))
    # SHUFFLE while its walls are up and the trap is closed
    refused(d.send(m.Shuffle(0)), codes.REFUSE_BAD_STATE, BLOCK_SET_NOT_IN_DISC)
    assert d.model.place(0) is Place.UP and d.model.state == "UP"
    # a command while another runs: BUSY, naming the running command
    d.send(m.BuildWalls(1, LAYOUT))
    assert d.model.state == "BUILDING"
    refused(d.send(m.RollDice(1, 2)), codes.REFUSE_BUSY, m.BuildWalls.TYPE)
    refused(d.send(m.Collect()), codes.REFUSE_BUSY, m.BuildWalls.TYPE)
    d.finish()
    assert d.model.place(1) is Place.BUILT


def test_cover_open_at_rest_blocks_motion_without_a_fault() -> None:
    d = ModelDriver()
    d.model.open_cover(d.t)
    assert not d.sensors().flags & codes.FLAG_COVER_CLOSED
    refused(d.send(m.Shuffle(0)), codes.REFUSE_BAD_STATE, BLOCK_COVER_OPEN)
    assert d.model.state == "IDLE" and d.model.fault is None
    d.model.close_cover(d.t)
    assert isinstance(d.run(m.Shuffle(0))[-1], m.Done)


@pytest.mark.parametrize(
    ("layout", "detail"),
    [
        (((2,) * 17, (2,) * 17, (2,) * 17, (2,) * 16), 4),  # 134 tiles, not 136
        (((2,) * 17, (2,) * 17, (2,) * 17, (2,) * 18), 4),  # 138 tiles
        (((2,) * 17, (), (2,) * 34, (2,) * 17), 1),  # a wall with no stack
        (((2,) * 34, (2,) * 34, (), ()), 0),  # more stacks than a wall holds, empty walls
        (((2,) * 17, (3,) + (2,) * 16, (2,) * 17, (2,) * 16 + (1,)), 1),  # a stack of 3
        (((1,) * 20, (2,) * 16, (2,) * 17, (2,) * 17), 0),  # 20 stacks on a wall
    ],
)
def test_impossible_layouts_are_refused(layout: tuple[tuple[int, ...], ...], detail: int) -> None:
    d = ModelDriver()
    d.run(m.Shuffle(0))
    msg = m.BuildWalls.__new__(m.BuildWalls)  # bypass the codec's own checks
    msg.tile_set, msg.layout = 0, layout
    refused(d.send(msg), codes.REFUSE_BAD_LAYOUT, detail)
    assert d.model.place(0) is Place.SHUFFLED and d.model.state == "SHUFFLED"
    # the next good command works
    assert isinstance(d.run(m.BuildWalls(0, LAYOUT))[-1], m.Done)


def test_layout_with_more_stacks_than_tiles_for_108() -> None:
    d = ModelDriver(tiles=108)
    d.run(m.Shuffle(1))
    refused(d.send(m.BuildWalls(1, default_layout(136))), codes.REFUSE_BAD_LAYOUT, 4)


def test_bad_messages_from_the_engine_are_refused_and_the_board_goes_on() -> None:
    d = ModelDriver()
    r = refused(d.send(BadMessage(0x1D, 3, UnknownType(0x1D))), codes.REFUSE_UNKNOWN_COMMAND)
    assert r.command == 0x1D
    r = refused(
        d.send(BadMessage(m.Pong.TYPE, 4, WrongRole("the board received PONG"))),
        codes.REFUSE_UNKNOWN_COMMAND,
    )
    assert r.command == m.Pong.TYPE
    try:
        m.RollDice.decode(b"\x01\x07")
    except DecodeError as exc:
        error = exc
    r = refused(d.send(BadMessage(m.RollDice.TYPE, 5, error)), codes.REFUSE_BAD_ARGUMENT, 1)
    try:
        m.BuildWalls.decode(b"\x00\x01\x02\x00\x01\x02\x01\x02")
    except DecodeError as exc:
        error = exc
    refused(d.send(BadMessage(m.BuildWalls.TYPE, 6, error)), codes.REFUSE_BAD_LAYOUT, 1)
    # an event sent to the board as if it were a command
    refused(d.send(m.Done(6, 0)), codes.REFUSE_UNKNOWN_COMMAND, m.Done.TYPE)
    assert d.send(m.Ping(42)) == [m.Pong(42)]
    assert isinstance(d.run(m.Shuffle(0))[-1], m.Done)


def test_timings_follow_a_real_table() -> None:
    d = ModelDriver(tiles=136)
    t0 = d.t
    d.run(m.Shuffle(0))
    shuffle_ms = d.t - t0
    assert 10_000 <= shuffle_ms <= 40_000
    t0 = d.t
    d.run(m.BuildWalls(0, LAYOUT))
    assert 10_000 <= shuffle_ms + d.t - t0 <= 80_000
    d.run(m.Collect())
    t0 = d.t
    d.run(m.LiftWalls(0))
    assert 800 <= d.t - t0 <= 1_500
    t0 = d.t
    d.run(m.RollDice(1, 2))
    assert 1_500 <= d.t - t0 <= 2_500
    timings = Timings()
    for tiles in (108, 144):
        assert 10_000 <= timings.shuffle_ms(tiles) <= 40_000


@pytest.mark.parametrize(
    "command",
    [
        m.Shuffle(0),
        m.BuildWalls(0, LAYOUT),
        m.Collect(),
        m.LiftWalls(0),
        m.RollDice(3, 2),
        m.MotorTest(codes.MOTOR_CHAIN, 4000),
    ],
    ids=lambda c: c.NAME,
)
def test_progress_at_least_every_ten_percent_of_each_phase(command: m.Message) -> None:
    d = ModelDriver()
    if isinstance(command, m.BuildWalls):
        d.run(m.Shuffle(0))
    elif isinstance(command, m.LiftWalls):
        d.ready(0)
    start = d.t
    d.model.handle(command, d.t)
    seen: list[tuple[int, int]] = []  # (percent, table ms) of each PROGRESS
    while d.model.busy:
        d.t = d.model.next_deadline() or d.t
        d.model.advance(d.t)
        for e in d.drain():
            if isinstance(e, m.Progress):
                assert e.command == command.TYPE
                seen.append((e.percent, d.t))
    duration = d.t - start
    percents = [0] + [p for p, _ in seen] + [100]
    assert all(b - a <= 10 for a, b in itertools.pairwise(percents)), percents
    times = [start] + [t for _, t in seen] + [d.t]
    assert all(b - a <= duration // 10 + 1 for a, b in itertools.pairwise(times))


def test_build_reports_progress_per_wall_and_sensors_follow() -> None:
    d = ModelDriver()
    d.run(m.Shuffle(0))
    d.model.handle(m.BuildWalls(0, LAYOUT), d.t)
    start = d.t
    walls_seen: list[int] = []
    counts: list[tuple[int, ...]] = []
    while d.model.busy:
        d.t = d.model.next_deadline() or d.t
        d.model.advance(d.t)
        counts.append(d.sensors().wall_tiles)
        for e in d.drain():
            if isinstance(e, m.Progress):
                walls_seen.append(e.detail)
    assert walls_seen == sorted(walls_seen) and set(walls_seen) == {0, 1, 2, 3}
    # tiles per wall only grow, one wall after the other, up to 34 each
    for before, after in itertools.pairwise(counts):
        assert all(b <= a for b, a in zip(before, after, strict=False))
    assert counts[-1] == (34, 34, 34, 34)
    # in the middle of wall 1: wall 0 complete, wall 1 partial, the head stacking
    d2 = ModelDriver()
    d2.run(m.Shuffle(0))
    d2.model.handle(m.BuildWalls(0, LAYOUT), d2.t)
    t = Timings()
    d2.wait(17 * t.stack_ms + t.wall_push_ms + 8 * t.stack_ms + t.stack_ms // 2)
    s = d2.sensors()
    assert s.state == codes.STATE_BUILDING
    assert s.wall_tiles == (34, 16, 0, 0)
    assert not s.flags & codes.FLAG_HEAD_HOME
    assert s.currents_ma[codes.MOTOR_STACKER_HEAD] > 0 and s.currents_ma[codes.MOTOR_LIFT_E] == 0
    assert d2.t - start >= 0


def test_sensors_follow_lift_and_collect() -> None:
    d = ModelDriver()
    s = d.sensors()
    assert s.lift_down == 0b01111 and s.lift_up == 0b10000  # plates down, centre up (trap shut)
    assert s.flags & codes.FLAG_COVER_CLOSED and not s.flags & codes.FLAG_TRAP_OPEN
    assert s.currents_ma == (0,) * 9
    assert 200 <= s.temperature_dc <= 300
    d.ready(0)
    d.model.handle(m.LiftWalls(0), d.t)
    d.wait(500)
    s = d.sensors()
    assert s.state == codes.STATE_LIFTING and s.lift_up & 0b1111 == 0 and s.lift_down & 0b1111 == 0
    assert all(s.currents_ma[i] > 0 for i in (3, 4, 5, 6))
    d.finish()
    s = d.sensors()
    assert s.state == codes.STATE_UP and s.lift_up == 0b11111 and s.lift_down == 0
    assert s.currents_ma == (0,) * 9
    d.model.handle(m.Collect(), d.t)
    d.wait(int(Timings().collect_ms * 0.6))
    s = d.sensors()
    assert s.state == codes.STATE_COLLECTING
    assert s.flags & codes.FLAG_TRAP_OPEN and s.lift_down == 0b11111
    assert s.currents_ma[codes.MOTOR_SHUFFLE_DISC] > 0
    d.finish()
    s = d.sensors()
    assert not s.flags & codes.FLAG_TRAP_OPEN and s.lift_down == 0b01111
    assert s.wall_tiles == (0, 0, 0, 0)


def test_temperature_rises_while_motors_run_and_falls_at_rest() -> None:
    d = ModelDriver()
    cold = d.sensors().temperature_dc
    for _ in range(3):
        d.run(m.Shuffle(0))
    warm = d.sensors().temperature_dc
    assert warm > cold
    d.wait(600_000)
    assert d.sensors().temperature_dc < warm


def test_dice_are_rolled_by_the_unit_and_displayed_when_thrown_by_hand() -> None:
    d = ModelDriver()
    d.model.handle(m.RollDice(5, 3), d.t)
    d.wait(1000)
    s = d.sensors()
    assert s.state == codes.STATE_ROLLING and s.currents_ma[codes.MOTOR_DICE] > 0
    d.finish()
    dice = d.drain()[-1]
    assert isinstance(dice, m.Dice) and dice.tag == 5 and len(dice.values) == 3
    assert all(1 <= v <= 6 for v in dice.values)
    assert d.model.state == "IDLE"  # back to where it was
    assert d.send(m.DisplayDice(6, [3, 4])) == [m.Done(m.DisplayDice.TYPE, 0)]
    assert d.model.displayed_dice == (6, (3, 4))


def test_rolling_dice_returns_to_the_resting_state_it_left() -> None:
    d = ModelDriver()
    d.ready(0)
    d.run(m.RollDice(1, 2))
    assert d.model.state == "BUILT"
    d.run(m.MotorTest(codes.MOTOR_CHAIN, 500))
    assert d.model.state == "BUILT"


def test_board_without_dice_unit() -> None:
    d = ModelDriver(dice=False)
    refused(d.send(m.RollDice(1, 2)), codes.REFUSE_UNSUPPORTED)
    refused(d.send(m.MotorTest(codes.MOTOR_DICE, 100)), codes.REFUSE_UNSUPPORTED)
    assert not d.sensors().flags & codes.FLAG_DICE_PRESENT
    assert not d.model.hello_fields()["capabilities"] & codes.CAP_DICE
    assert d.send(m.DisplayDice(1, [6, 6])) == [m.Done(m.DisplayDice.TYPE, 0)]


def test_board_without_reader_reports_positions_only() -> None:
    d = ModelDriver(reader=False)
    d.ready(0)
    chunks = [e for e in d.send(m.ReadManifest(0)) if isinstance(e, m.ManifestChunk)]
    tiles = [t for c in chunks for t in c.tiles]
    assert tiles == [codes.TILE_UNKNOWN] * 136
    assert sorted(d.model.truth(0) or []) == expected_codes(136)  # the tiles are still real
    assert not d.sensors().flags & codes.FLAG_READER_OK
    assert not d.model.hello_fields()["capabilities"] & codes.CAP_READER


def test_motor_test_reports_current() -> None:
    d = ModelDriver()
    result = d.run(m.MotorTest(codes.MOTOR_LIFT_W, 1500))[-1]
    assert isinstance(result, m.MotorResult)
    assert result.motor == codes.MOTOR_LIFT_W and result.ok == 1
    assert 1000 <= result.current_ma <= 1300
    refused(d.send(m.MotorTest(codes.MOTOR_CHAIN, 60_000)), codes.REFUSE_BAD_ARGUMENT, 1)


def test_stop_halts_motion_at_once_and_the_set_must_be_shuffled_again() -> None:
    d = ModelDriver()
    d.run(m.Shuffle(0))
    d.model.handle(m.BuildWalls(0, LAYOUT), d.t)
    d.wait(10_000)
    d.drain()
    events = d.send(m.Stop())
    assert events == [m.Done(m.BuildWalls.TYPE, RESULT_STOPPED), m.Done(m.Stop.TYPE, 0)]
    assert d.model.state == "STOPPED" and d.model.place(0) is Place.PARTIAL
    s = d.sensors()
    assert s.currents_ma == (0,) * 9 and 0 < sum(s.wall_tiles) < 136
    assert d.wait(60_000) == []  # nothing moves any more
    refused(d.send(m.BuildWalls(0, LAYOUT)), codes.REFUSE_BAD_STATE, BLOCK_SET_NOT_SHUFFLED)
    refused(d.send(m.ReadManifest(0)), codes.REFUSE_BAD_STATE, BLOCK_SET_NOT_BUILT)
    d.ready(0)
    assert sorted(d.model.truth(0) or []) == expected_codes(136)
    # STOP at rest: nothing to stop
    assert d.send(m.Stop()) == [m.Done(m.Stop.TYPE, 0)]
    assert d.model.state == "BUILT"


def test_stopped_shuffle_leaves_the_set_unshuffled() -> None:
    d = ModelDriver()
    d.model.handle(m.Shuffle(1), d.t)
    d.wait(3000)
    d.send(m.Stop())
    assert d.model.place(1) is Place.DISC
    refused(d.send(m.BuildWalls(1, LAYOUT)), codes.REFUSE_BAD_STATE, BLOCK_SET_NOT_SHUFFLED)


def test_reset_reboots_and_forgets_everything() -> None:
    d = ModelDriver()
    d.ready(0)
    d.run(m.LiftWalls(0))
    d.model.handle(m.Shuffle(1), d.t)
    d.wait(2000)
    d.drain()
    assert d.send(m.Reset()) == []
    assert d.model.state == "BOOT" and d.model.boot_count == 1
    assert [d.model.place(0), d.model.place(1)] == [Place.DISC, Place.DISC]
    assert d.sensors().currents_ma == (0,) * 9
    assert d.wait(60_000) == []  # the shuffle that was running is gone
    refused(d.send(m.Shuffle(0)), codes.REFUSE_BAD_STATE, codes.BLOCK_BOOTING)
    d.model.handle(BadMessage(0x1C, 1, UnknownType(0x1C)), d.t)  # still answers, in words
    d.drain()
    from protocol.events import HelloReceived

    d.model.handle(HelloReceived(m.Hello(1, 0, 9)), d.t)
    assert d.model.state == "IDLE"
    d.ready(1)


def test_seeded_boards_repeat_and_unseeded_ones_use_the_system_generator() -> None:
    a, b = ModelDriver(seed=77), ModelDriver(seed=77)
    a.ready(0)
    b.ready(0)
    assert a.model.truth(0) == b.model.truth(0)
    assert a.run(m.RollDice(1, 3)) == b.run(m.RollDice(1, 3))
    fields = a.model.hello_fields()
    assert fields["seed"] == 77 and fields["capabilities"] & codes.CAP_SEEDED

    import secrets

    from simulator.board import BoardModel

    unseeded = BoardModel(SimConfig(seed=None, speed=0), secrets.SystemRandom())
    assert unseeded.hello_fields()["seed"] == 0
    assert not unseeded.hello_fields()["capabilities"] & codes.CAP_SEEDED
    orders = []
    for _ in range(2):
        d = ModelDriver(seed=None)
        d.model.rng = secrets.SystemRandom()
        d.ready(0)
        orders.append(d.model.truth(0))
    assert orders[0] != orders[1]  # two CSPRNG shuffles of 136 tiles never coincide


def test_buttons() -> None:
    d = ModelDriver()
    d.model.press_button(codes.BUTTON_SHUFFLE, 2, d.t)
    assert d.drain() == [m.Button(1, 2, 1), m.Button(1, 2, 0)]
    with pytest.raises(ValueError, match="seat"):
        d.model.press_button(codes.BUTTON_DEAL, 4, d.t)
    with pytest.raises(ValueError, match="button"):
        d.model.press_button(9, 0, d.t)


def test_config_is_checked() -> None:
    for kwargs, word in (
        ({"tiles": 100}, "tiles"),
        ({"seed": -1}, "seed"),
        ({"seed": 2**32}, "seed"),
        ({"speed": -1.0}, "speed"),
        ({"speed": float("nan")}, "speed"),
        ({"serial": "é"}, "serial"),
        ({"faults": ["nonsense@build"]}, "faults"),
        ({"fw_version": (1, 2)}, "fw_version"),
    ):
        with pytest.raises(SimConfigError, match=word):
            SimConfig(**kwargs)


def test_tile_sets_have_the_right_faces() -> None:
    for tiles in (108, 136, 144):
        faces = sim_board.tile_faces(tiles)
        assert sorted(faces) == expected_codes(tiles)
    counts = Counter(sim_board.tile_faces(144))
    assert counts[codes.tile_to_code("1f")] == 1 and counts[codes.tile_to_code("C")] == 4


def test_committed_state_diagram_matches_the_machine() -> None:
    text = (ROOT / "docs" / "simulator.md").read_text(encoding="utf-8")
    found = re.search(r"```mermaid\n(stateDiagram-v2\n.*?)```", text, re.S)
    assert found, "docs/simulator.md has no mermaid state diagram"
    assert found.group(1) == mermaid_diagram(), (
        "docs/simulator.md is out of date: paste the output of `mjtable sim --diagram`"
    )


def test_committed_fault_catalogue_matches_the_code() -> None:
    from simulator.faults import catalogue_markdown

    text = (ROOT / "docs" / "simulator.md").read_text(encoding="utf-8")
    assert catalogue_markdown() in text, (
        "docs/simulator.md is out of date: paste simulator.faults.catalogue_markdown()"
    )
