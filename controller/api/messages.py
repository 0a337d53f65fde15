"""The local API's messages: requests, responses and event lines, and their JSON schemas.

One request per line, one response per request, and for subscribers a stream of
``{"event": {...}}`` lines. Every message is a pydantic model below (requests,
responses) or in controller/cycle/reports.py (events); their JSON schemas are written
into docs/api/ by :func:`write_schemas` (``python -m controller.api --write DIR``)
and a test checks the committed files match. See docs/api.md for the wire format.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    TypeAdapter,
    create_model,
    model_validator,
)

# The events and the status are the cycle's reports; they are the API's messages too, and
# clients (the floor gateway among them) take them from here, never from the cycle; so are the
# words the panel's LEDs stand for in each state (the dealer's view shows the same).
from controller.cycle.leds import PATTERNS as _PATTERNS
from controller.cycle.leds import LedPattern as LedPattern
from controller.cycle.reports import ButtonEvent as ButtonEvent
from controller.cycle.reports import CommandResult as CommandResult
from controller.cycle.reports import DealtEvent as DealtEvent
from controller.cycle.reports import DiagEvent as DiagEvent
from controller.cycle.reports import DiagStarted as DiagStarted
from controller.cycle.reports import Event as Event
from controller.cycle.reports import FaultClearedEvent as FaultClearedEvent
from controller.cycle.reports import FaultEvent as FaultEvent
from controller.cycle.reports import Status as Status
from controller.cycle.reports import ThrowWantedEvent as ThrowWantedEvent
from controller.cycle.reports import utc_now as utc_now
from rules.dealt import DealtState, GamePosition
from rules.words import Seat

#: The panel's LED patterns with their words: what a client that shows the table's words (the
#: station) shows, and translates.
PANEL_PATTERNS = _PATTERNS


def panel_pattern(state: str) -> LedPattern:
    """The panel's pattern in a state: what the table does and what to press next. The state
    table is read when first asked (it brings the state machine's library, which a client that
    never asks does not load)."""
    from controller.cycle.states import panel_pattern as pattern

    return pattern(state)


def throw_purposes() -> dict[str, str]:
    """What each throw the rules ask for is for (``ThrowWantedEvent.purpose``), in words."""
    from rules.dice import PURPOSE_TEXT

    return dict(PURPOSE_TEXT)


def table_sentences() -> tuple[str, ...]:
    """The sentences the table makes with details filled in (``{state}``, ``{seconds:g}``...):
    its refusals of a button, its own faults' words and advice, a diagnosis', the API client's
    when the service cannot be reached (controller/api/client_words.py). A client that
    translates the table's words matches what it receives against them in this order, the
    more particular first (station/lang.py, cli/lang.py)."""
    from controller.api.client_words import CLIENT_SENTENCES
    from controller.cycle.diagnosis import diagnosis_sentences
    from controller.cycle.faults import board_fault_sentences, fault_sentences
    from controller.cycle.reports import PANEL_GONE
    from controller.cycle.requests import LEADER_SENTENCES, THROW_TAKEN
    from controller.cycle.states import refusal_sentences
    from controller.cycle.steps import STEP_SENTENCES
    from drivers.panel_reports import NOT_AT_START, UNPLUGGED, USB_ERROR

    mine = refusal_sentences() + fault_sentences() + STEP_SENTENCES + (THROW_TAKEN,)
    mine += LEADER_SENTENCES
    panel = (PANEL_GONE, USB_ERROR, NOT_AT_START, UNPLUGGED)
    first, last = diagnosis_sentences()
    return mine + panel + CLIENT_SENTENCES + first + board_fault_sentences() + last


def board_words() -> tuple[str, ...]:
    """The protocol's words the board's faults are told in, each whole (what happened, the
    advice, the parts, places and phases they name): the details of the table's sentences
    about a board fault."""
    from controller.cycle.faults import board_words as words

    return words()


def diagnosis_words() -> tuple[str, ...]:
    """The protocol's words a diagnosis shows (`mjtable diag`, the service's ``diag``): the
    parts fitted, the places of the sets, the board's states, switches and lifts..."""
    from controller.cycle.diagnosis import diagnosis_words as words

    return words()


def state_names() -> tuple[str, ...]:
    """The names of the table's states (``Status.state``), in the state table's order."""
    from controller.cycle.states import STATES

    return STATES


# --- requests -------------------------------------------------------------------

RequestId = StrictInt | StrictFloat | StrictStr | StrictBool | None


class BaseRequest(BaseModel):
    """What every request carries: its ``op`` (in each subclass) and an optional ``id``.

    Every request is validated strictly (pydantic's strict mode, for every field of every
    request): a JSON value is taken only as what it is, so ``true`` is not the integer 1,
    ``"6"`` is not 6 and ``5.0`` is not 5; anything else is refused (``bad_request``, naming
    the field: controller/api/decoding.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    id: RequestId = Field(
        default=None, description="any JSON scalar; echoed unchanged in the response"
    )


class StatusRequest(BaseRequest):
    """Ask for a snapshot of the table."""

    op: Literal["status"]


class ShuffleRequest(BaseRequest):
    """Press SHUFFLE: shuffle and build the waiting tile set."""

    op: Literal["shuffle"]


class DealRequest(BaseRequest):
    """Press DEAL: raise the walls, throw the dice and compute the dealt state."""

    op: Literal["deal"]


class StopRequest(BaseRequest):
    """Press STOP: stop all motion."""

    op: Literal["stop"]


class ClearFaultRequest(BaseRequest):
    """Turn the technician key: clear a fault once its cause is dealt with."""

    op: Literal["clear_fault"]


class ThrowRequest(BaseRequest):
    """Enter the dice of a throw made by hand (the configuration's dice.source is dealer),
    after a ``throw_wanted`` event said who throws and how many dice."""

    op: Literal["throw"]
    dice: list[Annotated[StrictInt, Field(ge=1, le=6)]] = Field(
        min_length=1, max_length=3, description="the faces shown: integers, 1 to 6 each"
    )


class LastDealtRequest(BaseRequest):
    """Ask for the last published dealt state (null before the first deal)."""

    op: Literal["last_dealt"]


class GetCycleRequest(BaseRequest):
    """Ask for the dealt state of one cycle by its id."""

    op: Literal["get_cycle"]
    cycle: StrictStr = Field(min_length=1, description="the cycle id, as in events and status")


def _board_accepts(ms: int | None) -> int | None:
    """A motor test no longer than the board accepts (its firmware's max_motor_test_ms)."""
    # lazy: the firmware's limits load the protocol's tables, which the API's other requests
    # (and `mjtable status`) never need
    from controller.cycle.diagnosis import max_motor_ms

    if ms is not None and ms > max_motor_ms():
        raise ValueError(f"at most {max_motor_ms()} ms, the longest motor test the board accepts")
    return ms


class DiagRequest(BaseRequest):
    """A technician's diagnosis: read the board's sensors and, with ``motors`` and the table
    at rest, test each motor. Answered at once (accepted, or why not); ``diag`` events with
    the answer's ``test`` follow on a subscribed connection. Full socket only."""

    op: Literal["diag"]
    motors: StrictBool = Field(default=False, description="also test each motor")
    motor_ms: Annotated[StrictInt | None, AfterValidator(_board_accepts)] = Field(
        default=None,
        ge=1,
        description="with motors: how long each test runs, ms, at most the longest the board "
        "accepts (null: the board's default, long enough for its stall trip)",
    )


class SetLeaderRequest(BaseRequest):
    """Who leads the next deal, from the rules layer: the cycle under way's Leader until its
    dice are thrown, else the next cycle's (the table passes the role on after each deal; a
    Wenzhou Leader who wins keeps it); or, without a seat, where the game stands alone (the
    simplified rules: the dice of each deal choose its Leader). Full socket only."""

    op: Literal["set_leader"]
    seat: Seat | None = Field(
        default=None,
        description="the seat that leads: E, S, W or N (null: the Leader is not told, the "
        "game is: the simplified rules' dice choose him at the deal)",
    )
    game: GamePosition | None = Field(
        default=None,
        description="where the game played at the table stands: its number, the hand the next "
        "deal opens, the prevailing wind (shown on the dealer's view; kept until told again)",
    )

    @model_validator(mode="after")
    def _something_told(self) -> SetLeaderRequest:
        if self.seat is None and self.game is None:
            raise ValueError("give the seat that leads, the game, or both")
        return self


class SubscribeRequest(BaseRequest):
    """Start receiving events on this connection."""

    op: Literal["subscribe"]


class UnsubscribeRequest(BaseRequest):
    """Stop receiving events on this connection."""

    op: Literal["unsubscribe"]


REQUEST_MODELS: dict[str, type[BaseRequest]] = {
    "status": StatusRequest,
    "shuffle": ShuffleRequest,
    "deal": DealRequest,
    "stop": StopRequest,
    "clear_fault": ClearFaultRequest,
    "throw": ThrowRequest,
    "last_dealt": LastDealtRequest,
    "get_cycle": GetCycleRequest,
    "subscribe": SubscribeRequest,
    "unsubscribe": UnsubscribeRequest,
    "diag": DiagRequest,
    "set_leader": SetLeaderRequest,
}
OPS: tuple[str, ...] = tuple(REQUEST_MODELS)

Request = Annotated[
    StatusRequest
    | ShuffleRequest
    | DealRequest
    | StopRequest
    | ClearFaultRequest
    | ThrowRequest
    | LastDealtRequest
    | GetCycleRequest
    | SubscribeRequest
    | UnsubscribeRequest
    | DiagRequest
    | SetLeaderRequest,
    Field(discriminator="op"),
]

# --- responses ------------------------------------------------------------------

ErrorCode = Literal[
    "bad_json",
    "bad_request",
    "unknown_op",
    "forbidden",
    "line_too_long",
    "timeout",
    "not_found",
    "busy",
    "internal",
]


class ErrorDetail(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: ErrorCode = Field(description="machine name of the error")
    message: str = Field(description="what was wrong, in plain words, naming the field")


class BaseResponse(BaseModel):
    """What every response carries: the id of the request it answers."""

    model_config = ConfigDict(extra="forbid")

    id: RequestId = Field(description="the request's id (null if it could not be read)")


class StatusResponse(BaseResponse):
    """Answer to ``status``."""

    ok: Literal[True] = True
    result: Status


class CommandResponse(BaseResponse):
    """Answer to ``shuffle``, ``deal``, ``stop`` and ``clear_fault``: whether the table took
    the command (a refused command is still ``ok``: the request itself was fine)."""

    ok: Literal[True] = True
    result: CommandResult


class DealtResponse(BaseResponse):
    """Answer to ``last_dealt`` and ``get_cycle``: a dealt state (null from ``last_dealt``
    when nothing was dealt yet)."""

    ok: Literal[True] = True
    result: DealtState | None


class SubscriptionResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    subscribed: bool
    status: Status | None = Field(
        description="on subscribe, a snapshot taken after the subscription started"
    )


class SubscriptionResponse(BaseResponse):
    """Answer to ``subscribe`` and ``unsubscribe``."""

    ok: Literal[True] = True
    result: SubscriptionResult


class DiagResponse(BaseResponse):
    """Answer to ``diag``: whether the diagnosis started (a refusal is still ``ok``: the
    request itself was fine), and the id of its events."""

    ok: Literal[True] = True
    result: DiagStarted


class ErrorResponse(BaseResponse):
    """The request could not be served."""

    ok: Literal[False] = False
    error: ErrorDetail


RESPONSE_MODELS: dict[str, type[BaseResponse]] = {
    "status": StatusResponse,
    "command": CommandResponse,
    "dealt": DealtResponse,
    "subscription": SubscriptionResponse,
    "diag": DiagResponse,
    "error": ErrorResponse,
}

# --- events ---------------------------------------------------------------------


class DroppedNotice(BaseModel):
    """The last line a dropped subscriber receives, when it still reads."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["dropped"] = "dropped"
    at: str = Field(description="UTC time, ISO 8601")
    reason: str = Field(description="why the server closes this connection")


EVENT_MODELS: tuple[type[BaseModel], ...] = tuple(get_args(get_args(Event)[0]))
_EVENT_FORM: Any = Event  # an Annotated union, which mypy cannot pass as a type
_EVENT_ADAPTER: TypeAdapter[Any] = TypeAdapter(_EVENT_FORM)


def _event_type(model: type[BaseModel]) -> str:
    default = model.model_fields["type"].default
    assert isinstance(default, str)
    return default


def _event_line_model() -> type[BaseModel]:
    members: Any = Union[(*EVENT_MODELS, DroppedNotice)]  # built at run time
    field: Any = Annotated[members, Field(discriminator="type")]
    return create_model(
        "EventMessage",
        __config__=ConfigDict(extra="forbid"),
        __doc__="One line of the event stream sent to subscribers.",
        event=(field, ...),
    )


EventMessage: type[BaseModel] = _event_line_model()


def parse_event(data: dict[str, Any]) -> Event | DroppedNotice:
    """Validate the ``event`` object of an event line."""
    if data.get("type") == "dropped":
        return DroppedNotice.model_validate(data)
    event: Event = _EVENT_ADAPTER.validate_python(data)
    return event


# --- schemas --------------------------------------------------------------------


def api_schemas() -> dict[str, dict[str, Any]]:
    """Every message's JSON schema, by file name under docs/api/."""
    out: dict[str, dict[str, Any]] = {}
    request_form: Any = Request
    request_schema = TypeAdapter(request_form).json_schema()
    request_schema["title"] = "Request"
    request_schema["description"] = "One line sent by a client: a request, selected by op."
    out["request.json"] = request_schema
    for op, model in REQUEST_MODELS.items():
        out[f"request-{op}.json"] = model.model_json_schema()
    for name, response in RESPONSE_MODELS.items():
        out[f"response-{name}.json"] = response.model_json_schema(mode="serialization")
    out["event.json"] = EventMessage.model_json_schema(mode="serialization")
    event_models: tuple[type[BaseModel], ...] = (*EVENT_MODELS, DroppedNotice)
    for event in event_models:
        out[f"event-{_event_type(event)}.json"] = event.model_json_schema(mode="serialization")
    return out


def schema_text(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_schemas(directory: str | os.PathLike[str]) -> list[Path]:
    """Write every schema of the API into ``directory``; remove stale ``*.json`` files there."""
    return write_schema_files(directory, api_schemas())


def write_schema_files(
    directory: str | os.PathLike[str], schemas: dict[str, dict[str, Any]]
) -> list[Path]:
    """Write ``schemas`` (by file name) into ``directory``; remove stale ``*.json`` there.
    The floor gateway writes its own schemas with it too."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    for old in target.glob("*.json"):
        if old.name not in schemas:
            old.unlink()
    written = []
    for name, schema in schemas.items():
        path = target / name
        path.write_text(schema_text(schema), encoding="utf-8")
        written.append(path)
    return written
