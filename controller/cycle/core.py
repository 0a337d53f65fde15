"""What the deal cycle keeps, and the plumbing every part of it uses.

``CycleCore`` holds the controller's state (the machine, the cycle in progress, the board's
latest report of where the two tile sets are, the fault, the published deals) and the means
to act: send to the board (never a command that report rules out), write an audit record,
queue an event for the subscribers and deliver it after the lock. The parts of the cycle
build on it, each in its own file: guards.py (deadlines and faults), reconcile.py (the
board's report against what the host believed; the recovery procedure), steps.py (the
cycle's steps), links.py (the link to the board), controller.py (the public
``CycleController``: requests, status, the dispatch of board events).

Threads: board events arrive on the link's I/O thread; requests come from the API, the
panel or the CLI on theirs; deadlines fire on the timer thread. All of them go through
``self._lock``; subscribers are called outside it.
"""

from __future__ import annotations

import datetime as _dt
import logging
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, cast

import protocol.codes as codes
import protocol.messages as m
from controller.cycle.deadline import (
    BOARD_DEADLINES,
    DEFAULT_DEADLINES,
    DeadlineName,
    Deadlines,
    DeadlineTimer,
    OwnDeadline,
)
from controller.cycle.places import MOTIONS, UP, BoardView, blocked, waiting_set
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
from controller.cycle.states import DEALT, DICE, LifecycleModel, build_machine
from rules.dealt import DealtState, Manifest, Throw
from rules.profiles import Profile
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
    dice_tag: int = 0
    last_die_ns: int = 0
    shown_dice: list[int] | None = None


#: the motions the board bounds by a deadline of its own (HELLO_REPLY's deadlines_ms)
_BOUNDED = (m.Shuffle, m.BuildWalls, m.LiftWalls, m.Collect, m.RollDice)


@dataclass
class ClearPress:
    """A CLEAR FAULT press sent to the board, until the board answers whether the fault's
    cause is gone (``result``: the press's answer, once known)."""

    source: Source
    result: CommandResult | None = None
    #: whoever waits for the answer (ApiBackend.request's ``answered``)
    answered: list[Answered] = field(default_factory=list)


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


class CycleCore:
    """The controller's state and plumbing; ``CycleController`` is the class to use."""

    def __init__(
        self,
        profile: Profile,
        *,
        table: str = "1",
        dice_source: DiceSource = "board",
        deadlines: Deadlines | None = None,
        recorder: Recorder | None = None,
        audit_head: AuditHead | None = None,
        history: int = 64,
        first_leader: Seat = "E",
        rotate_leader: bool = True,
        cycle_prefix: str | None = None,
    ) -> None:
        self.profile = profile
        self.table = table
        self.dice_source = dice_source
        self.deadlines = deadlines or DEFAULT_DEADLINES
        self._record_fn = recorder
        self._audit_head = audit_head
        self._lock = threading.RLock()
        self._deliver_lock = threading.RLock()
        self._model = LifecycleModel()
        self._machine = build_machine(self._model)
        self._link: Sender | None = None
        self._subscribers: list[Callable[[Event], None]] = []
        self._pending: list[Event] = []
        self._cycle: Cycle | None = None
        self._ready: Cycle | None = None
        #: the board's latest report of itself (HELLO_REPLY's status or BOARD_STATUS),
        #: advanced by its DONEs and FAULTs since: where the sets are (None: no report yet)
        self._view: BoardView | None = None
        #: what the host believed before the first report (after a restart: the audit
        #: log's last word, history recorded against the board's report, never acted on)
        self._believed: dict[TileSetName, int | None] = {"A": None, "B": None}
        #: the motions begun the last report counted, and the motions sent since
        self._last_motions: int | None = None
        self._motions_sent = 0
        #: READ_STATUS sent and not answered yet: the view is about to be replaced
        self._reports_due = 0
        #: why the link went down last (for a fault declared while it stays down)
        self._link_reason = "no frame from the board"
        #: RECOVERING: the board confirmed CLEAR_FAULT (its report is awaited now)
        self._clear_done = False
        #: the CLEAR FAULT press the board has not answered yet, and its answer's signal
        self._clear_press: ClearPress | None = None
        #: RESTORING: the steps of the recovery procedure still to send, and the one the
        #: board works on (None: its report is awaited)
        self._restore_steps: list[m.Message] = []
        self._restore_step: m.Message | None = None
        self._fault: FaultEvent | None = None
        self._audit_error: str | None = None
        self._port_ok = True
        self._board: m.HelloReply | None = None
        #: the installed firmware, to compare each board with (None: not compared), and what
        #: a mismatch does: "refuse" (nothing is dealt) or "warn" (logged)
        self.firmware: InstalledBuild | None = None
        self.firmware_mismatch: FirmwarePolicy = "refuse"
        #: the board that linked up last runs another build (refuse): the line that says so;
        #: and whether the installed build is still being made to compare
        self._firmware_problem: str | None = None
        self._firmware_pending = False
        self._link_up = False
        self._deadline = DeadlineTimer("controller-deadline")
        self._deadline_gen = 0
        self._history: OrderedDict[str, DealtState] = OrderedDict()
        self._history_size = history
        self._last_dealt: DealtState | None = None
        self._cycles_dealt = 0
        self._leader = first_leader
        self._rotate_leader = rotate_leader
        # Start time plus a random part: ids stay unique across restarts even when the
        # clock is set back (a Pi without a real-time clock after a power cut).
        self._prefix = cycle_prefix or (
            _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(2)
        )
        self._counter = 0
        self._link_lost_at: float | None = None
        #: last die -> dealt state published, for the benchmark (the latest 10000)
        self.publish_latencies_ns: deque[int] = deque(maxlen=10000)

    # ------------------------------------------------------------ wiring

    def attach(self, link: Sender) -> None:
        """Give the controller the link it sends on (a BoardLink)."""
        self._link = link

    @property
    def state(self) -> str:
        """The state of the table (one of states.STATES)."""
        return self._model.state

    @property
    def link_up(self) -> bool:
        """Whether the board answers (without building a whole status): the link is up and
        the port is open and this controller's alone (drivers/board.py: a port closed, or
        another program at it, is a link down now, not once the link's timeout has run out)."""
        return self._link_up and self._port_ok

    @property
    def firmware_pending(self) -> bool:
        """The board linked up waits for the installed firmware's build to be compared with."""
        return self._firmware_pending

    def subscribe(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def close(self) -> None:
        with self._lock:
            self._deadline_gen += 1
        self._deadline.close()

    # ------------------------------------------------------------ what is where

    def _waiting_set(self) -> TileSetName | None:
        """The set to prepare next: the one being prepared, else the one the board's report
        says waits (places.waiting_set); None before the board has reported."""
        cycle = self._cycle or self._ready
        if cycle is not None and self.state not in (DICE, DEALT):
            return cycle.tile_set
        return waiting_set(self._view) if self._view is not None else None

    def _on_top(self) -> TileSetName | None:
        """The set the board reports up on the table (the hand in play), if any."""
        up = self._view.sets_in(UP) if self._view is not None else []
        return up[0] if up else None

    def _current_id(self) -> str | None:
        cycle = self._cycle or self._ready
        return cycle.cycle_id if cycle else None

    def _board_info(self) -> dict[str, Any] | None:
        hello = self._board
        if hello is None:
            return None
        return {
            "firmware": f"{hello.fw_major}.{hello.fw_minor}.{hello.fw_patch}",
            "build": hello.status.build_hash,
            "serial": hello.serial,
            "session": f"{hello.session_id:08x}",
            "protocol": f"{hello.proto_major}.{hello.proto_minor}",
            "reader": bool(hello.capabilities & codes.CAP_READER),
            "dice": bool(hello.capabilities & codes.CAP_DICE),
            "tile_sets": hello.tile_sets,
            "tiles": hello.tiles,
            "seed": hello.seed if hello.capabilities & codes.CAP_SEEDED else None,
            # the board's own deadline of each motion, in seconds (None: it reports none)
            "deadlines": (
                None
                if hello.deadlines_ms is None
                else {
                    name: ms / 1000
                    for name, ms in zip(BOARD_DEADLINES, hello.deadlines_ms, strict=True)
                }
            ),
        }

    def _seconds(self, name: DeadlineName) -> float | None:
        """The seconds of the deadline ``name``: the controller's own, or for a motion the board
        bounds, derived from the board's report (None while the board has reported none)."""
        if name not in BOARD_DEADLINES:
            return self.deadlines.seconds(cast(OwnDeadline, name))
        reported = self._board.deadlines_ms if self._board is not None else None
        if reported is None:
            return None
        return self.deadlines.motion(name, reported)

    # ------------------------------------------------------------ acting

    def _send(self, message: m.Message) -> None:
        """Send to the board; a command the board's latest report rules out is not sent
        (ImpossibleCommand: the caller faults the table)."""
        if self._link is None:
            raise RuntimeError("the controller has no board link attached")
        view = self._view
        if view is None and isinstance(message, (*MOTIONS, m.ReadManifest)):
            raise ImpossibleCommand(message, "the board has not reported where the sets are")
        if isinstance(message, _BOUNDED) and (self._board is None or not self._board.deadlines_ms):
            raise ImpossibleCommand(message, "the board has not reported its motion deadlines")
        why = blocked(message, view) if view is not None else None
        if why is not None:
            raise ImpossibleCommand(message, why)
        self._link.send(message)
        if isinstance(message, MOTIONS):
            self._motions_sent += 1
        elif isinstance(message, m.ReadStatus):
            self._reports_due += 1

    def _ask_status(self) -> None:
        """READ_STATUS: the board's answer comes after every event it sent before it."""
        self._send(m.ReadStatus())

    def _record(self, kind: str, data: dict[str, Any], cycle: str | None = None) -> bool:
        """Write one audit record; False (and the table faults) when it cannot be written."""
        if self._record_fn is None:
            return True
        if self._audit_error is not None:
            return False
        try:
            self._record_fn(kind, data, cycle)
        except Exception as exc:  # a full disk, a failed SD card: refuse, never lose silently
            self._audit_error = f"{type(exc).__name__}: {exc}"
            log.error("the audit log refused a %s record: %s", kind, exc)
            return False
        return True

    def _result(self, action: Command, accepted: bool, message: str) -> CommandResult:
        return CommandResult(
            action=action,
            accepted=accepted,
            message=message,
            state=self.state,
            cycle=self._current_id(),
        )

    def _pressed(
        self,
        action: Action,
        source: Source,
        accepted: bool,
        message: str,
        extra: dict[str, Any] | None = None,
    ) -> None:
        """A press and its answer: one ``button`` record, one ``button`` event."""
        data = {"button": action, "source": source, "accepted": accepted, "reason": message}
        self._record("button", {**data, **(extra or {})})
        self._queue(
            ButtonEvent(
                at=utc_now(),
                cycle=self._current_id(),
                action=action,
                source=source,
                accepted=accepted,
                reason=message,
            )
        )

    def _answer_clear(
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
        self._pressed("clear_fault", press.source, accepted, message, extra)
        press.result = result = self._result("clear_fault", accepted, message)
        for answered in press.answered:
            try:
                answered(result)
            except Exception:  # a waiter's failure is its own, never the board's
                log.exception("handing over the answer to a CLEAR FAULT failed")

    def _abort(self, reason: str) -> None:
        """Record that the cycle in progress (if any) will publish nothing."""
        cycle = self._cycle or self._ready
        if cycle is not None:
            self._record("cycle_aborted", {"reason": reason}, cycle=cycle.cycle_id)
        self._cycle = None
        self._ready = None

    def _queue(self, event: Event) -> None:
        self._pending.append(event)

    def _flush(self) -> None:
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
                for callback in subscribers:
                    try:
                        callback(event)
                    except Exception:
                        log.exception("subscriber failed on %s", event.type)
