"""The board's faults and sensors in the controller's words (controller/cycle/faults.py,
diagnosis.py, and mjtable diag's lines): each fault names what it is about (the motor, the
sensor) and says what a person does at that moment; a broken sensor reads as no reading."""

from __future__ import annotations

import pytest

from cli.diag_report import sensor_lines
from controller.cycle.diagnosis import sensors
from controller.cycle.faults import board_fault_words
from protocol import codes
from protocol import messages as m


@pytest.mark.parametrize("code", sorted(codes.FAULTS))
def test_every_board_fault_has_words_and_ends_at_the_table_s_key(code: int) -> None:
    name, text, advice = board_fault_words(code, codes.SUB_BOARD, codes.PHASE_NONE, 0)
    assert name == codes.fault_name(code) and text
    assert advice.endswith("press CLEAR FAULT") or "CLEAR FAULT" in advice


def test_a_broken_sensor_is_named_with_what_to_check() -> None:
    ntc = board_fault_words(
        codes.FAULT_SENSOR_BROKEN, codes.SUB_POWER, codes.PHASE_NONE, codes.SENSOR_NTC
    )
    assert "(the heat-sink temperature sensor (NTC), thermal/power)" in ntc[1]
    assert ntc[2].startswith("check the NTC's two wires")
    assert ntc[2].endswith("no motion starts until it reads in range, then press CLEAR FAULT")
    chain = board_fault_words(
        codes.FAULT_SENSOR_BROKEN, codes.SUB_CHAIN, codes.PHASE_SHUFFLE, codes.MOTOR_CHAIN
    )
    assert "the current sense of the chain conveyor" in chain[1] and "while shuffling" in chain[1]
    assert "chain conveyor's shunt" in chain[2]


def test_a_shorted_driver_names_its_motor_and_sends_the_person_to_the_mains() -> None:
    name, text, advice = board_fault_words(
        codes.FAULT_DRIVER_SHORT, codes.SUB_DICE, codes.PHASE_NONE, codes.MOTOR_DICE
    )
    assert name == "DRIVER_SHORT" and "(the dice motor, dice)" in text
    assert advice.startswith("switch the table off at its mains switch now")


def test_a_broken_sensor_reads_as_no_reading_not_as_a_value() -> None:
    currents = [0] * codes.MOTOR_COUNT
    currents[codes.MOTOR_CHAIN] = codes.NO_CURRENT
    currents[codes.MOTOR_DICE] = 380
    data = m.SensorData(
        codes.STATE_FAULT, codes.FAULT_SENSOR_BROKEN, 0, (0,) * 4, 0, 31, currents, -0x8000
    )
    report = sensors(data)
    assert report.temperature_c is None
    assert report.currents["chain conveyor"] is None and report.currents["dice motor"] == 380
    lines = "\n".join(sensor_lines(report.model_dump()))
    assert "no reading: the heat-sink NTC is open or shorted" in lines
    assert "chain conveyor: no reading (its current sense is broken)" in lines
    assert "dice motor 380 mA" in lines and "-3276.8" not in lines
