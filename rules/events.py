"""The events of play that a hand record applies, and the error it refuses them with.

Events are JSON objects with a ``type`` (:data:`Event`): ``draw``, ``discard``, ``claim``,
``calls``, ``kong``, ``flower``, ``win``, ``penalty``, ``exhausted``. :func:`parse_events`
reads a list of them; :class:`rules.record.HandRecord` checks each against the hand's state.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from rules import record_words as rw
from rules.dealt import Tile, first_error
from rules.words import Seat


class RecordError(ValueError):
    """A dealt state that cannot start a hand, or an event the hand's state refuses."""


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Draw(_Event):
    """The seat draws: the live wall's next tile, or the replacement after its kong/flower.
    ``tile`` (optional) is what the seat saw, checked against the wall."""

    type: Literal["draw"] = "draw"
    seat: Seat
    tile: Tile | None = None


class Discard(_Event):
    type: Literal["discard"] = "discard"
    seat: Seat
    tile: Tile


class Claim(_Event):
    """The seat takes the last discard to expose a set with ``tiles`` from its hand."""

    type: Literal["claim"] = "claim"
    seat: Seat
    tiles: list[Tile] = Field(min_length=2, max_length=3)


CallKind = Literal["mahjong", "kong", "pung", "chow"]


class Call(_Event):
    """One player's call on the last discard: Mah-Jong, or a set with ``tiles`` from his
    hand (2 for a chow or a pung, 3 for a kong)."""

    seat: Seat
    call: CallKind
    tiles: list[Tile] = Field(default_factory=list, max_length=3)


class Calls(_Event):
    """Every call made on the last discard at once: the record gives the tile to the first
    by the seeds' priority and keeps who lost the call (:mod:`rules.calls`)."""

    type: Literal["calls"] = "calls"
    calls: list[Call] = Field(min_length=1, max_length=3)

    @field_validator("calls")
    @classmethod
    def _one_each(cls, calls: list[Call]) -> list[Call]:
        seats = [c.seat for c in calls]
        if len(set(seats)) != len(seats):
            raise ValueError(rw.ONE_CALL.format(seats=repr(seats)))
        return calls


class Kong(_Event):
    """In its own turn: four alike from the hand (concealed), or a fourth added to an exposed
    pung."""

    type: Literal["kong"] = "kong"
    seat: Seat
    tile: Tile


class Flower(_Event):
    """Simplified rules: a flower or season laid out; the replacement draw follows."""

    type: Literal["flower"] = "flower"
    seat: Seat
    tile: Tile


class Win(_Event):
    """The seat declares Mah-Jong (Hu). ``announced``: simplified rules, "une Tuile"."""

    type: Literal["win"] = "win"
    seat: Seat
    announced: bool = True


class Penalty(_Event):
    """The floor penalises a seat (a wrong set exposed, a wrong tile count...)."""

    type: Literal["penalty"] = "penalty"
    seat: Seat
    reason: str = Field(min_length=1)


class Exhausted(_Event):
    """The live wall is empty and nobody can go on: the hand ends."""

    type: Literal["exhausted"] = "exhausted"


Event = Annotated[
    Draw | Discard | Claim | Calls | Kong | Flower | Win | Penalty | Exhausted,
    Field(discriminator="type"),
]
EVENTS_ADAPTER: TypeAdapter[list[Event]] = TypeAdapter(list[Event])

Phase = Literal["discard", "claim", "kong", "flower", "over"]


def parse_events(text: str | bytes) -> list[Event]:
    """Events from JSON (a list of objects with a ``type``), RecordError on bad input."""
    try:
        return EVENTS_ADAPTER.validate_json(text)
    except ValidationError as exc:
        raise RecordError(rw.EVENTS.format(problem=first_error(exc))) from None
