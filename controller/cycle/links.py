"""The link to the board: it comes up, goes down, finds the board restarted.

Every HELLO_REPLY carries the board's status: each (re)connect replaces the view of where the
sets are (reconcile.py). What the link's loss and return do is the state's row (states.py):

- at rest (``AT_REST``) nothing moves, so a cable pulled and plugged back costs no fault: the
  loss and the return are logged and announced, and the table carries on from the board's
  report (a board that reports a motion is stopped first);
- in a step the board works on alone (``returning = "wait"``: the motions, the dice, the
  recovery procedure) the loss costs no fault either: the board goes on, its events follow in
  order once the link is back, and the state's deadline bounds the wait (past it: LINK_DOWN).
  The board goes on for its own grace only: past it, it stops the motion and its HOST_LOST
  follows the motion's events;
- in fault, stopped or recovering, the link's return sends STOP (the board may still run what
  it was last told) and READ_STATUS; elsewhere the loss faults the table (LINK_DOWN);
- a board restart (a new session) during a step faults it (BOARD_REBOOTED);
- a board whose firmware build is not the installed one (``firmware``, compared at each link
  up) faults the table with the line that says what to flash (FIRMWARE_MISMATCH), and nothing
  is dealt nor cleared until a board with the installed build links up; with
  ``firmware_mismatch = "warn"`` the line is only logged.
"""

from __future__ import annotations

import logging
import time

import protocol.codes as codes
import protocol.messages as m
from controller.cycle.core import (
    FirmwarePolicy,
    InstalledBuild,
)
from controller.cycle.faults import BOARD_REBOOTED, FIRMWARE_MISMATCH, LINK_DOWN, PROTOCOL_MISMATCH
from controller.cycle.guards import Guards
from controller.cycle.phases import Phases
from controller.cycle.places import BoardView
from controller.cycle.plumbing import Plumbing
from controller.cycle.reconcile import Reconciler
from controller.cycle.reports import LinkEvent, utc_now
from controller.cycle.states import (
    AT_REST,
    DEALT,
    FAULT,
    OFFLINE,
    READY,
    RECOVERING,
    STOPPED,
    WAITING,
)
from drivers.board import PortDown, PortUp
from protocol.events import LinkDown, LinkUp, PeerRebooted, ProtocolMismatch

log = logging.getLogger("mjtable.controller")


class LinkWatch:
    """The link's events, and the board's firmware build against the installed one."""

    def __init__(
        self,
        base: Plumbing,
        phases: Phases,
        guards: Guards,
        reconcile: Reconciler,
    ) -> None:
        self._state, self._board, self._audit, self._outbox = base
        self._phases = phases
        self._guards = guards
        self._reconcile = reconcile
        #: the installed firmware, to compare each board with (None: not compared), and what
        #: a mismatch does: "refuse" (nothing is dealt) or "warn" (logged)
        self.firmware: InstalledBuild | None = None
        self.firmware_mismatch: FirmwarePolicy = "refuse"
        #: the board that linked up last runs another build (refuse): the line that says so;
        #: and whether the installed build is still being made to compare
        self.firmware_problem: str | None = None
        self.firmware_pending = False

    def on_port_down(self, event: PortDown) -> None:
        # The port can come back before the link times out (a glitch): the protocol
        # engine, which keeps ticking while the port is closed, says when the link is
        # down. Logged once per loss, not at every reopening attempt. A port down while the
        # engine is up (another program at the line) is the link down for everyone: the
        # status, the events, the audit log.
        board = self._board
        was = board.connected
        if board.port_ok:
            log.warning("%s", event.reason)
        board.port_ok = False
        if was:
            self._link_changed(up=False, reason=event.reason)

    def on_port_up(self, event: PortUp) -> None:
        board = self._board
        was = board.connected
        board.port_ok = True
        log.info("port %s open", event.url)
        if not was and board.connected:  # the engine stayed up while the port was not ours
            self._link_changed(up=True, reason=f"the port {event.url} is this controller's again")

    def _link_changed(self, *, up: bool, reason: str, gap: str = "") -> None:
        """The link as everyone sees it (the engine up and the port this controller's alone)
        changed: the audit log and the events say so."""
        if up:
            self._audit.record("link_up", {"gap": gap.strip()} if gap else {})
            info = self._board.info()
            self._outbox.queue(LinkEvent(at=utc_now(), up=True, reason=reason, board=info))
        else:
            self._audit.record("link_down", {"reason": reason})
            self._outbox.queue(LinkEvent(at=utc_now(), up=False, reason=reason))

    def on_mismatch(self, event: ProtocolMismatch) -> None:
        self._guards.declare(PROTOCOL_MISMATCH, board=event.peer_major, controller=m.PROTO_MAJOR)

    def on_link_up(self, event: LinkUp) -> None:
        board, reconcile = self._board, self._reconcile
        hello = event.hello_reply
        gap = ""
        if board.lost_at is not None:
            gap = f" after a gap of {time.monotonic() - board.lost_at:.1f} s"
            board.lost_at = None
        board.hello = hello
        board.up = True
        self._audit.record("hello", board.info() or {})
        if board.port_ok:  # (else it is up once the port is this controller's again)
            self._link_changed(up=True, reason=f"board answered HELLO{gap}", gap=gap)
        reconcile.adopt(BoardView.of(hello.status), "hello")
        mismatch = self._judge_firmware(hello)
        state = self._state.state
        if state == OFFLINE:
            # First contact in this process: the board's report says where the sets are
            # (whatever a previous controller left); a board still moving is stopped.
            self._phases.fire("link_up")
            if mismatch is not None:
                reconcile.stop_stray_motion()
                self._guards.declare(FIRMWARE_MISMATCH, **mismatch)
                return
            reconcile.reconcile_at_rest()
        elif state in WAITING:
            pass  # the board worked on alone: its events follow, in order
        elif state in (FAULT, STOPPED, RECOVERING):
            # The link came back after a loss: the board may still be running what it was
            # told (and the engine resends what was not acknowledged). Stop it, then ask.
            board.send(m.Stop())
            board.ask_status()
        elif mismatch is not None:
            reconcile.stop_stray_motion()
        else:
            reconcile.reconcile_at_rest()
        if mismatch is not None:
            self._guards.declare(FIRMWARE_MISMATCH, **mismatch)

    def _judge_firmware(self, hello: m.HelloReply) -> dict[str, str] | None:
        """The board's build against the installed firmware's: under "refuse", the details of
        FIRMWARE_MISMATCH (nothing is dealt nor cleared until another board links up); under
        "warn", None and the line logged; None when they match or nothing is compared."""
        self.firmware_problem = None
        self.firmware_pending = False
        check = self.firmware
        if check is None:
            return None
        expected = check.expected()
        build = hello.status.build_hash
        if expected.matches(build):
            return None
        if expected.pending:
            self.firmware_pending = True  # compared once the build is made (firmware_known)
            return None
        details = {
            "board": f"{hello.fw_major}.{hello.fw_minor}.{hello.fw_patch}",
            "board_build": "an unknown build: no manifest on the board"
            if build == codes.BUILD_UNKNOWN
            else f"build {build}",
            "version": expected.version,
            "build": expected.build,
            "flash": expected.flash,
        }
        line = FIRMWARE_MISMATCH.message(**details)
        if self.firmware_mismatch == "warn":
            log.warning('%s; dealing all the same (board.firmware_mismatch = "warn")', line)
            return None
        self.firmware_problem = line
        return details

    def firmware_known(self) -> None:
        """The installed firmware's build is made: the board that is linked up is compared
        with it now."""
        hello = self._board.hello
        if self.firmware_pending and self._board.up and hello is not None:
            mismatch = self._judge_firmware(hello)
            if mismatch is not None:
                self._reconcile.stop_stray_motion()
                self._guards.declare(FIRMWARE_MISMATCH, **mismatch)
        else:
            self.firmware_pending = False

    def on_link_down(self, event: LinkDown) -> None:
        board = self._board
        reason = event.reason
        was_up, was = board.up, board.connected
        board.up = False
        board.down_reason = reason
        if was_up:
            board.lost_at = time.monotonic()
        if was:
            self._link_changed(up=False, reason=reason)
        state = self._state.state
        if state in (OFFLINE, FAULT):
            return
        if state in AT_REST:
            # Nothing is moving: a cable pulled and plugged back, or a board restart,
            # costs no fault. Requests are refused until the board answers again.
            log.warning("the link to the board is down (%s); the table waits for it", reason)
            return
        if state in WAITING:
            # The board works on alone; its events follow once the link is back, within
            # the state's deadline (past it: LINK_DOWN).
            log.warning("the link to the board is down (%s) while %s", reason, state)
            return
        self._guards.declare(LINK_DOWN, reason=reason)

    def on_reboot(self, event: PeerRebooted) -> None:
        state = self._state
        self._audit.record(
            "board_rebooted", {"old_session": event.old_session, "new_session": event.new_session}
        )
        # Everything unanswered went with the old session; the HELLO_REPLY that follows
        # says where the restarted board has the sets.
        self._board.reports_due = 0
        now = state.state
        if now == OFFLINE:
            state.ready = None
            return
        if now == STOPPED:
            # The restart stopped the motors: STOP needs no further confirmation.
            self._phases.cancel()
        fault = state.fault
        if now == FAULT and fault is not None and fault.code == LINK_DOWN.code:
            # The link went down because the board restarted: say so precisely.
            precise = state.fault = fault.model_copy(
                update={
                    "code": BOARD_REBOOTED.code,
                    "source": BOARD_REBOOTED.source,
                    "message": BOARD_REBOOTED.message(),
                    "advice": BOARD_REBOOTED.advice,
                }
            )
            self._audit.record("fault", precise.model_dump(mode="json"))
            self._outbox.queue(precise)
            return
        if now in AT_REST:
            # A cycle ready is given up (the manifest read may no longer hold); the next
            # SHUFFLE goes by the restarted board's report. A published deal stays published.
            self._guards.abort("the board restarted before the walls were dealt")
            if now in (READY, DEALT):
                self._phases.fire("board_reset")
            log.warning(
                "the board restarted while the table was at rest: %s", BOARD_REBOOTED.message()
            )
            return
        self._guards.declare(BOARD_REBOOTED)
