"""The dealt table as a text picture, in the seeds' letters or in mahjong glyphs.

Used by `mjtable deal` and `mjtable demo`: a legend of the tiles' letters, the four walls as
built, with the breach, the joker and the colline marked and where each tile went, then each
hand sorted and in the order taken.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cli.lang import ENGLISH, Phrasebook
from rules.tiles import sorted_tiles

if TYPE_CHECKING:
    from rules.dealt import DealtState

#: Unicode mahjong tiles (U+1F000 block) for the seeds' notation; "?" is a tile's back.
GLYPHS: dict[str, str] = {
    **{f"{n}m": chr(0x1F007 + n - 1) for n in range(1, 10)},
    **{f"{n}s": chr(0x1F010 + n - 1) for n in range(1, 10)},
    **{f"{n}p": chr(0x1F019 + n - 1) for n in range(1, 10)},
    "E": "\U0001f000",
    "S": "\U0001f001",
    "W": "\U0001f002",
    "N": "\U0001f003",
    "C": "\U0001f004",
    "F": "\U0001f005",
    "B": "\U0001f006",
    **{f"{n}f": chr(0x1F022 + n - 1) for n in range(1, 9)},
    "?": "\U0001f02b",
}


def tile_text(tile: str, glyphs: bool = False) -> str:
    """A tile as shown: its letters, or its glyph followed by a space (glyphs are wide)."""
    return GLYPHS.get(tile, tile) + " " if glyphs else tile


def render_text(state: DealtState, glyphs: bool = False, words: Phrasebook = ENGLISH) -> str:
    """The table as text: the four walls with breach, joker and colline marked, and each
    hand in the order taken, in ``words``' language (the tiles, walls and seats in the seeds'
    letters, in every language)."""
    _, pgettext = words._, words.pgettext
    lines: list[str] = []
    said: dict[str, object] = {
        "variant": state.variant,
        "profile": f"{state.profile.name} {state.profile.version}",
        "tile_set": state.tile_set,
    }
    if state.cycle_id:
        said["cycle"] = state.cycle_id
        head = _("%(variant)s (profile %(profile)s), tile set %(tile_set)s, cycle %(cycle)s")
    else:
        head = _("%(variant)s (profile %(profile)s), tile set %(tile_set)s")
    lines.append(head % said)
    throws = ", ".join(f"{t.by} {t.text()}" for t in state.throws)
    lines.append(
        _("leader %(leader)s; throws: %(throws)s") % {"leader": state.leader, "throws": throws}
    )
    b = state.breach
    counted = {
        "wall": state.designated_wall,
        "count": state.count,
        "breach": f"{b.wall}{b.stack} " + (_("top") if b.tier == "top" else _("bottom")),
    }
    if state.counting == "pair":
        count = _("designated wall %(wall)s; count %(count)s stacks; breach after %(breach)s")
    else:
        count = _("designated wall %(wall)s; count %(count)s tiles; breach after %(breach)s")
    lines.append(count % counted)
    if state.joker is not None:
        j = state.joker
        face = tile_text(j.face, glyphs).strip()
        at = f"{j.position.wall}{j.position.stack}"
        lines.append(_("joker: %(face)s, turned at %(at)s top") % {"face": face, "at": at})
    colline = " ".join(p.label() for p in state.colline_positions) or _("none")
    lines.append(
        _("colline (%(tiles)s tiles, replacement order): %(positions)s")
        % {"tiles": len(state.colline), "positions": colline}
    )
    live = state.live_wall_positions
    if live:
        ends = {"tiles": len(live), "first": live[0].label(), "last": live[-1].label()}
        lines.append(_("live wall: %(tiles)s tiles, first %(first)s, last %(last)s") % ends)
    else:
        lines.append(_("live wall: %(tiles)s tiles") % {"tiles": 0})
    lines.append("")
    if _bonus(state):
        legend = _(
            "Tiles: 1m-9m characters, 1p-9p circles, 1s-9s bamboos; E S W N winds; dragons C "
            "red, F green, B white (not a bamboo); 1f-8f flowers and seasons."
        )
    else:
        legend = _(
            "Tiles: 1m-9m characters, 1p-9p circles, 1s-9s bamboos; E S W N winds; dragons C "
            "red, F green, B white (not a bamboo)."
        )
    lines.append(legend)
    lines.append(
        _(
            "Walls, stack 1 at the owner's right end. Last row: where each tile went "
            "(E S W N a hand, c colline, . live wall); * joker; | breach."
        )
    )
    dest: dict[tuple[str, int, str], str] = {}
    for seat, positions in state.hand_positions.items():
        for p in positions:
            dest[(p.wall, p.stack, p.tier)] = seat
    for p in state.colline_positions:
        dest[(p.wall, p.stack, p.tier)] = "c"
    for p in state.live_wall_positions:
        dest[(p.wall, p.stack, p.tier)] = "."
    jp = state.joker.position if state.joker else None
    joker = (jp.wall, jp.stack, jp.tier) if jp else None
    names = {
        "stack": pgettext("row", "stack"),
        "top": pgettext("row", "top"),
        "bottom": pgettext("row", "bottom"),
        "to": pgettext("row", "to"),
    }
    width = max(6, *(len(name) for name in names.values()))
    for seat, stacks in state.manifest.walls.items():
        rows: dict[str, list[str]] = {"stack": [], "top": [], "bottom": [], "to": []}
        for number, stack in enumerate(stacks, start=1):
            top = stack[0] if len(stack) == 2 else ""
            bottom = stack[-1]
            tmark = "*" if joker == (seat, number, "top") else ""
            bmark = "*" if joker == (seat, number, "bottom") else ""
            sep = "|" if (b.wall, b.stack) == (seat, number) else " "
            rows["stack"].append(f"{number:>3}{sep}")
            shown_top = tile_text(top, glyphs) if top else ""
            rows["top"].append(f"{shown_top + tmark:>3}{sep}")
            rows["bottom"].append(f"{tile_text(bottom, glyphs) + bmark:>3}{sep}")
            to = (dest.get((seat, number, "top"), " ") if len(stack) == 2 else " ") + dest.get(
                (seat, number, "bottom"), "?"
            )
            rows["to"].append(f"{to:>3}{sep}")
        lines.append(_("wall %(seat)s") % {"seat": seat})
        for name in ("stack", "top", "bottom", "to"):
            lines.append(f"  {names[name]:<{width}} " + "".join(rows[name]).rstrip())
    lines.append("")
    lines.append(_("Hands, sorted (suits, winds, dragons, flowers); in the order taken below:"))
    for seat in state.seats:
        tiles = state.hands[seat]
        shown = " ".join(tile_text(t, glyphs).strip() for t in sorted_tiles(tiles))
        hand = {"seat": seat, "count": len(tiles), "tiles": shown}
        if seat == state.leader:
            lines.append("  " + _("%(seat)s (leader, %(count)s): %(tiles)s") % hand)
        else:
            lines.append("  " + _("%(seat)s (%(count)s): %(tiles)s") % hand)
    for seat in state.seats:
        taken = " ".join(tile_text(t, glyphs).strip() for t in state.hands[seat])
        lines.append("  " + _("%(seat)s as taken: %(tiles)s") % {"seat": seat, "tiles": taken})
    return "\n".join(lines)


def _bonus(state: DealtState) -> bool:
    return any(
        stack[-1].endswith("f") or stack[0].endswith("f")
        for stacks in state.manifest.walls.values()
        for stack in stacks
    )
