"""`mjtable firmware image`: the build frozen into MicroPython by the shared folder's script,
written as the UF2 of what the script built; each thing that stops it is one line. The script
here is a stand-in that writes a small image (the real build takes minutes:
tests/chip/test_image.py boots the real one on the emulated chip)."""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pytest

from cli import main
from controller.firmware import FirmwareError
from controller.firmware import image as image_module
from controller.firmware.build import build
from controller.firmware.image import (
    FROZEN_BIN,
    IMAGE_MODULE,
    IMAGE_ROOM,
    SCRIPT,
    SOURCES,
    image_manifest,
    make_image,
)
from controller.firmware.image import (
    image_module as image_module_source,
)
from drivers.uf2 import from_uf2, to_uf2
from firmware.buildinfo import build_id
from simulator.chip.flash import FS_OFFSET
from simulator.chip.image import frozen_build

#: the stand-in for build-image.sh: keeps the manifest it was given, writes FAKE_SIZE bytes, or
#: fails as a compiler does
FAKE_SCRIPT = f"""#!/bin/bash
set -e
mkdir -p "$1"
cp "$2" "$WORK/manifest-given.py"
echo "compiling"
if [ -n "$FAKE_FAIL" ]; then echo "$FAKE_FAIL" >&2; exit 2; fi
head -c "${{FAKE_SIZE:-1000}}" /dev/zero | tr '\\0' 'A' > "$1/{FROZEN_BIN}"
"""


@pytest.fixture
def shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "shared"
    where.mkdir()
    (where / SCRIPT).write_text(FAKE_SCRIPT)
    (where / SOURCES).write_bytes(b"")
    monkeypatch.setattr(image_module, "missing_toolchain", lambda: [])
    return where


def test_the_image_is_the_uf2_of_micropython_built_with_the_build_frozen_in(
    source: Path, shared: Path, tmp_path: Path
) -> None:
    said: list[str] = []
    work = tmp_path / "work"
    made = make_image(source, tmp_path / "fw.uf2", shared, tiles=144, work=work, say=said.append)
    assert (tmp_path / "fw.uf2").read_bytes() == to_uf2(b"A" * 1000)
    assert made.size == 1000 and made.tiles == 144
    expected = build(source, tmp_path / "again", tiles=144).manifest
    assert made.build.manifest.build_hash == expected.build_hash
    # the manifest given to MicroPython: the stock frozen modules, the build's .mpy files as
    # they are, its main.py, and the module with the build's manifest
    given = (work / "manifest-given.py").read_text()
    modules = tuple(e.path for e in expected.files if e.path.endswith(".mpy"))
    directory = str(work / "frozen" / "build")
    assert given.splitlines() == [
        'include("$(PORT_DIR)/boards/manifest.py")',
        f"freeze_mpy({directory!r}, {modules!r})",
        f"freeze({directory!r}, 'main.py')",
        f"freeze({str(work / 'frozen' / 'extra')!r}, '{IMAGE_MODULE}.py')",
    ]
    assert "TILES = 144" in (work / "frozen" / "build" / "main.py").read_text()
    assert any("into MicroPython v1.27.0" in line for line in said)


def test_the_frozen_manifest_gives_the_board_its_build_and_the_host_the_image_s(
    source: Path, tmp_path: Path
) -> None:
    made = build(source, tmp_path / "build", tiles=108)
    namespace: dict[str, object] = {}
    exec(image_module_source(made, 108), namespace)  # the module we generate
    frozen = namespace["MANIFEST"]
    assert isinstance(frozen, bytes) and frozen == image_manifest(made, 108)
    assert build_id(frozen) == made.manifest.build_hash[:16]  # what the firmware reports
    assert json.loads(frozen) == {
        "firmware_version": "2.3.4",
        "build_hash": made.manifest.build_hash,
        "tiles": 108,
    }
    # in the flash image, as MicroPython freezes a bytes constant: among other bytes
    flash = os.urandom(4000) + frozen + os.urandom(4000)
    assert frozen_build(flash) == ("2.3.4", made.manifest.build_hash, 108)
    assert frozen_build(os.urandom(4000).replace(b"{", b"(")) == ("", "", 0)


def test_a_failed_build_is_one_line_with_its_last_words_and_its_log(
    source: Path, shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_FAIL", "main.c:12: error: no space left")
    with pytest.raises(FirmwareError) as caught:
        make_image(source, tmp_path / "fw.uf2", shared, work=tmp_path / "work")
    text = str(caught.value)
    assert "MicroPython's build failed (main.c:12: error: no space left)" in text
    assert str(tmp_path / "work" / "build.log") in text and "\n" not in text
    assert not (tmp_path / "fw.uf2").exists()


def test_an_image_that_runs_into_the_file_system_is_refused(
    source: Path, shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert IMAGE_ROOM == FS_OFFSET  # the Pico's file system, as the chip lays it out
    monkeypatch.setenv("FAKE_SIZE", str(IMAGE_ROOM + 1))
    with pytest.raises(FirmwareError, match=f"takes {IMAGE_ROOM + 1} bytes of flash, more than"):
        make_image(source, tmp_path / "fw.uf2", shared, work=tmp_path / "work")
    assert not (tmp_path / "fw.uf2").exists()


def test_a_missing_toolchain_is_named_with_what_to_install(
    source: Path, shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(image_module, "missing_toolchain", lambda: ["gcc-arm-none-eabi"])
    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # not root: the script cannot install it
    with pytest.raises(FirmwareError) as caught:
        make_image(source, tmp_path / "fw.uf2", shared, work=tmp_path / "work")
    assert str(caught.value) == (
        "Debian's Arm toolchain is missing (gcc-arm-none-eabi): install it as root (apt-get "
        "install --no-install-recommends gcc-arm-none-eabi), then run this again"
    )


def test_the_image_round_trips_through_the_uf2() -> None:
    image = os.urandom(5000)
    assert from_uf2(to_uf2(image))[:5000] == image


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def test_the_command_writes_the_image_and_says_how_to_flash_it(
    source: Path, shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    out = tmp_path / "fw.uf2"
    status, said, err = run(
        ["firmware", "image", "--source", str(source), "--rp2040", str(shared), "--out", str(out)]
    )
    assert (status, err) == (0, "")
    assert out.read_bytes() == to_uf2(b"A" * 1000)
    last = said.splitlines()[-1]
    assert last.startswith(f"wrote {out}: firmware 2.3.4, build ")
    assert "136 tiles, 1000 bytes of flash" in last and "hold BOOTSEL" in last
    assert (tmp_path / "cache" / "mjtable" / "micropython-rp2" / "build.log").is_file()


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--rp2040", "{tmp}/nowhere"], "no build-image.sh in {tmp}/nowhere: the image is built"),
        (["--out", "{tmp}"], "is a directory: give the UF2 file to write"),
        (["--out", "{tmp}/no/such/fw.uf2"], "no directory {tmp}/no/such to write fw.uf2 in"),
    ],
)
def test_what_stops_the_command_is_one_line(
    argv: list[str], said: str, source: Path, shared: Path, tmp_path: Path
) -> None:
    args = [a.format(tmp=tmp_path) for a in argv]
    if "--rp2040" not in args:
        args += ["--rp2040", str(shared)]
    status, _out, err = run(["firmware", "image", "--source", str(source), *args])
    assert status == 1
    assert len(err.splitlines()) == 1 and said.format(tmp=tmp_path) in err, err
