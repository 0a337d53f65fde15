"""The frozen image the chip tests boot: `mjtable firmware image` of the sources, built at most once
per run, into a cache outside the source tree (never where the table's data lives).

    python -m tests.support.chip_image [--tiles 136]     # build it now (make chip-image, .ci/run)

The cache is ``$MJTABLE_TEST_CACHE``, else ``$XDG_CACHE_HOME/mjtable-tests``, else
``~/.cache/mjtable-tests``: MicroPython's work tree (its sources unpacked once) and the latest
images, each named by what it is made from: the build hash of the sources' `mjtable firmware
build`, the shared folder's sources and script, and the two files that freeze and write it.
The same inputs give the same image byte for byte (the build is reproducible), so a run that
finds it built (by `.ci/run` before the suite, or an earlier run on unchanged sources) boots it
as it is; another is built when any input changes. Before a build the older images go, but the
latest few and any touched within the hour: two runs on different sources (two checkouts) may
build at the same time, one after the other under the work tree's lock, and neither removes
the other's.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from controller.firmware import image as image_module
from controller.firmware.build import DEFAULT_TILES, build, default_source_root
from controller.firmware.image import SCRIPT, SOURCES, make_image
from drivers import uf2

CACHE_ENV = "MJTABLE_TEST_CACHE"


def cache_root() -> Path:
    given = os.environ.get(CACHE_ENV)
    if given:
        return Path(given)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "mjtable-tests"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def image_key(tiles: int, shared: Path) -> str:
    """What the image is made from, as 16 hex digits."""
    root = default_source_root()
    with tempfile.TemporaryDirectory(prefix="mjtable-key-") as tmp:
        build_hash = build(root, Path(tmp) / "build", tiles=tiles).manifest.build_hash
    parts = [build_hash, str(tiles)]
    parts += [_sha256(shared / name) for name in (SCRIPT, SOURCES)]
    parts += [_sha256(Path(m.__file__)) for m in (image_module, uf2) if m.__file__]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def image_path(tiles: int, shared: Path) -> Path:
    """Where the image of these inputs is (built or not)."""
    return cache_root() / "chip-image" / image_key(tiles, shared) / f"firmware-{tiles}.uf2"


def frozen_image(
    tiles: int,
    shared: Path,
    say: Callable[[str], None] = lambda text: None,
    before_build: Callable[[], None] = lambda: None,
) -> tuple[Path, float | None]:
    """The image for ``tiles`` from the sources, built when the cache lacks it (``before_build``
    first: the tests check the toolchain there): its path, and the seconds the build took (None
    when it was there)."""
    path = image_path(tiles, shared)
    if path.is_file():
        return path, None
    before_build()
    started = time.monotonic()
    prune(path.parent.parent)
    path.parent.mkdir(parents=True, exist_ok=True)
    make_image(
        default_source_root(),
        path,
        shared,
        tiles=tiles,
        work=cache_root() / "micropython-rp2",
        say=say,
    )
    return path, time.monotonic() - started


#: images of other sources kept in the cache (the latest made), and how recent a folder is
#: left alone whatever its rank: another run may be building into it now (builds take minutes)
KEEP_IMAGES = 3
BUSY_S = 3600.0


def prune(images: Path) -> None:
    """Before a build: the cache's older images go, but the latest few and any folder touched
    within the hour (another run's build in progress, which waits for this one's lock)."""
    if not images.is_dir():
        return
    now = time.time()
    touched = {}
    for folder in images.iterdir():
        with contextlib.suppress(FileNotFoundError):  # (another run's prune)
            touched[folder] = folder.stat().st_mtime
    latest = sorted(touched, key=touched.__getitem__, reverse=True)
    for folder in latest[KEEP_IMAGES:]:
        if now - touched[folder] > BUSY_S:
            shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    from controller.firmware import FirmwareError
    from simulator.chip.exchange import shared_folder
    from simulator.transport import SimulatorError

    parser = argparse.ArgumentParser(description="Build the chip tests' frozen image, once.")
    parser.add_argument("--tiles", type=int, default=DEFAULT_TILES, choices=(108, 136, 144))
    args = parser.parse_args(argv)
    try:
        shared = shared_folder(names=(SCRIPT, SOURCES))
        path, seconds = frozen_image(args.tiles, shared, lambda text: print(f"  {text}"))
    except (SimulatorError, FirmwareError) as exc:
        print(f"chip-image: {exc}", file=sys.stderr)
        return 1
    if seconds is None:
        print(f"chip-image: {path} is built already (the same sources)")
    else:
        print(f"chip-image: built {path} in {seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
