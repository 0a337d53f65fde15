"""What the deal cycle keeps, and the plumbing every part of it uses.

``CycleState`` is the state the controller owns, as h11's ``ConnectionState`` is a
connection's: what the table is (its profile, its number, where its dice come from, its
deadlines), the machine's state, the cycle in progress (or ready to deal), the fault, the
CLEAR FAULT press awaiting the board's answer. The parts of the cycle are each handed the
pieces they need:

- ``Outbox``: the events queued for the subscribers, delivered after the controller's lock;
- ``AuditTrail``: one audit record at a time, and the error of a log that cannot be written;
- ``Presses``: a button pressed and its answer (one ``button`` record, one ``button``
  event), and the answer to a CLEAR FAULT press;
- ``Deals``: the dealt states published, and who leads the next deal.

Nothing here calls a part above it (board.py, phases.py, guards.py, ...).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import protocol.messages as m
from controller.cycle.deadline import Deadlines
from controller.cycle.faults import CLEAR_CUT_SHORT
from controller.cycle.reports import (
    Action,
    Answered,
    AuditRef,
    ButtonEvent,
    Command,
    CommandResult,
    Event,
    FaultEvent,
    Source,
    utc_now,
)
from controller.cycle.states import FAULT, RECOVERING, STOPPED, LifecycleModel, build_machine
from rules.dealt import DealtState, GamePosition, Manifest, Throw
from rules.dice import ThrowRequest
from rules.profiles import Profile
from rules.seating import next_leader
from rules.words import DiceSource, Seat, TileSetName

log = logging.getLogger("mjtable.controller")

#: Recorder: called with (kind, data, cycle id or None); returns once the record is
#: durable (the audit log's append), so events are announced only after.
Recorder = Callable[[str, dict[str, Any], str | None], None]
#: AuditHead: where the audit chain stands now (its last record), for the status.
AuditHead = Callable[[], AuditRef | None]


class ImpossibleCommand(Exception):
    """A command the board's latest report rules out: it is not sent (the table faults)."""

    def __init__(self, message: m.Message, why: str) -> None:
        super().__init__(f"{message.NAME}: {why}")
        self.message = message
        self.why = why


class Sender(Protocol):
    """What the controller needs from the board link (drivers.board.BoardLink)."""

    def send(self, message: m.Message) -> None: ...


class Clock(Protocol):
    """Whether the system clock is synchronised (controller/service/clock.py's ``ClockWatch``):
    the status's ``clock_synced``."""

    @property
    def synced(self) -> bool | None: ...


#: what a board running another firmware build than the installed one does to the table
FirmwarePolicy = Literal["refuse", "warn"]


class ExpectedBuild(Protocol):
    """What a board running the installed firmware reports (controller/firmware/installed.py's
    ``Expected``)."""

    @property
    def version(self) -> str: ...
    @property
    def build(self) -> str: ...
    @property
    def flash(self) -> str: ...
    @property
    def pending(self) -> bool: ...
    def matches(self, build: str) -> bool: ...


class InstalledBuild(Protocol):
    """The installed firmware (``InstalledFirmware``)."""

    def expected(self) -> ExpectedBuild: ...


@dataclass
class Cycle:
    """What the controller knows of the cycle in progress."""

    cycle_id: str
    tile_set: TileSetName
    leader: Seat
    started_ns: int = field(default_factory=time.perf_counter_ns)
    manifest_codes: bytearray = field(default_factory=bytearray)
    manifest_total: int = 0
    manifest: Manifest | None = None
    throws: list[Throw] = field(default_factory=list)
    #: the throw the rules ask for next (None: none asked yet, or the dice are complete)
    wanted: ThrowRequest | None = None
    dice_tag: int = 0
    last_die_ns: int = 0
    shown_dice: list[int] | None = None
    #: DEAL pressed when stopped: who pressed it; the deal starts once this cycle is ready
    deal_when_ready: Source | None = None


@dataclass
class ClearPress:
    """A CLEAR FAULT press sent to the board, until the board answers whether the fault's
    cause is gone (``result``: the press's answer, once known)."""

    source: Source
    result: CommandResult | None = None
    #: whoever waits for the answer (ApiBackend.request's ``answered``)
    answered: list[Answered] = field(default_factory=list)


class CycleState:
    """What the controller owns: what the table is, the machine's state, the cycle in progress
    or ready to deal, the fault, and the CLEAR FAULT press the board has not answered yet."""

    def __init__(
        self, profile: Profile, *, table: str, dice_source: DiceSource, deadlines: Deadlines
    ) -> None:
        self.profile = profile
        self.table = table
        self.dice_source = dice_source
        self.deadlines = deadlines
        self.model = LifecycleModel()
        self._machine = build_machine(self.model)  # gives the model its triggers
        #: the cycle being prepared or dealt, and the one whose walls are ready to deal
        self.cycle: Cycle | None = None
        self.ready: Cycle | None = None
        self.fault: FaultEvent | None = None
        self.clear_press: ClearPress | None = None

    @property
    def state(self) -> str:
        """The state of the table (one of states.STATES)."""
        return self.model.state

    def current(self) -> Cycle | None:
        """The cycle in progress, else the one ready to deal."""
        return self.cycle or self.ready

    def current_id(self) -> str | None:
        cycle = self.cycle or self.ready
        return cycle.cycle_id if cycle else None


class Outbox:
    """Events for the subscribers: queued under the controller's lock, delivered after it.

    A subscriber may name the types of event it takes (``subscribe(..., types=)``); an event
    of a type no subscriber takes need not be made at all (``wants``: a cycle's 57 PROGRESS
    reports are made into events only for a subscriber of ``progress``)."""

    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock
        self._deliver_lock = threading.RLock()
        self._subscribers: list[tuple[Callable[[Event], None], frozenset[str] | None]] = []
        self._pending: list[Event] = []
        #: the types some subscriber takes (None: one takes every type)
        self._wanted: frozenset[str] | None = frozenset()

    def subscribe(
        self, callback: Callable[[Event], None], types: Iterable[str] | None = None
    ) -> Callable[[], None]:
        """Hand ``callback`` every event, or those of ``types`` only; returns what stops it."""
        entry = (callback, None if types is None else frozenset(types))
        with self._lock:
            self._subscribers.append(entry)
            self._update()

        def unsubscribe() -> None:
            with self._lock:
                if entry in self._subscribers:
                    self._subscribers.remove(entry)
                    self._update()

        return unsubscribe

    def _update(self) -> None:
        wanted: set[str] = set()
        for _, types in self._subscribers:
            if types is None:
                self._wanted = None
                return
            wanted |= types
        self._wanted = frozenset(wanted)

    def wants(self, kind: str) -> bool:
        """Whether a subscriber takes events of type ``kind``."""
        wanted = self._wanted
        return wanted is None or kind in wanted

    def queue(self, event: Event) -> None:
        """Queue an event (under the controller's lock)."""
        self._pending.append(event)

    def flush(self) -> None:
        """Hand queued events to subscribers, outside the lock, in order.

        Batches are taken and delivered under ``_deliver_lock`` so two threads
        flushing at once cannot reorder events."""
        if not self._pending:
            return
        with self._deliver_lock:
            with self._lock:
                pending, self._pending = self._pending, []
                subscribers = list(self._subscribers)
            for event in pending:
                for callback, types in subscribers:
                    if types is not None and event.type not in types:
                        continue
                    try:
                        callback(event)
                    except Exception:
                        log.exception("subscriber failed on %s", event.type)


class AuditTrail:
    """The audit records of the cycle: written one at a time, each durable before its event is
    announced; ``error`` once one could not be written (and nothing is written after)."""

    def __init__(self, recorder: Recorder | None) -> None:
        self._recorder = recorder
        self.error: str | None = None

    @property
    def recording(self) -> bool:
        """Whether there is an audit log (without one, a record's data need not be made)."""
        return self._recorder is not None

    def record(self, kind: str, data: dict[str, Any], cycle: str | None = None) -> bool:
        """Write one audit record; False (and the table faults) when it cannot be written."""
        if self._recorder is None:
            return True
        if self.error is not None:
            return False
        try:
            self._recorder(kind, data, cycle)
        except Exception as exc:  # a full disk, a failed SD card: refuse, never lose silently
            self.error = f"{type(exc).__name__}: {exc}"
            log.error("the audit log refused a %s record: %s", kind, exc)
            return False
        return True


#: the data the audit records of SHUFFLE pressed when stopped carry (its ``button`` record,
#: the ``fault_cleared`` of the stop and the ``shuffle`` it starts): why the shuffle started
CARRY_ON: dict[str, Any] = {"carry_on": True}


class Presses:
    """A press of a button and its answer, recorded and announced; a CLEAR FAULT press is
    answered once the board has said whether the fault's cause is gone."""

    def __init__(self, state: CycleState, audit: AuditTrail, outbox: Outbox) -> None:
        self._state = state
        self._audit = audit
        self._outbox = outbox

    def result(self, action: Command, accepted: bool, message: str) -> CommandResult:
        return CommandResult(
            action=action,
            accepted=accepted,
            message=message,
            state=self._state.state,
            cycle=self._state.current_id(),
        )

    def pressed(
        self,
        action: Action,
        source: Source,
        accepted: bool,
        message: str,
        extra: dict[str, Any] | None = None,
    ) -> None:
        """A press and its answer: one ``button`` record, one ``button`` event."""
        data = {"button": action, "source": source, "accepted": accepted, "reason": message}
        self._audit.record("button", {**data, **(extra or {})})
        self._outbox.queue(
            ButtonEvent(
                at=utc_now(),
                cycle=self._state.current_id(),
                action=action,
                source=source,
                accepted=accepted,
                reason=message,
            )
        )

    def answer_clear(
        self,
        press: ClearPress | None,
        accepted: bool,
        message: str,
        extra: dict[str, Any] | None = None,
    ) -> None:
        """The board's answer to a CLEAR FAULT press: recorded and announced with it, and
        handed to whoever waits for it (``request(..., answered=)``)."""
        if press is None:
            return
        self.pressed("clear_fault", press.source, accepted, message, extra)
        press.result = result = self.result("clear_fault", accepted, message)
        for answered in press.answered:
            try:
                answered(result)
            except Exception:  # a waiter's failure is its own, never the board's
                log.exception("handing over the answer to a CLEAR FAULT failed")

    def transition(self, previous: str, trigger: str) -> None:
        """The machine moved: recovering ended before the board answered the press (a fault,
        STOP), which is answered refused, saying why."""
        state = self._state
        if state.clear_press is not None and state.state != RECOVERING:
            press, state.clear_press = state.clear_press, None
            self.answer_clear(press, False, self._cut_short())

    def _cut_short(self) -> str:
        fault, now = self._state.fault, self._state.state
        if now == FAULT and fault is not None:
            return CLEAR_CUT_SHORT.format(
                what=f"{fault.code} struck ({fault.message})", advice=fault.advice
            )
        if now == STOPPED:
            return CLEAR_CUT_SHORT.format(
                what="STOP was pressed", advice="press DEAL or SHUFFLE to carry on, or CLEAR FAULT"
            )
        what = f"the table went {now}"
        return CLEAR_CUT_SHORT.format(what=what, advice="press CLEAR FAULT to start over")


class Deals:
    """The dealt states published (the latest ``size`` answer ``get_cycle``), and who leads the
    next deal (passed counter-clockwise after each, unless ``rotate`` is off)."""

    def __init__(self, size: int, leader: Seat, rotate: bool) -> None:
        self._history: OrderedDict[str, DealtState] = OrderedDict()
        self._size = size
        self.leader = leader
        self.rotate = rotate
        self.last: DealtState | None = None
        self.count = 0
        #: the game played at the table, as the rules layer last told it (set_leader)
        self.game: GamePosition | None = None

    def get(self, cycle_id: str) -> DealtState | None:
        return self._history.get(cycle_id)

    def add(self, dealt: DealtState) -> None:
        """A dealt state published: kept, counted, and the lead passes on."""
        self._keep(dealt)
        self.last = dealt
        self.count += 1
        if self.rotate:
            self.leader = next_leader(dealt.leader)

    def restore(self, published: Sequence[DealtState]) -> None:
        """After a restart: the deals the audit log had published, oldest first."""
        for dealt in published[-self._size :]:
            self._keep(dealt)
        self.count = len(published)
        if published:
            self.last = published[-1]
            if self.rotate:
                self.leader = next_leader(self.last.leader)

    def _keep(self, dealt: DealtState) -> None:
        self._history[dealt.cycle_id] = dealt
        while len(self._history) > self._size:
            self._history.popitem(last=False)
