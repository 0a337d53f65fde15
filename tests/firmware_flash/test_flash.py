"""`mjtable firmware flash|verify` with the real mpremote against a real MicroPython REPL.

The board is MicroPython's WebAssembly port behind a pty (conftest.py); mpremote's library
opens the pty's other side as it opens /dev/ttyACM0, enters the raw REPL, writes the files
through raw-paste (or the plain raw REPL) and reads their hashes back, computed on the board.
"""

from __future__ import annotations

import os
import tty
from collections.abc import Callable
from pathlib import Path

import pytest
import serial

from cli import main
from controller.firmware import FirmwareError
from controller.firmware.board import Board
from controller.firmware.build import build
from controller.firmware.manifest import Manifest
from controller.firmware.mpy import Format
from tests.firmware_flash.conftest import BUILT, PtyBoard, write_tree

Start = Callable[..., PtyBoard]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["firmware", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("options", [(), ("--no-raw-paste",)], ids=["raw-paste", "raw-repl"])
def test_flash_then_verify_then_the_board_runs_the_build(
    source: Path,
    tmp_path: Path,
    start_board: Start,
    capsys: pytest.CaptureFixture[str],
    options: tuple[str, ...],
) -> None:
    built = build(source, tmp_path / "build")
    board = start_board(*options)
    status, out, err = run(capsys, "flash", "--port", board.port, "--build", str(built.directory))
    assert (status, err) == (0, "")
    for rel in BUILT:
        assert f"  {rel}  " in out and out.index(f"  {rel}  ") < out.index("  manifest.json  ")
    assert out.index("  protocol/codes.mpy  ") < out.index("  main.py  ")  # main.py last
    assert "flashed 9 files" in out.splitlines()[-1]

    status, out, err = run(capsys, "verify", "--port", board.port, "--build", str(built.directory))
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[1:-1] == [f"  OK       {rel}" for rel in [*BUILT, "manifest.json"]]
    assert (
        lines[-1] == f"all 10 files match: firmware 2.3.4, build {built.manifest.build_hash[:16]}"
    )

    with Board(board.port) as mcu:
        # the .mpy files load and run under MicroPython, and the manifest is the build's
        answer = mcu.exec("import sys\nsys.path.insert(0, '/')\nimport main\nprint(main.answer())")
        assert answer.strip() == "42"
        manifest = mcu.read_text("/manifest.json")
        assert manifest == (built.directory / "manifest.json").read_text()


def test_verify_names_each_file_that_differs_or_is_missing(
    source: Path, tmp_path: Path, start_board: Start, capsys: pytest.CaptureFixture[str]
) -> None:
    built = build(source, tmp_path / "build")
    board = start_board()
    assert run(capsys, "flash", "--port", board.port, "--build", str(built.directory))[0] == 0
    with Board(board.port) as mcu:
        mcu.exec("f = open('/firmware/app.mpy', 'ab')\nf.write(b'x')\nf.close()")
        mcu.remove("/protocol/codes.mpy")
    status, out, err = run(capsys, "verify", "--port", board.port, "--build", str(built.directory))
    assert status == 1
    assert "  DIFFERS  firmware/app.mpy\n" in out
    assert "  MISSING  protocol/codes.mpy\n" in out
    assert out.count("  OK       ") == 8
    assert err == (
        "2 of 10 files are not the build's: flash it "
        f"(mjtable firmware flash --port {board.port})\n"
    )


def test_flash_replaces_another_build_and_removes_what_it_does_not_hold(
    source: Path, tmp_path: Path, start_board: Start, capsys: pytest.CaptureFixture[str]
) -> None:
    old = build(source, tmp_path / "old")
    flash_root = tmp_path / "flash"  # what the board's flash holds already
    for entry in old.manifest.files:
        target = flash_root / entry.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((old.directory / entry.path).read_bytes())
    (flash_root / "manifest.json").write_bytes((old.directory / "manifest.json").read_bytes())
    # a source left over would shadow the new .mpy (MicroPython prefers the .py)
    write_tree(flash_root, {"firmware/app.py": "def answer():\n    return 0\n"})
    write_tree(flash_root, {"data/keep.txt": "not ours"})
    write_tree(source, {"protocol/codes.py": "VALUE = 30\n"})
    new = build(source, tmp_path / "new")
    board = start_board("--root", str(flash_root))

    status, out, _ = run(capsys, "verify", "--port", board.port, "--build", str(new.directory))
    assert status == 1
    assert "  DIFFERS  protocol/codes.mpy\n" in out and "  DIFFERS  manifest.json\n" in out
    assert f"the board holds firmware 2.3.4, build {old.manifest.build_hash[:16]}\n" in out

    status, out, _ = run(capsys, "flash", "--port", board.port, "--build", str(new.directory))
    assert status == 0
    assert "  removed /firmware/app.py (not in this build)\n" in out
    assert run(capsys, "verify", "--port", board.port, "--build", str(new.directory))[0] == 0
    with Board(board.port) as mcu:
        assert mcu.read_text("/data/keep.txt") == "not ours"  # outside the firmware's folders
        answer = mcu.exec("import sys\nsys.path.insert(0, '/')\nimport main\nprint(main.answer())")
        assert answer.strip() == "32"


def test_flash_without_a_build_builds_first(
    source: Path, start_board: Start, capsys: pytest.CaptureFixture[str]
) -> None:
    board = start_board()
    status, out, err = run(capsys, "flash", "--port", board.port, "--source", str(source))
    assert (status, err) == (0, "")
    assert out.startswith("building the board's files from ")
    status, _, _ = run(capsys, "verify", "--port", board.port, "--source", str(source))
    assert status == 0


def test_a_build_changed_since_it_was_made_is_not_flashed(
    source: Path, tmp_path: Path, start_board: Start, capsys: pytest.CaptureFixture[str]
) -> None:
    built = build(source, tmp_path / "build")
    (built.directory / "firmware" / "app.mpy").write_bytes(b"M\x06 tampered")
    board = start_board()
    status, _, err = run(capsys, "flash", "--port", board.port, "--build", str(built.directory))
    assert status == 1
    path = built.directory / "firmware" / "app.mpy"
    assert err == f"mjtable firmware: {path} differs from its manifest: build again\n"


def test_a_board_whose_micropython_cannot_load_the_build_is_left_untouched(
    source: Path, tmp_path: Path, start_board: Start, capsys: pytest.CaptureFixture[str]
) -> None:
    built = build(source, tmp_path / "build")
    for path in built.directory.rglob("*.mpy"):  # as an older mpy-cross would have made them
        data = bytearray(path.read_bytes())
        data[1] = 5
        path.write_bytes(bytes(data))
    made = Manifest.of_files("2.3.4", "mpy-cross v1.18", built.directory)
    (built.directory / "manifest.json").write_text(made.to_json())
    board = start_board()
    with Board(board.port) as mcu:
        loads = Format.of_board(mcu.mpy_format())
    status, _, err = run(capsys, "flash", "--port", board.port, "--build", str(built.directory))
    assert status == 1
    assert err == (
        f"mjtable firmware: the board's MicroPython loads .mpy version {loads.version}."
        f"{loads.sub_version}, this build's files are version 5.0: copy the UF2 of a "
        "MicroPython 1.12 to 1.18 onto the board (hold BOOTSEL while plugging it in), then run "
        "this again\n"
    )
    with Board(board.port) as mcu:
        assert mcu.read_text("/manifest.json") is None  # nothing was copied
        assert mcu.read_text("/main.py") is None


def test_a_board_that_runs_the_image_is_left_untouched(
    source: Path, tmp_path: Path, start_board: Start, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Pico flashed with `mjtable firmware image` runs its frozen modules: the .mpy files would
    be copied for nothing, and verify would pass on files the board does not run."""
    built = build(source, tmp_path / "build")
    board = start_board()
    frozen = (
        b'{"firmware_version": "1.0.0", "build_hash": "' + b"0294fda5" * 8 + b'", "tiles": 136}'
    )
    with Board(board.port) as mcu:  # importable as the image's frozen module is
        mcu.make_dirs(["/lib"])
        mcu.write("/lib/mjtable_image.py", b"MANIFEST = " + repr(frozen).encode(), lambda *_: None)
    status, _, err = run(capsys, "flash", "--port", board.port, "--build", str(built.directory))
    assert status == 1
    assert err == (
        "mjtable firmware: the board runs the image of mjtable firmware image (firmware 1.0.0, "
        "build 0294fda50294fda5), which runs its frozen modules whatever files are copied onto "
        "it: copy the new image onto it instead, or MicroPython's own UF2 to flash .mpy files "
        "(hold BOOTSEL while plugging it in), then run this again\n"
    )
    with Board(board.port) as mcu:
        assert mcu.read_text("/manifest.json") is None  # nothing was copied
        assert mcu.read_text("/main.py") is None


# --- ports that are not a board ------------------------------------------------------------


def one_line_error(capsys: pytest.CaptureFixture[str], source: Path, port: str, *more: str) -> str:
    status, _, err = run(capsys, "verify", "--port", port, "--source", str(source), *more)
    assert status == 1 and err.count("\n") == 1 and err.startswith("mjtable firmware: ")
    return err


def test_a_missing_port(source: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = one_line_error(capsys, source, "/dev/ttyACM-none")
    assert "no port /dev/ttyACM-none: is the board plugged in by USB?" in err


def test_a_missing_port_is_found_before_building(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "flash", "--port", "/dev/ttyACM-none", "--source", str(source))
    assert status == 1 and "no port /dev/ttyACM-none" in err
    assert "building" not in out  # nothing compiled for a board that is not there


def test_a_port_without_permission(
    source: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    master, slave = os.openpty()
    try:
        # the tests run as root, whom no mode keeps out: the answer of access() is the user's
        monkeypatch.setattr(os, "access", lambda path, mode: False)
        err = one_line_error(capsys, source, os.ttyname(slave))
        assert "no permission to open" in err and "udev rule" in err
    finally:
        os.close(master)
        os.close(slave)


def test_a_port_where_nothing_answers(source: Path, capsys: pytest.CaptureFixture[str]) -> None:
    master, slave = os.openpty()
    tty.setraw(slave)
    try:
        err = one_line_error(capsys, source, os.ttyname(slave), "--timeout", "1")
        assert "does not answer as a MicroPython board" in err and "UF2" in err
        # what mpremote sent: interrupt, enter the raw REPL
        assert os.read(master, 1024).startswith(b"\r\x03\r\x01")
    finally:
        os.close(master)
        os.close(slave)


def test_a_port_another_program_holds(
    source: Path, start_board: Start, capsys: pytest.CaptureFixture[str]
) -> None:
    board = start_board()
    holder = serial.Serial(board.port, exclusive=True)
    try:
        status, out, err = run(capsys, "verify", "--port", board.port, "--source", str(source))
        assert status == 4 and err.count("\n") == 1, err  # held: before anything is built
        assert err.startswith(f"mjtable firmware: {board.port} is held by pid {os.getpid()} ")
        assert "building" not in out
    finally:
        holder.close()


def test_a_missing_mpremote_is_named(
    source: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(__import__("sys").modules, "mpremote.transport_serial", None)
    err = one_line_error(capsys, source, "/dev/ttyACM0")
    assert err == (
        "mjtable firmware: mpremote, MicroPython's board tool, is not installed: "
        "pip install mpremote\n"
    )


def test_an_error_raised_on_the_board_is_one_line(start_board: Start) -> None:
    board = start_board()
    with Board(board.port) as mcu:
        with pytest.raises(FirmwareError) as info:
            mcu.exec("raise OSError(5)")
        assert str(info.value).startswith("the board raised OSError: [Errno 5] EIO: ")
        assert "\n" not in str(info.value)
        assert mcu.exec("print(6 * 7)") == "42\n"  # and the board still answers
