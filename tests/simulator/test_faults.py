"""Every fault of the catalogue as a condition of the simulated hardware, found by the firmware:
the FAULT it reports, when, the sensor signs, refusal of motion until CLEAR_FAULT, CAUSE_PRESENT
while the firmware can see the cause, what ``hold``, ``nth``, ``times`` and ``repair`` do."""

from __future__ import annotations

import pytest

from firmware.config import Timings
from firmware.hal.mechanics import NOMINAL_MA
from protocol import codes
from protocol import messages as m
from simulator.config import default_layout
from tests.support.simhost import MachineDriver, expected_codes

LAYOUT = default_layout(136)
T = Timings()
LIMIT_MA = T.current_limit_ma


def fault_of(events: list[object]) -> m.Fault:
    faults = [e for e in events if isinstance(e, m.Fault)]
    assert len(faults) == 1, events
    assert not any(isinstance(e, m.Done) for e in events), events
    return faults[0]


def refusal(events: list[object]) -> tuple[int, int] | None:
    for e in events:
        if isinstance(e, m.Refused):
            return (e.reason, e.detail)
    return None


def clear(d: MachineDriver) -> tuple[int, int] | None:
    """CLEAR_FAULT: None when done, else the refusal."""
    return refusal(d.command(m.ClearFault()))


def assert_faulted_then_recovers(d: MachineDriver, code: int) -> None:
    """A faulted board refuses motion until CLEAR_FAULT, then a whole cycle works again."""
    assert d.machine.state == "FAULT"
    s = d.sensors()
    assert s.state == codes.STATE_FAULT and s.fault == code
    assert s.currents_ma == (0,) * 9  # every motor cut
    for command in (m.Shuffle(1), m.Collect(), m.RollDice(1, 2), m.MotorTest(0, 100)):
        assert refusal(d.command(command)) == (codes.REFUSE_FAULTED, code)
    assert d.command(m.Ping(5))[-1] == m.Pong(5)  # the board still talks
    assert clear(d) is None
    assert d.machine.state == "STOPPED" and d.sensors().fault == 0
    if "up" in d.machine.places().values():
        d.command(m.Collect())
    built = [i for i, where in enumerate(d.machine.places().values()) if where == "built"]
    if built:
        assert d.command(m.LiftWalls(built[0]))[-1] == m.Done(m.LiftWalls.TYPE, 0)
    tile_set = 1 - built[0] if built else 0
    d.ready(tile_set)  # the set is never trusted after a fault: shuffled and built again
    truth = d.machine.truth(tile_set)
    assert truth is not None and sorted(truth) == expected_codes(136)


def building(d: MachineDriver) -> list[object]:
    d.command(m.Shuffle(0))
    return d.command(m.BuildWalls(0, LAYOUT))


def test_a_tile_jammed_before_the_head_is_a_sort_timeout_on_that_wall() -> None:
    d = MachineDriver(faults=["jam@build:wall=2"])
    d.command(m.Shuffle(0))
    d.send(m.BuildWalls(0, LAYOUT))
    d.until(lambda: d.machine.saboteur.describe() != [])
    struck = d.now
    d.wait(1_000)
    frozen = d.sensors().wall_tiles
    assert frozen[:2] == (34, 34) and 15 <= frozen[2] <= 18 and frozen[3] == 0
    assert d.machine.state == "BUILDING"
    events = d.wait(3_800)  # no tile comes: the counts stand, no progress is reported
    assert not any(isinstance(e, m.Progress | m.Fault) for e in events), events
    fault = fault_of(d.wait(400))
    assert fault == m.Fault(codes.FAULT_SORT_TIMEOUT, codes.SUB_SHUFFLER, codes.PHASE_BUILD, 2)
    assert 5_000 <= d.now - struck <= 5_300  # the firmware's tile watch: 5 s
    assert d.sensors().wall_tiles == frozen
    assert d.machine.places()["A"] == "partial"
    assert d.machine.saboteur.describe() == []  # hold 0: the tile is freed once reported
    assert_faulted_then_recovers(d, codes.FAULT_SORT_TIMEOUT)


def test_a_jammed_head_strains_its_hall_sensor_goes_quiet_and_tiles_pile_up() -> None:
    d = MachineDriver(faults=["headjam@build:wall=1,at=20,hold=30"])
    d.command(m.Shuffle(0))
    d.send(m.BuildWalls(0, LAYOUT))
    d.until(lambda: d.machine.saboteur.describe() != [])
    d.wait(200)
    s = d.sensors()
    head = codes.MOTOR_STACKER_HEAD
    assert NOMINAL_MA[head] < s.currents_ma[head] < LIMIT_MA[head]  # under its limit
    assert s.flags & codes.FLAG_BELT_FULL
    fault = fault_of(d.wait(600))
    assert fault == m.Fault(codes.FAULT_HEAD_JAM, codes.SUB_STACKER_HEAD, codes.PHASE_BUILD, 1)
    assert d.sensors().flags & codes.FLAG_BELT_FULL
    # the cause is there for the firmware to see (tiles behind the head) for the hold's 30 s
    assert clear(d) == (codes.REFUSE_CAUSE_PRESENT, codes.FAULT_HEAD_JAM)
    d.wait(30_000)
    s = d.sensors()
    assert s.flags & codes.FLAG_HEAD_HOME and not s.flags & codes.FLAG_BELT_FULL
    assert_faulted_then_recovers(d, codes.FAULT_HEAD_JAM)


@pytest.mark.parametrize(("kind", "code", "delta"), [("short", 3, -1), ("extra", 4, 1)])
def test_a_wall_a_tile_short_or_over(kind: str, code: int, delta: int) -> None:
    d = MachineDriver(faults=[f"{kind}@build:wall=3"])
    fault = fault_of(building(d))
    assert fault == m.Fault(code, codes.SUB_STACKER_HEAD, codes.PHASE_BUILD, 3)
    assert d.sensors().wall_tiles == (34, 34, 34, 34 + delta)  # what the wall channel counted
    assert_faulted_then_recovers(d, code)


def ready_for(d: MachineDriver, phase: int) -> m.Message:
    """Bring the board where a motion of ``phase`` can run; that motion's command."""
    if phase == codes.PHASE_SHUFFLE:
        return m.Shuffle(0)
    d.command(m.Shuffle(0))
    if phase == codes.PHASE_BUILD:
        return m.BuildWalls(0, LAYOUT)
    d.command(m.BuildWalls(0, LAYOUT))
    if phase == codes.PHASE_LIFT:
        return m.LiftWalls(0)
    if phase == codes.PHASE_COLLECT:
        d.command(m.LiftWalls(0))  # a set on the table: the collect moves every lift
        return m.Collect()
    return m.RollDice(1, 2)


@pytest.mark.parametrize(
    ("spec", "motor", "subsystem", "phase"),
    [
        ("stall@shuffle", codes.MOTOR_SHUFFLE_DISC, codes.SUB_SHUFFLER, codes.PHASE_SHUFFLE),
        ("stall@build", codes.MOTOR_STACKER_HEAD, codes.SUB_STACKER_HEAD, codes.PHASE_BUILD),
        ("stall@build:motor=2", codes.MOTOR_CHAIN, codes.SUB_CHAIN, codes.PHASE_BUILD),
        ("stall@lift:motor=4", codes.MOTOR_LIFT_S, codes.SUB_LIFTS, codes.PHASE_LIFT),
        ("stall@collect:motor=6", codes.MOTOR_LIFT_N, codes.SUB_LIFTS, codes.PHASE_COLLECT),
        ("stall@collect:motor=7", codes.MOTOR_CENTRE_LIFT, codes.SUB_LIFTS, codes.PHASE_COLLECT),
        (
            "stall@collect:motor=0",
            codes.MOTOR_SHUFFLE_DISC,
            codes.SUB_SHUFFLER,
            codes.PHASE_COLLECT,
        ),
        ("stall@dice", codes.MOTOR_DICE, codes.SUB_DICE, codes.PHASE_DICE),
    ],
)
def test_a_seized_motor_draws_over_its_limit_and_stalls(
    spec: str, motor: int, subsystem: int, phase: int
) -> None:
    d = MachineDriver()
    command = ready_for(d, phase)
    d.machine.inject(spec)
    mark = d.send(command)
    d.until(lambda: d.hal.blocked[motor] > 0)
    d.step()
    assert d.sensors().currents_ma[motor] > LIMIT_MA[motor]
    struck = d.now
    d.until(lambda: any(isinstance(e, m.Fault) for e in d.events[mark:]), 2_000)
    assert fault_of(d.events[mark:]) == m.Fault(codes.FAULT_MOTOR_STALL, subsystem, phase, motor)
    assert 190 <= d.now - struck <= 260  # over the limit for 200 ms
    assert d.sensors().currents_ma == (0,) * 9
    assert_faulted_then_recovers(d, codes.FAULT_MOTOR_STALL)


def test_a_seized_motor_in_a_motor_test_is_a_result_not_a_fault() -> None:
    d = MachineDriver(faults=["stall@test:motor=2"])
    # a test of another motor does not take the spec
    assert d.command(m.MotorTest(codes.MOTOR_SHUFFLE_DISC, 600))[-1].ok == 1  # type: ignore[attr-defined]
    result = d.command(m.MotorTest(codes.MOTOR_CHAIN, 2000))[-1]
    assert isinstance(result, m.MotorResult) and result.ok == 0
    assert result.current_ma > LIMIT_MA[codes.MOTOR_CHAIN]
    assert d.machine.state == "IDLE" and not any(isinstance(e, m.Fault) for e in d.events)


def test_a_plate_stuck_between_its_switches_until_repaired() -> None:
    d = MachineDriver(faults=["lift@lift:plate=2,hold=forever"])
    d.ready(0)
    start = d.now
    mark = d.send(m.LiftWalls(0))
    d.wait(1_500)
    s = d.sensors()
    assert s.lift_up & 0b1111 == 0b1011 and not s.lift_down & 0b0100  # W is between
    assert NOMINAL_MA[5] < s.currents_ma[5] < LIMIT_MA[5]  # straining, under its limit
    d.until(lambda: any(isinstance(e, m.Fault) for e in d.events[mark:]), 3_000)
    fault = fault_of(d.events[mark:])
    assert fault == m.Fault(codes.FAULT_LIFT_LIMIT, codes.SUB_LIFTS, codes.PHASE_LIFT, 2)
    assert 3_000 <= d.now - start <= 3_100  # the firmware's 3 s for a plate to reach its switch
    # a stuck plate cannot be seen at rest: the fault clears, and the next lift meets it again
    assert clear(d) is None
    assert fault_of(d.command(m.LiftWalls(0))).code == codes.FAULT_LIFT_LIMIT
    d.machine.repair()
    assert clear(d) is None
    assert d.command(m.LiftWalls(0))[-1] == m.Done(m.LiftWalls.TYPE, 0)
    assert d.sensors().lift_up == 0b11111


def test_the_centre_lift_stuck_in_a_collect_leaves_the_trap_open() -> None:
    d = MachineDriver(faults=["lift@collect:plate=4"])
    d.ready(0)
    d.command(m.LiftWalls(0))
    fault = fault_of(d.command(m.Collect()))
    assert fault == m.Fault(codes.FAULT_LIFT_LIMIT, codes.SUB_LIFTS, codes.PHASE_COLLECT, 4)
    assert d.sensors().flags & codes.FLAG_TRAP_OPEN
    assert_faulted_then_recovers(d, codes.FAULT_LIFT_LIMIT)


def test_a_chain_stuck_away_from_home_is_seen_until_its_hold_ends() -> None:
    d = MachineDriver(faults=["chain@build:wall=1,hold=10"])
    fault = fault_of(building(d))
    assert fault == m.Fault(codes.FAULT_CHAIN_HOME, codes.SUB_CHAIN, codes.PHASE_BUILD, 0)
    assert d.sensors().wall_tiles[:3] == (34, 34, 0)
    assert not d.sensors().flags & codes.FLAG_CHAIN_HOME
    assert clear(d) == (codes.REFUSE_CAUSE_PRESENT, codes.FAULT_CHAIN_HOME)
    d.wait(10_000)  # the hold: then the chain is freed and back home
    assert d.sensors().flags & codes.FLAG_CHAIN_HOME
    assert_faulted_then_recovers(d, codes.FAULT_CHAIN_HOME)


def test_a_dead_dice_sensor_until_repaired() -> None:
    d = MachineDriver(faults=["dice@dice:at=40,hold=forever"])
    fault = fault_of(d.command(m.RollDice(1, 2)))
    assert fault == m.Fault(codes.FAULT_DICE_FAULT, codes.SUB_DICE, codes.PHASE_DICE, 0)
    assert not d.sensors().flags & codes.FLAG_DICE_PRESENT
    assert clear(d) == (codes.REFUSE_CAUSE_PRESENT, codes.FAULT_DICE_FAULT)
    d.machine.repair()
    assert d.sensors().flags & codes.FLAG_DICE_PRESENT
    assert clear(d) is None
    assert isinstance(d.command(m.RollDice(2, 2))[-1], m.Dice)


def test_overheat_in_a_shuffle_then_the_board_cools() -> None:
    d = MachineDriver(faults=["overheat@shuffle:at=30"])
    start = d.now
    fault = fault_of(d.command(m.Shuffle(0)))
    assert fault == m.Fault(codes.FAULT_OVERHEAT, codes.SUB_POWER, codes.PHASE_SHUFFLE, 0)
    assert abs(d.now - start - 0.3 * T.shuffle_ms(136)) < 500
    assert d.sensors().temperature_dc >= T.overheat_dc
    assert clear(d) == (codes.REFUSE_CAUSE_PRESENT, codes.FAULT_OVERHEAT)
    d.step(15_000)  # cooling with a 120 s time constant: not yet under 75.0 degC
    assert clear(d) == (codes.REFUSE_CAUSE_PRESENT, codes.FAULT_OVERHEAT)
    d.step(15_000)
    assert d.sensors().temperature_dc <= T.overheat_clear_dc
    assert_faulted_then_recovers(d, codes.FAULT_OVERHEAT)


def test_overheat_at_rest_and_a_technician_cools_it() -> None:
    d = MachineDriver()
    d.machine.inject("overheat@now")
    fault = fault_of(d.wait(50))
    assert fault == m.Fault(codes.FAULT_OVERHEAT, codes.SUB_POWER, codes.PHASE_NONE, 0)
    d.machine.repair()
    assert d.sensors().temperature_dc < T.overheat_clear_dc
    assert_faulted_then_recovers(d, codes.FAULT_OVERHEAT)


def test_the_cover_opened_in_a_build_closes_after_its_hold() -> None:
    d = MachineDriver(faults=["cover@build:at=20,hold=4"])
    fault = fault_of(building(d))
    assert fault == m.Fault(codes.FAULT_COVER_OPEN, codes.SUB_SAFETY, codes.PHASE_BUILD, 0)
    assert not d.sensors().flags & codes.FLAG_COVER_CLOSED
    assert clear(d) == (codes.REFUSE_CAUSE_PRESENT, codes.FAULT_COVER_OPEN)
    d.wait(4_000)
    assert d.sensors().flags & codes.FLAG_COVER_CLOSED
    assert_faulted_then_recovers(d, codes.FAULT_COVER_OPEN)


def test_the_cover_held_open_refuses_motion_at_rest_until_closed() -> None:
    d = MachineDriver()
    d.machine.inject("cover@now:hold=forever")
    d.wait(60_000)
    assert refusal(d.command(m.Shuffle(0))) == (codes.REFUSE_BAD_STATE, codes.BLOCK_COVER_OPEN)
    assert d.machine.state == "IDLE"  # no fault: nothing moved
    d.hal.close_cover()
    assert d.command(m.Shuffle(0))[-1] == m.Done(m.Shuffle.TYPE, 0)


def test_the_emergency_stop_in_a_lift_and_its_release() -> None:
    d = MachineDriver(faults=["estop@lift:at=50,hold=2"])
    d.ready(0)
    fault = fault_of(d.command(m.LiftWalls(0)))
    assert fault == m.Fault(codes.FAULT_ESTOP, codes.SUB_SAFETY, codes.PHASE_LIFT, 0)
    assert d.machine.state == "ESTOP" and d.sensors().flags & codes.FLAG_ESTOP
    assert clear(d) == (codes.REFUSE_ESTOP_HELD, codes.FAULT_ESTOP)
    assert refusal(d.command(m.Shuffle(1))) == (codes.REFUSE_ESTOP_HELD, codes.FAULT_ESTOP)
    d.wait(2_000)
    assert d.machine.state == "FAULT" and not d.sensors().flags & codes.FLAG_ESTOP
    assert clear(d) is None
    assert d.command(m.LiftWalls(0))[-1] == m.Done(m.LiftWalls.TYPE, 0)  # walls still on plates


@pytest.mark.parametrize(
    ("spec", "code"),
    [("reader@build:wall=1", codes.FAULT_READER_FAULT), ("count", codes.FAULT_TILE_COUNT)],
)
def test_the_tile_reader_silent_or_misreading(spec: str, code: int) -> None:
    d = MachineDriver(faults=[spec])
    fault = fault_of(building(d))
    assert fault == m.Fault(code, codes.SUB_READER, codes.PHASE_BUILD, 0)
    if code == codes.FAULT_TILE_COUNT:
        assert d.sensors().wall_tiles == (34, 34, 34, 34)  # every tile laid; one misnamed
    assert_faulted_then_recovers(d, code)


def test_a_board_without_reader_does_not_notice_the_reader_faults() -> None:
    d = MachineDriver(reader=False, faults=["reader@build", "count"])
    assert building(d)[-1] == m.Done(m.BuildWalls.TYPE, 0)


def test_a_bus_error_is_the_firmwares_own_internal_fault() -> None:
    d = MachineDriver()
    d.ready(0)
    d.machine.inject("internal@now")
    fault = fault_of(d.wait(50))
    assert fault == m.Fault(codes.FAULT_INTERNAL, codes.SUB_BOARD, codes.PHASE_NONE, 0xEE)
    assert d.machine.app.errors == 1 and d.machine.crashes == []  # caught: the loop goes on
    assert d.machine.places()["A"] == "built"
    assert_faulted_then_recovers(d, codes.FAULT_INTERNAL)


def test_a_power_cut_in_a_build() -> None:
    d = MachineDriver(faults=["reboot@build:at=40"])
    old = d.machine.app.session
    d.command(m.Shuffle(0))
    d.send(m.BuildWalls(0, LAYOUT))
    d.until(lambda: d.machine.boots == 2)
    assert d.machine.app.session != old
    assert d.machine.status().reset_cause == codes.RESET_POWER_ON
    assert d.machine.places() == {"A": "unknown", "B": "disc"}
    assert d.machine.state == "BOOT"


def test_line_faults_are_requests_for_the_server() -> None:
    d = MachineDriver(faults=["noise@shuffle:error=0.01", "cut:seconds=3"])
    assert d.machine.line_requests == [("cut", 3.0, 0.0)]
    d.command(m.Shuffle(0))
    assert d.machine.line_requests[-1] == ("noise", 0.01, 0.0)


def test_nth_and_times_count_the_runs_of_the_phase() -> None:
    d = MachineDriver(faults=["stall@shuffle:nth=2,times=2"])
    assert d.command(m.Shuffle(0))[-1] == m.Done(m.Shuffle.TYPE, 0)  # the first run is spared
    for _ in range(2):
        assert fault_of(d.command(m.Shuffle(0))).code == codes.FAULT_MOTOR_STALL
        assert clear(d) is None
    assert d.command(m.Shuffle(0))[-1] == m.Done(m.Shuffle.TYPE, 0)
    assert d.machine.saboteur.pending() == []


def test_a_fault_that_cannot_strike_waits_for_a_run_where_it_can() -> None:
    d = MachineDriver(faults=["lift@collect:plate=1"])
    # the first collect has nothing on the table: the plates are down and do not move
    assert d.command(m.Collect())[-1] == m.Done(m.Collect.TYPE, 0)
    d.ready(0)
    d.command(m.LiftWalls(0))
    fault = fault_of(d.command(m.Collect()))  # the plates come down: S sticks
    assert (fault.code, fault.detail) == (codes.FAULT_LIFT_LIMIT, 1)


def test_a_fault_while_faulted_keeps_the_first() -> None:
    d = MachineDriver(faults=["stall@shuffle"])
    assert fault_of(d.command(m.Shuffle(0))).code == codes.FAULT_MOTOR_STALL
    d.machine.inject("overheat@now")
    d.wait(100)
    assert not any(e.code == codes.FAULT_OVERHEAT for e in d.events if isinstance(e, m.Fault))
    assert d.sensors().fault == codes.FAULT_MOTOR_STALL


def test_an_open_ntc_at_rest_is_sensor_broken_and_no_shuffle_starts_until_repaired() -> None:
    d = MachineDriver()
    d.machine.inject("ntc")
    fault = fault_of(d.wait(50))
    assert fault == m.Fault(
        codes.FAULT_SENSOR_BROKEN, codes.SUB_POWER, codes.PHASE_NONE, codes.SENSOR_NTC
    )
    assert d.sensors().temperature_dc == -0x8000
    assert d.machine.saboteur.describe() == ["the heat-sink NTC open"]
    assert clear(d) == (codes.REFUSE_CAUSE_PRESENT, codes.FAULT_SENSOR_BROKEN)
    assert refusal(d.command(m.Shuffle(0))) == (codes.REFUSE_FAULTED, codes.FAULT_SENSOR_BROKEN)
    d.machine.repair()
    assert abs(d.sensors().temperature_dc - 240) < 20
    assert_faulted_then_recovers(d, codes.FAULT_SENSOR_BROKEN)


def test_a_current_sense_stuck_in_a_shuffle_stops_it_at_once() -> None:
    d = MachineDriver(faults=["amp@shuffle:motor=0,at=20"])
    fault = fault_of(d.command(m.Shuffle(0)))
    assert fault == m.Fault(codes.FAULT_SENSOR_BROKEN, codes.SUB_SHUFFLER, codes.PHASE_SHUFFLE, 0)
    assert d.sensors().currents_ma[0] == 0xFFFF
    assert clear(d) == (codes.REFUSE_CAUSE_PRESENT, codes.FAULT_SENSOR_BROKEN)
    d.machine.repair()
    assert_faulted_then_recovers(d, codes.FAULT_SENSOR_BROKEN)


def test_a_shorted_dice_driver_is_driver_short_until_it_is_replaced() -> None:
    d = MachineDriver()
    d.machine.inject("driver:motor=8")
    fault = fault_of(d.wait(1_000))
    assert fault == m.Fault(codes.FAULT_DRIVER_SHORT, codes.SUB_DICE, codes.PHASE_NONE, 8)
    assert d.sensors().currents_ma[8] > T.off_current_ma  # read, though commanded off
    assert clear(d) == (codes.REFUSE_CAUSE_PRESENT, codes.FAULT_DRIVER_SHORT)
    d.machine.repair()
    assert d.sensors().currents_ma[8] == 0
    assert clear(d) is None


def test_an_expander_that_stops_answering_in_a_shuffle_is_part_missing_until_reseated() -> None:
    d = MachineDriver(faults=["expander@shuffle:part=output,at=10"])
    fault = fault_of(d.command(m.Shuffle(0)))
    assert fault == m.Fault(codes.FAULT_PART_MISSING, codes.SUB_BOARD, codes.PHASE_SHUFFLE, 0x21)
    assert d.machine.saboteur.describe() == ["the output expander (I2C 0x21) not answering"]
    assert d.machine.places()["A"] == "disc"
    assert clear(d) == (codes.REFUSE_CAUSE_PRESENT, codes.FAULT_PART_MISSING)
    d.machine.repair()  # the technician reseats its cable
    assert d.machine.saboteur.describe() == []
    assert_faulted_then_recovers(d, codes.FAULT_PART_MISSING)
