"""The runner's answers to rp2040js's gaps, each seen by a small MicroPython program on the chip:
the flash keeps what the chip wrote across a power cut, a watchdog that is not fed (by a program
that does not, or one whose core hangs) resets the chip and ``machine.reset_cause()`` reads
WDT_RESET, an I2C address nobody acknowledges is EIO (as on a real board, not a timeout), a
device that answers is read, UART0 sends every byte at its baud rate, and the ring oscillator
gives each boot other random bytes."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from simulator.chip.board import ChipBoard
from simulator.chip.config import ChipConfig
from tests.chip.conftest import SLICE_LIMIT, ProgramFactory, need_chip

#: the emulator takes a core: one worker for the chip, and one Python (the chip is the same
#: under each; the host's side runs under each in test_parts and test_cli)
pytestmark = [pytest.mark.xdist_group("chip"), pytest.mark.once]

#: MicroPython's rp2 reset causes
PWRON_RESET = 1
WDT_RESET = 3

MAIN = b"""
import machine, os, time
time.sleep_ms(150)  # the USB console is up after about 107 ms
try:
    with open("boots.txt") as f:
        n = int(f.read())
except OSError:
    n = 0
with open("boots.txt", "w") as f:
    f.write(str(n + 1))
i2c = machine.I2C(0, sda=machine.Pin(20), scl=machine.Pin(21), freq=400_000)
try:
    i2c.writeto(0x50, b"x")
    nak = "acked"
except OSError as e:
    nak = e.errno
dev = list(i2c.readfrom(0x30, 3))
uart = machine.UART(0, 115200, tx=machine.Pin(0), rx=machine.Pin(1), txbuf=1024)
uart.write(b"uart %d" % n)
if n == 0:
    uart.write(bytes(range(256)) * 4)
print("boot", n, "cause", machine.reset_cause(), "nak", nak, "dev", dev, "rnd", os.urandom(4).hex())
if n == 1:
    machine.WDT(timeout=100)  # never fed
while True:
    time.sleep_ms(10)
"""

LINE = r"boot {n} cause (\d+) nak (\S+) dev \[([\d, ]*)\] rnd (\w+)"


def test_the_flash_the_watchdog_i2c_and_uart_on_the_chip(chip_program: ProgramFactory) -> None:
    chip = chip_program({"/main.py": MAIN}, {0x30: bytes([4, 5, 6])})
    first = chip.run_until(LINE.format(n=0), chip_ms=3000)
    assert first.group(1) == str(PWRON_RESET)
    assert first.group(2) == "5", "an address nobody acknowledges is EIO on a real board"
    assert first.group(3) == "4, 5, 6"
    for _ in range(120):  # 1030 bytes at 115200 baud: 89 ms on the line
        chip.step()
    assert chip.uart0 == b"uart 0" + bytes(range(256)) * 4
    assert chip.uart0_most <= 12, "UART0 sends faster than 115200 baud (11.5 bytes a ms)"

    chip.cut_power()
    second = chip.run_until(LINE.format(n=1), chip_ms=3000)  # the flash kept boots.txt
    assert second.group(1) == str(PWRON_RESET)
    assert second.group(4) != first.group(4), "each boot draws other random bytes"

    third = chip.run_until(LINE.format(n=2), chip_ms=3000)  # the watchdog was not fed
    assert third.group(1) == str(WDT_RESET)
    assert chip.last is not None and chip.last.boots == 3 and chip.last.cause == 1


FED = b"""
import machine, time
time.sleep_ms(150)
print("cause", machine.reset_cause())
wdt = machine.WDT(timeout=200)
while True:
    wdt.feed()
    time.sleep_ms(10)
"""


def test_a_firmware_that_hangs_is_reset_by_its_watchdog(chip_program: ProgramFactory) -> None:
    chip = chip_program({"/main.py": FED}, {})
    chip.run_until(f"cause {PWRON_RESET}", chip_ms=3000)
    for _ in range(500):  # fed every 10 ms: no reset
        chip.step()
    assert chip.last is not None and chip.last.boots == 1
    chip.hang()  # the core stops; the clock and the watchdog go on
    chip.run_until(f"cause {WDT_RESET}", chip_ms=3000)
    assert chip.last.boots == 2 and chip.last.cause == 1


def test_a_runner_that_dies_is_named_by_the_board(firmware_build: Path) -> None:
    board = ChipBoard(ChipConfig(build=firmware_build, speed=0, shared=need_chip()))
    try:
        board.open_pty()
        board.start()
        pid = board.runner_pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)  # the runner is ours: its own pid
        assert board.wait_failed(SLICE_LIMIT), "the board did not see its runner die"
        assert not board.running
        assert board.loop_error == (
            "the chip's runner stopped (killed by SIGKILL); start the simulator again"
        )
    finally:
        board.stop()


def test_a_power_cut_restarts_the_board_with_its_flash(tmp_path: Path) -> None:
    build = tmp_path / "build"  # a build of one small main.py, as the flasher puts it
    build.mkdir()
    (build / "main.py").write_bytes(
        b"import time\ntime.sleep_ms(150)\ntry:\n    n = int(open('n').read())\n"
        b"except OSError:\n    n = 0\nwith open('n', 'w') as f:\n    f.write(str(n + 1))\n"
        b"print('boot', n)\nwhile True:\n    time.sleep_ms(10)\n"
    )
    (build / "manifest.json").write_text('{"build_hash": "c41b"}')
    board = ChipBoard(ChipConfig(build=build, speed=0, shared=need_chip()))
    assert board.build_hash == "c41b"
    try:
        board.open_pty()
        board.start()
        assert board.wait_console("boot 0", SLICE_LIMIT), board.console_text()
        board.power_cut()
        assert board.wait_console("boot 1", SLICE_LIMIT), board.console_text()
        assert board.boots == 2 and board.watchdog_resets == 0
    finally:
        board.stop()
