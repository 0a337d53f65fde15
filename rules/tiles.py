"""Tiles in the seeds' notation, and the tiles of a game of 108, 136 or 144 (TABLE.md section 2).

A tile is a short string:

- suits: ``1m``..``9m`` (caractères), ``1p``..``9p`` (cercles), ``1s``..``9s`` (bambous);
- winds: ``E`` ``S`` ``W`` ``N`` (the French ``O`` for West is accepted on input);
- dragons: ``C`` (red, Centre), ``F`` (green, Fortune), ``B`` (white, Blanc);
- bonus tiles of a game of 144: flowers ``1f``..``4f`` and seasons ``5f``..``8f``.

The module is pure data and small functions; it imports nothing of the project.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from rules import hand_words as w

SUITS: tuple[str, ...] = ("m", "p", "s")
SUIT_NAMES: dict[str, str] = {"m": "caractères", "p": "cercles", "s": "bambous"}
WINDS: tuple[str, ...] = ("E", "S", "W", "N")
DRAGONS: tuple[str, ...] = ("C", "F", "B")
HONOURS: tuple[str, ...] = WINDS + DRAGONS
FLOWERS: tuple[str, ...] = ("1f", "2f", "3f", "4f")
SEASONS: tuple[str, ...] = ("5f", "6f", "7f", "8f")
BONUS: tuple[str, ...] = FLOWERS + SEASONS
SUITED: tuple[str, ...] = tuple(f"{n}{s}" for s in SUITS for n in range(1, 10))
ALL_FACES: tuple[str, ...] = SUITED + HONOURS + BONUS
WHITE_DRAGON = "B"

#: Input aliases: the French name of West, and lower-case honours.
ALIASES: dict[str, str] = {"O": "W", "e": "E", "s": "S", "w": "W", "o": "W", "n": "N"}
ALIASES.update({"c": "C", "f": "F", "b": "B"})

_ORDER: dict[str, int] = {t: i for i, t in enumerate(ALL_FACES)}


def parse_tile(token: str) -> str:
    """Return the canonical name of one tile, or raise ValueError naming the token."""
    text = token.strip()
    if text in _ORDER:
        return text
    if text in ALIASES:
        return ALIASES[text]
    lowered = text.lower()
    if lowered in _ORDER:
        return lowered
    raise ValueError(w.UNKNOWN_TILE.format(token=repr(token)))


def sort_key(tile: str) -> int:
    """Position of a tile in the canonical order (suits, winds, dragons, bonus)."""
    return _ORDER[tile]


def sorted_tiles(tiles: Iterable[str]) -> list[str]:
    return sorted(tiles, key=sort_key)


def is_suited(tile: str) -> bool:
    return len(tile) == 2 and tile[1] in SUITS


def is_honour(tile: str) -> bool:
    return tile in HONOURS


def is_bonus(tile: str) -> bool:
    return tile in BONUS


def suit_of(tile: str) -> str | None:
    """``m``, ``p`` or ``s`` for a suited tile, None otherwise."""
    return tile[1] if is_suited(tile) else None


def number_of(tile: str) -> int | None:
    """1..9 for a suited tile, None otherwise."""
    return int(tile[0]) if is_suited(tile) else None


def tile_copies(tiles: int) -> Counter[str]:
    """How many copies of each tile a game of ``tiles`` (108, 136 or 144) holds."""
    counts: Counter[str] = Counter()
    if tiles not in (108, 136, 144):
        raise ValueError(w.UNKNOWN_TILE_COUNT.format(tiles=tiles))
    for tile in SUITED:
        counts[tile] = 4
    if tiles >= 136:
        for tile in HONOURS:
            counts[tile] = 4
    if tiles == 144:
        for tile in BONUS:
            counts[tile] = 1
    return counts


def tile_list(tiles: int) -> list[str]:
    """The tiles of a game of ``tiles`` in canonical order, each as often as the game holds it."""
    return sorted_tiles(tile_copies(tiles).elements())
