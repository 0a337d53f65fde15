"""What ends a cycle badly: a deadline passed, a fault, an unwritable audit log.

A fault from the board, a refusal, a deadline passed, the link lost past a deadline or the board
rebooted all end the same way (``fault_now``): STOP is sent when the board may be moving and
READ_STATUS asks where the fault left the sets, the machine enters ``fault`` with plain words on
what happened and what to do, the cycle in progress is closed in the audit log (``abort``), and
nothing is published for it. The words are the catalogue's (faults.py) or the protocol's tables.
"""

from __future__ import annotations

import logging

import protocol.codes as codes
import protocol.messages as m
from controller.cycle.core import ImpossibleCommand, Presses
from controller.cycle.faults import (
    AUDIT_LOG,
    CAUSE_STILL_THERE,
    CLEAR_REFUSED,
    IMPOSSIBLE,
    LINK_DOWN,
    NOT_CLEARED,
    REFUSED,
    FaultKind,
    board_fault_words,
    refusal_words,
)
from controller.cycle.phases import Phases
from controller.cycle.plumbing import Plumbing
from controller.cycle.reports import FaultEvent, FaultSource, utc_now
from controller.cycle.states import FAULT, RECOVERING, ROWS, STEP_STATES, WAITING

log = logging.getLogger("mjtable.controller")


class Guards:
    """Faults, deadlines passed and the audit log's failure."""

    def __init__(
        self,
        base: Plumbing,
        presses: Presses,
        phases: Phases,
    ) -> None:
        self._state, self._board, self._audit, self._outbox = base
        self._presses = presses
        self._phases = phases

    def abort(self, reason: str) -> None:
        """Record that the cycle in progress (if any) will publish nothing."""
        state = self._state
        cycle = state.current()
        if cycle is not None:
            self._audit.record("cycle_aborted", {"reason": reason}, cycle=cycle.cycle_id)
        state.cycle = None
        state.ready = None

    def overdue(self, state: str, seconds: float) -> None:
        """The deadline of ``state`` (still the table's) passed."""
        if not self._board.up and state in WAITING:
            # the board was left to work alone and the link never came back in time
            self.declare(LINK_DOWN, phase=state, reason=self._board.down_reason)
        else:
            self.declare(ROWS[state].overdue, phase=state, state=state, seconds=seconds)

    # ------------------------------------------------------------ faults

    def declare(self, kind: FaultKind, *, phase: str | None = None, **details: object) -> None:
        """Fault the table with one of the controller's own faults (faults.py)."""
        self.fault_now(kind.code, kind.source, kind.message(**details), kind.advice, phase=phase)

    def fault_now(
        self,
        code: str,
        source: FaultSource,
        message: str,
        advice: str,
        *,
        phase: str | None = None,
    ) -> None:
        state, board = self._state, self._board
        if state.state == FAULT:
            # Already in fault: the table stays there, but nothing goes unrecorded.
            extra = {"code": code, "source": source, "message": message, "advice": advice}
            self._audit.record("fault", {**extra, "while_in_fault": True}, cycle=state.current_id())
            log.error("FAULT %s (while in fault): %s — check: %s", code, message, advice)
            return
        stoppable = ROWS[state.state].stoppable
        if board.up:
            try:
                if stoppable:
                    board.send(m.Stop())
                board.ask_status()  # where the fault left the sets
            except Exception as exc:  # the link may be the very thing that failed
                log.warning("could not send STOP and READ_STATUS: %s", exc)
        phase = phase or (state.state if stoppable else None)
        fault = state.fault = FaultEvent(
            at=utc_now(),
            cycle=state.current_id(),
            code=code,
            source=source,
            message=message,
            advice=advice,
            phase=phase,
        )
        self._audit.record("fault", fault.model_dump(mode="json"), cycle=state.current_id())
        self.abort(f"{code}: {message}")
        self._phases.fire("fail")
        self._outbox.queue(fault)
        log.error("FAULT %s: %s — check: %s", code, message, advice)

    def impossible(self, exc: ImpossibleCommand) -> None:
        """A command the board's report rules out was held back: fault the table (a bug)."""
        log.error("held back %s: %s", exc.message.NAME, exc.why)
        view = self._board.view
        places = (
            ", ".join(f"set {s} {place}" for s, place in view.words().items())
            if view is not None
            else "nothing yet"
        )
        self.declare(IMPOSSIBLE, command=exc.message.NAME, why=exc.why, places=places)

    def check_audit(self) -> None:
        """After each entry point: a record that could not be written faults the table."""
        error = self._audit.error
        if error is None or self._state.state == FAULT:
            return
        self.declare(AUDIT_LOG, error=error)

    # ------------------------------------------------------------ the board's faults

    def on_fault(self, event: m.Fault) -> None:
        board = self._board
        if board.view is not None:
            board.view = board.view.after_fault(event)  # latched until CLEAR_FAULT
        name, message, advice = board_fault_words(
            event.code, event.subsystem, event.phase, event.detail
        )
        phase = codes.phase_name(event.phase) if event.phase else None
        self.fault_now(name, "board", message, advice, phase=phase)

    def on_refused(self, event: m.Refused) -> None:
        name, text, advice = refusal_words(event.reason, event.detail)
        command = m.message_name(event.command)
        state = self._state.state
        if state == RECOVERING and event.command == m.ClearFault.TYPE:
            self._clear_refused(event.reason, name, text, advice)
            return
        if state not in STEP_STATES:
            log.info("board refused %s (%s) in state %s", command, name, state)
            return
        self.fault_now(name, "board", REFUSED.format(command=command, text=text), advice)

    def _clear_refused(self, reason: int, name: str, text: str, advice: str) -> None:
        """CLEAR_FAULT refused (its cause still there, the emergency stop held...): the table
        stays in fault, the fault unchanged but for its ``clear_refused`` count, and the press
        is answered refused with the cause in words. Each refused press is one ``button``
        record of a fixed size (``accepted: false``, the refusal's name, the count)."""
        state = self._state
        press, state.clear_press = state.clear_press, None
        original = state.fault
        if original is not None:
            fault = original.model_copy(update={"clear_refused": original.clear_refused + 1})
            why = CAUSE_STILL_THERE if reason == codes.REFUSE_CAUSE_PRESENT else text
            # the fault's own advice names its cause; another refusal's advice is the refusal's
            todo = original.advice if reason == codes.REFUSE_CAUSE_PRESENT else advice
            message = NOT_CLEARED.format(
                why=why, code=original.code, message=original.message, advice=todo
            )
        else:  # no fault stood (the table was stopped): the refusal is the fault
            fault = FaultEvent(
                at=utc_now(),
                code=name,
                source="board",
                message=CLEAR_REFUSED.format(text=text),
                advice=advice,
                phase=None,
                clear_refused=1,
            )
            message = f"{fault.message}; {advice}"
            self._audit.record("fault", fault.model_dump(mode="json"))
        state.fault = fault
        self._phases.fire("fail")
        if original is None:
            self._outbox.queue(fault)
        extra = {"refusal": name, "fault": fault.code, "clear_refused": fault.clear_refused}
        self._presses.answer_clear(press, False, message, extra)
