"""The MCP23017 I/O expander at register level, as the emulated chip's I2C bus sees it.

Twenty-two registers (IOCON.BANK = 0: port A and B side by side) and an address pointer: a write
transaction's first byte sets the pointer, each further byte is written at it and moves it on
(sequential addressing, wrapping after OLATB); a write to GPIO goes to the output latch. A read
of GPIO gives the pin levels of the inputs (IODIR bit set, inverted by IPOL) and the latch of the
outputs. At power-on every pin is an input and every other register is 0.

The runner (tools/chip/runner.mjs, its model in tools/chip/devices.mjs) answers the chip's
transactions from the same model within a slice; it forwards each write here, so both hold the
same registers.
"""

from __future__ import annotations

IODIRA = 0x00
IPOLA = 0x02
GPPUA = 0x0C
GPIOA = 0x12
OLATA = 0x14
REGISTERS = 0x16


class Mcp23017:
    """One MCP23017; ``pins``: the levels its input pins see (bit 0..7 port A, 8..15 port B)."""

    def __init__(self) -> None:
        self.reg = bytearray(REGISTERS)
        self.reg[IODIRA] = self.reg[IODIRA + 1] = 0xFF
        self.pointer = 0
        self.pins = 0xFFFF

    def write(self, data: bytes) -> None:
        """A write transaction: the register, then the bytes written from it on."""
        if not data:
            return
        self.pointer = data[0] % REGISTERS
        for value in data[1:]:
            r = self.pointer
            self.reg[r + 2 if r in (GPIOA, GPIOA + 1) else r] = value
            self.pointer = (r + 1) % REGISTERS

    def _pair(self, register: int) -> int:
        return self.reg[register] | self.reg[register + 1] << 8

    @property
    def outputs(self) -> int:
        """The level each pin drives: the latch of the outputs (IODIR bit clear); 0 for inputs."""
        return self._pair(OLATA) & ~self._pair(IODIRA) & 0xFFFF

    @property
    def pull_ups(self) -> int:
        return self._pair(GPPUA)

    def read_gpio(self) -> int:
        """What a read of GPIOA and GPIOB gives (bit 0..7 port A, 8..15 port B)."""
        inputs = self._pair(IODIRA)
        return ((self.pins ^ self._pair(IPOLA)) & inputs) | (self._pair(OLATA) & ~inputs & 0xFFFF)

    def state(self) -> bytes:
        """The input pins as the runner takes them (2 bytes, port A first)."""
        return bytes((self.pins & 0xFF, self.pins >> 8))
