"""The reference board under CPython: its pin map (firmware/hal/rp2pins.py) checked against
what the RP2040 and the Pico allow, its arithmetic (PWM duty, mA from ADC counts, the NTC), and
its HAL (firmware/hal/rp2.py) built on a stand-in ``machine`` module
(tests/firmware/fake_machine.py)."""

from __future__ import annotations

import itertools
import math
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from firmware.config import Timings
from firmware.hal import (
    LED_FAULT,
    NO_READING,
    RESET_POWER_ON,
    RESET_UNKNOWN,
    RESET_WATCHDOG,
    REVERSE,
    SENSE_COVER_CLOSED,
    SENSE_DOWN,
    SENSE_ESTOP,
    SENSE_TILE,
    SENSE_UP,
    SENSOR_COUNT,
    TILE_NONE,
    rp2pins,
)
from firmware.hal.mechanics import NOMINAL_MA, STALL
from protocol import codes
from tests.firmware import fake_machine
from tests.firmware.pico import forget_pico, import_pico

CLOCK = [0]


@pytest.fixture(scope="module")
def rp2() -> Iterator[ModuleType]:
    """firmware.hal.rp2 imported over the stand-in machine module and a ticking clock."""
    with pytest.MonkeyPatch.context() as mp:
        yield import_pico(mp, lambda: CLOCK[0])
        forget_pico()


@pytest.fixture
def board(rp2: ModuleType, tmp_path: Path) -> object:
    fake_machine.reset_state()
    CLOCK[0] = 1000
    hal = rp2.Rp2Hal(store_dir=str(tmp_path))
    assert hal.start_parts() == 0  # as the firmware does at boot
    return hal


def test_the_pin_map_is_one_the_pico_allows() -> None:
    assert rp2pins.check_pins() == []
    roles: dict[str, list[int]] = {}
    for _where, _pin, role, unit in rp2pins.PINS.values():
        roles.setdefault(role, []).append(unit)
    assert sorted(roles[rp2pins.PWM]) == list(range(codes.MOTOR_COUNT))  # every motor, once
    sensors = sorted(roles[rp2pins.EDGE] + roles[rp2pins.IN] + roles[rp2pins.IN_LOW])
    assert sensors == list(range(SENSOR_COUNT))  # every sensor the firmware reads, once
    assert sorted(roles[rp2pins.DIR]) == [3, 4, 5, 6, 7]  # the lifts reverse
    assert sorted(roles[rp2pins.MUX]) == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("name", "moved_to", "complaint"),
    [
        ("TILE", (0, 16, "edge", SENSE_TILE), None),  # itself: fine
        ("WALL", (0, 16, "edge", 1), "share GP16"),
        ("HEATSINK_NTC", (0, 22, "adc", 1), "is not ADC1"),
        ("PWM_DICE", (0, 13, "pwm", 8), "shares PWM slice 6"),
        ("HOST_TX", (0, 2, "uart", 0), "is not a pin of UART0"),
        ("I2C_SDA", (0, 22, "i2c", 0), "is not a pin of I2C0"),
        ("LED_BUSY", (0x21, 16, "led", 2), "bits 0..15"),
    ],
)
def test_the_pin_checks_catch_a_wrong_map(
    name: str, moved_to: tuple[int, int, str, int], complaint: str | None
) -> None:
    pins = dict(rp2pins.PINS)
    pins[name] = moved_to
    problems = rp2pins.check_pins(pins)
    if complaint is None:
        assert problems == []
    else:
        assert any(complaint in p for p in problems), problems


def test_pwm_duty_and_current_arithmetic() -> None:
    assert [rp2pins.duty_u16(s) for s in (-5, 0, 1, 500, 1000, 1200)] == [
        0,
        0,
        65,
        32767,
        65535,
        65535,
    ]
    assert rp2pins.MA_FULL_SCALE == 3300  # 3.3 V / (0.050 ohm x 20) = 3.3 A
    assert rp2pins.ma_from_counts(0) == 0 and rp2pins.ma_from_counts(65535) == 3300
    assert rp2pins.ma_from_counts(round(65535 * 1150 / 3300)) in (1149, 1150)
    # every limit and every stalled motor's current is inside the physical range, which is
    # inside the measuring range: a reading over it is no motor's
    largest_stall = max(NOMINAL_MA) * STALL // 100 * 103 // 100  # with the model's ripple
    assert max(Timings().current_limit_ma) < largest_stall < rp2pins.CURRENT_MAX_MA
    assert rp2pins.CURRENT_MAX_MA < rp2pins.MA_FULL_SCALE
    assert rp2pins.CURRENT_MAX_MA - 1 <= rp2pins.current_reading(rp2pins.CURRENT_MAX_COUNTS) <= 3150
    assert rp2pins.current_reading(rp2pins.CURRENT_MAX_COUNTS + 1) == NO_READING
    assert rp2pins.current_reading(65535) == NO_READING  # an amplifier at its rail
    assert rp2pins.current_reading(0) == 0
    # and the arithmetic stays in MicroPython's small integers: nothing allocated
    assert 65535 * rp2pins.MA_FULL_SCALE < 2**30 and 1000 * 65535 < 2**30


def test_the_ntc_table_follows_the_beta_equation() -> None:
    table = rp2pins.ntc_table()
    assert len(table) == 65 and all(a > b for a, b in itertools.pairwise(table[1:-1]))
    assert abs(rp2pins.ntc_dc(32768) - 250) <= 1  # R = R0 at 25 degC
    for celsius in range(0, 101, 5):
        kelvin = celsius + 273.15
        ohm = rp2pins.NTC_OHM * math.exp(rp2pins.NTC_BETA * (1 / kelvin - 1 / 298.15))
        counts = round(65535 * ohm / (ohm + rp2pins.PULL_UP_OHM))
        assert abs(rp2pins.interpolate(table, counts) - celsius * 10) <= 5, celsius
    # the physical range, -20..150 degC, in counts by the same equation
    for dc, counts in (
        (rp2pins.NTC_MIN_DC, rp2pins.NTC_COLD_COUNTS),
        (rp2pins.NTC_MAX_DC, rp2pins.NTC_HOT_COUNTS),
    ):
        kelvin = dc / 10 + 273.15
        ohm = rp2pins.NTC_OHM * math.exp(rp2pins.NTC_BETA * (1 / kelvin - 1 / 298.15))
        assert abs(65535 * ohm / (ohm + rp2pins.PULL_UP_OHM) - counts) < 1
        # inside: a temperature (within the table's steps of 1024 counts at the hot end)
        assert abs(rp2pins.interpolate(table, counts) - dc) <= 30
    assert rp2pins.NTC_MIN_DC < 0 and Timings().overheat_dc < rp2pins.NTC_MAX_DC
    # outside it the NTC is open or shorted: no reading, never a cool board (an open NTC on
    # the 12-bit ADC reads 4094: 65519 counts, which the equation would take for -110 degC)
    open_ntc = 4094 << 4 | 4094 >> 8
    for counts in (0, 1, rp2pins.NTC_HOT_COUNTS - 1, rp2pins.NTC_COLD_COUNTS + 1, open_ntc, 65535):
        assert rp2pins.interpolate(table, counts) == NO_READING, counts


def test_motors_drive_pwm_and_direction_and_off_drops_the_enable_line(
    rp2: ModuleType, board: object
) -> None:
    assert isinstance(board, rp2.Rp2Hal)
    gpio = {u: p for _w, p, r, u in rp2pins.PINS.values() if r == rp2pins.PWM}
    assert {fake_machine.pwms[gpio[m]].hz for m in range(8)} == {20000}
    assert fake_machine.pwms[gpio[codes.MOTOR_DICE]].hz == 1000
    board.motors_enable()
    assert fake_machine.pins[15].level == 1
    board.motor(codes.MOTOR_LIFT_E, REVERSE, 500)
    assert fake_machine.pwms[gpio[codes.MOTOR_LIFT_E]].duty == 32767
    assert fake_machine.registers[0x21][0x14] & 1  # DIR_LIFT_E set: down
    fake_machine.adc_counts[26] = round(65535 * 1200 / 3300)
    assert 1195 <= board.current_ma(codes.MOTOR_LIFT_E) <= 1200
    assert fake_machine.registers[0x21][0x15] & 0x0F == 3  # the multiplexer on channel 3
    board.motors_off()
    assert fake_machine.pins[15].level == 0
    assert all(p.duty == 0 for p in fake_machine.pwms.values())


def test_every_current_is_read_its_range_kept_and_the_multiplexer_checked(
    rp2: ModuleType, board: object
) -> None:
    assert isinstance(board, rp2.Rp2Hal)
    channels = {c: 0 for c in range(16)}
    channels[rp2pins.MUX_REFERENCE] = 65535  # tied to 3.3 V
    stuck = [-1]  # the channel a broken multiplexer stays on (-1: it switches)

    def mux() -> int:
        selected = fake_machine.registers[0x21][0x15] & 0x0F
        return channels[stuck[0] if stuck[0] >= 0 else selected]

    fake_machine.adc_sources[26] = mux
    channels[codes.MOTOR_CHAIN] = round(65535 * 400 / 3300)
    # a motor the firmware does not run is read all the same: a shorted driver shows
    assert 395 <= board.current_ma(codes.MOTOR_CHAIN) <= 400
    assert board.current_ma(codes.MOTOR_DICE) == 0
    assert board.current_sense_ok()
    channels[codes.MOTOR_LIFT_N] = 65535  # its amplifier stuck at the rail
    assert board.current_ma(codes.MOTOR_LIFT_N) == NO_READING
    assert 395 <= board.current_ma(codes.MOTOR_CHAIN) <= 400  # the others still read
    stuck[0] = codes.MOTOR_SHUFFLE_DISC  # the select lines do not reach the multiplexer
    assert not board.current_sense_ok()
    stuck[0] = -1
    channels[rp2pins.MUX_REFERENCE] = 0  # the multiplexer without supply: the pull-down
    assert not board.current_sense_ok()


def test_an_ntc_outside_its_range_reads_no_temperature(rp2: ModuleType, board: object) -> None:
    assert isinstance(board, rp2.Rp2Hal)
    fake_machine.adc_counts[27] = 32768
    assert abs(board.temperature_dc() - 250) <= 2
    fake_machine.adc_counts[27] = 4094 << 4 | 4094 >> 8  # open: the pull-up alone
    assert board.temperature_dc() == NO_READING
    fake_machine.adc_counts[27] = 0  # shorted
    assert board.temperature_dc() == NO_READING


def test_sensors_count_in_the_interrupt_and_keep_nothing(rp2: ModuleType, board: object) -> None:
    """The count stays a 16-bit number and nothing piles up however many edges come (that the
    handler allocates nothing at all is checked under the real MicroPython, in
    tools/micropython/check_firmware.py: CPython boxes every integer above 256)."""
    assert isinstance(board, rp2.Rp2Hal)
    pin = fake_machine.pins[16]
    assert pin.handler is not None and pin.hard
    handler = pin.handler
    handler(pin)
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for _ in range(70_000):
        handler(pin)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(
        s.size_diff
        for s in after.compare_to(before, "filename")
        if s.traceback[0].filename.endswith("hal/rp2.py")
    )
    assert grown <= 64  # at most the one integer the count is
    assert board.edges(SENSE_TILE) == 70_001 & 0xFFFF


def test_levels_from_gpios_and_from_the_expander(rp2: ModuleType, board: object) -> None:
    assert isinstance(board, rp2.Rp2Hal)
    fake_machine.pins[2].level = 0  # the NC contact closed: not pressed
    assert board.level(SENSE_ESTOP) == 0
    fake_machine.pins[2].level = 1  # open (pressed, or a broken wire)
    assert board.level(SENSE_ESTOP) == 1
    # plate S at its up switch, the cover's contact closed (it pulls the expander's input low)
    fake_machine.registers[0x20][0x12] = 0xFF & ~(1 << 1) & ~(1 << 6)
    fake_machine.registers[0x20][0x13] = 0xFF & ~(1 << 0)  # plate E at its down switch
    CLOCK[0] += 10
    assert board.level(SENSE_UP + 1) == 1 and board.level(SENSE_UP) == 0
    assert board.level(SENSE_DOWN) == 1 and board.level(SENSE_DOWN + 1) == 0
    assert board.level(SENSE_COVER_CLOSED) == 1
    fake_machine.registers[0x20][0x12] = 0xFF  # the cover open
    CLOCK[0] += 10
    assert board.level(SENSE_COVER_CLOSED) == 0


def test_the_hosts_uart_drives_its_rts_for_the_hosts_cts(rp2: ModuleType, board: object) -> None:
    """UART0 with hardware flow control on its RTS pin: the UART stops the host's UART while its
    receive FIFO is full, even while a flash write stalls the core (tests/chip/test_flow.py)."""
    host = fake_machine.uarts[0].settings
    assert host["rts"].id == rp2pins.PINS["HOST_RTS"][1] == 3  # type: ignore[attr-defined]
    assert host["flow"] == fake_machine.UART.RTS
    assert (host["tx"].id, host["rx"].id) == (0, 1)  # type: ignore[attr-defined]


def test_the_readers_changes_are_given_in_order_however_late_they_are_read(
    rp2: ModuleType, board: object
) -> None:
    """Between two reads, a long pass of the main loop: the reader sent a tile, none, the next
    tile (the same face), its repeat and none again. Each change comes out once, in order, so
    the build sees the "none" between the two tiles and names both."""
    assert isinstance(board, rp2.Rp2Hal)
    reader = fake_machine.uarts[1]
    reader.rx.extend(bytes((0x11, 0x00, 0x11, 0x11, 0x00)))
    given = [board.tile_at_head() for _ in range(5)]
    assert given == [0x11, TILE_NONE, 0x11, TILE_NONE, TILE_NONE]
    # over a second unread: the oldest changes go, the latest READER_CHANGES stay in order
    codes_sent = [code for tile in range(1, 11) for code in (tile, TILE_NONE)]
    reader.rx.extend(bytes(codes_sent))
    given = [board.tile_at_head() for _ in range(rp2pins.READER_CHANGES + 1)]
    assert given == [*codes_sent[-rp2pins.READER_CHANGES :], TILE_NONE]


def test_reader_dice_leds_store_watchdog_and_serial(
    rp2: ModuleType, board: object, tmp_path: Path
) -> None:
    assert isinstance(board, rp2.Rp2Hal)
    reader = fake_machine.uarts[1]
    assert board.tile_at_head() == TILE_NONE and not board.reader_ok()
    reader.rx.extend(b"\x00\x15")
    assert board.reader_ok() and board.tile_at_head() == 0x15
    CLOCK[0] += rp2pins.READER_SILENT_MS
    assert not board.reader_ok()
    assert board.dice_value(0) == 0  # no dice unit answering
    fake_machine.plain[0x30] = bytes((4, 6, 9))
    assert [board.dice_value(i) for i in range(3)] == [4, 6, 0]
    board.led(LED_FAULT, True)
    assert fake_machine.registers[0x21][0x14] & 0x40
    assert board.store_read(1, bytearray(16)) == 0
    board.store_write(1, memoryview(b"record"))
    buf = bytearray(16)
    assert board.store_read(1, buf) == 6 and buf[:6] == b"record"
    assert (tmp_path / "store1.bin").exists()
    board.watchdog_start(2000)
    board.watchdog_feed()
    assert fake_machine.wdt[0].timeout == 2000 and fake_machine.wdt[0].fed == 1
    for chip, ours in ((1, RESET_POWER_ON), (3, RESET_WATCHDOG), (5, RESET_UNKNOWN)):
        fake_machine.cause[0] = chip
        assert board.reset_cause() == ours
    host = fake_machine.uarts[0]
    assert host.baudrate == 115200 and host.settings["bits"] == 8
    assert board.serial_read(bytearray(8)) == 0
    host.rx.extend(b"hello")
    assert board.serial_read(buf) == 5 and buf[:5] == b"hello"
    host.rx.extend(bytes(20))
    assert board.serial_read(buf) == 16 and board.serial_read(buf) == 4
    # never asked for more than the UART holds: each such read waits on the chip
    assert host.waits == 0 and reader.waits == 0
    assert board.serial_write(b"reply") == 5 and host.tx == b"reply"
    assert board.serial_number() == "MJ-e6614104032f4a2b"
    assert 0 <= board.random_u32() < 2**32
