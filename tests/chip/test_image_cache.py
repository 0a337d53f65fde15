"""The chip tests' image cache (tests/support/chip_image.py) keeps what another run may be
building into: before a build, only old images beyond the latest few go."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.support.chip_image import BUSY_S, KEEP_IMAGES, prune


def test_a_build_removes_old_images_but_not_one_being_made(tmp_path: Path) -> None:
    now = time.time()
    ages = {"a": 10, "b": 20, "c": 30, "building": 60, "old1": BUSY_S + 100, "old2": 2 * BUSY_S}
    for name, age in ages.items():
        folder = tmp_path / name
        folder.mkdir()
        (folder / "firmware-136.uf2").write_bytes(b"uf2")
        os.utime(folder, (now - age, now - age))
    prune(tmp_path)
    left = sorted(p.name for p in tmp_path.iterdir())
    # the latest KEEP_IMAGES stay; beyond them, one touched within the hour (another run's
    # build, waiting for the lock) stays too; the old ones go
    assert KEEP_IMAGES == 3
    assert left == ["a", "b", "building", "c"]


def test_no_cache_yet_is_nothing_to_prune(tmp_path: Path) -> None:
    prune(tmp_path / "chip-image")
    assert not (tmp_path / "chip-image").exists()
