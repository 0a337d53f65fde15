"""The frames' CRC in the RP2040's own machine code: MicroPython's viper emitter.

The same CRC-16/IBM-3740 as protocol/framing.py's table (the same table, one step per byte), at
about a tenth of its time on the chip: 25 us for a 12-byte payload where the table's bytecode
takes 159 us, 90 us for 120 bytes where it takes 1.1 ms (bench figures in docs/performance.md).

Viper is compiled to the chip's instructions, so `mjtable firmware build` compiles this file
alone with ``-march=armv6m`` (controller/firmware/build.py, NATIVE); MicroPython's WebAssembly
port and CPython have no such emitter and never import it: the Pico's HAL does
(``use_native_crc`` in firmware/hal/rp2.py), and framing.py takes it only once it gives the
table's results (``add_crc_implementation``).

``crc`` is always given (a viper function takes no default); ``data``: any buffer (bytes,
bytearray, memoryview).
"""

import micropython  # type: ignore[import-not-found,unused-ignore]

from protocol.framing import CRC_TABLE


@micropython.viper  # type: ignore[attr-defined,untyped-decorator,misc,unused-ignore]
def crc16(data, crc: int) -> int:  # type: ignore[no-untyped-def,unused-ignore]
    table = ptr16(CRC_TABLE)  # type: ignore[name-defined,unused-ignore]  # noqa: F821
    p = ptr8(data)  # type: ignore[name-defined,unused-ignore]  # noqa: F821
    c = crc
    n = int(len(data))  # noqa: RUF046  (viper: int() makes it a machine word)
    i = 0
    while i < n:
        c = ((c << 8) & 0xFFFF) ^ table[((c >> 8) ^ p[i]) & 0xFF]
        i += 1
    return c
