"""The dealt table as a text picture, in the seeds' letters or in mahjong glyphs.

Used by `mjtable deal` and `mjtable demo`: a legend of the tiles' letters, the four walls as
built, with the breach, the joker and the colline marked and where each tile went, then each
hand sorted and in the order taken.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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


def render_text(state: DealtState, glyphs: bool = False) -> str:
    """The table as text: the four walls with breach, joker and colline marked, and each
    hand in the order taken."""
    lines: list[str] = []
    profile = f"{state.profile.name} {state.profile.version}"
    cycle = f", cycle {state.cycle_id}" if state.cycle_id else ""
    lines.append(f"{state.variant} (profile {profile}), tile set {state.tile_set}{cycle}")
    throws = ", ".join(f"{t.by} {t.text()}" for t in state.throws)
    lines.append(f"leader {state.leader}; throws: {throws}")
    unit = "stacks" if state.counting == "pair" else "tiles"
    b = state.breach
    lines.append(
        f"designated wall {state.designated_wall}; count {state.count} {unit}; "
        f"breach after {b.wall}{b.stack} {b.tier}"
    )
    if state.joker is not None:
        j = state.joker
        face = tile_text(j.face, glyphs).strip()
        lines.append(f"joker: {face}, turned at {j.position.wall}{j.position.stack} top")
    colline = " ".join(p.label() for p in state.colline_positions) or "none"
    lines.append(f"colline ({len(state.colline)} tiles, replacement order): {colline}")
    live = state.live_wall_positions
    ends = f", first {live[0].label()}, last {live[-1].label()}" if live else ""
    lines.append(f"live wall: {len(live)} tiles{ends}")
    lines.append("")
    lines.append(
        "Tiles: 1m-9m characters, 1p-9p circles, 1s-9s bamboos; E S W N winds; dragons C red, "
        "F green, B white (not a bamboo)"
        + ("; 1f-8f flowers and seasons." if _bonus(state) else ".")
    )
    lines.append(
        "Walls, stack 1 at the owner's right end. Last row: where each tile went "
        "(E S W N a hand, c colline, . live wall); * joker; | breach."
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
        lines.append(f"wall {seat}")
        for name in ("stack", "top", "bottom", "to"):
            lines.append(f"  {name:<6} " + "".join(rows[name]).rstrip())
    lines.append("")
    lines.append("Hands, sorted (suits, winds, dragons, flowers); in the order taken below:")
    for seat in state.seats:
        tiles = state.hands[seat]
        role = "leader, " if seat == state.leader else ""
        shown = " ".join(tile_text(t, glyphs).strip() for t in sorted_tiles(tiles))
        lines.append(f"  {seat} ({role}{len(tiles)}): {shown}")
    for seat in state.seats:
        taken = " ".join(tile_text(t, glyphs).strip() for t in state.hands[seat])
        lines.append(f"  {seat} as taken: {taken}")
    return "\n".join(lines)


def _bonus(state: DealtState) -> bool:
    return any(
        stack[-1].endswith("f") or stack[0].endswith("f")
        for stacks in state.manifest.walls.values()
        for stack in stacks
    )
