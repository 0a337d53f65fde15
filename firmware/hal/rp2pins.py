"""The reference board's pin map and the arithmetic of its parts: a Raspberry Pi Pico (RP2040).

The pin map is the one table PINS below, and docs/firmware.md draws it; the values of the parts
(shunts, amplifiers, NTC, baud rates, addresses) live here once, with the pure functions that
turn them into duties, currents and temperatures. Nothing here touches ``machine``: the HAL that
drives these pins is firmware/hal/rp2.py, and the emulated chip's wiring (simulator/chip/wiring.py)
reads this file's constants as they are. Choices, with their arithmetic:

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
- The host: UART0, 115200 baud 8N1, on GP0 (TX) and GP1 (RX), 1 KiB buffers each way, and
  the UART's RTS on GP3 (HOST_RTS, to the Pi's CTS, GPIO16), driven by the UART itself: it
  goes high (stop) while the receive FIFO holds its trigger level (4 of its 32 bytes), stalled
  core or not. MicroPython's rp2 port writes the flash with interrupts off; a sector erase
  stalls the chip 45 ms, in which a full line brings 518 bytes, and without RTS the FIFO's
  32 were all that stayed. The Pi's UART sends only while its CTS is low when the host opens
  the port with RTS/CTS (``board.rtscts``, docs/config.md); a 10 kOhm pull-up on the line
  holds it high (stop) while the Pico boots. The cover's contact moved to the input expander
  for this (GP3 is one of the three pins UART0's RTS can use: GP15 and GP19 are taken).
- The dice unit on I2C0 at 0x30: it returns three bytes (the dice of its last throw, 0 =
  unread) and takes the dice to display.

tests/firmware/test_rp2.py checks the pin map and the arithmetic under CPython.
"""

import math

from firmware.compat import const
from firmware.hal import (
    LED_BUSY,
    LED_FAULT,
    LED_HEARTBEAT,
    NO_READING,
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
)

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
    "HOST_RTS": (GPIO, 3, UART, 0),  # to the Pi's CTS: high while UART0's receive FIFO is full
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
    "COVER": (XIN, 6, IN_LOW, SENSE_COVER_CLOSED),  # closed cover closes the contact
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
UART_PINS = {  # (TX), (RX), (RTS)
    0: ((0, 12, 16, 28), (1, 13, 17), (3, 15, 19)),
    1: ((4, 8, 20), (5, 9, 21), (7, 11, 27)),
}
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
DICE_I2C = const(0x30)


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
            tx, rx, rts = UART_PINS[unit]
            mine = tx if name.endswith("TX") else rts if name.endswith("RTS") else rx
            if pin not in mine:
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


def _where(where: int, pin: int) -> str:
    return "GP" + str(pin) if where == GPIO else "expander 0x%02x bit %d" % (where, pin)  # noqa: UP031
