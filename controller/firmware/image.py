"""The image a technician flashes: MicroPython for the Raspberry Pi Pico with the board's firmware
frozen into it, one UF2 file (hold BOOTSEL, plug the USB in, copy it to the RPI-RP2 drive).

What is frozen is `mjtable firmware build --tiles N` (build.py), nothing else of ours:

- its ``.mpy`` modules, byte for byte (MicroPython's ``freeze_mpy``): their bytecode runs from
  the flash instead of being loaded onto the heap;
- its ``main.py``, the table's ``TILES`` in it: MicroPython runs a frozen ``main.py`` before
  one on the file system (``pyexec_file_if_exists``), so the image is made for one table and
  the board needs no file copied after it;
- ``mjtable_image`` (made here), whose ``MANIFEST`` holds the build's firmware version, build
  hash and tiles: frozen modules are not files, so the firmware reads its build there
  (firmware/hal/rp2.py) where a board flashed with mpremote reads ``/manifest.json``.

A board running the image so reports the hash of the same build as one flashed with the
``.mpy`` files, and the service's check (installed.py) holds either way. With the modules
frozen first on ``sys.path`` (firmware/main.py), whatever files an earlier flash left on the
file system are not run.

MicroPython v1.27.0 is built from the pinned sources of the shared rp2040 folder with its
``build-image.sh`` (Debian's Arm toolchain, which the script installs with apt when it runs as
root) in a work tree kept between builds (``default_work()``: the sources unpacked once); one
build at a time holds it. The image must end where the file system begins (0xA0000 on the
Pico: MicroPython's last 1408 KiB of flash are littlefs).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from controller.firmware import FirmwareError, words
from controller.firmware.build import DEFAULT_TILES, Build, build
from drivers.uf2 import to_uf2

#: the module frozen beside the build with its manifest (firmware/hal/rp2.py imports it)
IMAGE_MODULE = "mjtable_image"
#: in the shared rp2040 folder: the script, and the sources it builds
SCRIPT = "build-image.sh"
SOURCES = "micropython-v1.27.0-rp2-sources.tar.gz"
#: what the script writes, given a manifest
FROZEN_BIN = "RPI_PICO-v1.27.0-frozen.bin"
#: Debian's packages the script needs (it installs the missing ones when run as root)
TOOLCHAIN = (
    "gcc-arm-none-eabi",
    "libnewlib-arm-none-eabi",
    "libstdc++-arm-none-eabi-newlib",
    "libstdc++-arm-none-eabi-dev",
    "cmake",
    "make",
    "gcc",
    "g++",
    "python3",
)
#: the Pico's flash before MicroPython's file system (simulator/chip/flash.py's FS_OFFSET)
IMAGE_ROOM = 0xA0000

Say = Callable[[str], None]


@dataclass(frozen=True)
class Image:
    #: the UF2 written
    path: Path
    #: the firmware build frozen into it, and the table it drives
    build: Build
    tiles: int
    #: the flash the image takes (bytes), and the UF2's SHA-256
    size: int
    sha256: str


def default_work() -> Path:
    """Where MicroPython's sources are unpacked and built: the user's cache, kept between
    builds ($XDG_CACHE_HOME/mjtable/micropython-rp2, else ~/.cache/...)."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "mjtable" / "micropython-rp2"


def missing_toolchain() -> list[str]:
    """The packages of TOOLCHAIN that dpkg does not list as installed (all, without dpkg)."""
    dpkg = shutil.which("dpkg-query")
    if dpkg is None:
        return list(TOOLCHAIN)
    result = subprocess.run(
        [dpkg, "-W", "-f=${Package} ${Status}\n", *TOOLCHAIN],
        capture_output=True,
        text=True,
        check=False,
    )
    installed = {
        line.split()[0] for line in result.stdout.splitlines() if line.endswith(" installed")
    }
    return [p for p in TOOLCHAIN if p not in installed]


def install_command(packages: list[str] | tuple[str, ...] = TOOLCHAIN) -> str:
    return "apt-get install --no-install-recommends " + " ".join(packages)


def image_manifest(made: Build, tiles: int) -> bytes:
    """What ``mjtable_image.MANIFEST`` holds: the build's version, hash and tiles, one line of
    JSON (firmware.buildinfo.build_id reads its hash as from a manifest.json)."""
    fields = {
        "firmware_version": made.manifest.firmware_version,
        "build_hash": made.manifest.build_hash,
        "tiles": tiles,
    }
    return json.dumps(fields).encode()


def image_module(made: Build, tiles: int) -> str:
    """The source of ``mjtable_image.py``."""
    return (
        '"""The firmware build frozen into this image by `mjtable firmware image`."""\n\n'
        f"MANIFEST = {image_manifest(made, tiles)!r}\n"
    )


def freeze_manifest(made: Build, extra: Path) -> str:
    """MicroPython's manifest of the image: the stock image's frozen modules (its ``_boot.py``
    mounts the file system), the build's ``.mpy`` files as they are, its ``main.py``, and
    ``mjtable_image.py`` from ``extra``."""
    modules = tuple(e.path for e in made.manifest.files if e.path.endswith(".mpy"))
    return (
        'include("$(PORT_DIR)/boards/manifest.py")\n'
        f"freeze_mpy({str(made.directory)!r}, {modules!r})\n"
        f"freeze({str(made.directory)!r}, 'main.py')\n"
        f"freeze({str(extra)!r}, '{IMAGE_MODULE}.py')\n"
    )


def make_image(
    root: Path,
    out: Path,
    shared: Path,
    *,
    tiles: int = DEFAULT_TILES,
    work: Path | None = None,
    say: Say = lambda text: None,
) -> Image:
    """Build the firmware of ``root`` for ``tiles``, freeze it into MicroPython built from
    ``shared`` (the rp2040 folder) in ``work``, and write the UF2 to ``out``."""
    if out.is_dir():
        raise FirmwareError(words.OUT_IS_DIRECTORY.format(out=out))
    if not out.parent.is_dir():
        raise FirmwareError(words.NO_OUT_DIRECTORY.format(folder=out.parent, name=out.name))
    for name in (SCRIPT, SOURCES):
        if not (shared / name).is_file():
            raise FirmwareError(words.NO_SOURCES.format(name=name, shared=shared))
    missing = missing_toolchain()
    if missing and os.geteuid() != 0:
        raise FirmwareError(
            words.NO_TOOLCHAIN.format(missing=", ".join(missing), command=install_command(missing))
        )
    work = work if work is not None else default_work()
    try:
        work.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FirmwareError(words.NO_WORK_TREE.format(work=work, why=exc.strerror)) from None
    with _held(work, say):
        frozen = work / "frozen"
        shutil.rmtree(frozen, ignore_errors=True)
        made = build(root, frozen / "build", tiles=tiles)
        extra = frozen / "extra"
        extra.mkdir()
        (extra / f"{IMAGE_MODULE}.py").write_text(image_module(made, tiles), encoding="utf-8")
        manifest = frozen / "manifest.py"
        manifest.write_text(freeze_manifest(made, extra), encoding="utf-8")
        say(
            words.FREEZING.format(
                firmware=made.manifest.firmware_version,
                build=made.manifest.build_hash[:16],
                count=len(made.manifest.files),
                tiles=tiles,
            )
        )
        if missing:
            say(words.INSTALLING_TOOLCHAIN.format(missing=" ".join(missing)))
        log = work / "build.log"
        say(words.BUILDING.format(work=work, log=log))
        _run_script(shared / SCRIPT, frozen / "out", manifest, work, log)
        data = (frozen / "out" / FROZEN_BIN).read_bytes()
    if len(data) > IMAGE_ROOM:
        raise FirmwareError(words.TOO_BIG.format(size=len(data), room=IMAGE_ROOM))
    uf2 = to_uf2(data)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(uf2)
        os.replace(tmp, out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise FirmwareError(words.CANNOT_WRITE.format(path=out, why=exc.strerror)) from None
    return Image(out, made, tiles, len(data), hashlib.sha256(uf2).hexdigest())


@contextlib.contextmanager
def _held(work: Path, say: Say) -> Iterator[None]:
    """The work tree for this build alone (another build waits)."""
    with open(work / ".lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(words.WAITING.format(work=work))
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _run_script(script: Path, out: Path, manifest: Path, work: Path, log: Path) -> None:
    env = dict(os.environ, WORK=str(work))
    try:
        with open(log, "wb") as sink:
            result = subprocess.run(
                ["bash", str(script), str(out), str(manifest)],
                stdin=subprocess.DEVNULL,
                stdout=sink,
                stderr=subprocess.STDOUT,
                env=env,
                check=False,
            )
    except OSError as exc:
        raise FirmwareError(words.CANNOT_RUN.format(script=script, why=exc.strerror)) from None
    if result.returncode != 0 or not (out / FROZEN_BIN).is_file():
        lines = [
            line.strip()
            for line in log.read_text(encoding="utf-8", errors="replace").splitlines()
            if line.strip()
        ]
        why = lines[-1] if lines else words.EXIT_STATUS.format(status=result.returncode)
        raise FirmwareError(words.BUILD_FAILED.format(why=why, log=log))
