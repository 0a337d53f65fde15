"""What ends a cycle badly: the state's deadline, a fault, an unwritable audit log.

Every state may have a deadline (its row in states.py names it); ``_fire`` moves the machine
and arms the new state's deadline. A fault from the board, a refusal, a deadline passed, the
link lost past a deadline or the board rebooted all end the same way (``_fault_now``): STOP is
sent when the board may be moving and READ_STATUS asks where the fault left the sets, the
machine enters ``fault`` with plain words on what happened and what to do, the cycle in
progress is closed in the audit log, and nothing is published for it. The words are the
catalogue's (faults.py) or the protocol's tables.
"""

from __future__ import annotations

import logging

import protocol.codes as codes
import protocol.messages as m
from controller.cycle.core import CycleCore, ImpossibleCommand
from controller.cycle.deadline import DeadlineName
from controller.cycle.faults import (
    AUDIT_LOG,
    CAUSE_STILL_THERE,
    CLEAR_CUT_SHORT,
    CLEAR_REFUSED,
    IMPOSSIBLE,
    LINK_DOWN,
    NOT_CLEARED,
    REFUSED,
    FaultKind,
    board_fault_words,
    refusal_words,
)
from controller.cycle.reports import FaultEvent, FaultSource, PhaseEvent, utc_now
from controller.cycle.states import (
    FAULT,
    MOTION_STATES,
    RECOVERING,
    ROWS,
    STOPPED,
    WAITING,
)

log = logging.getLogger("mjtable.controller")


class CycleGuards(CycleCore):
    """Deadlines and faults; ``CycleController`` is the class to use."""

    # ------------------------------------------------------------ the machine and deadlines

    def _fire(self, trigger: str) -> None:
        previous = self.state
        getattr(self._model, trigger)()
        self._arm_deadline()
        self._queue(
            PhaseEvent(at=utc_now(), cycle=self._current_id(), state=self.state, previous=previous)
        )
        if self._clear_press is not None and self.state != RECOVERING:
            # recovering ended before the board answered the press (a fault, STOP)
            press, self._clear_press = self._clear_press, None
            self._answer_clear(press, False, self._clear_cut_short())

    def _clear_cut_short(self) -> str:
        fault = self._fault
        if self.state == FAULT and fault is not None:
            return CLEAR_CUT_SHORT.format(
                what=f"{fault.code} struck ({fault.message})", advice=fault.advice
            )
        what = "STOP was pressed" if self.state == STOPPED else f"the table went {self.state}"
        return CLEAR_CUT_SHORT.format(what=what, advice="press CLEAR FAULT to start over")

    def _arm_deadline(self, name: DeadlineName | None = None) -> None:
        """Arm the state's deadline (``name``: another one, for a step of the state)."""
        self._deadline.cancel()
        self._deadline_gen += 1
        name = name or ROWS[self.state].deadline
        if name is None:
            return
        seconds = self._seconds(name)
        if seconds is None:
            # a motion is never sent to a board that reported no deadlines (_send refuses it)
            return
        gen, state = self._deadline_gen, self.state
        self._deadline.arm(seconds, lambda: self._deadline_passed(gen, state, seconds))

    def _cancel_deadline(self) -> None:
        """The state's deadline no longer applies (what it waited for has happened)."""
        self._deadline_gen += 1
        self._deadline.cancel()

    def _deadline_passed(self, gen: int, state: str, seconds: float) -> None:
        with self._lock:
            if gen != self._deadline_gen or self.state != state:
                return
            if not self._link_up and state in WAITING:
                # the board was left to work alone and the link never came back in time
                self._declare(LINK_DOWN, phase=state, reason=self._link_reason)
            else:
                self._declare(ROWS[state].overdue, phase=state, state=state, seconds=seconds)
            self._check_audit()
        self._flush()

    # ------------------------------------------------------------ faults

    def _declare(self, kind: FaultKind, *, phase: str | None = None, **details: object) -> None:
        """Fault the table with one of the controller's own faults (faults.py)."""
        self._fault_now(kind.code, kind.source, kind.message(**details), kind.advice, phase=phase)

    def _fault_now(
        self,
        code: str,
        source: FaultSource,
        message: str,
        advice: str,
        *,
        phase: str | None = None,
    ) -> None:
        if self.state == FAULT:
            # Already in fault: the table stays there, but nothing goes unrecorded.
            extra = {"code": code, "source": source, "message": message, "advice": advice}
            self._record("fault", {**extra, "while_in_fault": True}, cycle=self._current_id())
            log.error("FAULT %s (while in fault): %s — check: %s", code, message, advice)
            return
        in_motion = ROWS[self.state].moving
        if self._link_up:
            try:
                if in_motion:
                    self._send(m.Stop())
                self._ask_status()  # where the fault left the sets
            except Exception as exc:  # the link may be the very thing that failed
                log.warning("could not send STOP and READ_STATUS: %s", exc)
        phase = phase or (self.state if in_motion else None)
        self._fault = FaultEvent(
            at=utc_now(),
            cycle=self._current_id(),
            code=code,
            source=source,
            message=message,
            advice=advice,
            phase=phase,
        )
        self._record("fault", self._fault.model_dump(mode="json"), cycle=self._current_id())
        self._abort(f"{code}: {message}")
        self._fire("fail")
        self._queue(self._fault)
        log.error("FAULT %s: %s — check: %s", code, message, advice)

    def _impossible(self, exc: ImpossibleCommand) -> None:
        """A command the board's report rules out was held back: fault the table (a bug)."""
        log.error("held back %s: %s", exc.message.NAME, exc.why)
        view = self._view
        places = (
            ", ".join(f"set {s} {place}" for s, place in view.words().items())
            if view is not None
            else "nothing yet"
        )
        self._declare(IMPOSSIBLE, command=exc.message.NAME, why=exc.why, places=places)

    def _check_audit(self) -> None:
        """After each entry point: a record that could not be written faults the table."""
        if self._audit_error is None or self.state == FAULT:
            return
        self._declare(AUDIT_LOG, error=self._audit_error)

    # ------------------------------------------------------------ the board's faults

    def _on_fault(self, event: m.Fault) -> None:
        if self._view is not None:
            self._view = self._view.after_fault(event)  # latched until CLEAR_FAULT
        name, message, advice = board_fault_words(
            event.code, event.subsystem, event.phase, event.detail
        )
        phase = codes.phase_name(event.phase) if event.phase else None
        self._fault_now(name, "board", message, advice, phase=phase)

    def _on_refused(self, event: m.Refused) -> None:
        name, text, advice = refusal_words(event.reason, event.detail)
        command = m.message_name(event.command)
        if self.state == RECOVERING and event.command == m.ClearFault.TYPE:
            self._clear_refused(event.reason, name, text, advice)
            return
        if self.state not in MOTION_STATES:
            log.info("board refused %s (%s) in state %s", command, name, self.state)
            return
        self._fault_now(name, "board", REFUSED.format(command=command, text=text), advice)

    def _clear_refused(self, reason: int, name: str, text: str, advice: str) -> None:
        """CLEAR_FAULT refused (its cause still there, the emergency stop held...): the table
        stays in fault, the fault unchanged but for its ``clear_refused`` count, and the press
        is answered refused with the cause in words. Each refused press is one ``button``
        record of a fixed size (``accepted: false``, the refusal's name, the count)."""
        press, self._clear_press = self._clear_press, None
        original = self._fault
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
            self._record("fault", fault.model_dump(mode="json"))
        self._fault = fault
        self._fire("fail")
        if original is None:
            self._queue(fault)
        extra = {"refusal": name, "fault": fault.code, "clear_refused": fault.clear_refused}
        self._answer_clear(press, False, message, extra)
