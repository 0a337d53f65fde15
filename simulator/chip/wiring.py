"""The Pico's pins on the simulated table: what the emulated chip drives moves the table's
mechanisms, what the table's sensors see reaches the chip's pins, its ADC, its I2C expanders, its
UARTs. One model of the mechanics, in one place: the same ``SimHal`` (simulator/hardware.py,
over firmware/hal/mechanics.py) the CPython simulator runs the firmware on.

The wiring is the reference board's own table, ``PINS`` in firmware/hal/rp2pins.py, with its
constants (the shunt, the amplifier's gain, the NTC): imported from that module, which needs no
``machine`` module, so a pin moved there moves here.

Per slice of ``ms`` milliseconds (``ChipTable.slice``): the outputs the chip drove (the drivers'
enable line, each motor's PWM duty, the lift directions and the pick-up gate on the output
expander, the LEDs, the dice display) are applied to the table, the table moves for ``ms``, and
the inputs are read from it: the levels of the E-stop, the cover and the counting sensors, their
rising edges since the last slice, the limit switches on the input expander, each motor's current
behind the multiplexer (and its reference channel, tied to 3.3 V) and the NTC on the ADC (an
open or shorted NTC, an amplifier stuck at its rail, as the ADC reads them), the dice unit on
I2C, the tile reader's bytes on UART1. The drivers' enable line gates every motor, the dice
motor's too, and the E-stop breaks it in the mechanics, as on the board.
"""

from __future__ import annotations

import functools
import json
import math
from typing import Any

from firmware.hal import LED_COUNT, rp2pins
from firmware.hal.mechanics import NTC_OPEN, NTC_SHORTED
from protocol.codes import MOTOR_COUNT
from simulator.chip.exchange import Inputs, Outputs
from simulator.chip.expander import Mcp23017
from simulator.hardware import SimHal

#: the ADC's 12 bits (MicroPython's read_u16 scales them to 16)
ADC_MAX = 4095
#: what ADC1 reads with the NTC open (the pull-up's 3.3 V, less the ADC's offset) or shorted
NTC_OPEN_RAW = 4094
NTC_SHORTED_RAW = 0
#: the tile reader repeats the code it sees at least this often (ms), and whenever it changes
READER_REPEAT_MS = 100
KELVIN = 273.15
NTC_REFERENCE_K = 298.15


@functools.cache
def board() -> dict[str, Any]:
    """The module-level constants of firmware/hal/rp2pins.py (PINS, GPIO, XIN, XOUT, the roles,
    the shunt, the gain...) by name."""
    return {k: v for k, v in vars(rp2pins).items() if k.isupper()}


class ChipTable:
    """The simulated table behind the Pico's pins; ``hal`` is its hardware (SimHal)."""

    def __init__(self, hal: SimHal) -> None:
        b = board()
        self.hal = hal
        self.pins: dict[str, tuple[int, int, str, int]] = b["PINS"]
        self.gpio, self.xin, self.xout = b["GPIO"], b["XIN"], b["XOUT"]
        self.dice_address: int = b["DICE_I2C"]
        self.expanders = {self.xin: Mcp23017(), self.xout: Mcp23017()}
        self._mux_channel: tuple[int, ...] = tuple(b["MOTOR_MUX_CHANNEL"])
        self._mux_reference: int = b["MUX_REFERENCE"]
        self._mv_per_ma = int(b["SHUNT_MOHM"]) * int(b["AMP_GAIN"]) / 1000
        self._vref_mv = int(b["VREF_MV"])
        self._ntc_ohm = int(b["NTC_OHM"])
        self._ntc_beta = int(b["NTC_BETA"])
        self._pull_up_ohm = int(b["PULL_UP_OHM"])
        self._edges = list(hal.edge)
        #: I2C addresses that do not answer (a part unplugged): left out of every slice's inputs,
        #: as the part the table's hardware has unplugged (SimHal.absent_part, a fault spec's)
        self.absent: set[int] = set()
        self._reader_code = -1
        self._reader_at = 0
        #: what the chip drove, as the table took it: motor -> (direction, speed), enable
        self.driven: dict[int, tuple[int, int]] = {}
        self.enabled = False

    # --- what the runner is told once --------------------------------------------------------

    def wiring(self) -> str:
        """The I2C devices and the ADC multiplexer, for the runner's --wiring."""
        mux_bits = sorted(pin for where, pin, role, _ in self.pins.values() if role == "mux")
        if mux_bits != list(range(mux_bits[0], mux_bits[0] + len(mux_bits))):
            raise ValueError("the multiplexer's select lines are not adjacent expander bits")
        (mux_where,) = {where for where, _, role, _ in self.pins.values() if role == "mux"}
        (adc,) = [unit for name, (_, _, role, unit) in self.pins.items() if name == "CURRENT"]
        return json.dumps(
            {
                "i2c": [
                    {"address": self.xin, "kind": "mcp23017"},
                    {"address": self.xout, "kind": "mcp23017"},
                    {"address": self.dice_address, "kind": "bytes"},
                ],
                "mux": {"adc": adc, "address": mux_where, "shift": mux_bits[0], "bits": 4},
            }
        )

    # --- one slice -----------------------------------------------------------------------------

    def apply(self, out: Outputs) -> None:
        """What the chip drives now, on the table: enable, motors, gate, LEDs, dice display."""
        for address, data in out.i2c:
            expander = self.expanders.get(address)
            if expander is not None:
                expander.write(data)
            elif address == self.dice_address:
                self.hal.dice_display(tuple(data))
        hal = self.hal
        xout = self.expanders[self.xout].outputs
        gpio = out.levels & out.enables
        direction = [1] * MOTOR_COUNT
        speed = [0] * MOTOR_COUNT
        leds = [False] * LED_COUNT
        for name, (where, pin, role, unit) in self.pins.items():
            level = (gpio >> pin & 1) if where == self.gpio else (xout >> pin & 1)
            if role == "pwm":
                speed[unit] = self._speed(out, pin)
            elif role == "dir":
                direction[unit] = -1 if level else 1
            elif role == "led":
                leds[unit] = bool(level)
            elif name == "MOTOR_EN":
                self.enabled = bool(level)
            elif name == "SET_GATE":
                hal.select_set(1 if level else 0)
        hal.leds = leds
        hal.enabled = self.enabled
        for m in range(MOTOR_COUNT):
            now = (direction[m], speed[m])
            if self.driven.get(m, (1, 0)) != now:
                hal.set_motor(m, direction[m], speed[m])
                self.driven[m] = now

    def _speed(self, out: Outputs, gpio: int) -> int:
        """A PWM pin's duty as the firmware's speed (per mille of full speed)."""
        enabled, top, a, b = out.pwm[(gpio >> 1) & 7]
        if not enabled:
            return 0
        level = b if gpio & 1 else a
        return min(1000, round(level * 1000 / (top + 1)))

    def inputs(self, ms: int, uart0: bytes) -> Inputs:
        """The table's sensors as the chip's inputs for the next slice of ``ms``."""
        hal = self.hal
        levels = 0
        pulses: dict[int, int] = {}
        xin = 0xFFFF  # the pull-ups: an input nothing pulls down reads 1
        for _name, (where, pin, role, unit) in self.pins.items():
            if role == "uart" and where == self.gpio:
                levels |= 1 << pin  # an idle UART line is high
            if role not in ("in", "in_low", "edge"):
                continue
            level = hal.level_raw(unit) ^ (1 if role == "in_low" else 0)
            if where == self.gpio:
                levels |= level << pin
                if role == "edge":
                    count = hal.edge[unit] - self._edges[unit]
                    if count:
                        pulses[pin] = count
            elif where == self.xin:
                xin = (xin & ~(1 << pin)) | level << pin
        self._edges = list(hal.edge)
        expander = self.expanders[self.xin]
        expander.pins = xin
        adc: dict[tuple[int, int | None], int] = {}
        current = self.pins["CURRENT"][3]
        for m, channel in enumerate(self._mux_channel):
            # an amplifier stuck at its rail gives the ADC's full scale
            raw = ADC_MAX if hal.amp_stuck[m] else self._current(hal.load_ma(m))
            adc[(current, channel)] = raw
        adc[(current, self._mux_reference)] = ADC_MAX  # tied to 3.3 V
        adc[(self.pins["HEATSINK_NTC"][3], None)] = self._ntc_raw()
        devices = {self.xin: expander.state(), self.xout: self.expanders[self.xout].state()}
        if hal.has_dice():
            devices[self.dice_address] = bytes(hal.dice_value(i) for i in range(3))
        for address in (*self.absent, hal.absent_part):
            devices.pop(address, None)  # nobody acknowledges it: the chip sees EIO
        return Inputs(
            slice_us=ms * 1000,
            levels=levels,
            pulses=pulses,
            adc=adc,
            devices=devices,
            uart0=uart0,
            uart1=self._reader(),
        )

    def _current(self, ma: int) -> int:
        """The ADC's reading of a motor's current: shunt x gain into the 3.3 V range."""
        mv = ma * self._mv_per_ma
        return max(0, min(ADC_MAX, round(mv * ADC_MAX / self._vref_mv)))

    def _ntc_raw(self) -> int:
        """ADC1: the NTC at the heat sink's temperature, or its wiring broken."""
        wire = self.hal.ntc_wire
        if wire == NTC_OPEN:
            return NTC_OPEN_RAW
        if wire == NTC_SHORTED:
            return NTC_SHORTED_RAW
        return self._ntc(self.hal.heat_sink_dc())

    def _ntc(self, dc: int) -> int:
        """The ADC's reading of the NTC at ``dc`` tenths of a degree (its divider, Beta)."""
        kelvin = dc / 10 + KELVIN
        ohm = self._ntc_ohm * math.exp(self._ntc_beta * (1 / kelvin - 1 / NTC_REFERENCE_K))
        ratio = ohm / (ohm + self._pull_up_ohm)
        return max(1, min(ADC_MAX - 1, round(ratio * ADC_MAX)))

    def _reader(self) -> bytes:
        """The tile reader's bytes: the code it sees when it changes, and every 100 ms."""
        hal = self.hal
        if not hal.fitted_reader or hal.reader_dead:
            return b""
        code = hal.tile_at_head()  # TILE_NONE (0) when it sees none
        now = hal.now
        if code == self._reader_code and now - self._reader_at < READER_REPEAT_MS:
            return b""
        self._reader_code = code
        self._reader_at = now
        return bytes((code,))

    def power_cut(self) -> None:
        """The board loses its power: the expanders forget their registers, the motors stop."""
        self.expanders = {self.xin: Mcp23017(), self.xout: Mcp23017()}
        self.driven.clear()
        self.enabled = False
        self.hal.motors_off()
