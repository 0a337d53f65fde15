"""`mjtable sim --chip` refuses what it cannot do in one line and status 2, before it starts
anything: options of the CPython simulator the chip does not take, a fault that means nothing on
a chip, a build or a flash that is not one, the shared folder or Node.js missing. No emulator
runs here."""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

import pytest

from cli import main
from drivers.uf2 import to_uf2
from simulator.chip.flash import FS_OFFSET, FS_SIZE, flash_build_hash


def refusal(argv: list[str]) -> str:
    """``mjtable ARGV``'s one line on stderr; the status must be 2 and stdout empty."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    lines = err.getvalue().splitlines()
    assert (status, out.getvalue(), len(lines)) == (2, "", 1), (status, out.getvalue(), lines)
    assert "characters)" not in lines[0], f"the line was clipped: {lines[0]}"
    return lines[0]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--build", "x"], "--build only goes with --chip"),
        (["--chip", "--fault", "internal"], "fault 'internal' does not go with the chip: it "),
        (["--chip", "--fault", "jam@lift"], "jam cannot strike in phase lift"),
        (["--chip", "--no-reader"], "--no-reader does not go with --chip"),
        (["--chip", "--serial", "X"], "--serial does not go with --chip"),
        (["--chip", "--speed", "0.5"], "--speed 0.5 with --chip"),
        (["--chip", "--build", "/no/such/dir"], "--build /no/such/dir: no such directory"),
        (["--image", "x.uf2"], "--image only goes with --chip"),
        (["--chip", "--build", "b", "--image", "x.uf2"], "--build and --image: choose one"),
        (["--chip", "--image", "/no/such.uf2"], "--image /no/such.uf2: no such file"),
        (["--chip", "--tiles", "100"], "tiles = 100: must be one of 108, 136, 144"),
        (["--chip", "--seed", "-1"], "seed -1: must be an integer 0..4294967295"),
    ],
)
def test_what_the_chip_does_not_take(argv: list[str], said: str) -> None:
    assert said in refusal(["sim", "--pty", *argv])


def fake_shared(where: Path) -> Path:
    """A folder with the shared files' names (only the runner reads them)."""
    where.mkdir()
    for name in ("RPI_PICO-v1.27.0.bin", "bootrom-rp2040-b1.bin"):
        (where / name).write_bytes(b"")
    return where


def test_a_missing_shared_folder_is_named(firmware_build: Path, tmp_path: Path) -> None:
    line = refusal(
        ["sim", "--chip", "--pty", "--build", str(firmware_build), "--rp2040", str(tmp_path)]
    )
    assert f"no RPI_PICO-v1.27.0.bin in {tmp_path}" in line


def test_a_directory_that_holds_no_build_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = fake_shared(tmp_path / "shared")
    (tmp_path / "empty").mkdir()
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    line = refusal(
        ["sim", "--chip", "--pty", "--build", str(tmp_path / "empty"), "--rp2040", str(shared)]
    )
    assert "holds no firmware build" in line
    assert not list((tmp_path / "tmp").iterdir()), "the temporary flash is left behind"


def test_a_flash_that_is_no_file_system_is_refused(firmware_build: Path, tmp_path: Path) -> None:
    shared = fake_shared(tmp_path / "shared")
    (tmp_path / "flash.lfs").write_bytes(b"\xff" * 4096)
    argv = ["sim", "--chip", "--pty", "--build", str(firmware_build), "--rp2040", str(shared)]
    assert f"holds 4096 bytes, not {FS_SIZE}" in refusal(
        [*argv, "--flash", str(tmp_path / "flash.lfs")]
    )
    assert "is not a file" in refusal([*argv, "--flash", str(tmp_path)])


def test_node_missing_is_named(
    firmware_build: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = fake_shared(tmp_path / "shared")
    monkeypatch.setenv("PATH", str(tmp_path))  # no node there
    line = refusal(
        ["sim", "--chip", "--pty", "--build", str(firmware_build), "--rp2040", str(shared)]
    )
    assert "node (Node.js) is not on PATH" in line


def test_an_erased_flash_holds_no_build(tmp_path: Path) -> None:
    (tmp_path / "flash.lfs").write_bytes(b"\xff" * FS_SIZE)  # MicroPython formats it at boot
    assert flash_build_hash(tmp_path / "flash.lfs") == ""


def test_faults_and_the_control_channel_go_with_the_chip(
    firmware_build: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = fake_shared(tmp_path / "shared")
    monkeypatch.setenv("PATH", str(tmp_path))  # no node: the start stops at the runner
    scenario = tmp_path / "faults.toml"
    scenario.write_text('[[fault]]\nspec = "jam@build:wall=1"\n')
    sock = tmp_path / "control.sock"
    argv = ["sim", "--chip", "--pty", "--build", str(firmware_build), "--rp2040", str(shared)]
    line = refusal(
        [*argv, "--fault", "stall@shuffle", "--scenario", str(scenario), "--control", str(sock)]
    )
    assert "node (Node.js) is not on PATH" in line  # the faults and the channel were taken
    assert not sock.exists()  # the channel's socket was removed on the way out
    scenario.write_text('[[fault]]\nkind = "internal"\n')
    line = refusal([*argv, "--scenario", str(scenario)])
    assert line.startswith("mjtable sim: fault 'internal' does not go with the chip: it raises")


def test_an_image_for_another_table_or_that_is_no_image_is_refused(tmp_path: Path) -> None:
    shared = fake_shared(tmp_path / "shared")
    frozen = b'{"firmware_version": "1.0.0", "build_hash": "' + b"ab" * 32 + b'", "tiles": 144}'
    image = tmp_path / "fw.uf2"
    image.write_bytes(to_uf2(b"\x00" * 1000 + frozen))
    argv = ["sim", "--chip", "--pty", "--rp2040", str(shared), "--image", str(image)]
    line = refusal(argv)
    assert f"the image {image} drives 144 tiles (the build frozen into it), not 136" in line
    image.write_bytes(to_uf2(b"\x00" * (FS_OFFSET + 1)))
    assert "past 0xa0000 where MicroPython's file system begins" in refusal(argv)
    image.write_bytes(to_uf2(b"\x00" * 1000)[:-1])
    assert f"{image} is not a UF2 for the Pico: 2047 bytes is not a whole" in refusal(argv)
