"""Every fault the firmware supervises, found from what the hardware does (the virtual HAL is
broken at the hardware level: a blocked mechanism, a jammed feed, a dead sensor, heat, the
cover, the E-stop), never told. Each time the motors are off before the FAULT goes out."""

from __future__ import annotations

import pytest

from firmware.config import default_layout
from firmware.hal.mechanics import (
    DISC_TURN_MS,
    NOMINAL_MA,
    NTC_OPEN,
    NTC_SHORTED,
    STALL,
    STRAIN,
)
from firmware.harness import Harness
from firmware.places import BUILT, DISC, PARTIAL, UP
from firmware.status import board_status
from protocol import codes
from protocol import messages as m
from tests.firmware.rig import connected, fault_writes, faults, last, refusal, step_until_moving

LAYOUT = default_layout(136)


def watched() -> Harness:
    h = connected(seed=4)
    h.hal.log_writes = True
    return h


def wait_fault(h: Harness, limit_ms: int = 20_000) -> m.Fault:
    mark = len(h.events)
    h.until(lambda: bool(faults(h.events[mark:])), limit_ms)
    return faults(h.events[mark:])[0]


def assert_cut_before_report(h: Harness) -> None:
    writes = fault_writes(h)
    assert writes, "no FAULT frame was written"
    assert not any(driven for _fault, driven in writes), writes
    assert not h.hal.driven and not h.hal.enabled


def building(h: Harness, wall: int) -> None:
    """Shuffle set A, start its build and step into the stacking of ``wall``."""
    h.command(m.Shuffle(0))
    h.send(m.BuildWalls(0, LAYOUT))
    h.until(lambda: h.board.busy and h.board.building_wall == wall)
    step_until_moving(h, codes.MOTOR_STACKER_HEAD)
    h.wait(700)


def test_over_current_trips_a_stalled_motor() -> None:
    h = watched()
    h.send(m.Shuffle(0))
    step_until_moving(h, codes.MOTOR_SHUFFLE_DISC)
    h.wait(2000)
    t0 = h.now
    h.hal.block(codes.MOTOR_SHUFFLE_DISC, STALL)
    fault = wait_fault(h)
    assert fault == m.Fault(codes.FAULT_MOTOR_STALL, codes.SUB_SHUFFLER, codes.PHASE_SHUFFLE, 0)
    assert 200 <= h.now - t0 <= 400  # stall_trip_ms, not the index sensor's 1.5 s
    assert_cut_before_report(h)
    assert h.board.state == codes.STATE_FAULT and board_status(h.board).places[0] == DISC
    assert refusal(h.command(m.Shuffle(0))) == (codes.REFUSE_FAULTED, codes.FAULT_MOTOR_STALL)
    # at rest no current flows: the cause cannot be seen, the fault clears
    assert last(h.command(m.ClearFault())) == m.Done(m.ClearFault.TYPE, 0)
    assert h.board.state == codes.STATE_STOPPED


def test_a_motor_straining_under_its_current_limit_is_caught_by_its_sensor() -> None:
    h = watched()
    h.send(m.Shuffle(0))
    step_until_moving(h, codes.MOTOR_SHUFFLE_DISC)
    h.wait(1000)
    t0 = h.now
    h.hal.block(codes.MOTOR_SHUFFLE_DISC, STRAIN)
    h.wait(500)
    assert h.hal.current_ma(0) < h.config.timings.current_limit_ma[0]
    fault = wait_fault(h)
    assert (fault.code, fault.detail) == (codes.FAULT_MOTOR_STALL, codes.MOTOR_SHUFFLE_DISC)
    # the index was silent for disc_gap_ms since its last tick, at most a turn before the block
    gap = h.config.timings.disc_gap_ms
    assert gap - DISC_TURN_MS <= h.now - t0 <= gap + 2 * h.step_ms
    assert_cut_before_report(h)


def test_a_jammed_head_is_head_jam_and_stays_until_cleared_by_hand() -> None:
    h = watched()
    building(h, 1)
    t0 = h.now
    h.hal.block(codes.MOTOR_STACKER_HEAD, STRAIN)
    fault = wait_fault(h)
    assert fault == m.Fault(codes.FAULT_HEAD_JAM, codes.SUB_STACKER_HEAD, codes.PHASE_BUILD, 1)
    assert 500 <= h.now - t0 <= 700
    assert_cut_before_report(h)
    status = board_status(h.board)
    assert status.places[0] == PARTIAL and 34 < status.laid[0] < 68
    sensors = last(h.command(m.Sensors()))
    assert isinstance(sensors, m.SensorData) and sensors.flags & codes.FLAG_BELT_FULL
    assert refusal(h.command(m.ClearFault())) == (codes.REFUSE_CAUSE_PRESENT, codes.FAULT_HEAD_JAM)
    h.hal.repair()
    assert last(h.command(m.ClearFault())) == m.Done(m.ClearFault.TYPE, 0)


def test_no_tile_reaching_the_head_is_a_sort_timeout() -> None:
    h = watched()
    building(h, 2)
    h.hal.jam_feed()
    fault = wait_fault(h)
    assert fault == m.Fault(codes.FAULT_SORT_TIMEOUT, codes.SUB_SHUFFLER, codes.PHASE_BUILD, 2)
    assert_cut_before_report(h)
    assert board_status(h.board).laid[0] == len(h.hal.laid[0])


@pytest.mark.parametrize(("wall", "extra"), [(0, False), (3, True)])
def test_the_wall_channel_counts_a_tile_short_or_too_many(wall: int, extra: bool) -> None:
    h = watched()
    building(h, wall)
    if extra:
        h.hal.extra_tile()
    else:
        h.hal.drop_tile()
    fault = wait_fault(h)
    code = codes.FAULT_WALL_EXTRA if extra else codes.FAULT_WALL_SHORT
    assert fault == m.Fault(code, codes.SUB_STACKER_HEAD, codes.PHASE_BUILD, wall)
    assert_cut_before_report(h)
    sensors = last(h.command(m.Sensors()))
    assert isinstance(sensors, m.SensorData)
    assert sensors.wall_tiles[wall] == 34 + (1 if extra else -1)


def test_a_chain_that_never_comes_home_is_chain_home() -> None:
    h = watched()
    building(h, 1)
    step_until_moving(h, codes.MOTOR_CHAIN)  # pushing wall 1
    h.wait(100)
    t0 = h.now
    h.hal.block(codes.MOTOR_CHAIN, STRAIN)
    fault = wait_fault(h)
    assert fault == m.Fault(codes.FAULT_CHAIN_HOME, codes.SUB_CHAIN, codes.PHASE_BUILD, 0)
    assert 2800 <= h.now - t0 <= 3100
    assert_cut_before_report(h)
    assert refusal(h.command(m.ClearFault())) == (
        codes.REFUSE_CAUSE_PRESENT,
        codes.FAULT_CHAIN_HOME,
    )
    h.hal.repair()  # freed and brought home by hand
    assert last(h.command(m.ClearFault())) == m.Done(m.ClearFault.TYPE, 0)


def test_a_plate_that_never_reaches_its_limit_switch_is_lift_limit() -> None:
    h = watched()
    h.command(m.Shuffle(0))
    h.command(m.BuildWalls(0, LAYOUT))
    h.hal.block(codes.MOTOR_LIFT_S, STRAIN)
    h.send(m.LiftWalls(0))
    fault = wait_fault(h)
    assert fault == m.Fault(codes.FAULT_LIFT_LIMIT, codes.SUB_LIFTS, codes.PHASE_LIFT, 1)
    assert_cut_before_report(h)
    assert board_status(h.board).places[0] == BUILT  # still on its plates
    h.hal.repair()
    h.command(m.ClearFault())
    assert last(h.command(m.LiftWalls(0))) == m.Done(m.LiftWalls.TYPE, 0)


def test_a_stuck_centre_lift_during_collect_is_lift_limit_of_plate_4() -> None:
    h = watched()
    h.hal.block(codes.MOTOR_CENTRE_LIFT, STRAIN)
    h.send(m.Collect())
    fault = wait_fault(h)
    assert fault == m.Fault(codes.FAULT_LIFT_LIMIT, codes.SUB_LIFTS, codes.PHASE_COLLECT, 4)
    assert_cut_before_report(h)


def test_a_silent_reader_is_reader_fault() -> None:
    h = watched()
    building(h, 2)
    h.hal.kill_reader()
    fault = wait_fault(h)
    assert fault == m.Fault(codes.FAULT_READER_FAULT, codes.SUB_READER, codes.PHASE_BUILD, 0)
    assert_cut_before_report(h)
    assert refusal(h.command(m.ClearFault())) == (
        codes.REFUSE_CAUSE_PRESENT,
        codes.FAULT_READER_FAULT,
    )


def test_a_manifest_that_is_not_the_set_is_tile_count() -> None:
    h = watched()
    building(h, 3)
    h.hal.misread_tile()
    fault = wait_fault(h)
    assert fault == m.Fault(codes.FAULT_TILE_COUNT, codes.SUB_READER, codes.PHASE_BUILD, 0)
    assert_cut_before_report(h)


def test_dice_that_the_sensor_does_not_see_tumbling_are_dice_fault() -> None:
    h = watched()
    h.hal.kill_dice_sensor()
    events = h.command(m.RollDice(4, 2))
    assert faults(events) == [m.Fault(codes.FAULT_DICE_FAULT, codes.SUB_DICE, codes.PHASE_DICE, 0)]
    assert_cut_before_report(h)
    assert refusal(h.command(m.ClearFault())) == (
        codes.REFUSE_CAUSE_PRESENT,
        codes.FAULT_DICE_FAULT,
    )


def test_over_temperature_stops_everything_until_the_board_has_cooled() -> None:
    h = watched()
    h.send(m.Shuffle(0))
    step_until_moving(h, codes.MOTOR_SHUFFLE_DISC)
    h.hal.heat(100)  # 10 degrees a second
    fault = wait_fault(h)
    assert fault == m.Fault(codes.FAULT_OVERHEAT, codes.SUB_POWER, codes.PHASE_SHUFFLE, 0)
    assert h.hal.temperature_dc() >= 850
    assert_cut_before_report(h)
    h.hal.heat(0)
    assert refusal(h.command(m.ClearFault())) == (codes.REFUSE_CAUSE_PRESENT, codes.FAULT_OVERHEAT)
    h.until(lambda: h.hal.temperature_dc() <= 750, 120_000)
    assert last(h.command(m.ClearFault())) == m.Done(m.ClearFault.TYPE, 0)


def test_opening_the_cover_during_a_motion_is_cover_open_at_once() -> None:
    h = watched()
    building(h, 0)
    t0 = h.now
    h.hal.open_cover()
    fault = wait_fault(h)
    assert fault == m.Fault(codes.FAULT_COVER_OPEN, codes.SUB_SAFETY, codes.PHASE_BUILD, 0)
    assert h.now - t0 <= 3 * h.step_ms
    assert_cut_before_report(h)
    assert refusal(h.command(m.ClearFault())) == (
        codes.REFUSE_CAUSE_PRESENT,
        codes.FAULT_COVER_OPEN,
    )
    h.hal.close_cover()
    assert last(h.command(m.ClearFault())) == m.Done(m.ClearFault.TYPE, 0)


def test_the_estop_cuts_power_in_hardware_and_the_firmware_cuts_it_before_reporting() -> None:
    h = watched()
    h.command(m.Shuffle(0))
    h.command(m.BuildWalls(0, LAYOUT))
    h.send(m.LiftWalls(0))
    step_until_moving(h, codes.MOTOR_LIFT_E)
    h.wait(300)
    h.hal.press_estop()
    # the contact breaks the drivers' enable line: nothing turns, whatever the firmware does
    assert all(h.hal.current_ma(i) == 0 for i in range(codes.MOTOR_COUNT))
    fault = wait_fault(h)
    assert fault == m.Fault(codes.FAULT_ESTOP, codes.SUB_SAFETY, codes.PHASE_LIFT, 0)
    assert_cut_before_report(h)
    assert h.hal.speed == [0] * codes.MOTOR_COUNT  # and the firmware dropped every motor too
    assert h.board.state == codes.STATE_ESTOP
    assert refusal(h.command(m.ClearFault())) == (codes.REFUSE_ESTOP_HELD, codes.FAULT_ESTOP)
    assert refusal(h.command(m.Collect())) == (codes.REFUSE_ESTOP_HELD, codes.FAULT_ESTOP)
    h.hal.release_estop()
    h.wait(50)
    assert h.board.state == codes.STATE_FAULT
    assert last(h.command(m.ClearFault())) == m.Done(m.ClearFault.TYPE, 0)
    assert board_status(h.board).places[0] == BUILT
    assert last(h.command(m.LiftWalls(0))) == m.Done(m.LiftWalls.TYPE, 0)
    assert board_status(h.board).places[0] == UP


def test_the_estop_at_rest_is_reported_too_and_a_second_fault_is_not() -> None:
    h = watched()
    h.hal.press_estop()
    fault = wait_fault(h)
    assert fault == m.Fault(codes.FAULT_ESTOP, codes.SUB_SAFETY, codes.PHASE_NONE, 0)
    h.hal.heat(200)
    h.wait(10_000)
    assert h.hal.temperature_dc() > 850
    assert len(faults(h.events)) == 1 and h.board.fault_code == codes.FAULT_ESTOP


def test_a_motor_test_on_a_blocked_motor_reports_it_without_a_fault() -> None:
    h = watched()
    h.hal.block(codes.MOTOR_CHAIN, STALL)
    events = h.command(m.MotorTest(codes.MOTOR_CHAIN, 3000))
    result = last(events)
    assert isinstance(result, m.MotorResult) and result.ok == 0
    assert result.current_ma > NOMINAL_MA[codes.MOTOR_CHAIN] * 2
    assert not faults(events) and h.board.state == codes.STATE_IDLE
    assert not h.hal.powered


def test_an_error_in_the_firmware_is_fault_internal_and_the_loop_goes_on() -> None:
    h = watched()

    def broken(index: int) -> int:
        raise RuntimeError("dice unit answered nonsense")

    h.hal.dice_value = broken  # type: ignore[method-assign]
    events = h.command(m.RollDice(1, 2))
    internal = m.Fault(codes.FAULT_INTERNAL, codes.SUB_BOARD, codes.PHASE_DICE, 0xEE)
    assert faults(events) == [internal]
    assert_cut_before_report(h)
    assert h.app.errors == 1
    assert last(h.command(m.Ping(77))) == m.Pong(77)
    assert last(h.command(m.ClearFault())) == m.Done(m.ClearFault.TYPE, 0)


@pytest.mark.parametrize(("wire", "reads"), [(NTC_OPEN, "open"), (NTC_SHORTED, "shorted")])
def test_an_ntc_out_of_its_range_at_rest_is_sensor_broken_and_no_motion_starts(
    wire: int, reads: str
) -> None:
    h = watched()
    h.hal.break_ntc(wire)
    fault = wait_fault(h, 100)
    assert fault == m.Fault(
        codes.FAULT_SENSOR_BROKEN, codes.SUB_POWER, codes.PHASE_NONE, codes.SENSOR_NTC
    ), reads
    begun = h.board.record.motions_begun
    assert refusal(h.command(m.Shuffle(0))) == (codes.REFUSE_FAULTED, codes.FAULT_SENSOR_BROKEN)
    sensors = last(h.command(m.Sensors()))
    assert isinstance(sensors, m.SensorData) and sensors.temperature_dc == -0x8000
    assert refusal(h.command(m.ClearFault())) == (
        codes.REFUSE_CAUSE_PRESENT,
        codes.FAULT_SENSOR_BROKEN,
    )
    h.hal.repair()  # the NTC wired again
    assert last(h.command(m.ClearFault())) == m.Done(m.ClearFault.TYPE, 0)
    assert last(h.command(m.Shuffle(0))) == m.Done(m.Shuffle.TYPE, 0)
    assert h.board.record.motions_begun == begun + 1


def test_a_sensor_broken_just_before_a_motion_is_found_before_the_motion_begins() -> None:
    h = watched()
    h.config.timings.sense_every_ms = 60_000  # the round at rest does not come round to it
    begun = h.board.record.motions_begun
    h.hal.stick_amp(codes.MOTOR_CHAIN)  # at the rail: over any current a motor can draw
    mark = h.send(m.Shuffle(0))
    h.until(lambda: refusal(h.events[mark:]) is not None, 1000)
    events = h.events[mark:]
    assert faults(events) == [
        m.Fault(codes.FAULT_SENSOR_BROKEN, codes.SUB_CHAIN, codes.PHASE_NONE, codes.MOTOR_CHAIN)
    ]
    assert refusal(events) == (codes.REFUSE_FAULTED, codes.FAULT_SENSOR_BROKEN)
    assert h.board.record.motions_begun == begun  # nothing began, nothing was written
    assert not any(driven for _data, driven in h.hal.tx_log)
    sensors = last(h.command(m.Sensors()))
    assert isinstance(sensors, m.SensorData)
    assert sensors.currents_ma[codes.MOTOR_CHAIN] == 0xFFFF


def test_a_current_sense_stuck_at_its_rail_stops_the_motion_at_once() -> None:
    h = watched()
    h.send(m.Shuffle(0))
    step_until_moving(h, codes.MOTOR_SHUFFLE_DISC)
    h.wait(500)
    h.hal.stick_amp(codes.MOTOR_SHUFFLE_DISC)
    t0 = h.now
    fault = wait_fault(h)
    assert fault == m.Fault(
        codes.FAULT_SENSOR_BROKEN, codes.SUB_SHUFFLER, codes.PHASE_SHUFFLE, codes.MOTOR_SHUFFLE_DISC
    )
    assert h.now - t0 <= 2 * h.step_ms  # the next pass, not a stall's 200 ms
    assert_cut_before_report(h)


def test_a_shorted_driver_at_rest_is_driver_short_naming_the_motor() -> None:
    h = watched()
    h.wait(200)
    h.hal.short_driver(codes.MOTOR_DICE)
    t0 = h.now
    fault = wait_fault(h, 1000)
    assert fault == m.Fault(
        codes.FAULT_DRIVER_SHORT, codes.SUB_DICE, codes.PHASE_NONE, codes.MOTOR_DICE
    )
    # over off_current_ma for short_trip_ms, each motor read every 100 ms
    assert 200 <= h.now - t0 <= 400
    # the firmware cut what it drives; the shorted driver runs on, E-stop or not
    assert not h.hal.driven and h.hal.running(codes.MOTOR_DICE)
    h.hal.press_estop()
    assert h.hal.current_ma(codes.MOTOR_DICE) > h.config.timings.off_current_ma
    h.hal.release_estop()
    h.wait(50)
    assert refusal(h.command(m.ClearFault())) == (
        codes.REFUSE_CAUSE_PRESENT,
        codes.FAULT_DRIVER_SHORT,
    )
    h.hal.repair()  # the driver replaced
    assert last(h.command(m.ClearFault())) == m.Done(m.ClearFault.TYPE, 0)


def test_a_driver_shorting_during_a_motion_is_found_on_the_motor_commanded_off() -> None:
    h = watched()
    h.send(m.Shuffle(0))
    step_until_moving(h, codes.MOTOR_SHUFFLE_DISC)
    h.hal.short_driver(codes.MOTOR_CHAIN)
    fault = wait_fault(h, 1000)
    assert fault == m.Fault(
        codes.FAULT_DRIVER_SHORT, codes.SUB_CHAIN, codes.PHASE_SHUFFLE, codes.MOTOR_CHAIN
    )
    assert_cut_before_report(h)
    assert board_status(h.board).places[0] == DISC


def test_the_estop_stops_the_dice_motor_in_hardware_before_the_firmware_reacts() -> None:
    h = watched()
    h.send(m.RollDice(3, 2))
    step_until_moving(h, codes.MOTOR_DICE)
    h.wait(300)
    assert h.hal.current_ma(codes.MOTOR_DICE) > 0
    h.hal.press_estop()  # the enable line, through the contact, gates the dice MOSFET too
    assert h.hal.speed[codes.MOTOR_DICE] > 0  # the firmware has not seen it yet
    assert not h.hal.running(codes.MOTOR_DICE) and h.hal.current_ma(codes.MOTOR_DICE) == 0
    fault = wait_fault(h)
    assert fault == m.Fault(codes.FAULT_ESTOP, codes.SUB_SAFETY, codes.PHASE_DICE, 0)
    assert_cut_before_report(h)


def test_clear_fault_read_with_the_estops_release_is_taken() -> None:
    """The E-stop released and CLEAR_FAULT read in the same pass of the loop (the command is
    handled before that pass's supervision): the board asks the E-stop itself, not the state
    the last pass left, and clears."""
    h = watched()
    h.hal.press_estop()
    wait_fault(h)
    assert h.board.state == codes.STATE_ESTOP
    mark = h.send(m.ClearFault())
    h.step()  # the host's engine writes the command: the board reads it at its next pass
    h.hal.release_estop()  # released as it arrives
    h.wait(100)
    answer = [e for e in h.events[mark:] if isinstance(e, m.Done | m.Refused)]
    assert answer == [m.Done(m.ClearFault.TYPE, codes.RESULT_OK)]
    assert h.board.state == codes.STATE_STOPPED and h.board.fault_code == 0  # as any clear


def test_clear_fault_with_the_estop_still_pressed_is_refused() -> None:
    h = watched()
    h.hal.press_estop()
    wait_fault(h)
    events = h.command(m.ClearFault())
    assert last(events) == m.Refused(m.ClearFault.TYPE, codes.REFUSE_ESTOP_HELD, codes.FAULT_ESTOP)
    assert h.board.state == codes.STATE_ESTOP
