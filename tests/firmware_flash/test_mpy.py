"""Which .mpy files a board's MicroPython loads: the header of a file against the board's
``sys.implementation._mpy``."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.firmware import FirmwareError
from controller.firmware.mpy import Format, build_format, loadable_problem

#: MicroPython 1.27 on the Pico: .mpy 6.3, armv6m (arch 4)
PICO = 6 | 3 << 8 | 4 << 10


def test_the_build_is_bytecode_but_the_crc_in_the_picos_machine_code(tmp_path: Path) -> None:
    from controller.firmware.build import NATIVE, build, default_source_root

    made = build(default_source_root(), tmp_path / "build")
    paths = [e.path for e in made.manifest.files]
    formats = {p: Format.of_file((made.directory / p).read_bytes()) for p in paths}
    native = {p for p, f in formats.items() if f is not None and f.arch}
    assert native == {p[: -len(".py")] + ".mpy" for p in NATIVE} == {"firmware/hal/rp2crc.mpy"}
    assert build_format(made.directory, paths) == Format(6, 3, 4)
    assert loadable_problem(PICO, Format(6, 3, 4)) is None


def test_a_board_of_another_architecture_is_told_in_one_line() -> None:
    problem = loadable_problem(6 | 3 << 8 | 5 << 10, Format(6, 3, 4))  # an armv7m board
    assert problem is not None and "\n" not in problem
    assert problem.startswith(
        "this build holds machine code for armv6m (the Raspberry Pi Pico's RP2040), .mpy 6.3; "
        "the board's MicroPython runs architecture 5 code of .mpy 6.3"
    )


@pytest.mark.parametrize(
    ("file", "loads"),
    [
        (Format(6, 0, 0), True),  # bytecode: the version alone decides
        (Format(6, 1, 0), True),
        (Format(5, 0, 0), False),
        (Format(6, 3, 4), True),  # native armv6m code of the board's sub-version
        (Format(6, 2, 4), False),
        (Format(6, 3, 5), False),  # armv7m code
    ],
)
def test_what_the_pico_loads(file: Format, loads: bool) -> None:
    assert Format.of_board(PICO).loads(file) is loads


def test_a_board_that_loads_no_mpy_is_told_in_one_line() -> None:
    problem = loadable_problem(-1, Format(6, 0, 0))
    assert problem is not None and "\n" not in problem
    assert problem.startswith("the board's MicroPython loads no .mpy files")
    assert "MicroPython 1.19 or newer" in problem


def test_an_older_board_is_told_which_micropython_to_copy() -> None:
    assert loadable_problem(5 | 4 << 10, Format(6, 0, 0)) == (
        "the board's MicroPython loads .mpy version 5.0, this build's files are version 6.0: "
        "copy the UF2 of a MicroPython 1.19 or newer onto the board (hold BOOTSEL while "
        "plugging it in), then run this again"
    )


def test_a_build_of_mixed_formats_is_built_again(tmp_path: Path) -> None:
    (tmp_path / "a.mpy").write_bytes(b"M\x06\x00\x1f")
    (tmp_path / "b.mpy").write_bytes(b"M\x05\x00\x1f")
    with pytest.raises(FirmwareError, match=r"b\.mpy is of another \.mpy format: build again"):
        build_format(tmp_path, ["a.mpy", "b.mpy", "main.py"])
    # machine code for two architectures
    (tmp_path / "b.mpy").write_bytes(b"M\x06\x13\x1f")
    (tmp_path / "c.mpy").write_bytes(b"M\x06\x17\x1f")
    with pytest.raises(FirmwareError, match=r"c\.mpy is of another \.mpy format: build again"):
        build_format(tmp_path, ["a.mpy", "b.mpy", "c.mpy"])
    assert build_format(tmp_path, ["a.mpy", "b.mpy"]) == Format(6, 3, 4)
    assert Format.of_file(b"not") is None
