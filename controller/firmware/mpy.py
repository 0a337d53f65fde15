"""Whether a board's MicroPython can load a build's ``.mpy`` files, before they are copied.

A ``.mpy`` file begins ``M``, its format version, its feature flags (bits 2..5: the native
architecture, 0 for bytecode alone; bits 0..1: the format's sub-version) and the bits of a small
integer. MicroPython says what it loads in ``sys.implementation._mpy``: the version in bits 0..7,
the sub-version in bits 8..9, its architecture in bits 10..13. It loads a file whose version is
its own; a file with native code also needs its architecture and sub-version (MicroPython's
"MicroPython .mpy files"). The build's files are bytecode alone (mpy-cross without ``-march``),
so the version decides; one that does not match leaves a board that cannot start its firmware.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from controller.firmware import FirmwareError

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


def build_format(directory: Path, paths: list[str]) -> Format:
    """The format of the build's .mpy files (the first one's; FirmwareError if one differs)."""
    found: Format | None = None
    for path in paths:
        if not path.endswith(".mpy"):
            continue
        here = Format.of_file((directory / path).read_bytes()[:4])
        if here is None:
            raise FirmwareError(f"{directory / path} is not a .mpy file: build again")
        if found is not None and here != found:
            raise FirmwareError(f"{directory / path} is of another .mpy format: build again")
        found = found or here
    if found is None:
        raise FirmwareError(f"{directory} holds no .mpy file: build again")
    return found


def loadable_problem(board_mpy: int, build: Format) -> str | None:
    """Why a board whose ``sys.implementation._mpy`` is ``board_mpy`` cannot load the build's
    files, in one line; None when it can."""
    needs = RELEASES.get(build.version, f"one that loads .mpy version {build.version}")
    todo = (
        f"copy the UF2 of a MicroPython {needs} onto the board (hold BOOTSEL while plugging it "
        "in), then run this again"
    )
    if board_mpy < 0:
        return f"the board's MicroPython loads no .mpy files, this build is of them: {todo}"
    board = Format.of_board(board_mpy)
    if board.loads(build):
        return None
    return (
        f"the board's MicroPython loads .mpy version {board.version}.{board.sub_version}, this "
        f"build's files are version {build.version}.{build.sub_version}: {todo}"
    )
