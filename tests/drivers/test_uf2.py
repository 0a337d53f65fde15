"""UF2, the Pico's boot loader's file: written as MicroPython's own UF2 of its stock image is, byte
for byte, and read back as the boot loader writes it, refusing what it would refuse."""

from __future__ import annotations

import hashlib
import re
import struct

import pytest

from drivers.uf2 import (
    BLOCK_SIZE,
    FLAG_FAMILY,
    FLAG_NOT_MAIN_FLASH,
    FLASH_BASE,
    MAGIC_END,
    MAGIC_START0,
    MAGIC_START1,
    RP2040_FAMILY,
    Uf2Error,
    from_uf2,
    is_uf2,
    to_uf2,
)
from simulator.chip.exchange import shared_folder

STOCK = "RPI_PICO-v1.27.0"


def test_the_uf2_of_the_stock_image_is_micropythons_own() -> None:
    shared = shared_folder()
    lines = (shared / "SHA256SUMS").read_text().splitlines()
    sums = {name: digest for digest, name in (line.split() for line in lines)}
    image = (shared / f"{STOCK}.bin").read_bytes()
    made = to_uf2(image)
    assert hashlib.sha256(made).hexdigest() == sums[f"{STOCK}.uf2"]
    assert made == (shared / f"{STOCK}.uf2").read_bytes()
    assert from_uf2(made)[: len(image)] == image


def test_each_block_carries_256_bytes_at_its_address_for_the_rp2040() -> None:
    image = bytes(range(256)) * 2 + b"tail"
    made = to_uf2(image)
    assert len(made) == 3 * BLOCK_SIZE and is_uf2(made)
    for number in range(3):
        block = made[number * BLOCK_SIZE : (number + 1) * BLOCK_SIZE]
        head = struct.unpack_from("<8I", block)
        assert head == (
            MAGIC_START0,
            MAGIC_START1,
            FLAG_FAMILY,
            FLASH_BASE + 256 * number,
            256,
            number,
            3,
            RP2040_FAMILY,
        )
        assert block[32 : 32 + 256] == image[256 * number : 256 * (number + 1)].ljust(256, b"\0")
        assert block[32 + 256 : -4] == bytes(476 - 256)
        assert struct.unpack_from("<I", block, BLOCK_SIZE - 4) == (MAGIC_END,)
    assert from_uf2(made) == image.ljust(768, b"\0")


def _block(
    address: int, number: int, flags: int = FLAG_FAMILY, family: int = RP2040_FAMILY
) -> bytes:
    head = struct.pack("<8I", MAGIC_START0, MAGIC_START1, flags, address, 256, number, 9, family)
    return head + bytes([number]) * 256 + bytes(220) + struct.pack("<I", MAGIC_END)


def test_blocks_are_written_where_they_say_in_any_order_gaps_left_erased() -> None:
    data = _block(FLASH_BASE + 512, 0) + _block(FLASH_BASE, 1)
    assert from_uf2(data) == b"\x01" * 256 + b"\xff" * 256 + b"\x00" * 256


def test_blocks_of_another_family_or_not_for_the_flash_are_left_out() -> None:
    data = (
        _block(FLASH_BASE, 1)
        + _block(FLASH_BASE + 256, 2, family=0xE48BFF59)  # an RP2350's
        + _block(FLASH_BASE + 512, 3, flags=FLAG_FAMILY | FLAG_NOT_MAIN_FLASH)
    )
    assert from_uf2(data) == b"\x01" * 256
    with pytest.raises(Uf2Error, match="no block of the file is for the flash of family"):
        from_uf2(_block(FLASH_BASE, 1, family=0xE48BFF59))


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"", "0 bytes is not a whole number of 512-byte UF2 blocks"),
        (b"UF2\n" * 100, "400 bytes is not a whole number"),
        (bytes(512), "block 0 is not a UF2 block"),
        (_block(FLASH_BASE, 0)[:-4] + b"\0\0\0\0", "block 0 is not a UF2 block"),
        (_block(FLASH_BASE + 8, 0), "at 0x10000008: the RP2040's boot loader takes 256 bytes"),
        (_block(0x20000000, 0), "writes at 0x20000000, outside the flash"),
        (_block(FLASH_BASE - 256, 0), "outside the flash"),
    ],
)
def test_what_the_boot_loader_would_refuse_is_one_line(data: bytes, said: str) -> None:
    with pytest.raises(Uf2Error, match=re.escape(said)) as caught:
        from_uf2(data, size=2 * 1024 * 1024)
    assert "\n" not in str(caught.value)


def test_an_empty_image_makes_no_uf2_and_other_bytes_are_not_one() -> None:
    with pytest.raises(Uf2Error, match="an empty image makes no UF2"):
        to_uf2(b"")
    assert not is_uf2(b"\x00" * 600)
    assert not is_uf2(b"UF2")
