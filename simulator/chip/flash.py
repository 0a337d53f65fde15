"""The chip's flash file system, made on the host: what `mjtable firmware flash` would copy onto a
Pico, as the littlefs MicroPython's rp2 port mounts at ``/``.

The Pico's 2 MiB flash holds MicroPython's image from offset 0 and the file system in its last
1408 KiB (``MICROPY_HW_FLASH_STORAGE_BYTES`` of the RPI_PICO board): from offset 0xA0000, 352
blocks of 4 KiB, programmed 256 bytes at a time, littlefs on-disk version 2.1. The flash file
the runner keeps is that region alone (the image is read from the shared folder at each start).

littlefs-python (PyPI) makes it; it is a development dependency, imported here only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from simulator.transport import SimulatorError

FLASH_SIZE = 2 * 1024 * 1024
FS_OFFSET = 0xA0000
BLOCK_SIZE = 4096
BLOCK_COUNT = (FLASH_SIZE - FS_OFFSET) // BLOCK_SIZE  # 352
FS_SIZE = BLOCK_SIZE * BLOCK_COUNT
PROG_SIZE = 256
DISK_VERSION = 0x00020001
#: what the flasher writes and the firmware reads (controller/firmware/manifest.py's name)
MANIFEST = "manifest.json"


def _littlefs() -> Any:
    try:
        import littlefs
    except ImportError:
        raise SimulatorError(
            "littlefs-python, which makes the file system of the chip, is not installed: "
            "pip install littlefs-python (a development dependency: pip install -e '.[dev]')"
        ) from None
    return littlefs


def _mount(image: bytes | None = None) -> Any:
    littlefs = _littlefs()
    options = {
        "block_size": BLOCK_SIZE,
        "block_count": BLOCK_COUNT,
        "prog_size": PROG_SIZE,
        "read_size": PROG_SIZE,
        "disk_version": DISK_VERSION,
    }
    if image is None:
        return littlefs.LittleFS(**options)
    context = littlefs.UserContext(len(image))
    context.buffer[:] = image
    return littlefs.LittleFS(context, **options)


def file_system(files: dict[str, bytes]) -> bytes:
    """A formatted file system (FS_SIZE bytes) holding ``files`` ({"/main.py": b"..."})."""
    fs = _mount()
    for name in sorted(files):
        if not name.startswith("/"):
            raise ValueError(f"{name!r}: paths on the board start with /")
        parent = name.rsplit("/", 1)[0]
        if parent:
            fs.makedirs(parent, exist_ok=True)
        with fs.open(name, "wb") as f:
            f.write(files[name])
    return bytes(fs.context.buffer)


def build_files(build: Path) -> dict[str, bytes]:
    """The files of a `mjtable firmware build` directory, as the flasher puts them on a board:
    ``main.py``, the ``.mpy`` modules and the manifest, each at ``/`` + its path in the build."""
    if not (build / MANIFEST).is_file() or not (build / "main.py").is_file():
        raise SimulatorError(
            f"{build} holds no firmware build (main.py and {MANIFEST}): "
            "make one with mjtable firmware build"
        )
    files: dict[str, bytes] = {}
    for path in sorted(build.rglob("*")):
        if path.is_file():
            files["/" + path.relative_to(build).as_posix()] = path.read_bytes()
    return files


def write_flash_file(build: Path, target: Path) -> None:
    """Write the file system of a firmware build to ``target`` (replaced whole, atomically)."""
    image = file_system(build_files(build))
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(image)
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise SimulatorError(f"cannot write the chip's flash to {target}: {exc.strerror}") from None


def read_files(image: bytes, paths: tuple[str, ...] | None = None) -> dict[str, bytes]:
    """Every file of a flash file system image ({"/main.py": b"..."}): what the board holds;
    with ``paths``, those of them that are there."""
    if len(image) != FS_SIZE:
        raise SimulatorError(f"a flash file system is {FS_SIZE} bytes, not {len(image)}")
    try:
        fs = _mount(image)
    except Exception as exc:  # littlefs's own errors: no file system there
        raise SimulatorError(f"no littlefs file system in the flash ({exc})") from None
    files: dict[str, bytes] = {}
    lfs_error = _littlefs().errors.LittleFSError
    if paths is None:
        paths = tuple(
            top.rstrip("/") + "/" + name for top, _dirs, names in fs.walk("/") for name in names
        )
    for path in paths:
        try:
            with fs.open(path, "rb") as f:
                files[path] = bytes(f.read())
        except FileNotFoundError:
            continue
        except lfs_error as exc:  # its blocks caught in the middle of the chip's write
            raise SimulatorError(f"{path} on the flash cannot be read now ({exc})") from None
    return files


def flash_build_hash(path: Path) -> str:
    """The build hash in the manifest of the firmware a flash file holds ("" without one)."""
    if not path.is_file():
        raise SimulatorError(f"the chip's flash {path} is not a file")
    try:
        image = path.read_bytes()
    except OSError as exc:
        raise SimulatorError(f"cannot read the chip's flash {path}: {exc.strerror}") from None
    if len(image) != FS_SIZE:
        raise SimulatorError(f"the chip's flash {path} holds {len(image)} bytes, not {FS_SIZE}")
    try:
        manifest = json.loads(read_files(image).get("/" + MANIFEST, b"{}"))
    except (SimulatorError, ValueError):
        return ""  # an erased flash (MicroPython formats it at boot), or no manifest on it
    digest = manifest.get("build_hash") if isinstance(manifest, dict) else None
    return digest if isinstance(digest, str) else ""
