"""The table's vocabulary: each game word declared once, imported everywhere else.

- **seat**: ``E`` ``S`` ``W`` ``N`` (indices 0..3); seat s+1 sits at the right of seat s,
  and play and dealing turns go counter-clockwise E, S, W, N (TABLE.md section 2);
- **tile set**: ``A`` or ``B``, the table's two physical sets with different backs, one
  played while the other is shuffled underneath (TABLE.md section 1); only these letters are
  called a tile set (``tile_set``);
- **tiles**: how many tiles a game is played with, 108, 136 or 144 (TABLE.md section 2): each
  tile set holds that many; a profile's ``tiles``;
- **rule set**: one of the four sets of rules of the seeds, :class:`RuleSet`; a *profile*
  (:class:`rules.profiles.Profile`, a TOML file) configures the table procedures of one rule
  set, and the built-in profiles are named after their rule set. Users meet the rule set as
  ``variant`` (``--variant``, the JSON field ``variant``, the profile key ``variant``);
- **dice source**: where the dice of a deal come from: the board's dice unit, the
  controller's generator (shown on the board), or the dealer typing them in.

The module imports nothing of the project.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

Seat = Literal["E", "S", "W", "N"]
SEATS: tuple[Seat, ...] = ("E", "S", "W", "N")
SEAT_INDEX: dict[str, int] = {s: i for i, s in enumerate(SEATS)}

TileSetName = Literal["A", "B"]
TILE_SETS: tuple[TileSetName, ...] = ("A", "B")

TileCount = Literal[108, 136, 144]
TILE_COUNTS: tuple[TileCount, ...] = (108, 136, 144)

DiceSource = Literal["board", "controller", "dealer"]
DICE_SOURCES: tuple[DiceSource, ...] = ("board", "controller", "dealer")


class RuleSet(StrEnum):
    """The four rule sets of the seeds (the ``variant`` users name)."""

    WENZHOU = "wenzhou"
    SICHUAN = "sichuan"
    WSOM = "wsom"
    SIMPLIFIED = "simplified"


#: The rule sets' names, in the seeds' order; each has a built-in profile of that name.
RULE_SETS: tuple[str, ...] = tuple(r.value for r in RuleSet)

#: The rule set a command plays when none is named (`mjtable demo`, `deal`, `hand`,
#: `run --sim` without ``--variant``), and the simulated table's: one default, here.
DEFAULT_RULE_SET = RuleSet.WENZHOU


def seat_at(index: int) -> Seat:
    """The seat ``index`` steps counter-clockwise from East (any integer, taken mod 4)."""
    return SEATS[index % 4]


def tile_set_name(text: str) -> TileSetName | None:
    """``A`` or ``B`` as the type says, or None for anything else."""
    for name in TILE_SETS:
        if name == text:
            return name
    return None
