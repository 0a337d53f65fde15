"""A technician's diagnosis through the service: the board's sensors, and its motor tests.

While the service runs, the board's port is the service's alone (drivers/portlock.py), so
``mjtable diag`` asks the service (the API's ``diag``, full socket only) instead of opening
the port. One diagnosis at a time; its progress goes out as ``diag`` events, each carrying
the id the request was answered with:

- the board's sensors, whatever the table is doing (reading them moves nothing): SENSORS is
  sent, and its answer is the step ``board`` (the board's identity from its HELLO, where its
  sets are as it last reported them, every sensor);
- with ``motors``, only with the table at rest (``idle``, ``ready``, ``dealt``): the table
  enters ``testing``, where every button but STOP is refused, so nothing else moves; MOTOR_TEST
  runs on each motor in turn, each result a step ``motor`` with the verdict in words
  (diagnosis.py); after the last one the table goes to ``idle`` and asks the board where its
  sets are. Walls ready to deal are given up when the tests start (the disc, the head, the
  chain and the lifts turn under them): the next SHUFFLE reads them again. Each motor's test
  is bounded by its time and ``deadlines.test`` (past it: DEADLINE); STOP, a fault, the link
  lost (LINK_DOWN: the board is stopped once it is back) or the board's restart ends the
  tests;
- the step ``done`` ends every diagnosis, with how it went in words.

Every motor test is in the audit log (``motor_tests`` when they start, ``motor_test`` for each
result), as every press of a button is.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import protocol.codes as codes
import protocol.messages as m
from controller.cycle import diagnosis
from controller.cycle.guards import Guards
from controller.cycle.phases import Phases
from controller.cycle.places import blocked
from controller.cycle.plumbing import Plumbing
from controller.cycle.reports import DiagEvent, DiagStarted, Source, utc_now
from controller.cycle.states import AUDIT_UNWRITABLE, FAULT, REPORT_DUE, STOPPED, TEST_FROM, TESTING

log = logging.getLogger("mjtable.controller")

#: A board that has not answered SENSORS within this long is given up on at the next request.
SENSORS_STALE_S = 10.0


@dataclass
class Diagnosis:
    """The diagnosis under way."""

    test: str
    ms: int
    source: Source
    started: float = field(default_factory=time.monotonic)
    #: the board's SENSOR_DATA is awaited
    sensors_due: bool = True
    #: motors still to test, in order, and the one under test (-1: none)
    left: list[int] = field(default_factory=list)
    motor: int = -1
    tested: int = 0
    not_ok: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    @property
    def motors(self) -> bool:
        return self.motor >= 0 or bool(self.left)


class BoardTests:
    """The ``diag`` request: the board's sensors, and its motor tests."""

    def __init__(
        self,
        base: Plumbing,
        phases: Phases,
        guards: Guards,
    ) -> None:
        self._state, self._board, self._audit, self._outbox = base
        self._phases = phases
        self._guards = guards
        self._diag: Diagnosis | None = None
        self._diag_count = 0

    # ------------------------------------------------------------ the request

    def diagnose(self, motors: bool, ms: int, source: Source) -> DiagStarted:
        """Read the board's sensors and, with ``motors`` and the table at rest, test each motor
        for ``ms``; ``diag`` events follow."""
        refusal = self._refusal(motors, ms)
        test = None
        if refusal is None:
            test = self._begin(motors, ms, source)
            what = f"testing the {codes.MOTOR_COUNT} motors, {ms} ms each" if motors else ""
            message = "reading the board's sensors" + (f", then {what}" if what else "")
        else:
            message = refusal
        return DiagStarted(
            accepted=refusal is None, test=test, message=message, state=self._state.state
        )

    def _refusal(self, motors: bool, ms: int) -> str | None:
        run = self._diag
        stale = run is not None and time.monotonic() - run.started >= SENSORS_STALE_S
        if run is not None and stale and run.sensors_due and not run.motors:
            self._end_diag(False, f"no answer from the board within {SENSORS_STALE_S:g} s")
            run = None
        if run is not None:
            end = ", or press STOP to end its motor tests" if run.motors else " (a moment)"
            under_way = f"a diagnosis is under way ({run.test}, asked from {run.source})"
            return f"{under_way}: wait for it to end{end}"
        board = self._board
        if not board.connected:
            return (
                "the board is not connected (or another program is at its port), so it cannot "
                "be asked: the service's log says why (journalctl -u mjtable)"
            )
        if not motors:
            return None
        if self._audit.error is not None:
            return AUDIT_UNWRITABLE.format(error=self._audit.error)
        state = self._state.state
        if state in (FAULT, STOPPED):
            return (
                f"motor tests need the table at rest, and it is {state}: press CLEAR FAULT once "
                "the cause is dealt with, then ask again (the sensors can be read now: "
                "mjtable diag without --motors)"
            )
        if state not in TEST_FROM:
            return (
                f"motor tests need the table at rest, and it is {state}: ask again once the "
                "cycle is dealt (or press STOP, then CLEAR FAULT); the sensors can be read now "
                "(mjtable diag without --motors)"
            )
        if board.reports_due:
            return REPORT_DUE
        why = blocked(m.MotorTest(0, ms), board.view) if board.view is not None else None
        if why is not None:
            return f"motor tests cannot start: {why}"
        return None

    def _begin(self, motors: bool, ms: int, source: Source) -> str:
        self._diag_count += 1
        run = Diagnosis(test=f"diag-{self._diag_count}", ms=ms, source=source)
        self._diag = run
        self._board.send(m.Sensors())
        if motors:
            run.left = list(range(codes.MOTOR_COUNT))
            self._guards.abort("motor tests (mjtable diag --motors)")  # walls ready: read again
            self._audit.record("motor_tests", {"test": run.test, "source": source, "ms": ms})
            self._phases.fire("start_test")
            self._next_motor(run)
        return run.test

    # ------------------------------------------------------------ what the board answers

    def on_sensor_data(self, event: m.SensorData) -> None:
        run = self._diag
        if run is None or not run.sensors_due:
            return
        run.sensors_due = False
        hello = self._board.hello
        view = self._board.view
        self._outbox.queue(
            DiagEvent(
                at=utc_now(),
                test=run.test,
                step="board",
                hello=None if hello is None else diagnosis.identity(hello),
                status=None
                if view is None
                else diagnosis.places(view.places, view.laid, view.reset_cause, view.motions),
                sensors=diagnosis.sensors(event),
            )
        )
        if not run.motors:
            self._end_diag(True, "the board's sensors were read")

    def on_motor_result(self, event: m.MotorResult) -> None:
        run = self._diag
        if run is None or self._state.state != TESTING or event.motor != run.motor:
            return
        self._motor_done(run, event)

    def on_refused(self, event: m.Refused) -> bool:
        """A refusal of the diagnosis's SENSORS or MOTOR_TEST; whether it was one."""
        run = self._diag
        if run is None:
            return False
        if event.command == m.MotorTest.TYPE and self._state.state == TESTING and run.motor >= 0:
            self._motor_done(run, event)
            return True
        if event.command == m.Sensors.TYPE and run.sensors_due:
            run.sensors_due = False
            if not run.motors:
                why = codes.refusal_info(event.reason)[1]
                self._end_diag(False, f"the board refused SENSORS: {why}")
            return True
        return False

    def _motor_done(self, run: Diagnosis, result: m.MotorResult | m.Refused) -> None:
        report = diagnosis.motor_result(run.motor, run.ms, result)
        run.motor = -1
        self._phases.cancel()
        self._audit.record(
            "motor_test",
            {
                "test": run.test,
                "motor": report.motor,
                "ok": report.ok,
                "current_ma": report.current_ma,
                "verdict": report.verdict,
            },
        )
        if report.ok is None:
            run.refused.append(report.words)
        else:
            run.tested += 1
            if not report.ok:
                run.not_ok.append(report.words)
        self._outbox.queue(DiagEvent(at=utc_now(), test=run.test, step="motor", motor=report))
        self._next_motor(run)

    def _next_motor(self, run: Diagnosis) -> None:
        board = self._board
        why = blocked(m.MotorTest(0, run.ms), board.view) if board.view is not None else None
        if not run.left or why is not None:
            self._phases.fire("tested")
            board.ask_status()  # where the sets are, once the motors have turned
            if why is None:
                self._end_diag(not run.not_ok, self._tests_words(run))
            else:  # the board reported itself busy or faulted meanwhile: its report decides
                words = self._tests_words(run)
                self._end_diag(False, f"the motor tests ended ({why}); {words}")
            return
        run.motor = run.left.pop(0)
        board.send(m.MotorTest(run.motor, run.ms))
        self._phases.arm_seconds(run.ms / 1000 + self._state.deadlines.seconds("test"))

    @staticmethod
    def _tests_words(run: Diagnosis) -> str:
        if not run.tested and not run.refused:
            return "no motor tested"
        words = f"{run.tested} motor(s) tested"
        if run.not_ok:
            words += f", NOT OK: {', '.join(run.not_ok)}"
        else:
            words += ", all ok"
        if run.refused:
            words += f"; refused by the board: {', '.join(run.refused)}"
        return words

    # ------------------------------------------------------------ the end

    def transition(self, previous: str, trigger: str) -> None:
        """The machine moved: out of ``testing`` by anything but the tests' end (STOP, a
        fault), the diagnosis ends, saying how far it got."""
        run = self._diag
        leaving = previous == TESTING and self._state.state != TESTING
        if leaving and run is not None and trigger != "tested":
            self._end_diag(False, self._interrupted(run))

    def _interrupted(self, run: Diagnosis) -> str:
        done = self._tests_words(run)
        state = self._state
        if state.state == STOPPED:
            return f"the motor tests were stopped (STOP); {done}: press CLEAR FAULT to go on"
        fault = state.fault
        cause = f"{fault.code}: {fault.message}" if fault is not None else state.state
        return f"the motor tests ended with a fault ({cause}); {done}"

    def _end_diag(self, ok: bool, message: str) -> None:
        run, self._diag = self._diag, None
        if run is None:
            return
        log.info("diagnosis %s: %s", run.test, message)
        self._outbox.queue(
            DiagEvent(at=utc_now(), test=run.test, step="done", ok=ok, message=message)
        )

    def board_lost(self) -> None:
        """The board restarted: whatever it was asked is gone with its session."""
        run = self._diag
        if run is not None and not run.motors:
            self._end_diag(False, "the board restarted before it answered")
