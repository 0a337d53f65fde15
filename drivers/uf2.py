"""UF2, the file the Raspberry Pi Pico's boot loader takes: hold BOOTSEL while plugging the Pico
in, it shows a drive named RPI-RP2, and a UF2 file copied there is written to its flash.

A UF2 file is 512-byte blocks, each carrying 256 bytes of the image and the flash address they
go to (Microsoft's format, github.com/microsoft/uf2): two magic numbers, the flags (here
"family ID present"), the address, the payload's size, the block's number, the number of
blocks, the family (the RP2040's, 0xe48bff56), the payload padded to 476 bytes, a closing magic.
``to_uf2`` writes an image that starts at the flash's first byte (0x10000000) as MicroPython's
tools/uf2conv.py does, byte for byte (``to_uf2`` of the stock image's ``.bin`` in the shared
rp2040 folder is that folder's ``.uf2``); ``from_uf2`` gives the flash a UF2 writes, as the boot
loader writes it (blocks of another family, or not for the flash, are left out).

Ours, not a package from PyPI: the format is the few lines below; the packages that write it
(uf2utils, adafruit-uf2) are frameworks around it that would add a locked runtime dependency
for what ``struct`` does here, and neither reads a UF2 back as the RP2040's boot loader would.
"""

from __future__ import annotations

import struct

MAGIC_START0 = 0x0A324655  # "UF2\n"
MAGIC_START1 = 0x9E5D5157
MAGIC_END = 0x0AB16F30
#: the block carries a family ID; the block is not for the main flash (the boot loader skips it)
FLAG_FAMILY = 0x00002000
FLAG_NOT_MAIN_FLASH = 0x00000001
#: the RP2040's family, and where its flash is in its address space (XIP)
RP2040_FAMILY = 0xE48BFF56
FLASH_BASE = 0x10000000
BLOCK_SIZE = 512
PAYLOAD_SIZE = 256
_HEAD = struct.Struct("<8I")
_ROOM = BLOCK_SIZE - _HEAD.size - 4  # 476: the payload's room in a block
_TAIL = struct.pack("<I", MAGIC_END)


class Uf2Error(ValueError):
    """A file that is not a UF2 the RP2040's boot loader would write: one line saying why."""


def to_uf2(image: bytes, base: int = FLASH_BASE, family: int = RP2040_FAMILY) -> bytes:
    """The UF2 of ``image``, a flash image that starts at ``base``: one block per 256 bytes."""
    if not image:
        raise Uf2Error("an empty image makes no UF2")
    count = (len(image) + PAYLOAD_SIZE - 1) // PAYLOAD_SIZE
    blocks = []
    for number in range(count):
        chunk = image[number * PAYLOAD_SIZE : (number + 1) * PAYLOAD_SIZE]
        head = _HEAD.pack(
            MAGIC_START0,
            MAGIC_START1,
            FLAG_FAMILY,
            base + number * PAYLOAD_SIZE,
            PAYLOAD_SIZE,
            number,
            count,
            family,
        )
        blocks.append(head + chunk.ljust(_ROOM, b"\x00") + _TAIL)
    return b"".join(blocks)


def is_uf2(data: bytes) -> bool:
    """Whether ``data`` begins as a UF2 file does."""
    return len(data) >= 8 and struct.unpack_from("<II", data) == (MAGIC_START0, MAGIC_START1)


def from_uf2(
    data: bytes, base: int = FLASH_BASE, size: int = 16 * 1024 * 1024, family: int = RP2040_FAMILY
) -> bytes:
    """The flash from ``base`` that the UF2 ``data`` writes, up to its last byte written; what
    no block writes is 0xff (erased). Blocks for another family or not for the main flash are
    left out, as the boot loader leaves them; Uf2Error for anything else it would refuse."""
    if len(data) % BLOCK_SIZE or not data:
        raise Uf2Error(f"{len(data)} bytes is not a whole number of 512-byte UF2 blocks")
    flash = bytearray()
    for at in range(0, len(data), BLOCK_SIZE):
        magic0, magic1, flags, address, length, _n, _count, block_family = _HEAD.unpack_from(
            data, at
        )
        number = at // BLOCK_SIZE
        if (magic0, magic1) != (MAGIC_START0, MAGIC_START1) or data[
            at + BLOCK_SIZE - 4 : at + BLOCK_SIZE
        ] != _TAIL:
            raise Uf2Error(f"block {number} is not a UF2 block (its magic numbers are wrong)")
        if flags & FLAG_NOT_MAIN_FLASH or not (flags & FLAG_FAMILY) or block_family != family:
            continue
        if length != PAYLOAD_SIZE or address % PAYLOAD_SIZE:
            raise Uf2Error(
                f"block {number} writes {length} bytes at 0x{address:08x}: the RP2040's boot "
                "loader takes 256 bytes at a 256-byte boundary"
            )
        offset = address - base
        if not 0 <= offset <= size - PAYLOAD_SIZE:
            raise Uf2Error(
                f"block {number} writes at 0x{address:08x}, outside the flash "
                f"(0x{base:08x} to 0x{base + size:08x})"
            )
        if len(flash) < offset + PAYLOAD_SIZE:
            flash.extend(b"\xff" * (offset + PAYLOAD_SIZE - len(flash)))
        payload = at + _HEAD.size
        flash[offset : offset + PAYLOAD_SIZE] = data[payload : payload + PAYLOAD_SIZE]
    if not flash:
        raise Uf2Error(f"no block of the file is for the flash of family 0x{family:08x}")
    return bytes(flash)
