"""Every number of a profile is bounded: a billion anywhere in a built-in profile, or a wall a
million stacks long, is refused at once (rules/profiles.py, MAX_TILES)."""

from __future__ import annotations

import copy
import time
import tomllib
from collections.abc import Iterator

import pytest

from rules.profiles import PROFILE_DIR, ProfileError, profile_from_data


def _numbers(data: object, path: tuple[object, ...] = ()) -> Iterator[tuple[object, ...]]:
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _numbers(value, (*path, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _numbers(value, (*path, index))
    elif isinstance(data, int) and not isinstance(data, bool):
        yield path


def _set(data: object, path: tuple[object, ...], value: object) -> None:
    for key in path[:-1]:
        data = data[key]  # type: ignore[index]
    data[path[-1]] = value  # type: ignore[index]


@pytest.mark.parametrize("name", ["wenzhou", "sichuan", "simplified"])
def test_every_profile_number_is_bounded(name: str) -> None:
    """A billion anywhere in a profile (a count of rounds, tiles, stacks, seats, dice...) and
    a wall a million stacks long are refused at once, before the deal's lists are made."""
    data = tomllib.loads((PROFILE_DIR / f"{name}.toml").read_text("utf-8"))
    paths = list(_numbers(data))
    assert len(paths) >= 8, paths
    for path in paths:
        bad = copy.deepcopy(data)
        _set(bad, path, 1_000_000_000)
        started = time.monotonic()
        with pytest.raises(ProfileError):
            profile_from_data(bad, name)
        assert time.monotonic() - started < 1.0, path
    long_wall = copy.deepcopy(data)
    long_wall["layout"] = {"all": [2] * 1_000_000}
    with pytest.raises(ProfileError, match="layout"):
        profile_from_data(long_wall, name)
