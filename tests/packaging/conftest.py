"""The wheel built from this tree and installed with its runtime dependencies only.

``built``: the files git knows (tracked, or new and not ignored) copied into a temporary
directory, so nothing of the checkout's own build/ or egg-info can slip in, and built there
with ``pip wheel --no-deps``. ``installed``: a fresh virtual environment of the interpreter
running the tests, with exactly the locked runtime dependencies (``--require-hashes``), then
the wheel (``--no-deps``); pip's cache makes the second run fast. Commands run from an empty
temporary directory with ``python -I`` or the console script, so the checkout is never on
``sys.path``.

Both are built once per session: the tests using them are in ``xdist_group("wheel")`` and
`make test` runs pytest with ``--dist loadgroup``, so one worker builds them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements" / "runtime.lock"
PROBE = Path(__file__).with_name("probe.py")
PIP_TIMEOUT = 600.0
COMMAND_TIMEOUT = 120.0


def source_files() -> list[str]:
    """What a fresh clone of this tree holds: tracked files and new ones git does not ignore."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    return sorted({name for name in listed.split("\0") if name and (ROOT / name).is_file()})


def clean_env(bin_dir: Path | None = None) -> dict[str, str]:
    """This process's environment without what could put the checkout on sys.path."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV")
    }
    if bin_dir is not None:
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(bin_dir.parent)
    return env


def pip(*args: str | Path, python: Path | None = None) -> subprocess.CompletedProcess[str]:
    """This environment's pip, acting on ``python``'s environment when given."""
    target = ["--python", str(python)] if python is not None else []
    done = subprocess.run(
        [sys.executable, "-m", "pip", *target, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=PIP_TIMEOUT,
        check=False,
        env=clean_env(),
    )
    assert done.returncode == 0, f"pip {' '.join(map(str, args))}:\n{done.stdout}\n{done.stderr}"
    return done


@dataclass(frozen=True)
class Built:
    source: Path  # the copy of the tree it was built from
    sources: list[str]  # the files it was built from, relative to the tree
    wheel: Path
    log: str  # the build's output, the backend's warnings included (pip -v)
    names: list[str]  # the wheel's file list

    @property
    def data(self) -> str:
        """The wheel's .data directory: its data-files are under ``data/``."""
        return self.wheel.name.split("-py3")[0] + ".data/data"


@dataclass(frozen=True)
class Installed:
    prefix: Path  # the virtual environment
    work: Path  # an empty directory, the commands' current directory

    @property
    def bin(self) -> Path:
        return self.prefix / "bin"

    @property
    def python(self) -> Path:
        return self.bin / "python"

    def run(
        self, program: str, *args: str | Path, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        """``program`` of the environment (``mjtable``, ``python``) with ``args``, to the end."""
        return subprocess.run(
            [str(self.bin / program), *map(str, args)],
            cwd=cwd or self.work,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
            env=clean_env(self.bin),
        )

    def mjtable(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        return self.run("mjtable", *args)

    def probe(self, action: str, *args: str) -> Any:
        """tests/packaging/probe.py run by this environment's Python in isolated mode."""
        done = self.run("python", "-I", PROBE, action, *args)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def pip(self, *args: str) -> subprocess.CompletedProcess[str]:
        return pip(*args, python=self.python)


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    sources = source_files()
    for name in sources:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    out = base / "dist"
    done = pip("wheel", "--no-deps", "--verbose", "--wheel-dir", out, source)
    (wheel,) = out.glob("mjtable-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    return Built(source, sources, wheel, done.stdout + done.stderr, names)


@pytest.fixture(scope="session")
def installed(built: Built, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    base = tmp_path_factory.mktemp("venv")
    prefix = base / "venv"
    # No pip inside: what is installed there is exactly what the steps below put there.
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", prefix], check=True, env=clean_env()
    )
    env = Installed(prefix, base / "work")
    env.work.mkdir()
    env.pip("install", "--require-hashes", "--requirement", str(LOCK))
    env.pip("install", "--no-deps", str(built.wheel))
    return env


def wheel_modules(names: Sequence[str]) -> list[str]:
    """Every module of every package in the wheel's file list (``__main__`` excluded: it runs
    its program when imported)."""
    modules = []
    for name in names:
        if not name.endswith(".py") or ".dist-info/" in name or ".data/" in name:
            continue
        parts = name.removesuffix(".py").split("/")
        if parts[-1] == "__main__":
            continue
        if parts[-1] == "__init__":
            parts.pop()
        modules.append(".".join(parts))
    return sorted(modules)
