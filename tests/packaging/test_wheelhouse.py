"""`make wheelhouse` gives the Pi everything it needs to install offline.

The test runs the Makefile's own steps (pi-wheels, pi-check) into a temporary wheelhouse that
holds the wheel built from this tree: every locked dependency is downloaded for the Pi
(aarch64 manylinux, CPython 3.11 and 3.13) against its hash, and `mjtable` then resolves from
that folder alone for both. A new dependency without a wheel for the Pi fails here.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.packaging.conftest import PIP_TIMEOUT, ROOT, Built, clean_env
from tests.packaging.test_lock import PINS, canonical

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("wheel")]

PI_PYTHONS = ("311", "313")


def test_wheelhouse_installs_mjtable_on_the_pi_offline(built: Built, tmp_path: Path) -> None:
    house = tmp_path / "wheelhouse"
    house.mkdir()
    shutil.copy2(built.wheel, house)
    make = shutil.which("make")
    assert make is not None, "make is needed (Debian: apt-get install make)"
    settings = [f"WHEELHOUSE={house}", f"BIN={Path(sys.executable).parent}"]
    done = subprocess.run(
        [make, "--no-print-directory", "pi-wheels", "pi-check", *settings],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=PIP_TIMEOUT,
        check=False,
        env=clean_env(),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("pip install --dry-run --no-index") == len(PI_PYTHONS)
    # Each locked distribution: one pure wheel, or one for each of the Pi's Pythons.
    found: dict[str, list[str]] = {}
    for wheel in house.glob("*.whl"):
        dist, _version, tag = wheel.name.removesuffix(".whl").split("-", 2)
        found.setdefault(canonical(dist), []).append(tag)
    assert sorted(found) == sorted([*PINS, "mjtable"])
    for name, tags in found.items():
        if len(tags) == 1 and re.search(r"-none-", tags[0]):
            continue
        assert sorted(t.split("-")[0] for t in tags) == [f"cp{v}" for v in PI_PYTHONS], name
        assert all("aarch64" in t for t in tags), (name, tags)
