"""A manifest's tiles as given: canonical names taken as they are, others parsed, bad ones named."""

from __future__ import annotations

from typing import Any

import pytest

from rules.dealt import Manifest, ManifestError, manifest_from_data
from rules.profiles import load_profile
from tests.support.deals import shuffled_manifest

WENZHOU = load_profile("wenzhou")


def walls() -> dict[str, Any]:
    given: dict[str, Any] = shuffled_manifest(WENZHOU).model_dump()["walls"]
    return given


def test_canonical_unknown_and_aliased_tiles_in_one_manifest() -> None:
    given = walls()
    given["E"][0] = ["?", "?"]  # a board without a reader
    given["S"][1] = [" 1m", "e"]  # spaces and a lower-case wind: parsed
    given["W"][2] = ["O", "C"]  # West written as the French O
    manifest = Manifest.model_validate({"walls": given})
    assert manifest.walls["E"][0] == ["?", "?"]
    assert manifest.walls["S"][1] == ["1m", "E"]
    assert manifest.walls["W"][2] == ["W", "C"]
    assert manifest.walls["N"] == walls()["N"]  # canonical already: as given


@pytest.mark.parametrize(
    ("stack", "words"),
    [
        (["1m", ["2m"]], "manifest: walls: wall E stack 1: tile ['2m'] is not text"),
        ([{"tile": "1m"}], "manifest: walls: wall E stack 1: tile {'tile': '1m'} is not text"),
        (["1m", 5], "manifest: walls: wall E stack 1: tile 5 is not text"),
        (["1m", "2x"], "manifest: walls: wall E stack 1: unknown tile '2x'"),
        (["1m", "2m", "3m"], "manifest: walls: wall E stack 1: expected [top, bottom]"),
    ],
)
def test_a_bad_tile_is_named_in_one_line(stack: list[Any], words: str) -> None:
    given = walls()
    given["E"][0] = stack
    with pytest.raises(ManifestError) as error:
        manifest_from_data({"walls": given})
    assert str(error.value).startswith(words)
    assert "\n" not in str(error.value)
