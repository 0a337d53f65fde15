"""The table seen from above as SVG: the four walls, the breach and the joker's place.

The picture is taken from the last ``dealt`` event the station's connection received (the
table's own account: the station never recomputes a deal). :func:`picture_of` keeps the
positions, and the tiles' faces only when asked (a role of the page may see them, which by
default none does); :func:`svg` draws it. A connection that never receives dealt states (the
API's status role) has no picture: the walls are drawn empty, and the page says why.

Seats as in docs/table.md: East at the bottom, South at its right, West opposite, North at
its left; each wall's stacks are counted from its owner's right end, so the ring of the
walls runs clockwise on the screen (E right to left, N bottom to top, W left to right,
S top to bottom). No style attributes: the page's Content-Security-Policy forbids inline
styles, so the SVG uses classes (static/page.css) and presentation attributes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from html import escape

from controller.api.messages import DealtEvent
from station.lang import N_

#: Where each seat's wall is drawn (East at the bottom, then counter-clockwise).
SIDES = {"E": "bottom", "S": "right", "W": "top", "N": "left"}
#: The picture's sizes (SVG user units): stack length along the wall, wall depth, margin.
STACK = 20
DEPTH = 16
MARGIN = 34
#: The longest wall drawn when no deal was seen (18 stacks: 144 tiles).
EMPTY_STACKS = 18


@dataclass(frozen=True)
class Spot:
    wall: str
    stack: int
    tier: str

    def label(self, _: Callable[[str], str] = str) -> str:
        """``E14 bottom``; ``_``: a language's gettext for the tier's word."""
        return f"{self.wall}{self.stack} {_(self.tier)}"


@dataclass(frozen=True)
class Picture:
    cycle: str
    variant: str
    tile_set: str
    leader: str
    designated: str
    throws: tuple[str, ...]
    heights: dict[str, tuple[int, ...]]  # each wall's stacks from its owner's right end
    breach: Spot
    joker: Spot | None
    #: each wall's stacks as [top, bottom] or [single]; None: faces not kept
    faces: dict[str, tuple[tuple[str, ...], ...]] | None = None
    joker_face: str | None = None


def picture_of(event: DealtEvent, *, faces: bool) -> Picture:
    """What the page may draw of a dealt state: positions, and the faces only if ``faces``."""
    dealt = event.dealt
    walls = dealt.manifest.walls
    joker = dealt.joker
    return Picture(
        cycle=dealt.cycle_id,
        variant=str(dealt.variant),
        tile_set=dealt.tile_set,
        leader=dealt.leader,
        designated=dealt.designated_wall,
        throws=tuple(f"{t.by} {t.text()}" for t in dealt.throws),
        heights={seat: tuple(len(stack) for stack in wall) for seat, wall in walls.items()},
        breach=Spot(dealt.breach.wall, dealt.breach.stack, dealt.breach.tier),
        joker=None
        if joker is None
        else Spot(joker.position.wall, joker.position.stack, joker.position.tier),
        faces={s: tuple(tuple(st) for st in wall) for s, wall in walls.items()} if faces else None,
        joker_face=joker.face if faces and joker is not None else None,
    )


@dataclass(frozen=True)
class _Box:
    x: float
    y: float
    w: float
    h: float


def _stack_box(seat: str, k: int, length: int, offset: float) -> _Box:
    """Stack ``k`` (1-based, from the owner's right end) of ``seat``'s wall."""
    inner = MARGIN + DEPTH  # the inner square's corner
    far = inner + length  # its opposite corner
    along = offset + (k - 1) * STACK
    if seat == "E":  # bottom, right to left
        return _Box(far - along - STACK, far, STACK, DEPTH)
    if seat == "S":  # right, top to bottom
        return _Box(far, inner + along, DEPTH, STACK)
    if seat == "W":  # top, left to right
        return _Box(inner + along, MARGIN, STACK, DEPTH)
    return _Box(MARGIN, far - along - STACK, DEPTH, STACK)  # N: left, bottom to top


def _run_box(seat: str, length: int) -> _Box:
    """The whole of ``seat``'s wall, its stacks unknown."""
    inner = MARGIN + DEPTH
    far = inner + length
    return {
        "E": _Box(inner, far, length, DEPTH),
        "S": _Box(far, inner, DEPTH, length),
        "W": _Box(inner, MARGIN, length, DEPTH),
        "N": _Box(MARGIN, inner, DEPTH, length),
    }[seat]


def _left_edge(seat: str, box: _Box) -> tuple[float, float, float, float]:
    """The edge of a stack toward the next stack leftward (where the breach opens)."""
    pad = 5
    if seat == "E":
        return (box.x, box.y - pad, box.x, box.y + box.h + pad)
    if seat == "S":
        return (box.x - pad, box.y + box.h, box.x + box.w + pad, box.y + box.h)
    if seat == "W":
        return (box.x + box.w, box.y - pad, box.x + box.w, box.y + box.h + pad)
    return (box.x - pad, box.y, box.x + box.w + pad, box.y)


def _label_at(seat: str, size: float) -> tuple[float, float]:
    mid = size / 2
    return {
        "E": (mid, size - 10),
        "S": (size - 14, mid + 4),
        "W": (mid, 22),
        "N": (14, mid + 4),
    }[seat]


#: The tiers' words (a Spot's ``tier``), for the catalogue (station/lang.py).
TIERS = (N_("top"), N_("bottom"))


def svg(picture: Picture | None, *, faces: bool, _: Callable[[str], str] = str) -> str:
    """The SVG element; ``faces`` draws the tiles' faces when the picture kept them; ``_``: a
    language's gettext for its words (English by default)."""
    heights = picture.heights if picture is not None else {s: () for s in SIDES}
    longest = max([len(h) for h in heights.values()] + [1])
    length = (longest if picture is not None else EMPTY_STACKS) * STACK
    size = 2 * (MARGIN + DEPTH) + length
    shown = picture.faces if picture is not None and faces else None
    if picture is None:
        words = _("The four walls; no deal seen by this page yet.")
    else:
        words = _("Cycle %(cycle)s: the four walls as dealt, breach after %(breach)s") % {
            "cycle": picture.cycle or _("(none)"),
            "breach": picture.breach.label(_),
        }
        if picture.joker:
            words += _(", joker turned at %(place)s") % {"place": picture.joker.label(_)}
        words += _("; faces shown.") if shown else _("; tiles drawn as backs.")
    heading = _("The table seen from above")
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {size} {size}" '
        f'class="table-picture" role="img" aria-labelledby="picture-title picture-desc">',
        f'<title id="picture-title">{escape(heading)}</title>',
        f'<desc id="picture-desc">{escape(words)}</desc>',
        f'<rect class="felt" x="{MARGIN + DEPTH}" y="{MARGIN + DEPTH}" '
        f'width="{length}" height="{length}"/>',
    ]
    for seat in SIDES:
        stacks = heights[seat]
        offset = (length - len(stacks) * STACK) / 2
        x, y = _label_at(seat, size)
        out.append(f'<g class="wall" data-wall="{seat}">')
        if stacks:
            title = _("wall %(seat)s: %(count)s stacks") % {"seat": seat, "count": len(stacks)}
        else:
            title = _("wall %(seat)s: stacks not known") % {"seat": seat}
        out.append(f"<title>{escape(title)}</title>")
        out.append(f'<text class="seat" x="{x}" y="{y}" text-anchor="middle">{seat}</text>')
        if not stacks:
            run = _run_box(seat, length)
            out.append(
                f'<rect class="wall-unknown" x="{run.x}" y="{run.y}" '
                f'width="{run.w}" height="{run.h}"/>'
            )
        for k, height in enumerate(stacks, start=1):
            box = _stack_box(seat, k, length, offset)
            kind = "stack" if height == 2 else "stack half"
            out.append(
                f'<rect class="{kind}" data-stack="{k}" x="{box.x}" y="{box.y}" '
                f'width="{box.w}" height="{box.h}"/>'
            )
            if shown is not None:
                tiles = "/".join(shown[seat][k - 1])
                out.append(
                    f'<text class="face" x="{box.x + box.w / 2}" y="{box.y + box.h / 2 + 3}" '
                    f'text-anchor="middle">{escape(tiles)}</text>'
                )
        out.append("</g>")
    if picture is not None:
        out.extend(_marks(picture, length, shown is not None, _))
    out.append("</svg>")
    return "\n".join(out)


def _marks(picture: Picture, length: int, faces: bool, _: Callable[[str], str]) -> list[str]:
    out: list[str] = []
    b = picture.breach
    stacks = picture.heights[b.wall]
    offset = (length - len(stacks) * STACK) / 2
    x1, y1, x2, y2 = _left_edge(b.wall, _stack_box(b.wall, b.stack, length, offset))
    out.append(
        f'<g class="breach" data-wall="{b.wall}" data-stack="{b.stack}" data-tier="{b.tier}">'
        "<title>"
        + escape(
            _("breach after %(place)s: dealing starts with the next tile leftward")
            % {"place": b.label(_)}
        )
        + "</title>"
        f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}"/></g>'
    )
    j = picture.joker
    if j is not None:
        stacks = picture.heights[j.wall]
        offset = (length - len(stacks) * STACK) / 2
        box = _stack_box(j.wall, j.stack, length, offset)
        face = f" ({picture.joker_face})" if faces and picture.joker_face else ""
        out.append(
            f'<g class="joker" data-wall="{j.wall}" data-stack="{j.stack}" data-tier="{j.tier}">'
            "<title>"
            + escape(_("joker turned at %(place)s") % {"place": j.label(_)} + face)
            + "</title>"
            f'<circle cx="{box.x + box.w / 2}" cy="{box.y + box.h / 2}" r="5"/></g>'
        )
    return out
