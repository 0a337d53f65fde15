"""The reference board's HAL: a Raspberry Pi Pico (RP2040) running MicroPython.

Everything that touches the Pico is here, on the pin map and the values of its parts in
firmware/hal/rp2pins.py (which says why each is what it is). How the HAL drives them:

- The expanders (0x20 inputs, 0x21 outputs) are set up by ``start_parts()``, never in the
  constructor: one that does not answer (unplugged, or a bus held low) is recorded, the HAL
  carries on without it (its reads keep the last levels, its writes are dropped) and the
  firmware reports PART_MISSING with its address while the link runs; CLEAR_FAULT sets them up
  again. The host's UART is made first, so whatever fails after it, the board can say so.
- E-stop: a normally-closed contact wired in series with the enable line (it cuts all nine
  motors in hardware, the dice included) and a second contact to GP2 (pulled up: a broken wire
  reads "pressed"). ``motors_off()`` also drops the enable line in software.
- The tile reader: a reader module on UART1 (9600 8N1) that sends the code of the tile under
  its antenna (0 = none) whenever it changes and at least every 100 ms; silent for
  READER_SILENT_MS means it does not answer. Its bytes are a stream of changes, not a level:
  between two tiles the reader sees none for about 40 ms, and a pass of the main loop may last
  longer (a garbage collection, a host that sends many frames), so the changes not yet given
  wait in a ring of READER_CHANGES, in order, and ``tile_at_head()`` gives one per call: the
  "none" between two tiles is never lost, so no tile goes unread (the build counts on it).
- Watchdog: machine.WDT. The store: two small files on the Pico's flash file system (littlefs,
  which survives a power cut in the middle of a write: the file is then short, its CRC fails,
  and the other slot is used). The build's manifest: in the image of `mjtable firmware image`,
  the frozen module mjtable_image; else /manifest.json, written by `mjtable firmware flash`.
- Clock: MicroPython's ticks_ms (0 .. 2**30 - 1, wrapping), for the board and the link alike.

It cannot run on a computer: ``tools/mpcheck.py`` compiles it with mpy-cross and checks it
against the RP2040 stubs; tests/firmware/test_rp2.py runs it under CPython with a stand-in
``machine`` module.
"""

from time import ticks_diff  # type: ignore[attr-defined,unused-ignore]

import machine  # type: ignore[import-not-found,unused-ignore]

from firmware.compat import TYPE_CHECKING, const
from firmware.hal import (
    LED_COUNT,
    LED_HEARTBEAT,
    NO_BUTTON,
    SENSOR_COUNT,
    TILE_NONE,
)
from firmware.hal.rp2link import Rp2Link
from firmware.hal.rp2pins import (
    CURRENT_MAX_COUNTS,
    DICE_I2C,
    DIR,
    EDGE,
    EXPANDER_MS,
    GPIO,
    IN,
    IN_LOW,
    LED,
    MOTOR_MUX_CHANNEL,
    MOTOR_PWM_HZ,
    MUX,
    MUX_REFERENCE,
    PINS,
    PWM,
    READER_BAUD,
    READER_CHANGES,
    READER_SILENT_MS,
    XIN,
    XOUT,
    current_reading,
    duty_u16,
    interpolate,
    ntc_table,
)

if TYPE_CHECKING:
    from collections.abc import Callable


#: the MCP23017's registers (port A; port B is the next)
_GPIOA = const(0x12)
_OLATA = const(0x14)
_IODIRA = const(0x00)
_GPPUA = const(0x0C)


def _since(now: int, then: int) -> int:
    """Milliseconds from ``then`` to ``now`` on the wrapping tick clock (MicroPython's own
    ticks_diff: no allocation)."""
    return int(ticks_diff(now, then))


def _counter(edges: "list[int]", index: int) -> "Callable[[object], None]":
    """The interrupt handler of one counting sensor: one addition, nothing allocated."""

    def irq(pin: object) -> None:
        edges[index] = (edges[index] + 1) & 0xFFFF

    return irq


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
