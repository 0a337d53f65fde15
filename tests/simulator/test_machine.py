"""The simulator's machine: the firmware's own loop on the simulated hardware, driven through the
protocol by a host engine in memory (no thread, no line): cycles for the three tile sets, the
alternation of the two sets, timings, progress, sensors, dice, reader, STOP, RESET and power
cuts through the firmware's store, randomness, the build hash and the docs."""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import re
import secrets
from pathlib import Path

import pytest

from firmware.config import Timings
from firmware.diagram import state_diagram
from protocol import codes
from protocol import messages as m
from protocol.codes import BLOCK_BENCH_OCCUPIED, BLOCK_SET_NOT_BUILT, BLOCK_SURFACE_OCCUPIED
from simulator.config import SimConfig, SimConfigError, default_layout
from simulator.faultdoc import catalogue_markdown
from simulator.hardware import source_manifest
from simulator.machine import Machine
from tests.support.simhost import MachineDriver, expected_codes

ROOT = Path(__file__).resolve().parents[2]
LAYOUT = default_layout(136)
T = Timings()


def refusal(events: list[object]) -> tuple[int, int] | None:
    for e in events:
        if isinstance(e, m.Refused):
            return (e.reason, e.detail)
    return None


def manifest(d: MachineDriver, tile_set: int) -> list[int]:
    events = d.command(m.ReadManifest(tile_set))
    assert events[-1] == m.Done(m.ReadManifest.TYPE, 0), events
    chunks = [e for e in events if isinstance(e, m.ManifestChunk)]
    assert [c.offset for c in chunks] == list(range(0, len(chunks) * 100, 100))
    return [t for c in chunks for t in c.tiles]


def places(d: MachineDriver) -> dict[str, str]:
    return d.machine.places()


@pytest.mark.parametrize("tiles", [108, 136, 144])
def test_a_full_cycle_deals_the_whole_set_read_tile_by_tile(tiles: int) -> None:
    d = MachineDriver(tiles=tiles, seed=tiles)
    layout = default_layout(tiles)
    d.ready(0, layout)
    assert places(d) == {"A": "built", "B": "disc"}
    assert d.sensors().wall_tiles == tuple(sum(w) for w in layout)
    assert d.command(m.Collect())[-1] == m.Done(m.Collect.TYPE, 0)
    assert d.command(m.LiftWalls(0))[-1] == m.Done(m.LiftWalls.TYPE, 0)
    assert d.machine.state == "UP"
    dice = d.command(m.RollDice(9, 2))[-1]
    assert isinstance(dice, m.Dice) and dice.tag == 9 and len(dice.values) == 2
    read = manifest(d, 0)
    assert sorted(read) == expected_codes(tiles)
    # the reader named every tile the pick-up took, in the order the hardware laid them
    assert read == d.machine.truth(0)
    faces = sorted(expected_codes(tiles))
    assert read == [faces[i] for i in d.hal.pickup_order(0)]


def test_the_manifest_follows_a_layout_of_uneven_walls() -> None:
    d = MachineDriver(tiles=136)
    layout = ((2,) * 18, (2,) * 16, (2,) * 17, (2,) * 16 + (1, 1))
    d.ready(0, layout)
    assert d.sensors().wall_tiles == (36, 32, 34, 34)
    assert manifest(d, 0) == d.machine.truth(0)


def test_the_two_sets_alternate() -> None:
    d = MachineDriver()
    assert places(d) == {"A": "disc", "B": "disc"}
    d.ready(0)
    d.command(m.LiftWalls(0))
    assert places(d)["A"] == "up"
    d.ready(1)  # while A is played, B is shuffled and built underneath
    assert places(d) == {"A": "up", "B": "built"}
    refused = refusal(d.command(m.LiftWalls(1)))
    assert refused == (codes.REFUSE_BAD_STATE, BLOCK_SURFACE_OCCUPIED)
    assert d.command(m.Collect())[-1] == m.Done(m.Collect.TYPE, 0)
    assert d.machine.truth(0) is None  # A dropped through the trap into the disc
    assert d.command(m.LiftWalls(1))[-1] == m.Done(m.LiftWalls.TYPE, 0)
    assert places(d) == {"A": "disc", "B": "up"}
    assert refusal(d.command(m.ReadManifest(0))) == (codes.REFUSE_BAD_STATE, BLOCK_SET_NOT_BUILT)
    assert manifest(d, 1) == d.machine.truth(1)
    d.ready(0)
    assert places(d) == {"A": "built", "B": "up"}


def test_timings_are_a_real_tables() -> None:
    d = MachineDriver(tiles=136)
    t0 = d.now
    d.command(m.Shuffle(0))
    shuffle_ms = d.now - t0
    assert 10_000 <= shuffle_ms <= 40_000
    t0 = d.now
    d.command(m.BuildWalls(0, LAYOUT))
    assert 10_000 <= shuffle_ms + d.now - t0 <= 80_000  # the 10-80 s of real tables
    d.command(m.Collect())
    t0 = d.now
    d.command(m.LiftWalls(0))
    assert 800 <= d.now - t0 <= 1_500
    t0 = d.now
    d.command(m.RollDice(1, 2))
    assert 1_500 <= d.now - t0 <= 2_500
    for tiles in (108, 144):
        assert 10_000 <= T.shuffle_ms(tiles) <= 40_000


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
def test_progress_comes_at_least_every_ten_percent_of_each_motion(command: m.Message) -> None:
    d = MachineDriver()
    if isinstance(command, m.BuildWalls):
        d.command(m.Shuffle(0))
    elif isinstance(command, m.LiftWalls | m.Collect):
        d.ready(0)
        if isinstance(command, m.Collect):
            d.command(m.LiftWalls(0))  # a set on the table: the plates come down first
    start = d.now
    mark = d.send(command)
    seen: list[tuple[int, int]] = []  # (percent, table ms when the host had it)
    while True:
        d.step()
        seen.extend((e.percent, d.now) for e in d.events[mark:] if isinstance(e, m.Progress))
        mark = len(d.events)
        if not d.board.busy:
            break
    duration = d.now - start
    percents = [0] + [p for p, _ in seen] + [100]
    assert all(0 < b - a <= 10 for a, b in itertools.pairwise(percents)), percents
    times = [start] + [t for _, t in seen] + [d.now]
    # progress is of the nominal time (a build also waits for each wall's last tiles to land)
    assert all(b - a <= duration // 8 for a, b in itertools.pairwise(times))


def test_the_build_reports_each_wall_and_its_sensors_follow_the_stacking() -> None:
    d = MachineDriver()
    d.command(m.Shuffle(0))
    events = d.command(m.BuildWalls(0, LAYOUT))
    walls = [e.detail for e in events if isinstance(e, m.Progress)]
    assert walls == sorted(walls) and set(walls) == {0, 1, 2, 3}
    d.command(m.Shuffle(1))
    d.command(m.Collect())
    d.command(m.LiftWalls(0))
    d.send(m.BuildWalls(1, LAYOUT))
    counts: list[tuple[int, ...]] = []
    while d.board.busy:
        d.step()
        counts.append(d.sensors().wall_tiles)
        s = d.sensors()
        if counts[-1][:2] == (34, 16):  # in the middle of wall 1
            assert s.state == codes.STATE_BUILDING
            assert s.currents_ma[codes.MOTOR_STACKER_HEAD] > 0
            assert s.currents_ma[codes.MOTOR_LIFT_E] == 0
    for before, after in itertools.pairwise(counts):  # wall by wall, only growing
        assert all(b <= a for b, a in zip(before, after, strict=True))
    assert counts[-1] == (34, 34, 34, 34)
    assert (34, 16, 0, 0) in counts


def test_the_sensors_follow_the_lifts_and_the_collect() -> None:
    d = MachineDriver()
    s = d.sensors()
    assert s.lift_down == 0b01111 and s.lift_up == 0b10000  # plates down, centre up (trap shut)
    assert s.flags & codes.FLAG_COVER_CLOSED and not s.flags & codes.FLAG_TRAP_OPEN
    assert s.currents_ma == (0,) * 9 and 200 <= s.temperature_dc <= 300
    d.ready(0)
    d.send(m.LiftWalls(0))
    d.wait(500)
    s = d.sensors()
    assert s.state == codes.STATE_LIFTING and s.lift_up & 0b1111 == 0 and s.lift_down & 0b1111 == 0
    assert all(s.currents_ma[i] > 0 for i in (3, 4, 5, 6))
    d.until(lambda: not d.board.busy)
    s = d.sensors()
    assert s.state == codes.STATE_UP and s.lift_up == 0b11111 and s.lift_down == 0
    assert s.currents_ma == (0,) * 9
    d.send(m.Collect())
    d.until(lambda: d.hal.speed[codes.MOTOR_SHUFFLE_DISC] > 0)
    s = d.sensors()
    assert s.state == codes.STATE_COLLECTING
    assert s.flags & codes.FLAG_TRAP_OPEN and s.lift_down == 0b11111
    assert s.currents_ma[codes.MOTOR_SHUFFLE_DISC] > 0
    d.until(lambda: not d.board.busy)
    s = d.sensors()
    assert not s.flags & codes.FLAG_TRAP_OPEN and s.lift_down == 0b01111
    assert s.wall_tiles == (0, 0, 0, 0)


def test_the_temperature_rises_while_motors_run_and_falls_at_rest() -> None:
    d = MachineDriver()
    cold = d.sensors().temperature_dc
    for _ in range(3):
        d.command(m.Shuffle(0))
    warm = d.sensors().temperature_dc
    assert warm > cold
    d.step(600_000)  # ten minutes at rest, in one step
    assert cold <= d.sensors().temperature_dc < warm


def test_dice_rolled_by_the_unit_and_shown_when_thrown_by_hand() -> None:
    d = MachineDriver()
    d.ready(0)
    for count in (1, 2, 3):
        dice = d.command(m.RollDice(count, count))[-1]
        assert isinstance(dice, m.Dice) and len(dice.values) == count
        assert all(1 <= v <= 6 for v in dice.values)
        assert d.machine.state == "BUILT"  # back to the resting state it left
    assert d.command(m.DisplayDice(2, [3, 5]))[-1] == m.Done(m.DisplayDice.TYPE, 0)
    assert d.hal.displayed == (3, 5)


def test_a_table_without_dice_unit() -> None:
    d = MachineDriver(dice=False)
    unsupported = (codes.REFUSE_UNSUPPORTED, 0)
    assert refusal(d.command(m.RollDice(1, 2))) == unsupported
    assert refusal(d.command(m.MotorTest(codes.MOTOR_DICE, 100))) == unsupported
    assert not d.sensors().flags & codes.FLAG_DICE_PRESENT
    assert d.command(m.DisplayDice(1, [6, 6]))[-1] == m.Done(m.DisplayDice.TYPE, 0)
    reply = d.host.peer
    assert isinstance(reply, m.HelloReply) and not reply.has(codes.CAP_DICE)


def test_a_board_without_reader_reports_positions_only() -> None:
    d = MachineDriver(reader=False)
    assert not d.sensors().flags & codes.FLAG_READER_OK
    d.ready(0)
    assert manifest(d, 0) == [codes.TILE_UNKNOWN] * 136
    truth = d.machine.truth(0)  # the tiles are there all the same
    assert truth is not None and sorted(truth) == expected_codes(136)


def test_a_motor_test_reports_the_peak_current() -> None:
    d = MachineDriver()
    result = d.command(m.MotorTest(codes.MOTOR_CHAIN, 500))[-1]
    assert isinstance(result, m.MotorResult) and result.motor == codes.MOTOR_CHAIN
    assert result.ok == 1 and 600 <= result.current_ma <= 700  # the chain's 640 mA, +-3 %
    lift = d.command(m.MotorTest(codes.MOTOR_LIFT_N, 2000))[-1]
    assert isinstance(lift, m.MotorResult) and lift.ok == 1  # out and back, never at a stop
    assert d.sensors().lift_down & 0b1000  # the plate came back down


def test_stop_halts_the_build_and_the_set_must_be_shuffled_again() -> None:
    d = MachineDriver()
    d.command(m.Shuffle(0))
    d.send(m.BuildWalls(0, LAYOUT))
    d.wait(8_000)
    events = d.command(m.Stop())
    assert m.Done(m.BuildWalls.TYPE, codes.RESULT_STOPPED) in events
    assert events[-1] == m.Done(m.Stop.TYPE, 0)
    assert d.machine.state == "STOPPED" and places(d)["A"] == "partial"
    assert d.sensors().currents_ma == (0,) * 9
    laid = d.machine.status().laid[0]
    assert 0 < laid == sum(d.sensors().wall_tiles) < 136
    assert refusal(d.command(m.BuildWalls(1, LAYOUT)))  # B is not shuffled
    d.command(m.Shuffle(1))
    assert refusal(d.command(m.BuildWalls(1, LAYOUT))) == (
        codes.REFUSE_BAD_STATE,
        BLOCK_BENCH_OCCUPIED,
    )
    d.ready(0)  # shuffled again: the partial walls swept back into the disc first
    assert sorted(manifest(d, 0)) == expected_codes(136)


def test_a_reset_keeps_what_the_store_knows() -> None:
    d = MachineDriver()
    d.ready(0)
    old = d.machine.app.session
    d.send(m.Reset())
    d.until(lambda: d.machine.boots == 2)
    assert d.machine.app.session != old
    status = d.machine.status()
    assert status.reset_cause == codes.RESET_SOFT and status.motions == 2
    assert places(d) == {"A": "built", "B": "disc"}
    d.reconnect()  # the host meets the new session and says HELLO again
    assert d.machine.state == "IDLE"
    assert manifest(d, 0) == d.machine.truth(0)  # the walls are still there, read again


def test_a_power_cut_in_a_build_leaves_that_set_unknown() -> None:
    d = MachineDriver()
    d.command(m.Shuffle(0))
    d.send(m.BuildWalls(0, LAYOUT))
    d.wait(5_000)
    d.machine.reboot()  # the power goes and comes back
    status = d.machine.status()
    assert status.reset_cause == codes.RESET_POWER_ON
    assert places(d) == {"A": "unknown", "B": "disc"}
    assert d.sensors().currents_ma == (0,) * 9
    d.reconnect()
    assert d.machine.state == "IDLE"
    d.ready(0)  # shuffled again, it builds
    assert sorted(manifest(d, 0)) == expected_codes(136)


def test_seeded_tables_repeat_and_unseeded_ones_use_the_systems_generator() -> None:
    def first_manifest(seed: int | None) -> list[int]:
        d = MachineDriver(seed=seed)
        d.ready(0)
        return manifest(d, 0)

    assert first_manifest(21) == first_manifest(21) != first_manifest(22)
    unseeded = Machine(SimConfig(seed=None, speed=0))
    assert isinstance(unseeded.hal.source, secrets.SystemRandom)
    assert unseeded.hal.seed() is None
    assert isinstance(Machine(SimConfig(seed=4, speed=0)).hal.source, random.Random)


def test_buttons_wired_to_the_board() -> None:
    d = MachineDriver()
    d.machine.press_button(codes.BUTTON_DEAL, 3)
    d.wait(100)
    assert [e for e in d.events if isinstance(e, m.Button)] == [
        m.Button(codes.BUTTON_DEAL, 3, 1),
        m.Button(codes.BUTTON_DEAL, 3, 0),
    ]
    with pytest.raises(ValueError, match="seat"):
        d.machine.press_button(codes.BUTTON_DEAL, 4)
    with pytest.raises(ValueError, match="button"):
        d.machine.press_button(99, 0)


@pytest.mark.parametrize(
    ("field", "value"),
    [("tiles", 100), ("seed", -1), ("speed", -0.5), ("serial", "é"), ("timings", 3)],
)
def test_the_config_is_checked(field: str, value: object) -> None:
    with pytest.raises(SimConfigError, match=field):
        SimConfig(**{field: value})  # type: ignore[arg-type]


def test_the_board_reports_the_build_hash_of_the_sources_it_runs() -> None:
    d = MachineDriver()
    data = json.loads(source_manifest())
    files = data["files"]
    paths = {f["path"] for f in files}
    assert {"firmware/app.py", "firmware/hal/__init__.py", "protocol/connection.py"} <= paths
    for f in files:  # each file's digest is that file's
        digest = hashlib.sha256((ROOT / f["path"]).read_bytes()).hexdigest()
        assert f["sha256"] == digest, f["path"]
    lines = "".join(f"{f['sha256']}  {f['path']}\n" for f in sorted(files, key=lambda f: f["path"]))
    expected = hashlib.sha256(lines.encode()).hexdigest()  # what sha256sum | sha256sum says
    assert data["build_hash"] == expected
    assert d.machine.status().build_hash == expected[:16] != codes.BUILD_UNKNOWN
    reply = d.host.peer
    assert isinstance(reply, m.HelloReply) and reply.status.build_hash == expected[:16]


def test_the_docs_diagram_and_catalogue_are_the_codes() -> None:
    doc = (ROOT / "docs" / "simulator.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- generated: mjtable sim --diagram -->\n```mermaid\n(.*?)```", doc, re.S)
    assert block is not None and block.group(1) == state_diagram()
    marker = "<!-- generated: simulator.faultdoc.catalogue_markdown() -->\n"
    assert marker + catalogue_markdown() in doc
