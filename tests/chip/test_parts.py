"""The chip's parts on the host, without the emulator: the expander's registers, the flash file
system made from a build, and the wiring of the Pico's pins to the simulated table, checked
against the reference board's own arithmetic (firmware/hal/rp2pins.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from firmware.hal import (
    LED_BUSY,
    NO_READING,
    SENSE_COVER_CLOSED,
    SENSE_ESTOP,
    SENSOR_COUNT,
    rp2pins,
)
from firmware.hal.mechanics import NOMINAL_MA, NTC_OPEN, NTC_SHORTED
from protocol import codes
from simulator.chip.config import ChipConfig
from simulator.chip.exchange import FLASH_ERASE, PWM_SLICES, Inputs, Outputs
from simulator.chip.expander import GPIOA, GPPUA, IODIRA, IPOLA, OLATA, Mcp23017
from simulator.chip.flash import FS_SIZE, build_files, file_system, flash_build_hash, read_files
from simulator.chip.wiring import ADC_MAX, ChipTable, board
from simulator.hardware import SimHal
from simulator.transport import SimulatorError

#: the PWM slices' TOP MicroPython sets at 125 MHz for 20 kHz (div 1) and 1 kHz (div 31/16)
TOPS = (6249, 64515)


def outputs(levels: int = 0, pwm: dict[int, int] | None = None, top: int = TOPS[0]) -> Outputs:
    """What the chip drives: GPIO levels (all driven) and PWM levels by GPIO."""
    slices = [(False, top, 0, 0)] * PWM_SLICES
    for gpio, level in (pwm or {}).items():
        _, t, a, b = slices[(gpio >> 1) & 7]
        slices[(gpio >> 1) & 7] = (True, t, a, level) if gpio & 1 else (True, t, level, b)
    return Outputs(0.0, 1, 0, levels, 0x3FFFFFFF, slices, [], b"", b"")


# --- the expander ------------------------------------------------------------------------------


def test_the_expander_writes_in_sequence_and_reads_pins_and_latch() -> None:
    x = Mcp23017()
    assert x.outputs == 0 and x.read_gpio() == 0xFFFF  # every pin an input at power-on
    x.write(bytes([GPPUA, 0xFF, 0xFF]))  # one transaction, the pointer moves on
    assert x.pull_ups == 0xFFFF
    x.write(bytes([IODIRA, 0x0F, 0x00]))  # A0..A3 inputs, the rest outputs
    x.write(bytes([GPIOA, 0xF5, 0x81]))  # a write to GPIO goes to the latch
    assert x.reg[OLATA : OLATA + 2] == b"\xf5\x81"
    assert x.outputs == 0x81F0
    x.pins = 0x0003
    x.write(bytes([IPOLA, 0x01]))
    assert x.read_gpio() == 0x81F0 | 0x0002  # A0 inverted to 0, A1 as it is, outputs latched
    x.write(bytes([0x15, 0xAA, 0x33]))  # OLATB, then the pointer wraps to IODIRA
    assert x.reg[IODIRA] == 0x33


# --- the flash ---------------------------------------------------------------------------------


def test_the_flash_holds_the_build_as_the_flasher_would(
    firmware_build: Path, tmp_path: Path
) -> None:
    files = build_files(firmware_build)
    image = file_system(files)
    assert len(image) == FS_SIZE
    assert read_files(image) == files
    assert "/main.py" in files and "/manifest.json" in files and "/firmware/app.mpy" in files
    (tmp_path / "flash.lfs").write_bytes(image)
    manifest = json.loads(files["/manifest.json"])
    assert flash_build_hash(tmp_path / "flash.lfs") == manifest["build_hash"]


# --- the wiring --------------------------------------------------------------------------------


def test_every_sensor_reaches_a_pin_of_the_chip() -> None:
    roles = {
        unit for _, _, role, unit in board()["PINS"].values() if role in ("in", "in_low", "edge")
    }
    assert roles == set(range(SENSOR_COUNT))


def test_switches_reach_their_pins_as_the_board_wires_them() -> None:
    hal = SimHal(136, 1)
    table = ChipTable(hal)
    pins = board()["PINS"]
    estop = pins["ESTOP"][1]
    where, cover, _, _ = pins["COVER"]
    assert where == board()["XIN"]  # GP3 is UART0's RTS to the host
    first = table.inputs(1, b"")
    assert not first.levels >> estop & 1  # released: the contact holds the pin low
    xin = int.from_bytes(first.devices[where], "little")
    assert not xin >> cover & 1  # closed: the contact pulls the expander's input low
    hal.press_estop()
    hal.open_cover()
    second = table.inputs(1, b"")
    down = int.from_bytes(second.devices[board()["XIN"]], "little")
    assert second.levels >> estop & 1 and down >> cover & 1
    assert hal.level_raw(SENSE_ESTOP) == 1 and hal.level_raw(SENSE_COVER_CLOSED) == 0
    # the plates are down: their down switches pull the input expander's bits low
    for i in range(4):
        assert not down >> pins["DOWN_" + "ESWN"[i]][1] & 1
        assert down >> pins["UP_" + "ESWN"[i]][1] & 1


def test_a_turning_motor_gives_its_edges_and_its_current() -> None:
    hal = SimHal(136, 1)
    table = ChipTable(hal)
    pins = board()["PINS"]
    disc = pins["PWM_DISC"][1]
    table.apply(outputs(1 << pins["MOTOR_EN"][1], {disc: 6250}))  # full speed
    assert hal.speed[0] == 1000 and hal.enabled
    edges = 0
    current = 0
    for _ in range(1300):
        hal.advance(1)
        given = table.inputs(1, b"")
        edges += given.pulses.get(pins["DISC_INDEX"][1], 0)
        current = given.adc[(pins["CURRENT"][3], 0)]
    assert edges == 2  # an index edge every 600 ms of turning
    counts = current << 4 | current >> 8  # MicroPython's read_u16
    assert abs(rp2pins.ma_from_counts(counts) - hal.load_ma(0)) <= 2


def test_pwm_duties_read_back_as_the_speeds_the_firmware_set() -> None:
    table = ChipTable(SimHal(136, 1))
    for top in TOPS:
        for speed in range(1001):
            cc = (rp2pins.duty_u16(speed) * (top + 1) + 65535 // 2) // 65535  # machine_pwm.c
            assert table._speed(outputs(pwm={6: cc}, top=top), 6) == speed


def test_the_ntc_reads_back_the_table_temperature() -> None:
    table = ChipTable(SimHal(136, 1))
    ntc = rp2pins.ntc_table()
    for dc in range(-100, 1100, 7):  # -10 to 110 degC: the board's limits are inside
        raw = table._ntc(dc)
        assert 0 < raw < ADC_MAX
        assert abs(rp2pins.interpolate(ntc, raw << 4 | raw >> 8) - dc) <= 10  # within 1 degC


def u16(raw: int) -> int:
    """MicroPython's read_u16 of a 12-bit reading."""
    return raw << 4 | raw >> 8


def test_broken_sensors_reach_the_adc_as_the_board_reads_them() -> None:
    hal = SimHal(136, 1)
    table = ChipTable(hal)
    pins = board()["PINS"]
    current, ntc = pins["CURRENT"][3], pins["HEATSINK_NTC"][3]
    table_ntc = rp2pins.ntc_table()
    given = table.inputs(1, b"")
    # the multiplexer's reference channel reads over any motor's current: it switched
    assert u16(given.adc[(current, rp2pins.MUX_REFERENCE)]) > rp2pins.CURRENT_MAX_COUNTS
    assert abs(rp2pins.interpolate(table_ntc, u16(given.adc[(ntc, None)])) - 240) <= 10
    for wire in (NTC_OPEN, NTC_SHORTED):
        hal.break_ntc(wire)
        raw = table.inputs(1, b"").adc[(ntc, None)]
        assert rp2pins.interpolate(table_ntc, u16(raw)) == NO_READING, wire
    hal.stick_amp(codes.MOTOR_LIFT_E)
    hal.short_driver(codes.MOTOR_CHAIN)  # the chip drives nothing: the enable line is down
    hal.advance(10)
    given = table.inputs(1, b"")
    assert rp2pins.current_reading(u16(given.adc[(current, codes.MOTOR_LIFT_E)])) == NO_READING
    chain = rp2pins.current_reading(u16(given.adc[(current, codes.MOTOR_CHAIN)]))
    assert abs(chain - NOMINAL_MA[codes.MOTOR_CHAIN]) <= NOMINAL_MA[codes.MOTOR_CHAIN] // 20
    assert rp2pins.current_reading(u16(given.adc[(current, codes.MOTOR_DICE)])) == 0


def test_the_estop_and_the_enable_line_stop_the_dice_motor_the_chip_drives() -> None:
    hal = SimHal(136, 1)
    table = ChipTable(hal)
    pins = board()["PINS"]
    enable, dice = 1 << pins["MOTOR_EN"][1], pins["PWM_DICE"][1]
    table.apply(outputs(enable, {dice: TOPS[1] + 1}, top=TOPS[1]))  # full speed at 1 kHz
    hal.advance(10)
    assert hal.running(codes.MOTOR_DICE) and hal.current_ma(codes.MOTOR_DICE) > 0
    hal.press_estop()  # the chip still drives PWM_DICE and MOTOR_EN: the contact cuts them
    assert hal.speed[codes.MOTOR_DICE] == 1000 and not hal.running(codes.MOTOR_DICE)
    assert table.inputs(1, b"").adc[(pins["CURRENT"][3], codes.MOTOR_DICE)] == 0
    hal.release_estop()
    assert hal.running(codes.MOTOR_DICE)
    table.apply(outputs(0, {dice: TOPS[1] + 1}, top=TOPS[1]))  # MOTOR_EN dropped, PWM left on
    assert not hal.running(codes.MOTOR_DICE)


def test_directions_gate_and_leds_come_from_the_output_expander() -> None:
    hal = SimHal(136, 1)
    table = ChipTable(hal)
    pins = board()["PINS"]
    xout = board()["XOUT"]
    latch = 1 << pins["DIR_LIFT_S"][1] | 1 << pins["SET_GATE"][1] | 1 << pins["LED_BUSY"][1]
    out = outputs(1 << pins["MOTOR_EN"][1], {pins["PWM_LIFT_S"][1]: 3125})
    out.i2c = [(xout, bytes([IODIRA, 0, 0])), (xout, bytes([OLATA, latch & 0xFF, latch >> 8]))]
    table.apply(out)
    assert hal.direction[4] == -1 and hal.speed[4] == 500
    assert hal.selected == 1 and hal.leds[LED_BUSY]


def test_the_inputs_encode_as_the_runner_reads_them() -> None:
    data = Inputs(
        1000, 0b101, pulses={16: 2}, adc={(0, 3): 4095, (1, None): 7}, uart0=b"ab"
    ).encode()
    assert data[:5] == (len(data) - 4).to_bytes(4, "little") + b"I"
    assert data[5:14] == (1000).to_bytes(4, "little") + (5).to_bytes(4, "little") + b"\x00"
    # no flash cut aimed, the host sends without waiting on CTS
    assert data[-10:] == b"\x02\x00ab\x00\x00" + b"\x00\x00\x00" + b"\x00"
    aimed = Inputs(1000, 0, flash_cut=(FLASH_ERASE, 2, 100), host_cts=True).encode()
    assert aimed[-4:] == bytes((FLASH_ERASE, 2, 100, 1))


def test_the_chip_runs_a_build_or_an_image_not_both(tmp_path: Path) -> None:
    for config in ({}, {"build": tmp_path, "image": tmp_path / "fw.uf2"}):
        with pytest.raises(SimulatorError, match="give one of the two"):
            ChipConfig(**config)  # type: ignore[arg-type]
