"""A stand-in for MicroPython's ``machine`` module, for firmware/hal/rp2.py under CPython.

Only what the reference board's HAL calls, recording what it does: pins and their values and
interrupt handlers, PWM duties and frequencies, ADC readings a test sets, two UARTs whose
buffers a test fills and drains, an I2C bus of register files, the watchdog and the reset
cause. ``reset_state()`` starts a fresh board.
"""

from __future__ import annotations

from collections.abc import Callable

PWRON_RESET = 1
WDT_RESET = 3

pins: dict[int, Pin] = {}
pwms: dict[int, PWM] = {}
adc_counts: dict[int, int] = {}
#: an ADC pin whose reading a function gives (what a multiplexer before it selects)
adc_sources: dict[int, Callable[[], int]] = {}
uarts: dict[int, UART] = {}
#: I2C: address -> register -> byte; and what plain reads of a device return
registers: dict[int, dict[int, int]] = {}
plain: dict[int, bytes] = {}
#: I2C addresses nobody acknowledges (a part unplugged): every transaction with one is EIO
absent: set[int] = set()
wdt: list[WDT] = []
cause = [PWRON_RESET]
resets = [0]


def reset_state() -> None:
    pins.clear()
    pwms.clear()
    adc_counts.clear()
    adc_sources.clear()
    uarts.clear()
    registers.clear()
    plain.clear()
    absent.clear()
    wdt.clear()
    cause[0] = PWRON_RESET
    resets[0] = 0


class Pin:
    IN = 0
    OUT = 1
    PULL_UP = 1
    IRQ_RISING = 8

    def __init__(self, id: int, mode: int = -1, pull: int = -1, value: int | None = None) -> None:
        self.id = id
        self.mode = mode
        self.pull = pull
        self.level = value if value is not None else (1 if pull == Pin.PULL_UP else 0)
        self.handler: Callable[[Pin], None] | None = None
        self.hard = False
        pins[id] = self

    def value(self, v: int | None = None) -> int:
        if v is not None:
            self.level = 1 if v else 0
        return self.level

    def irq(
        self, handler: Callable[[Pin], None] | None = None, trigger: int = 0, hard: bool = False
    ) -> None:
        self.handler = handler
        self.hard = hard


class PWM:
    def __init__(self, pin: Pin) -> None:
        self.pin = pin
        self.hz = 0
        self.duty = -1
        pwms[pin.id] = self

    def freq(self, hz: int | None = None) -> int:
        if hz is not None:
            self.hz = hz
        return self.hz

    def duty_u16(self, duty: int | None = None) -> int:
        if duty is not None:
            if not 0 <= duty <= 65535:
                raise ValueError("duty out of range")
            self.duty = duty
        return self.duty


class ADC:
    def __init__(self, pin: Pin) -> None:
        self.pin = pin

    def read_u16(self) -> int:
        source = adc_sources.get(self.pin.id)
        return source() if source is not None else adc_counts.get(self.pin.id, 0)


class UART:
    #: hardware flow control, as MicroPython's rp2 port numbers it
    CTS = 1
    RTS = 2

    def __init__(self, id: int, baudrate: int = 9600, **kwargs: object) -> None:
        self.id = id
        self.baudrate = baudrate
        self.settings = kwargs
        self.rx = bytearray()
        self.tx = bytearray()
        #: reads that asked for more bytes than were there: on the rp2 port each one waits
        #: for the missing bytes (at least its timeout_char, a millisecond) before it returns
        self.waits = 0
        uarts[id] = self

    def any(self) -> int:
        return len(self.rx)

    def readinto(self, buf: bytearray | memoryview) -> int | None:
        if len(buf) > len(self.rx):
            self.waits += 1
        n = min(len(buf), len(self.rx))
        if not n:
            return None  # as MicroPython: None when nothing came
        buf[:n] = self.rx[:n]
        del self.rx[:n]
        return n

    def write(self, data: bytes | memoryview) -> int:
        self.tx.extend(data)
        return len(data)


def _answer(addr: int) -> None:
    """MicroPython's error for an address nobody acknowledges."""
    if addr in absent:
        raise OSError(5, "EIO")


class I2C:
    def __init__(self, id: int, sda: Pin, scl: Pin, freq: int) -> None:
        self.id = id
        self.freq = freq

    def writeto_mem(self, addr: int, reg: int, buf: bytes | bytearray) -> None:
        _answer(addr)
        regs = registers.setdefault(addr, {})
        for i, b in enumerate(buf):
            regs[reg + i] = b

    def readfrom_mem_into(self, addr: int, reg: int, buf: bytearray) -> None:
        _answer(addr)
        regs = registers.setdefault(addr, {})
        for i in range(len(buf)):
            buf[i] = regs.get(reg + i, 0xFF)

    def readfrom_into(self, addr: int, buf: bytearray) -> None:
        _answer(addr)
        if addr not in plain:
            raise OSError(19, "no device at that address")
        buf[:] = plain[addr][: len(buf)]

    def writeto(self, addr: int, buf: bytes) -> None:
        _answer(addr)
        if addr not in plain:
            raise OSError(19, "no device at that address")
        plain[addr] = bytes(buf)


class WDT:
    def __init__(self, timeout: int) -> None:
        self.timeout = timeout
        self.fed = 0
        wdt.append(self)

    def feed(self) -> None:
        self.fed += 1


def reset_cause() -> int:
    return cause[0]


def reset() -> None:
    resets[0] += 1


def unique_id() -> bytes:
    return bytes.fromhex("e6614104032f4a2b")
