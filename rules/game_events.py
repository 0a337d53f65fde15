"""The events of a game record, as JSON objects with a ``type``.

A game record (:class:`rules.game.GameRecord`) is the history of one table of four players:
who sits with what buy-in (``sit``), how the seats are drawn for each game (``wind_draw``
Wenzhou, ``dice_seating`` Sichuan, ``wind_row`` WSOM; the simplified rules draw none), each
hand opened on the table's dealt state (``dealt``), and the events of play of
:mod:`rules.events` (``draw``, ``discard``, ``claim``, ``calls``, ``kong``, ``flower``, ``win``,
``penalty``, ``exhausted``), which go to the hand in play.

Every field is strict: a die is an integer 1 to 6 (not ``true``, ``"6"`` or ``5.0``), an
amount is an integer or a decimal string with at most two decimals (never a float), a name
is printable text. A log is one event per line (JSON lines); :func:`parse_game_log` names
the line at fault.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    RootModel,
    ValidationError,
    field_validator,
)

from rules import record_words as rw
from rules.dealt import DealtState, RuleSetField, error_parts, first_error
from rules.events import (
    Calls,
    Claim,
    Discard,
    Draw,
    Exhausted,
    Flower,
    Kong,
    Penalty,
    RecordError,
    Win,
)
from rules.game_words import Words
from rules.words import Seat

#: The most euros one amount (a buy-in, the point) may be: far above any table's stakes.
MAX_AMOUNT = Decimal(10_000_000)
_AMOUNT = re.compile(r"\d{1,8}(\.\d{1,2})?")
_NAME = re.compile(r"[^\x00-\x1f\x7f-\x9f]{1,40}")


def _amount(value: Any) -> Decimal:
    """An amount in euros: an integer, or a string such as ``"1000"`` or ``"0.50"``."""
    if isinstance(value, Decimal) or (isinstance(value, int) and not isinstance(value, bool)):
        text = str(value)
    elif isinstance(value, str):
        text = value
    else:
        raise ValueError(rw.AMOUNT_TYPE.format(value=repr(value)))
    if not _AMOUNT.fullmatch(text):
        raise ValueError(rw.AMOUNT_DECIMALS.format(text=repr(text)))
    amount = Decimal(text)
    if amount > MAX_AMOUNT:
        raise ValueError(rw.AMOUNT_MOST.format(text=text, most=MAX_AMOUNT))
    return amount


#: Euros, exactly: written as a string in JSON so that no float ever carries it.
Amount = Annotated[Decimal, BeforeValidator(_amount), PlainSerializer(str, return_type=str)]
Die = Annotated[int, Field(strict=True, ge=1, le=6)]
TwoDice = Annotated[list[Die], Field(min_length=2, max_length=2)]


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Player(_Event):
    """A player at the table: his name and his buy-in (« cave ») in euros."""

    name: str = Field(description="printable, 1 to 40 characters")
    buy_in: Amount

    @field_validator("name")
    @classmethod
    def _printable(cls, name: str) -> str:
        if not _NAME.fullmatch(name) or name != name.strip():
            raise ValueError(rw.NAME)
        return name


class Sit(_Event):
    """Four players sit down at a table playing ``variant``; ``point``: euros per unit."""

    type: Literal["sit"] = "sit"
    variant: RuleSetField
    players: list[Player] = Field(min_length=4, max_length=4)
    point: Amount | None = None

    @field_validator("players")
    @classmethod
    def _distinct(cls, players: list[Player]) -> list[Player]:
        names = [p.name for p in players]
        if len(set(names)) != len(names):
            raise ValueError(rw.FOUR_NAMES.format(names=repr(names)))
        return players


class WindDraw(_Event):
    """Wenzhou: the player listed ``i``-th in ``sit`` draws the wind ``winds[i]``."""

    type: Literal["wind_draw"] = "wind_draw"
    winds: list[Seat] = Field(min_length=4, max_length=4)


class SeatThrow(_Event):
    player: str
    dice: TwoDice


class DiceSeating(_Event):
    """Sichuan: every throw of the seating in order (ties thrown again by the tied players),
    and the seat the highest chooses."""

    type: Literal["dice_seating"] = "dice_seating"
    throws: list[SeatThrow] = Field(min_length=4, max_length=64)
    leader_seat: Seat


class WindRow(_Event):
    """WSOM: the four winds face down between an odd (first) and an even (last) tile; the
    players listed in ``sit`` sit counter-clockwise in that order; ``first_thrower`` throws
    ``first``, the player counted throws ``second``."""

    type: Literal["wind_row"] = "wind_row"
    row: list[Seat] = Field(min_length=4, max_length=4)
    first_thrower: str
    first: TwoDice
    second: TwoDice


class Dealt(_Event):
    """The table's dealt state, which opens the next hand."""

    type: Literal["dealt"] = "dealt"
    dealt: DealtState


Seating = WindDraw | DiceSeating | WindRow
GameEvent = Annotated[
    Sit
    | WindDraw
    | DiceSeating
    | WindRow
    | Dealt
    | Draw
    | Discard
    | Claim
    | Calls
    | Kong
    | Flower
    | Win
    | Penalty
    | Exhausted,
    Field(discriminator="type"),
]


class _Line(RootModel[GameEvent]):
    """One event, as a line of a log holds it."""


#: The hand events, which a game record passes to the hand in play.
HandEvent = Draw | Discard | Claim | Calls | Kong | Flower | Win | Penalty | Exhausted


class EventError(RecordError):
    """A line that is no game event; the text names the field at fault. ``words``: the same
    to be said in a language, the field as the line writes it and the problem passed on (the
    text alone when no field is at fault)."""

    def __init__(self, text: str, words: Words | str | None = None) -> None:
        super().__init__(text)
        self.words: Words | str = text if words is None else words


def parse_game_event(text: str | bytes) -> GameEvent:
    """One event from its JSON text, or EventError naming the field at fault."""
    try:
        return _Line.model_validate_json(text).root
    except ValidationError as exc:
        raise EventError(first_error(exc), refusal(exc)) from None


#: where pydantic's JSON parser says a line goes wrong ("... at line 1 column 2")
_JSON_AT = re.compile(r"at line \d+ column (\d+)$")


def refusal(exc: ValidationError) -> Words | str:
    """The first problem of a pydantic report in the game record's words (what first_error
    writes, with the field as written and pydantic's sentence passed on)."""
    first = exc.errors()[0]
    if first["type"] == "json_invalid":  # the parser's own words name the character
        where = _JSON_AT.search(str((first.get("ctx") or {}).get("error", "")))
        if where is not None:
            return Words("not_json", {"column": int(where.group(1))})
    parts = error_parts(exc)
    field, problem = parts[0]
    if not field:
        return first_error(exc)
    more = len(parts) - 1
    if more:
        return Words("field_problems", {"field": field, "problem": problem, "more": more})
    return Words("field_problem", {"field": field, "problem": problem})


def parse_game_log(text: str) -> list[GameEvent]:
    """Every event of a JSON lines log (blank lines skipped), or EventError naming the line."""
    events: list[GameEvent] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                events.append(parse_game_event(line))
            except EventError as exc:
                raise EventError(f"line {number}: {exc}") from None
    return events


def event_line(event: GameEvent) -> str:
    """The event as one line of JSON, as :func:`parse_game_event` reads it back."""
    return event.model_dump_json()
