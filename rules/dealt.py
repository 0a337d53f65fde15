"""Seats, wall positions, throws, the wall manifest and the dealt state (TABLE.md sections 2, 8).

These pydantic models are the data that crosses the boundary between the table procedures
(:mod:`rules.deal`) and the rest of the project: the controller builds a :class:`Manifest`
from what the board reports and a list of :class:`Throw` from the dice, and publishes the
:class:`DealtState` that :func:`rules.deal.deal` returns. The JSON schema of the dealt state
is generated from :class:`DealtState` (see :func:`dealt_state_schema`).

Conventions:

- Seats are ``E`` ``S`` ``W`` ``N`` (indices 0..3); seat s+1 sits at the right of seat s.
- A position is ``(wall, stack, tier)``: stacks counted from 1 at the wall owner's right end;
  tier ``top`` or ``bottom``. A half stack (one tile) holds a single ``bottom`` tile.
- A manifest lists each wall's stacks from the owner's right end, each stack ``[top, bottom]``
  or ``[single]`` for a half stack. ``"?"`` stands for a tile the board could not identify.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from rules.tiles import ALL_FACES, parse_tile
from rules.words import RULE_SETS, SEATS, RuleSet, Seat, TileSetName

Tier = Literal["top", "bottom"]
#: The rule set as a JSON field: the names only, as the schema has always shown them.
RuleSetField = Annotated[
    RuleSet, WithJsonSchema({"enum": list(RULE_SETS), "title": "Variant", "type": "string"})
]

#: A tile named in the seeds' notation, or ``?`` for a tile a board without reader cannot name.
UNKNOWN = "?"
TILE_PATTERN = r"^([1-9][mps]|[ESWNCFB]|[1-8]f|\?)$"
Tile = Annotated[str, Field(pattern=TILE_PATTERN)]


class DealError(ValueError):
    """Bad input to a table procedure (profile, manifest, throws, seat); the text names it."""


class ManifestError(DealError):
    """A wall manifest that does not fit the profile or is malformed."""


class ThrowError(DealError):
    """A dice throw that is out of range, by the wrong seat, or not expected at all."""


def parse_seat(text: str) -> Seat:
    """``E``/``S``/``W``/``N`` (case-insensitive, ``O`` accepted for West) or DealError."""
    key = text.strip().upper()
    if key == "O":
        key = "W"
    for seat in SEATS:
        if seat == key:
            return seat
    raise DealError(f"unknown seat {text!r}: expected E, S, W or N")


class Pos(BaseModel):
    """One tile's place in the walls: wall (owner's seat), stack from his right end, tier."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    wall: Seat
    stack: int = Field(ge=1, description="1 at the wall owner's right end")
    tier: Tier

    def label(self) -> str:
        """Short text form such as ``W7t`` (wall, stack, t/b)."""
        return f"{self.wall}{self.stack}{self.tier[0]}"


class Throw(BaseModel):
    """One throw of the dice: who threw and the faces shown."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    by: Seat
    dice: list[Annotated[int, Field(ge=1)]] = Field(min_length=1)

    def total(self) -> int:
        return sum(self.dice)

    def text(self) -> str:
        """The dice as written on the command line: ``3+4``, or ``5`` for a single die."""
        return "+".join(str(d) for d in self.dice)


class Joker(BaseModel):
    """The turned tile of the Wenzhou joker procedure: its face and where it lies."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    face: Tile
    position: Pos


#: every tile's canonical name, and ``?``
_CANONICAL = frozenset((*ALL_FACES, UNKNOWN))


def _canonical_already(stack: list[Any]) -> bool:
    """Whether every tile of ``stack`` is written as canonical already (nothing to parse)."""
    try:
        return _CANONICAL.issuperset(stack)
    except TypeError:  # a tile that is not even hashable: the full check names it
        return False


class Manifest(BaseModel):
    """Which tile lies at each wall, stack and tier, as the board's tile reader reports it.

    Tiles are canonicalised on input (``O`` becomes ``W``) and the walls are kept in the
    order E, S, W, N whatever order the input used, so equal manifests serialise equally.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    walls: dict[Seat, list[list[Tile]]]

    @field_validator("walls", mode="before")
    @classmethod
    def _canonical(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            raise ValueError("walls must be an object with the keys E, S, W, N")
        unknown = [k for k in value if k not in SEATS]
        if unknown:
            raise ValueError(f"unknown wall {unknown[0]!r}: expected E, S, W, N")
        missing = [s for s in SEATS if s not in value]
        if missing:
            raise ValueError(f"wall {missing[0]} is missing (all four of E, S, W, N are needed)")
        walls: dict[str, list[list[str]]] = {}
        for seat in SEATS:
            stacks = value[seat]
            if not isinstance(stacks, list):
                raise ValueError(f"wall {seat}: expected a list of stacks")
            out: list[list[str]] = []
            for number, stack in enumerate(stacks, start=1):
                if type(stack) is list and 1 <= len(stack) <= 2 and _canonical_already(stack):
                    out.append(list(stack))  # as the board's tile codes name them
                    continue
                if not isinstance(stack, list) or not 1 <= len(stack) <= 2:
                    raise ValueError(
                        f"wall {seat} stack {number}: expected [top, bottom] or [single], "
                        f"got {stack!r}"
                    )
                tiles: list[str] = []
                for tile in stack:
                    if not isinstance(tile, str):
                        raise ValueError(f"wall {seat} stack {number}: tile {tile!r} is not text")
                    if tile == UNKNOWN:
                        tiles.append(tile)
                        continue
                    try:
                        tiles.append(parse_tile(tile))
                    except ValueError as exc:
                        raise ValueError(f"wall {seat} stack {number}: {exc}") from None
                out.append(tiles)
            walls[seat] = out
        return walls

    def tile_at(self, pos: Pos) -> str:
        """The tile at ``pos`` (a half stack's single tile is its ``bottom``)."""
        stack = self.walls[pos.wall][pos.stack - 1]
        if len(stack) == 1:
            if pos.tier != "bottom":
                raise KeyError(f"{pos.label()}: a half stack has only a bottom tile")
            return stack[0]
        return stack[0] if pos.tier == "top" else stack[1]

    def heights(self) -> dict[Seat, tuple[int, ...]]:
        return {s: tuple(len(st) for st in self.walls[s]) for s in SEATS}

    def board_order(self) -> list[str]:
        """Every tile in the board's order: walls E, S, W, N; stacks 1..n; top then bottom."""
        return [tile for s in SEATS for stack in self.walls[s] for tile in stack]

    @classmethod
    def from_json(cls, text: str | bytes) -> Manifest:
        """Parse ``{"walls": {...}}``; ManifestError with one line naming the fault."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ManifestError(f"manifest is not valid JSON: {exc}") from None
        return manifest_from_data(data)


def manifest_from_data(data: Any) -> Manifest:
    """Validate plain data as a Manifest, turning pydantic's report into one ManifestError."""
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        raise ManifestError("manifest: " + first_error(exc)) from None


class FieldProblem(ValueError):
    """A model's check that finds a problem with one of its fields (``field``, a dotted path
    under the model) and says it in ``words``; read as ``field: words``."""

    def __init__(self, field: str, words: str) -> None:
        super().__init__(f"{field}: {words}")
        self.field = field
        self.words = words


def error_parts(exc: ValidationError) -> list[tuple[str, str]]:
    """Every error of a pydantic report as its field's path (empty: the whole) and what is
    wrong with it."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(part) for part in err["loc"])
        ctx = err.get("ctx") or {}
        error = ctx.get("error") if err["type"] == "value_error" else None
        if isinstance(error, FieldProblem):
            parts.append((".".join(p for p in (loc, error.field) if p), error.words))
        else:
            parts.append((loc, err["msg"] if error is None else str(error)))
    return parts


def all_errors(exc: ValidationError) -> list[str]:
    """Every error of a pydantic report as ``field.path: message``, one line each."""
    return [f"{loc}: {msg}" if loc else msg for loc, msg in error_parts(exc)]


def first_error(exc: ValidationError, more_words: str = "") -> str:
    """The first error of a pydantic report as ``field.path: message`` (one line), with how
    many more there are (``more_words``: where to read them all)."""
    lines = all_errors(exc)
    more = len(lines) - 1
    tail = f" (and {more} more{more_words})" if more else ""
    return lines[0] + tail


class ProfileRef(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    version: str


class GamePosition(BaseModel):
    """Where the game played at the table stands for the next deal, as the rules layer knows
    it (``mjtable game follow`` tells the table with its Leader): the game's number, the hand
    that deal opens, the prevailing wind."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    game: int = Field(ge=1, le=1_000_000, description="the game's number, from 1")
    hand: int = Field(ge=1, le=16, description="the hand the next deal opens, from 1")
    wind: Seat = Field(description="the prevailing wind: E, S, W or N")


#: a seat-keyed object in the schema holds all four seats (its keys are already E, S, W, N only)
_EVERY_SEAT: dict[str, Any] = {"minProperties": len(SEATS)}


class DealtState(BaseModel):
    """The record the controller publishes after a deal (TABLE.md section 8).

    Recomputable: :func:`rules.deal.deal` given ``manifest``, ``leader`` and ``throws``
    with the same profile returns an equal record, byte for byte in JSON.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    variant: RuleSetField = Field(description="the rule family the profile belongs to")
    profile: ProfileRef = Field(description="the profile the deal was computed with")
    cycle_id: str = Field(description="the controller's deal cycle id; empty outside a cycle")
    tile_set: TileSetName = Field(description="which of the table's two tile sets was dealt")
    counting: Literal["pair", "tile"] = Field(
        description="pair: one pip counts one stack; tile: one pip counts one tile"
    )
    leader: Seat = Field(description="the seat that deals first and receives the extra tile")
    seats: list[Seat] = Field(description="the order of play, from the leader counter-clockwise")
    throws: list[Throw] = Field(description="every throw of the dice, in order, with its thrower")
    designated_wall: Seat = Field(description="the wall where the count starts")
    count: int = Field(description="the breach count T, in stacks (pair) or tiles (tile mode)")
    joker: Joker | None = Field(description="the turned tile (Wenzhou); null when none")
    breach: Pos = Field(description="the last tile counted; dealing starts with the next one")
    hands: dict[Seat, list[Tile]] = Field(
        description="each seat's tiles, in the order taken", json_schema_extra=_EVERY_SEAT
    )
    hand_positions: dict[Seat, list[Pos]] = Field(
        description="where each hand tile came from", json_schema_extra=_EVERY_SEAT
    )
    colline: list[Tile] = Field(description="the dead wall, in replacement order")
    colline_positions: list[Pos]
    live_wall: list[Tile] = Field(description="the live wall, in draw order")
    live_wall_positions: list[Pos]
    manifest: Manifest = Field(description="the wall manifest the deal was computed from")

    @field_validator("hands", "hand_positions")
    @classmethod
    def _every_seat(cls, by_seat: dict[Seat, list[Any]]) -> dict[Seat, list[Any]]:
        missing = [seat for seat in SEATS if seat not in by_seat]
        if missing:
            raise ValueError(f"seat {missing[0]} is missing (all four are needed)")
        return by_seat

    @model_validator(mode="after")
    def _consistent(self) -> DealtState:
        if sorted(self.seats) != sorted(SEATS) or self.seats[0] != self.leader:
            raise ValueError("seats must name E, S, W, N once each, the leader first")
        for seat in SEATS:
            if len(self.hands[seat]) != len(self.hand_positions[seat]):
                raise ValueError(f"hands.{seat} and hand_positions.{seat} differ in length")
        return self

    def to_json(self) -> str:
        """Compact JSON; equal states give identical bytes."""
        return self.model_dump_json()


def dealt_state_schema() -> str:
    """The JSON schema of :class:`DealtState`, as committed in ``docs/schema/dealt-state.json``."""
    schema = DealtState.model_json_schema()
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
