"""The table controller: one deal cycle after another, over the board link.

A cycle, for the set waiting underneath the table (the two physical sets alternate):

    SHUFFLE(set) -> BUILD_WALLS(set, layout) -> READ_MANIFEST(set)      [ready]
    COLLECT (the set in play drops in, when there is one) -> LIFT_WALLS(set)
    dice, as the rule set asks (next_throw)                               [dealt]

The manifest is read before the walls rise, so that once the last die is known
the dealt state is pure computation: ``rules.deal`` on the manifest and throws.

Every phase has a deadline. A fault from the board, a refusal, a deadline
passed, the link lost or the board rebooted all end the same way: STOP is sent,
the machine enters ``fault`` with plain words on what happened and what to
check, and nothing is published for that cycle. CLEAR_FAULT (when the cause is
gone) brings the table back to ``idle``; the set that was being prepared is
shuffled again, never trusted.

Threads: board events arrive on the link's I/O thread; requests come from the
API, the panel or the CLI on theirs; deadlines fire on timer threads. All of
them go through ``self._lock``; subscribers are called outside it.
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
from typing import Any, Literal, Protocol

import protocol.codes as codes
import protocol.messages as m
from controller.cycle.deadline import DeadlineTimer
from controller.cycle.reports import (
    Action,
    ButtonEvent,
    CommandResult,
    DealtEvent,
    Event,
    FaultClearedEvent,
    FaultEvent,
    LinkEvent,
    PhaseEvent,
    ProgressEvent,
    Seat,
    Source,
    Status,
    ThrowEvent,
    ThrowWantedEvent,
)
from controller.cycle.states import AT_REST, MOTION_STATES, LifecycleModel, build_machine
from drivers.board import PortDown, PortUp
from protocol import events as link_events
from rules.deal import (
    Throw,
    deal,
    dice_leader,
    manifest_from_ring,
    next_throw,
    validate_manifest,
)
from rules.dealt import Manifest
from rules.profiles import Profile

log = logging.getLogger("mjtable.controller")

REBOOT_MESSAGE = "the board restarted (new session): its motors stopped and its state was lost"
REBOOT_ADVICE = (
    "check the board's power supply and its fault log; press CLEAR FAULT to start over "
    "with a fresh shuffle"
)

TileSet = Literal["A", "B"]
SEATS: tuple[Seat, ...] = ("E", "S", "W", "N")
SET_CODE: dict[str, int] = {"A": 0, "B": 1}
#: Buttons wired into the board (Button.button) and the action each one asks for.
BOARD_BUTTONS: dict[int, Action] = {1: "shuffle", 2: "deal", 3: "stop", 4: "clear_fault"}

#: Recorder: called with (kind, data, cycle id or None); returns once the record is
#: durable (the audit log's append), so events are announced only after.
Recorder = Callable[[str, dict[str, Any], str | None], None]


class Sender(Protocol):
    """What the controller needs from the board link (drivers.board.BoardLink)."""

    def send(self, message: m.Message) -> None: ...


@dataclass
class Deadlines:
    """Seconds each phase may take before the controller declares a fault.

    Real boards treat more than 80 s of shuffle and build as a fault; the
    defaults leave the board room to report its own fault first.
    """

    shuffle: float = 90.0
    build: float = 90.0
    manifest: float = 10.0
    collect: float = 30.0
    lift: float = 5.0
    dice: float = 30.0
    clear: float = 10.0
    stop: float = 5.0

    def for_state(self, state: str) -> float | None:
        return {
            "shuffling": self.shuffle,
            "building": self.build,
            "reading": self.manifest,
            "collecting": self.collect,
            "lifting": self.lift,
            "dice": self.dice,
            "recovering": self.clear,
            "stopped": self.stop,
        }.get(state)


@dataclass
class _Cycle:
    """What the controller knows of the cycle in progress."""

    cycle_id: str
    tile_set: TileSet
    leader: Seat
    started_ns: int = field(default_factory=time.perf_counter_ns)
    manifest_codes: bytearray = field(default_factory=bytearray)
    manifest_total: int = 0
    manifest: Manifest | None = None
    throws: list[Throw] = field(default_factory=list)
    dice_tag: int = 0
    last_die_ns: int = 0
    shown_dice: list[int] | None = None


def fault_words(code: int, subsystem: int, phase: int, detail: int) -> tuple[str, str, str]:
    """A board FAULT as (NAME, what happened, what to check), in plain words: the detail
    byte named (the wall, the motor, the lift plate), where and when it struck."""
    name, text, advice = codes.fault_info(code)
    text = text.split(" (detail")[0]
    what = ""
    if code in (codes.FAULT_WALL_SHORT, codes.FAULT_WALL_EXTRA) and detail < 4:
        what = f"the {SEATS[detail]} wall"
    elif code == codes.FAULT_MOTOR_STALL and detail in codes.MOTORS:
        what = f"the {codes.MOTORS[detail][1]}"
    elif code == codes.FAULT_LIFT_LIMIT:
        what = f"the {SEATS[detail]} wall's plate" if detail < 4 else "the centre lift"
    elif code == codes.FAULT_INTERNAL and detail:
        what = f"firmware error {detail}"
    where = codes.SUBSYSTEMS.get(subsystem, ("", "", ""))[1]
    when = f"while {codes.PHASES[phase][1]}" if phase in codes.PHASES and phase else ""
    parts = [p for p in (what, where, when) if p]
    return name, text + (" (" + ", ".join(parts) + ")" if parts else ""), advice


def utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class CycleController:
    """Implements controller.cycle.reports.ApiBackend over a board link."""

    def __init__(
        self,
        profile: Profile,
        *,
        table: str = "1",
        dice_source: Literal["board", "controller", "dealer"] = "board",
        deadlines: Deadlines | None = None,
        recorder: Recorder | None = None,
        history: int = 64,
        first_leader: Seat = "E",
        rotate_leader: bool = True,
        cycle_prefix: str | None = None,
    ) -> None:
        self.profile = profile
        self.table = table
        self.dice_source = dice_source
        self.deadlines = deadlines or Deadlines()
        self._record_fn = recorder
        self._lock = threading.RLock()
        self._deliver_lock = threading.RLock()
        self._model = LifecycleModel()
        self._machine = build_machine(self._model)
        self._link: Sender | None = None
        self._subscribers: list[Callable[[Event], None]] = []
        self._pending: list[Event] = []
        self._cycle: _Cycle | None = None
        self._ready: _Cycle | None = None
        #: the set whose walls are up on the table (the hand in play), as far as known
        self._on_top: TileSet | None = None
        #: False when a lift or collect was cut short, or after a board restart: the
        #: table top is collected before the next walls rise
        self._top_known = True
        #: the set whose complete walls wait under the table (built, manifest maybe unread)
        self._bench: TileSet | None = None
        self._fault: FaultEvent | None = None
        self._audit_error: str | None = None
        self._port_ok = True
        self._board: Any = None
        self._link_up = False
        self._deadline = DeadlineTimer("controller-deadline")
        self._deadline_gen = 0
        self._history: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._history_size = history
        self._last_dealt: dict[str, Any] | None = None
        self._cycles_dealt = 0
        self._leader = first_leader
        self._rotate_leader = rotate_leader
        # Start time plus a random part: ids stay unique across restarts even when the
        # clock is set back (a Pi without a real-time clock after a power cut).
        self._prefix = cycle_prefix or (
            _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(2)
        )
        self._counter = 0
        self._restored_session: str | None = None
        self._link_lost_at: float | None = None
        #: last die -> dealt state published, for the benchmark (the latest 10000)
        self.publish_latencies_ns: deque[int] = deque(maxlen=10000)
        #: board and link events by exact type (every event class is final)
        self._handlers: dict[type, Callable[[Any], None]] = {
            link_events.LinkUp: self._on_link_up,
            link_events.LinkDown: self._on_link_down,
            link_events.PeerRebooted: self._on_reboot,
            link_events.ProtocolMismatch: self._on_mismatch,
            PortDown: self._on_port_down,
            PortUp: self._on_port_up,
            m.Progress: self._on_progress,
            m.Done: self._on_done,
            m.Refused: self._on_refused,
            m.Fault: self._on_fault,
            m.Dice: self._on_dice,
            m.ManifestChunk: self._on_chunk,
        }

    # ------------------------------------------------------------ wiring

    def attach(self, link: Sender) -> None:
        """Give the controller the link it sends on (a BoardLink)."""
        self._link = link

    @property
    def state(self) -> str:
        return self._model.state

    @property
    def link_up(self) -> bool:
        """Whether the board answers (without building a whole status)."""
        return self._link_up

    def subscribe(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        with self._lock:
            self._subscribers.append(callback)

        def unsubscribe() -> None:
            with self._lock:
                if callback in self._subscribers:
                    self._subscribers.remove(callback)

        return unsubscribe

    def restore(
        self,
        published: list[dict[str, Any]],
        board_session: str | None = None,
        *,
        on_top: TileSet | None = None,
        bench: TileSet | None = None,
    ) -> None:
        """After a restart, from the audit log: the dealt states already published
        (oldest first) answer get_cycle again and the leader rotation continues; where
        the two sets stood (``on_top``, ``bench``: from the walls_* records) is trusted
        only if the board kept its session. Nothing is re-published."""
        with self._lock:
            for data in published[-self._history_size :]:
                self._history[str(data.get("cycle_id"))] = data
            self._cycles_dealt = len(published)
            self._restored_session = board_session
            self._on_top, self._bench = on_top, bench
            self._top_known = False  # until the board confirms its session
            if published:
                last = published[-1]
                self._last_dealt = last
                leader = last.get("leader")
                if self._rotate_leader and leader in SEATS:
                    self._leader = SEATS[(SEATS.index(leader) + 1) % 4]

    # ------------------------------------------------------------ ApiBackend

    def status(self) -> Status:
        with self._lock:
            cycle = self._cycle or self._ready
            return Status(
                state=self.state,
                cycle=cycle.cycle_id if cycle else None,
                variant=self.profile.name,
                table=self.table,
                tile_set_on_top=self._on_top,
                tile_set_waiting=self._waiting_set(),
                link_up=self._link_up,
                board=self._board_info(),
                fault=self._fault,
                last_cycle=(self._last_dealt or {}).get("cycle_id"),
                cycles_dealt=self._cycles_dealt,
                allowed=self._allowed(),
            )

    def last_dealt(self) -> dict[str, Any] | None:
        with self._lock:
            return self._last_dealt

    def get_cycle(self, cycle_id: str) -> dict[str, Any] | None:
        with self._lock:
            return self._history.get(cycle_id)

    def request(self, action: Action, source: Source) -> CommandResult:
        """SHUFFLE, DEAL, STOP or CLEAR FAULT, from a button, the board or the API."""
        with self._lock:
            result = self._request(action, source)
            self._check_audit()
        self._flush()
        return result

    def _request(self, action: Action, source: Source) -> CommandResult:
        refusal = self._refusal(action)
        accepted = refusal is None
        message = refusal or self._start(action)
        self._record(
            "button",
            {"button": action, "source": source, "accepted": accepted, "reason": message},
        )
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
        return CommandResult(
            action=action,
            accepted=accepted,
            message=message,
            state=self.state,
            cycle=self._current_id(),
        )

    def enter_dice(self, dice: list[int], source: Source) -> CommandResult:
        """Dice thrown by hand and entered by the dealer (``dice.source = "dealer"``)."""
        with self._lock:
            refusal = self._dice_refusal(dice)
            cycle = self._cycle
            if refusal is None and cycle is not None:
                self._take_throw(cycle, list(dice), "dealer")
            result = CommandResult(
                action="throw",
                accepted=refusal is None,
                message=refusal or f"throw {'+'.join(map(str, dice))} taken",
                state=self.state,
                cycle=self._current_id(),
            )
            self._check_audit()
        self._flush()
        return result

    def _dice_refusal(self, dice: list[int]) -> str | None:
        if self.dice_source != "dealer":
            return f"the dice come from the {self.dice_source} here, not from the dealer"
        cycle = self._cycle
        if self.state != "dice" or cycle is None:
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

    def on_board_event(self, event: object) -> None:
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
            except Exception as exc:  # a bug here must fault the cycle, not the link
                log.exception("controller failed on %r", event)
                self._fault_now(
                    "CONTROLLER",
                    "controller",
                    f"the controller failed while handling {type(event).__name__}: {exc}",
                    "report this with the audit log; press CLEAR FAULT to start over",
                )
            self._check_audit()
        self._flush()

    def _dispatch(self, event: object) -> None:
        handler = self._handlers.get(type(event))
        if handler is None:
            log.debug("ignored board event %r", event)
            return
        handler(event)

    def _on_mismatch(self, event: Any) -> None:
        self._fault_now(
            "PROTOCOL_MISMATCH", "link", event.message, "update the controller or the firmware"
        )

    def _on_port_down(self, event: Any) -> None:
        # The port can come back before the link times out (a glitch): the protocol
        # engine, which keeps ticking while the port is closed, says when the link is
        # down. Logged once per loss, not at every reopening attempt.
        if self._port_ok:
            log.warning("%s", event.reason)
        self._port_ok = False

    def _on_port_up(self, event: Any) -> None:
        self._port_ok = True
        log.info("port %s open", event.url)

    # ------------------------------------------------------------ link

    def _on_link_up(self, event: Any) -> None:
        hello = event.hello_reply
        gap = ""
        if self._link_lost_at is not None:
            gap = f" after a gap of {time.monotonic() - self._link_lost_at:.1f} s"
            self._link_lost_at = None
        if self.state == "offline":
            # First contact in this process: whatever the board was doing for a
            # previous controller (a crash mid-cycle), stop it; the table starts idle.
            self._send(m.Stop())
            if f"{hello.session_id:08x}" == self._restored_session:
                self._top_known = True  # the same board session: the logged sets hold
            else:
                self._on_top, self._bench, self._top_known = None, None, False
        elif self.state in ("fault", "stopped", "recovering"):
            # The link came back after a loss during motion: the board may still be
            # running what it was told (and the engine resends what was not acknowledged).
            self._send(m.Stop())
        self._board = hello
        self._link_up = True
        info = self._board_info()
        self._record("hello", info or {})
        self._record("link_up", {"gap": gap.strip()} if gap else {})
        self._queue(
            LinkEvent(at=utc_now(), up=True, reason=f"board answered HELLO{gap}", board=info)
        )
        if self.state == "offline":
            self._fire("link_up")

    def _on_link_down(self, event: Any) -> None:
        reason = event.reason
        was_up = self._link_up
        self._link_up = False
        if was_up:
            self._record("link_down", {"reason": reason})
            self._queue(LinkEvent(at=utc_now(), up=False, reason=reason))
        if was_up:
            self._link_lost_at = time.monotonic()
        if self.state in ("offline", "fault"):
            return
        if self.state in AT_REST:
            # Nothing is moving: a cable pulled and plugged back, or a board restart,
            # costs no fault. Requests are refused until the board answers again.
            log.warning("the link to the board is down (%s); the table waits for it", reason)
            return
        self._fault_now(
            "LINK_DOWN",
            "link",
            f"the serial link to the board is down: {reason}",
            "check the cable between the controller and the board and that the board has "
            "power; the link comes back by itself, then press CLEAR FAULT",
        )

    def _on_reboot(self, event: Any) -> None:
        self._record(
            "board_rebooted", {"old_session": event.old_session, "new_session": event.new_session}
        )
        # The restarted board lost track of its walls: collect before raising any.
        self._on_top, self._bench, self._top_known = None, None, False
        if self.state == "offline":
            self._ready = None
            return
        if self.state == "stopped":
            # The restart stopped the motors: STOP needs no further confirmation.
            self._deadline_gen += 1
            self._deadline.cancel()
        if self.state == "fault" and self._fault is not None and self._fault.code == "LINK_DOWN":
            # The link went down because the board restarted: say so precisely.
            self._fault = self._fault.model_copy(
                update={
                    "code": "BOARD_REBOOTED",
                    "source": "reboot",
                    "message": REBOOT_MESSAGE,
                    "advice": REBOOT_ADVICE,
                }
            )
            self._record("fault", self._fault.model_dump(mode="json"))
            self._queue(self._fault)
            return
        if self.state in AT_REST:
            # The walls the board built (ready) or raised (dealt) are no longer known to
            # it: start again from a fresh shuffle. A published deal stays published.
            self._abort("the board restarted before the walls were dealt")
            if self.state in ("ready", "dealt"):
                self._fire("board_reset")
            log.warning("the board restarted while the table was at rest: %s", REBOOT_MESSAGE)
            return
        self._fault_now(
            "BOARD_REBOOTED",
            "reboot",
            REBOOT_MESSAGE,
            REBOOT_ADVICE,
        )

    # ------------------------------------------------------------ phases

    def _start(self, action: Action) -> str:
        if action == "shuffle":
            return self._start_shuffle()
        if action == "deal":
            return self._start_deal()
        if action == "stop":
            return self._stop_motion()
        return self._start_clear()

    def _start_shuffle(self) -> str:
        tile_set = self._waiting_set() or "A"
        reread = self._bench == tile_set
        self._counter += 1
        leader = self._leader
        cycle = _Cycle(
            cycle_id=f"{self.table}-{self._prefix}-{self._counter:04d}",
            tile_set=tile_set,
            leader=leader,
        )
        self._cycle = cycle
        self._ready = None
        data: dict[str, Any] = {
            "tile_set": tile_set,
            "profile": self.profile.name,
            "profile_version": self.profile.version,
            "leader": leader,
        }
        if reread:
            # A cycle cut short after its walls were built (a fault or STOP while reading,
            # waiting or lifting) left them complete under the table: the board will not
            # shuffle a built set. Read its manifest again, from the tile reader.
            data["reread"] = True
            self._record("shuffle", data, cycle=cycle.cycle_id)
            self._fire("start_reread")
            self._send(m.ReadManifest(SET_CODE[tile_set]))
            return f"set {tile_set} is already built underneath: reading its walls again"
        self._record("shuffle", data, cycle=cycle.cycle_id)
        self._fire("start_shuffle")
        self._send(m.Shuffle(SET_CODE[tile_set]))
        return f"shuffling set {tile_set}"

    def _start_deal(self) -> str:
        cycle = self._ready
        assert cycle is not None  # guaranteed by _refusal
        self._cycle, self._ready = cycle, None
        if self._on_top is not None or not self._top_known:
            self._fire("start_collect")
            self._send(m.Collect())
            played = f"set {self._on_top}" if self._on_top else "the table top"
            return f"collecting {played}, then raising set {cycle.tile_set}"
        self._fire("start_lift")
        self._send(m.LiftWalls(SET_CODE[cycle.tile_set]))
        return f"raising set {cycle.tile_set}"

    def _stop_motion(self) -> str:
        self._send(m.Stop())
        self._fire("halt")
        self._abort("STOP pressed")
        return "motion stopped; the cycle is abandoned (press CLEAR FAULT to start over)"

    def _start_clear(self) -> str:
        self._fire("clear")
        self._send(m.ClearFault())
        return "clearing the fault"

    def _on_progress(self, event: Any) -> None:
        if self.state not in MOTION_STATES:
            return
        self._queue(
            ProgressEvent(
                at=utc_now(),
                cycle=self._current_id(),
                phase=codes.phase_name(event.phase),
                percent=event.percent,
                detail=None if not event.detail else str(event.detail),
            )
        )

    def _expects(self, command: int) -> bool:
        wanted = {
            "shuffling": m.Shuffle.TYPE,
            "building": m.BuildWalls.TYPE,
            "reading": m.ReadManifest.TYPE,
            "collecting": m.Collect.TYPE,
            "lifting": m.LiftWalls.TYPE,
            "recovering": m.ClearFault.TYPE,
        }.get(self.state)
        return wanted == command

    def _on_done(self, event: Any) -> None:
        if self.state == "dice" and event.command == m.DisplayDice.TYPE:
            cycle = self._cycle
            if cycle is not None and cycle.shown_dice is not None:
                values, cycle.shown_dice = cycle.shown_dice, None
                self._take_throw(cycle, values, "controller")  # shown on the table: taken
            return
        if self.state == "stopped" and event.command == m.Stop.TYPE:
            self._deadline_gen += 1  # the board confirmed: no more waiting on STOP
            self._deadline.cancel()
            return
        if not self._expects(event.command):
            log.debug("DONE for %s in state %s ignored", event.command, self.state)
            return
        if event.result != 0:
            command = m.message_name(event.command)
            what = (
                f"the board stopped {command} before the end"
                if event.result == codes.RESULT_STOPPED
                else f"the board ended {command} with error {event.result}"
            )
            self._fault_now(
                "COMMAND_FAILED", "board", what, "read the board's faults: mjtable diag"
            )
            return
        cycle = self._cycle
        state = self.state
        if state == "recovering":
            cleared = self._fault.code if self._fault is not None else "STOPPED"
            self._fault = None
            self._cycle = None
            self._fire("recovered")
            self._record("fault_cleared", {"code": cleared})
            self._queue(FaultClearedEvent(at=utc_now(), state=self.state))
            return
        assert cycle is not None
        if state == "shuffling":
            self._fire("shuffled")
            self._send(
                m.BuildWalls(
                    SET_CODE[cycle.tile_set],
                    [list(self.profile.layout.heights(seat)) for seat in SEATS],
                )
            )
        elif state == "building":
            self._bench = cycle.tile_set
            self._record("walls_built", {"tile_set": cycle.tile_set}, cycle=cycle.cycle_id)
            self._fire("built")
            cycle.manifest_codes = bytearray()
            cycle.manifest_total = 0
            self._send(m.ReadManifest(SET_CODE[cycle.tile_set]))
        elif state == "reading":
            self._finish_manifest(cycle)
        elif state == "collecting":
            self._record("walls_collected", {"tile_set": self._on_top}, cycle=cycle.cycle_id)
            self._on_top, self._top_known = None, True
            self._fire("collected")
            self._send(m.LiftWalls(SET_CODE[cycle.tile_set]))
        elif state == "lifting":
            self._on_top, self._bench, self._top_known = cycle.tile_set, None, True
            self._record("walls_lifted", {"tile_set": cycle.tile_set}, cycle=cycle.cycle_id)
            self._record("deal_started", {"leader": cycle.leader}, cycle=cycle.cycle_id)
            self._fire("lifted")
            self._next_throw(cycle)

    def _on_chunk(self, event: Any) -> None:
        cycle = self._cycle
        if self.state != "reading" or cycle is None:
            return
        if event.tile_set != SET_CODE[cycle.tile_set] or (
            cycle.manifest_total and event.total != cycle.manifest_total
        ):
            self._fault_now(
                "MANIFEST_MISMATCH",
                "controller",
                f"a manifest chunk of set {'AB'[event.tile_set & 1]} with {event.total} tiles "
                f"arrived while set {cycle.tile_set} was read",
                "check the board's firmware version (mjtable diag); press CLEAR FAULT and "
                "shuffle again",
            )
            return
        if event.offset != len(cycle.manifest_codes):
            self._fault_now(
                "MANIFEST_GAP",
                "controller",
                f"manifest chunk at offset {event.offset} while {len(cycle.manifest_codes)} "
                "tiles were received",
                "check the serial link for noise; press CLEAR FAULT and shuffle again",
            )
            return
        cycle.manifest_total = event.total
        cycle.manifest_codes.extend(event.tiles)

    def _finish_manifest(self, cycle: _Cycle) -> None:
        expected = self.profile.layout.tiles()
        got = len(cycle.manifest_codes)
        if got != expected or cycle.manifest_total != expected:
            self._fault_now(
                "MANIFEST_SIZE",
                "controller",
                f"the board reported {got} tiles in the manifest, the rule set needs {expected}",
                "check that the tile set in the table matches the configured rule set",
            )
            return
        try:
            tiles = [codes.code_to_tile(code) or "?" for code in cycle.manifest_codes]
            cycle.manifest = manifest_from_ring(self.profile, tiles)
            validate_manifest(self.profile, cycle.manifest)
        except (ValueError, KeyError) as exc:
            self._fault_now(
                "MANIFEST_INVALID",
                "controller",
                f"the wall manifest from the board is not a valid set: {exc}",
                "check the tile reader (mjtable diag) and that no tile is missing or foreign",
            )
            return
        self._ready = cycle
        self._cycle = None
        self._fire("manifest_read")
        self._record(
            "manifest",
            {"tile_set": cycle.tile_set, "walls": cycle.manifest.model_dump(mode="json")["walls"]},
            cycle=cycle.cycle_id,
        )

    # ------------------------------------------------------------ dice

    def _next_throw(self, cycle: _Cycle) -> None:
        request = next_throw(self.profile, cycle.leader, cycle.throws)
        if request is None:
            self._publish(cycle)
            return
        cycle.dice_tag = len(cycle.throws) & 0xFF
        has_dice = bool(self._board and self._board.capabilities & codes.CAP_DICE)
        if self.dice_source == "board" and has_dice:
            self._send(m.RollDice(cycle.dice_tag, request.count))
            return
        if self.dice_source == "dealer":
            self._queue(
                ThrowWantedEvent(
                    at=utc_now(),
                    cycle=cycle.cycle_id,
                    by=request.by,
                    count=request.count,
                    purpose=request.purpose,
                )
            )
            return
        # Thrown here with the OS's generator (no modulo bias), taken once the board
        # confirms it shows them (DONE for DISPLAY_DICE), within the dice deadline.
        cycle.shown_dice = [secrets.randbelow(6) + 1 for _ in range(request.count)]
        self._send(m.DisplayDice(cycle.dice_tag, cycle.shown_dice))

    def _on_dice(self, event: Any) -> None:
        cycle = self._cycle
        if self.state != "dice" or cycle is None or event.tag != cycle.dice_tag:
            log.debug("dice %r ignored in state %s", event, self.state)
            return
        self._take_throw(cycle, list(event.values), "board")

    def _take_throw(self, cycle: _Cycle, values: list[int], source: str) -> None:
        request = next_throw(self.profile, cycle.leader, cycle.throws)
        assert request is not None
        if len(values) != request.count:
            self._fault_now(
                "DICE_COUNT",
                "board",
                f"the dice unit gave {len(values)} dice, {request.count} were asked",
                "check the dice unit (mjtable diag)",
            )
            return
        throw = Throw(by=request.by, dice=values)
        cycle.throws.append(throw)
        cycle.last_die_ns = time.perf_counter_ns()
        self._record(
            "throw",
            {"by": request.by, "dice": values, "source": source, "purpose": request.purpose},
            cycle=cycle.cycle_id,
        )
        self._queue(
            ThrowEvent(
                at=utc_now(),
                cycle=cycle.cycle_id,
                by=request.by,
                dice=values,
                purpose=request.purpose,
                source="board"
                if source == "board"
                else "dealer"
                if source == "dealer"
                else "controller",
            )
        )
        self._next_throw(cycle)

    def _publish(self, cycle: _Cycle) -> None:
        # Simplified: the single-die round picks player A, who deals.
        leader = dice_leader(self.profile, cycle.throws) or cycle.leader
        assert cycle.manifest is not None  # read before the walls rose (state reading)
        dealt = deal(
            self.profile,
            cycle.manifest,
            leader,
            cycle.throws,
            cycle_id=cycle.cycle_id,
            tile_set=cycle.tile_set,
        )
        data = dealt.model_dump(mode="json")
        if dealt.joker is not None:
            self._record(
                "joker",
                {"face": dealt.joker.face, "position": data["joker"]["position"]},
                cycle=cycle.cycle_id,
            )
        self._record("breach", {"position": data["breach"]}, cycle=cycle.cycle_id)
        if not self._record("dealt", {"state": data}, cycle=cycle.cycle_id):
            return  # not durable, so not published: _check_audit faults the table
        self._history[cycle.cycle_id] = data
        while len(self._history) > self._history_size:
            self._history.popitem(last=False)
        self._last_dealt = data
        self._cycles_dealt += 1
        self._cycle = None
        if self._rotate_leader:
            self._leader = SEATS[(SEATS.index(leader) + 1) % 4]
        self._fire("publish")
        self._queue(DealtEvent(at=utc_now(), cycle=cycle.cycle_id, dealt=data))
        if cycle.last_die_ns:
            self.publish_latencies_ns.append(time.perf_counter_ns() - cycle.last_die_ns)

    # ------------------------------------------------------------ faults

    def _on_refused(self, event: Any) -> None:
        name, text, advice = codes.refusal_info(event.reason)
        if event.reason == codes.REFUSE_BAD_STATE and event.detail in codes.BLOCKS:
            _block, why, what = codes.block_info(event.detail)
            text, advice = f"{text}: {why}", f"{what}; {advice}"
        command = m.message_name(event.command)
        if self.state == "recovering" and event.command == m.ClearFault.TYPE:
            original = self._fault
            if original is not None and event.reason == codes.REFUSE_CAUSE_PRESENT:
                fault = original.model_copy(
                    update={
                        "at": utc_now(),
                        "message": f"not cleared, the cause is still there: {original.message}",
                    }
                )
            else:
                fault = FaultEvent(
                    at=utc_now(),
                    code=name,
                    source="board",
                    message=f"the board did not clear the fault: {text}",
                    advice=advice,
                    phase=None,
                )
            self._fault = fault
            self._record("fault", fault.model_dump(mode="json"))
            self._fire("fail")
            self._queue(fault)
            return
        if self.state not in MOTION_STATES:
            log.info("board refused %s (%s) in state %s", command, name, self.state)
            return
        self._fault_now(name, "board", f"the board refused {command}: {text}", advice)

    def _on_fault(self, event: Any) -> None:
        name, message, advice = fault_words(event.code, event.subsystem, event.phase, event.detail)
        phase = codes.phase_name(event.phase) if event.phase else None
        self._fault_now(name, "board", message, advice, phase=phase)

    def _fault_now(
        self, code: str, source: str, message: str, advice: str, *, phase: str | None = None
    ) -> None:
        if self.state == "fault":
            # Already in fault: the table stays there, but nothing goes unrecorded.
            extra = {"code": code, "source": source, "message": message, "advice": advice}
            self._record("fault", {**extra, "while_in_fault": True}, cycle=self._current_id())
            log.error("FAULT %s (while in fault): %s — check: %s", code, message, advice)
            return
        in_motion = self.state in MOTION_STATES or self.state == "recovering"
        if in_motion and self._link_up:
            try:
                self._send(m.Stop())
            except Exception as exc:  # the link may be the very thing that failed
                log.warning("could not send STOP: %s", exc)
        phase = phase or (self.state if in_motion else None)
        self._fault = FaultEvent(
            at=utc_now(),
            cycle=self._current_id(),
            code=code,
            source=source,  # type: ignore[arg-type]
            message=message,
            advice=advice,
            phase=phase,
        )
        self._record("fault", self._fault.model_dump(mode="json"), cycle=self._current_id())
        self._settle_sets_after_fault()
        self._abort(f"{code}: {message}")
        self._fire("fail")
        self._queue(self._fault)
        log.error("FAULT %s: %s — check: %s", code, message, advice)

    def _settle_sets_after_fault(self) -> None:
        """What a cut-short phase leaves of the two sets."""
        state = self.state
        if state == "building":
            self._bench = None  # partial walls: the board drops them back on SHUFFLE
        elif state in ("lifting", "collecting"):
            self._top_known = False  # a plate may be half way: collect before lifting

    def _check_audit(self) -> None:
        """After each entry point: a record that could not be written faults the table."""
        if self._audit_error is None or self.state == "fault":
            return
        self._fault_now(
            "AUDIT_LOG",
            "controller",
            f"the audit log cannot be written ({self._audit_error}); nothing is dealt until it can",
            "check the disk where the audit log lives (df -h, the SD card), then restart "
            "the service",
        )

    # ------------------------------------------------------------ helpers

    def _refusal(self, action: Action) -> str | None:
        state = self.state
        if action == "stop":
            if state in MOTION_STATES or state == "recovering":
                return None
            return f"nothing is moving (the table is {state})"
        if self._audit_error is not None:
            return f"the audit log cannot be written ({self._audit_error})"
        if action == "clear_fault":
            if state in ("fault", "stopped"):
                if not self._link_up:
                    return "the board is not connected; the fault cannot be cleared yet"
                return None
            return f"there is no fault to clear (the table is {state})"
        if state == "fault":
            return "the table is in fault: a technician must clear it first"
        if state == "stopped":
            return "the table was stopped: press CLEAR FAULT to start over"
        if not self._link_up:
            return "the board is not connected"
        if action == "shuffle":
            if state in ("idle", "dealt"):
                return None
            if state == "ready":
                return "walls are already built and waiting: press DEAL"
            return f"the table is busy ({state})"
        if state == "ready":
            return None
        if state == "dealt":
            return "the next walls are not built yet: press SHUFFLE first"
        return f"there are no walls ready to deal (the table is {state})"

    def _allowed(self) -> list[Action]:
        actions: tuple[Action, ...] = ("shuffle", "deal", "stop", "clear_fault")
        return [a for a in actions if self._refusal(a) is None]

    def _waiting_set(self) -> TileSet | None:
        """The set to prepare next: the one being prepared, else walls already built
        underneath, else the one not in play (A when neither is)."""
        cycle = self._cycle or self._ready
        if cycle is not None and self.state not in ("dice", "dealt"):
            return cycle.tile_set
        if self._bench is not None:
            return self._bench
        if self._on_top is not None:
            return "B" if self._on_top == "A" else "A"
        return "A"

    def _current_id(self) -> str | None:
        cycle = self._cycle or self._ready
        return cycle.cycle_id if cycle else None

    def _board_info(self) -> dict[str, Any] | None:
        hello = self._board
        if hello is None:
            return None
        return {
            "firmware": f"{hello.fw_major}.{hello.fw_minor}.{hello.fw_patch}",
            "serial": hello.serial,
            "session": f"{hello.session_id:08x}",
            "protocol": f"{hello.proto_major}.{hello.proto_minor}",
            "reader": bool(hello.capabilities & codes.CAP_READER),
            "dice": bool(hello.capabilities & codes.CAP_DICE),
            "tile_sets": hello.tile_sets,
            "tiles": hello.tiles,
            "seed": hello.seed if hello.capabilities & codes.CAP_SEEDED else None,
        }

    def _fire(self, trigger: str) -> None:
        previous = self.state
        getattr(self._model, trigger)()
        self._arm_deadline()
        self._queue(
            PhaseEvent(at=utc_now(), cycle=self._current_id(), state=self.state, previous=previous)
        )

    def _arm_deadline(self) -> None:
        self._deadline.cancel()
        self._deadline_gen += 1
        seconds = self.deadlines.for_state(self.state)
        if seconds is None:
            return
        gen, state = self._deadline_gen, self.state
        self._deadline.arm(seconds, lambda: self._deadline_passed(gen, state, seconds))

    def _deadline_passed(self, gen: int, state: str, seconds: float) -> None:
        with self._lock:
            if gen != self._deadline_gen or self.state != state:
                return
            if state == "stopped":
                self._fault_now(
                    "STOP_UNCONFIRMED",
                    "deadline",
                    f"the board did not confirm STOP within {seconds:g} s: motion may go on",
                    "press the table's emergency stop now, then check the link to the board "
                    "(mjtable diag)",
                    phase=state,
                )
            else:
                self._fault_now(
                    "DEADLINE",
                    "deadline",
                    f"the board did not finish {state} within {seconds:g} s",
                    "watch the table: a motor may be blocked or a sensor not reporting; "
                    "check the board's sensors with mjtable diag",
                    phase=state,
                )
            self._check_audit()
        self._flush()

    def _send(self, message: m.Message) -> None:
        if self._link is None:
            raise RuntimeError("the controller has no board link attached")
        self._link.send(message)

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

    def close(self) -> None:
        with self._lock:
            self._deadline_gen += 1
        self._deadline.close()
