"""The supported Pythons are named once (noxfile.py) and every other place agrees with it."""

from __future__ import annotations

import tomllib

from noxfile import PYTHONS
from tests.packaging.conftest import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_oldest_is_the_floor_of_the_package_and_of_the_checkers() -> None:
    oldest = PYTHONS[0]
    assert PYPROJECT["project"]["requires-python"] == f">={oldest}"
    assert PYPROJECT["tool"]["mypy"]["python_version"] == oldest
    assert PYPROJECT["tool"]["ruff"]["target-version"] == "py" + oldest.replace(".", "")


def test_versions_are_consecutive_and_in_order() -> None:
    minors = [int(v.split(".")[1]) for v in PYTHONS]
    assert all(v.startswith("3.") for v in PYTHONS)
    assert minors == list(range(minors[0], minors[0] + len(minors)))


def test_pyenv_finds_each_of_them_in_the_tree() -> None:
    # pyenv's shims (python3.12, ...) run a version only where .python-version names it.
    names = (ROOT / ".python-version").read_text(encoding="utf-8").split()
    assert tuple(names) == PYTHONS
