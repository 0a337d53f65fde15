"""Flash a build onto a board and verify what the board holds, file by file.

Flash: first, whether the board runs the image of `mjtable firmware image` (its modules frozen
in, which it runs whatever files are copied onto it) and whether its MicroPython can load the
build's ``.mpy`` files (mpy.py): nothing is copied to a board that would not run them. The
board's manifest is removed first and written last, so a flash cut short (a cable pulled, a
reset) leaves a board that verify reports as incomplete rather than one that claims a build it
does not hold. Then the directories, then the removal of files of ours the build does
not have (an old ``.py`` would shadow a new ``.mpy``: MicroPython prefers the source), then every
module, ``main.py`` after them, and the manifest.

Verify: the SHA-256 of every file of the manifest, and of the manifest itself, computed on the
board and compared with the build: OK, DIFFERS or MISSING for each.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from controller.firmware import FirmwareError, words
from controller.firmware.board import Board
from controller.firmware.manifest import MANIFEST_NAME, Manifest
from controller.firmware.mpy import build_format, loadable_problem

OK = "OK"
DIFFERS = "DIFFERS"
MISSING = "MISSING"

#: (path on the board, bytes written, size) after each chunk
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class Check:
    path: str  # relative to the board's root
    status: str  # OK, DIFFERS or MISSING


def flash(board: Board, directory: Path, manifest: Manifest, progress: Progress) -> list[str]:
    """Copy the build in ``directory`` onto the board; the stale files removed (their paths).
    FirmwareError, before anything is copied, when the board's MicroPython cannot load the
    build's .mpy files."""
    manifest.check_files(directory)
    frozen = board.image_build()
    if frozen is not None:
        raise FirmwareError(words.RUNS_IMAGE.format(build=_image_words(frozen)))
    problem = loadable_problem(
        board.mpy_format(), build_format(directory, [e.path for e in manifest.files])
    )
    if problem is not None:
        raise FirmwareError(problem)
    board.remove("/" + MANIFEST_NAME)
    parents = sorted(
        {p for e in manifest.files for p in _parents(e.path)}, key=lambda p: p.count("/")
    )
    board.make_dirs(["/" + p for p in parents])
    tops = sorted({e.path.split("/")[0] for e in manifest.files if "/" in e.path})
    removed = board.remove_others(["/" + t for t in tops], {"/" + e.path for e in manifest.files})
    entries = sorted(manifest.files, key=lambda e: (e.path == "main.py", e.path.encode()))
    for entry in entries:
        data = (directory / entry.path).read_bytes()
        _write(board, entry.path, data, progress)
    _write(board, MANIFEST_NAME, (directory / MANIFEST_NAME).read_bytes(), progress)
    return removed


def _image_words(frozen: str) -> str:
    """``firmware 1.0.0, build 0294fda57d315958`` from the image's frozen manifest."""
    try:
        data = json.loads(frozen)
        firmware, build = data["firmware_version"], str(data["build_hash"])[:16]
        return words.IMAGE_BUILD.format(firmware=firmware, build=build)
    except (ValueError, KeyError, TypeError):
        return words.UNNAMED_BUILD


def _write(board: Board, path: str, data: bytes, progress: Progress) -> None:
    progress(path, 0, len(data))
    board.write("/" + path, data, lambda written, size: progress(path, written, size))


def _parents(path: str) -> list[str]:
    parts = path.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def verify(
    board: Board, directory: Path, manifest: Manifest, each: Callable[[Check], None]
) -> list[Check]:
    """Compare every file of the build with the board's; ``each(check)`` as each is known."""
    local = (directory / MANIFEST_NAME).read_bytes()
    expected = [(e.path, e.sha256) for e in manifest.files]
    expected.append((MANIFEST_NAME, hashlib.sha256(local).hexdigest()))
    sha256 = board.hasher()
    checks = []
    for path, digest in expected:
        found = sha256("/" + path)
        status = MISSING if found is None else OK if found == digest else DIFFERS
        check = Check(path, status)
        each(check)
        checks.append(check)
    return checks


def board_build(board: Board) -> tuple[str, str] | None:
    """(firmware version, build hash) of the manifest on the board, None without a readable one."""
    text = board.read_text("/" + MANIFEST_NAME)
    if text is None:
        return None
    try:
        data = json.loads(text)
        return str(data["firmware_version"]), str(data["build_hash"])
    except (ValueError, KeyError, TypeError):
        return None
