"""A wall manifest checked against a profile: the layout's stacks and heights, and the set.

- :func:`manifest_from_ring` -- the :class:`~rules.dealt.Manifest` from the board's flat
  list, checked: the one place that counts the board's tiles against the layout;
- :func:`validate_manifest` -- the same check for a manifest given whole (a file, the log).

Either is done once per manifest: :func:`rules.deal.deal` is told when its manifest was
already checked (``checked=True``), as the controller's cycle does after reading the board.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

from rules.dealt import UNKNOWN, Manifest, ManifestError, manifest_from_data
from rules.profiles import Layout, Profile
from rules.tiles import tile_copies
from rules.words import SEATS


class ManifestSizeError(ManifestError):
    """The board sent another number of tiles than the layout holds."""

    def __init__(self, got: int, expected: int) -> None:
        super().__init__(f"manifest: the board sent {got} tiles, the layout holds {expected}")
        self.got = got
        self.expected = expected


@lru_cache(maxsize=8)
def _copies(tiles: int) -> Counter[str]:
    return tile_copies(tiles)


def _check_layout(layout: Layout, manifest: Manifest) -> None:
    for seat in SEATS:
        want = layout.heights(seat)
        stacks = manifest.walls[seat]
        if len(stacks) != len(want):
            raise ManifestError(
                f"manifest: wall {seat} has {len(stacks)} stacks, the layout has {len(want)}"
            )
        for number, (stack, height) in enumerate(zip(stacks, want, strict=True), start=1):
            if len(stack) != height:
                held = f"{len(stack)} tile" + ("s" if len(stack) != 1 else "")
                raise ManifestError(
                    f"manifest: wall {seat} stack {number} holds {held}, "
                    f"the layout has {height} there"
                )


def _check_set(profile: Profile, manifest: Manifest) -> None:
    expected = _copies(profile.tiles)
    counts = Counter(manifest.board_order())
    counts.pop(UNKNOWN, None)
    for tile, n in counts.items():
        have = expected.get(tile, 0)
        if have == 0:
            raise ManifestError(f"manifest: tile {tile} is not in the {profile.tiles}-tile set")
        if n > have:
            raise ManifestError(f"manifest: tile {tile} appears {n} times, the set has {have}")


def validate_manifest(profile: Profile, manifest: Manifest) -> None:
    """Check a manifest against a profile's layout and tiles; ManifestError names the
    first fault. ``?`` tiles are allowed (a board without a reader); the known tiles must
    then not exceed the set."""
    _check_layout(profile.layout, manifest)
    _check_set(profile, manifest)


def manifest_from_ring(profile: Profile, tiles: Sequence[str]) -> Manifest:
    """The manifest from the board's flat list, checked against the profile: wall E (stack 1
    top, stack 1 bottom, stack 2 top, ...; a half stack gives one tile), then walls S, W, N.
    Tiles may be ``?``. Raises ManifestSizeError when the list is not as long as the layout,
    ManifestError for a tile the set does not hold (or holds fewer times)."""
    layout = profile.layout
    total = layout.tiles()
    if len(tiles) != total:
        raise ManifestSizeError(len(tiles), total)
    walls: dict[str, list[list[str]]] = {}
    i = 0
    for seat in SEATS:
        stacks: list[list[str]] = []
        for height in layout.heights(seat):
            stacks.append(list(tiles[i : i + height]))
            i += height
        walls[seat] = stacks
    manifest = manifest_from_data({"walls": walls})
    _check_set(profile, manifest)  # the layout holds by construction
    return manifest
