"""The table controller: one deal cycle after another, over the board link.

``CycleController`` is the one public entry of the cycle: the API, the panel and the CLI ask
it for SHUFFLE, DEAL, STOP and CLEAR FAULT (``request``), the status and the dealt states;
the board link hands it every board event (``on_board_event``). The work is done in the
files it is built from:

- states.py: the states as data (what each means, its deadline, the DONE it waits for, the
  buttons it accepts, its LEDs) and the transitions;
- core.py: what the controller keeps, and its plumbing (records, events, sending);
- places.py: where the sets are as the board reports them, and which command that allows;
- guards.py: deadlines and faults (faults.py: the controller's own fault catalogue);
- reconcile.py: the board's report against what the host believed; the recovery procedure;
- steps.py: the steps of the cycle, from SHUFFLE to the dealt state;
- links.py: the link to the board coming up, going down, the board restarting;
- testing.py: a technician's diagnosis (the ``diag`` request): the sensors, the motor tests.

The board owns the physical truth: its report (HELLO_REPLY's status at every (re)connect,
BOARD_STATUS after every fault and CLEAR FAULT) decides where the sets are and so the next
command of the cycle, and no command that report rules out is ever sent. Every phase has a
deadline. A fault from the board, a refusal, a deadline passed or the board rebooted all end
the same way: STOP is sent, the machine enters ``fault`` with plain words on what happened
and what to do, and nothing is published for that cycle. CLEAR_FAULT (when the cause is
gone) brings the table back to ``idle`` once the board has said where the sets are.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar, TypeVar, overload

import protocol.messages as m
from controller.cycle.core import ClearPress, ImpossibleCommand, Recorder, Sender
from controller.cycle.deadline import DEFAULT_DEADLINES, Deadlines
from controller.cycle.faults import CONTROLLER
from controller.cycle.guards import CycleGuards
from controller.cycle.links import LinkWatch
from controller.cycle.places import BUILT, UP
from controller.cycle.reconcile import Reconciler
from controller.cycle.reports import Action, Answered, CommandResult, Source, Status
from controller.cycle.states import (
    AT_REST,
    AUDIT_UNWRITABLE,
    DICE,
    FIRMWARE_PENDING,
    NO_DEADLINES,
    NOT_CONNECTED,
    NOT_CONNECTED_CLEAR,
    REPORT_DUE,
    ROWS,
)
from controller.cycle.steps import CycleSteps
from controller.cycle.testing import BoardTests
from drivers.board import BoardEvent, PortDown, PortUp
from protocol.events import LinkDown, LinkUp, PeerRebooted, ProtocolMismatch
from rules.dealt import DealtState
from rules.dice import next_throw
from rules.seating import next_leader
from rules.words import Seat, TileSetName

log = logging.getLogger("mjtable.controller")

#: Buttons wired into the board (Button.button) and the action each one asks for.
BOARD_BUTTONS: dict[int, Action] = {1: "shuffle", 2: "deal", 3: "stop", 4: "clear_fault"}
#: Every action a button can ask for, in the order of ``Status.allowed``.
ACTIONS: tuple[Action, ...] = ("shuffle", "deal", "stop", "clear_fault")

_E = TypeVar("_E", bound="BoardEvent")
#: a board event's handler, called with the controller and the event
Route = Callable[["CycleController", "BoardEvent"], None]


def _route(kind: type[_E], handler: Callable[[CycleController, _E], None]) -> tuple[type, Route]:
    """One entry of the dispatch table: the event class, and its handler typed for it."""

    def call(controller: CycleController, event: BoardEvent) -> None:
        if isinstance(event, kind):  # always: the table is looked up by type(event)
            handler(controller, event)

    return kind, call


class CycleController(CycleSteps, LinkWatch, BoardTests):
    """Implements controller.cycle.reports.ApiBackend over a board link."""

    def _on_refusal(self, event: m.Refused) -> None:
        if not self._on_test_refused(event):  # the diagnosis's own commands first
            CycleGuards._on_refused(self, event)

    def _on_board_restart(self, event: PeerRebooted) -> None:
        self._diag_board_lost()
        LinkWatch._on_reboot(self, event)

    #: board and link events by exact type (every event class is final); the board's
    #: buttons are requests, taken before the lock (on_board_event)
    _ROUTES: ClassVar[Mapping[type, Route]] = dict(
        (
            _route(LinkUp, LinkWatch._on_link_up),
            _route(LinkDown, LinkWatch._on_link_down),
            _route(PeerRebooted, _on_board_restart),
            _route(ProtocolMismatch, LinkWatch._on_mismatch),
            _route(PortDown, LinkWatch._on_port_down),
            _route(PortUp, LinkWatch._on_port_up),
            _route(m.Progress, CycleSteps._on_progress),
            _route(m.Done, CycleSteps._on_done),
            _route(m.ManifestChunk, CycleSteps._on_chunk),
            _route(m.Dice, CycleSteps._on_dice),
            _route(m.Refused, _on_refusal),
            _route(m.Fault, CycleGuards._on_fault),
            _route(m.BoardStatus, Reconciler._on_board_status),
            _route(m.SensorData, BoardTests._on_sensor_data),
            _route(m.MotorResult, BoardTests._on_motor_result),
        )
    )

    def restore(
        self,
        published: Sequence[DealtState],
        *,
        on_top: TileSetName | None = None,
        bench: TileSetName | None = None,
        motions: int | None = None,
    ) -> None:
        """After a restart, from the audit log: the dealt states already published
        (oldest first) answer get_cycle again and the leader rotation continues. Where the
        log last had the two sets (``on_top``, ``bench``) and the board's last count of
        motions begun are what the host believed: recorded against the board's first
        report, never acted on (the board's report decides). Nothing is re-published."""
        with self._lock:
            for dealt in published[-self._history_size :]:
                self._history[dealt.cycle_id] = dealt
            self._cycles_dealt = len(published)
            self._believed = {"A": None, "B": None}
            if bench is not None:
                self._believed[bench] = BUILT
            if on_top is not None:
                self._believed[on_top] = UP
            self._last_motions = motions
            if published:
                last = published[-1]
                self._last_dealt = last
                if self._rotate_leader:
                    self._leader = next_leader(last.leader)

    # ------------------------------------------------------------ ApiBackend

    def status(self) -> Status:
        with self._lock:
            cycle = self._cycle or self._ready
            return Status(
                state=self.state,
                cycle=cycle.cycle_id if cycle else None,
                variant=self.profile.name,
                table=self.table,
                tile_set_on_top=self._on_top(),
                tile_set_waiting=self._waiting_set(),
                link_up=self.link_up,
                board=self._board_info(),
                fault=self._fault,
                last_cycle=self._last_dealt.cycle_id if self._last_dealt else None,
                cycles_dealt=self._cycles_dealt,
                leader=cycle.leader if cycle is not None and self.state != DICE else self._leader,
                allowed=self._allowed(),
                audit=self._audit_head() if self._audit_head is not None else None,
            )

    def last_dealt(self) -> DealtState | None:
        with self._lock:
            return self._last_dealt

    def get_cycle(self, cycle_id: str) -> DealtState | None:
        with self._lock:
            return self._history.get(cycle_id)

    @overload
    def request(self, action: Action, source: Source) -> CommandResult: ...
    @overload
    def request(
        self, action: Action, source: Source, *, answered: Answered | None
    ) -> CommandResult | None: ...
    def request(
        self, action: Action, source: Source, *, answered: Answered | None = None
    ) -> CommandResult | None:
        """SHUFFLE, DEAL, STOP or CLEAR FAULT, from a button, the board or the API.

        CLEAR FAULT is the board's to decide: it clears the fault only once the cause is gone.
        Given ``answered``, a press sent to the board returns None and ``answered`` is called
        once with the board's answer (refused while the cause is there, with the cause in
        words), on the board link's thread or whichever ends the wait (ApiBackend.request).
        Without it, the press's result is returned: sent, and answered later by its
        ``button`` record and event."""
        with self._lock:
            result = self._request(action, source)
            press = self._clear_press if action == "clear_fault" and result.accepted else None
            if press is not None and answered is not None:
                press.answered.append(answered)  # under the lock: the answer cannot pass by
            self._check_audit()
        self._flush()
        if press is not None and answered is not None:
            return None
        return result

    def _request(self, action: Action, source: Source) -> CommandResult:
        refusal = self._refusal(action)
        accepted = refusal is None
        if refusal is None:
            try:
                message = self._start(action)
            except ImpossibleCommand as exc:  # held back: the table faults instead
                self._impossible(exc)
                accepted = False
                message = self._fault.message if self._fault is not None else str(exc)
            else:
                if action == "clear_fault":
                    # the board answers whether the cause is gone: the press is recorded
                    # and announced with that answer (_answer_clear)
                    self._clear_press = ClearPress(source)
                    return self._result(action, True, message)
        else:
            message = refusal
        self._pressed(action, source, accepted, message)
        return self._result(action, accepted, message)

    def _refusal(self, action: Action) -> str | None:
        """Why ``action`` is refused now, in one sentence; None when it is accepted. The
        state's row says which buttons make sense and the words of a refusal."""
        row = ROWS[self.state]
        if action == "stop":  # STOP is never held back: only a still table refuses it
            return None if action in row.accepts else row.refusal(action)
        if self._audit_error is not None:
            return AUDIT_UNWRITABLE.format(error=self._audit_error)
        if self._firmware_problem is not None:  # shuffle, deal, clear_fault
            return self._firmware_problem
        if action == "clear_fault":
            if action not in row.accepts:
                return row.refusal(action)
            return self._no_deadlines() if self.link_up else NOT_CONNECTED_CLEAR
        if "clear_fault" in row.accepts:
            return row.refusal(action)  # in fault or stopped: the technician comes first
        if not self.link_up:
            return NOT_CONNECTED
        if (stale := self._no_deadlines()) is not None:
            return stale
        if action not in row.accepts:
            return row.refusal(action)
        if self._reports_due and self.state in AT_REST:
            return REPORT_DUE  # the board's report of where the sets are is on its way
        if self._firmware_pending:
            return FIRMWARE_PENDING  # the installed build is being made to compare with
        return None

    def _no_deadlines(self) -> str | None:
        """Why nothing may move: the board reported no motion deadlines (firmware of protocol
        2.0); None when it has reported them."""
        board = self._board
        if board is None or board.deadlines_ms is not None:
            return None
        return NO_DEADLINES.format(version=f"{board.proto_major}.{board.proto_minor}")

    def _allowed(self) -> list[Action]:
        return [a for a in ACTIONS if self._refusal(a) is None]

    def enter_dice(self, dice: list[int], source: Source) -> CommandResult:
        """Dice thrown by hand and entered by the dealer (``dice.source = "dealer"``)."""
        with self._lock:
            refusal = self._dice_refusal(dice)
            cycle = self._cycle
            if refusal is None and cycle is not None:
                self._take_throw(cycle, list(dice), "dealer")
            result = self._result(
                "throw", refusal is None, refusal or f"throw {'+'.join(map(str, dice))} taken"
            )
            self._check_audit()
        self._flush()
        return result

    def set_leader(self, seat: Seat, source: Source) -> CommandResult:
        """Who leads the next deal (ApiBackend.set_leader); one ``leader_set`` record."""
        with self._lock:
            cycle = self._cycle or self._ready
            if cycle is not None and self.state != DICE:
                cycle.leader = seat  # its deal_started record, written after the lift, says so
                applies = cycle.cycle_id
                message = f"{seat} leads the deal of cycle {applies}"
            else:
                applies = None
                message = f"{seat} leads the next deal"
                if cycle is not None:
                    message += f" (the dice of cycle {cycle.cycle_id} are already being thrown)"
            self._leader = seat
            self._record("leader_set", {"leader": seat, "source": source, "applies_to": applies})
            result = self._result("set_leader", True, message)
            self._check_audit()
        self._flush()
        return result

    def _dice_refusal(self, dice: list[int]) -> str | None:
        if self.dice_source != "dealer":
            return f"the dice come from the {self.dice_source} here, not from the dealer"
        cycle = self._cycle
        if self.state != DICE or cycle is None:
            return f"no throw is expected now (the table is {self.state})"
        request = next_throw(self.profile, cycle.leader, cycle.throws)
        if request is None:  # pragma: no cover - the cycle publishes as soon as it completes
            return "every throw of this deal is already in"
        if len(dice) != request.count:
            return f"{request.describe()}: {len(dice)} dice were entered"
        bad = [d for d in dice if not 1 <= d <= 6]
        if bad:
            return f"a die shows 1 to 6, not {bad[0]}"
        return None

    # --------------------------------------------------------- board events

    def on_board_event(self, event: BoardEvent) -> None:
        """Called by the board link's I/O thread for every event, in order."""
        if isinstance(event, m.Button):
            # A button wired into the board is a request like any other; it takes the
            # lock and flushes by itself.
            action = BOARD_BUTTONS.get(event.button)
            if event.pressed and action is not None:
                self.request(action, "board")
            return
        with self._lock:
            try:
                self._dispatch(event)
            except ImpossibleCommand as exc:  # held back: the table faults instead
                self._impossible(exc)
            except Exception as exc:  # a bug here must fault the cycle, not the link
                log.exception("controller failed on %r", event)
                self._declare(CONTROLLER, event=type(event).__name__, error=exc)
            self._check_audit()
        self._flush()

    def _dispatch(self, event: BoardEvent) -> None:
        route = self._ROUTES.get(type(event))
        if route is None:
            log.debug("ignored board event %r", event)
            return
        route(self, event)


__all__ = [
    "ACTIONS",
    "BOARD_BUTTONS",
    "DEFAULT_DEADLINES",
    "CycleController",
    "Deadlines",
    "Recorder",
    "Sender",
]
