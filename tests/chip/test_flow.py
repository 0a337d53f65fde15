"""The board's UART to the host keeps every byte while a flash erase stalls the chip, when the
host's UART waits on CTS: the firmware's own ``host_uart()`` (UART0 with its RTS on GP3, in
hardware) on the emulated chip, whose runner drives RTS as the PL011 does (its gap 7).

MicroPython's rp2 port erases and programs the flash with interrupts off, and a sector's erase
takes 45 ms, in which a full line at 115200 baud brings 518 bytes to a receive FIFO of 32. The
program below waits for the host's first bytes, erases four sectors (180 ms of a stalled core),
then reads everything: without flow control most of what came meanwhile is lost; with the host
waiting on CTS, none is, and the bytes are the ones sent, in order."""

from __future__ import annotations

import re
import zlib

import pytest

from tests.chip.conftest import ChipProgram, FirmwareProgram

pytestmark = [pytest.mark.xdist_group("chip"), pytest.mark.once]

PROGRAM = b"""
import binascii, rp2, time
from firmware.hal.rp2link import host_uart
time.sleep_ms(150)  # the USB console is up after about 107 ms
uart = host_uart()
flash = rp2.Flash()
last = flash.ioctl(4, 0) - 1  # the file system's last block: this program reads no file after
print("ready")
while not uart.any():
    time.sleep_ms(1)
for block in range(4):
    flash.ioctl(6, last - block)  # erased: 45 ms each, interrupts off
got = bytearray()
quiet = 0
while quiet < 30:
    n = uart.any()
    if n:
        got += uart.read(n)
        quiet = 0
    else:
        quiet += 1
        time.sleep_ms(1)
print("got %d crc %08x" % (len(got), binascii.crc32(got) & 0xFFFFFFFF))
"""

#: what the host sends: more than the four erases' 180 ms of the line (2,070 bytes)
SENT = bytes(i * 7 & 0xFF for i in range(3000))
RESULT = r"got (\d+) crc ([0-9a-f]{8})"


def run(chip: ChipProgram) -> tuple[int, int]:
    """The bytes the program read, and their CRC-32, once the host sent SENT at its start."""
    chip.run_until("ready", chip_ms=5000)
    chip.step(uart0=SENT)  # queued: the line carries 11.5 bytes a ms
    found = chip.run_until(RESULT, chip_ms=3000)
    return int(found.group(1)), int(found.group(2), 16)


def test_a_host_waiting_on_cts_loses_no_byte_while_the_chip_erases_its_flash(
    firmware_program: FirmwareProgram,
) -> None:
    chip = firmware_program(PROGRAM)
    chip.host_cts = True
    assert run(chip) == (len(SENT), zlib.crc32(SENT))


def test_a_host_sending_regardless_loses_what_the_fifo_cannot_hold(
    firmware_program: FirmwareProgram,
) -> None:
    chip = firmware_program(PROGRAM)
    got, _ = run(chip)
    # four erases, 180 ms of the line: 2,070 bytes came, the FIFO kept 32 of each erase's
    assert got < len(SENT) - 1500
    assert re.search(r"got \d+", chip.console())
