"""The wall during play: the live wall and the colline after the deal, draws and kong (or
flower) replacements (TABLE.md sections 2 and 4). Immutable states, pure operations.

- :func:`wall_state` -- the wall right after the deal;
- :func:`draw` -- an ordinary draw from the live wall's front;
- :func:`take_live_end` -- a tile from the live wall's far end;
- :func:`replacement` -- a kong or flower replacement, where the profile says.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from rules.dealt import DealError, DealtState, Pos, Tile
from rules.profiles import Profile


class WallExhausted(DealError):
    """No tile left where a draw or a replacement must come from."""


class Placed(BaseModel):
    """A tile and the wall position it was dealt from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tile: Tile
    pos: Pos


class WallState(BaseModel):
    """The live wall (front first, in draw order) and the colline (in replacement order)
    during play. Immutable: every operation returns a new state."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    live: tuple[Placed, ...]
    colline: tuple[Placed, ...]

    @property
    def exhausted(self) -> bool:
        """True once the last live tile has been drawn (Wenzhou: the hand is a draw)."""
        return not self.live


class Drawn(BaseModel):
    """The result of a draw or a replacement: the tile taken, the tile moved from the live
    wall's end to the colline's right end (Wenzhou) if any, and the wall afterwards."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tile: Placed
    moved: Placed | None = None
    wall: WallState


def wall_state(dealt: DealtState) -> WallState:
    """The wall right after the deal."""
    live = tuple(
        Placed(tile=t, pos=p)
        for t, p in zip(dealt.live_wall, dealt.live_wall_positions, strict=True)
    )
    colline = tuple(
        Placed(tile=t, pos=p) for t, p in zip(dealt.colline, dealt.colline_positions, strict=True)
    )
    return WallState(live=live, colline=colline)


def draw(wall: WallState) -> Drawn:
    """An ordinary draw: the first tile of the live wall."""
    if not wall.live:
        raise WallExhausted("the live wall is exhausted: nothing left to draw")
    return Drawn(tile=wall.live[0], wall=WallState(live=wall.live[1:], colline=wall.colline))


def _end_index(live: tuple[Placed, ...]) -> int:
    """Index of the tile taken from the live wall's far end: the top of its last stack."""
    if len(live) >= 2:
        a, b = live[-2].pos, live[-1].pos
        if a.wall == b.wall and a.stack == b.stack:
            return len(live) - 2
    return len(live) - 1


def take_live_end(wall: WallState) -> Drawn:
    """A tile from the live wall's far end (the stack next to the colline, or to the breach
    without colline): the top tile of the last stack first (TABLE.md section 2)."""
    if not wall.live:
        raise WallExhausted("the live wall is exhausted: no tile at its far end")
    i = _end_index(wall.live)
    rest = wall.live[:i] + wall.live[i + 1 :]
    return Drawn(tile=wall.live[i], wall=WallState(live=rest, colline=wall.colline))


def replacement(profile: Profile, wall: WallState) -> Drawn:
    """A kong (or flower) replacement as the profile says (TABLE.md section 4).

    ``colline``: the colline's first tile (from the left, top first); then, when the colline
    is replenished, the live wall's last tile moves to the colline's right end so it keeps
    its size (while the live wall has tiles). ``live_end``: :func:`take_live_end`.
    """
    if profile.replacement.source == "live_end":
        return take_live_end(wall)
    if not wall.colline:
        raise WallExhausted("the colline is empty: no replacement tile")
    taken = wall.colline[0]
    colline = wall.colline[1:]
    live = wall.live
    moved: Placed | None = None
    if profile.colline.replenish == "live_end" and live:
        i = _end_index(live)
        moved = live[i]
        live = live[:i] + live[i + 1 :]
        colline = (*colline, moved)
    return Drawn(tile=taken, moved=moved, wall=WallState(live=live, colline=colline))
