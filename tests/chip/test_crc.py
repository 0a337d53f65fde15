"""The frames' CRC in the Pico's machine code (firmware/hal/rp2crc.py, viper) on the chip: the
build's file loads (compiled for armv6m), the HAL selects it, and it gives the table's CRC."""

from __future__ import annotations

import pytest

from tests.chip.conftest import FirmwareProgram

pytestmark = [pytest.mark.xdist_group("chip"), pytest.mark.once]

PROGRAM = b"""
import os
import time
time.sleep_ms(150)  # the USB console is up after about 107 ms
from protocol import framing
from firmware.hal.rp2link import use_native_crc
print("table", framing.CRC_IMPLEMENTATION)
print("native", use_native_crc(), framing.CRC_IMPLEMENTATION)
data = os.urandom(120)
same = framing.crc16(data, 0x1D0F) == framing.crc16_bytewise(data, 0x1D0F)
part = framing.crc16(memoryview(data)[5:50], 0xFFFF) == framing.crc16_bytewise(data[5:50], 0xFFFF)
print("same", same, part, "end")
while True:
    time.sleep_ms(10)
"""


def test_the_chip_takes_the_crc_in_its_machine_code(
    firmware_program: FirmwareProgram,
) -> None:
    chip = firmware_program(PROGRAM)
    chip.run_until("end", chip_ms=5000)
    console = chip.console()
    assert "table table" in console, console
    assert "native True viper" in console, console
    assert "same True True end" in console, console
