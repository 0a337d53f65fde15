"""Whether a board's MicroPython can load a build's ``.mpy`` files, before they are copied.

A ``.mpy`` file begins ``M``, its format version, its feature flags (bits 2..5: the native
architecture, 0 for bytecode alone; bits 0..1: the format's sub-version) and the bits of a small
integer. MicroPython says what it loads in ``sys.implementation._mpy``: the version in bits 0..7,
the sub-version in bits 8..9, its architecture in bits 10..13. It loads a file whose version is
its own; a file with native code also needs its architecture and sub-version (MicroPython's
"MicroPython .mpy files"). The build's files are bytecode (mpy-cross without ``-march``), but
for the frames' CRC in the Pico's machine code (firmware/hal/rp2crc.py, ``-march=armv6m``): a
board loads the build when its version is the board's and, for that file, its architecture and
sub-version too. One that does not match leaves a board that cannot start its firmware.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from controller.firmware import FirmwareError, words

#: the MicroPython releases that load each .mpy format version (bytecode)
RELEASES = {3: "1.9.3 to 1.11", 5: "1.12 to 1.18", 6: "1.19 or newer"}
#: what the board prints for sys.implementation._mpy (absent: it loads no .mpy file at all)
QUERY = "import sys\nprint(getattr(sys.implementation, '_mpy', -1))"


@dataclass(frozen=True)
class Format:
    """A .mpy format: version, sub-version, native architecture (0: bytecode alone)."""

    version: int
    sub_version: int
    arch: int

    @classmethod
    def of_file(cls, data: bytes) -> Format | None:
        """The format of a .mpy file's header; None when it is not one."""
        if len(data) < 4 or data[0] != ord("M"):
            return None
        return cls(data[1], data[2] & 3, data[2] >> 2)

    @classmethod
    def of_board(cls, mpy: int) -> Format:
        """The format a board loads, from its ``sys.implementation._mpy``."""
        return cls(mpy & 0xFF, (mpy >> 8) & 3, (mpy >> 10) & 0x0F)

    def loads(self, file: Format) -> bool:
        """Whether a board of this format loads ``file``."""
        if file.version != self.version:
            return False
        return file.arch == 0 or (file.arch == self.arch and file.sub_version == self.sub_version)


#: the native architectures a build may hold machine code for, in words
ARCHES = {4: "armv6m (the Raspberry Pi Pico's RP2040)"}


def build_format(directory: Path, paths: list[str]) -> Format:
    """What a board must load for the build's .mpy files: their version, with the architecture
    and sub-version of those that hold machine code (bytecode alone: arch 0); FirmwareError
    when a file's version, or a native file's format, differs from another's."""
    version: int | None = None
    native: Format | None = None
    for path in paths:
        if not path.endswith(".mpy"):
            continue
        here = Format.of_file((directory / path).read_bytes()[:4])
        if here is None:
            raise FirmwareError(words.NOT_MPY.format(path=directory / path))
        if (version is not None and here.version != version) or (
            here.arch and native is not None and here != native
        ):
            raise FirmwareError(words.OTHER_FORMAT.format(path=directory / path))
        version = here.version
        if here.arch:
            native = here
    if version is None:
        raise FirmwareError(words.NO_MPY.format(folder=directory))
    return native if native is not None else Format(version, 0, 0)


def loadable_problem(board_mpy: int, build: Format) -> str | None:
    """Why a board whose ``sys.implementation._mpy`` is ``board_mpy`` cannot load the build's
    files, in one line; None when it can."""
    needs = RELEASES.get(build.version, words.LOADS_VERSION.format(version=build.version))
    todo = words.COPY_UF2.format(needs=needs)
    if board_mpy < 0:
        return words.LOADS_NO_MPY.format(todo=todo)
    board = Format.of_board(board_mpy)
    if board.loads(build):
        return None
    if board.version == build.version:  # the machine code: another chip, or another ABI
        return words.OTHER_MACHINE_CODE.format(
            arch=ARCHES.get(build.arch, words.ARCHITECTURE.format(arch=build.arch)),
            build=f"{build.version}.{build.sub_version}",
            board_arch=ARCHES.get(board.arch, words.ARCHITECTURE.format(arch=board.arch)),
            board=f"{board.version}.{board.sub_version}",
        )
    return words.OTHER_MPY.format(
        board=f"{board.version}.{board.sub_version}",
        build=f"{build.version}.{build.sub_version}",
        todo=todo,
    )
