"""The tile reader on the chip: the board's own HAL (firmware/hal/rp2.py) reads UART1 at 9600
baud while the reader names a tile for 100 ms, then none for 40 ms, tile after tile, and a pass
of the main loop lasts 60 ms (a host sending without pause, a garbage collection): every change
the reader sent comes out of ``tile_at_head()``, in order, the none between two tiles included
(the build tells two tiles apart by it)."""

from __future__ import annotations

import pytest

from tests.chip.conftest import FirmwareProgram

pytestmark = [pytest.mark.xdist_group("chip"), pytest.mark.once, pytest.mark.chip_long]

PROGRAM = b"""
import time
time.sleep_ms(150)  # the USB console is up after about 107 ms
from firmware.hal.rp2 import Rp2Hal
hal = Rp2Hal()
seen = [hal.tile_at_head()]  # none yet: the reader is silent
print("ready")
start = time.ticks_ms()
while time.ticks_diff(time.ticks_ms(), start) < 3000:
    code = hal.tile_at_head()
    if not seen or seen[-1] != code:
        seen.append(code)
    time.sleep_ms(60)  # a pass of the main loop: longer than the none between two tiles
print("seen", seen)
while True:
    time.sleep_ms(10)
"""

#: the reader names each tile for this long, then sees none until the next (ms)
CODE_MS = 100
TILE_MS = 140


def test_every_change_of_the_reader_survives_a_long_pass(
    firmware_program: FirmwareProgram,
) -> None:
    chip = firmware_program(PROGRAM)
    chip.run_until("ready", chip_ms=5000)
    sent: list[int] = []
    for ms in range(15 * TILE_MS):  # tiles 1 to 15
        data = b""
        if ms % TILE_MS == 0:
            data = bytes((1 + ms // TILE_MS,))
        elif ms % TILE_MS == CODE_MS:
            data = b"\x00"
        sent += data
        chip.step(uart1=data)
    found = chip.run_until(r"seen \[([\d, ]*)\]", chip_ms=3000)
    seen = [int(code) for code in found.group(1).split(",")]
    # none before the first tile, then every change in order (the last: none)
    assert seen == [0, *sent]
