"""The manifest of a firmware build: what a board must hold, file by file.

    {"format": 1, "firmware_version": "1.0.0", "build_hash": "<sha256>", "compiler": "...",
     "files": [{"path": "firmware/app.mpy", "sha256": "<sha256>", "size": 4321}, ...]}

Paths are relative to the board's root (``main.py`` is ``/main.py`` on the board), in sorted order.
The build hash is the SHA-256 of the lines ``<sha256>  <path>\\n`` of every file in that order,
the lines ``sha256sum`` prints, so it can be recomputed by hand (docs/firmware.md shows how).
The manifest travels with the build (``manifest.json`` beside the files) and onto the board
(``/manifest.json``), where the firmware reads its build hash for HELLO_REPLY and BOARD_STATUS.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from controller.firmware import FirmwareError, words
from firmware.buildinfo import build_hash as shared_build_hash

#: the manifest's name in a build directory and on the board (at its root)
MANIFEST_NAME = "manifest.json"
FORMAT = 1


@dataclass(frozen=True)
class FileEntry:
    path: str
    sha256: str
    size: int


@dataclass(frozen=True)
class Manifest:
    firmware_version: str
    build_hash: str
    compiler: str
    files: tuple[FileEntry, ...]

    @classmethod
    def of_files(cls, firmware_version: str, compiler: str, root: Path) -> Manifest:
        """The manifest of every file under ``root`` (a build directory, manifest excluded)."""
        entries = []
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            rel = path.relative_to(root).as_posix()
            if rel == MANIFEST_NAME:
                continue
            data = path.read_bytes()
            entries.append(FileEntry(rel, hashlib.sha256(data).hexdigest(), len(data)))
        entries.sort(key=lambda e: e.path.encode())
        return cls(firmware_version, build_hash(entries), compiler, tuple(entries))

    def to_json(self) -> str:
        return (
            json.dumps(
                {
                    "format": FORMAT,
                    "firmware_version": self.firmware_version,
                    "build_hash": self.build_hash,
                    "compiler": self.compiler,
                    "files": [
                        {"path": e.path, "sha256": e.sha256, "size": e.size} for e in self.files
                    ],
                },
                indent=1,
            )
            + "\n"
        )

    @classmethod
    def load(cls, directory: Path) -> Manifest:
        """The manifest of a build directory; FirmwareError when it is missing or unreadable."""
        path = directory / MANIFEST_NAME
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("format") != FORMAT:
                raise ValueError(f"format {data.get('format')!r}, expected {FORMAT}")
            files = tuple(
                FileEntry(str(f["path"]), str(f["sha256"]), int(f["size"])) for f in data["files"]
            )
            manifest = cls(
                str(data["firmware_version"]), str(data["build_hash"]), str(data["compiler"]), files
            )
        except FileNotFoundError:
            raise FirmwareError(
                words.NO_MANIFEST.format(name=MANIFEST_NAME, folder=directory)
            ) from None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise FirmwareError(words.NOT_A_MANIFEST.format(path=path, why=exc)) from None
        if build_hash(files) != manifest.build_hash:
            raise FirmwareError(words.HASH_DIFFERS.format(path=path))
        return manifest

    def check_files(self, directory: Path) -> None:
        """FirmwareError naming the first file of the build that is not what the manifest says."""
        for entry in self.files:
            path = directory / entry.path
            try:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            except OSError:
                raise FirmwareError(words.MISSING_FILE.format(path=path)) from None
            if digest != entry.sha256:
                raise FirmwareError(words.FILE_DIFFERS.format(path=path)) from None


def build_hash(entries: tuple[FileEntry, ...] | list[FileEntry]) -> str:
    """SHA-256 of ``<sha256>  <path>\\n`` for every file, sorted by path (sha256sum's lines):
    firmware/buildinfo.py's, the one computation the simulator uses too."""
    return shared_build_hash((e.path, e.sha256) for e in entries)
