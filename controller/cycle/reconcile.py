"""The board's report against what the host believed, and the recovery procedure.

The board owns the physical truth; the host reconciles. Every report (HELLO_REPLY's status at
each (re)connect, BOARD_STATUS after each READ_STATUS) replaces the controller's view of where
the sets are, and is recorded (``board_status``) with what the host believed just before: the
audit log keeps both, as history, and never decides where a set is.

What a report decides, by the state the table is in:

- at rest (``idle``, ``ready``, ``dealt``): a board that reports a fault puts the table in
  ``fault`` with the board's words; a board that lost track of a set (``UNKNOWN``: its power
  went while it moved it) puts it in ``fault`` with ``SETS_UNKNOWN``; walls ``ready`` that the
  board no longer reports built underneath are given up (``board_reset``: back to ``idle``);
  a board that reports a motion nobody asked for is stopped and asked again;
- in ``fault``: a lost set turns the fault into ``SETS_UNKNOWN`` (its advice is the one to
  follow: look for tiles stuck half way, then CLEAR FAULT);
- in ``recovering`` (CLEAR_FAULT confirmed): the table goes back to ``idle``, or runs the
  recovery procedure (``restoring``) when a set is lost: COLLECT unless a set the board knows
  is up on the table, SHUFFLE of each lost set, READ_STATUS, then ``idle``.

CLEAR FAULT is sent from here too (``start_clear``): what follows it is this part's to follow.
SHUFFLE pressed when stopped sends it the same way, and its shuffle starts once the table is
idle again (``then``); a clear that ends in a fault starts nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import protocol.codes as codes
import protocol.messages as m
from controller.cycle.core import CARRY_ON, Presses
from controller.cycle.faults import CLEAR_SENT, CLEARED, SETS_UNKNOWN, board_fault_words
from controller.cycle.guards import Guards
from controller.cycle.phases import Phases
from controller.cycle.places import (
    PLACE_BUILT,
    SETS,
    BoardView,
    describe_recovery,
    lost_sets,
    place_word,
    recovery_steps,
)
from controller.cycle.plumbing import Plumbing
from controller.cycle.reports import FaultClearedEvent, utc_now
from controller.cycle.states import DEALT, FAULT, IDLE, READY, RECOVERING, RESTORING

log = logging.getLogger("mjtable.controller")


class Reconciler:
    """The board's reports, CLEAR FAULT and the recovery procedure."""

    def __init__(
        self,
        base: Plumbing,
        presses: Presses,
        phases: Phases,
        guards: Guards,
    ) -> None:
        self._state, self._board, self._audit, self._outbox = base
        self._presses = presses
        self._phases = phases
        self._guards = guards
        #: RECOVERING: the board confirmed CLEAR_FAULT (its report is awaited now)
        self._clear_done = False
        #: RESTORING: the steps of the recovery procedure still to send, and the one the
        #: board works on (None: its report is awaited)
        self._restore_steps: list[m.Message] = []
        self._restore_step: m.Message | None = None
        #: what follows the table idle again (SHUFFLE pressed when stopped: the shuffle)
        self._then: Callable[[], None] | None = None

    # ------------------------------------------------------------ taking a report

    def _believed_words(self) -> dict[str, str | None]:
        """What the host believed of each set: its view, else the audit log's last word."""
        board = self._board
        if board.view is not None:
            return dict(board.view.words())
        return {s: None if p is None else place_word(p) for s, p in board.believed.items()}

    def adopt(self, view: BoardView, source: str) -> None:
        """The board's report replaces the view; recorded with what the host believed."""
        board = self._board
        believed = self._believed_words()
        expected = None if board.last_motions is None else board.last_motions + board.motions_sent
        report = view.record()
        agrees = all(b is None or b == report["places"][s] for s, b in believed.items())
        data: dict[str, Any] = {
            "source": source,
            "board": report,
            "host": {"places": believed, "motions": expected},
            "agrees": agrees,
        }
        if expected is not None:
            # > 0: motions begun that the host did not ask for (a board that went on alone,
            # or a service that stopped since); < 0: commands not begun yet when it reported
            gap = (view.motions - expected) & 0xFFFFFFFF
            data["motions_difference"] = gap - (1 << 32) if gap >= 1 << 31 else gap
        self._audit.record("board_status", data)
        if not agrees:
            log.warning(
                "the board reports %s, the host believed %s: the board's report stands",
                report["places"],
                {s: b for s, b in believed.items() if b is not None},
            )
        board.view = view
        board.last_motions, board.motions_sent = view.motions, 0
        board.believed = {s: p for s, p in zip(SETS, view.places, strict=True)}

    def on_board_status(self, event: m.BoardStatus) -> None:
        board = self._board
        board.reports_due = max(0, board.reports_due - 1)
        self.adopt(BoardView.of(event), "read_status")
        if board.reports_due:
            return  # a later answer describes the board after this one
        state = self._state.state
        if state == RECOVERING and self._clear_done:
            self._after_clear()
        elif state == RESTORING and self._restore_step is None and not self._restore_steps:
            self._after_restore()
        elif state == FAULT:
            self._refine_fault()
        elif state in (IDLE, READY, DEALT):
            self.reconcile_at_rest()

    # ------------------------------------------------------------ what a report decides

    def stop_stray_motion(self) -> bool:
        """A board that reports a motion nobody waits for is stopped, and asked again."""
        view = self._board.view
        if view is None or not view.moving:
            return False
        log.warning("the board reports %s: stopping it", codes.state_name(view.state))
        self._board.send(m.Stop())
        self._board.ask_status()
        return True

    def _declare_trouble(self, view: BoardView) -> bool:
        """A report of a fault latched or a set lost: the table faults, saying which. Whether
        it did."""
        if view.faulted:
            self._declare_board_fault(view)
        elif lost_sets(view):
            self._declare_lost(view)
        else:
            return False
        return True

    def reconcile_at_rest(self) -> None:
        """At rest, with a report that nothing follows: act on what it says."""
        view = self._board.view
        if view is None or self.stop_stray_motion() or self._declare_trouble(view):
            return
        state = self._state
        ready = state.ready
        if state.state == READY and ready is not None and view.place(ready.tile_set) != PLACE_BUILT:
            tile_set = ready.tile_set
            self._guards.abort(
                f"the board no longer reports set {tile_set}'s walls built underneath"
            )
            self._phases.fire("board_reset")

    def _declare_board_fault(self, view: BoardView) -> None:
        """The board reports a fault latched (found at a (re)connect or after a clear)."""
        hello = self._board.hello
        name, message, advice = board_fault_words(
            view.fault, view.subsystem, view.phase, view.detail, hello.serial if hello else ""
        )
        phase = codes.phase_name(view.phase) if view.phase else None
        self._guards.fault_now(name, "board", message, advice, phase=phase)

    def _lost_words(self, view: BoardView) -> tuple[str, str]:
        sets = " and ".join(f"set {s}" for s in lost_sets(view))
        return SETS_UNKNOWN.message(sets=sets, plan=describe_recovery(view)), SETS_UNKNOWN.advice

    def _declare_lost(self, view: BoardView) -> None:
        message, advice = self._lost_words(view)
        self._guards.fault_now(SETS_UNKNOWN.code, SETS_UNKNOWN.source, message, advice)

    def _refine_fault(self) -> None:
        """In fault, the report shows a lost set: the fault says so, and its advice is the
        one to follow (the fault that struck first is in the log already)."""
        state = self._state
        view, fault = self._board.view, state.fault
        if view is None or fault is None or not lost_sets(view):
            return
        message, advice = self._lost_words(view)
        if fault.code == SETS_UNKNOWN.code and fault.message == message:
            return
        refined = state.fault = fault.model_copy(
            update={
                "at": utc_now(),
                "code": SETS_UNKNOWN.code,
                "source": SETS_UNKNOWN.source,
                "message": message,
                "advice": advice,
            }
        )
        self._audit.record("fault", refined.model_dump(mode="json"))
        self._outbox.queue(refined)

    # ------------------------------------------------------------ CLEAR FAULT and after

    def start_clear(self, then: Callable[[], None] | None = None) -> str:
        """CLEAR FAULT: sent to the board, which answers whether the cause is gone. ``then``
        is called once the table is idle again (recovered or restored), not when the clear
        ends otherwise (a fault, STOP)."""
        self._clear_done = False
        self._then = then
        self._phases.fire("clear")
        self._board.send(m.ClearFault())
        return CLEAR_SENT

    def clear_confirmed(self) -> None:
        """DONE of CLEAR_FAULT: the press is answered (cleared); ask where the fault left the
        sets before going on."""
        board, state = self._board, self._state
        if board.view is not None:
            board.view = board.view.after_done(m.ClearFault.TYPE)
        self._clear_done = True
        press, state.clear_press = state.clear_press, None
        self._presses.answer_clear(press, True, CLEARED)
        board.ask_status()

    def _after_clear(self) -> None:
        """The report after CLEAR_FAULT: idle, or the recovery procedure for a lost set."""
        view = self._board.view
        if view is None or self.stop_stray_motion():
            return
        self._clear_done = False
        if view.faulted:
            self._declare_board_fault(view)
        elif lost_sets(view):
            self._start_restore(view)
        else:
            self._recovered("recovered")

    def _start_restore(self, view: BoardView) -> None:
        log.warning("the board lost track of %s: %s", lost_sets(view), describe_recovery(view))
        self._restore_steps = recovery_steps(view)
        self._restore_step = None
        self._phases.fire("restore")
        self._next_restore_step()

    def _next_restore_step(self) -> None:
        if not self._restore_steps:
            self._restore_step = None
            self._phases.arm("clear")
            self._board.ask_status()  # has every set been found?
            return
        step = self._restore_steps.pop(0)
        self._restore_step = step
        self._phases.arm("collect" if isinstance(step, m.Collect) else "shuffle")
        self._board.send(step)

    def restore_step_done(self, event: m.Done) -> None:
        step, board = self._restore_step, self._board
        if step is None or event.command != step.TYPE or board.view is None:
            return
        tile_set = SETS[step.tile_set & 1] if isinstance(step, m.Shuffle) else None
        board.view = board.view.after_done(event.command, tile_set)
        self._next_restore_step()

    def _after_restore(self) -> None:
        view = self._board.view
        # a set still lost: the procedure did not find it, the table faults to look again
        if view is None or self.stop_stray_motion() or self._declare_trouble(view):
            return
        self._recovered("restored")

    def _recovered(self, trigger: str) -> None:
        state = self._state
        cleared = state.fault.code if state.fault is not None else "STOPPED"
        state.fault = None
        state.cycle = None
        then, self._then = self._then, None
        self._phases.fire(trigger)
        self._audit.record("fault_cleared", {"code": cleared, **(CARRY_ON if then else {})})
        self._outbox.queue(FaultClearedEvent(at=utc_now(), state=state.state))
        if then is not None:
            then()
