"""What the controller tells the world: events, status and command results.

These pydantic models are the contract between the table controller and its
readers (the local API, the audit log, the demo's picture). Their JSON schemas
are generated into docs/api/ from these classes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Annotated, Any, Literal, Protocol, overload

from pydantic import BaseModel, ConfigDict, Field

from rules.dealt import DealtState, GamePosition, ProfileRef, RuleSetField
from rules.words import DiceSource, Seat, TileSetName

#: the second utc_now last wrote, and its text up to the seconds
_second: tuple[int, str] = (-1, "")
#: the text after the seconds, for each millisecond
_MILLIS = tuple(f".{milli:03d}Z" for milli in range(1000))


def utc_now() -> str:
    """The current UTC time in the form of every event's ``at`` field (milliseconds, ``Z``):
    ``2025-01-31T12:00:00.250Z``. The text up to the seconds is written once a second, the
    rest taken from a table: a cycle stamps about 70 events, and a datetime formatted for each
    was 6 % of the controller's instructions per cycle (docs/performance.md)."""
    global _second
    ms = time.time_ns() // 1_000_000
    second = ms // 1000
    cached = _second
    if cached[0] != second:
        cached = _second = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
    return cached[1] + _MILLIS[ms - second * 1000]


Action = Literal["shuffle", "deal", "stop", "clear_fault"]
#: Everything a CommandResult can answer: the four buttons, dice entered by the dealer, and
#: the leader of the next deal set by the rules layer.
Command = Literal["shuffle", "deal", "stop", "clear_fault", "throw", "set_leader"]
Source = Literal["panel", "board", "api", "cli", "controller"]
#: Where a fault comes from (controller/cycle/faults.py declares the controller's own).
FaultSource = Literal["board", "deadline", "link", "reboot", "controller"]


class _Event(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, json_schema_serialization_defaults_required=True
    )

    at: str = Field(description="UTC time of the event, ISO 8601")
    cycle: str | None = Field(default=None, description="the deal cycle this event belongs to")


class PhaseEvent(_Event):
    """The table's lifecycle moved from one state to another."""

    type: Literal["phase"] = "phase"
    state: str
    previous: str


class ProgressEvent(_Event):
    """The board reports progress of a long phase (shuffle, build, lift, dice)."""

    type: Literal["progress"] = "progress"
    phase: str
    percent: int = Field(ge=0, le=100)
    detail: str | None = None


class FaultEvent(_Event):
    """Something went wrong; motion is stopped and no dealt state is published for the cycle."""

    type: Literal["fault"] = "fault"
    code: str = Field(description="machine name of the fault, e.g. SORT_TIMEOUT, DEADLINE")
    source: FaultSource
    message: str = Field(description="what happened, in plain words")
    advice: str = Field(description="what the technician should check")
    phase: str | None = None
    clear_refused: int = Field(
        default=0,
        ge=0,
        description="CLEAR FAULT presses the board refused while this fault stands (its cause "
        "still there, the emergency stop held): each is answered refused and counted here; the "
        "fault itself does not change",
    )


class FaultClearedEvent(_Event):
    type: Literal["fault_cleared"] = "fault_cleared"
    state: str


class ThrowEvent(_Event):
    """One throw of the dice, with who threw it and what it was for."""

    type: Literal["throw"] = "throw"
    by: Seat
    dice: list[int]
    purpose: str
    source: DiceSource


class ThrowWantedEvent(_Event):
    """The rule set asks for a throw the dealer makes by hand (``dice.source = "dealer"``):
    who throws, how many dice, what for. Answer with the ``throw`` request."""

    type: Literal["throw_wanted"] = "throw_wanted"
    by: Seat
    count: int = Field(ge=1, le=3)
    purpose: str


class DealtEvent(_Event):
    """A cycle completed cleanly: its dealt state, as published to the rules layer."""

    type: Literal["dealt"] = "dealt"
    dealt: DealtState


class LinkEvent(_Event):
    """The serial link to the board came up or went down."""

    type: Literal["link"] = "link"
    up: bool
    reason: str
    board: dict[str, Any] | None = None


#: PanelPresence.reason of a panel gone: why (the driver's words), then what to check
PANEL_GONE = "{why}: check its USB cable (it is found again by itself)"


class PanelPresence(BaseModel):
    """The dealer's button panel, as the service last found it."""

    model_config = ConfigDict(extra="forbid")

    connected: bool
    serial: str | None = Field(default=None, description="the panel's USB serial, when known")
    reason: str | None = Field(
        default=None, description="why it is not connected, and what to check (null: it is)"
    )


class PanelPresenceEvent(_Event):
    """The dealer's button panel was found, or went away (the status's ``panel`` changed)."""

    type: Literal["panel"] = "panel"
    panel: PanelPresence


class LeaderEvent(_Event):
    """The rules layer said who leads the next deal, and where the game played stands
    (set_leader: the status's ``leader`` and ``game`` are these now)."""

    type: Literal["leader"] = "leader"
    leader: Seat
    game: GamePosition | None = Field(
        default=None, description="the game last told (null: none since the service started)"
    )


class ButtonEvent(_Event):
    """A dealer or technician pressed a button (panel, board or API)."""

    type: Literal["button"] = "button"
    action: Action
    source: Source
    accepted: bool
    reason: str


class BoardIdentity(BaseModel):
    """The board as its HELLO_REPLY describes it (``mjtable diag``'s ``hello``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    protocol: str = Field(description="the protocol version the board speaks, MAJOR.MINOR")
    firmware: str
    build: str = Field(description="the first 16 hex digits of the firmware build's hash")
    serial: str
    session: str
    capabilities: list[str]
    fitted: list[str] = Field(description="what the board has fitted, in words")
    tile_sets: int
    tiles: int
    stacks_per_wall: int
    seed: int | None = Field(description="the seed of a board that shuffles reproducibly")


class BoardPlaces(BaseModel):
    """Where the board has its tile sets, why it last started, its motions begun."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tile_sets: dict[str, str] = Field(description="where each tile set is, in words")
    reset_cause: str
    motions: int


class SensorReport(BaseModel):
    """Every sensor of the board (SENSOR_DATA), in words."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    state: str = Field(description="the board's state: name and words")
    fault: str | None = Field(description="the fault latched, name and words")
    advice: str | None
    switches: list[str] = Field(description="the switches and sensors that are on")
    wall_tiles: dict[str, int] = Field(description="tiles standing in each wall channel")
    lifts_up: list[str]
    lifts_down: list[str]
    currents: dict[str, int | None] = Field(
        description="each motor's current now, mA (null: no reading, its current sense is broken)"
    )
    temperature_c: float | None = Field(
        description="the heat sink's temperature (null: no reading, its NTC is open or shorted)"
    )


class MotorReport(BaseModel):
    """One motor's test (MOTOR_TEST): its current beside its limits, and the verdict in words."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    motor: str = Field(description="the motor's name in the protocol")
    words: str = Field(description="the motor in words")
    ms: int = Field(description="how long the test was asked to run")
    ok: bool | None = Field(description="the board's verdict (null: the test was refused)")
    current_ma: int | None = Field(
        description="its running current: the mean of its readings, over the stretch that "
        "stopped the test when one did"
    )
    limit_ma: int | None = Field(description="its over-current limit (seized over it)")
    strain_ma: int | None = Field(description="its strain level (straining over it)")
    verdict: str = Field(description="ok, NOT OK or refused, with the figures, in words")
    advice: str | None = Field(description="what to check on a motor that is NOT OK")
    refused: str | None = Field(description="the board's refusal, by name")


class DiagEvent(_Event):
    """A technician's diagnosis (the ``diag`` request) as it goes: the board and its sensors
    (``board``), each motor's test (``motor``), the end (``done``). Full socket only."""

    type: Literal["diag"] = "diag"
    test: str = Field(description="the id the diag request was answered with")
    step: Literal["board", "motor", "done"]
    hello: BoardIdentity | None = None
    status: BoardPlaces | None = None
    sensors: SensorReport | None = None
    motor: MotorReport | None = None
    ok: bool | None = Field(default=None, description="at the end: whether all went well")
    message: str = Field(default="", description="at the end: how it went, in words")


Event = Annotated[
    PhaseEvent
    | ProgressEvent
    | FaultEvent
    | FaultClearedEvent
    | ThrowEvent
    | ThrowWantedEvent
    | DealtEvent
    | LinkEvent
    | ButtonEvent
    | PanelPresenceEvent
    | LeaderEvent
    | DiagEvent,
    Field(discriminator="type"),
]


class AuditRef(BaseModel):
    """Where the audit chain stands: the last record's ``seq`` and the SHA-256 of its line
    (the next record's ``prev``). The floor publishes it as the table's head (docs/audit.md)."""

    model_config = ConfigDict(extra="forbid")

    seq: int = Field(ge=0, description="the last audit record's sequence number")
    hash: str = Field(description="SHA-256 (hex) of that record's line")


class Status(BaseModel):
    """A snapshot of the table for `status` requests and `mjtable status`."""

    model_config = ConfigDict(extra="forbid")

    state: str
    cycle: str | None
    variant: RuleSetField = Field(
        description="the rule set the table plays (the profile's variant, as in a dealt state)"
    )
    profile: ProfileRef = Field(
        description="the profile the table deals with: its name and version, as in a dealt state"
    )
    table: str
    tile_set_on_top: TileSetName | None
    tile_set_waiting: TileSetName | None
    link_up: bool
    board: dict[str, Any] | None = Field(
        default=None, description="the board's HELLO: firmware, serial, capabilities"
    )
    fault: FaultEvent | None = None
    last_cycle: str | None = None
    cycles_dealt: int = 0
    leader: Seat | None = Field(
        default=None,
        description="who leads the next deal (the cycle under way's, until its dice are thrown); "
        "the table passes the role on after each deal unless the rules layer says otherwise "
        "(set_leader)",
    )
    game: GamePosition | None = Field(
        default=None,
        description="the game played at the table as the rules layer last told it (set_leader): "
        "its number, the hand dealt or to be dealt, the prevailing wind (null: not told since the "
        "service started)",
    )
    allowed: list[Action] = Field(description="actions that make sense in this state")
    audit: AuditRef | None = Field(
        default=None, description="the audit chain's head (null: the table keeps no audit log)"
    )
    clock_synced: bool | None = Field(
        default=None,
        description="whether the table's system clock is synchronised (NTP), so that the audit "
        "log's times are right (null: not known, or not the table's service)",
    )
    panel: PanelPresence | None = Field(
        default=None,
        description="the dealer's button panel: connected or not, and why (null: the table has "
        "no panel, or it is not the table's service)",
    )


class CommandResult(BaseModel):
    """The answer to shuffle / deal / stop / clear_fault."""

    model_config = ConfigDict(extra="forbid")

    action: Command
    accepted: bool
    message: str
    state: str
    cycle: str | None = None


#: Called once with the board's answer to a CLEAR FAULT press (ApiBackend.request).
Answered = Callable[[CommandResult], None]


class DiagStarted(BaseModel):
    """The answer to ``diag``: whether the diagnosis started; its ``diag`` events follow."""

    model_config = ConfigDict(extra="forbid")

    accepted: bool
    test: str | None = Field(description="the id of the diag events that follow (null: refused)")
    message: str = Field(description="what happens now, or why not and what to do, in words")
    state: str = Field(description="the table's state after the request")


class ApiBackend(Protocol):
    """What the local API (and the panel, and the CLI) need from the table controller.

    Every method is safe to call from any thread.
    """

    def status(self) -> Status: ...

    @overload
    def request(self, action: Action, source: Source) -> CommandResult: ...
    @overload
    def request(
        self, action: Action, source: Source, *, answered: Answered | None
    ) -> CommandResult | None: ...
    def request(
        self, action: Action, source: Source, *, answered: Answered | None = None
    ) -> CommandResult | None:
        """Press a button. CLEAR FAULT is the board's to decide (whether the fault's cause is
        gone): given ``answered``, a press sent to the board returns None and ``answered`` is
        called once with the board's answer (from another thread; it must not block), or with
        a refusal if the wait ends otherwise (STOP, another fault, the link lost). Without it,
        or when the press is answered at once, the result is returned; a sent press's answer
        also follows as a ``button`` event."""
        ...

    def enter_dice(self, dice: list[int], source: Source) -> CommandResult:
        """The dice of a throw made by hand, when the table waits for one (throw_wanted)."""
        ...

    def set_leader(
        self, seat: Seat | None, source: Source, game: GamePosition | None = None
    ) -> CommandResult:
        """Who leads the next deal: the cycle under way's Leader until its dice are thrown,
        else the next cycle's (a Wenzhou Leader who wins keeps the role: the rules layer
        knows, the table does not); with ``game``, where the game played stands (None
        ``seat``: the game alone, the Leader as it was)."""
        ...

    def diagnose(self, motors: bool, motor_ms: int | None, source: Source) -> DiagStarted:
        """Read the board's sensors and, with ``motors`` and the table at rest, test each motor
        (``motor_ms`` each; None: the board's default); ``diag`` events follow."""
        ...

    def last_dealt(self) -> DealtState | None: ...

    def get_cycle(self, cycle_id: str) -> DealtState | None: ...

    def subscribe(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        """Call ``callback`` for every event, from the controller's thread, until the
        returned function is called. The callback must not block."""
        ...
