"""The Pico with its link alone: UART0 to the host, the clock, the LED, the watchdog, the reset,
the build's manifest, the frames' CRC in machine code; the drivers' enable line held low.

``Rp2Link`` is the first thing the reference board's HAL (firmware/hal/rp2.py, ``Rp2Hal``)
makes, and what the firmware's last resort (firmware/lastresort.py) speaks through when
``Rp2Hal()`` itself failed, or when rp2.py cannot even be loaded (main.py loads this module
on its own then): the board always says on the link why it does not work. Like rp2.py, it
imports ``machine`` and runs only on the Pico (tests/firmware/test_rp2.py runs it under
CPython on a stand-in).
"""

import binascii
import os
import sys
from time import sleep_ms, ticks_ms  # type: ignore[attr-defined,unused-ignore]

import machine  # type: ignore[import-not-found,unused-ignore]

try:
    import micropython  # type: ignore[import-not-found,unused-ignore]

    # room for a traceback from an interrupt handler, should one ever fail
    _emergency = getattr(micropython, "alloc_emergency_exception_buf", None)
    if _emergency is not None:
        _emergency(100)
except ImportError:
    pass

from firmware.hal import (
    LED_HEARTBEAT,
    RESET_POWER_ON,
    RESET_UNKNOWN,
    RESET_WATCHDOG,
    TICKS_MASK,
    Hal,
)
from firmware.hal.rp2pins import HOST_BAUD, PINS
from protocol import framing

#: the build's manifest, written by ``mjtable firmware flash`` (firmware/buildinfo.py); the
#: image of ``mjtable firmware image`` carries it frozen instead, as ``mjtable_image.MANIFEST``
MANIFEST = "/manifest.json"


def host_uart() -> object:
    """UART0 to the host: 115200 8N1 on GP0/GP1, 1 KiB buffers each way, never blocking; its
    RTS on GP3, driven by the UART (high while its receive FIFO holds 4 bytes: the host's UART
    waits then, even while a flash write stalls the core)."""
    Pin = machine.Pin
    UART = machine.UART
    return UART(
        0,
        baudrate=HOST_BAUD,
        bits=8,
        parity=None,
        stop=1,
        tx=Pin(PINS["HOST_TX"][1]),
        rx=Pin(PINS["HOST_RX"][1]),
        rts=Pin(PINS["HOST_RTS"][1]),
        flow=UART.RTS,
        txbuf=1024,
        rxbuf=1024,
        timeout=0,
    )


def use_native_crc() -> bool:
    """The frames' CRC in the chip's machine code (firmware/hal/rp2crc.py: a tenth of the
    table's time), once it gives the table's results; False, the table's kept, where it cannot
    load (a port without the viper emitter, a build without the file, another architecture,
    no memory for its code): a quicker CRC is never worth a board that does not start."""
    if sys.implementation.name != "micropython":
        return False
    if framing.CRC_IMPLEMENTATION == "viper":
        return True  # taken and checked already (an Rp2Link made again: the last resort's)
    try:
        from firmware.hal.rp2crc import crc16

        framing.add_crc_implementation("viper", crc16)
    except (ImportError, SyntaxError, ValueError, MemoryError):
        return False
    return True


class Rp2Link(Hal):
    """The Pico with its link alone: UART0 to the host, the clock, the LED, the watchdog, the
    reset, the manifest; the drivers' enable line held low. What the firmware's last resort
    (firmware/lastresort.py) speaks through when ``Rp2Hal()`` itself failed, and the first
    thing ``Rp2Hal`` makes."""

    def __init__(self) -> None:
        use_native_crc()
        Pin = machine.Pin
        self._enable = Pin(PINS["MOTOR_EN"][1], Pin.OUT, value=0)
        self._led_pin: object = Pin(PINS["LED_HEARTBEAT"][1], Pin.OUT, value=0)
        self._host = host_uart()
        self._wdt: object = None

    def serial_number(self) -> str:
        return "MJ-" + binascii.hexlify(machine.unique_id()).decode()[:16]

    def random_u32(self) -> int:
        return int.from_bytes(os.urandom(4), "big")

    def ticks_ms(self) -> int:
        # MicroPython's ticks (0 .. TICKS_MASK, wrapping; opaque to the type checker), an int
        now: int = ticks_ms()  # type: ignore[assignment,unused-ignore]
        return now & TICKS_MASK

    def link_ticks_ms(self) -> int:
        now: int = ticks_ms()  # type: ignore[assignment,unused-ignore]  # one clock on the board
        return now & TICKS_MASK

    def idle(self, ms: int) -> None:
        sleep_ms(ms)

    def motors_off(self) -> None:
        self._enable.value(0)

    def led(self, led: int, on: bool) -> None:
        if led == LED_HEARTBEAT:
            self._led_pin.value(1 if on else 0)  # type: ignore[attr-defined]

    def manifest(self) -> "bytes | None":
        try:  # the image with the firmware frozen in: its build, whatever the flash holds
            import mjtable_image  # type: ignore[import-not-found,unused-ignore]

            return bytes(mjtable_image.MANIFEST)
        except ImportError:
            pass
        try:
            with open(MANIFEST, "rb") as f:
                return bytes(f.read())
        except OSError:
            return None

    def watchdog_start(self, timeout_ms: int) -> None:
        self._wdt = machine.WDT(timeout=timeout_ms)

    def watchdog_feed(self) -> None:
        if self._wdt is not None:
            self._wdt.feed()  # type: ignore[attr-defined]

    def reset_cause(self) -> int:
        cause = machine.reset_cause()
        if cause == machine.PWRON_RESET:
            return RESET_POWER_ON
        if cause == machine.WDT_RESET:
            return RESET_WATCHDOG
        return RESET_UNKNOWN

    def reset(self) -> None:
        machine.reset()

    def serial_read(self, buf: bytearray) -> int:
        # no more than the UART holds: the rp2 port's readinto waits for every byte it is
        # asked for beyond those (at least a millisecond, its shortest timeout_char), so asking
        # for a whole buffer idled the loop a millisecond a pass, or until the line filled it
        host = self._host
        n = int(host.any())  # type: ignore[attr-defined]
        if not n:
            return 0
        if n < len(buf):
            return int(host.readinto(memoryview(buf)[:n]) or 0)  # type: ignore[attr-defined]
        return int(host.readinto(buf) or 0)  # type: ignore[attr-defined]

    def serial_write(self, data: "bytes | memoryview") -> int:
        n = self._host.write(data)  # type: ignore[attr-defined]
        return int(n or 0)
