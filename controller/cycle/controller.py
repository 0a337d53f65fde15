"""The table controller: one deal cycle after another, over the board link.

``CycleController`` is the one public entry of the cycle: the API, the panel and the CLI ask
it for SHUFFLE, DEAL, STOP and CLEAR FAULT (``request``), the status and the dealt states;
the board link hands it every board event (``on_board_event``). It owns the state
(core.py's ``CycleState``) and the one lock, and hands each job to a part it holds, each given
in its constructor the pieces of state it needs (the arrows point down this list):

- ``Steps`` (steps.py): the steps of the cycle, from SHUFFLE to the dealt state;
- ``LinkWatch`` (links.py): the link coming up, going down, the board restarting, its build;
- ``BoardTests`` (testing.py): a technician's diagnosis (``diag``): the sensors, the motors;
- ``Reconciler`` (reconcile.py): the board's report against what the host believed; CLEAR
  FAULT and the recovery procedure;
- ``Guards`` (guards.py): what ends a cycle badly: faults, deadlines passed, the audit log;
- ``Phases`` (phases.py): the machine moving (states.py) and the state's deadline;
- ``BoardSide`` (board.py): the board's word, and the one way to send to it;
- core.py: the state, the events' outbox, the audit trail, the presses, the deals published.

Every entry (a request, a board event, a deadline passed) takes the lock, hands the job to its
part, checks the audit log, and delivers the queued events after the lock.

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
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar, overload

import protocol.messages as m
from controller.cycle import diagnosis
from controller.cycle.board import BoardSide
from controller.cycle.core import (
    AuditHead,
    AuditTrail,
    Clock,
    CycleState,
    Deals,
    FirmwarePolicy,
    ImpossibleCommand,
    InstalledBuild,
    Outbox,
    Presses,
    Recorder,
    Sender,
)
from controller.cycle.deadline import DEFAULT_DEADLINES, Deadlines
from controller.cycle.faults import CONTROLLER
from controller.cycle.guards import Guards
from controller.cycle.links import LinkWatch
from controller.cycle.phases import Phases
from controller.cycle.plumbing import Plumbing
from controller.cycle.reconcile import Reconciler
from controller.cycle.reports import (
    Action,
    Answered,
    CommandResult,
    DiagStarted,
    Event,
    PanelPresence,
    PanelPresenceEvent,
    Source,
    Status,
    utc_now,
)
from controller.cycle.requests import ACTIONS, Requests
from controller.cycle.states import DICE
from controller.cycle.steps import Steps
from controller.cycle.testing import BoardTests
from drivers.board import BoardEvent, PortDown, PortUp
from drivers.ioloop import IoLoop
from protocol.events import LinkDown, LinkUp, PeerRebooted, ProtocolMismatch
from rules.dealt import DealtState, GamePosition
from rules.profiles import Profile
from rules.words import DiceSource, Seat, TileSetName

log = logging.getLogger("mjtable.controller")

#: Buttons wired into the board (Button.button) and the action each one asks for.
BOARD_BUTTONS: dict[int, Action] = {1: "shuffle", 2: "deal", 3: "stop", 4: "clear_fault"}

_E = TypeVar("_E", bound="BoardEvent")
#: a board event's handler
Route = Callable[["BoardEvent"], None]


def _route(kind: type[_E], handler: Callable[[_E], None]) -> tuple[type, Route]:
    """One entry of the dispatch table: the event class, and its handler typed for it."""

    def call(event: BoardEvent) -> None:
        if isinstance(event, kind):  # always: the table is looked up by type(event)
            handler(event)

    return kind, call


class CycleController:
    """Implements controller.cycle.reports.ApiBackend over a board link."""

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
        loop: IoLoop | None = None,
    ) -> None:
        """``loop``: the service's I/O loop, which runs the deadlines (without one, a loop of
        the controller's own does)."""
        self._lock = threading.RLock()
        self._audit_head = audit_head
        #: the system clock's watch (the service's), for the status's ``clock_synced``
        self.clock: Clock | None = None
        #: the dealer's button panel as the service last found it (None: no panel)
        self._panel: PanelPresence | None = None
        state = CycleState(
            profile,
            table=table,
            dice_source=dice_source,
            deadlines=deadlines or DEFAULT_DEADLINES,
        )
        outbox, audit, board = Outbox(self._lock), AuditTrail(recorder), BoardSide()
        presses = Presses(state, audit, outbox)
        phases = Phases(state, board, outbox, self._deadline_passed, loop)
        base = Plumbing(state, board, audit, outbox)
        guards = Guards(base, presses, phases)
        reconcile = Reconciler(base, presses, phases, guards)
        deals = Deals(history, first_leader, rotate_leader)
        steps = Steps(base, phases, guards, reconcile, deals, cycle_prefix=cycle_prefix)
        links = LinkWatch(base, phases, guards, reconcile)
        tests = BoardTests(base, phases, guards)
        requests = Requests(state, board, audit, outbox, presses, guards, steps, links, deals)
        phases.watch(presses.transition)  # a CLEAR FAULT press cut short is answered
        phases.watch(tests.transition)  # motor tests cut short end
        self._state, self._outbox, self._board, self._phases = state, outbox, board, phases
        self._guards, self._deals, self._steps = guards, deals, steps
        self._links, self._tests, self._requests = links, tests, requests
        #: board and link events by exact type (every event class is final); the board's
        #: buttons are requests, taken before the lock (on_board_event)
        self._routes: dict[type, Route] = dict(
            (
                _route(LinkUp, links.on_link_up),
                _route(LinkDown, links.on_link_down),
                _route(PeerRebooted, self._on_board_restart),
                _route(ProtocolMismatch, links.on_mismatch),
                _route(PortDown, links.on_port_down),
                _route(PortUp, links.on_port_up),
                _route(m.Progress, steps.on_progress),
                _route(m.Done, steps.on_done),
                _route(m.ManifestChunk, steps.on_chunk),
                _route(m.Dice, steps.on_dice),
                _route(m.Refused, self._on_refusal),
                _route(m.Fault, guards.on_fault),
                _route(m.BoardStatus, reconcile.on_board_status),
                _route(m.SensorData, tests.on_sensor_data),
                _route(m.MotorResult, tests.on_motor_result),
            )
        )

    # ------------------------------------------------------------ wiring and what it is

    def attach(self, link: Sender) -> None:
        """Give the controller the link it sends on (a BoardLink)."""
        self._board.attach(link)

    @property
    def profile(self) -> Profile:
        return self._state.profile

    @property
    def table(self) -> str:
        return self._state.table

    @property
    def dice_source(self) -> DiceSource:
        return self._state.dice_source

    @property
    def deadlines(self) -> Deadlines:
        return self._state.deadlines

    @property
    def state(self) -> str:
        """The state of the table (one of states.STATES)."""
        return self._state.state

    @property
    def link_up(self) -> bool:
        """Whether the board answers (without building a whole status): the link is up and
        the port is open and this controller's alone (drivers/board.py: a port closed, or
        another program at it, is a link down now, not once the link's timeout has run out)."""
        return self._board.connected

    @property
    def firmware(self) -> InstalledBuild | None:
        """The installed firmware each board is compared with at its link up (None: none)."""
        return self._links.firmware

    @firmware.setter
    def firmware(self, installed: InstalledBuild | None) -> None:
        self._links.firmware = installed

    @property
    def firmware_mismatch(self) -> FirmwarePolicy:
        """What a board running another build does: "refuse" (nothing is dealt) or "warn"."""
        return self._links.firmware_mismatch

    @firmware_mismatch.setter
    def firmware_mismatch(self, policy: FirmwarePolicy) -> None:
        self._links.firmware_mismatch = policy

    @property
    def firmware_pending(self) -> bool:
        """The board linked up waits for the installed firmware's build to be compared with."""
        return self._links.firmware_pending

    @property
    def publish_latencies_ns(self) -> deque[int]:
        """Last die -> dealt state published, for the benchmark (the latest 10000)."""
        return self._steps.publish_latencies_ns

    def subscribe(
        self, callback: Callable[[Event], None], types: Iterable[str] | None = None
    ) -> Callable[[], None]:
        """Hand ``callback`` every event the cycle publishes, or those of ``types`` only (an
        event no subscriber takes is not made: a cycle's PROGRESS reports); returns what
        unsubscribes it."""
        return self._outbox.subscribe(callback, types)

    def close(self) -> None:
        with self._lock:
            self._phases.cancel()
        self._phases.close()

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
            self._deals.restore(published)
            self._board.believe(on_top=on_top, bench=bench, motions=motions)

    # ------------------------------------------------------------ entries
    # Each takes the lock, hands the job to its part, faults the table if an audit record
    # could not be written (check_audit), and delivers the queued events after the lock.

    def _deadline_passed(self, gen: int, state: str, seconds: float) -> None:
        """A deadline passed (on the timer's thread)."""
        with self._lock:
            if not self._phases.due(gen, state):
                return
            self._guards.overdue(state, seconds)
            self._guards.check_audit()
        self._outbox.flush()

    def panel_seen(self, panel: PanelPresence) -> None:
        """The service found the dealer's panel, or lost it (from the panel's thread): the
        status says so, and a ``panel`` event when it changed."""
        with self._lock:
            changed = panel != self._panel
            self._panel = panel
            if changed:
                self._outbox.queue(PanelPresenceEvent(at=utc_now(), panel=panel))
        self._outbox.flush()

    def firmware_known(self) -> None:
        """The installed firmware's build is made (from its thread): the board that is linked
        up is compared with it now."""
        with self._lock:
            self._links.firmware_known()
        self._outbox.flush()

    # ------------------------------------------------------------ ApiBackend

    def status(self) -> Status:
        with self._lock:
            state, board, deals = self._state, self._board, self._deals
            cycle = state.current()
            clock = self.clock
            return Status(
                state=state.state,
                cycle=cycle.cycle_id if cycle else None,
                variant=state.profile.variant,
                profile=state.profile.ref(),
                table=state.table,
                tile_set_on_top=board.on_top(),
                tile_set_waiting=self._steps.waiting_set(),
                link_up=board.connected,
                board=board.info(),
                fault=state.fault,
                last_cycle=deals.last.cycle_id if deals.last else None,
                cycles_dealt=deals.count,
                leader=cycle.leader if cycle is not None and state.state != DICE else deals.leader,
                game=deals.game,
                allowed=self._requests.allowed(),
                audit=self._audit_head() if self._audit_head is not None else None,
                clock_synced=clock.synced if clock is not None else None,
                panel=self._panel,
            )

    def last_dealt(self) -> DealtState | None:
        with self._lock:
            return self._deals.last

    def get_cycle(self, cycle_id: str) -> DealtState | None:
        with self._lock:
            return self._deals.get(cycle_id)

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
            result = self._requests.press(action, source)
            press = self._state.clear_press if action == "clear_fault" and result.accepted else None
            if press is not None and answered is not None:
                press.answered.append(answered)  # under the lock: the answer cannot pass by
            self._guards.check_audit()
        self._outbox.flush()
        if press is not None and answered is not None:
            return None
        return result

    def enter_dice(self, dice: list[int], source: Source) -> CommandResult:
        """Dice thrown by hand and entered by the dealer (``dice.source = "dealer"``)."""
        with self._lock:
            result = self._requests.enter_dice(dice)
            self._guards.check_audit()
        self._outbox.flush()
        return result

    def set_leader(
        self, seat: Seat | None, source: Source, game: GamePosition | None = None
    ) -> CommandResult:
        """Who leads the next deal, and where the game stands (ApiBackend.set_leader); one
        ``leader_set`` record."""
        with self._lock:
            result = self._requests.set_leader(seat, source, game)
            self._guards.check_audit()
        self._outbox.flush()
        return result

    def diagnose(self, motors: bool, motor_ms: int | None, source: Source) -> DiagStarted:
        """Read the board's sensors and, with ``motors`` and the table at rest, test each motor
        for ``motor_ms`` (None: the firmware's default); ``diag`` events follow (testing.py)."""
        ms = diagnosis.default_motor_ms() if motor_ms is None else motor_ms
        with self._lock:
            result = self._tests.diagnose(motors, ms, source)
            self._guards.check_audit()
        self._outbox.flush()
        return result

    # --------------------------------------------------------- board events

    def on_board_event(self, event: BoardEvent) -> None:
        """Called by the board link's I/O thread for every event, in order."""
        if type(event) is m.Progress and not self._outbox.wants("progress"):
            return  # what only a subscriber of progress reads (57 a cycle): not even the lock
        if isinstance(event, m.Button):
            # A button wired into the board is a request like any other; it takes the
            # lock and flushes by itself.
            action = BOARD_BUTTONS.get(event.button)
            if event.pressed and action is not None:
                self.request(action, "board")
            return
        with self._lock:
            try:
                route = self._routes.get(type(event))
                if route is None:
                    log.debug("ignored board event %r", event)
                else:
                    route(event)
            except ImpossibleCommand as exc:  # held back: the table faults instead
                self._guards.impossible(exc)
            except Exception as exc:  # a bug here must fault the cycle, not the link
                log.exception("controller failed on %r", event)
                self._guards.declare(CONTROLLER, event=type(event).__name__, error=exc)
            self._guards.check_audit()
        self._outbox.flush()

    def _on_refusal(self, event: m.Refused) -> None:
        if not self._tests.on_refused(event):  # the diagnosis's own commands first
            self._guards.on_refused(event)

    def _on_board_restart(self, event: PeerRebooted) -> None:
        self._tests.board_lost()
        self._links.on_reboot(event)


__all__ = [
    "ACTIONS",
    "BOARD_BUTTONS",
    "DEFAULT_DEADLINES",
    "CycleController",
    "Deadlines",
    "Recorder",
    "Sender",
]
