"""The board's persistent record survives a power cut in the middle of its own write, on the chip.

The firmware's store (firmware/store.py: two slots, each a file of the Pico's littlefs written
by the rp2 HAL's ``store_write``) runs on the emulated RP2040 with MicroPython's own littlefs on
the emulated flash, writing one record after another. The runner cuts the power in the middle
of a flash operation the chip makes (a page program half done, an erase half done, an erase
done and the program after it not begun...): the chip boots again from the flash as the cut
left it, and the store reads either the record it was writing or the one before it; no slot
holds a record the store cannot read, and MicroPython mounts its file system (it does not format
it again, which would take the firmware with it)."""

from __future__ import annotations

import re

import pytest

from firmware.store import LOADED
from simulator.chip.exchange import FLASH_EITHER, FLASH_ERASE, FLASH_PROGRAM
from tests.chip.conftest import FirmwareProgram

pytestmark = [pytest.mark.xdist_group("chip"), pytest.mark.once, pytest.mark.chip_long]

#: the firmware's Store over the rp2 HAL's two files, writing the largest record there is (two
#: 144-tile sets built, with their layouts and manifests: 347 bytes) over and over; at each boot
#: it says what it loaded and whether each slot holds a valid record (1), garbage (0) or
#: nothing (-)
MAIN = b"""
from firmware.hal.rp2 import Rp2Hal
from firmware.places import BUILT, TileSet
from firmware.store import Record, Store

class Slots:
    STORE_SLOT_SIZE = Rp2Hal.STORE_SLOT_SIZE
    store_read = Rp2Hal.store_read
    store_write = Rp2Hal.store_write
    def __init__(self):
        self._store = ["/store0.bin", "/store1.bin"]

slots = Slots()
sets = [TileSet(144), TileSet(144)]
for s in sets:
    s.place = BUILT
    s.layout = ((2,) * 18,) * 4
record = Record()
store = Store(slots, 144)
found = store.load(record, sets)
buf = bytearray(slots.STORE_SLOT_SIZE)
kept = ""
for slot in (0, 1):
    n = slots.store_read(slot, buf)
    kept += "-" if not n else ("1" if store._valid(buf, n) else "0")
print("boot", found, record.motions_begun, kept)
n = record.motions_begun
while True:
    n += 1
    record.motions_begun = n
    print("write", n)
    store.save(record, sets)
    print("wrote", n)
"""

BOOTED = re.compile(r"boot (\d+) (\d+) ([-01]{2})\r?\n")

#: where the power goes: (the operation, the nth of them from now, the percent of it done)
CUTS = (
    (FLASH_PROGRAM, 1, 50),  # half the page of a record's commit programmed
    (FLASH_PROGRAM, 1, 0),  # the program about to begin
    (FLASH_PROGRAM, 2, 99),  # all of it but its last bytes, the write after next
    (FLASH_ERASE, 1, 50),  # half a block erased while littlefs compacts its directory
    (FLASH_ERASE, 1, 100),  # the block erased, the program after it not begun
    (FLASH_EITHER, 3, 30),
)
#: chip time (ms) a cut has to strike in (a record's write every 10 ms, a compaction every 8
#: writes) and the chip to boot again
WITHIN_MS = 5_000


def test_a_power_cut_in_the_middle_of_a_store_write_keeps_the_old_record_or_the_new(
    firmware_program: FirmwareProgram,
) -> None:
    chip = firmware_program(MAIN)
    first = chip.run_until(BOOTED.pattern, chip_ms=WITHIN_MS)
    assert first.groups() == ("0", "0", "--")  # a new board: both slots blank
    seen = len(chip.console())
    for number, cut in enumerate(CUTS, start=1):
        chip.run_until(r"(?s)wrote \d+.*wrote \d+", chip_ms=WITHIN_MS, since=seen)  # writing
        chip.aim_power_cut(*cut)
        for _ in range(WITHIN_MS):
            chip.step()
            if chip.flash_cuts == number:
                break
        assert chip.flash_cuts == number, f"the cut {cut} did not strike: {chip.console()!r}"
        before = chip.console()
        writing = re.findall(r"(write|wrote) (\d+)\r?\n", before)[-1]
        assert writing[0] == "write", f"the cut {cut} struck outside a store write"
        in_flight = int(writing[1])
        booted = chip.run_until(BOOTED.pattern, chip_ms=WITHIN_MS, since=len(before))
        found, loaded, kept = booted.groups()
        assert int(found) == LOADED, f"after the cut {cut}: {chip.console()[seen:]!r}"
        assert int(loaded) in (in_flight - 1, in_flight), (cut, in_flight, loaded)
        assert "0" not in kept, f"a slot holds garbage after the cut {cut}"
        assert chip.last is not None and chip.last.boots == number + 1
        seen = len(before)
    assert "Traceback" not in chip.console()
