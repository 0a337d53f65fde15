"""requirements/runtime.lock pins exactly the runtime dependencies, each with its hashes.

Static: every dependency of pyproject.toml is pinned within its range, every pin has hashes,
no development tool is in it, and its header gives the command that regenerates it (the one
`make lock` runs). Installed: in a fresh environment holding the lock and the wheel, nothing
is missing (pip check) and nothing is there that mjtable does not need, directly or not.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement

from tests.packaging.conftest import LOCK, ROOT, Installed


def canonical(name: str) -> str:
    """A distribution's name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
REGENERATE = (
    "uv pip compile pyproject.toml --universal --python-version 3.11 --generate-hashes "
    "--output-file requirements/runtime.lock"
)


@dataclass(frozen=True)
class Pin:
    name: str
    version: str
    marker: Marker | None
    hashes: tuple[str, ...]


def read_lock(text: str) -> dict[str, Pin]:
    """The pins of a hashed requirements file (``name==version [; marker] \\`` then hashes)."""
    pins: dict[str, Pin] = {}
    # One requirement with its continuation lines, comments dropped.
    logical = re.sub(r"\\\n", " ", re.sub(r"(?m)^\s*#.*\n", "", text))
    for line in filter(None, (ln.strip() for ln in logical.splitlines())):
        requirement, *options = re.split(r"\s+(?=--)", line)
        req = Requirement(requirement)
        (spec,) = req.specifier
        assert spec.operator == "==", line
        hashes = tuple(o.removeprefix("--hash=") for o in options if o.startswith("--hash="))
        name = canonical(req.name)
        pins[name] = Pin(name, spec.version, req.marker, hashes)
    return pins


PINS = read_lock(LOCK.read_text(encoding="utf-8"))


def test_every_runtime_dependency_is_pinned_within_its_range() -> None:
    for line in PYPROJECT["project"]["dependencies"]:
        req = Requirement(line)
        pin = PINS.get(canonical(req.name))
        assert pin is not None, f"{req.name} is not in {LOCK.name}"
        assert req.specifier.contains(pin.version), (line, pin.version)


def test_every_pin_has_hashes() -> None:
    assert PINS
    for pin in PINS.values():
        assert pin.hashes, pin.name
        assert all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for h in pin.hashes), pin.name


def test_no_development_tool_is_locked() -> None:
    extras = PYPROJECT["project"]["optional-dependencies"]["dev"]
    dev = {canonical(Requirement(line).name) for line in extras}
    assert sorted(dev & PINS.keys()) == []


def test_header_and_make_lock_give_the_same_command() -> None:
    header = LOCK.read_text(encoding="utf-8").split("\n", 3)[:2]
    assert header[1].strip("# ") == REGENERATE
    assert REGENERATE.removeprefix("uv ") in (ROOT / "Makefile").read_text(encoding="utf-8")


@pytest.mark.xdist_group("wheel")
def test_installed_environment_is_exactly_the_lock(installed: Installed) -> None:
    installed.pip("check")
    listed = installed.pip("list", "--format=freeze").stdout.splitlines()
    versions = dict(line.split("==") for line in listed)
    here = {canonical(name): version for name, version in versions.items()}
    assert here.pop("mjtable") == PYPROJECT["project"]["version"]
    metadata = installed.probe("metadata")
    environment = metadata["environment"]
    applies = {n: p for n, p in PINS.items() if p.marker is None or p.marker.evaluate(environment)}
    assert here == {n: p.version for n, p in applies.items()}
    # What mjtable needs, and what those need, under this interpreter: no more, no less.
    requires = {canonical(k): v for k, v in metadata["requires"].items()}
    needed: set[str] = set()
    todo = ["mjtable"]
    while todo:
        for line in requires[todo.pop()]:
            req = Requirement(line)
            if req.marker is not None and not req.marker.evaluate({**environment, "extra": ""}):
                continue
            name = canonical(req.name)
            if name not in needed:
                needed.add(name)
                todo.append(name)
    assert needed == applies.keys()
