"""The image the chip boots instead of MicroPython's stock one: the UF2 a technician copies onto a
Pico (``mjtable firmware image``: MicroPython with the board's firmware frozen in), or the same
flash image as a raw ``.bin`` from address 0x10000000.

``load_image`` gives the flash it writes, checked to end before MicroPython's file system, and
the build frozen into it: the one line of JSON of its ``mjtable_image.MANIFEST`` (firmware
version, build hash, tiles), which lies in the image as it was written, since MicroPython
freezes a bytes constant as it is (controller/firmware/image.py makes it).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from drivers.uf2 import Uf2Error, from_uf2, is_uf2
from simulator.chip.flash import FLASH_SIZE, FS_OFFSET
from simulator.transport import SimulatorError

#: how the frozen manifest begins (its first key), in the image's bytes
_MARK = b'{"firmware_version": "'


@dataclass(frozen=True)
class ChipImage:
    #: the flash from its first byte, as the image writes it
    flash: bytes
    #: the build frozen into it; "" and 0 when it holds none (a stock MicroPython image)
    firmware_version: str
    build_hash: str
    tiles: int


def load_image(path: Path) -> ChipImage:
    """The image in ``path`` (UF2 or raw); SimulatorError in one line when it cannot boot."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SimulatorError(f"cannot read the image {path}: {exc.strerror}") from None
    if is_uf2(data):
        try:
            data = from_uf2(data, size=FLASH_SIZE)
        except Uf2Error as exc:
            raise SimulatorError(f"{path} is not a UF2 for the Pico: {exc}") from None
    if len(data) > FS_OFFSET:
        raise SimulatorError(
            f"the image {path} writes {len(data)} bytes of flash, past 0x{FS_OFFSET:x} where "
            "MicroPython's file system begins: not an image for MicroPython on the Pico"
        )
    version, build_hash, tiles = frozen_build(data)
    return ChipImage(data, version, build_hash, tiles)


def frozen_build(flash: bytes) -> tuple[str, str, int]:
    """(firmware version, build hash, tiles) of the manifest frozen into a flash image; ("", "",
    0) when it holds none."""
    at = flash.find(_MARK)
    end = flash.find(b"}", at)
    if at < 0 or end < 0:
        return "", "", 0
    try:
        fields = json.loads(flash[at : end + 1])
        return str(fields["firmware_version"]), str(fields["build_hash"]), int(fields["tiles"])
    except (ValueError, KeyError, TypeError):
        return "", "", 0


def write_image(image: ChipImage, target: Path) -> None:
    """The raw flash image for the runner (``--image``)."""
    try:
        target.write_bytes(image.flash)
    except OSError as exc:
        raise SimulatorError(f"cannot write the chip's image to {target}: {exc.strerror}") from None


def erased_flash(target: Path) -> None:
    """A file system region as a new Pico's flash holds it: erased (MicroPython formats it at
    its first boot)."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(b"\xff" * (FLASH_SIZE - FS_OFFSET))
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise SimulatorError(f"cannot write the chip's flash to {target}: {exc.strerror}") from None
