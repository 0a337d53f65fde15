"""Every fault of the catalogue, injected into the model: the FAULT event, the sensor signs, the
phase it stopped in, refusal of motion until CLEAR_FAULT, CAUSE_PRESENT; and the spec language."""

from __future__ import annotations

from pathlib import Path

import pytest

from protocol import codes
from protocol import messages as m
from simulator.board import LIMIT_MA, NOMINAL_MA, Place
from simulator.config import SimConfig, Timings, default_layout
from simulator.faults import (
    FAULT_KINDS,
    FaultSpec,
    FaultSpecError,
    load_scenario,
    parse_fault,
)
from tests.support.simhost import ModelDriver, expected_codes

LAYOUT = default_layout(136)
T = Timings()


def only_fault(events: list[m.Message]) -> m.Fault:
    faults = [e for e in events if isinstance(e, m.Fault)]
    assert len(faults) == 1, events
    assert not any(isinstance(e, m.Done) for e in events), events
    return faults[0]


def assert_faulted_then_recovers(d: ModelDriver, code: int) -> None:
    """A faulted board refuses motion until CLEAR_FAULT, then works again."""
    assert d.model.state == "FAULT"
    s = d.sensors()
    assert s.state == codes.STATE_FAULT and s.fault == code
    assert s.currents_ma == (0,) * 9  # motors stopped
    for command in (m.Shuffle(1), m.Collect(), m.RollDice(1, 2), m.MotorTest(0, 100)):
        events = d.send(command)
        assert events == [m.Refused(command.TYPE, codes.REFUSE_FAULTED, code)], events
    assert d.send(m.Ping(5)) == [m.Pong(5)]  # the board still talks
    assert isinstance(d.send(m.Sensors())[0], m.SensorData)
    assert d.send(m.ClearFault()) == [m.Done(m.ClearFault.TYPE, 0)]
    assert d.model.state == "STOPPED" and d.sensors().fault == 0


def build_until_fault(d: ModelDriver) -> list[m.Message]:
    d.run(m.Shuffle(0))
    return d.run(m.BuildWalls(0, LAYOUT))


def test_jam_at_the_head_is_a_sort_timeout_on_that_wall() -> None:
    d = ModelDriver(faults=["jam@build:wall=2"])
    d.run(m.Shuffle(0))
    d.model.handle(m.BuildWalls(0, LAYOUT), d.t)
    wall2 = d.t + 2 * (17 * T.stack_ms + T.wall_push_ms)
    strike = wall2 + 17 * T.stack_ms // 2
    d.until(strike + 1000)
    frozen = d.sensors().wall_tiles
    assert frozen[:2] == (34, 34) and 0 < frozen[2] < 34 and frozen[3] == 0
    assert d.model.state == "BUILDING"
    # no tile comes: counts stand still and no progress is reported until the timeout
    assert d.until(strike + T.sort_timeout_ms - 10) == []
    assert d.sensors().wall_tiles == frozen
    fault = only_fault(d.until(strike + T.sort_timeout_ms))
    assert fault == m.Fault(codes.FAULT_SORT_TIMEOUT, codes.SUB_SHUFFLER, codes.PHASE_BUILD, 2)
    assert d.sensors().wall_tiles == frozen
    assert d.model.place(0) is Place.PARTIAL
    assert_faulted_then_recovers(d, codes.FAULT_SORT_TIMEOUT)
    # the set is never trusted after a fault: shuffle and build again
    d.ready(0)
    assert sorted(d.model.truth(0) or []) == expected_codes(136)


def test_head_jam_shows_a_high_head_current_then_head_not_home_and_belt_full() -> None:
    d = ModelDriver(faults=["headjam@build:wall=1,at=20"])
    d.run(m.Shuffle(0))
    d.model.handle(m.BuildWalls(0, LAYOUT), d.t)
    start = d.t
    strike = start + 17 * T.stack_ms + T.wall_push_ms + 17 * T.stack_ms * 20 // 100
    d.until(strike + T.head_jam_ms // 2)
    s = d.sensors()
    assert s.currents_ma[codes.MOTOR_STACKER_HEAD] > LIMIT_MA[codes.MOTOR_STACKER_HEAD]
    assert s.flags & codes.FLAG_BELT_FULL and not s.flags & codes.FLAG_HEAD_HOME
    fault = only_fault(d.until(strike + T.head_jam_ms))
    assert fault == m.Fault(codes.FAULT_HEAD_JAM, codes.SUB_STACKER_HEAD, codes.PHASE_BUILD, 1)
    s = d.sensors()
    assert s.flags & codes.FLAG_BELT_FULL and not s.flags & codes.FLAG_HEAD_HOME
    assert_faulted_then_recovers(d, codes.FAULT_HEAD_JAM)
    assert d.sensors().flags & codes.FLAG_HEAD_HOME


@pytest.mark.parametrize(("kind", "code", "delta"), [("short", 3, -1), ("extra", 4, 1)])
def test_wall_short_or_extra(kind: str, code: int, delta: int) -> None:
    d = ModelDriver(faults=[f"{kind}@build:wall=3"])
    fault = only_fault(build_until_fault(d))
    assert fault == m.Fault(code, codes.SUB_STACKER_HEAD, codes.PHASE_BUILD, 3)
    assert d.sensors().wall_tiles == (34, 34, 34, 34 + delta)
    assert_faulted_then_recovers(d, code)


@pytest.mark.parametrize(
    ("spec", "motor", "subsystem", "phase"),
    [
        ("stall@shuffle", codes.MOTOR_SHUFFLE_DISC, codes.SUB_SHUFFLER, codes.PHASE_SHUFFLE),
        ("stall@build:motor=2", codes.MOTOR_CHAIN, codes.SUB_CHAIN, codes.PHASE_BUILD),
        ("stall@lift:motor=4", codes.MOTOR_LIFT_S, codes.SUB_LIFTS, codes.PHASE_LIFT),
        ("stall@collect:motor=7", codes.MOTOR_CENTRE_LIFT, codes.SUB_LIFTS, codes.PHASE_COLLECT),
        ("stall@dice", codes.MOTOR_DICE, codes.SUB_DICE, codes.PHASE_DICE),
    ],
)
def test_motor_stall_is_a_current_over_the_limit(
    spec: str, motor: int, subsystem: int, phase: int
) -> None:
    d = ModelDriver()
    if phase in (codes.PHASE_BUILD,):
        d.run(m.Shuffle(0))
    if phase == codes.PHASE_LIFT:
        d.ready(0)
    d.model.inject(spec, d.t)
    command = {
        codes.PHASE_SHUFFLE: m.Shuffle(0),
        codes.PHASE_BUILD: m.BuildWalls(0, LAYOUT),
        codes.PHASE_LIFT: m.LiftWalls(0),
        codes.PHASE_COLLECT: m.Collect(),
        codes.PHASE_DICE: m.RollDice(1, 2),
    }[phase]
    d.model.handle(command, d.t)
    over = False
    events: list[m.Message] = []
    while d.model.busy:
        d.t = d.model.next_deadline() or d.t
        d.model.advance(d.t)
        events += d.drain()
        if d.model.busy:
            over |= d.sensors().currents_ma[motor] > LIMIT_MA[motor]
            events += d.wait(50)  # sample the current between events too
            over |= d.model.busy and d.sensors().currents_ma[motor] > LIMIT_MA[motor]
    assert over, "the stalled motor's current never went over its limit"
    assert only_fault(events) == m.Fault(codes.FAULT_MOTOR_STALL, subsystem, phase, motor)
    assert_faulted_then_recovers(d, codes.FAULT_MOTOR_STALL)


def test_stall_in_a_motor_test_reports_without_faulting() -> None:
    d = ModelDriver(faults=["stall@test:motor=2"])
    ok = d.run(m.MotorTest(codes.MOTOR_LIFT_E, 300))[-1]
    assert isinstance(ok, m.MotorResult) and ok.ok == 1  # another motor: fine
    bad = d.run(m.MotorTest(codes.MOTOR_CHAIN, 300))[-1]
    assert isinstance(bad, m.MotorResult) and bad.ok == 0
    assert bad.current_ma > LIMIT_MA[codes.MOTOR_CHAIN]
    assert d.model.state == "IDLE"
    again = d.run(m.MotorTest(codes.MOTOR_CHAIN, 300))[-1]
    assert isinstance(again, m.MotorResult) and again.ok == 1
    assert abs(again.current_ma - NOMINAL_MA[codes.MOTOR_CHAIN]) < 100


def test_lift_plate_never_reaching_its_limit() -> None:
    d = ModelDriver(faults=["lift@lift:plate=1"])
    d.ready(0)
    d.model.handle(m.LiftWalls(0), d.t)
    start = d.t
    d.until(start + T.lift_ms + 500)
    s = d.sensors()
    assert s.state == codes.STATE_LIFTING
    assert s.lift_up == 0b11101 and s.lift_down & 0b1111 == 0  # S (bit 1) neither up nor down
    assert s.currents_ma[codes.MOTOR_LIFT_S] > NOMINAL_MA[codes.MOTOR_LIFT_S]
    fault = only_fault(d.until(start + T.lift_timeout_ms))
    assert fault == m.Fault(codes.FAULT_LIFT_LIMIT, codes.SUB_LIFTS, codes.PHASE_LIFT, 1)
    assert d.sensors().lift_up == 0b11101
    assert d.model.place(0) is Place.BUILT  # the walls are still there
    assert_faulted_then_recovers(d, codes.FAULT_LIFT_LIMIT)
    assert isinstance(d.run(m.LiftWalls(0))[-1], m.Done)
    assert d.sensors().lift_up == 0b11111


def test_centre_lift_stuck_during_collect() -> None:
    d = ModelDriver(faults=["lift@collect:plate=4"])
    d.ready(0)
    d.run(m.LiftWalls(0))
    fault = only_fault(d.run(m.Collect()))
    assert fault == m.Fault(codes.FAULT_LIFT_LIMIT, codes.SUB_LIFTS, codes.PHASE_COLLECT, 4)
    s = d.sensors()
    assert not s.lift_up & 0b10000 and not s.lift_down & 0b10000
    assert s.flags & codes.FLAG_TRAP_OPEN
    assert d.model.place(0) is Place.UP  # nothing was collected
    assert_faulted_then_recovers(d, codes.FAULT_LIFT_LIMIT)


def test_chain_never_homing() -> None:
    d = ModelDriver(faults=["chain@build:wall=1"])
    fault = only_fault(build_until_fault(d))
    assert fault == m.Fault(codes.FAULT_CHAIN_HOME, codes.SUB_CHAIN, codes.PHASE_BUILD, 0)
    s = d.sensors()
    assert not s.flags & codes.FLAG_CHAIN_HOME
    assert s.wall_tiles == (34, 34, 0, 0)
    assert_faulted_then_recovers(d, codes.FAULT_CHAIN_HOME)
    assert d.sensors().flags & codes.FLAG_CHAIN_HOME


def test_dice_fault() -> None:
    d = ModelDriver(faults=["dice@dice:at=30"])
    events = d.run(m.RollDice(4, 2))
    assert only_fault(events) == m.Fault(
        codes.FAULT_DICE_FAULT, codes.SUB_DICE, codes.PHASE_DICE, 0
    )
    assert not any(isinstance(e, m.Dice) for e in events)
    assert not d.sensors().flags & codes.FLAG_DICE_PRESENT
    assert_faulted_then_recovers(d, codes.FAULT_DICE_FAULT)
    assert d.sensors().flags & codes.FLAG_DICE_PRESENT
    assert isinstance(d.run(m.RollDice(4, 2))[-1], m.Dice)


def test_overheat_and_cooling_down() -> None:
    d = ModelDriver(faults=["overheat@shuffle:at=60"])
    d.model.handle(m.Shuffle(0), d.t)
    start = d.t
    d.until(start + T.shuffle_ms(136) * 30 // 100)
    assert 400 < d.sensors().temperature_dc < 850  # climbing
    fault = only_fault(d.until(start + T.shuffle_ms(136) * 60 // 100))
    assert fault == m.Fault(codes.FAULT_OVERHEAT, codes.SUB_POWER, codes.PHASE_SHUFFLE, 0)
    assert d.sensors().temperature_dc >= 850
    # still hot: CLEAR_FAULT is refused with the cause present
    refused = d.send(m.ClearFault())
    assert refused == [m.Refused(m.ClearFault.TYPE, codes.REFUSE_CAUSE_PRESENT, 9)]
    d.wait(10_000)
    assert d.send(m.ClearFault())[0].reason == codes.REFUSE_CAUSE_PRESENT  # type: ignore[attr-defined]
    d.wait(30_000)  # cooled below 75 °C
    assert d.sensors().temperature_dc < 750
    assert_faulted_then_recovers(d, codes.FAULT_OVERHEAT)


def test_overheat_at_rest() -> None:
    d = ModelDriver()
    d.model.inject("overheat@now", d.t)
    assert only_fault(d.drain()) == m.Fault(codes.FAULT_OVERHEAT, codes.SUB_POWER, 0, 0)
    d.model.repair(d.t)  # the technician's fan
    assert_faulted_then_recovers(d, codes.FAULT_OVERHEAT)


def test_cover_opened_during_a_cycle() -> None:
    d = ModelDriver(faults=["cover@build:at=50,hold=10"])
    events = build_until_fault(d)
    fault = only_fault(events)
    assert fault == m.Fault(codes.FAULT_COVER_OPEN, codes.SUB_SAFETY, codes.PHASE_BUILD, 0)
    assert not d.sensors().flags & codes.FLAG_COVER_CLOSED
    assert d.send(m.ClearFault()) == [
        m.Refused(m.ClearFault.TYPE, codes.REFUSE_CAUSE_PRESENT, codes.FAULT_COVER_OPEN)
    ]
    d.wait(10_000)  # someone closes it after 10 s
    assert d.sensors().flags & codes.FLAG_COVER_CLOSED
    assert_faulted_then_recovers(d, codes.FAULT_COVER_OPEN)


def test_cover_held_open_until_closed() -> None:
    d = ModelDriver(faults=["cover@shuffle:hold=forever"])
    only_fault(d.run(m.Shuffle(0)))
    d.wait(3_600_000)
    assert d.send(m.ClearFault())[0].reason == codes.REFUSE_CAUSE_PRESENT  # type: ignore[attr-defined]
    d.model.close_cover(d.t)
    assert_faulted_then_recovers(d, codes.FAULT_COVER_OPEN)


def test_emergency_stop_pressed_and_released() -> None:
    d = ModelDriver(faults=["estop@lift:at=40,hold=2"])
    d.ready(0)
    events = d.run(m.LiftWalls(0))
    assert only_fault(events) == m.Fault(codes.FAULT_ESTOP, codes.SUB_SAFETY, codes.PHASE_LIFT, 0)
    assert d.model.state == "ESTOP"
    s = d.sensors()
    assert s.state == codes.STATE_ESTOP and s.flags & codes.FLAG_ESTOP
    assert s.currents_ma == (0,) * 9
    assert s.lift_up & 0b1111 == 0 and s.lift_down & 0b1111 == 0  # plates stopped midway
    for command in (m.LiftWalls(0), m.Shuffle(1), m.ClearFault()):
        assert d.send(command) == [
            m.Refused(command.TYPE, codes.REFUSE_ESTOP_HELD, codes.FAULT_ESTOP)
        ]
    assert d.send(m.Ping(1)) == [m.Pong(1)]
    d.wait(2000)  # released
    assert d.model.state == "FAULT" and not d.sensors().flags & codes.FLAG_ESTOP
    assert_faulted_then_recovers(d, codes.FAULT_ESTOP)
    assert isinstance(d.run(m.LiftWalls(0))[-1], m.Done)


def test_emergency_stop_by_hand_at_rest() -> None:
    d = ModelDriver()
    d.model.press_estop(d.t)
    assert only_fault(d.drain()) == m.Fault(codes.FAULT_ESTOP, codes.SUB_SAFETY, 0, 0)
    d.model.press_estop(d.t)  # pressing again changes nothing
    assert d.drain() == []
    d.model.release_estop(d.t)
    assert_faulted_then_recovers(d, codes.FAULT_ESTOP)


def test_reader_fault_and_tile_count() -> None:
    d = ModelDriver(faults=["reader@build:wall=1"])
    fault = only_fault(build_until_fault(d))
    assert fault == m.Fault(codes.FAULT_READER_FAULT, codes.SUB_READER, codes.PHASE_BUILD, 0)
    assert not d.sensors().flags & codes.FLAG_READER_OK
    assert_faulted_then_recovers(d, codes.FAULT_READER_FAULT)
    d = ModelDriver(faults=["count@build"])
    fault = only_fault(build_until_fault(d))
    assert fault == m.Fault(codes.FAULT_TILE_COUNT, codes.SUB_READER, codes.PHASE_BUILD, 0)
    assert d.model.place(0) is Place.PARTIAL
    assert_faulted_then_recovers(d, codes.FAULT_TILE_COUNT)


def test_internal_error() -> None:
    d = ModelDriver()
    d.model.inject("internal@now:code=77", d.t)
    assert only_fault(d.drain()) == m.Fault(codes.FAULT_INTERNAL, codes.SUB_BOARD, 0, 77)
    assert_faulted_then_recovers(d, codes.FAULT_INTERNAL)


def test_reboot_mid_build() -> None:
    d = ModelDriver(faults=["reboot@build:at=30"])
    events = build_until_fault(d)
    assert not any(isinstance(e, m.Done | m.Fault) for e in events)
    assert d.model.boot_count == 1 and d.model.state == "BOOT"
    assert d.sensors().currents_ma == (0,) * 9
    assert [d.model.place(0), d.model.place(1)] == [Place.DISC, Place.DISC]


def test_link_faults_become_link_actions_for_the_transport() -> None:
    d = ModelDriver(faults=["noise:error=0.01,drop=0.002", "cut@shuffle:at=50,seconds=3"])
    assert d.model.link_actions == [("noise", 0.01, 0.002)]
    d.model.link_actions.clear()
    d.run(m.Shuffle(0))
    assert d.model.link_actions == [("cut", 3.0, 0.0)]


def test_hold_keeps_the_cause_present_then_it_goes() -> None:
    d = ModelDriver(faults=["jam@build:wall=0,hold=20"])
    only_fault(build_until_fault(d))
    assert d.send(m.ClearFault()) == [
        m.Refused(m.ClearFault.TYPE, codes.REFUSE_CAUSE_PRESENT, codes.FAULT_SORT_TIMEOUT)
    ]
    assert d.model.state == "FAULT"
    d.wait(20_000)
    assert_faulted_then_recovers(d, codes.FAULT_SORT_TIMEOUT)


def test_hold_forever_until_repaired() -> None:
    d = ModelDriver(faults=["stall@shuffle:hold=forever"])
    only_fault(d.run(m.Shuffle(0)))
    d.wait(24 * 3_600_000)
    assert d.send(m.ClearFault())[0].reason == codes.REFUSE_CAUSE_PRESENT  # type: ignore[attr-defined]
    d.model.repair(d.t)
    assert_faulted_then_recovers(d, codes.FAULT_MOTOR_STALL)


def test_nth_and_times() -> None:
    # skip one roll, then strike twice; the faulted board is cleared after each strike
    d = ModelDriver(faults=["dice@dice:nth=2,times=2"])
    results = []
    for i in range(5):
        last = d.run(m.RollDice(i, 1))[-1]
        results.append(type(last).__name__)
        if isinstance(last, m.Fault):
            d.send(m.ClearFault())
    assert results == ["Dice", "Fault", "Fault", "Dice", "Dice"]
    d = ModelDriver(faults=["dice@dice:times=0"])
    for i in range(3):
        assert isinstance(d.run(m.RollDice(i, 1))[-1], m.Fault)
        d.send(m.ClearFault())
    d.model.disarm()
    assert isinstance(d.run(m.RollDice(9, 1))[-1], m.Dice)


def test_a_fault_while_faulted_keeps_the_first() -> None:
    d = ModelDriver(faults=["dice@dice"])
    d.run(m.RollDice(1, 1))
    d.model.inject("internal@now:code=5", d.t)
    assert d.drain() == []
    assert d.model.fault is not None and d.model.fault.code == codes.FAULT_DICE_FAULT


# --- the spec language ------------------------------------------------------------------------


def test_every_kind_parses_with_its_default_phase_and_round_trips() -> None:
    examples = {
        "jam": "jam@build:wall=2",
        "headjam": "headjam:wall=1,at=10",
        "short": "short@build:wall=3",
        "extra": "extra:wall=0",
        "stall": "stall@lift:motor=5,hold=2.5",
        "lift": "lift@collect:plate=4",
        "chain": "chain:wall=2,nth=3",
        "dice": "dice:times=0",
        "overheat": "overheat@dice:at=10",
        "cover": "cover@shuffle:hold=forever",
        "estop": "estop:hold=1",
        "reader": "reader:wall=3,at=90",
        "count": "count",
        "internal": "internal:code=200",
        "reboot": "reboot@lift",
        "noise": "noise:error=0.01",
        "cut": "cut@build:seconds=4,at=20",
    }
    assert set(examples) == set(FAULT_KINDS)
    for text in examples.values():
        spec = parse_fault(text)
        assert parse_fault(str(spec)) == spec, (text, str(spec))
    assert parse_fault("jam@build:wall=2") == FaultSpec("jam", codes.PHASE_BUILD, wall=2)
    assert parse_fault("  JAM@Build : wall = 2 ") == FaultSpec("jam", codes.PHASE_BUILD, wall=2)
    assert parse_fault("estop").phase is None and parse_fault("estop").hold == 3.0
    assert parse_fault("stall@build").motor == codes.MOTOR_STACKER_HEAD


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "unknown kind"),
        ("flood@build", "unknown kind 'flood'"),
        ("jam@dinner", "unknown phase 'dinner'"),
        ("jam@lift", "cannot strike in phase lift"),
        ("jam@now", "cannot strike in phase now"),
        ("jam@build:motor=1", "unknown key 'motor'"),
        ("jam@build:wall=4", "wall=4 out of range"),
        ("jam@build:wall=two", "not an integer"),
        ("jam@build:wall", "is not KEY=VALUE"),
        ("jam@build:", "nothing after ':'"),
        ("jam:wall=1,wall=2", "given twice"),
        ("stall@lift:motor=0", "does not run during lift"),
        ("lift@lift:plate=4", "only moves during collect"),
        ("noise", "needs error=P"),
        ("noise:error=2", "out of range"),
        ("cut:seconds=0", "out of range"),
        ("estop:at=30", "unknown key 'at'"),
        ("dice:hold=-1", "out of range"),
        ("dice:at=100", "out of range"),
        ("short@build:at=50", "unknown key 'at'"),
        ("lift@lift:at=10", "unknown key 'at'"),
    ],
)
def test_bad_specs_are_refused_with_words(text: str, words: str) -> None:
    with pytest.raises(FaultSpecError, match=words.replace("(", r"\(")):
        parse_fault(text)


def test_scenario_files(tmp_path: Path) -> None:
    good = tmp_path / "two.toml"
    good.write_text(
        'description = "a jam on the second build, then a stuck East plate"\n'
        "[[fault]]\n"
        'spec = "jam@build:wall=2,nth=2"\n'
        "[[fault]]\n"
        'kind = "lift"\n'
        'phase = "lift"\n'
        "plate = 0\n"
        'hold = "forever"\n'
        "[[fault]]\n"
        'kind = "noise"\n'
        "error = 0.001\n",
        encoding="utf-8",
    )
    specs = load_scenario(good)
    assert specs == [
        parse_fault("jam@build:wall=2,nth=2"),
        parse_fault("lift@lift:plate=0,hold=forever"),
        parse_fault("noise:error=0.001"),
    ]
    # the scenario drives a board: the first build is fine, the lift faults until repaired,
    # the second build jams on wall 2
    d = ModelDriver(faults=list(specs))
    assert d.model.link_actions == [("noise", 0.001, 0.0)]
    d.ready(0)
    assert only_fault(d.run(m.LiftWalls(0))).code == codes.FAULT_LIFT_LIMIT
    d.wait(600_000)
    assert d.send(m.ClearFault())[0].reason == codes.REFUSE_CAUSE_PRESENT  # type: ignore[attr-defined]
    d.model.repair(d.t)
    assert_faulted_then_recovers(d, codes.FAULT_LIFT_LIMIT)
    assert isinstance(d.run(m.LiftWalls(0))[-1], m.Done)
    d.run(m.Shuffle(1))
    assert only_fault(d.run(m.BuildWalls(1, LAYOUT))).detail == 2
    assert isinstance(SimConfig(faults=list(specs)).faults[0], FaultSpec)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("[[fault]]\nspec = 'jam@lunch'\n", "fault #1: fault 'jam@lunch': unknown phase"),
        ("[[fault]]\nkind = 'jam'\nwall = 7\n", "fault #1: .*wall=7 out of range"),
        ("[[fault]]\nkind = 'jam'\ncolour = 'red'\n", "unknown key 'colour'"),
        ("[[fault]]\nphase = 'build'\n", "needs kind"),
        ("[[fault]]\nspec = 'jam'\nkind = 'jam'\n", "either spec"),
        ("faults = []\n", "unknown top-level key 'faults'"),
        ("fault = 3\n", "array of tables"),
        ("[[fault]\n", "not valid TOML"),
    ],
)
def test_bad_scenario_files(tmp_path: Path, content: str, words: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(FaultSpecError, match=words):
        load_scenario(path)


def test_missing_scenario_file(tmp_path: Path) -> None:
    with pytest.raises(FaultSpecError, match="cannot read it"):
        load_scenario(tmp_path / "nope.toml")
