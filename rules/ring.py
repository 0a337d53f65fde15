"""The tile sequence of the walls, from a designated wall's right end (TABLE.md section 2).

The walls form a ring: wall D stacks 1..n, then wall D-1, and so on, "leftward". Every table
procedure works on the **tile sequence** of that ring starting at the designated wall's right
end: stack by stack, the top tile before the bottom one (a half stack has one tile). In pair
mode one pip counts one stack, in tile mode one tile (:func:`unit_first`, :func:`unit_last`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from rules.dealt import Pos, Tier
from rules.profiles import Layout, Profile
from rules.words import SEAT_INDEX, Seat, seat_at


@dataclass(frozen=True)
class Ring:
    """The tile sequence from a designated wall's right end, and its stacks."""

    pos: tuple[Pos, ...]  # tile index -> position
    look: tuple[tuple[Seat, int, int], ...]  # tile index -> (wall, stack index, index in stack)
    stack_of: tuple[int, ...]  # tile index -> ring stack index (0-based)
    first: tuple[int, ...]  # ring stack index -> its first tile index
    last: tuple[int, ...]  # ring stack index -> its last tile index


@lru_cache(maxsize=64)
def ring(layout: Layout, designated: Seat) -> Ring:
    """The ring of ``layout`` read from the right end of wall ``designated``."""
    pos: list[Pos] = []
    look: list[tuple[Seat, int, int]] = []
    stack_of: list[int] = []
    first: list[int] = []
    last: list[int] = []
    d = SEAT_INDEX[designated]
    for k in range(4):
        wall = seat_at(d - k)
        for number, height in enumerate(layout.heights(wall), start=1):
            first.append(len(pos))
            tiers: tuple[Tier, ...] = ("top", "bottom") if height == 2 else ("bottom",)
            for j, tier in enumerate(tiers):
                pos.append(Pos(wall=wall, stack=number, tier=tier))
                look.append((wall, number - 1, j))
                stack_of.append(len(first) - 1)
            last.append(len(pos) - 1)
    return Ring(tuple(pos), tuple(look), tuple(stack_of), tuple(first), tuple(last))


def unit_first(profile: Profile, ring: Ring, units: int) -> int:
    """Tile index of the first tile of the ``units``-th unit counted (1-based)."""
    return ring.first[units - 1] if profile.counting == "pair" else units - 1


def unit_last(profile: Profile, ring: Ring, units: int) -> int:
    """Tile index of the last tile of the ``units``-th unit counted (1-based)."""
    return ring.last[units - 1] if profile.counting == "pair" else units - 1
